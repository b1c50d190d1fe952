/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The verdict over crafted and captured device data, table driven. Each
 * row's expected sizes follow the documented rules, worked out beside it:
 *  - NVMe: power-fail atomic = (NAWUPF+1) LBAs when NSABP, else (AWUPF+1);
 *    no write may cross NABO + k*(NABSPF+1) LBAs.
 *  - RWF_ATOMIC: the kernel's queue limits; on a partition only when its
 *    start is a multiple of max(unit min, boundary); the kernel assumes
 *    boundaries from 0.
 *  - AWS torn write prevention: (NTWPU+1) LBAs, aligned to the write size.
 *  - Google PD: 16 KiB physical block = a write inside one aligned 16 KiB
 *    block is untorn; one that crosses into the next is not.
 *  - buffered: never.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "dm_table.h"
#include "queue.h"
#include "report.h"
#include "verdict.h"

static bool streq_dev(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static bool any_reason(const struct lcloud_verdict *v, const char *needle)
{
	for (unsigned int i = 0; i < lcloud_verdict_get_reason_count(v); i++)
		if (strstr(lcloud_verdict_get_reason(v, i), needle) || strstr(lcloud_verdict_get_reason_evidence(v, i), needle))
			return true;
	return false;
}

struct row {
	const char *tree, *dev, *why;
	uint64_t rwf_atomic, passthrough, plain_direct; /* expected max untorn bytes */
	uint64_t passthrough_boundary, passthrough_boundary_offset;
	const char *plain_direct_reason; /* a text or evidence the plain_direct verdict must carry */
};

static const struct row rows[] = {
	{ "nvme-crafted", "/dev/nvme0n1", "Azure-shaped: NSABP, NAWUPF 3 (4 x 4 KiB), NABSPF 15 (64 KiB) at NABO 4 "
	  "(16 KiB); sysfs unit max 16 KiB; 16 KiB divides the NABO offset, so the kernel's boundary view is safe",
	  16384, 16384, 16384, 65536, 16384, "nvme:id-ns:nawupf" },
	{ "nvme-crafted", "/dev/nvme1n1", "EBS-shaped: 512-byte LBAs, NTWPU 31 -> 32 x 512 = 16 KiB, aligned; the "
	  "standard AWUPF 0 is one LBA; sysfs unit max 512",
	  512, 16384, 16384, 0, 0, "cloud:aws-ebs-twp" },
	{ "nvme-crafted", "/dev/nvme6n1", "NAWUPF 15 (64 KiB) but a 32 KiB boundary at NABO 2 (8 KiB): passthrough "
	  "places each write, so 32 KiB; naturally aligned writes (RWF_ATOMIC, plain) cross the shifted boundary "
	  "above 8 KiB",
	  8192, 32768, 8192, 32768, 8192, "8192 + k * 32768" },
	{ "nvme-crafted", "/dev/nvme7n1p1", "Azure-shaped with a partition at 1 MiB + 4 KiB (1052672): the kernel "
	  "needs a multiple of max(4096, 65536) for RWF_ATOMIC; 1052672 is 4096 past a 64 KiB boundary",
	  0, 16384, 4096, 65536, 65536 - 4096, "1052672" },
	{ "nvme-crafted", "/dev/nvme7n1p2", "the same disk, partition at 2 MiB: aligned to everything",
	  16384, 16384, 16384, 65536, 0, "nvme:id-ns:nawupf" },
	{ "nvme-crafted", "/dev/nvme1n1p1", "EBS-shaped disk, partition at sector 63 (32256 bytes, a multiple of "
	  "only 512): the AWS promise needs the write aligned to its size on the device, which no 4 KiB write "
	  "aligned in this partition is; the device's own promise, one 512-byte LBA (AWUPF 0), still holds",
	  512, 512, 512, 0, 0, "32256" },
	{ "nvme-qemu", "/dev/nvme0n1", "QEMU 7.2, 4 KiB LBAs: AWUPF 0 -> one LBA (4 KiB)",
	  4096, 4096, 4096, 0, 0, "nvme:id-ctrl:awupf" },
	{ "scsi", "/dev/sda", "Google PD, 16 KiB physical block: 16 KiB plain direct; no NVMe for passthrough; "
	  "the kernel's atomic limits are 0",
	  0, 0, 16384, 0, 0, "cloud:gcp-pd-16k" },
	{ "stacks", "/dev/md0", "raid1 over two Azure-shaped namespaces (16 KiB, 64 KiB boundaries from 0), member "
	  "data at 1 MiB and at 1 MiB + 4 KiB (md/dev-*/offset 2048 and 2056 sectors): on the second, aligned "
	  "writes above 4 KiB can cross a 64 KiB boundary; md has no passthrough",
	  16384, 0, 4096, 0, 0, "1052672" },
	{ "stacks", "/dev/md1", "raid5 over the same kind of namespaces: parity RAID's write hole, no promise",
	  16384, 0, 0, 0, 0, "raid5" },
	{ "old-kernel", "/dev/vda", "a kernel without atomic write limits, a disk that promises nothing",
	  0, 0, 0, 0, 0, "promises no untorn writes" },
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *row = &rows[i];
		struct lcloud_probe *p = fixture_probe(row->tree, row->dev);
		const struct lcloud_verdict *ra = lcloud_probe_get_verdict(p, LCLOUD_PATH_RWF_ATOMIC);
		const struct lcloud_verdict *pt = lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH);
		const struct lcloud_verdict *pd = lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT);
		const struct lcloud_verdict *bu = lcloud_probe_get_verdict(p, LCLOUD_PATH_BUFFERED);

		print_message("%s %s: %s\n", row->tree, row->dev, row->why);
		assert_int_equal(lcloud_verdict_get_max_untorn_bytes(ra), row->rwf_atomic);
		assert_int_equal(lcloud_verdict_get_max_untorn_bytes(pt), row->passthrough);
		assert_int_equal(lcloud_verdict_get_max_untorn_bytes(pd), row->plain_direct);
		assert_int_equal(lcloud_verdict_get_max_untorn_bytes(bu), 0);
		if (row->passthrough) {
			assert_int_equal(lcloud_verdict_get_boundary(pt), row->passthrough_boundary);
			assert_int_equal(lcloud_verdict_get_boundary_offset(pt), row->passthrough_boundary_offset);
		}
		assert_true(any_reason(pd, row->plain_direct_reason));
		/* every verdict says why */
		assert_true(lcloud_verdict_get_reason_count(ra) > 0 && lcloud_verdict_get_reason_count(pt) > 0 &&
			    lcloud_verdict_get_reason_count(pd) > 0 && lcloud_verdict_get_reason_count(bu) > 0);
		lcloud_probe_free(p);
	}
}

/* lv-data on nvme4n1: segment 0 at sector 0, segment 1 (dm sectors 2048-4095) at sector 8200 */
static int two_segment_table(const struct lcloud_ctx *ctx, unsigned int major, unsigned int minor,
			     struct dm_target_line *t, int max)
{
	(void)ctx;
	if (major != 252 || minor != 0 || max < 2)
		return -ENXIO;
	memset(t, 0, 2 * sizeof(*t));
	t[0] = (struct dm_target_line){ .start = 0, .length = 2048, .type = "linear", .params = "259:4 0" };
	t[1] = (struct dm_target_line){ .start = 2048, .length = 2048, .type = "linear", .params = "259:4 8200" };
	return 2;
}

/* A segment whose offsets do not fit in 64-bit byte counts (dm start 2^61 sectors): bad data, not a shift. */
static int absurd_segment_table(const struct lcloud_ctx *ctx, unsigned int major, unsigned int minor,
				struct dm_target_line *t, int max)
{
	(void)ctx;
	if (major != 252 || minor != 0 || max < 2)
		return -ENXIO;
	memset(t, 0, 2 * sizeof(*t));
	t[0] = (struct dm_target_line){ .start = 0, .length = 2048, .type = "linear", .params = "259:4 0" };
	t[1] = (struct dm_target_line){ .start = 1ull << 61, .length = 2048, .type = "linear", .params = "259:4 0" };
	return 2;
}

static void test_dm_segment_out_of_range_is_unknown(void **state)
{
	struct lcloud_probe *p;
	const struct lcloud_verdict *pd;
	(void)state;

	dm_table_set_reader(absurd_segment_table);
	p = fixture_probe("stacks", "/dev/dm-0");
	dm_table_set_reader(NULL);
	pd = lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT);
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(pd), 0);
	assert_true(any_reason(pd, "more than 1 EiB"));
	assert_non_null(lcloud_verdict_get_unknown_reason(pd));
	lcloud_probe_free(p);
}

static void test_dm_segments_each_checked(void **state)
{
	struct lcloud_probe *p;
	const struct lcloud_verdict *pd;
	(void)state;

	dm_table_set_reader(two_segment_table);
	p = fixture_probe("stacks", "/dev/dm-0");
	dm_table_set_reader(NULL);
	pd = lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT);
	/* segment 1 shifts writes by (8200 - 2048) * 512 = 3149824 bytes, 4096 past a 64 KiB boundary:
	 * only writes up to 4 KiB stay inside one, though segment 0 alone would allow 16 KiB */
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(pd), 4096);
	assert_true(any_reason(pd, "3149824"));
	{
		/* the table is typed on the layer, and its public facts are rendered from it as the kernel's lines */
		const struct lcloud_layer *dm = layer_of_kind(p, LCLOUD_LAYER_DM);

		assert_int_equal(dm->n_dm_segments, 2);
		assert_true(dm->dm_segments[1].linear);
		assert_int_equal(dm->dm_segments[1].major, 259);
		assert_int_equal(dm->dm_segments[1].minor, 4);
		assert_int_equal(dm->dm_segments[1].offset, 8200);
		assert_string_equal(fact_str(dm, "dm_target_0"), "0 2048 linear 259:4 0");
		assert_string_equal(fact_str(dm, "dm_target_1"), "2048 2048 linear 259:4 8200");
	}
	lcloud_probe_free(p);

	/* without the table (no root): placement unknown, no promise */
	p = fixture_probe("stacks", "/dev/dm-0");
	pd = lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT);
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(pd), 0);
	assert_true(any_reason(pd, "device-mapper table could not be read"));
	lcloud_probe_free(p);
}

static void test_boundary_crossing_refused(void **state)
{
	struct lcloud_probe *p = fixture_probe("nvme-crafted", "/dev/nvme6n1");
	const struct lcloud_verdict *pt = lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH);
	char why[256];
	(void)state;

	/* boundaries at 8 KiB + k * 32 KiB: [8K, 40K) is one atomic region */
	assert_int_equal(lcloud_verdict_allows(pt, 8192, 32768, why, sizeof(why)), 1);
	assert_int_equal(lcloud_verdict_allows(pt, 24576, 16384, why, sizeof(why)), 1);
	assert_int_equal(lcloud_verdict_allows(pt, 0, 16384, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "crosses the device's atomic boundary at 8192"));
	assert_int_equal(lcloud_verdict_allows(pt, 32768, 16384, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "at 40960"));
	/* beyond the power-fail size (and the boundary): refused */
	assert_int_equal(lcloud_verdict_allows(pt, 8192, 65536, why, sizeof(why)), 0);
	/* LBA alignment on passthrough */
	assert_int_equal(lcloud_verdict_allows(pt, 8192 + 512, 4096, why, sizeof(why)), 0);
	assert_int_equal(lcloud_verdict_allows(pt, 8192, 0, why, sizeof(why)), 0);
	/* "is an aligned 32 KiB write untorn?": aligned writes sit on the 32 KiB grid from 0, which the
	 * boundaries at 8 KiB + k * 32 KiB cut; 8 KiB writes fit */
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PASSTHROUGH, 32768, NULL, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "cross the device's 32768-byte atomic boundaries"));
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PASSTHROUGH, 8192, NULL, why, sizeof(why)), 1);
	lcloud_probe_free(p);
}

/*
 * Google's promise covers a write inside one 16 KiB-aligned physical block of
 * the disk. Worked out by hand: sda1 starts at sector 20488 = byte 10489856
 * = 640 * 16384 + 4096, so a write aligned in sda1 to 4 KiB sits inside one
 * physical block, and one aligned to 16 KiB straddles two; the same for a dm
 * segment shifted by 8 sectors (4096 bytes). The whole disk keeps both.
 */
static int shifted_gpd_table(const struct lcloud_ctx *ctx, unsigned int major, unsigned int minor,
			     struct dm_target_line *t, int max)
{
	(void)ctx;
	if (major != 252 || minor != 0 || max < 1)
		return -ENXIO;
	memset(t, 0, sizeof(*t));
	t[0] = (struct dm_target_line){ .start = 0, .length = 1048576, .type = "linear", .params = "8:0 8" };
	return 1;
}

static void check_gpd_rule(struct lcloud_probe *p, int yes_4k, int yes_16k)
{
	char why[512];

	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 4096, NULL, why, sizeof(why)), yes_4k);
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 16384, NULL, why, sizeof(why)), yes_16k);
	if (!yes_16k) /* the reason names the size that holds, and says it does */
		assert_non_null(strstr(why, "more than the largest untorn write, 4096 bytes"));
}

static void test_gpd_rule_same_on_disk_partition_and_dm(void **state)
{
	struct lcloud_probe *p;
	const struct lcloud_verdict *pd;
	char why[256];
	(void)state;

	p = fixture_probe("scsi", "/dev/sda");
	check_gpd_rule(p, LCLOUD_ANSWER_UNTORN, LCLOUD_ANSWER_UNTORN);
	pd = lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT);
	/* inside one physical block at any logical-block offset; across two never */
	assert_int_equal(lcloud_verdict_allows(pd, 4096 + 512, 2048, why, sizeof(why)), 1);
	assert_int_equal(lcloud_verdict_allows(pd, 12288, 8192, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "crosses the device's atomic boundary at 16384"));
	lcloud_probe_free(p);

	p = fixture_probe("scsi", "/dev/sda1");
	check_gpd_rule(p, LCLOUD_ANSWER_UNTORN, LCLOUD_ANSWER_NO);
	pd = lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT);
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(pd), 4096);
	assert_true(any_reason(pd, "10489856"));
	lcloud_probe_free(p);

	dm_table_set_reader(shifted_gpd_table);
	p = fixture_probe("scsi", "/dev/dm-0");
	dm_table_set_reader(NULL);
	check_gpd_rule(p, LCLOUD_ANSWER_UNTORN, LCLOUD_ANSWER_NO);
	assert_true(any_reason(lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT), "4096"));
	lcloud_probe_free(p);

	/* a partition whose start is missing from the capture: where its writes land is unknown */
	p = fixture_probe("scsi", "/dev/sda2");
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 16384, NULL, why, sizeof(why)),
			 LCLOUD_ANSWER_UNKNOWN);
	assert_non_null(strstr(why, "where the partition starts could not be read"));
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_BEST, 4096, NULL, why, sizeof(why)), LCLOUD_ANSWER_UNKNOWN);
	/* the disk has no atomic writes and is no NVMe namespace: those answers need no start */
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_RWF_ATOMIC, 4096, NULL, why, sizeof(why)), LCLOUD_ANSWER_NO);
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PASSTHROUGH, 4096, NULL, why, sizeof(why)), LCLOUD_ANSWER_NO);
	lcloud_probe_free(p);

	/* without the table (no root) where writes land is unknown: neither yes nor no */
	p = fixture_probe("scsi", "/dev/dm-0");
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 4096, NULL, why, sizeof(why)),
			 LCLOUD_ANSWER_UNKNOWN);
	assert_non_null(strstr(why, "run as root"));
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_BEST, 4096, NULL, why, sizeof(why)), LCLOUD_ANSWER_UNKNOWN);
	assert_non_null(lcloud_verdict_get_unknown_reason(lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT)));
	lcloud_probe_free(p);
}

/*
 * The block layer's split rules, one disk each (Google PD clones: 16 KiB
 * promised), with 4 KiB memory pages and buffers the kernel accepts at any
 * 512-byte boundary (dma_alignment 511), so a write may touch one page more
 * than it fills: sdf 2 segments -> 4 KiB (two pages); sdg 4 segments of
 * 2 KiB, two per page -> 4 KiB; sdh a 64 KiB virt boundary, split at every
 * page gap -> 512 bytes (no page crossed); sdi max_sectors_kb 8 -> 8 KiB; sdj
 * without max_segments, sdk without max_sectors_kb, sdl without
 * chunk_sectors -> one page proved, above it unknown; sdm is sdf with
 * buffers that must be page-aligned (dma_alignment 4095) -> 8 KiB.
 */
static void test_block_layer_split_rules(void **state)
{
	static const struct {
		const char *dev;
		uint64_t max;
		const char *evidence;
	} splits[] = {
		{ "/dev/sdf", 4096, "sysfs:queue/max_segments" },
		{ "/dev/sdg", 4096, "sysfs:queue/max_segments" },
		{ "/dev/sdh", 512, "sysfs:queue/virt_boundary_mask" },
		{ "/dev/sdi", 8192, "sysfs:queue/max_sectors_kb" },
		{ "/dev/sdj", 4096, "sysfs:queue/max_segments" },
		{ "/dev/sdk", 4096, "sysfs:queue/max_sectors_kb" },
		{ "/dev/sdl", 4096, "sysfs:queue/chunk_sectors" },
		{ "/dev/sdm", 8192, "sysfs:queue/max_segments" },
	};
	char why[512];
	(void)state;

	assert_int_equal(sysconf(_SC_PAGESIZE), 4096);
	for (size_t i = 0; i < sizeof(splits) / sizeof(splits[0]); i++) {
		struct lcloud_probe *p = fixture_probe("scsi", splits[i].dev);
		const struct lcloud_verdict *pd = lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT);
		const struct lcloud_layer *disk = layer_of_kind(p, LCLOUD_LAYER_DISK);

		print_message("%s: %llu\n", splits[i].dev, (unsigned long long)lcloud_verdict_get_max_untorn_bytes(pd));
		assert_int_equal(lcloud_verdict_get_max_untorn_bytes(pd), splits[i].max);
		assert_true(any_reason(pd, splits[i].evidence));
		/* the limits the verdict used are facts of the disk */
		assert_non_null(lcloud_layer_find_fact(disk, "max_segment_size"));
		assert_non_null(lcloud_layer_find_fact(disk, "virt_boundary_mask"));
		assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 16384, NULL, why, sizeof(why)),
				 streq_dev(splits[i].dev, "/dev/sdj") || streq_dev(splits[i].dev, "/dev/sdk") ||
				 streq_dev(splits[i].dev, "/dev/sdl") ? LCLOUD_ANSWER_UNKNOWN : LCLOUD_ANSWER_NO);
		assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, splits[i].max, NULL, why, sizeof(why)),
				 LCLOUD_ANSWER_UNTORN);
		lcloud_probe_free(p);
	}
}

/*
 * What could not be read must not hide what was: sdn lacks queue/max_segments
 * (so sizes above one page rest on it) but says max_sectors_kb 8, which the
 * block layer splits at whatever else holds. 8 KiB is unknown, 16 KiB is no.
 */
static void test_unknown_never_hides_a_no(void **state)
{
	struct lcloud_probe *p = fixture_probe("scsi", "/dev/sdn");
	char why[512];
	(void)state;

	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 4096, NULL, why, sizeof(why)),
			 LCLOUD_ANSWER_UNTORN);
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 8192, NULL, why, sizeof(why)),
			 LCLOUD_ANSWER_UNKNOWN);
	assert_non_null(strstr(why, "max_segments"));
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 16384, NULL, why, sizeof(why)),
			 LCLOUD_ANSWER_NO);
	lcloud_probe_free(p);
}

/*
 * The block layer merges neighbouring writes in flight into one command of
 * up to max_sectors_kb unless queue/nomerges is 2; a command above the
 * device's promise, or across a boundary, is untorn per logical block only,
 * and under Google's promise per physical block each whole 16 KiB block it
 * carries stays whole. sdo: a Google PD clone with merges on and
 * max_sectors_kb 1280: 512-byte writes and whole 16 KiB blocks, nothing
 * between, with the remedy named; sdp: merges on and max_sectors_kb 16:
 * merged commands of 16 KiB can still cross a physical block, so again 512
 * bytes and 16 KiB (a write of max_sectors_kb itself is never merged);
 * sda (nomerges 2): every size up to 16 KiB, saying that it rests on the
 * setting.
 */
static void test_merges_beyond_the_promise(void **state)
{
	static const struct {
		const char *dev;
		uint64_t max, gap_above;
		const char *text; /* what the nomerges reason must say, NULL for none */
	} merges[] = {
		{ "/dev/sdo", 16384, 512, "echo 2 > /sys/block/sdo/queue/nomerges" },
		{ "/dev/sdp", 16384, 512, "either side of one of the device's 16384-byte atomic boundaries" },
		{ "/dev/sda", 16384, 0, "rests on that setting" },
	};
	char why[512];
	(void)state;

	for (size_t i = 0; i < sizeof(merges) / sizeof(merges[0]); i++) {
		struct lcloud_probe *p = fixture_probe("scsi", merges[i].dev);
		const struct lcloud_verdict *pd = lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT);
		const struct lcloud_layer *disk = layer_of_kind(p, LCLOUD_LAYER_DISK);
		uint64_t above = 0, below = 0;

		print_message("%s: %llu\n", merges[i].dev, (unsigned long long)lcloud_verdict_get_max_untorn_bytes(pd));
		assert_non_null(lcloud_layer_find_fact(disk, "nomerges"));
		assert_int_equal(lcloud_verdict_get_max_untorn_bytes(pd), merges[i].max);
		assert_int_equal(any_reason(pd, "sysfs:queue/nomerges"), merges[i].text != NULL);
		if (merges[i].text)
			assert_true(any_reason(pd, merges[i].text));
		assert_int_equal(lcloud_verdict_get_merge_gap(pd, &above, &below), merges[i].gap_above != 0);
		if (merges[i].gap_above) {
			assert_int_equal(above, merges[i].gap_above);
			assert_int_equal(below, 16384);
			/* a whole 16 KiB block, and one logical block, are untorn; the sizes between are not */
			assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 16384, NULL, NULL, 0),
					 LCLOUD_ANSWER_UNTORN);
			assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 512, NULL, NULL, 0),
					 LCLOUD_ANSWER_UNTORN);
			assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 8192, NULL, why, sizeof(why)),
					 LCLOUD_ANSWER_NO);
			assert_non_null(strstr(why, "nomerges"));
			assert_non_null(strstr(why, "merge such a write with a neighbour"));
		}
		lcloud_probe_free(p);
	}
}

static void test_check_answers_and_errors(void **state)
{
	struct lcloud_probe *p = fixture_probe("nvme-crafted", "/dev/nvme0n1");
	enum lcloud_io_path path = LCLOUD_PATH_BUFFERED;
	char why[512];
	(void)state;

	/* best path: the kernel's guarantee first */
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_BEST, 16384, &path, why, sizeof(why)), 1);
	assert_int_equal(path, LCLOUD_PATH_RWF_ATOMIC);
	assert_non_null(strstr(why, "untorn on rwf_atomic"));
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_BEST, 32768, &path, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "16384"));
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_BUFFERED, 4096, NULL, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "page cache"));
	/* below RWF_ATOMIC's unit minimum */
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_RWF_ATOMIC, 2048, NULL, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "below the smallest"));
	/* bad sizes: 0, not a power of two, larger than the 1 GiB namespace */
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_BEST, 0, NULL, NULL, 0), -EINVAL);
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_BEST, 12288, NULL, NULL, 0), -EINVAL);
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_BEST, 1ull << 31, NULL, NULL, 0), -ERANGE);
	assert_int_equal(lcloud_probe_check(p, (enum lcloud_io_path)9, 4096, NULL, NULL, 0), -EINVAL);
	{
		enum lcloud_io_path x;

		assert_int_equal(lcloud_io_path_from_string("plain_direct", &x), 0);
		assert_int_equal(x, LCLOUD_PATH_PLAIN_DIRECT);
		assert_int_equal(lcloud_io_path_from_string("atomic", &x), -EINVAL);
		assert_string_equal(lcloud_io_path_to_string(LCLOUD_PATH_PASSTHROUGH), "passthrough");
	}
	assert_null(lcloud_probe_get_verdict(p, LCLOUD_PATH_BEST));
	lcloud_probe_free(p);
}

/*
 * nvme9n1 interleaves 8 metadata bytes with every 4 KiB block (FLBAS bit 4)
 * and Linux left its block device at capacity 0: every path is 0 for that
 * reason, and a size check answers "no" with it, not "larger than the
 * device". nvme10n1 has the same format with a capacity (a transport that
 * carries the metadata): its paths are read as for any namespace.
 */
static void test_extended_lba_namespace(void **state)
{
	static const enum lcloud_io_path paths[] = { LCLOUD_PATH_RWF_ATOMIC, LCLOUD_PATH_PASSTHROUGH,
						     LCLOUD_PATH_PLAIN_DIRECT, LCLOUD_PATH_BUFFERED };
	struct lcloud_probe *p = fixture_probe("nvme-crafted", "/dev/nvme9n1");
	const struct lcloud_layer *nvme = NULL;
	enum lcloud_io_path path = LCLOUD_PATH_BEST;
	char why[1024];
	(void)state;

	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++)
		if (lcloud_layer_get_kind(lcloud_probe_get_layer(p, i)) == LCLOUD_LAYER_NVME)
			nvme = lcloud_probe_get_layer(p, i);
	assert_non_null(nvme);
	/* the facts the rule rests on, as the NVMe layer decodes them */
	assert_int_equal(fact_u64(nvme, "flbas") & 0x10, 0x10);
	assert_int_equal(fact_u64(nvme, "lba_metadata_size"), 8);
	assert_int_equal(fact_u64(nvme, "atomic_write_power_fail_bytes"), 16384);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		const struct lcloud_verdict *v = lcloud_probe_get_verdict(p, paths[i]);

		assert_int_equal(lcloud_verdict_get_max_untorn_bytes(v), 0);
		assert_true(any_reason(v, "extended LBA format"));
		assert_true(any_reason(v, "nvme:id-ns:flbas"));
		assert_int_equal(lcloud_probe_check(p, paths[i], 16384, NULL, why, sizeof(why)), 0);
		assert_non_null(strstr(why, "capacity 0"));
	}
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_BEST, 16384, &path, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "Linux refuses block I/O on nvme9n1 (capacity 0)"));
	assert_non_null(strstr(why, "interleaves 8 metadata bytes with every 4096-byte block"));
	assert_non_null(strstr(why, "passthrough would need the metadata inside every buffer"));
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PASSTHROUGH, 16384, NULL, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "a passthrough write to nvme9n1 would need the metadata inside every buffer"));
	lcloud_probe_free(p);

	/* the same format where the block device has its capacity: no passthrough, the kernel's limits */
	p = fixture_probe("nvme-crafted", "/dev/nvme10n1");
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_RWF_ATOMIC)),
			 16384);
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH)), 0);
	assert_true(any_reason(lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH), "carries metadata"));
	assert_false(any_reason(lcloud_probe_get_verdict(p, LCLOUD_PATH_RWF_ATOMIC), "extended LBA format"));
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_BEST, 1ull << 31, NULL, NULL, 0), -ERANGE);
	lcloud_probe_free(p);
}

/*
 * A captured tree without an NVMe namespace's Identify data (md-nvme): the
 * device's power-fail atomic size was not read, which is unknown, not "no";
 * and the namespace is still an NVMe namespace for passthrough.
 */
static void test_uncaptured_identify_is_unknown(void **state)
{
	struct lcloud_probe *p = fixture_probe("md-nvme", "/dev/nvme0n1");
	char why[512];
	(void)state;

	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 16384, NULL, why, sizeof(why)),
			 LCLOUD_ANSWER_UNKNOWN);
	assert_non_null(strstr(why, "captured tree has none"));
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PASSTHROUGH, 16384, NULL, why, sizeof(why)),
			 LCLOUD_ANSWER_UNKNOWN);
	assert_null(strstr(why, "not an NVMe namespace"));
	/* RWF_ATOMIC rests on the kernel's queue limits, which were captured */
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_RWF_ATOMIC, 16384, NULL, why, sizeof(why)),
			 LCLOUD_ANSWER_UNTORN);
	lcloud_probe_free(p);
}

/*
 * A regular file on FSTYPE with BLOCK-byte blocks over fixture TREE's DEV,
 * as the probe of a file builds it; its file system layer in *FS.
 */
static struct lcloud_probe *file_probe(const char *tree, const char *dev, const char *fstype, uint64_t block,
				       struct lcloud_layer **fs)
{
	struct lcloud_probe *p = fixture_probe(tree, dev);
	int index = report_add_layer(p, LCLOUD_LAYER_FILESYSTEM, fstype, -1);

	assert_true(index >= 0);
	*fs = report_layer(p, index);
	p->target_type = LCLOUD_TARGET_REGULAR;
	assert_int_equal(layer_add_string(*fs, FACT_FSTYPE, fstype, "mountinfo"), 0);
	assert_int_equal(layer_add_u64(*fs, FACT_BLOCK_SIZE, block, "statfs:f_bsize"), 0);
	return p;
}

/*
 * A file's plain_direct verdict rests on the stack below its file system
 * holding its data, and on knowing how the file system places it. Over the
 * same disk (QEMU, 4 KiB LBAs, one LBA promised), a file system layer is
 * put on top: XFS and single-device btrfs keep the disk's 4 KiB; btrfs over
 * two devices is no (the stack shows one of them); btrfs whose devices were
 * not read, a file system liblcloud does not follow (vfat), an XFS file
 * whose realtime flag was not read and a realtime file whose realtime
 * device is unknown are unknown.
 */
static void test_file_system_placement(void **state)
{
	static const struct {
		const char *fstype, *fact;
		enum lcloud_fact_state state; /* of FACT */
		uint64_t value;
		enum lcloud_answer answer;
		const char *why;
	} stacks[] = {
		{ "xfs", NULL, 0, 0, LCLOUD_ANSWER_UNTORN, "promises" },
		{ "btrfs", "btrfs_devices", LCLOUD_FACT_PRESENT, 1, LCLOUD_ANSWER_UNTORN, "promises" },
		{ "btrfs", "btrfs_devices", LCLOUD_FACT_PRESENT, 2, LCLOUD_ANSWER_NO, "spans 2 devices" },
		{ "btrfs", "btrfs_devices", LCLOUD_FACT_UNREADABLE, 0, LCLOUD_ANSWER_UNKNOWN, "several devices" },
		{ "btrfs", NULL, 0, 0, LCLOUD_ANSWER_UNKNOWN, "was not read" },
		{ "vfat", NULL, 0, 0, LCLOUD_ANSWER_UNKNOWN, "does not know how vfat" },
		{ "xfs", "realtime", LCLOUD_FACT_NEEDS_ROOT, 0, LCLOUD_ANSWER_UNKNOWN, "flags unread" },
		{ "xfs", "realtime_device", LCLOUD_FACT_UNREADABLE, 0, LCLOUD_ANSWER_UNKNOWN, "realtime file" },
	};
	char why[512];
	(void)state;

	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		struct lcloud_layer *fs;
		struct lcloud_probe *p = file_probe("nvme-qemu", "/dev/nvme0n1", stacks[i].fstype, 4096, &fs);

		if (stacks[i].fact && streq_dev(stacks[i].fact, "realtime_device"))
			assert_int_equal(layer_add_bool(fs, FACT_REALTIME, 1, "ioctl:FS_IOC_FSGETXATTR"), 0);
		if (stacks[i].fact && stacks[i].state == LCLOUD_FACT_PRESENT)
			assert_int_equal(layer_add_u64(fs, fact_lookup(stacks[i].fact), stacks[i].value, "test"), 0);
		else if (stacks[i].fact)
			assert_int_equal(layer_add_missing(fs, fact_lookup(stacks[i].fact), stacks[i].state, "test",
							   stacks[i].why), 0);
		assert_int_equal(verdict_compute(p), 0);
		print_message("%s %s: %s\n", stacks[i].fstype, stacks[i].fact ? stacks[i].fact : "",
			      lcloud_verdict_get_reason(lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT), 0));
		assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 4096, NULL, why, sizeof(why)),
				 stacks[i].answer);
		assert_non_null(strstr(why, stacks[i].why));
		lcloud_probe_free(p);
	}
}

/*
 * ext4 with data=journal (and a data-journalled file, inline data,
 * encryption without inline crypto) takes no direct I/O: statx says so with
 * stx_dio_offset_align 0, still reports atomic limits, and Linux 7.3 still
 * accepts RWF_ATOMIC there, writing it through the page cache; its journal
 * logs a 16 KiB write as four 4 KiB blocks. Over a disk that promises 4 KiB,
 * such a file gets nothing on plain_direct or rwf_atomic; with an offset
 * alignment of 4096 the same file gets both.
 */
static void test_file_without_direct_io(void **state)
{
	char why[512];
	(void)state;

	for (uint64_t dio_align = 0; dio_align <= 4096; dio_align += 4096) {
		struct lcloud_layer *fs;
		struct lcloud_probe *p = file_probe("nvme-qemu", "/dev/nvme0n1", "ext4", 4096, &fs);
		enum lcloud_answer want = dio_align ? LCLOUD_ANSWER_UNTORN : LCLOUD_ANSWER_NO;

		assert_int_equal(layer_add_u64(fs, FACT_CLUSTER_SIZE, 4096, "test"), 0);
		assert_int_equal(layer_add_u64(fs, FACT_STX_DIO_OFFSET_ALIGN, dio_align, "statx"), 0);
		assert_int_equal(layer_add_u64(fs, FACT_STX_ATOMIC_WRITE_UNIT_MIN, 4096, "statx"), 0);
		assert_int_equal(layer_add_u64(fs, FACT_STX_ATOMIC_WRITE_UNIT_MAX, 4096, "statx"), 0);
		assert_int_equal(layer_add_bool(fs, FACT_STX_ATTR_WRITE_ATOMIC, 1, "statx"), 0);
		assert_int_equal(verdict_compute(p), 0);
		print_message("stx_dio_offset_align %llu\n", (unsigned long long)dio_align);
		assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 4096, NULL, why, sizeof(why)), want);
		assert_true(!!strstr(why, "no direct I/O") == !dio_align);
		assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_RWF_ATOMIC, 4096, NULL, why, sizeof(why)), want);
		assert_true(!!strstr(why, "no direct I/O") == !dio_align);
		lcloud_probe_free(p);
	}
}

/*
 * XFS takes O_DIRECT writes to a file that shares (or shared) blocks only in
 * units of its allocation unit, stx_dio_offset_align; a smaller one goes
 * through the page cache, and writeback carried two 8 KiB writes into
 * neighbouring 16 KiB blocks to the device in one 32 KiB command. Over the
 * Azure-shaped namespace (16 KiB promised) with 16 KiB blocks: 16 KiB
 * untorn either way; 8 KiB only where the alignment is the 4 KiB LBA.
 */
static void test_direct_io_alignment_floor(void **state)
{
	char why[512];
	(void)state;

	for (uint64_t dio_align = 4096; dio_align <= 16384; dio_align *= 4) {
		struct lcloud_layer *fs;
		struct lcloud_probe *p = file_probe("nvme-crafted", "/dev/nvme0n1", "xfs", 16384, &fs);

		assert_int_equal(layer_add_u64(fs, FACT_STX_DIO_OFFSET_ALIGN, dio_align, "statx"), 0);
		assert_int_equal(verdict_compute(p), 0);
		print_message("stx_dio_offset_align %llu\n", (unsigned long long)dio_align);
		assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 16384, NULL, why, sizeof(why)),
				 LCLOUD_ANSWER_UNTORN);
		assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 8192, NULL, why, sizeof(why)),
				 dio_align == 4096 ? LCLOUD_ANSWER_UNTORN : LCLOUD_ANSWER_NO);
		if (dio_align > 4096)
			assert_non_null(strstr(why, "stx_dio_offset_align"));
		/* what limits 32 KiB is still the device's promise, not the alignment */
		assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 32768, NULL, why, sizeof(why)),
				 LCLOUD_ANSWER_NO);
		assert_null(strstr(why, "stx_dio_offset_align"));
		lcloud_probe_free(p);
	}
}

/*
 * Direct I/O maps a write one extent at a time: a page across an edge
 * between two of a file's extents (or an extent and a hole) reaches the
 * device in two writes; ext4 bigalloc maps files in blocks inside its
 * clusters, so a cluster with one block written took a 16 KiB write as
 * 4 KiB and 12 KiB. Over the Azure-shaped namespace (16 KiB) with 16 KiB
 * clusters of 4 KiB blocks: the file's verdict is at most its worst edge's
 * alignment (naming the byte); with every edge on 64 KiB, 16 KiB stands and
 * the reason says what that rests on; an unread extent map leaves one block,
 * and above it unknown.
 */
static void test_file_extent_edges(void **state)
{
	static const struct {
		enum lcloud_fact_state state;
		uint64_t alignment, worst;
		uint64_t max;
		enum lcloud_answer at16k;
		const char *why; /* in the 16 KiB answer */
	} maps[] = {
		{ LCLOUD_FACT_PRESENT, 65536, 65536, 16384, LCLOUD_ANSWER_UNTORN, "promises" },
		{ LCLOUD_FACT_PRESENT, 4096, 12288, 4096, LCLOUD_ANSWER_NO, "meet at byte 12288" },
		{ LCLOUD_FACT_PRESENT, 8192, 8192, 8192, LCLOUD_ANSWER_NO, "aligned to 8192 bytes only" },
		{ LCLOUD_FACT_UNREADABLE, 0, 0, 4096, LCLOUD_ANSWER_UNKNOWN, "Permission denied" },
	};
	char why[1024];
	(void)state;

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		struct lcloud_layer *fs;
		struct lcloud_probe *p = file_probe("nvme-crafted", "/dev/nvme0n1", "ext4", 4096, &fs);
		const struct lcloud_verdict *pd;

		assert_int_equal(layer_add_u64(fs, FACT_CLUSTER_SIZE, 16384, "test"), 0);
		if (maps[i].state == LCLOUD_FACT_PRESENT) {
			assert_int_equal(layer_add_u64(fs, FACT_EXTENTS, 2, "test"), 0);
			assert_int_equal(layer_add_u64(fs, FACT_EXTENT_EDGE_ALIGNMENT, maps[i].alignment,
						       "test"), 0);
			assert_int_equal(layer_add_u64(fs, FACT_EXTENT_EDGE_WORST, maps[i].worst, "test"),
					 0);
		} else {
			assert_int_equal(layer_add_missing(fs, FACT_EXTENTS, maps[i].state,
							   "test", "Permission denied"), 0);
			assert_int_equal(layer_add_missing(fs, FACT_EXTENT_EDGE_ALIGNMENT,
							   maps[i].state, "test", "Permission denied"), 0);
		}
		assert_int_equal(verdict_compute(p), 0);
		pd = lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT);
		print_message("extent edges on %llu: %llu\n", (unsigned long long)maps[i].alignment,
			      (unsigned long long)lcloud_verdict_get_max_untorn_bytes(pd));
		assert_int_equal(lcloud_verdict_get_max_untorn_bytes(pd), maps[i].max);
		assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 4096, NULL, why, sizeof(why)),
				 LCLOUD_ANSWER_UNTORN);
		assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 16384, NULL, why, sizeof(why)),
				 maps[i].at16k);
		assert_non_null(strstr(why, maps[i].why));
		/* the remark on what whole pages rest on never names the limit above it */
		if (maps[i].at16k == LCLOUD_ANSWER_UNTORN) {
			assert_true(any_reason(pd, "rests on the file staying so"));
			assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 32768, NULL, why, sizeof(why)),
					 LCLOUD_ANSWER_NO);
			assert_null(strstr(why, "staying so"));
		}
		lcloud_probe_free(p);
	}
}

/*
 * A passthrough write is one NVMe command, which the kernel refuses above
 * the namespace's transfer limit (max_hw_sectors_kb, from MDTS): a namespace
 * that promises 64 KiB (NAWUPF) under a 16 KiB MDTS takes no 32 KiB write
 * at all, so 32 KiB must not be called untorn. Other paths keep theirs.
 */
static void test_passthrough_within_transfer_limit(void **state)
{
	struct lcloud_probe *p = fixture_probe("nvme-crafted", "/dev/nvme6n1");
	struct lcloud_layer *disk = (struct lcloud_layer *)layer_of_kind(p, LCLOUD_LAYER_DISK);
	struct lcloud_fact *hw = (struct lcloud_fact *)layer_fact(disk, FACT_MAX_HW_SECTORS_KB);
	uint64_t rwf = lcloud_verdict_get_max_untorn_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_RWF_ATOMIC));
	uint64_t pd = lcloud_verdict_get_max_untorn_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT));
	const struct lcloud_verdict *pt;
	char why[512];
	(void)state;

	assert_non_null(hw);
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH)),
			 32768);
	hw->u64 = 16;
	assert_int_equal(verdict_compute(p), 0);
	pt = lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH);
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(pt), 16384);
	assert_true(any_reason(pt, "max_hw_sectors_kb"));
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PASSTHROUGH, 32768, NULL, why, sizeof(why)),
			 LCLOUD_ANSWER_NO);
	assert_non_null(strstr(why, "max_hw_sectors_kb"));
	/* aligned 8 KiB writes still fit between the boundaries at 8 KiB + k * 32 KiB */
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PASSTHROUGH, 8192, NULL, why, sizeof(why)),
			 LCLOUD_ANSWER_UNTORN);
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_RWF_ATOMIC)), rwf);
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT)), pd);
	/* no limit read (0): the kernel refuses what it must, nothing is capped */
	hw->u64 = 0;
	assert_int_equal(verdict_compute(p), 0);
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH)),
			 32768);
	lcloud_probe_free(p);
}

/*
 * A namespace shared by two controllers (NVMe multipath): AWUPF is each
 * controller's own, and Identify Controller through the namespace head is
 * answered by whichever path the kernel picks, while writes take any path.
 * A VM with AWUPF 15 on one controller and 0 on the other read 64 KiB and
 * 4 KiB in turn under the round-robin policy. The controller's value holds
 * only through one controller; NAWUPF (the namespace's own) is shared.
 */
static void test_awupf_on_a_shared_namespace(void **state)
{
	struct lcloud_probe *p = fixture_probe("nvme-crafted", "/dev/nvme6n1");
	struct lcloud_layer *nvme = (struct lcloud_layer *)layer_of_kind(p, LCLOUD_LAYER_NVME);
	struct lcloud_fact *pf = (struct lcloud_fact *)layer_fact(nvme, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES);
	uint64_t lba = fact_u64(nvme, "lba_size");
	char *nawupf;
	(void)state;

	assert_non_null(pf);
	assert_string_equal(pf->source, "nvme:id-ns:nawupf");
	assert_int_equal(layer_add_u64(nvme, FACT_MULTIPATH_PATHS, 2, "sysfs:multipath"), 0);
	/* adding a fact may move the layer's facts: look it up again */
	pf = (struct lcloud_fact *)layer_fact(nvme, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES);
	assert_non_null(pf);
	assert_int_equal(verdict_compute(p), 0);
	/* the namespace's own NAWUPF: the same through every controller */
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH)),
			 32768);
	/* the same size from the controller's AWUPF: one logical block is all every path keeps */
	nawupf = pf->source;
	pf->source = strdup("nvme:id-ctrl:awupf");
	assert_non_null(pf->source);
	assert_int_equal(verdict_compute(p), 0);
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH)), lba);
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT)), lba);
	assert_true(any_reason(lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH), "2 controllers"));
	free(pf->source);
	pf->source = nawupf;
	lcloud_probe_free(p);
}

/* The crafted namespace with its power-fail size from AWUPF; its NVMe layer in *RET_NVME. */
static struct lcloud_probe *awupf_namespace(struct lcloud_layer **ret_nvme)
{
	struct lcloud_probe *p = fixture_probe("nvme-crafted", "/dev/nvme6n1");
	struct lcloud_layer *nvme = (struct lcloud_layer *)layer_of_kind(p, LCLOUD_LAYER_NVME);
	struct lcloud_fact *pf = (struct lcloud_fact *)layer_fact(nvme, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES);

	assert_non_null(pf);
	free(pf->source);
	pf->source = strdup("nvme:id-ctrl:awupf");
	assert_non_null(pf->source);
	*ret_nvme = nvme;
	return p;
}

/* The same namespace behind two controllers, with EVERY the size read from both (0: unreadable). */
static uint64_t passthrough_behind_two_controllers(struct lcloud_probe *p, struct lcloud_layer *nvme, uint64_t every)
{
	const enum fact_id id = FACT_ATOMIC_WRITE_POWER_FAIL_BYTES_EVERY_PATH;
	const char *source = "nvme:id-ctrl:awupf:every-path";

	assert_int_equal(layer_add_u64(nvme, FACT_MULTIPATH_PATHS, 2, "sysfs:multipath"), 0);
	assert_int_equal(every ? layer_add_u64(nvme, id, every, source)
			       : layer_add_missing(nvme, id, LCLOUD_FACT_NEEDS_ROOT, source,
						   "/dev/nvme7 cannot be opened: Permission denied"),
			 0);
	assert_int_equal(verdict_compute(p), 0);
	return lcloud_verdict_get_max_untorn_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH));
}

/*
 * The same shared namespace with every controller's AWUPF read from its own
 * device: the smallest holds on each path; when one could not be read, one
 * logical block, and the reason says which.
 */
static void test_awupf_read_from_every_path(void **state)
{
	struct lcloud_layer *nvme;
	struct lcloud_probe *p = awupf_namespace(&nvme);
	uint64_t lba = fact_u64(nvme, "lba_size"), size = fact_u64(nvme, "atomic_write_power_fail_bytes"), alone;
	(void)state;

	assert_true(size >= 4 * lba);
	/* the other controller promises less: its size, not the one that answered */
	assert_int_equal(passthrough_behind_two_controllers(p, nvme, 2 * lba), 2 * lba);
	assert_true(lcloud_verdict_get_max_untorn_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT)) <=
		    2 * lba);
	assert_true(any_reason(lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH), "smallest AWUPF"));
	lcloud_probe_free(p);

	/* every controller promises at least as much: the size read through the head stands */
	p = awupf_namespace(&nvme);
	assert_int_equal(verdict_compute(p), 0);
	alone = lcloud_verdict_get_max_untorn_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH));
	assert_true(alone > 2 * lba);
	assert_int_equal(passthrough_behind_two_controllers(p, nvme, 4 * size), alone);
	lcloud_probe_free(p);

	/* one controller unread: one block, and why */
	p = awupf_namespace(&nvme);
	assert_int_equal(passthrough_behind_two_controllers(p, nvme, 0), lba);
	assert_true(any_reason(lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH), "/dev/nvme7 cannot be opened"));
	lcloud_probe_free(p);
}

/*
 * md member offsets and a cloud promise's alignment are typed on their
 * layers, and their public facts are rendered from them as before.
 */
static void test_md_members_and_promise_alignment_typed(void **state)
{
	struct lcloud_probe *p = fixture_probe("stacks", "/dev/md0");
	const struct lcloud_layer *md = layer_of_kind(p, LCLOUD_LAYER_MD);
	(void)state;

	assert_int_equal(md->n_md_members, 2);
	assert_non_null(layer_md_member(md, "nvme0n1"));
	assert_int_equal(layer_md_member(md, "nvme0n1")->data_offset, 2048 * 512);
	assert_int_equal(layer_md_member(md, "nvme1n1")->data_offset, 2056 * 512);
	assert_null(layer_md_member(md, "nvme2n1"));
	assert_int_equal(fact_u64(md, "md_data_offset_nvme1n1"), 2056 * 512);
	lcloud_probe_free(p);

	p = fixture_probe("nvme-crafted", "/dev/nvme1n1");
	assert_int_equal(layer_of_kind(p, LCLOUD_LAYER_CLOUD)->promise_alignment, LAYER_PROMISE_ALIGNED_TO_SIZE);
	assert_string_equal(fact_str(layer_of_kind(p, LCLOUD_LAYER_CLOUD), "promise_alignment"), "size");
	lcloud_probe_free(p);
	p = fixture_probe("scsi", "/dev/sda");
	assert_int_equal(layer_of_kind(p, LCLOUD_LAYER_CLOUD)->promise_alignment, LAYER_PROMISE_INSIDE_BOUNDARY);
	assert_string_equal(fact_str(layer_of_kind(p, LCLOUD_LAYER_CLOUD), "promise_alignment"), "boundary");
	lcloud_probe_free(p);
}

/* Fact ID of L, forced into STATE (as a probe that could not read it leaves it); returns the old state. */
static enum lcloud_fact_state force_state(const struct lcloud_layer *l, enum fact_id id, enum lcloud_fact_state state)
{
	struct lcloud_fact *f = (struct lcloud_fact *)layer_fact(l, id);
	enum lcloud_fact_state old;

	assert_non_null(f);
	old = f->state;
	f->state = state;
	return old;
}

/*
 * Where passthrough writes land: a partition's start and size on its
 * namespace. Either one not read is no start of 0 or no end: writes would
 * land before the partition (on its table) or run past it, so passthrough
 * is refused (the block device stays usable).
 */
static void test_passthrough_span_unread(void **state)
{
	struct lcloud_probe *p = fixture_probe("nvme-crafted", "/dev/nvme7n1p2");
	const struct lcloud_layer *part = layer_of_kind(p, LCLOUD_LAYER_PARTITION), *nvme = NULL;
	uint64_t offset = 1, size = 1;
	enum lcloud_fact_state old;
	(void)state;

	assert_int_equal(queue_passthrough_span(p, &nvme, &offset, &size), 0);
	assert_ptr_equal(nvme, layer_of_kind(p, LCLOUD_LAYER_NVME));
	assert_int_equal(offset, 2097152);
	assert_int_equal(size, fact_u64(part, "size"));

	old = force_state(part, FACT_START_BYTES, LCLOUD_FACT_UNREADABLE);
	nvme = NULL;
	assert_int_equal(queue_passthrough_span(p, &nvme, &offset, &size), -ENODATA);
	assert_non_null(nvme);
	force_state(part, FACT_START_BYTES, old);

	old = force_state(part, FACT_SIZE, LCLOUD_FACT_NEEDS_ROOT);
	assert_int_equal(queue_passthrough_span(p, &nvme, &offset, &size), -ENODATA);
	force_state(part, FACT_SIZE, old);
	lcloud_probe_free(p);

	p = fixture_probe("nvme-crafted", "/dev/nvme7n1");
	assert_int_equal(queue_passthrough_span(p, &nvme, &offset, &size), 0);
	assert_int_equal(offset, 0);
	assert_int_equal(size, 0);
	lcloud_probe_free(p);
}

/*
 * A file whose file system's block size was not read (statfs failed): how
 * the file system splits a write into extents is unknown above the
 * smallest block, 512 bytes, instead of not limiting the write at all.
 */
static void test_file_system_block_size_unread(void **state)
{
	struct lcloud_layer *fs;
	struct lcloud_probe *p = file_probe("nvme-qemu", "/dev/nvme0n1", "xfs", 4096, &fs);
	const struct lcloud_verdict *pd;
	char why[512];
	(void)state;

	/* one extent, whose edges are aligned to 1 MiB: the extent map limits nothing */
	assert_int_equal(layer_add_u64(fs, FACT_EXTENTS, 1, "test"), 0);
	assert_int_equal(layer_add_u64(fs, FACT_EXTENT_EDGE_ALIGNMENT, 1048576, "test"), 0);
	assert_int_equal(verdict_compute(p), 0);
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 4096, NULL, why, sizeof(why)),
			 LCLOUD_ANSWER_UNTORN);
	force_state(fs, FACT_BLOCK_SIZE, LCLOUD_FACT_UNREADABLE);
	assert_int_equal(verdict_compute(p), 0);
	pd = lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT);
	assert_true(lcloud_verdict_get_max_untorn_bytes(pd) <= 512);
	assert_non_null(lcloud_verdict_get_unknown_reason(pd));
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, 4096, NULL, why, sizeof(why)),
			 LCLOUD_ANSWER_UNKNOWN);
	assert_non_null(strstr(why, "block size could not be read"));
	lcloud_probe_free(p);
}

/*
 * Fixture TREE copied into a new temporary folder (its path in ROOT), for a
 * test to take an attribute away, then DEV probed there.
 */
static struct lcloud_probe *probe_tree_copy(const char *tree, const char *dev, char *root, size_t len,
					     const char *change)
{
	struct lcloud_ctx *ctx = NULL;
	struct lcloud_probe *p = NULL;
	char cmd[8800];

	snprintf(root, len, "/tmp/lcloud-verdict-XXXXXX");
	assert_non_null(mkdtemp(root));
	snprintf(cmd, sizeof(cmd), "cp -a '%s/%s/.' '%s/' && cd '%s' && %s", fixtures_dir, tree, root, root, change);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(lcloud_ctx_new(&ctx), 0);
	assert_int_equal(lcloud_ctx_set_sysroot(ctx, root), 0);
	assert_int_equal(lcloud_probe_path(ctx, dev, 0, &p), 0);
	lcloud_ctx_free(ctx);
	return p;
}

static void remove_tree_copy(const char *root)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/*
 * A namespace whose transfer limit (queue/max_hw_sectors_kb) is missing: a
 * limit not read is no "no limit", so above one logical block (4 KiB here)
 * a passthrough write is unknown, not untorn up to the promise (32 KiB).
 */
static void test_passthrough_transfer_limit_unread(void **state)
{
	char root[64], why[512];
	struct lcloud_probe *p = probe_tree_copy("nvme-crafted", "/dev/nvme6n1", root, sizeof(root),
						 "rm sys/class/block/nvme6n1/queue/max_hw_sectors_kb");
	const struct lcloud_verdict *pt = lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH);
	(void)state;

	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(pt), 4096);
	assert_non_null(lcloud_verdict_get_unknown_reason(pt));
	assert_true(any_reason(pt, "max_hw_sectors_kb"));
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PASSTHROUGH, 32768, NULL, why, sizeof(why)),
			 LCLOUD_ANSWER_UNKNOWN);
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_PASSTHROUGH, 4096, NULL, why, sizeof(why)),
			 LCLOUD_ANSWER_UNTORN);
	lcloud_probe_free(p);
	remove_tree_copy(root);
}

/*
 * An md array whose chunk size (md/chunk_size) is missing: where md splits
 * writes is unknown, which the verdict must say, as for a queue's
 * chunk_sectors, instead of taking it for "no chunks". The raid1 of two
 * 16 KiB namespaces, both members' data at 1 MiB, keeps 16 KiB whole with
 * its chunk size read (0); without it, only a page is sure.
 */
static void test_md_chunk_size_unread(void **state)
{
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	char root[64];
	struct lcloud_probe *p = probe_tree_copy("stacks", "/dev/md0", root, sizeof(root),
						 "echo 2048 > sys/class/block/md0/md/dev-nvme1n1/offset");
	const struct lcloud_verdict *pd = lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT);
	(void)state;

	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(pd), 16384);
	lcloud_probe_free(p);
	remove_tree_copy(root);

	p = probe_tree_copy("stacks", "/dev/md0", root, sizeof(root),
			    "echo 2048 > sys/class/block/md0/md/dev-nvme1n1/offset && rm sys/class/block/md0/md/chunk_size");
	pd = lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT);
	assert_non_null(lcloud_verdict_get_unknown_reason(pd));
	assert_true(any_reason(pd, "md/chunk_size could not be read"));
	assert_true(lcloud_verdict_get_max_untorn_bytes(pd) <= page);
	lcloud_probe_free(p);
	remove_tree_copy(root);
}

/*
 * A namespace whose power-fail size is the controller's AWUPF (16 KiB,
 * 4 KiB blocks), when how many controllers reach it could not be read (its
 * multipath folder cannot be listed): one block is all that is sure on
 * every path, as when another controller's AWUPF is unread.
 */
static void test_multipath_paths_unread(void **state)
{
	char root[64];
	struct lcloud_probe *p = probe_tree_copy("nvme-crafted", "/dev/nvme8n1", root, sizeof(root),
						 "mkdir -p sys/block && ln -s ../class/block/nvme8n1 sys/block/nvme8n1 && "
						 "echo not-a-folder > sys/class/block/nvme8n1/multipath");
	const struct lcloud_verdict *pt = lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH);
	(void)state;

	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(pt), 4096);
	assert_true(any_reason(pt, "multipath"));
	lcloud_probe_free(p);
	remove_tree_copy(root);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_dm_segments_each_checked),
		cmocka_unit_test(test_dm_segment_out_of_range_is_unknown),
		cmocka_unit_test(test_boundary_crossing_refused),
		cmocka_unit_test(test_check_answers_and_errors),
		cmocka_unit_test(test_gpd_rule_same_on_disk_partition_and_dm),
		cmocka_unit_test(test_block_layer_split_rules),
		cmocka_unit_test(test_unknown_never_hides_a_no),
		cmocka_unit_test(test_uncaptured_identify_is_unknown),
		cmocka_unit_test(test_merges_beyond_the_promise),
		cmocka_unit_test(test_file_system_placement),
		cmocka_unit_test(test_file_without_direct_io),
		cmocka_unit_test(test_direct_io_alignment_floor),
		cmocka_unit_test(test_file_extent_edges),
		cmocka_unit_test(test_passthrough_within_transfer_limit),
		cmocka_unit_test(test_awupf_on_a_shared_namespace),
		cmocka_unit_test(test_awupf_read_from_every_path),
		cmocka_unit_test(test_md_members_and_promise_alignment_typed),
		cmocka_unit_test(test_passthrough_transfer_limit_unread),
		cmocka_unit_test(test_passthrough_span_unread),
		cmocka_unit_test(test_file_system_block_size_unread),
		cmocka_unit_test(test_md_chunk_size_unread),
		cmocka_unit_test(test_multipath_paths_unread),
		cmocka_unit_test(test_extended_lba_namespace),
	};

	return fixture_main(argc, argv, "verdict", tests, sizeof(tests) / sizeof(tests[0]));
}
