/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A hand-built typed stack for verdict tests: an empty probe, layers of a
 * kind with their parents, typed facts by catalogue id (present, or unread
 * with a reason), dm segments, md members, note codes; then the verdict,
 * read back through the public getters. It uses the report's own functions
 * (lib/core/report.h), so a stack built here is shaped as a probe builds
 * it, without a sysfs tree, and each test shows only the facts its rule
 * needs. Every call asserts its own success: a test reads as the stack.
 */
#ifndef LCLOUD_STACK_BUILDER_H
#define LCLOUD_STACK_BUILDER_H

#include <stdbool.h>
#include <stdint.h>

#include "report.h"
#include "verdict.h"

#define KIB 1024ULL
#define MIB (1024ULL * 1024)

/* The page size every built stack states, whatever the machine's: the arithmetic of the tests uses it. */
#define SB_PAGE_SIZE 4096

/* An empty probe of PATH, a target of TYPE. */
struct lcloud_probe *sb_new(const char *path, enum lcloud_target_type type);
/* A layer of KIND named NAME below PARENT (-1: the top); returns its index. */
int sb_layer(struct lcloud_probe *p, enum lcloud_layer_kind kind, const char *name, int parent);

/* Facts by catalogue id, in the catalogue's unit (max_sectors_kb in KiB, chunk_sectors in sectors). */
void sb_u64(struct lcloud_probe *p, int layer, enum fact_id id, uint64_t value);
void sb_u64_from(struct lcloud_probe *p, int layer, enum fact_id id, uint64_t value, const char *source);
void sb_bool(struct lcloud_probe *p, int layer, enum fact_id id, bool value);
void sb_string(struct lcloud_probe *p, int layer, enum fact_id id, const char *value);
/* A fact that could not be read (needs root), with REASON. */
void sb_unread(struct lcloud_probe *p, int layer, enum fact_id id, const char *reason);
/* Fact ID of a layer set to VALUE, or made unread, whether or not the builder added it already. */
void sb_set_u64(struct lcloud_probe *p, int layer, enum fact_id id, uint64_t value);
void sb_set_unread(struct lcloud_probe *p, int layer, enum fact_id id, const char *reason);
/* A fact this kernel or device does not provide. */
void sb_not_provided(struct lcloud_probe *p, int layer, enum fact_id id);
void sb_dm_segment(struct lcloud_probe *p, int layer, uint64_t start, uint64_t length, const char *type,
		   const char *params);
void sb_md_member(struct lcloud_probe *p, int layer, const char *member, uint64_t data_offset);
void sb_promise_alignment(struct lcloud_probe *p, int layer, enum layer_promise_alignment alignment);
void sb_note(struct lcloud_probe *p, enum note_code code, int layer);
/* BACKING, with its verdict computed, as loop layer LAYER's backing file's probe; P owns it from then on. */
void sb_backing(struct lcloud_probe *p, int layer, struct lcloud_probe *backing);

/*
 * A block device's queue that splits, merges and moves nothing a test does
 * not ask for: 1 MiB max_sectors_kb and max_hw_sectors_kb, no chunks,
 * nomerges 2, 256 segments of 1 MiB, no virt boundary, 512-byte buffers;
 * its size and dev (MAJOR:MINOR) too.
 */
void sb_queue(struct lcloud_probe *p, int layer, const char *dev);

/* A disk with sb_queue()'s limits. */
int sb_disk(struct lcloud_probe *p, const char *name, const char *dev, int parent);
/* A partition starting at START bytes, with its disk below it. */
int sb_partition(struct lcloud_probe *p, const char *name, uint64_t start, int parent);
/*
 * An NVMe namespace layer below DISK: LBA_SIZE-byte blocks without
 * metadata, power-fail atomic writes up to POWER_FAIL bytes (from SOURCE:
 * nvme:id-ns:nawupf or nvme:id-ctrl:awupf), no boundary.
 */
int sb_nvme(struct lcloud_probe *p, int disk, const char *name, uint64_t lba_size, uint64_t power_fail,
	    const char *source);
/* A file system layer of TYPE with BLOCK-byte blocks (its fstype fact too). */
int sb_fs(struct lcloud_probe *p, const char *type, uint64_t block);
/* statx atomic limits for layer L: unit min, unit max and the atomic attribute set. */
void sb_statx_atomic(struct lcloud_probe *p, int layer, uint64_t unit_min, uint64_t unit_max);

/* Runs verdict_compute() on P and asserts it succeeded. */
void sb_verdict(struct lcloud_probe *p);
/* The verdict of PATH, through the public getter. */
const struct lcloud_verdict *sb_path(const struct lcloud_probe *p, enum lcloud_io_path path);
uint64_t sb_max(const struct lcloud_probe *p, enum lcloud_io_path path);
/* lcloud_probe_check() of one SIZE on PATH: LCLOUD_ANSWER_*. */
int sb_check(const struct lcloud_probe *p, enum lcloud_io_path path, uint64_t size);
/* Does a reason of PATH's verdict (its text or its evidence) contain NEEDLE? */
bool sb_reason_has(const struct lcloud_probe *p, enum lcloud_io_path path, const char *needle);
/* The unknown reason of PATH's verdict contains NEEDLE. */
bool sb_unknown_has(const struct lcloud_probe *p, enum lcloud_io_path path, const char *needle);
/* Prints every reason of PATH's verdict, for a failing test's log. */
void sb_dump(const struct lcloud_probe *p, enum lcloud_io_path path);

#endif
