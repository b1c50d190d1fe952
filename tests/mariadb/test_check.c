/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The MariaDB plugin's decisions (bindings/mariadb/check.c) on answers made
 * here, with md_answer_for() replaced: the branches a loop device cannot
 * reach on the host (page writes proved untorn, doublewrite ON but not
 * needed), the summary's precedence (a "no" anywhere is "yes", else an
 * "unknown" is "unknown"), the redo log left out of it, and when
 * lcloud_enforce refuses a start.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lcloud_mariadb.h"

/* What the stub answers, by location index. */
static struct md_answer canned[MD_MAX_LOCATIONS];
static unsigned int asked;

void md_answer_for(const char *path, uint64_t size, enum lcloud_io_path io_path, int timeout_ms,
		   struct md_answer *ret)
{
	*ret = canned[asked++];
}

static struct {
	int severity;
	char text[4096];
} logged[16];
static unsigned int log_count;

__attribute__((format(printf, 2, 3)))
static void capture(int severity, const char *fmt, ...)
{
	va_list ap;

	assert_true(log_count < 16);
	logged[log_count].severity = severity;
	va_start(ap, fmt);
	vsnprintf(logged[log_count].text, sizeof(logged[log_count].text), fmt, ap);
	va_end(ap);
	log_count++;
}

static void answer(unsigned int i, enum lcloud_answer a, uint64_t max, const char *reason)
{
	canned[i].answer = a;
	canned[i].max_untorn_bytes = max;
	snprintf(canned[i].reason, sizeof(canned[i].reason), "%s", reason);
	snprintf(canned[i].filesystem, sizeof(canned[i].filesystem), "ext4");
	snprintf(canned[i].device, sizeof(canned[i].device), "/dev/nvme0n1");
	snprintf(canned[i].mount_point, sizeof(canned[i].mount_point), "/srv");
}

/* ibdata1, the data directory, the redo log: as server_settings.c makes them. */
static void settings(struct md_settings *s, bool doublewrite)
{
	memset(s, 0, sizeof(*s));
	memset(canned, 0, sizeof(canned));
	asked = log_count = 0;
	s->read = true;
	s->page_size = 16384;
	s->doublewrite = doublewrite;
	snprintf(s->doublewrite_text, sizeof(s->doublewrite_text), "%s", doublewrite ? "ON" : "OFF");
	snprintf(s->flush_method, sizeof(s->flush_method), "innodb_flush_method=O_DIRECT");
	s->location_count = 3;
	s->locations[0] = (struct md_location){ MD_ROLE_SYSTEM_TABLESPACE, "/srv/data/ibdata1", LCLOUD_PATH_PLAIN_DIRECT };
	s->locations[1] = (struct md_location){ MD_ROLE_FILE_PER_TABLE, "/srv/data", LCLOUD_PATH_PLAIN_DIRECT };
	s->locations[2] = (struct md_location){ MD_ROLE_REDO_LOG, "/srv/data", LCLOUD_PATH_PLAIN_DIRECT };
}

static void test_untorn_with_doublewrite_on_is_a_note_not_needed(void **state)
{
	struct md_settings s;
	struct md_summary sum = { 0 };

	settings(&s, true);
	answer(0, LCLOUD_ANSWER_UNTORN, 32768, "untorn on plain_direct: nvme0n1 [device]");
	answer(1, LCLOUD_ANSWER_UNTORN, 16384, "untorn on plain_direct: nvme0n1 [device]");
	answer(2, LCLOUD_ANSWER_NO, 4096, "not untorn: redo");
	assert_false(md_check(&s, 1000, true, capture, &sum));
	assert_int_equal(log_count, 3);
	assert_int_equal(logged[0].severity, MD_LOG_NOTE);
	assert_non_null(strstr(logged[0].text, "innodb_doublewrite is ON, but not needed for the system tablespace "
					       "(/srv/data/ibdata1): 16384-byte page writes there are untorn"));
	assert_non_null(strstr(logged[0].text, "[device]"));
	/* the redo log's "no" does not make doublewrite needed */
	assert_string_equal(sum.doublewrite_needed, "no");
	assert_int_equal(sum.max_untorn_bytes, 16384);
	assert_string_equal(sum.io_path, "plain_direct");
	assert_int_equal(sum.checks, 1);
}

static void test_untorn_with_doublewrite_off_is_a_plain_note(void **state)
{
	struct md_settings s;
	struct md_summary sum = { 0 };

	settings(&s, false);
	answer(0, LCLOUD_ANSWER_UNTORN, 16384, "untorn");
	answer(1, LCLOUD_ANSWER_UNTORN, 16384, "untorn");
	answer(2, LCLOUD_ANSWER_UNTORN, 16384, "untorn");
	assert_false(md_check(&s, 1000, true, capture, &sum));
	for (unsigned int i = 0; i < log_count; i++)
		assert_int_equal(logged[i].severity, MD_LOG_NOTE);
	assert_non_null(strstr(logged[1].text, "innodb_doublewrite is OFF, and 16384-byte page writes to the "
					       "file-per-table directory (/srv/data) are untorn"));
	assert_string_equal(sum.doublewrite_needed, "no");
}

static void test_no_anywhere_is_yes_and_names_that_location(void **state)
{
	struct md_settings s;
	struct md_summary sum = { 0 };

	settings(&s, false);
	answer(0, LCLOUD_ANSWER_UNKNOWN, 0, "could not probe /srv/data/ibdata1: Permission denied");
	answer(1, LCLOUD_ANSWER_NO, 4096, "not untorn on plain_direct: nvme0n1 promises 4096 bytes");
	answer(2, LCLOUD_ANSWER_UNTORN, 16384, "untorn");
	assert_true(md_check(&s, 1000, true, capture, &sum));
	assert_string_equal(sum.doublewrite_needed, "yes");
	assert_string_equal(sum.reason, "file-per-table directory (/srv/data): not untorn on plain_direct: nvme0n1 "
					"promises 4096 bytes");
	assert_int_equal(sum.max_untorn_bytes, 0); /* an unknown location proves nothing */
	assert_int_equal(logged[0].severity, MD_LOG_WARNING);
	assert_int_equal(logged[1].severity, MD_LOG_WARNING);
	assert_int_equal(logged[3].severity, MD_LOG_ERROR);
	assert_non_null(strstr(logged[3].text, "refusing to start"));
}

static void test_unknown_refuses_with_doublewrite_off_but_not_on(void **state)
{
	struct md_settings s;
	struct md_summary sum = { 0 };

	settings(&s, false);
	answer(0, LCLOUD_ANSWER_UNKNOWN, 0, "the file system did not answer within 1000 ms");
	answer(1, LCLOUD_ANSWER_UNTORN, 16384, "untorn");
	answer(2, LCLOUD_ANSWER_UNTORN, 16384, "untorn");
	assert_true(md_check(&s, 1000, true, capture, &sum));
	assert_string_equal(sum.doublewrite_needed, "unknown");
	assert_false(md_check(&s, 1000, false, capture, &sum)); /* enforce OFF never refuses */

	settings(&s, true);
	answer(0, LCLOUD_ANSWER_UNKNOWN, 0, "the file system did not answer within 1000 ms");
	answer(1, LCLOUD_ANSWER_UNTORN, 16384, "untorn");
	assert_false(md_check(&s, 1000, true, capture, &sum));
	assert_int_equal(logged[0].severity, MD_LOG_NOTE);
	assert_non_null(strstr(logged[0].text, "could not be told"));
}

static void test_largest_untorn_write_never_claims_a_page_that_can_tear(void **state)
{
	struct md_settings s;
	struct md_summary sum = { 0 };

	settings(&s, true);
	answer(0, LCLOUD_ANSWER_UNTORN, 65536, "untorn");
	answer(1, LCLOUD_ANSWER_NO, 65536, "not untorn: a page across two extents");
	answer(2, LCLOUD_ANSWER_UNTORN, 65536, "untorn");
	md_check(&s, 1000, false, capture, &sum);
	assert_string_equal(sum.doublewrite_needed, "yes");
	assert_int_equal(sum.max_untorn_bytes, 0);

	settings(&s, true);
	answer(0, LCLOUD_ANSWER_UNTORN, 65536, "untorn");
	answer(1, LCLOUD_ANSWER_NO, 4096, "not untorn: the device promises 4096 bytes");
	md_check(&s, 1000, false, capture, &sum);
	assert_int_equal(sum.max_untorn_bytes, 4096);
}

static void test_unread_settings_never_refuse(void **state)
{
	struct md_settings s;
	struct md_summary sum = { 0 };

	settings(&s, false);
	s.read = false;
	snprintf(s.reason, sizeof(s.reason), "InnoDB is not loaded");
	assert_false(md_check(&s, 1000, true, capture, &sum));
	assert_int_equal(asked, 0);
	assert_string_equal(sum.doublewrite_needed, "unknown");
	assert_string_equal(sum.reason, "InnoDB is not loaded");
	assert_int_equal(log_count, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_untorn_with_doublewrite_on_is_a_note_not_needed),
		cmocka_unit_test(test_untorn_with_doublewrite_off_is_a_plain_note),
		cmocka_unit_test(test_no_anywhere_is_yes_and_names_that_location),
		cmocka_unit_test(test_unknown_refuses_with_doublewrite_off_but_not_on),
		cmocka_unit_test(test_largest_untorn_write_never_claims_a_page_that_can_tear),
		cmocka_unit_test(test_unread_settings_never_refuse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
