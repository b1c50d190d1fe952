/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The write log reader over logs crafted byte by byte here (the layout of
 * the kernel's dm-log-writes and QEMU's blklogwrites): good logs of every
 * entry kind, and damaged ones that must give a clear error, never a crash
 * or a read outside the buffer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "writelog.h"

#define SS 512u

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

static void grow(struct craft *c, size_t add)
{
	c->buf = realloc(c->buf, c->len + add);
	assert_non_null(c->buf);
	memset(c->buf + c->len, 0, add);
	c->len += add;
}

static void craft_super(struct craft *c, uint64_t magic, uint64_t version, uint32_t ss)
{
	memset(c, 0, sizeof(*c));
	grow(c, ss >= SS ? ss : SS); /* room for the super block even when SS is nonsense */
	put64(c->buf, magic);
	put64(c->buf + 8, version);
	c->buf[24] = (uint8_t)ss;
	c->buf[25] = (uint8_t)(ss >> 8);
	c->buf[26] = (uint8_t)(ss >> 16);
}

/* Appends an entry with NR_DATA sectors of data filled with FILL. */
static void craft_entry(struct craft *c, uint64_t sector, uint64_t nr_sectors, uint64_t flags, uint64_t data_len,
			uint64_t nr_data, uint8_t fill, const char *mark)
{
	size_t at = c->len;

	grow(c, SS + nr_data * SS);
	put64(c->buf + at, sector);
	put64(c->buf + at + 8, nr_sectors);
	put64(c->buf + at + 16, flags);
	put64(c->buf + at + 24, data_len);
	if (mark)
		memcpy(c->buf + at + 32, mark, strlen(mark));
	memset(c->buf + at + SS, fill, nr_data * SS);
	c->entries++;
	put64(c->buf + 16, c->entries);
}

static struct writelog *open_ok(const struct craft *c, uint32_t flags)
{
	struct writelog *log = NULL;
	char err[256];

	assert_int_equal(writelog_open_buffer(c->buf, c->len, flags, &log, err, sizeof(err)), 0);
	assert_non_null(log);
	return log;
}

static void expect_error(const struct craft *c, int want, const char *words)
{
	struct writelog *log = NULL;
	char err[256] = "";

	assert_int_equal(writelog_open_buffer(c->buf, c->len, 0, &log, err, sizeof(err)), want);
	assert_null(log);
	if (!strstr(err, words))
		fail_msg("error '%s' does not say '%s'", err, words);
}

static void test_every_entry_kind(void **state)
{
	struct craft c;
	struct writelog *log;
	const struct writelog_entry *e;
	uint8_t data[SS * 2];
	(void)state;

	craft_super(&c, WRITELOG_MAGIC, 1, SS);
	craft_entry(&c, 32, 2, 0, 0, 2, 0xaa, NULL);                         /* a write */
	craft_entry(&c, 0, 0, WRITELOG_FLUSH, 0, 0, 0, NULL);                /* QEMU's flush */
	craft_entry(&c, 8, 1, WRITELOG_FUA, 0, 1, 0xbb, NULL);               /* a FUA write */
	craft_entry(&c, 64, 16, WRITELOG_DISCARD, 0, 0, 0, NULL);            /* no data follows */
	craft_entry(&c, 0, 0, WRITELOG_MARK, 5, 0, 0, "fsync");              /* the kernel's mark */
	craft_entry(&c, 4, 1, WRITELOG_FLUSH | WRITELOG_METADATA, 0, 1, 0xcc, NULL); /* a flush with data */
	craft_entry(&c, 40, 1, 0, SS, 1, 0xdd, NULL);                        /* DAX-era inline data */
	log = open_ok(&c, 0);
	assert_int_equal(writelog_sector_size(log), SS);
	assert_int_equal(writelog_entry_count(log), 7);
	assert_int_equal(writelog_super_entries(log), 7);
	assert_int_equal(writelog_trailing_bytes(log), 0);

	e = writelog_entry(log, 0);
	assert_int_equal(e->sector, 32);
	assert_int_equal(e->nr_sectors, 2);
	assert_int_equal(e->data_bytes, 2 * SS);
	assert_int_equal(e->data_pos, 2 * SS); /* the data starts in the sector after the entry's own */
	assert_string_equal(writelog_entry_kind(e), "write");
	assert_int_equal(writelog_read_data(log, e, 0, data, 2 * SS), 0);
	assert_int_equal(data[0], 0xaa);
	assert_int_equal(data[2 * SS - 1], 0xaa);
	assert_int_equal(writelog_read_data(log, e, SS, data, 2 * SS), -ERANGE);

	assert_string_equal(writelog_entry_kind(writelog_entry(log, 1)), "flush");
	assert_int_equal(writelog_entry(log, 1)->data_bytes, 0);
	assert_string_equal(writelog_entry_kind(writelog_entry(log, 2)), "write+fua");
	e = writelog_entry(log, 3);
	assert_string_equal(writelog_entry_kind(e), "discard");
	assert_int_equal(e->data_bytes, 0);
	assert_false(writelog_entry_writes(e));
	e = writelog_entry(log, 4);
	assert_string_equal(writelog_entry_kind(e), "mark");
	assert_string_equal(e->mark, "fsync");
	e = writelog_entry(log, 5);
	assert_string_equal(writelog_entry_kind(e), "flush+write");
	assert_true(writelog_entry_writes(e));
	assert_int_equal(writelog_read_data(log, e, 0, data, SS), 0);
	assert_int_equal(data[7], 0xcc);
	e = writelog_entry(log, 6);
	assert_int_equal(writelog_read_data(log, e, 0, data, SS), 0);
	assert_int_equal(data[0], 0xdd);
	assert_null(writelog_entry(log, 7));
	writelog_free(log);
	free(c.buf);
}

static void test_zero_entries(void **state)
{
	struct craft c;
	struct writelog *log;
	(void)state;

	craft_super(&c, WRITELOG_MAGIC, 1, 4096);
	log = open_ok(&c, 0);
	assert_int_equal(writelog_entry_count(log), 0);
	assert_int_equal(writelog_trailing_bytes(log), 0);
	writelog_free(log);
	free(c.buf);
}

static void test_bad_super(void **state)
{
	struct craft c;
	struct writelog *log = NULL;
	char err[256];
	(void)state;

	craft_super(&c, 0x1234, 1, SS);
	expect_error(&c, -EBADMSG, "not a write log");
	free(c.buf);
	craft_super(&c, WRITELOG_MAGIC, 2, SS);
	expect_error(&c, -EPROTONOSUPPORT, "version 2");
	free(c.buf);
	craft_super(&c, WRITELOG_MAGIC, 1, 1000);
	expect_error(&c, -EBADMSG, "sector size 1000");
	free(c.buf);
	craft_super(&c, WRITELOG_MAGIC, 1, 0);
	expect_error(&c, -EBADMSG, "sector size 0");
	free(c.buf);
	/* shorter than a super block, and empty */
	craft_super(&c, WRITELOG_MAGIC, 1, SS);
	c.len = 20;
	expect_error(&c, -EBADMSG, "fewer than");
	assert_int_equal(writelog_open_buffer(NULL, 0, 0, &log, err, sizeof(err)), -EBADMSG);
	free(c.buf);
}

static void test_truncated(void **state)
{
	struct craft c;
	(void)state;

	/* data cut short */
	craft_super(&c, WRITELOG_MAGIC, 1, SS);
	craft_entry(&c, 0, 8, 0, 0, 8, 0x11, NULL);
	c.len -= 100;
	expect_error(&c, -EBADMSG, "past the end of the log");
	free(c.buf);
	/* the super block counts an entry the file does not hold */
	craft_super(&c, WRITELOG_MAGIC, 1, SS);
	craft_entry(&c, 0, 1, 0, 0, 1, 0x11, NULL);
	put64(c.buf + 16, 2);
	expect_error(&c, -EBADMSG, "entry 1: its header at byte 1536 lies past the end");
	free(c.buf);
	/* a header cut in the middle */
	craft_super(&c, WRITELOG_MAGIC, 1, SS);
	craft_entry(&c, 0, 0, WRITELOG_FLUSH, 0, 0, 0, NULL);
	c.len -= 400;
	expect_error(&c, -EBADMSG, "past the end");
	free(c.buf);
	/* nr_entries absurdly large: fails at the first missing entry, allocates nothing huge */
	craft_super(&c, WRITELOG_MAGIC, 1, SS);
	put64(c.buf + 16, UINT64_MAX);
	expect_error(&c, -EBADMSG, "entry 0");
	free(c.buf);
}

static void test_overflow_and_nonsense(void **state)
{
	struct craft c;
	(void)state;

	craft_super(&c, WRITELOG_MAGIC, 1, SS);
	craft_entry(&c, 0, UINT64_MAX / 2, 0, 0, 0, 0, NULL);
	expect_error(&c, -EBADMSG, "does not fit in 64 bits");
	free(c.buf);
	craft_super(&c, WRITELOG_MAGIC, 1, SS);
	craft_entry(&c, UINT64_MAX / SS, 1, 0, 0, 1, 0, NULL);
	expect_error(&c, -EBADMSG, "does not fit in 64 bits");
	free(c.buf);
	/* nr_sectors large but representable: the data cannot be in the file */
	craft_super(&c, WRITELOG_MAGIC, 1, SS);
	craft_entry(&c, 0, 1ull << 40, 0, 0, 0, 0, NULL);
	expect_error(&c, -EBADMSG, "run past the end");
	free(c.buf);
	/* data_len that is neither 0, a mark, nor the sectors' bytes */
	craft_super(&c, WRITELOG_MAGIC, 1, SS);
	craft_entry(&c, 0, 1, 0, UINT64_MAX, 1, 0, NULL);
	expect_error(&c, -EBADMSG, "data_len");
	free(c.buf);
	/* a mark longer than its sector */
	craft_super(&c, WRITELOG_MAGIC, 1, SS);
	craft_entry(&c, 0, 0, WRITELOG_MARK, SS, 0, 0, "x");
	expect_error(&c, -EBADMSG, "MARK");
	free(c.buf);
	/* flags nobody defines */
	craft_super(&c, WRITELOG_MAGIC, 1, SS);
	craft_entry(&c, 0, 0, 0x100, 0, 0, 0, NULL);
	expect_error(&c, -EBADMSG, "unknown flags 0x100");
	free(c.buf);
}

static void test_scan_tail(void **state)
{
	struct craft c;
	struct writelog *log;
	(void)state;

	/* QEMU updated the super block after the flush only: two writes follow uncounted */
	craft_super(&c, WRITELOG_MAGIC, 1, SS);
	craft_entry(&c, 0, 0, WRITELOG_FLUSH, 0, 0, 0, NULL);
	craft_entry(&c, 8, 2, 0, 0, 2, 0x22, NULL);
	craft_entry(&c, 16, 1, 0, 0, 1, 0x33, NULL);
	put64(c.buf + 16, 1);
	grow(&c, SS); /* zeroed space after the last entry: not an entry */
	log = open_ok(&c, 0);
	assert_int_equal(writelog_entry_count(log), 1);
	assert_int_equal(writelog_trailing_bytes(log), 6 * SS);
	writelog_free(log);
	log = open_ok(&c, WRITELOG_SCAN_TAIL);
	assert_int_equal(writelog_entry_count(log), 3);
	assert_int_equal(writelog_super_entries(log), 1);
	assert_int_equal(writelog_entry(log, 2)->sector, 16);
	assert_int_equal(writelog_trailing_bytes(log), SS);
	writelog_free(log);
	/* a torn last entry in the tail ends the scan without an error */
	c.len -= SS + 100;
	log = open_ok(&c, WRITELOG_SCAN_TAIL);
	assert_int_equal(writelog_entry_count(log), 2);
	writelog_free(log);
	free(c.buf);
}

static void test_fd(void **state)
{
	struct craft c;
	struct writelog *log = NULL;
	const struct writelog_entry *e;
	char err[256], path[] = "/tmp/lcloud-writelog-XXXXXX";
	uint8_t data[4096];
	int fd;
	(void)state;

	craft_super(&c, WRITELOG_MAGIC, 1, 4096);
	/* 4 KiB log sectors: one 16 KiB write at sector 12, as the 7.3 guest's NVMe write showed */
	{
		size_t at = c.len;

		grow(&c, 4096 * 5);
		put64(c.buf + at, 12);
		put64(c.buf + at + 8, 4);
		memset(c.buf + at + 4096, 0x5a, 4096 * 4);
		put64(c.buf + 16, 1);
	}
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, c.buf, c.len), (ssize_t)c.len);
	assert_int_equal(writelog_open_fd(fd, 0, &log, err, sizeof(err)), 0);
	e = writelog_entry(log, 0);
	assert_int_equal(e->sector * writelog_sector_size(log), 12 * 4096);
	assert_int_equal(e->data_bytes, 16384);
	assert_int_equal(writelog_read_data(log, e, 12288, data, 4096), 0);
	assert_int_equal(data[4095], 0x5a);
	writelog_free(log);
	/* the same file cut short: an error through the fd as well */
	assert_int_equal(ftruncate(fd, (off_t)c.len - 1), 0);
	log = NULL;
	assert_int_equal(writelog_open_fd(fd, 0, &log, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "truncated"));
	close(fd);
	free(c.buf);
}

/*
 * Every byte of a good log's headers set to values that matter to a parser
 * (0, 1, 0x7f, 0x80, 0xff) and the log cut at every sector boundary: each
 * must parse or give an error with a message, and every entry parsed must
 * lie inside the buffer.
 */
static void test_mutations(void **state)
{
	static const uint8_t values[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
	struct craft c;
	uint8_t *copy;
	(void)state;

	craft_super(&c, WRITELOG_MAGIC, 1, SS);
	craft_entry(&c, 8, 2, 0, 0, 2, 0x10, NULL);
	craft_entry(&c, 0, 0, WRITELOG_FLUSH, 0, 0, 0, NULL);
	craft_entry(&c, 0, 0, WRITELOG_MARK, 3, 0, 0, "abc");
	craft_entry(&c, 64, 4, WRITELOG_DISCARD, 0, 0, 0, NULL);
	craft_entry(&c, 16, 1, WRITELOG_FUA, 0, 1, 0x20, NULL);
	copy = malloc(c.len);
	assert_non_null(copy);
	for (size_t pos = 0; pos < c.len; pos++) {
		/* headers only: the data bytes are opaque to the reader */
		if (pos % SS >= 40 && pos >= SS)
			continue;
		for (size_t v = 0; v < sizeof(values); v++)
			for (uint32_t flags = 0; flags <= WRITELOG_SCAN_TAIL; flags++) {
				struct writelog *log = NULL;
				char err[256] = "";
				int r;

				memcpy(copy, c.buf, c.len);
				copy[pos] = values[v];
				r = writelog_open_buffer(copy, c.len, flags, &log, err, sizeof(err));
				if (r < 0) {
					assert_null(log);
					assert_true(err[0] || r == -ENOMEM);
					continue;
				}
				for (uint64_t i = 0; i < writelog_entry_count(log); i++) {
					const struct writelog_entry *e = writelog_entry(log, i);

					assert_true(e->data_pos <= c.len && e->data_bytes <= c.len - e->data_pos);
				}
				writelog_free(log);
			}
	}
	for (size_t len = 0; len <= c.len; len += SS / 2) {
		struct writelog *log = NULL;
		char err[256] = "";
		int r = writelog_open_buffer(c.buf, len, 0, &log, err, sizeof(err));

		assert_true(r == 0 ? len == c.len : err[0] != '\0');
		writelog_free(log);
	}
	free(copy);
	free(c.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_entry_kind),
		cmocka_unit_test(test_zero_entries),
		cmocka_unit_test(test_bad_super),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_overflow_and_nonsense),
		cmocka_unit_test(test_scan_tail),
		cmocka_unit_test(test_fd),
		cmocka_unit_test(test_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
