/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The SCSI layer through its file transports: sda is QEMU's Google-shaped
 * scsi-hd as the kernel's sysfs copies show it (the unprivileged path), sdb
 * scsi_debug's captured SG_IO answers, sdc..sde pages crafted from SBC-4 by
 * make-crafted.py. Expected values follow the SBC-4 rules, computed here.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lcloud/lcloud.h"

static char fixtures[4096];

static struct lcloud_probe *probe(const char *dev)
{
	struct lcloud_ctx *ctx = NULL;
	struct lcloud_probe *p = NULL;
	char root[4200];

	snprintf(root, sizeof(root), "%s/scsi", fixtures);
	assert_int_equal(lcloud_ctx_new(&ctx), 0);
	assert_int_equal(lcloud_ctx_set_sysroot(ctx, root), 0);
	assert_int_equal(lcloud_probe_path(ctx, dev, 0, &p), 0);
	lcloud_ctx_free(ctx);
	return p;
}

static const struct lcloud_layer *kind(const struct lcloud_probe *p, enum lcloud_layer_kind k)
{
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++)
		if (lcloud_layer_get_kind(lcloud_probe_get_layer(p, i)) == k)
			return lcloud_probe_get_layer(p, i);
	return NULL;
}

static uint64_t u64(const struct lcloud_layer *l, const char *name)
{
	const struct lcloud_fact *f = lcloud_layer_find_fact(l, name);

	if (!f)
		fail_msg("no fact %s", name);
	assert_int_equal(lcloud_fact_get_state(f), LCLOUD_FACT_PRESENT);
	return lcloud_fact_get_u64(f);
}

static const char *str(const struct lcloud_layer *l, const char *name)
{
	const char *s = lcloud_fact_get_string(lcloud_layer_find_fact(l, name));

	if (!s)
		fail_msg("no string %s", name);
	return s;
}

static unsigned int notes(const struct lcloud_probe *p, const char *code, const char *needle)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < lcloud_probe_get_note_count(p); i++) {
		const struct lcloud_note *note = lcloud_probe_get_note(p, i);

		if (!strcmp(lcloud_note_get_code(note), code) &&
		    (!needle || strstr(lcloud_note_get_message(note), needle)))
			n++;
	}
	return n;
}

static void test_google_pd_through_sysfs_pages(void **state)
{
	struct lcloud_probe *p = probe("/dev/sda");
	const struct lcloud_layer *s = kind(p, LCLOUD_LAYER_SCSI), *c = kind(p, LCLOUD_LAYER_CLOUD);
	(void)state;

	assert_string_equal(str(s, "transport"), "sysfs");
	assert_string_equal(str(s, "vendor"), "Google");
	assert_string_equal(str(s, "product"), "PersistentDisk");
	/* no SG_IO: READ CAPACITY is not there, and is not invented */
	assert_null(lcloud_layer_find_fact(s, "physical_block_exponent"));
	/* the promise uses the kernel's physical block size instead: 16 KiB */
	assert_non_null(c);
	assert_string_equal(str(c, "provider"), "gcp");
	assert_int_equal(u64(c, "promise_untorn_max_bytes"), 16384);
	lcloud_probe_free(p);
}

static void test_atomic_fields_with_boundary(void **state)
{
	struct lcloud_probe *p = probe("/dev/sdc");
	const struct lcloud_layer *s = kind(p, LCLOUD_LAYER_SCSI);
	const uint64_t lb = 512;
	(void)state;

	assert_int_equal(u64(s, "max_atomic_transfer_length"), 64);
	assert_int_equal(u64(s, "max_atomic_transfer_bytes"), 64 * lb);
	assert_int_equal(u64(s, "atomic_alignment_bytes"), 8 * lb);
	assert_int_equal(u64(s, "atomic_granularity_bytes"), 8 * lb);
	assert_int_equal(u64(s, "max_atomic_with_boundary_bytes"), 128 * lb);
	assert_int_equal(u64(s, "max_atomic_boundary_bytes"), 32 * lb);
	assert_int_equal(u64(s, "write_atomic16_usable"), 1);
	/* READ CAPACITY(16): 2^3 logical blocks per physical block */
	assert_int_equal(u64(s, "physical_block_bytes"), lb << 3);
	/* Block Limits Extension: 16 streams, optimal write 64 blocks, granularity 4 x that */
	assert_int_equal(u64(s, "rscs"), 1);
	assert_int_equal(u64(s, "max_streams"), 16);
	assert_int_equal(u64(s, "optimal_stream_write_bytes"), 64 * lb);
	assert_int_equal(u64(s, "stream_granularity_bytes"), 4 * 64 * lb);
	/* IO advice hints: 4 of 64 descriptors valid; streams 1 and 2 permanent, 7 not */
	assert_int_equal(u64(s, "io_advice_hint_groups"), 4);
	assert_int_equal(u64(s, "io_advice_hint_descriptors"), 64);
	assert_int_equal(u64(s, "open_streams"), 3);
	assert_int_equal(u64(s, "permanent_streams"), 2);
	assert_null(kind(p, LCLOUD_LAYER_CLOUD));
	lcloud_probe_free(p);
}

static void test_atomic_without_boundary_and_scsi_debug(void **state)
{
	struct lcloud_probe *p = probe("/dev/sdd");
	const struct lcloud_layer *s = kind(p, LCLOUD_LAYER_SCSI);
	(void)state;

	assert_int_equal(u64(s, "max_atomic_transfer_bytes"), 4 * 4096);
	assert_int_equal(u64(s, "max_atomic_boundary_bytes"), 0);
	assert_int_equal(u64(s, "max_atomic_with_boundary_bytes"), 0);
	/* 0xb7 is not in the supported list: not asked, not reported */
	assert_null(lcloud_layer_find_fact(s, "max_streams"));
	lcloud_probe_free(p);

	p = probe("/dev/sdb");
	s = kind(p, LCLOUD_LAYER_SCSI);
	assert_string_equal(str(s, "product"), "scsi_debug");
	assert_string_equal(str(s, "transport"), "capture");
	assert_int_equal(u64(s, "logical_block_length"), 4096);
	assert_int_equal(u64(s, "physical_block_bytes"), 4096 << 2);
	assert_int_equal(u64(s, "write_atomic16_usable"), 0);
	lcloud_probe_free(p);
}

static void test_lying_short_and_failing_pages(void **state)
{
	struct lcloud_probe *p = probe("/dev/sde");
	const struct lcloud_layer *s = kind(p, LCLOUD_LAYER_SCSI);
	(void)state;

	assert_int_equal(notes(p, "scsi-page-short", "INQUIRY data is 3 bytes"), 1);
	assert_int_equal(notes(p, "scsi-page-length", "claims 64 bytes but 20 arrived"), 1);
	assert_int_equal(notes(p, "scsi-page-length", "designator"), 1);
	assert_int_equal(notes(p, "scsi-page-mismatch", "got page 0xb2"), 1);
	assert_int_equal(notes(p, "scsi-command-rejected", "READ CAPACITY(16)"), 1);
	assert_int_equal(notes(p, "scsi-command-failed", "Input/output error"), 1);
	/* fields inside the 20 bytes are read, the rest unreadable, nothing derived from them */
	assert_int_equal(u64(s, "max_transfer_length"), 0);
	assert_int_equal(lcloud_fact_get_state(lcloud_layer_find_fact(s, "max_atomic_transfer_length")),
			 LCLOUD_FACT_UNREADABLE);
	assert_null(lcloud_layer_find_fact(s, "max_atomic_transfer_bytes"));
	/* the kernel's own layer is still there */
	assert_non_null(lcloud_layer_find_fact(kind(p, LCLOUD_LAYER_DISK), "physical_block_size"));
	lcloud_probe_free(p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_google_pd_through_sysfs_pages),
		cmocka_unit_test(test_atomic_fields_with_boundary),
		cmocka_unit_test(test_atomic_without_boundary_and_scsi_debug),
		cmocka_unit_test(test_lying_short_and_failing_pages),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
		return 2;
	}
	snprintf(fixtures, sizeof(fixtures), "%s", argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
