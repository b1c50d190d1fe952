/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Classifying a torture page read back after a crash, block by block. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "page_check.h"

static void classify(const void *block, uint32_t page_size, uint64_t run_id, uint64_t page, uint32_t index,
		     struct page_part *p)
{
	struct torture_stamp s;
	enum torture_block_state st = torture_block_decode(block, &s);

	memset(p, 0, sizeof(*p));
	p->first_block = index;
	p->blocks = 1;
	if (st != TORTURE_BLOCK_STAMPED) {
		p->kind = PART_GARBAGE;
		p->state = st;
	} else if (s.run_id != run_id || s.page != page || s.block != index || s.page_size != page_size) {
		p->kind = PART_FOREIGN;
		p->foreign = s;
	} else {
		p->kind = PART_GENERATION;
		p->generation = s.generation;
	}
}

static bool same_part(const struct page_part *a, const struct page_part *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case PART_GENERATION:
		return a->generation == b->generation;
	case PART_FOREIGN:
		/* the same misplaced page, block after block */
		return a->foreign.run_id == b->foreign.run_id && a->foreign.page == b->foreign.page &&
		       a->foreign.generation == b->foreign.generation;
	case PART_GARBAGE:
		return a->state == b->state;
	}
	return false;
}

int page_check(const void *buf, uint32_t page_size, uint64_t run_id, uint64_t page, struct page_check *ret)
{
	const uint32_t n = page_size / TORTURE_BLOCK_SIZE;
	struct page_check c = { .newest = 0, .oldest = UINT64_MAX };
	bool other = false, any = false;
	uint64_t first_gen = 0;

	c.parts = calloc(n, sizeof(*c.parts));
	if (!c.parts)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct page_part p;

		classify((const uint8_t *)buf + (uint64_t)i * TORTURE_BLOCK_SIZE, page_size, run_id, page, i, &p);
		if (p.kind == PART_GENERATION) {
			if (!any || p.generation != first_gen) {
				bool seen = false;

				for (uint32_t k = 0; k < c.n_parts; k++)
					if (c.parts[k].kind == PART_GENERATION && c.parts[k].generation == p.generation)
						seen = true;
				if (!seen)
					c.generations++;
			}
			if (!any)
				first_gen = p.generation;
			any = true;
			if (p.generation > c.newest)
				c.newest = p.generation;
			if (p.generation < c.oldest)
				c.oldest = p.generation;
		} else {
			other = true;
		}
		if (c.n_parts && same_part(&c.parts[c.n_parts - 1], &p))
			c.parts[c.n_parts - 1].blocks++;
		else
			c.parts[c.n_parts++] = p;
	}
	if (!any)
		c.newest = UINT64_MAX;
	c.state = c.generations > 1 ? PAGE_TORN : other ? PAGE_DAMAGED : PAGE_INTACT;
	*ret = c;
	return 0;
}

void page_check_release(struct page_check *c)
{
	if (!c)
		return;
	free(c->parts);
	c->parts = NULL;
}

const char *page_state_to_string(enum page_state state)
{
	switch (state) {
	case PAGE_INTACT:
		return "intact";
	case PAGE_TORN:
		return "torn";
	case PAGE_DAMAGED:
		return "damaged";
	}
	return "unknown";
}
