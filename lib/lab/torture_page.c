/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Stamping and reading torture page blocks (format in torture_page.h). */
#include <string.h>

#include "crc32c.h"
#include "le.h"
#include "torture_page.h"

#define HEADER_SIZE 64u
#define CRC_OFFSET 36u

bool torture_page_size_valid(uint64_t page_size)
{
	return page_size >= TORTURE_PAGE_MIN && page_size <= TORTURE_PAGE_MAX && !(page_size & (page_size - 1));
}

/* splitmix64's finaliser: every input bit moves every output bit */
static uint64_t finalise(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * The payload: splitmix64's stream from a seed that folds in the run, page,
 * generation and block, so neighbouring blocks and generations differ in
 * every word.
 */
static void payload(uint8_t *out, const struct torture_stamp *s)
{
	uint64_t state = finalise(finalise(finalise(finalise(s->run_id) ^ s->page) ^ s->generation) ^ s->block);

	for (unsigned int i = 0; i < TORTURE_BLOCK_SIZE - HEADER_SIZE; i += 8) {
		state += 0x9e3779b97f4a7c15ull;
		put_le64(out + i, finalise(state));
	}
}

void torture_block_fill(void *block, const struct torture_stamp *s)
{
	uint8_t *b = block;

	memset(b, 0, HEADER_SIZE);
	put_le32(b, TORTURE_STAMP_MAGIC);
	put_le16(b + 4, TORTURE_STAMP_VERSION);
	put_le16(b + 6, (uint16_t)s->block);
	put_le64(b + 8, s->run_id);
	put_le64(b + 16, s->page);
	put_le64(b + 24, s->generation);
	put_le32(b + 32, s->page_size);
	payload(b + HEADER_SIZE, s);
	put_le32(b + CRC_OFFSET, crc32c(0, b, TORTURE_BLOCK_SIZE));
}

void torture_page_fill(void *buf, uint32_t page_size, uint64_t run_id, uint64_t page, uint64_t generation)
{
	struct torture_stamp s = { run_id, page, generation, page_size, 0 };

	for (s.block = 0; s.block < page_size / TORTURE_BLOCK_SIZE; s.block++)
		torture_block_fill((uint8_t *)buf + (uint64_t)s.block * TORTURE_BLOCK_SIZE, &s);
}

enum torture_block_state torture_block_decode(const void *block, struct torture_stamp *ret)
{
	uint8_t copy[TORTURE_BLOCK_SIZE], expect[TORTURE_BLOCK_SIZE - HEADER_SIZE];
	const uint8_t *b = block;
	struct torture_stamp s;
	uint32_t crc;

	if (get_le32(b) != TORTURE_STAMP_MAGIC)
		return TORTURE_BLOCK_NO_STAMP;
	memcpy(copy, b, sizeof(copy));
	crc = get_le32(copy + CRC_OFFSET);
	put_le32(copy + CRC_OFFSET, 0);
	if (crc32c(0, copy, sizeof(copy)) != crc)
		return TORTURE_BLOCK_BAD_CRC;
	s.block = get_le16(b + 6);
	s.run_id = get_le64(b + 8);
	s.page = get_le64(b + 16);
	s.generation = get_le64(b + 24);
	s.page_size = get_le32(b + 32);
	if (get_le16(b + 4) != TORTURE_STAMP_VERSION || !torture_page_size_valid(s.page_size) ||
	    s.block >= s.page_size / TORTURE_BLOCK_SIZE)
		return TORTURE_BLOCK_BAD_HEADER;
	payload(expect, &s);
	if (memcmp(expect, b + HEADER_SIZE, sizeof(expect)) != 0)
		return TORTURE_BLOCK_BAD_PAYLOAD;
	if (ret)
		*ret = s;
	return TORTURE_BLOCK_STAMPED;
}

const char *torture_block_state_to_string(enum torture_block_state state)
{
	switch (state) {
	case TORTURE_BLOCK_STAMPED:
		return "stamped";
	case TORTURE_BLOCK_NO_STAMP:
		return "no-stamp";
	case TORTURE_BLOCK_BAD_CRC:
		return "bad-crc";
	case TORTURE_BLOCK_BAD_HEADER:
		return "bad-header";
	case TORTURE_BLOCK_BAD_PAYLOAD:
		return "bad-payload";
	}
	return "unknown";
}
