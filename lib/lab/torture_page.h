/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The torture page format. A page of PAGE_SIZE bytes (4 KiB to 1 MiB, a
 * power of two) is cut into 512-byte stamp blocks, the smallest logical block
 * a device can have. Each block says whose it is, so that any 512 bytes found
 * on a crashed disk or in a device's write log can be named without knowing
 * how the file system and the stack mapped the page:
 *
 *   0  u32 magic "LCSt"         4  u16 format version (1)   6  u16 block index in the page
 *   8  u64 run id              16  u64 page number         24  u64 generation
 *  32  u32 page size           36  u32 CRC32C of the 512 bytes with this field zeroed
 *  40  24 bytes zero           64  448 bytes of payload derived from (run, page, generation, block)
 *
 * All fields little-endian. The payload is splitmix64's stream (state +=
 * 0x9e3779b97f4a7c15, output the finaliser of the state) started from the seed
 * f(f(f(f(run) ^ page) ^ generation) ^ block), f being splitmix64's
 * finaliser; each 8-byte word little-endian.
 */
#ifndef LCLOUD_LAB_TORTURE_PAGE_H
#define LCLOUD_LAB_TORTURE_PAGE_H

#include <stdbool.h>
#include <stdint.h>

#define TORTURE_BLOCK_SIZE 512u
#define TORTURE_STAMP_MAGIC 0x7453434cu /* "LCSt" as bytes on disk */
#define TORTURE_STAMP_VERSION 1u
#define TORTURE_PAGE_MIN 4096u
#define TORTURE_PAGE_MAX (1u << 20)

struct torture_stamp {
	uint64_t run_id;
	uint64_t page;
	uint64_t generation;
	uint32_t page_size;
	uint32_t block; /* index of the 512-byte block within the page */
};

enum torture_block_state {
	TORTURE_BLOCK_STAMPED = 0,     /* a whole, valid stamp block */
	TORTURE_BLOCK_NO_STAMP = 1,    /* no stamp magic: zeroes, other data */
	TORTURE_BLOCK_BAD_CRC = 2,     /* stamp magic, but the bytes changed (a tear inside the block?) */
	TORTURE_BLOCK_BAD_HEADER = 3,  /* CRC right but fields impossible (version, sizes, index) */
	TORTURE_BLOCK_BAD_PAYLOAD = 4, /* CRC right but the payload is not the one the header names */
};

/* Is PAGE_SIZE one the format allows? */
bool torture_page_size_valid(uint64_t page_size);
/* Writes one 512-byte stamp block for S into BLOCK. */
void torture_block_fill(void *block, const struct torture_stamp *s);
/* Writes a whole page: every block stamped with (RUN_ID, PAGE, GENERATION). */
void torture_page_fill(void *buf, uint32_t page_size, uint64_t run_id, uint64_t page, uint64_t generation);
/* Reads one 512-byte block; fills *RET (may be NULL) only for TORTURE_BLOCK_STAMPED. */
enum torture_block_state torture_block_decode(const void *block, struct torture_stamp *ret);
const char *torture_block_state_to_string(enum torture_block_state state);

#endif
