/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The record of a torture run: an append-only file of 64-byte records, each
 * complete in itself and guarded by its own CRC32C, so that a record torn by
 * the very crash under test is recognised and ignored, never misread:
 *
 *   0  u32 magic "LCTr"   4  u8 kind   5  u8 version (1)   6  u16 I/O path (enum lcloud_io_path)
 *   8  u64 run id        16  u64 page  24  u64 generation
 *  32  u64 page size     40  u64 pages 48  u64 offset of page 0 in the target
 *  56  u32 seed          60  u32 CRC32C of the 64 bytes with this field zeroed
 *
 * Every record repeats the run's geometry. The writer appends a record only
 * for writes that completed and were flushed to the target, and syncs the
 * record file after every batch: the record never claims more than the
 * device acknowledged.
 */
#ifndef LCLOUD_LAB_TORTURE_RECORD_H
#define LCLOUD_LAB_TORTURE_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#define TORTURE_RECORD_SIZE 64u
#define TORTURE_RECORD_MAGIC 0x7254434cu /* "LCTr" as bytes on disk */
#define TORTURE_RECORD_VERSION 1u
#define TORTURE_NO_GENERATION UINT64_MAX

enum torture_record_kind {
	TORTURE_RECORD_START = 1,  /* the run began (geometry) */
	TORTURE_RECORD_FILLED = 2, /* every page holds generation 0 and the target was flushed */
	TORTURE_RECORD_ACK = 3,    /* PAGE holds GENERATION: completed and flushed */
	TORTURE_RECORD_END = 4,    /* the run ended normally; GENERATION is the last one used */
};

struct torture_record {
	uint8_t kind;
	uint16_t path;
	uint32_t seed;
	uint64_t run_id, page, generation, page_size, pages, offset;
};

void torture_record_encode(void *buf, const struct torture_record *rec);
/* 0, or -EBADMSG when BUF is not a whole, valid record. */
int torture_record_decode(const void *buf, struct torture_record *ret);

/* A page's last acknowledged generation. */
struct torture_ack {
	uint64_t page, generation;
};

/*
 * What a record file says, read back after a crash. The acknowledged
 * generations are kept for the pages that have ACK records only, so that
 * memory follows the record file's length, never the page count its
 * geometry claims (which the file's author chose).
 */
struct torture_history {
	struct torture_record geometry; /* the START record (or the first valid one) */
	bool started, filled, ended;
	uint64_t acks;            /* ACK records read */
	uint64_t ignored_bytes;   /* from the first invalid record on: the torn tail */
	struct torture_ack *acked; /* sorted by page, one per page */
	uint64_t n_acked, cap_acked;
	uint64_t read_bytes;      /* whole records read so far (the reader's position) */
	bool have, torn;          /* a geometry was read; the tail is torn, nothing after it counts */
};

/*
 * Reads the record file PATH. -EBADMSG (with ERR) when it holds no valid
 * record, records of two runs or of pages outside the geometry.
 */
int torture_history_read(const char *path, struct torture_history *ret, char *err, size_t err_size);
/* The same from SIZE bytes of DATA, named NAME in ERR. */
int torture_history_parse(const void *data, uint64_t size, const char *name, struct torture_history *ret, char *err,
			  size_t err_size);
/* PAGE's last acknowledged generation: 0 after the fill, TORTURE_NO_GENERATION when none. */
uint64_t torture_history_last_ack(const struct torture_history *h, uint64_t page);
void torture_history_release(struct torture_history *h);

#endif
