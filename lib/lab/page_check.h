/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a torture page read back after a crash holds: for each 512-byte block,
 * which generation of this page (or something else), grouped into runs of
 * neighbouring blocks, and the page's state.
 */
#ifndef LCLOUD_LAB_PAGE_CHECK_H
#define LCLOUD_LAB_PAGE_CHECK_H

#include <stdint.h>

#include "torture_page.h"

enum page_state {
	PAGE_INTACT = 0,  /* every block of one generation of this page */
	PAGE_TORN = 1,    /* blocks of two or more generations of this page: old and new parts */
	PAGE_DAMAGED = 2, /* blocks that are not this page's stamps (garbage, foreign, torn inside a block) */
};

enum part_kind {
	PART_GENERATION = 0, /* blocks of this page at GENERATION */
	PART_FOREIGN = 1,    /* valid stamps of another run, page or block position */
	PART_GARBAGE = 2,    /* no valid stamp (STATE says why) */
};

struct page_part {
	uint32_t first_block, blocks;
	enum part_kind kind;
	uint64_t generation;               /* PART_GENERATION */
	struct torture_stamp foreign;      /* PART_FOREIGN: the first block's stamp */
	enum torture_block_state state;    /* PART_GARBAGE */
};

struct page_check {
	enum page_state state;
	uint64_t newest, oldest; /* generations of this page found; TORTURE_NO_GENERATION-like UINT64_MAX if none */
	uint32_t generations;    /* distinct generations found */
	uint32_t n_parts;
	struct page_part *parts; /* malloc'd; page_check_release() */
};

/* Classifies BUF (PAGE_SIZE bytes) as page PAGE of run RUN_ID. 0 or -ENOMEM. */
int page_check(const void *buf, uint32_t page_size, uint64_t run_id, uint64_t page, struct page_check *ret);
void page_check_release(struct page_check *c);
const char *page_state_to_string(enum page_state state);

#endif
