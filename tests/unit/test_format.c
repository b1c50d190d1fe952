/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl's size rendering: exact where it looks exact, marked where
 * approximate; strings this program did not write escaped for a terminal,
 * once, keeping printable UTF-8 under a UTF-8 locale.
 */
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "escape.h"
#include "print.h"

static void check(uint64_t bytes, const char *want)
{
	char buf[64];

	assert_string_equal(format_size(bytes, buf, sizeof(buf)), want);
}

static void test_sizes(void **state)
{
	(void)state;
	check(0, "0 B");
	check(512, "512 B");
	check(4096, "4 KiB");
	check(16384, "16 KiB");
	check(1310720, "1.25 MiB");       /* 1280 KiB */
	check(1049088, "1024.5 KiB");     /* 2049 sectors: must not print as "1 MiB" */
	check(1536 * 1024 * 1024ull, "1.5 GiB");
	check(274877906944ull, "256 GiB");
	check(20480000, "20000 KiB");     /* exact in KiB; 19.53 MiB would round */
	check(1000000007ull, "~953.67 MiB");
}

static void check_short(uint64_t bytes, const char *want)
{
	char buf[64];

	assert_string_equal(format_size_short(bytes, buf, sizeof(buf)), want);
}

/*
 * list's SIZE and byte columns as lsblk prints them (util-linux's
 * size_to_human_string, SIZE_SUFFIX_1LETTER): the unit under which the
 * value is below 1024, one decimal from the thousandths rounded half up,
 * none when it rounds to a whole. Worked out by hand; test_list_lsblk (host)
 * compares with lsblk itself on loop devices.
 */
static void test_sizes_short(void **state)
{
	(void)state;
	check_short(0, "0B");
	check_short(512, "512B");
	check_short(1023, "1023B");
	check_short(4096, "4K");
	check_short(4608, "4.5K");
	check_short(16384, "16K");
	check_short(536870912ull, "512M");
	check_short(1610612736ull, "1.5G");
	check_short(1073664ull, "1M");              /* 1.0239 MiB: thousandths 23, rounds to 0 */
	check_short(2083058688ull, "1.9G");         /* 1.93999 GiB: 939 thousandths round to 9 */
	check_short(2093796557ull, "2G");           /* 1.95 GiB: 950 thousandths round up to a whole */
	check_short(1048063ull, "1023.5K");         /* 1023.499 KiB: 499 thousandths round to 5 */
	check_short(1048575ull, "1024K");           /* 1023.999 KiB: rounds up within the unit */
	check_short(274877906944ull, "256G");
	check_short(UINT64_MAX, "16E");
}

static void test_escape(void **state)
{
	char buf[64], small[8];
	(void)state;

	assert_string_equal(escape_text("Amazon EBS vol-0123", buf, sizeof(buf)), "Amazon EBS vol-0123");
	/* an OSC title sequence and a CSI clear: nothing a terminal would obey is left */
	assert_string_equal(escape_text("\x1b]0;owned\x07x\x1b[2J", buf, sizeof(buf)),
			    "\\x1b]0;owned\\x07x\\x1b[2J");
	/* the backslash is escaped too, so \\x1b in the output is never an ambiguous original */
	assert_string_equal(escape_text("a\\b", buf, sizeof(buf)), "a\\x5cb");
	assert_string_equal(escape_text("\xc3\xa9\x7f\n", buf, sizeof(buf)), "\\xc3\\xa9\\x7f\\x0a");
	/* truncation never leaves half an escape */
	assert_string_equal(escape_text("ab\x1b", small, sizeof(small)), "ab\\x1b");
	assert_string_equal(escape_text("abcd\x1b", small, sizeof(small)), "abcd");
	assert_string_equal(escape_text(NULL, buf, sizeof(buf)), "");
}

/* Under a UTF-8 locale printable characters stay; controls and bytes that are not UTF-8 never do. */
static void test_escape_utf8(void **state)
{
	char buf[64], small[8];
	(void)state;

	if (!setlocale(LC_CTYPE, "C.UTF-8")) {
		skip(); /* the test host has no UTF-8 locale */
		return;
	}
	assert_string_equal(escape_text("caf\xc3\xa9 \xe2\x82\xac", buf, sizeof(buf)), "caf\xc3\xa9 \xe2\x82\xac");
	/* CSI as a C1 control (U+009B), DEL, a lone continuation byte, an overlong '/', a cut sequence */
	assert_string_equal(escape_text("\xc2\x9b" "2J\x7f\x80\xc0\xaf\xe2\x82", buf, sizeof(buf)),
			    "\\xc2\\x9b" "2J\\x7f\\x80\\xc0\\xaf\\xe2\\x82");
	/* never half a character */
	assert_string_equal(escape_text("abcde\xe2\x82\xac", small, sizeof(small)), "abcde");
	setlocale(LC_CTYPE, "C");
	assert_string_equal(escape_text("\xc3\xa9", buf, sizeof(buf)), "\\xc3\\xa9");
}

/* tty_str(): every argument of one printf its own copy, escaped once; tty_json() keeps JSON's backslashes. */
static void test_tty_str(void **state)
{
	const char *s[TTY_STR_SLOTS];
	char want[32];
	(void)state;

	for (int i = 0; i < TTY_STR_SLOTS; i++) {
		snprintf(want, sizeof(want), "%d\x1b", i);
		s[i] = tty_str(want);
	}
	for (int i = 0; i < TTY_STR_SLOTS; i++) {
		snprintf(want, sizeof(want), "%d\\x1b", i);
		assert_string_equal(s[i], want);
	}
	assert_string_equal(tty_strn("ab\ncd", 3), "ab\\x0a");
	assert_string_equal(tty_str("C:\\x1b"), "C:\\x5cx1b");
	assert_string_equal(tty_json("\"a\\u001b\x1b\""), "\"a\\u001b\\x1b\"");
	assert_string_equal(tty_str(NULL), "(null)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_sizes_short),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_escape_utf8),
		cmocka_unit_test(test_tty_str),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
