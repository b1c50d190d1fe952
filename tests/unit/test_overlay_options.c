/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An overlay's layers read from its mountinfo super options
 * (lib/guard/overlay_options.c), as this machine's Linux 6.18 writes them
 * (captured from /proc/self/mountinfo, mountinfo's octal escapes already
 * undone): commas, colons and backslashes in a layer's name escaped with a
 * backslash, several lower layers, data-only layers after "::", relative
 * layer names, and values that are not an overlay's at all.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "overlay_options.h"

static void test_several_lowers_and_an_upper(void **state)
{
	struct overlay_layers l;
	(void)state;

	/* mount -t overlay -o lowerdir=/tmp/gx/ov/l1:/tmp/gx/ov/l2,upperdir=...,workdir=... */
	assert_int_equal(overlay_options_parse("rw,lowerdir=/tmp/gx/ov/l1:/tmp/gx/ov/l2,upperdir=/tmp/gx/ov/u,"
					       "workdir=/tmp/gx/ov/w,uuid=on", &l), 0);
	assert_string_equal(l.upper, "/tmp/gx/ov/u");
	assert_int_equal(l.n_lowers, 2);
	assert_string_equal(l.lowers[0], "/tmp/gx/ov/l1");
	assert_string_equal(l.lowers[1], "/tmp/gx/ov/l2");
	assert_int_equal(l.first_data_only, 2);
	assert_false(l.metacopy || l.redirect || l.userxattr || l.relative);
	overlay_layers_free(&l);
}

static void test_escaped_comma_colon_and_backslash(void **state)
{
	struct overlay_layers l;
	(void)state;

	/* an upper folder named "u p,x:y" (captured: upperdir=/tmp/gx/ov/u\040p\134\054x\134:y) */
	assert_int_equal(overlay_options_parse("rw,lowerdir=/a\\:b:/c\\\\d,upperdir=/tmp/gx/ov/u p\\,x\\:y,"
					       "workdir=/w", &l), 0);
	assert_string_equal(l.upper, "/tmp/gx/ov/u p,x:y");
	assert_int_equal(l.n_lowers, 2);
	assert_string_equal(l.lowers[0], "/a:b");
	assert_string_equal(l.lowers[1], "/c\\d");
	overlay_layers_free(&l);
}

static void test_data_only_layers(void **state)
{
	struct overlay_layers l;
	(void)state;

	/* captured: lowerdir=/tmp/gx/ov/l1::/tmp/gx/ov/d,...,redirect_dir=on,metacopy=on */
	assert_int_equal(overlay_options_parse("rw,lowerdir=/tmp/gx/ov/l1::/tmp/gx/ov/d:/e,upperdir=/u,workdir=/w,"
					       "redirect_dir=on,metacopy=on", &l), 0);
	assert_int_equal(l.n_lowers, 3);
	assert_int_equal(l.first_data_only, 1);
	assert_string_equal(l.lowers[1], "/tmp/gx/ov/d");
	assert_string_equal(l.lowers[2], "/e");
	assert_true(l.metacopy && l.redirect);
	overlay_layers_free(&l);
}

static void test_read_only_relative_and_userxattr(void **state)
{
	struct overlay_layers l;
	(void)state;

	/* no upper layer: a read-only overlay */
	assert_int_equal(overlay_options_parse("ro,lowerdir=/a:/b,userxattr", &l), 0);
	assert_null(l.upper);
	assert_true(l.userxattr);
	assert_false(l.relative);
	overlay_layers_free(&l);
	/* captured after mount -o lowerdir=l,upperdir=u,workdir=w from the overlay's parent folder */
	assert_int_equal(overlay_options_parse("rw,lowerdir=l,upperdir=u,workdir=w", &l), 0);
	assert_true(l.relative);
	overlay_layers_free(&l);
	assert_int_equal(overlay_options_parse("rw,lowerdir=/l,upperdir=u,workdir=/w", &l), 0);
	assert_true(l.relative);
	overlay_layers_free(&l);
}

static void test_malformed_refused(void **state)
{
	static const char *const bad[] = {
		"rw,upperdir=/u,workdir=/w",     /* no lower layer */
		"rw,lowerdir=,upperdir=/u",      /* an empty one */
		"rw,lowerdir=/a:,upperdir=/u",   /* an empty last layer */
		"rw,lowerdir=:/a,upperdir=/u",   /* an empty first layer */
		"rw,lowerdir=/a::,upperdir=/u",  /* "::" with no data layer after it */
		"rw,lowerdir=/a::/b::/c",        /* data-only layers begin twice */
		"rw,lowerdir=/a\\",              /* an escape at the end */
		"rw,upperdir=/u\\",
		"rw,lowerdir=/a,lowerdir=/b",    /* two lowerdir options */
		"",
	};
	struct overlay_layers l;
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = overlay_options_parse(bad[i], &l);

		if (r != -EINVAL)
			fail_msg("\"%s\" gave %d, not -EINVAL", bad[i], r);
	}
}

static void test_layer_limit(void **state)
{
	static char opts[8 * 1024];
	struct overlay_layers l;
	size_t at;
	(void)state;

	at = (size_t)snprintf(opts, sizeof(opts), "rw,lowerdir=/0");
	for (int i = 1; i < 501; i++)
		at += (size_t)snprintf(opts + at, sizeof(opts) - at, ":/%d", i % 10);
	assert_int_equal(overlay_options_parse(opts, &l), -EINVAL); /* 501 lower layers */
	opts[strlen(opts) - 3] = '\0';
	assert_int_equal(overlay_options_parse(opts, &l), 0);
	assert_int_equal(l.n_lowers, 500);
	overlay_layers_free(&l);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_several_lowers_and_an_upper),
		cmocka_unit_test(test_escaped_comma_colon_and_backslash),
		cmocka_unit_test(test_data_only_layers),
		cmocka_unit_test(test_read_only_relative_and_userxattr),
		cmocka_unit_test(test_malformed_refused),
		cmocka_unit_test(test_layer_limit),
	};

	return fixture_main(argc, argv, "overlay_options", tests, sizeof(tests) / sizeof(tests[0]));
}
