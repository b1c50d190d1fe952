/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The SCSI layer through its file transports: sda is QEMU's Google-shaped
 * scsi-hd as the kernel's sysfs copies show it (the unprivileged path), sdb
 * scsi_debug's captured SG_IO answers, sdc..sde pages crafted from SBC-4 by
 * make-crafted.py. Expected values follow the SBC-4 rules, computed here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

static void test_google_pd_through_sysfs_pages(void **state)
{
	struct lcloud_probe *p = fixture_probe("scsi", "/dev/sda");
	const struct lcloud_layer *s = layer_of_kind(p, LCLOUD_LAYER_SCSI), *c = layer_of_kind(p, LCLOUD_LAYER_CLOUD);
	(void)state;

	assert_string_equal(fact_str(s, "transport"), "sysfs");
	assert_string_equal(fact_str(s, "vendor"), "Google");
	assert_string_equal(fact_str(s, "product"), "PersistentDisk");
	/* no SG_IO: READ CAPACITY is not there, and is not invented */
	assert_null(lcloud_layer_find_fact(s, "physical_block_exponent"));
	/* the promise uses the kernel's physical block size instead: 16 KiB */
	assert_non_null(c);
	assert_string_equal(fact_str(c, "provider"), "gcp");
	assert_int_equal(fact_u64(c, "promise_untorn_max_bytes"), 16384);
	lcloud_probe_free(p);
}

static void test_atomic_fields_with_boundary(void **state)
{
	struct lcloud_probe *p = fixture_probe("scsi", "/dev/sdc");
	const struct lcloud_layer *s = layer_of_kind(p, LCLOUD_LAYER_SCSI);
	const uint64_t lb = 512;
	(void)state;

	assert_int_equal(fact_u64(s, "max_atomic_transfer_length"), 64);
	assert_int_equal(fact_u64(s, "max_atomic_transfer_bytes"), 64 * lb);
	assert_int_equal(fact_u64(s, "atomic_alignment_bytes"), 8 * lb);
	assert_int_equal(fact_u64(s, "atomic_granularity_bytes"), 8 * lb);
	assert_int_equal(fact_u64(s, "max_atomic_with_boundary_bytes"), 128 * lb);
	assert_int_equal(fact_u64(s, "max_atomic_boundary_bytes"), 32 * lb);
	assert_int_equal(fact_u64(s, "write_atomic16_usable"), 1);
	/* READ CAPACITY(16): 2^3 logical blocks per physical block */
	assert_int_equal(fact_u64(s, "physical_block_bytes"), lb << 3);
	/* Block Limits Extension: 16 streams, optimal write 64 blocks, granularity 4 x that */
	assert_int_equal(fact_u64(s, "rscs"), 1);
	assert_int_equal(fact_u64(s, "max_streams"), 16);
	assert_int_equal(fact_u64(s, "optimal_stream_write_bytes"), 64 * lb);
	assert_int_equal(fact_u64(s, "stream_granularity_bytes"), 4 * 64 * lb);
	/* IO advice hints: 4 of 64 descriptors valid; streams 1 and 2 permanent, 7 not */
	assert_int_equal(fact_u64(s, "io_advice_hint_groups"), 4);
	assert_int_equal(fact_u64(s, "io_advice_hint_descriptors"), 64);
	assert_int_equal(fact_u64(s, "open_streams"), 3);
	assert_int_equal(fact_u64(s, "permanent_streams"), 2);
	assert_null(layer_of_kind(p, LCLOUD_LAYER_CLOUD));
	lcloud_probe_free(p);
}

static void test_atomic_without_boundary_and_scsi_debug(void **state)
{
	struct lcloud_probe *p = fixture_probe("scsi", "/dev/sdd");
	const struct lcloud_layer *s = layer_of_kind(p, LCLOUD_LAYER_SCSI);
	(void)state;

	assert_int_equal(fact_u64(s, "max_atomic_transfer_bytes"), 4 * 4096);
	assert_int_equal(fact_u64(s, "max_atomic_boundary_bytes"), 0);
	assert_int_equal(fact_u64(s, "max_atomic_with_boundary_bytes"), 0);
	/* 0xb7 is not in the supported list: not asked, not reported */
	assert_null(lcloud_layer_find_fact(s, "max_streams"));
	lcloud_probe_free(p);

	p = fixture_probe("scsi", "/dev/sdb");
	s = layer_of_kind(p, LCLOUD_LAYER_SCSI);
	assert_string_equal(fact_str(s, "product"), "scsi_debug");
	assert_string_equal(fact_str(s, "transport"), "capture");
	assert_int_equal(fact_u64(s, "logical_block_length"), 4096);
	assert_int_equal(fact_u64(s, "physical_block_bytes"), 4096 << 2);
	assert_int_equal(fact_u64(s, "write_atomic16_usable"), 0);
	lcloud_probe_free(p);
}

static void test_lying_short_and_failing_pages(void **state)
{
	struct lcloud_probe *p = fixture_probe("scsi", "/dev/sde");
	const struct lcloud_layer *s = layer_of_kind(p, LCLOUD_LAYER_SCSI);
	(void)state;

	assert_int_equal(notes_with(p, NOTE_SCSI_PAGE_SHORT, "INQUIRY data is 3 bytes"), 1);
	assert_int_equal(notes_with(p, NOTE_SCSI_PAGE_LENGTH, "claims 64 bytes but 20 arrived"), 1);
	assert_int_equal(notes_with(p, NOTE_SCSI_PAGE_LENGTH, "designator"), 1);
	assert_int_equal(notes_with(p, NOTE_SCSI_PAGE_MISMATCH, "got page 0xb2"), 1);
	assert_int_equal(notes_with(p, NOTE_SCSI_COMMAND_REJECTED, "READ CAPACITY(16)"), 1);
	assert_int_equal(notes_with(p, NOTE_SCSI_COMMAND_FAILED, "Input/output error"), 1);
	/* fields inside the 20 bytes are read, the rest unreadable, nothing derived from them */
	assert_int_equal(fact_u64(s, "max_transfer_length"), 0);
	assert_int_equal(lcloud_fact_get_state(lcloud_layer_find_fact(s, "max_atomic_transfer_length")),
			 LCLOUD_FACT_UNREADABLE);
	assert_null(lcloud_layer_find_fact(s, "max_atomic_transfer_bytes"));
	/* the kernel's own layer is still there */
	assert_non_null(lcloud_layer_find_fact(layer_of_kind(p, LCLOUD_LAYER_DISK), "physical_block_size"));
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

	return fixture_main(argc, argv, "scsi", tests, sizeof(tests) / sizeof(tests[0]));
}
