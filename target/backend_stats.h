/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the back end counts (see backend_stats.c): bytes and operations to
 * and from the back end, bytes the host got and sent, and per class the
 * commands, their queueing delays and latencies as histograms.
 */
#ifndef LCLOUD_TARGET_BACKEND_STATS_H
#define LCLOUD_TARGET_BACKEND_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "scheduler.h"

#define HIST_SUB 32                        /* buckets per power of two: within 3 % */
#define HIST_BUCKETS (64 + 58 * HIST_SUB)  /* every value of 64 bits */

struct histogram {
	uint64_t count, max;
	uint64_t bucket[HIST_BUCKETS];
};

struct backend_stats {
	uint64_t backend_read_bytes, backend_read_ops;       /* reads that missed the cache, and fetches ahead */
	uint64_t backend_written_bytes, backend_write_ops;
	uint64_t delivered_bytes;                            /* what reads returned to the host */
	uint64_t read_ahead_fetched_bytes, read_ahead_hit_bytes;
	uint64_t commands[CLASS_COUNT];
	struct histogram queued[CLASS_COUNT], latency[CLASS_COUNT]; /* microseconds */
};

void hist_add(struct histogram *h, uint64_t value);
/* The value at or below which a fraction P of the values lie (its bucket's middle); 0 when empty. */
uint64_t hist_percentile(const struct histogram *h, double p);
/* The counters as "key=value" lines, each given to LINE. */
void stats_lines(const struct backend_stats *s, void (*line)(void *ctx, const char *text), void *ctx);

#endif
