/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The log oracle and crash images over logs built here from stamped pages:
 * each rule (split, over the atomic unit, across a boundary) against a write
 * that obeys it, the logical block below which nothing tears, incomplete
 * pages, copies, durability under a volatile cache, and images cut inside a
 * command.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "crash_image.h"
#include "oracle.h"
#include "torture_page.h"
#include "writelog.h"

#define SS 512u
#define PAGE 16384u
#define RUN 0xfeedull

struct craft {
	uint8_t *buf;
	size_t len;
	uint64_t entries;
};

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static void craft_init(struct craft *c)
{
	memset(c, 0, sizeof(*c));
	c->buf = calloc(1, SS);
	c->len = SS;
	put64(c->buf, WRITELOG_MAGIC);
	put64(c->buf + 8, 1);
	c->buf[25] = SS >> 8;
}

/* A write entry of LEN bytes at device byte OFFSET carrying DATA. */
static void craft_write(struct craft *c, uint64_t offset, const void *data, size_t len, uint64_t flags)
{
	size_t at = c->len;

	c->buf = realloc(c->buf, c->len + SS + len);
	memset(c->buf + at, 0, SS);
	put64(c->buf + at, offset / SS);
	put64(c->buf + at + 8, len / SS);
	put64(c->buf + at + 16, flags);
	if (len)
		memcpy(c->buf + at + SS, data, len);
	c->len += SS + len;
	put64(c->buf + 16, ++c->entries);
}

static void craft_flush(struct craft *c)
{
	craft_write(c, 0, NULL, 0, WRITELOG_FLUSH);
}

/* A DISCARD entry of LEN bytes at device byte OFFSET: its sectors, and no data after it. */
static void craft_discard(struct craft *c, uint64_t offset, size_t len)
{
	craft_write(c, offset, NULL, 0, WRITELOG_DISCARD);
	put64(c->buf + c->len - SS + 8, len / SS);
}

static uint8_t *page(uint64_t number, uint64_t generation)
{
	static uint8_t buf[4][PAGE];
	static int next;
	uint8_t *p = buf[next++ % 4];

	torture_page_fill(p, PAGE, RUN, number, generation);
	return p;
}

static struct oracle_result judge(const struct craft *c, const struct oracle_model *m, struct writelog **ret_log)
{
	struct oracle_result r;
	char err[256];

	assert_int_equal(writelog_open_buffer(c->buf, c->len, 0, ret_log, err, sizeof(err)), 0);
	assert_int_equal(oracle_run((const struct writelog *const *)ret_log, 1, m, &r, err, sizeof(err)), 0);
	return r;
}

static const struct oracle_page_write *find(const struct oracle_result *r, uint64_t pg, uint64_t gen, uint32_t copy)
{
	for (uint64_t i = 0; i < r->n_writes; i++)
		if (r->writes[i].page == pg && r->writes[i].generation == gen && r->writes[i].copy == copy)
			return &r->writes[i];
	fail_msg("no page write %lu/%lu copy %u", (unsigned long)pg, (unsigned long)gen, copy);
	return NULL;
}

static void test_rules(void **state)
{
	const struct oracle_model nvme = { .lba = 4096, .atomic_bytes = 16384, .boundary = 32768,
					   .boundary_offset = 8192 };
	struct craft c;
	struct writelog *log;
	struct oracle_result r;
	const struct oracle_page_write *w;
	uint8_t two[2 * PAGE], junk[4096];
	(void)state;

	memset(junk, 0x77, sizeof(junk));
	craft_init(&c);
	/* page 1 in two commands */
	craft_write(&c, 1 * PAGE + 8192, page(1, 5), 8192, 0);
	craft_write(&c, 1 * PAGE + 8192 + 8192, page(1, 5) + 8192, 8192, 0);
	/* page 2 in one 16 KiB command that crosses no boundary (boundaries at 8K + 32K k) */
	craft_write(&c, 73728, page(2, 6), PAGE, 0);
	/* pages 3 and 4 merged into one 32 KiB command: over the 16 KiB unit */
	memcpy(two, page(3, 7), PAGE);
	memcpy(two + PAGE, page(4, 8), PAGE);
	craft_write(&c, 8 * PAGE, two, sizeof(two), 0);
	/* page 5 in one 16 KiB command across the boundary at 40960 */
	craft_write(&c, 32768, page(5, 9), PAGE, 0);
	/* page 6: half of it only; and blocks that are no page's */
	craft_write(&c, 20 * PAGE, page(6, 10), 8192, 0);
	craft_write(&c, 30 * PAGE, junk, sizeof(junk), 0);
	craft_flush(&c);
	r = judge(&c, &nvme, &log);
	assert_int_equal(r.n_writes, 6);
	assert_int_equal(r.write_entries, 7);
	assert_int_equal(r.flush_entries, 1);
	assert_int_equal(r.other_blocks, 8);
	assert_int_equal(r.stamped_blocks, 32 * 5 + 16);

	w = find(&r, 1, 5, 0);
	assert_int_equal(w->verdict, ORACLE_TEARABLE);
	assert_int_equal(w->rules, ORACLE_SPLIT);
	assert_int_equal(w->n_parts, 2);
	assert_int_equal(w->cut_entry, 1); /* entry 0 applied, entry 1 not: half new */
	assert_int_equal(w->cut_bytes, 0);

	w = find(&r, 2, 6, 0);
	assert_int_equal(w->verdict, ORACLE_ATOMIC);
	assert_int_equal(w->rules, 0);

	w = find(&r, 3, 7, 0);
	assert_int_equal(w->verdict, ORACLE_TEARABLE);
	assert_true(w->rules & ORACLE_OVER_UNIT);
	assert_int_equal(w->cut_entry, 3);
	assert_int_equal(w->cut_bytes, 8192); /* the middle of page 3 */
	w = find(&r, 4, 8, 0);
	assert_int_equal(w->cut_bytes, PAGE + 8192);

	w = find(&r, 5, 9, 0);
	assert_int_equal(w->verdict, ORACLE_TEARABLE);
	assert_int_equal(w->rules, ORACLE_BOUNDARY);
	assert_int_equal(oracle_boundary_after(&nvme, 32768), 40960);

	w = find(&r, 6, 10, 0);
	assert_int_equal(w->verdict, ORACLE_INCOMPLETE);
	assert_int_equal(w->blocks_seen, 16);
	assert_int_equal(r.tearable, 4);
	assert_int_equal(r.atomic, 1);
	assert_int_equal(r.incomplete, 1);
	assert_int_equal(r.not_durable, 0);
	oracle_result_release(&r);

	/* a 16 KiB logical block: no command can tear a 16 KiB page, not even a 32 KiB one */
	{
		const struct oracle_model big = { .lba = 16384, .atomic_bytes = 16384 };

		writelog_free(log);
		r = judge(&c, &big, &log);
		assert_int_equal(find(&r, 3, 7, 0)->verdict, ORACLE_ATOMIC);
		assert_int_equal(find(&r, 1, 5, 0)->verdict, ORACLE_TEARABLE); /* two commands still */
		oracle_result_release(&r);
	}
	writelog_free(log);
	free(c.buf);
}

/*
 * A promise per aligned physical block (Google's 16 KiB): a merged command
 * that breaks the unit still writes each aligned block it covers entirely
 * as a whole, so a page that is one such block cannot tear in it; a page
 * half in a block the command only partly covers can, at a logical block.
 */
static void test_whole_blocks(void **state)
{
	const struct oracle_model gcp = { .lba = 512, .atomic_bytes = 16384, .boundary = 16384, .whole_block = 16384 };
	struct oracle_model lba_only = gcp;
	struct craft c;
	struct writelog *log;
	struct oracle_result r;
	const struct oracle_page_write *w;
	uint8_t four[4 * PAGE];
	char err[128];
	(void)state;

	craft_init(&c);
	/* pages 1 to 4 in one 64 KiB command of whole aligned blocks */
	for (int i = 0; i < 4; i++)
		memcpy(four + i * PAGE, page(1 + (uint64_t)i, 3), PAGE);
	craft_write(&c, 16 * PAGE, four, sizeof(four), 0);
	/* page 5 across two blocks at 8 KiB past one, in one 16 KiB command over both halves */
	craft_write(&c, 40 * PAGE + 8192, page(5, 4), PAGE, 0);
	/* pages 6 and 7 each whole in a 48 KiB command that starts and ends in the middle of a block */
	memcpy(four, page(9, 1), 8192);
	memcpy(four + 8192, page(6, 2), PAGE);
	memcpy(four + 8192 + PAGE, page(7, 2), PAGE);
	craft_write(&c, 50 * PAGE - 8192, four, 8192 + 2 * PAGE, 0);
	craft_flush(&c);
	r = judge(&c, &gcp, &log);
	for (uint64_t pg = 1; pg <= 4; pg++)
		assert_int_equal(find(&r, pg, 3, 0)->verdict, ORACLE_ATOMIC);
	w = find(&r, 5, 4, 0);
	assert_int_equal(w->verdict, ORACLE_TEARABLE);
	assert_int_equal(w->rules, ORACLE_BOUNDARY);
	assert_int_equal(w->cut_bytes, 8192); /* at the block edge: no cut inside a block it covers whole */
	assert_int_equal(find(&r, 6, 2, 0)->verdict, ORACLE_ATOMIC);
	assert_int_equal(find(&r, 7, 2, 0)->verdict, ORACLE_ATOMIC);
	/* the partial page at the front lies in a block the command covers only in part: torn at a 512-byte block */
	assert_int_equal(find(&r, 9, 1, 0)->verdict, ORACLE_INCOMPLETE);
	oracle_result_release(&r);
	writelog_free(log);

	/* without whole blocks the same log tears every merged page */
	lba_only.whole_block = 0;
	r = judge(&c, &lba_only, &log);
	for (uint64_t pg = 1; pg <= 4; pg++)
		assert_int_equal(find(&r, pg, 3, 0)->verdict, ORACLE_TEARABLE);
	assert_int_equal(find(&r, 6, 2, 0)->verdict, ORACLE_TEARABLE);
	oracle_result_release(&r);
	writelog_free(log);
	free(c.buf);

	/* a whole block that is no power of two, or not whole logical blocks, is refused */
	lba_only.whole_block = 12288;
	assert_int_equal(oracle_model_check(&lba_only, err, sizeof(err)), -EINVAL);
	lba_only.lba = 4096;
	lba_only.whole_block = 2048;
	assert_int_equal(oracle_model_check(&lba_only, err, sizeof(err)), -EINVAL);
}

static void test_copies_and_durability(void **state)
{
	const struct oracle_model m = { .lba = 4096, .atomic_bytes = 16384, .volatile_cache = true };
	struct craft c;
	struct writelog *log;
	struct oracle_result r;
	(void)state;

	craft_init(&c);
	craft_write(&c, 0, page(0, 1), PAGE, 0);
	craft_write(&c, 40 * PAGE, page(0, 1), PAGE, 0); /* the same page write again: a second copy */
	craft_flush(&c);
	craft_write(&c, PAGE, page(1, 2), PAGE, 0);             /* after the last flush */
	craft_write(&c, 2 * PAGE, page(2, 3), PAGE, WRITELOG_FUA); /* FUA: durable on its own */
	craft_write(&c, 50 * PAGE, page(2, 4), PAGE, 0);         /* the next generation elsewhere */
	craft_write(&c, 3 * PAGE, page(3, 5), PAGE, 0);
	craft_write(&c, 3 * PAGE, page(3, 6), PAGE, 0);          /* in place */
	craft_flush(&c);
	r = judge(&c, &m, &log);
	assert_int_equal(r.n_writes, 7);
	assert_int_equal(find(&r, 2, 3, 0)->previous_offset, UINT64_MAX);
	assert_int_equal(find(&r, 2, 4, 0)->previous_offset, 2 * PAGE);
	assert_int_equal(find(&r, 2, 4, 0)->device_offset, 50 * PAGE);
	assert_int_equal(find(&r, 3, 6, 0)->previous_offset, 3 * PAGE);
	assert_int_equal(find(&r, 3, 6, 0)->device_offset, 3 * PAGE);
	assert_int_equal(find(&r, 0, 1, 1)->previous_offset, 0);
	assert_int_equal(find(&r, 0, 1, 0)->verdict, ORACLE_ATOMIC);
	assert_int_equal(find(&r, 0, 1, 1)->verdict, ORACLE_ATOMIC);
	assert_int_equal(find(&r, 0, 1, 1)->parts[0].dev_offset, 40 * PAGE);
	assert_true(find(&r, 0, 1, 0)->durable);
	assert_true(find(&r, 1, 2, 0)->durable); /* the flush at the end */
	assert_true(find(&r, 2, 3, 0)->durable);
	assert_int_equal(r.not_durable, 0);
	assert_int_equal(r.fua_entries, 1);
	oracle_result_release(&r);
	/* without the last flush, everything after the first one is not durable, except the FUA write */
	c.len -= SS;
	put64(c.buf + 16, --c.entries);
	writelog_free(log);
	r = judge(&c, &m, &log);
	assert_false(find(&r, 1, 2, 0)->durable);
	assert_true(find(&r, 2, 3, 0)->durable);
	assert_false(find(&r, 3, 6, 0)->durable);
	assert_true(find(&r, 0, 1, 1)->durable);
	assert_int_equal(r.not_durable, 4); /* pages 1, 2 (generation 4), 3 (5 and 6) */
	oracle_result_release(&r);
	writelog_free(log);
	free(c.buf);
}

/*
 * A page write in many commands: which blocks came is read from its parts
 * while they are few, and from a bitmap after that; either way a block seen
 * again starts a new copy, and the copy still counts its own blocks.
 */
static void test_blocks_seen_in_many_parts(void **state)
{
	const struct oracle_model m = { .lba = 512, .atomic_bytes = 512 };
	const uint32_t blocks = PAGE / TORTURE_BLOCK_SIZE;
	struct craft c;
	struct writelog *log;
	struct oracle_result r;
	uint8_t *p = page(7, 1);
	(void)state;

	for (uint32_t repeat_after = 2; repeat_after <= blocks; repeat_after += 10) {
		craft_init(&c);
		/* one block per command, odd blocks first: no two neighbours in one part */
		for (uint32_t i = 0; i < repeat_after; i++) {
			uint32_t b = i < blocks / 2 ? 2 * i + 1 : 2 * (i - blocks / 2);

			craft_write(&c, (uint64_t)b * TORTURE_BLOCK_SIZE, p + b * TORTURE_BLOCK_SIZE, TORTURE_BLOCK_SIZE, 0);
		}
		/* block 1 again: the second copy of the page write */
		craft_write(&c, 100 * PAGE, p + TORTURE_BLOCK_SIZE, TORTURE_BLOCK_SIZE, 0);
		r = judge(&c, &m, &log);
		assert_int_equal(r.n_writes, 2);
		assert_int_equal(find(&r, 7, 1, 0)->blocks_seen, repeat_after);
		assert_int_equal(find(&r, 7, 1, 0)->n_parts, repeat_after);
		assert_int_equal(find(&r, 7, 1, 0)->verdict, repeat_after == blocks ? ORACLE_TEARABLE : ORACLE_INCOMPLETE);
		assert_int_equal(find(&r, 7, 1, 1)->blocks_seen, 1);
		assert_int_equal(find(&r, 7, 1, 1)->parts[0].dev_offset, 100 * PAGE);
		oracle_result_release(&r);
		writelog_free(log);
		free(c.buf);
	}
}

static void test_two_devices(void **state)
{
	const struct oracle_model m = { .lba = 4096, .atomic_bytes = 16384, .volatile_cache = true };
	struct craft a, b;
	struct writelog *logs[2];
	struct oracle_result r;
	const struct oracle_page_write *w;
	char err[256];
	(void)state;

	/* raid0 with 8 KiB chunks: page 0's halves on two devices; raid1: page 1 whole on both */
	craft_init(&a);
	craft_init(&b);
	craft_write(&a, 0, page(0, 1), 8192, 0);
	craft_write(&b, 0, page(0, 1) + 8192, 8192, 0);
	craft_write(&a, 65536, page(1, 2), PAGE, 0);
	craft_write(&b, 65536, page(1, 2), PAGE, 0);
	craft_flush(&a); /* only the first device flushed */
	assert_int_equal(writelog_open_buffer(a.buf, a.len, 0, &logs[0], err, sizeof(err)), 0);
	assert_int_equal(writelog_open_buffer(b.buf, b.len, 0, &logs[1], err, sizeof(err)), 0);
	assert_int_equal(oracle_run((const struct writelog *const *)logs, 2, &m, &r, err, sizeof(err)), 0);
	assert_int_equal(r.n_writes, 3);
	w = find(&r, 0, 1, 0);
	assert_int_equal(w->verdict, ORACLE_TEARABLE);
	assert_int_equal(w->rules, ORACLE_SPLIT);
	assert_true(w->across_logs);
	assert_int_equal(w->parts[1].log, 1);
	assert_int_equal(w->cut_log, 1); /* device 0 whole, device 1 before its half */
	assert_int_equal(w->cut_entry, 0);
	assert_false(w->durable);        /* its second half was never flushed */
	w = find(&r, 1, 2, 0);
	assert_int_equal(w->verdict, ORACLE_ATOMIC);
	assert_false(w->across_logs);
	assert_true(w->durable);
	w = find(&r, 1, 2, 1); /* the mirror's copy */
	assert_int_equal(w->verdict, ORACLE_ATOMIC);
	assert_int_equal(w->parts[0].log, 1);
	assert_false(w->durable);
	assert_int_equal(r.write_entries, 4);
	oracle_result_release(&r);
	/* one device alone: the page is half there */
	assert_int_equal(oracle_run((const struct writelog *const *)logs, 1, &m, &r, err, sizeof(err)), 0);
	assert_int_equal(find(&r, 0, 1, 0)->verdict, ORACLE_INCOMPLETE);
	oracle_result_release(&r);
	writelog_free(logs[0]);
	writelog_free(logs[1]);
	free(a.buf);
	free(b.buf);
}

static void test_model_check(void **state)
{
	char err[200];
	(void)state;

	assert_int_equal(oracle_model_check(&(struct oracle_model){ .lba = 4096, .atomic_bytes = 16384 }, err,
					    sizeof(err)), 0);
	assert_int_equal(oracle_model_check(&(struct oracle_model){ .lba = 3000, .atomic_bytes = 3000 }, err,
					    sizeof(err)), -EINVAL);
	assert_int_equal(oracle_model_check(&(struct oracle_model){ .lba = 4096, .atomic_bytes = 2048 }, err,
					    sizeof(err)), -EINVAL);
	assert_int_equal(oracle_model_check(&(struct oracle_model){ .lba = 4096, .atomic_bytes = 4096,
								   .boundary = 6144 }, err, sizeof(err)), -EINVAL);
	assert_true(oracle_command_atomic(&(struct oracle_model){ .lba = 512, .atomic_bytes = 4096 }, 0, 4096));
	assert_false(oracle_command_atomic(&(struct oracle_model){ .lba = 512, .atomic_bytes = 4096 }, 0, 4608));
}

/* A base image of 8 pages, page P generation 0 each, in BASE (a mkstemp template), and DISK the same; OUT made. */
static uint8_t *make_base(char *base, char *out)
{
	uint8_t *disk = malloc(8 * PAGE);
	int fd;

	for (int p = 0; p < 8; p++)
		memcpy(disk + p * PAGE, page((uint64_t)p, 0), PAGE);
	fd = mkstemp(base);
	assert_int_equal(write(fd, disk, 8 * PAGE), 8 * PAGE);
	close(fd);
	close(mkstemp(out));
	return disk;
}

/* The 8 pages crash_image_make() left in OUT, into IMG. */
static void read_image(const char *out, uint8_t *img)
{
	int fd = open(out, O_RDONLY);

	assert_int_equal(read(fd, img, 8 * PAGE), 8 * PAGE);
	close(fd);
}

/* What a crash image test made, given back. */
static void release_image_test(struct writelog *log, const char *base, const char *out, struct craft *c,
			       uint8_t *disk, uint8_t *img)
{
	writelog_free(log);
	unlink(base);
	unlink(out);
	free(c->buf);
	free(disk);
	free(img);
}

static void test_crash_image(void **state)
{
	char base[] = "/tmp/lcloud-base-XXXXXX", out[] = "/tmp/lcloud-image-XXXXXX", err[256];
	struct craft c;
	struct writelog *log;
	uint8_t *disk = make_base(base, out), *img = malloc(8 * PAGE);
	struct torture_stamp s;
	(void)state;

	craft_init(&c);
	craft_write(&c, 1 * PAGE, page(1, 1), PAGE, 0);
	craft_flush(&c);
	craft_write(&c, 2 * PAGE, page(2, 2), PAGE, 0);
	assert_int_equal(writelog_open_buffer(c.buf, c.len, 0, &log, err, sizeof(err)), 0);

	/* entry 0 whole, entry 1 (the flush) nothing, and 8 KiB of entry 2 */
	assert_int_equal(crash_image_make(log, base, out, 2, 8192, err, sizeof(err)), 0);
	read_image(out, img);
	assert_memory_equal(img + PAGE, page(1, 1), PAGE);
	assert_int_equal(torture_block_decode(img + 2 * PAGE + 8192 - 512, &s), TORTURE_BLOCK_STAMPED);
	assert_int_equal(s.generation, 2);
	assert_int_equal(torture_block_decode(img + 2 * PAGE + 8192, &s), TORTURE_BLOCK_STAMPED);
	assert_int_equal(s.generation, 0);
	assert_memory_equal(img + 3 * PAGE, disk + 3 * PAGE, 5 * PAGE);
	/* nothing applied: the base */
	assert_int_equal(crash_image_make(log, base, out, 0, 0, err, sizeof(err)), 0);
	read_image(out, img);
	assert_memory_equal(img, disk, 8 * PAGE);
	/* out of range */
	assert_int_equal(crash_image_make(log, base, out, 4, 0, err, sizeof(err)), -EINVAL);
	assert_int_equal(crash_image_make(log, base, out, 2, PAGE, err, sizeof(err)), -EINVAL);
	assert_int_equal(crash_image_make(log, base, out, 1, 512, err, sizeof(err)), -EINVAL); /* a flush */
	/* a log of a larger disk than the base */
	assert_int_equal(truncate(base, 2 * PAGE), 0);
	assert_int_equal(crash_image_make(log, base, out, 3, 0, err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "past the end of the base image"));
	release_image_test(log, base, out, &c, disk, img);
}

/*
 * A DISCARD's range is zeros on the image, in the log's order: a write
 * before it is gone, one after it stands, and bytes around it are the
 * base's (lcloud-target logs Write Zeroes and deallocate so).
 */
static void test_crash_image_discards(void **state)
{
	char base[] = "/tmp/lcloud-base-XXXXXX", out[] = "/tmp/lcloud-image-XXXXXX", err[256];
	uint8_t *disk = make_base(base, out), *img = malloc(8 * PAGE), *zeros = calloc(1, 2 * PAGE);
	struct writelog *log;
	struct craft c;
	(void)state;

	craft_init(&c);
	craft_write(&c, 3 * PAGE, page(3, 1), PAGE, 0);
	craft_discard(&c, 2 * PAGE + 512, 3 * PAGE - 512); /* from inside page 2 to the end of page 4 */
	craft_write(&c, 4 * PAGE, page(4, 2), PAGE, 0);
	assert_int_equal(writelog_open_buffer(c.buf, c.len, 0, &log, err, sizeof(err)), 0);
	assert_int_equal(writelog_entry_image_bytes(log, writelog_entry(log, 1)), 3 * PAGE - 512);
	assert_int_equal(writelog_entry_image_bytes(log, writelog_entry(log, 0)), PAGE);
	assert_int_equal(crash_image_make(log, base, out, 3, 0, err, sizeof(err)), 0);
	read_image(out, img);
	assert_memory_equal(img, disk, 2 * PAGE + 512);
	assert_memory_equal(img + 2 * PAGE + 512, zeros, 2 * PAGE - 512); /* page 3's write is gone too */
	assert_memory_equal(img + 4 * PAGE, page(4, 2), PAGE);
	assert_memory_equal(img + 5 * PAGE, disk + 5 * PAGE, 3 * PAGE);
	/* cut before it: the write stands */
	assert_int_equal(crash_image_make(log, base, out, 1, 0, err, sizeof(err)), 0);
	read_image(out, img);
	assert_memory_equal(img + 3 * PAGE, page(3, 1), PAGE);
	/* a discard past the base's end is refused like a write */
	assert_int_equal(truncate(base, 3 * PAGE), 0);
	assert_int_equal(crash_image_make(log, base, out, 2, 0, err, sizeof(err)), -ENOSPC);
	release_image_test(log, base, out, &c, disk, img);
	free(zeros);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_whole_blocks),
		cmocka_unit_test(test_copies_and_durability),
		cmocka_unit_test(test_blocks_seen_in_many_parts),
		cmocka_unit_test(test_two_devices),
		cmocka_unit_test(test_model_check),
		cmocka_unit_test(test_crash_image),
		cmocka_unit_test(test_crash_image_discards),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
