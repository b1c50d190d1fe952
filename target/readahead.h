/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A cloud device's own sequential read-ahead (see readahead.c): stream
 * detection and a bounded cache of what it fetched, in logical blocks.
 */
#ifndef LCLOUD_TARGET_READAHEAD_H
#define LCLOUD_TARGET_READAHEAD_H

#include <stdbool.h>
#include <stdint.h>

#define RA_STREAMS 8            /* sequential streams followed at once */
#define RA_SEGMENTS 64          /* fetched ranges the cache holds at most */
#define RA_TRIGGER 2            /* the read that makes a stream: its second in a row */
#define RA_INITIAL_BYTES 131072 /* the first fetch ahead; each next one doubles, up to the window */

struct ra_stream {
	bool active;
	uint32_t run;            /* reads in a row that continued it */
	uint64_t next;           /* the block after the furthest read */
	uint64_t fetched_to;     /* the block after the furthest fetched */
	uint64_t window;         /* the next fetch ahead, in blocks */
	uint64_t used;           /* the tick it was last continued */
};

struct ra_segment {
	uint64_t slba, nlb;
	uint64_t ready_us;       /* when its fetch from the back end completes */
	uint64_t used;
};

struct readahead {
	uint64_t blocks;         /* the namespace's size */
	uint64_t initial, max;   /* the fetch ahead, first and largest, in blocks */
	uint64_t cache_cap;      /* blocks the cache may hold */
	uint64_t cached;         /* blocks it holds */
	uint64_t tick;
	struct ra_stream streams[RA_STREAMS];
	struct ra_segment seg[RA_SEGMENTS];
	unsigned int n_seg;
};

/* What the cache holds of a read: blocks found, when the last of them is ready, and blocks missing. */
struct ra_lookup {
	uint64_t hit, miss;
	uint64_t ready_us;
};

/* A namespace of BLOCKS, fetching ahead up to MAX_BLOCKS (0: never) into a cache of CACHE_BLOCKS. */
void ra_init(struct readahead *ra, uint64_t blocks, uint32_t lba, uint64_t max_bytes, uint64_t cache_bytes);
void ra_lookup(struct readahead *ra, uint64_t slba, uint32_t nlb, struct ra_lookup *ret);
/*
 * A read the device may read ahead for: follows its stream and returns the
 * blocks to fetch ahead now (*RET_NLB 0: none). The caller fetches them and
 * calls ra_insert().
 */
void ra_detect(struct readahead *ra, uint64_t slba, uint32_t nlb, uint64_t *ret_slba, uint64_t *ret_nlb);
/* Fetched blocks enter the cache, ready at READY_US; the least recently used leave to make room. */
void ra_insert(struct readahead *ra, uint64_t slba, uint64_t nlb, uint64_t ready_us);
/* A write over blocks the cache holds: they leave it. */
void ra_invalidate(struct readahead *ra, uint64_t slba, uint64_t nlb);

#endif
