/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel and stack layers over sysfs trees (tests/unit/fixtures): one
 * captured from a Linux 6.18 machine (vda, a loop device with a partition
 * table), crafted ones for what that machine cannot show (dm over
 * partitions, md over NVMe partitions, an older kernel). Expected values are
 * read from the fixture files by the test itself, or derived from the layout
 * documented in make-crafted.py.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "dm_table.h"

/* Reads a number straight from a fixture file: the independent reading. */
static uint64_t fixture_u64(const char *tree, const char *path)
{
	char full[4600], buf[64];
	FILE *f;

	snprintf(full, sizeof(full), "%s/%s%s", fixtures_dir, tree, path);
	f = fopen(full, "re");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	return strtoull(buf, NULL, 10);
}

static const struct lcloud_layer *layer_named(const struct lcloud_probe *p, const char *name)
{
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++)
		if (strcmp(lcloud_layer_get_name(lcloud_probe_get_layer(p, i)), name) == 0)
			return lcloud_probe_get_layer(p, i);
	fail_msg("no layer %s", name);
	return NULL;
}

static int layer_index(const struct lcloud_probe *p, const char *name)
{
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++)
		if (strcmp(lcloud_layer_get_name(lcloud_probe_get_layer(p, i)), name) == 0)
			return (int)i;
	return -1;
}

static void test_vda_matches_captured_files(void **state)
{
	static const char *const attrs[] = {
		"logical_block_size", "physical_block_size", "minimum_io_size", "optimal_io_size",
		"max_sectors_kb", "max_hw_sectors_kb", "dma_alignment", "atomic_write_unit_min_bytes",
		"atomic_write_unit_max_bytes", "atomic_write_max_bytes", "atomic_write_boundary_bytes",
		"max_write_streams", "write_stream_granularity",
	};
	struct lcloud_ctx *ctx = fixture_ctx("host-6.18");
	struct lcloud_probe *p = NULL;
	const struct lcloud_layer *vda;
	(void)state;

	assert_int_equal(lcloud_probe_path(ctx, "/dev/vda", 0, &p), 0);
	assert_int_equal(lcloud_probe_get_target_type(p), LCLOUD_TARGET_DISK);
	assert_int_equal(lcloud_probe_get_layer_count(p), 1);
	vda = lcloud_probe_get_layer(p, 0);
	assert_int_equal(lcloud_layer_get_kind(vda), LCLOUD_LAYER_DISK);
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		char path[256];
		const struct lcloud_fact *f = lcloud_layer_find_fact(vda, attrs[i]);

		snprintf(path, sizeof(path), "/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda/queue/%s", attrs[i]);
		assert_non_null(f);
		assert_int_equal(lcloud_fact_get_state(f), LCLOUD_FACT_PRESENT);
		assert_int_equal(lcloud_fact_get_u64(f), fixture_u64("host-6.18", path));
		assert_string_equal(lcloud_fact_get_source(f) + strlen("sysfs:queue/"), attrs[i]);
	}
	/* sysfs "size" is in 512-byte sectors whatever the logical block size */
	assert_int_equal(lcloud_fact_get_u64(lcloud_layer_find_fact(vda, "size")),
			 fixture_u64("host-6.18", "/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda/size") * 512);
	assert_string_equal(lcloud_fact_get_string(lcloud_layer_find_fact(vda, "write_cache")), "write back");
	lcloud_probe_free(p);
	lcloud_ctx_free(ctx);
}

static void test_old_kernel_reports_not_provided(void **state)
{
	struct lcloud_ctx *ctx = fixture_ctx("old-kernel");
	struct lcloud_probe *p = NULL;
	const struct lcloud_fact *f;
	uint64_t v = 12345;
	(void)state;

	assert_int_equal(lcloud_probe_path(ctx, "/dev/vda", 0, &p), 0);
	f = lcloud_layer_find_fact(lcloud_probe_get_layer(p, 0), "atomic_write_unit_max_bytes");
	assert_non_null(f);
	assert_int_equal(lcloud_fact_get_state(f), LCLOUD_FACT_NOT_PROVIDED);
	assert_non_null(strstr(lcloud_fact_get_reason(f), "not provided by this kernel"));
	assert_int_equal(lcloud_fact_get_u64(f), 0);
	/* -ENODATA, not 0: "no atomic writes" and "kernel too old to say" differ */
	assert_int_equal(lcloud_probe_get_u64(p, LCLOUD_LAYER_DISK, "atomic_write_unit_max_bytes", &v), -ENODATA);
	assert_int_equal(v, 12345); /* untouched on failure */
	assert_int_equal(lcloud_probe_get_u64(p, LCLOUD_LAYER_DISK, "max_write_streams", &v), -ENODATA);
	/* what the old kernel has is still read */
	assert_int_equal(lcloud_probe_get_u64(p, LCLOUD_LAYER_DISK, "physical_block_size", &v), 0);
	assert_int_equal(v, fixture_u64("old-kernel", "/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda/queue/physical_block_size"));
	lcloud_probe_free(p);
	lcloud_ctx_free(ctx);
}

static void test_captured_loop_partition_misaligned(void **state)
{
	struct lcloud_ctx *ctx = fixture_ctx("host-6.18");
	struct lcloud_probe *p = NULL;
	uint64_t start_sectors;
	char msg[64];
	(void)state;

	/* loop0p1 was made with start=2049 (sfdisk): 2049 * 512 = 1049088, 512 past 4 KiB */
	start_sectors = fixture_u64("host-6.18", "/sys/devices/virtual/block/loop0/loop0p1/start");
	assert_int_equal(start_sectors, 2049);
	assert_int_equal(lcloud_probe_path(ctx, "/dev/loop0p1", 0, &p), 0);
	assert_int_equal(lcloud_probe_get_target_type(p), LCLOUD_TARGET_PARTITION);
	assert_int_equal(lcloud_layer_get_kind(lcloud_probe_get_layer(p, 0)), LCLOUD_LAYER_PARTITION);
	assert_int_equal(lcloud_layer_get_kind(lcloud_probe_get_layer(p, 1)), LCLOUD_LAYER_LOOP);
	assert_int_equal(lcloud_layer_get_parent(lcloud_probe_get_layer(p, 1)), 0);
	snprintf(msg, sizeof(msg), "byte %" PRIu64 " ", start_sectors * 512);
	assert_int_equal(notes_with(p, NOTE_PARTITION_MISALIGNED, msg), 1);
	lcloud_probe_free(p);

	/* loop0p2 starts at 65536 sectors = 32 MiB: nothing to flag */
	assert_int_equal(lcloud_probe_path(ctx, "/dev/loop0p2", 0, &p), 0);
	assert_int_equal(notes_with(p, NOTE_PARTITION_MISALIGNED, NULL), 0);
	lcloud_probe_free(p);
	lcloud_ctx_free(ctx);
}

/* The table make-crafted.py describes: sdb1 from sector 0, sdc1 from sector 3. */
static int crafted_dm_table(const struct lcloud_ctx *ctx, unsigned int major, unsigned int minor,
			    struct dm_target_line *t, int max)
{
	(void)ctx;
	if (major != 252 || minor != 0 || max < 2)
		return -ENXIO;
	memset(t, 0, 2 * sizeof(*t));
	t[0].start = 0;
	t[0].length = 1048576;
	strcpy(t[0].type, "linear");
	strcpy(t[0].params, "8:17 0");
	t[1].start = 1048576;
	t[1].length = 1048576;
	strcpy(t[1].type, "linear");
	strcpy(t[1].params, "8:33 3");
	return 2;
}

static void test_dm_over_partitions(void **state)
{
	struct lcloud_ctx *ctx = fixture_ctx("dm-stack");
	struct lcloud_probe *p = NULL;
	int dm, sdb1, sdb, sdc1, sdc;
	(void)state;

	dm_table_set_reader(crafted_dm_table);
	assert_int_equal(lcloud_probe_path(ctx, "/dev/dm-0", 0, &p), 0);
	dm_table_set_reader(NULL);
	dm = layer_index(p, "dm-0");
	sdb1 = layer_index(p, "sdb1");
	sdb = layer_index(p, "sdb");
	sdc1 = layer_index(p, "sdc1");
	sdc = layer_index(p, "sdc");
	assert_int_equal(dm, 0);
	assert_true(sdb1 > 0 && sdb > 0 && sdc1 > 0 && sdc > 0);
	/* the tree: dm-0 -> sdb1 -> sdb, dm-0 -> sdc1 -> sdc */
	assert_int_equal(lcloud_layer_get_parent(layer_named(p, "sdb1")), dm);
	assert_int_equal(lcloud_layer_get_parent(layer_named(p, "sdb")), sdb1);
	assert_int_equal(lcloud_layer_get_parent(layer_named(p, "sdc1")), dm);
	assert_int_equal(lcloud_layer_get_parent(layer_named(p, "sdc")), sdc1);
	assert_int_equal(lcloud_layer_get_kind(layer_named(p, "dm-0")), LCLOUD_LAYER_DM);
	assert_string_equal(lcloud_fact_get_string(lcloud_layer_find_fact(layer_named(p, "dm-0"), "dm_name")), "vg-data");
	assert_string_equal(lcloud_fact_get_string(lcloud_layer_find_fact(layer_named(p, "sdb"), "model")), "PersistentDisk");

	/* sdb1 at 2049 * 512 = 1049088: off sdb's 4096 physical block, and off its 4096 atomic
	 * unit minimum, so the kernel refuses atomic writes there */
	assert_int_equal(notes_with(p, NOTE_PARTITION_MISALIGNED, "physical block size 4096"), 1);
	assert_int_equal(notes_with(p, NOTE_PARTITION_MISALIGNED, "turns off atomic writes"), 1);
	/* dm target 0 maps sdb1 from 0: lands at 1049088 on sdb, flagged the same two ways */
	assert_int_equal(notes_with(p, NOTE_DM_TARGET_MISALIGNED, "byte 1049088 of sdb"), 2);
	/* target 1: sdc1 (2048 sectors) + 3 sectors = 2051 * 512 = 1050112; sdc has 512 B blocks,
	 * so only the 4 KiB rule applies (1050112 % 4096 = 1536) */
	assert_int_equal(notes_with(p, NOTE_DM_TARGET_MISALIGNED, "byte 1050112 of sdc, not a multiple of 4096 (1536"), 1);
	/* sdc1 itself is at 1 MiB: fine */
	assert_int_equal(notes_with(p, NOTE_PARTITION_MISALIGNED, "sdc1"), 0);
	lcloud_probe_free(p);
	lcloud_ctx_free(ctx);
}

/* dm-0 of the same tree as a crypt device over sdb1, its key in hex as Linux prints it. */
static int crypt_dm_table(const struct lcloud_ctx *ctx, unsigned int major, unsigned int minor,
			  struct dm_target_line *t, int max)
{
	(void)ctx;
	if (major != 252 || minor != 0 || max < 1)
		return -ENXIO;
	memset(t, 0, sizeof(*t));
	t[0].length = 1048576;
	strcpy(t[0].type, "crypt");
	strcpy(t[0].params, "aes-xts-plain64 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 0 8:17 0 "
			    "1 sector_size:4096");
	return 1;
}

/* The probe keeps no key: its dm_target_N fact, what probe prints and saves, says "-" instead. */
static void test_dm_crypt_key_left_out(void **state)
{
	struct lcloud_ctx *ctx = fixture_ctx("dm-stack");
	struct lcloud_probe *p = NULL;
	const struct lcloud_layer *dm;
	(void)state;

	dm_table_set_reader(crypt_dm_table);
	assert_int_equal(lcloud_probe_path(ctx, "/dev/dm-0", 0, &p), 0);
	dm_table_set_reader(NULL);
	dm = layer_named(p, "dm-0");
	assert_string_equal(lcloud_fact_get_string(lcloud_layer_find_fact(dm, "dm_target_0")),
			    "0 1048576 crypt aes-xts-plain64 - 0 8:17 0 1 sector_size:4096");
	assert_int_equal(lcloud_fact_get_u64(lcloud_layer_find_fact(dm, "dm_crypt_sector_bytes_0")), 4096);
	for (unsigned int i = 0; i < lcloud_layer_get_fact_count(dm); i++) {
		const char *s = lcloud_fact_get_string(lcloud_layer_get_fact(dm, i));

		assert_true(!s || !strstr(s, "00112233"));
	}
	/* a tree has no kernel release (the verdict's rules say unknown for what rests on it) */
	assert_int_equal(lcloud_fact_get_state(lcloud_layer_find_fact(dm, "kernel_release")), LCLOUD_FACT_NOT_PROVIDED);
	/* a crypt target has max_write_size read too; this tree has no module folder */
	assert_non_null(lcloud_layer_find_fact(dm, "dm_crypt_max_write_size"));
	lcloud_probe_free(p);
	lcloud_ctx_free(ctx);
}

static void test_dm_table_needs_root(void **state)
{
	struct lcloud_ctx *ctx = fixture_ctx("dm-stack");
	struct lcloud_probe *p = NULL;
	(void)state;

	dm_table_set_reader(NULL);
	/* under a sysroot the ioctl reader refuses; the rest of the probe stands */
	assert_int_equal(lcloud_probe_path(ctx, "/dev/dm-0", 0, &p), 0);
	assert_int_equal(notes_with(p, NOTE_DM_TABLE_UNAVAILABLE, NULL), 1);
	assert_int_equal(notes_with(p, NOTE_DM_TARGET_MISALIGNED, NULL), 0);
	assert_int_equal(notes_with(p, NOTE_PARTITION_MISALIGNED, "sdb1"), 2);
	lcloud_probe_free(p);
	lcloud_ctx_free(ctx);
}

static void test_md_over_nvme_and_generic_node(void **state)
{
	struct lcloud_ctx *ctx = fixture_ctx("md-nvme");
	struct lcloud_probe *p = NULL;
	const struct lcloud_layer *md;
	uint64_t v;
	(void)state;

	assert_int_equal(lcloud_probe_path(ctx, "/dev/md0", 0, &p), 0);
	md = lcloud_probe_get_layer(p, 0);
	assert_int_equal(lcloud_layer_get_kind(md), LCLOUD_LAYER_MD);
	assert_string_equal(lcloud_fact_get_string(lcloud_layer_find_fact(md, "md_level")), "raid1");
	assert_int_equal(lcloud_fact_get_u64(lcloud_layer_find_fact(md, "md_chunk_size")), 65536);
	/* md0, 2 x (partition, disk, nvme): the nvme layers say their Identify data was not captured */
	assert_int_equal(lcloud_probe_get_layer_count(p), 7);
	assert_int_equal(notes_with(p, NOTE_NVME_NOT_CAPTURED, NULL), 2);
	assert_int_equal(lcloud_probe_get_u64(p, LCLOUD_LAYER_DISK, "atomic_write_boundary_bytes", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(lcloud_probe_get_u64(p, LCLOUD_LAYER_DISK, "max_write_streams", &v), 0);
	assert_int_equal(v, 8);
	/* partitions at 1 MiB: aligned to 4 KiB, 16 KiB and the 64 KiB boundary */
	assert_int_equal(notes_with(p, NOTE_PARTITION_MISALIGNED, NULL), 0);
	lcloud_probe_free(p);

	/* /dev/ng0n1 is the generic node of nvme0n1: same namespace facts */
	assert_int_equal(lcloud_probe_path(ctx, "/dev/ng0n1", 0, &p), 0);
	assert_int_equal(lcloud_probe_get_target_type(p), LCLOUD_TARGET_NVME_CHAR);
	assert_string_equal(lcloud_layer_get_name(lcloud_probe_get_layer(p, 0)), "nvme0n1");
	assert_int_equal(notes_with(p, NOTE_NVME_GENERIC, "nvme0n1"), 1);
	lcloud_probe_free(p);
	lcloud_ctx_free(ctx);
}

static void test_bad_names_and_paths(void **state)
{
	struct lcloud_ctx *ctx = fixture_ctx("host-6.18");
	struct lcloud_probe *p = (struct lcloud_probe *)0x1;
	(void)state;

	assert_int_equal(lcloud_probe_path(ctx, "/dev/sdz", 0, &p), -ENOENT);
	assert_ptr_equal(p, (struct lcloud_probe *)0x1); /* untouched on failure */
	assert_int_equal(lcloud_probe_blockdev(ctx, "../vda", 0, &p), -EINVAL);
	assert_int_equal(lcloud_probe_blockdev(ctx, "", 0, &p), -EINVAL);
	assert_int_equal(lcloud_probe_path(ctx, "/var/lib/mysql", 0, &p), -EOPNOTSUPP);
	assert_int_equal(lcloud_probe_path(ctx, "", 0, &p), -EINVAL);
	assert_int_equal(lcloud_probe_path(ctx, "/dev/vda", 1u << 31, &p), -EINVAL); /* unknown flag */
	assert_int_equal(lcloud_probe_path(NULL, "/dev/vda", 0, &p), -EINVAL);
	assert_int_equal(lcloud_ctx_set_sysroot(ctx, "/nonexistent/sysroot"), -ENOENT);
	lcloud_probe_free(NULL);
	lcloud_ctx_free(NULL);
	lcloud_ctx_free(ctx);
}

struct names {
	char list[32][32];
	int n;
};

static int collect(const char *name, void *userdata)
{
	struct names *names = userdata;

	if (names->n < 32)
		snprintf(names->list[names->n++], 32, "%s", name);
	return 0;
}

static bool has_name(const struct names *names, const char *name)
{
	for (int i = 0; i < names->n; i++)
		if (strcmp(names->list[i], name) == 0)
			return true;
	return false;
}

static int stop_at_second(const char *name, void *userdata)
{
	(void)name;
	return ++*(int *)userdata == 2 ? 42 : 0;
}

static void test_enumeration_order(void **state)
{
	struct lcloud_ctx *ctx = fixture_ctx("md-nvme");
	struct names names = { .n = 0 };
	int calls = 0;
	(void)state;

	assert_int_equal(lcloud_blockdev_foreach(ctx, collect, &names), 0);
	/* six block devices in the tree, the unbound loop3 among them; each partition right after its disk */
	assert_int_equal(names.n, 6);
	assert_true(has_name(&names, "loop3"));
	for (int i = 0; i < names.n; i++)
		if (strcmp(names.list[i], "nvme0n1p1") == 0)
			assert_string_equal(names.list[i - 1], "nvme0n1");
	assert_int_equal(lcloud_blockdev_foreach(ctx, stop_at_second, &calls), 42);
	assert_int_equal(calls, 2);
	/* unbound loop devices left out unless asked for, as lsblk does */
	names.n = 0;
	assert_int_equal(lcloud_blockdev_foreach_flags(ctx, 0, collect, &names), 0);
	assert_int_equal(names.n, 5);
	assert_false(has_name(&names, "loop3"));
	names.n = 0;
	assert_int_equal(lcloud_blockdev_foreach_flags(ctx, LCLOUD_BLOCKDEV_UNBOUND_LOOPS, collect, &names), 0);
	assert_int_equal(names.n, 6);
	assert_int_equal(lcloud_blockdev_foreach_flags(ctx, 1u << 31, collect, &names), -EINVAL);
	lcloud_ctx_free(ctx);

	/* a bound loop device stays, and so do its partitions (no loop/ folder of their own) */
	ctx = fixture_ctx("host-6.18");
	names.n = 0;
	assert_int_equal(lcloud_blockdev_foreach_flags(ctx, 0, collect, &names), 0);
	assert_true(has_name(&names, "loop0"));
	assert_true(has_name(&names, "loop0p1"));
	assert_true(has_name(&names, "loop0p2"));
	lcloud_ctx_free(ctx);
}

/* Without verdicts the probe skips only what the verdicts read; the rest is the same. */
static void test_no_verdict_skips_only_verdict_facts(void **state)
{
	static const char *const skipped[] = { "fua", "chunk_sectors", "nomerges", "max_segments", "max_segment_size",
					       "virt_boundary_mask" };
	struct lcloud_ctx *ctx = fixture_ctx("md-nvme");
	struct lcloud_probe *full = NULL, *lean = NULL;
	(void)state;

	assert_int_equal(lcloud_probe_blockdev(ctx, "nvme0n1p1", 0, &full), 0);
	assert_int_equal(lcloud_probe_blockdev(ctx, "nvme0n1p1", LCLOUD_PROBE_NO_VERDICT, &lean), 0);
	assert_non_null(lcloud_probe_get_verdict(full, LCLOUD_PATH_RWF_ATOMIC));
	assert_null(lcloud_probe_get_verdict(lean, LCLOUD_PATH_RWF_ATOMIC));
	assert_int_equal(lcloud_probe_get_layer_count(full), lcloud_probe_get_layer_count(lean));
	assert_int_equal(lcloud_probe_get_note_count(full), lcloud_probe_get_note_count(lean));
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(full); i++) {
		const struct lcloud_layer *a = lcloud_probe_get_layer(full, i), *b = lcloud_probe_get_layer(lean, i);
		unsigned int absent = 0;

		for (unsigned int k = 0; k < lcloud_layer_get_fact_count(a); k++) {
			const struct lcloud_fact *fa = lcloud_layer_get_fact(a, k);
			const struct lcloud_fact *fb = lcloud_layer_find_fact(b, lcloud_fact_get_name(fa));
			bool skip = false;

			for (size_t s = 0; s < sizeof(skipped) / sizeof(skipped[0]); s++)
				skip |= strcmp(lcloud_fact_get_name(fa), skipped[s]) == 0;
			if (skip) {
				assert_null(fb);
				absent++;
				continue;
			}
			assert_non_null(fb);
			assert_int_equal(lcloud_fact_get_u64(fa), lcloud_fact_get_u64(fb));
		}
		/* the disk has queue limits, the partition none */
		assert_int_equal(absent, lcloud_layer_get_kind(a) == LCLOUD_LAYER_DISK ? 6 : 0);
	}
	lcloud_probe_free(full);
	lcloud_probe_free(lean);
	lcloud_ctx_free(ctx);
}

/* The probe of a block device by name reads the same facts through the class link. */
static void test_blockdev_by_name_matches_path(void **state)
{
	struct lcloud_ctx *ctx = fixture_ctx("md-nvme");
	struct lcloud_probe *by_name = NULL, *by_path = NULL;
	(void)state;

	assert_int_equal(lcloud_probe_blockdev(ctx, "nvme0n1p1", 0, &by_name), 0);
	assert_int_equal(lcloud_probe_path(ctx, "/dev/nvme0n1p1", 0, &by_path), 0);
	assert_int_equal(lcloud_probe_get_layer_count(by_name), lcloud_probe_get_layer_count(by_path));
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(by_name); i++) {
		const struct lcloud_layer *a = lcloud_probe_get_layer(by_name, i), *b = lcloud_probe_get_layer(by_path, i);

		assert_string_equal(lcloud_layer_get_name(a), lcloud_layer_get_name(b));
		assert_int_equal(lcloud_layer_get_fact_count(a), lcloud_layer_get_fact_count(b));
	}
	/* the partition's disk is found from the class link too */
	assert_string_equal(lcloud_layer_get_name(lcloud_probe_get_layer(by_name, 1)), "nvme0n1");
	assert_int_equal(lcloud_probe_get_target_type(by_name), LCLOUD_TARGET_PARTITION);
	lcloud_probe_free(by_name);
	lcloud_probe_free(by_path);
	/* an unbound loop device is still probed when named */
	assert_int_equal(lcloud_probe_blockdev(ctx, "loop3", 0, &by_name), 0);
	assert_int_equal(lcloud_layer_get_kind(lcloud_probe_get_layer(by_name, 0)), LCLOUD_LAYER_LOOP);
	assert_int_equal(lcloud_fact_get_u64(lcloud_layer_find_fact(lcloud_probe_get_layer(by_name, 0), "loop_bound")), 0);
	lcloud_probe_free(by_name);
	assert_int_equal(lcloud_probe_blockdev(ctx, "nosuch", 0, &by_name), -ENOENT);
	assert_int_equal(lcloud_probe_blockdev(ctx, "..", 0, &by_name), -EINVAL);
	lcloud_ctx_free(ctx);
}

/* A tree with no block devices at all: no calls, and no sorting of an empty (NULL) list. */
static void test_enumeration_of_empty_tree(void **state)
{
	char root[] = "/tmp/lcloud-empty-XXXXXX", dir[64];
	struct lcloud_ctx *ctx = NULL;
	struct names names = { .n = 0 };
	(void)state;

	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/sys", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/sys/class", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/sys/class/block", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(lcloud_ctx_new(&ctx), 0);
	assert_int_equal(lcloud_ctx_set_sysroot(ctx, root), 0);
	assert_int_equal(lcloud_blockdev_foreach(ctx, collect, &names), 0);
	assert_int_equal(names.n, 0);
	lcloud_ctx_free(ctx);
	assert_int_equal(rmdir(dir), 0);
	snprintf(dir, sizeof(dir), "%s/sys/class", root);
	assert_int_equal(rmdir(dir), 0);
	snprintf(dir, sizeof(dir), "%s/sys", root);
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(rmdir(root), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vda_matches_captured_files),
		cmocka_unit_test(test_old_kernel_reports_not_provided),
		cmocka_unit_test(test_captured_loop_partition_misaligned),
		cmocka_unit_test(test_dm_over_partitions),
		cmocka_unit_test(test_dm_table_needs_root),
		cmocka_unit_test(test_dm_crypt_key_left_out),
		cmocka_unit_test(test_md_over_nvme_and_generic_node),
		cmocka_unit_test(test_bad_names_and_paths),
		cmocka_unit_test(test_enumeration_order),
		cmocka_unit_test(test_blockdev_by_name_matches_path),
		cmocka_unit_test(test_no_verdict_skips_only_verdict_facts),
		cmocka_unit_test(test_enumeration_of_empty_tree),
	};

	return fixture_main(argc, argv, "sysfs_trees", tests, sizeof(tests) / sizeof(tests[0]));
}
