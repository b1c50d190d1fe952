/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A cloud device's own sequential read-ahead, as the devices of the big
 * providers do it behind the guest's back: it follows up to RA_STREAMS
 * streams of reads, and from a stream's second read in a row it fetches
 * ahead from the back end, 128 KiB first and twice as much each time the
 * stream has used half of what was fetched, up to its window. What it
 * fetched waits in its own cache (at most its size, and RA_SEGMENTS
 * ranges; the least recently used range leaves first), and a read the cache
 * holds costs the back end nothing. A read continues a stream when it starts
 * between a window before the stream's end and the end of what was fetched
 * for it, so reads that arrive a little out of order on several queues still
 * count. The cache is an account of blocks, not a copy of them: the backing
 * file holds the same bytes, and a write takes what it overwrites out of the
 * cache. Pure: block numbers and times in, decisions out.
 */
#include <stddef.h>

#include "readahead.h"

void ra_init(struct readahead *ra, uint64_t blocks, uint32_t lba, uint64_t max_bytes, uint64_t cache_bytes)
{
	*ra = (struct readahead){.blocks = blocks};
	ra->max = max_bytes / lba;
	ra->initial = RA_INITIAL_BYTES / lba < ra->max ? RA_INITIAL_BYTES / lba : ra->max;
	ra->cache_cap = cache_bytes / lba;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

void ra_lookup(struct readahead *ra, uint64_t slba, uint32_t nlb, struct ra_lookup *ret)
{
	*ret = (struct ra_lookup){0};
	ra->tick++;
	for (unsigned int i = 0; i < ra->n_seg; i++) {
		struct ra_segment *s = &ra->seg[i];
		uint64_t from = max64(s->slba, slba), to = min64(s->slba + s->nlb, slba + nlb);

		if (from >= to)
			continue;
		ret->hit += to - from;
		ret->ready_us = max64(ret->ready_us, s->ready_us);
		s->used = ra->tick;
	}
	ret->miss = nlb - ret->hit; /* segments never overlap: ra_insert makes room first */
}

static void remove_segment(struct readahead *ra, unsigned int i)
{
	ra->cached -= ra->seg[i].nlb;
	ra->seg[i] = ra->seg[--ra->n_seg];
}

void ra_invalidate(struct readahead *ra, uint64_t slba, uint64_t nlb)
{
	for (unsigned int i = 0; i < ra->n_seg;) {
		struct ra_segment *s = &ra->seg[i];
		uint64_t end = s->slba + s->nlb;

		if (end <= slba || s->slba >= slba + nlb) {
			i++;
			continue;
		}
		if (s->slba < slba && end > slba + nlb && ra->n_seg < RA_SEGMENTS) {
			/* the write falls inside: the part after it becomes a range of its own */
			ra->seg[ra->n_seg++] = (struct ra_segment){slba + nlb, end - (slba + nlb), s->ready_us, s->used};
			ra->cached -= nlb;
			s->nlb = slba - s->slba;
			i++;
		} else if (s->slba < slba) {
			ra->cached -= end - slba;
			s->nlb = slba - s->slba;
			i++;
		} else if (end > slba + nlb) {
			ra->cached -= slba + nlb - s->slba;
			s->nlb = end - (slba + nlb);
			s->slba = slba + nlb;
			i++;
		} else {
			remove_segment(ra, i); /* the segment moved into slot i is looked at next */
		}
	}
}

void ra_insert(struct readahead *ra, uint64_t slba, uint64_t nlb, uint64_t ready_us)
{
	if (!nlb || nlb > ra->cache_cap)
		return;
	ra_invalidate(ra, slba, nlb);
	while (ra->n_seg && (ra->n_seg == RA_SEGMENTS || ra->cached + nlb > ra->cache_cap)) {
		unsigned int oldest = 0;

		for (unsigned int i = 1; i < ra->n_seg; i++)
			if (ra->seg[i].used < ra->seg[oldest].used)
				oldest = i;
		remove_segment(ra, oldest);
	}
	ra->seg[ra->n_seg++] = (struct ra_segment){slba, nlb, ready_us, ++ra->tick};
	ra->cached += nlb;
}

/* The stream READ continues, or NULL. */
static struct ra_stream *find_stream(struct readahead *ra, uint64_t slba)
{
	for (unsigned int i = 0; i < RA_STREAMS; i++) {
		struct ra_stream *s = &ra->streams[i];
		uint64_t back = s->next > s->window ? s->next - s->window : 0;

		if (s->active && slba >= back && slba <= max64(s->next, s->fetched_to))
			return s;
	}
	return NULL;
}

void ra_detect(struct readahead *ra, uint64_t slba, uint32_t nlb, uint64_t *ret_slba, uint64_t *ret_nlb)
{
	struct ra_stream *s = find_stream(ra, slba);
	uint64_t from, to;

	*ret_slba = *ret_nlb = 0;
	ra->tick++;
	if (!ra->max)
		return;
	if (!s) {
		/* a new stream takes the place of the one continued least recently */
		s = &ra->streams[0];
		for (unsigned int i = 1; i < RA_STREAMS && s->active; i++)
			if (!ra->streams[i].active || ra->streams[i].used < s->used)
				s = &ra->streams[i];
		*s = (struct ra_stream){.active = true, .run = 1, .next = slba + nlb, .fetched_to = slba + nlb,
					.window = ra->initial, .used = ra->tick};
		return;
	}
	s->run++;
	s->used = ra->tick;
	s->next = max64(s->next, slba + nlb);
	if (s->run < RA_TRIGGER || s->fetched_to >= s->next + s->window / 2)
		return; /* not a stream yet, or half of the last fetch is still ahead of it */
	from = max64(s->fetched_to, s->next);
	to = min64(s->next + s->window, ra->blocks);
	s->window = min64(s->window * 2, ra->max);
	if (from >= to)
		return;
	s->fetched_to = to;
	*ret_slba = from;
	*ret_nlb = to - from;
}
