/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The back end's counters and their report. Delays are kept in log-linear
 * histograms (32 buckets per power of two, so a percentile is within 3 %
 * of the value it stands for) of fixed size: the memory does not grow with
 * the commands served. The report is a few "key=value" lines that a person
 * reads and a script splits: one for the totals, one per class that served
 * a command.
 */
#include <inttypes.h>
#include <stdio.h>

#include "backend_stats.h"

static unsigned int bucket_of(uint64_t v)
{
	unsigned int msb;

	if (v < 64)
		return (unsigned int)v;
	msb = 63u - (unsigned int)__builtin_clzll(v);
	return 64 + (msb - 6) * HIST_SUB + (unsigned int)((v >> (msb - 5)) & (HIST_SUB - 1));
}

/* The smallest value of bucket B and the first of the next. */
static void bucket_range(unsigned int b, uint64_t *lo, uint64_t *hi)
{
	unsigned int msb, sub;

	if (b < 64) {
		*lo = b;
		*hi = b + 1;
		return;
	}
	msb = (b - 64) / HIST_SUB + 6;
	sub = (b - 64) % HIST_SUB;
	*lo = ((uint64_t)(HIST_SUB + sub)) << (msb - 5);
	*hi = *lo + (1ull << (msb - 5));
}

void hist_add(struct histogram *h, uint64_t value)
{
	h->bucket[bucket_of(value)]++;
	h->count++;
	if (value > h->max)
		h->max = value;
}

uint64_t hist_percentile(const struct histogram *h, double p)
{
	uint64_t want, seen = 0, lo, hi;

	if (!h->count)
		return 0;
	want = (uint64_t)(p * (double)h->count + 0.999999);
	if (want < 1)
		want = 1;
	if (want >= h->count)
		return h->max; /* the largest is known exactly */
	for (unsigned int b = 0; b < HIST_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= want) {
			bucket_range(b, &lo, &hi);
			hi = lo + (hi - lo) / 2; /* the bucket's middle, never past the largest value seen */
			return hi < h->max ? hi : h->max;
		}
	}
	return h->max;
}

void stats_lines(const struct backend_stats *s, void (*line)(void *ctx, const char *text), void *ctx)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "totals backend_read_bytes=%" PRIu64 " backend_read_ops=%" PRIu64 " backend_written_bytes=%" PRIu64
		 " backend_write_ops=%" PRIu64 " delivered_bytes=%" PRIu64 " read_ahead_fetched_bytes=%" PRIu64
		 " read_ahead_hit_bytes=%" PRIu64,
		 s->backend_read_bytes, s->backend_read_ops, s->backend_written_bytes, s->backend_write_ops,
		 s->delivered_bytes, s->read_ahead_fetched_bytes, s->read_ahead_hit_bytes);
	line(ctx, text);
	for (unsigned int c = 0; c < CLASS_COUNT; c++) {
		const struct histogram *q = &s->queued[c], *l = &s->latency[c];

		if (!s->commands[c])
			continue;
		snprintf(text, sizeof(text),
			 "class %s commands=%" PRIu64 " queued_p50_us=%" PRIu64 " queued_p99_us=%" PRIu64
			 " queued_max_us=%" PRIu64 " latency_p50_us=%" PRIu64 " latency_p99_us=%" PRIu64
			 " latency_max_us=%" PRIu64,
			 sched_class_name((enum sched_class)c), s->commands[c], hist_percentile(q, 0.5),
			 hist_percentile(q, 0.99), q->max, hist_percentile(l, 0.5), hist_percentile(l, 0.99), l->max);
		line(ctx, text);
	}
}
