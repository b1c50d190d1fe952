/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pure parts of lcloud-target's cloud back end on inputs built by hand:
 * the caps' accounting (target/caps.c), the device's read-ahead stream
 * detection and cache (target/readahead.c), the scheduler's classes, levels
 * and order (target/scheduler.c), and the counters' percentiles
 * (target/backend_stats.c). Expected values are worked out from the rules
 * (a published rate, a window, a level table), not read back from the code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend_stats.h"
#include "caps.h"
#include "readahead.h"
#include "scheduler.h"

/* ---- caps ---- */

/* An I/O of up to 256 KiB is one operation, a larger one one per 256 KiB or part of it (AWS). */
static void test_caps_operations(void **state)
{
	struct caps c;

	(void)state;
	caps_init(&c, 3000, 125ull << 20, 256u << 10);
	assert_int_equal(caps_ops(&c, 4096), 1);
	assert_int_equal(caps_ops(&c, 256u << 10), 1);
	assert_int_equal(caps_ops(&c, (256u << 10) + 1), 2);
	assert_int_equal(caps_ops(&c, 1u << 20), 4);
	caps_init(&c, 3000, 0, 0);
	assert_int_equal(caps_ops(&c, 1u << 20), 1);
}

/* Serves N I/Os of BYTES as fast as the caps admit them, from time 0; returns when the last was admitted. */
static uint64_t run_at_cap(struct caps *c, unsigned int n, uint64_t bytes)
{
	uint64_t now = 0;

	for (unsigned int i = 0; i < n; i++) {
		now = caps_admit_at(c, now);
		caps_charge(c, now, caps_ops(c, bytes), bytes);
	}
	return now;
}

/* A steady load runs at the binding cap: gp3 scaled by 0.02 is 60 IOPS and 2.5 MiB/s. */
static void test_caps_bind_at_the_published_rate(void **state)
{
	struct caps c;
	uint64_t end;
	double rate;

	(void)state;
	/* 4 KiB writes: 60 IOPS binds (2.5 MiB/s would allow 640) */
	caps_init(&c, 60, 2621440, 256u << 10);
	end = run_at_cap(&c, 600, 4096);
	rate = 600.0 / ((double)end / 1e6);
	assert_true(rate > 60 * 0.99 && rate < 60 * 1.03);
	/* 256 KiB writes: the bytes bind, 10 per second (the operations would allow 60) */
	caps_init(&c, 60, 2621440, 256u << 10);
	end = run_at_cap(&c, 100, 256u << 10);
	rate = 100.0 / ((double)end / 1e6);
	assert_true(rate > 10 * 0.99 && rate < 10 * 1.03);
	/* no cap: everything at once */
	caps_init(&c, 0, 0, 0);
	assert_int_equal(run_at_cap(&c, 1000, 1u << 20), 0);
}

/* After an idle spell, at most 0.1 s of the rate goes at once (QEMU's bucket without a burst). */
static void test_caps_burst_is_a_tenth_of_a_second(void **state)
{
	struct caps c;
	unsigned int at_once = 0;

	(void)state;
	caps_init(&c, 100, 0, 0);
	caps_charge(&c, 0, 1, 4096);
	assert_int_equal(caps_admit_at(&c, 5000000), 5000000); /* idle 5 s: drained */
	while (caps_admit_at(&c, 5000000) == 5000000) {
		caps_charge(&c, 5000000, 1, 4096);
		at_once++;
	}
	/* admitted while the level is at most 10 (0.1 s of 100 IOPS): levels 0..10, 11 at once */
	assert_int_equal(at_once, 11);
	/* the next waits until one operation has drained: 10 ms */
	assert_int_equal(caps_admit_at(&c, 5000000), 5010000);
}

/* ---- read-ahead ---- */

#define LBA 4096

static void test_read_ahead_needs_a_stream(void **state)
{
	struct readahead ra;
	uint64_t s, n;

	(void)state;
	ra_init(&ra, 1u << 20, LBA, 1u << 20, 8u << 20);
	assert_int_equal(ra.initial, 32);  /* 128 KiB */
	assert_int_equal(ra.max, 256);     /* 1 MiB */
	/* random reads never set it off */
	for (uint64_t lba = 1000; lba < 100000; lba += 7919) {
		ra_detect(&ra, lba, 4, &s, &n);
		assert_int_equal(n, 0);
	}
	/* a stream's first read does not either; its second fetches 128 KiB past its end */
	ra_detect(&ra, 500000, 4, &s, &n);
	assert_int_equal(n, 0);
	ra_detect(&ra, 500004, 4, &s, &n);
	assert_int_equal(s, 500008);
	assert_int_equal(n, 32);
}

/* Fetches grow by doubling to the window, each when half of the last is left ahead of the stream. */
static void test_read_ahead_window_grows(void **state)
{
	struct readahead ra;
	uint64_t s, n, fetched = 0, lba, last_end = 0;

	(void)state;
	ra_init(&ra, 1u << 20, LBA, 256u << 10, 8u << 20); /* window 64 blocks */
	for (lba = 0; lba < 4096; lba += 4) {
		ra_detect(&ra, lba, 4, &s, &n);
		if (!n)
			continue;
		assert_true(n <= 64);
		assert_int_equal(s, last_end ? last_end : lba + 4); /* contiguous fetches, none twice */
		last_end = s + n;
		fetched += n;
		assert_true(last_end - (lba + 4) <= 64); /* never more than the window ahead of the reader */
	}
	/* what was fetched covers the stream, and overshoots its end by at most the window */
	assert_true(fetched >= 4096 - 8 && fetched <= 4096 - 8 + 64);
}

static void test_read_ahead_cache(void **state)
{
	struct readahead ra;
	struct ra_lookup f;

	(void)state;
	ra_init(&ra, 1u << 20, LBA, 1u << 20, 64 * LBA); /* a cache of 64 blocks */
	ra_insert(&ra, 100, 32, 1000);
	ra_lookup(&ra, 96, 8, &f);
	assert_int_equal(f.hit, 4);
	assert_int_equal(f.miss, 4);
	assert_int_equal(f.ready_us, 1000);
	/* a write in the middle splits what the cache holds */
	ra_invalidate(&ra, 110, 4);
	assert_int_equal(ra.cached, 28);
	ra_lookup(&ra, 100, 32, &f);
	assert_int_equal(f.hit, 28);
	/* past its size the least recently used range leaves */
	ra_insert(&ra, 1000, 32, 2000); /* 60 held */
	ra_lookup(&ra, 1000, 1, &f);    /* 1000 used last */
	ra_insert(&ra, 2000, 16, 3000); /* 76 > 64: the ranges at 100 (least recently used) go */
	assert_true(ra.cached <= 64);
	ra_lookup(&ra, 100, 32, &f);
	assert_int_equal(f.hit, 0);
	ra_lookup(&ra, 1000, 32, &f);
	assert_int_equal(f.hit, 32);
	/* a range larger than the cache is never kept */
	ra_insert(&ra, 5000, 65, 0);
	ra_lookup(&ra, 5000, 65, &f);
	assert_int_equal(f.hit, 0);
	/* the table of ranges is bounded too */
	for (unsigned int i = 0; i < 2 * RA_SEGMENTS; i++)
		ra_insert(&ra, 10000 + 2 * i, 1, 0);
	assert_true(ra.n_seg <= RA_SEGMENTS);
	assert_true(ra.cached <= 64);
}

/* ---- scheduler ---- */

static void test_classes(void **state)
{
	(void)state;
	assert_int_equal(sched_classify(0x02, false, false, 0), CLASS_READ);
	assert_int_equal(sched_classify(0x02, false, true, 0), CLASS_READ_AHEAD);
	assert_int_equal(sched_classify(0x01, false, false, 1), CLASS_WRITE);
	assert_int_equal(sched_classify(0x01, false, false, SCHED_USE_JOURNAL), CLASS_WRITE_JOURNAL);
	assert_int_equal(sched_classify(0x01, true, false, SCHED_USE_JOURNAL), CLASS_WRITE_JOURNAL);
	assert_int_equal(sched_classify(0x01, false, false, SCHED_USE_BACKGROUND), CLASS_WRITE_BACKGROUND);
	assert_int_equal(sched_classify(0x01, true, false, SCHED_USE_BACKGROUND), CLASS_WRITE_FUA);
	assert_int_equal(sched_classify(0x00, false, false, 0), CLASS_FLUSH);
	assert_int_equal(sched_classify(0x08, false, false, 0), CLASS_OTHER);
	assert_string_equal(sched_class_name(CLASS_WRITE_JOURNAL), "write-journal");
}

static void test_levels(void **state)
{
	const unsigned int both = SCHED_HINT_READ_AHEAD | SCHED_HINT_PLACEMENT;

	(void)state;
	/* hint-blind: one level */
	for (unsigned int c = 0; c < CLASS_COUNT; c++)
		assert_int_equal(sched_level((enum sched_class)c, 0), 1);
	assert_int_equal(sched_level(CLASS_FLUSH, both), 0);
	assert_int_equal(sched_level(CLASS_WRITE_JOURNAL, both), 0);
	assert_int_equal(sched_level(CLASS_WRITE_FUA, both), 0);
	assert_int_equal(sched_level(CLASS_READ, both), 1);
	assert_int_equal(sched_level(CLASS_WRITE, both), 1);
	assert_int_equal(sched_level(CLASS_READ_AHEAD, both), 2);
	assert_int_equal(sched_level(CLASS_WRITE_BACKGROUND, both), 3);
	/* each hint alone moves only its own classes */
	assert_int_equal(sched_level(CLASS_READ_AHEAD, SCHED_HINT_PLACEMENT), 1);
	assert_int_equal(sched_level(CLASS_WRITE_BACKGROUND, SCHED_HINT_READ_AHEAD), 1);
	assert_int_equal(sched_level(CLASS_WRITE_JOURNAL, SCHED_HINT_READ_AHEAD), 1);
}

static void test_order(void **state)
{
	struct scheduler s;
	struct sched_entry e[6];
	const uint8_t levels[6] = {3, 3, 1, 2, 0, 1};

	(void)state;
	sched_init(&s, 1000);
	for (unsigned int i = 0; i < 6; i++) {
		e[i] = (struct sched_entry){.arrived_us = 100 + i, .level = levels[i]};
		sched_push(&s, &e[i]);
	}
	/* by level, first come first served within one: 4, 2, 5, 3, 0, 1 */
	assert_ptr_equal(sched_pop(&s, 200), &e[4]);
	assert_ptr_equal(sched_pop(&s, 200), &e[2]);
	/* one that has waited past the limit goes next, oldest first: 0 (arrived 100) at 1101 */
	assert_ptr_equal(sched_pop(&s, 1101), &e[0]);
	assert_ptr_equal(sched_pop(&s, 1101), &e[5]);
	sched_remove(&s, &e[3]);
	assert_ptr_equal(sched_pop(&s, 1101), &e[1]);
	assert_null(sched_pop(&s, 1101));
	assert_int_equal(s.count, 0);
	/* a backlog past the limit is served in turns with the levels above, not before all of them */
	sched_init(&s, 1000);
	for (unsigned int i = 0; i < 6; i++) {
		e[i] = (struct sched_entry){.arrived_us = i < 3 ? 0 : 5000, .level = i < 3 ? 3 : 0};
		sched_push(&s, &e[i]);
	}
	assert_ptr_equal(sched_pop(&s, 5000), &e[0]); /* waited 5 ms: its turn */
	assert_ptr_equal(sched_pop(&s, 5000), &e[3]); /* then the level above */
	assert_ptr_equal(sched_pop(&s, 5000), &e[1]);
	assert_ptr_equal(sched_pop(&s, 5000), &e[4]);
	assert_ptr_equal(sched_pop(&s, 5000), &e[2]);
	assert_ptr_equal(sched_pop(&s, 5000), &e[5]);
	/* without a limit nothing jumps its level */
	sched_init(&s, 0);
	e[0] = (struct sched_entry){.arrived_us = 0, .level = 3};
	e[1] = (struct sched_entry){.arrived_us = 1, .level = 1};
	sched_push(&s, &e[0]);
	sched_push(&s, &e[1]);
	assert_ptr_equal(sched_pop(&s, UINT64_MAX), &e[1]);
	/* a level stays in arrival order when a command that waited for a buffer is queued after later ones */
	sched_init(&s, 1000);
	e[0] = (struct sched_entry){.arrived_us = 300, .level = 3};
	e[1] = (struct sched_entry){.arrived_us = 400, .level = 3};
	e[2] = (struct sched_entry){.arrived_us = 100, .level = 3};
	e[3] = (struct sched_entry){.arrived_us = 350, .level = 3};
	e[4] = (struct sched_entry){.arrived_us = 500, .level = 0};
	for (unsigned int i = 0; i < 5; i++)
		sched_push(&s, &e[i]);
	/* at 1200 the level-3 command that arrived at 100 is past the limit: it goes first, then level 0 */
	assert_ptr_equal(sched_pop(&s, 1200), &e[2]);
	assert_ptr_equal(sched_pop(&s, 1200), &e[4]);
	assert_ptr_equal(sched_pop(&s, 1200), &e[0]);
	assert_ptr_equal(sched_pop(&s, 1200), &e[3]);
	assert_ptr_equal(sched_pop(&s, 1200), &e[1]);
	assert_null(sched_pop(&s, 1200));
	assert_int_equal(s.count, 0);
}

/* ---- counters ---- */

static void test_percentiles(void **state)
{
	struct histogram *h = calloc(1, sizeof(*h));
	uint64_t p50, p99;

	(void)state;
	assert_int_equal(hist_percentile(h, 0.5), 0);
	for (uint64_t v = 1; v <= 1000; v++)
		hist_add(h, v * 100); /* 100 us .. 100 ms */
	p50 = hist_percentile(h, 0.5);
	p99 = hist_percentile(h, 0.99);
	assert_true(p50 > 50000 * 0.97 && p50 < 50000 * 1.03);
	assert_true(p99 > 99000 * 0.97 && p99 < 99000 * 1.03);
	assert_int_equal(hist_percentile(h, 1.0), 100000);
	assert_int_equal(h->max, 100000);
	hist_add(h, UINT64_MAX); /* the largest value still has a bucket */
	assert_int_equal(h->count, 1001);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_caps_operations),
		cmocka_unit_test(test_caps_bind_at_the_published_rate),
		cmocka_unit_test(test_caps_burst_is_a_tenth_of_a_second),
		cmocka_unit_test(test_read_ahead_needs_a_stream),
		cmocka_unit_test(test_read_ahead_window_grows),
		cmocka_unit_test(test_read_ahead_cache),
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_percentiles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
