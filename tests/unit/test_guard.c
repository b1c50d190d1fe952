/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every refusal of the write guard that can be reached without a live
 * device, over a copy of the dm-stack tree (dm-0 'vg-data' over sdb1 and
 * sdc1) given holders/ entries and a mountinfo, or a probe altered after it
 * was made: who holds or mounts the target, a device below it or one that
 * shares its storage (which LCLOUD_QUEUE_FORCE never overrides), what the
 * target holds (signatures, a partition table, signatures that could not be
 * read: FORCE's to override), and the tables the guard must read to decide.
 * The kernel's O_EXCL claim, active swap and loop devices need live devices:
 * tests/host/test_guard.py and tests/host/test_guard_aliases.py.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "guard.h"
#include "probe.h"
#include "report.h"

#define SCSI "/sys/devices/pci0000:00/0000:00:05.0/virtio3/host0/target0:0:%d/0:0:%d:0/block/%s"

static char root[4096];

static void put(const char *rel, const char *content)
{
	char path[8192], cmd[8300];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void holder(int target, const char *dev, const char *holder_name)
{
	char rel[1024], dir[512];

	snprintf(dir, sizeof(dir), SCSI, target, target, dev);
	snprintf(rel, sizeof(rel), "%s/holders/%s", dir, holder_name);
	put(rel, "");
}

static int setup(void **state)
{
	char cmd[8400];
	(void)state;

	snprintf(root, sizeof(root), "/tmp/lcloud-guard-XXXXXX");
	assert_non_null(mkdtemp(root));
	snprintf(cmd, sizeof(cmd), "cp -a '%s/dm-stack/.' '%s/'", fixtures_dir, root);
	assert_int_equal(system(cmd), 0);
	put("/proc/self/mountinfo", "22 1 0:21 / /proc rw - proc proc rw\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return fixture_remove_tree(root);
}

/* A new copy of the tree, for a test that removed parts of it to look again. */
static void fresh_tree(void)
{
	assert_int_equal(teardown(NULL), 0);
	assert_int_equal(setup(NULL), 0);
}

static void remove_path(const char *rel)
{
	char cmd[8400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s%s'", root, rel);
	assert_int_equal(system(cmd), 0);
}

/*
 * The guard on DEV: probed in the tree as it is now, then ALTER (when given) changes the probe or the
 * tree, as a device that changed between the probe and the guard would. Returns the guard's result,
 * the reason in WHY.
 */
static int guard_altered(const char *dev, void (*alter)(struct lcloud_probe *p), bool force, char *why,
			 size_t size)
{
	static struct guard_decision d;
	struct lcloud_probe *p;
	struct lcloud_ctx *ctx;
	int r;

	assert_int_equal(lcloud_ctx_new(&ctx), 0);
	assert_int_equal(lcloud_ctx_set_sysroot(ctx, root), 0);
	assert_int_equal(lcloud_probe_path(ctx, dev, 0, &p), 0);
	if (alter)
		alter(p);
	/* nothing opened: the probe's device number names the target */
	r = guard_decide(ctx, -1, p, force ? GUARD_FORCE : 0, &d);
	snprintf(why, size, "%s", d.reason);
	/* the decision is typed: its errno and its kind agree, and an allowed write has no reason */
	assert_int_equal(r, d.error);
	assert_true((r == 0) == (d.refusal == GUARD_ALLOWED));
	assert_true((r == 0) == (d.reason[0] == '\0'));
	/* a captured tree has no devices to claim */
	assert_int_equal(d.claims.n, 0);
	guard_decision_release(&d);
	lcloud_probe_free(p);
	lcloud_ctx_free(ctx);
	return r;
}

/* The guard on DEV in the tree as it is now; returns its result, the reason in WHY. */
static int guard(const char *dev, bool force, char *why, size_t size)
{
	return guard_altered(dev, NULL, force, why, size);
}

static struct lcloud_layer *layer_named(struct lcloud_probe *p, const char *name)
{
	for (unsigned int i = 0; i < p->n_layers; i++)
		if (strcmp(p->layers[i].name, name) == 0)
			return &p->layers[i];
	fail_msg("no layer %s", name);
	return NULL;
}

static void test_free_devices_pass(void **state)
{
	char why[8192];
	(void)state;

	/* dm-0 holds sdb1 and sdc1: that is the stack itself, not another holder */
	holder(1, "sdb/sdb1", "dm-0");
	holder(2, "sdc/sdc1", "dm-0");
	assert_int_equal(guard("/dev/dm-0", false, why, sizeof(why)), 0);
}

static void test_disk_under_held_partition_refused(void **state)
{
	char why[8192];
	(void)state;

	/* sdb's partition is dm-0's member: the whole disk holds dm-0's data (not only the kernel's O_EXCL says so) */
	holder(1, "sdb/sdb1", "dm-0");
	for (int force = 0; force < 2; force++) {
		assert_int_equal(guard("/dev/sdb", force, why, sizeof(why)), -EBUSY);
		assert_non_null(strstr(why, "/dev/sdb shares storage with /dev/sdb1"));
		assert_non_null(strstr(why, "held by dm-0"));
	}
}

static void test_disk_under_mounted_dm_refused(void **state)
{
	char why[8192];
	(void)state;

	/* dm-0 (252:0) over sdb1 and sdc1 mounted, no holders/ to tell: the storage map still reaches it */
	put("/proc/self/mountinfo", "22 1 0:21 / /proc rw - proc proc rw\n"
				    "31 1 252:0 / /srv rw - xfs /dev/mapper/vg-data rw\n");
	for (int force = 0; force < 2; force++) {
		assert_int_equal(guard("/dev/sdc", force, why, sizeof(why)), -EBUSY);
		assert_non_null(strstr(why, "/dev/sdc shares storage with /dev/dm-0"));
		assert_non_null(strstr(why, "which is mounted (at /srv)"));
	}
}

static void test_held_target_refused(void **state)
{
	char why[8192];
	(void)state;

	holder(1, "sdb/sdb1", "dm-0");
	for (int force = 0; force < 2; force++) {
		assert_int_equal(guard("/dev/sdb1", force, why, sizeof(why)), -EBUSY);
		assert_non_null(strstr(why, "/dev/sdb1 is held by dm-0 (vg-data)"));
		assert_non_null(strstr(why, "--force does not override"));
	}
}

static void test_held_device_below_refused(void **state)
{
	char why[8192];
	(void)state;

	/* sdc (below dm-0's sdc1) is also held by a device outside the stack */
	holder(2, "sdc", "dm-7");
	for (int force = 0; force < 2; force++) {
		assert_int_equal(guard("/dev/dm-0", force, why, sizeof(why)), -EBUSY);
		assert_non_null(strstr(why, "/dev/dm-0 sits on /dev/sdc, which is also held by dm-7"));
	}
}

static void test_mounted_device_below_refused(void **state)
{
	char why[8192];
	(void)state;

	/* sdb mounted as a whole (8:16): a write to its partition corrupts that file system */
	put("/proc/self/mountinfo", "22 1 0:21 / /proc rw - proc proc rw\n"
				    "30 1 8:16 / /mnt/whole rw - ext4 /dev/sdb rw\n");
	assert_int_equal(guard("/dev/sdc1", false, why, sizeof(why)), 0);
	for (int force = 0; force < 2; force++) {
		assert_int_equal(guard("/dev/sdb1", force, why, sizeof(why)), -EBUSY);
		assert_non_null(strstr(why, "/dev/sdb1 sits on /dev/sdb, which is mounted (at /mnt/whole)"));
	}
	assert_int_equal(guard("/dev/sdb", true, why, sizeof(why)), -EBUSY);
	assert_non_null(strstr(why, "/dev/sdb is mounted (at /mnt/whole)"));
}

static void test_mounted_partition_of_target_refused(void **state)
{
	char why[8192];
	(void)state;

	/* a partition of the target disk mounted: the whole disk is refused, the other disk is not */
	put("/proc/self/mountinfo", "30 1 8:33 / /mnt/part rw - xfs /dev/sdc1 rw\n");
	assert_int_equal(guard("/dev/sdc", true, why, sizeof(why)), -EBUSY);
	assert_non_null(strstr(why, "/dev/sdc is mounted (at /mnt/part)"));
	assert_int_equal(guard("/dev/sdb", false, why, sizeof(why)), 0);
}

static void test_mounted_target_refused(void **state)
{
	char why[8192];
	(void)state;

	put("/proc/self/mountinfo", "22 1 0:21 / /proc rw - proc proc rw\n"
				    "30 1 8:32 / /mnt/sdc rw - ext4 /dev/sdc rw\n");
	for (int force = 0; force < 2; force++) {
		assert_int_equal(guard("/dev/sdc", force, why, sizeof(why)), -EBUSY);
		assert_non_null(strstr(why, "/dev/sdc is mounted (at /mnt/sdc)"));
		assert_non_null(strstr(why, "--force does not override"));
	}
}

/* what the probe reads with libblkid on a live device; a captured tree has no signatures */
static void add_ext4_signature(struct lcloud_probe *p)
{
	struct lcloud_layer *sdc = layer_named(p, "sdc");

	assert_int_equal(layer_add_string(sdc, FACT_SIGNATURE_TYPE, "ext4", "blkid"), 0);
	assert_int_equal(layer_add_string(sdc, FACT_SIGNATURE_USAGE, "filesystem", "blkid"), 0);
	sdc->signatures = LAYER_SIGNATURES_READ;
}

static void add_gpt(struct lcloud_probe *p)
{
	struct lcloud_layer *sdc = layer_named(p, "sdc");

	assert_int_equal(layer_add_string(sdc, FACT_PARTITION_TABLE, "gpt", "blkid"), 0);
	sdc->signatures = LAYER_SIGNATURES_READ;
}

static void test_signature_refused_unless_forced(void **state)
{
	char why[8192];
	(void)state;

	assert_int_equal(guard("/dev/sdc", false, why, sizeof(why)), 0);
	assert_int_equal(guard_altered("/dev/sdc", add_ext4_signature, false, why, sizeof(why)), -EBUSY);
	assert_non_null(strstr(why, "/dev/sdc carries an ext4 signature (filesystem)"));
	assert_non_null(strstr(why, "--force"));
	/* what the device holds is the caller's to give up */
	assert_int_equal(guard_altered("/dev/sdc", add_ext4_signature, true, why, sizeof(why)), 0);
}

static void test_partition_table_refused_unless_forced(void **state)
{
	char why[8192];
	(void)state;

	assert_int_equal(guard_altered("/dev/sdc", add_gpt, false, why, sizeof(why)), -EBUSY);
	assert_non_null(strstr(why, "/dev/sdc carries a gpt partition table"));
	assert_int_equal(guard_altered("/dev/sdc", add_gpt, true, why, sizeof(why)), 0);
}

static void target_signatures_unread(struct lcloud_probe *p)
{
	layer_named(p, "sdc")->signatures = LAYER_SIGNATURES_UNREAD;
}

static void lower_signatures_unread(struct lcloud_probe *p)
{
	layer_named(p, "sdb1")->signatures = LAYER_SIGNATURES_UNREAD;
}

static void test_unread_signatures_refused_unless_forced(void **state)
{
	char why[8192];
	(void)state;

	/* unread is not "none" */
	assert_int_equal(guard_altered("/dev/sdc", target_signatures_unread, false, why, sizeof(why)), -EBUSY);
	assert_non_null(strstr(why, "cannot tell whether /dev/sdc holds data"));
	assert_int_equal(guard_altered("/dev/sdc", target_signatures_unread, true, why, sizeof(why)), 0);

	holder(1, "sdb/sdb1", "dm-0");
	holder(2, "sdc/sdc1", "dm-0");
	assert_int_equal(guard_altered("/dev/dm-0", lower_signatures_unread, false, why, sizeof(why)), -EACCES);
	assert_non_null(strstr(why, "cannot check /dev/sdb1, below /dev/dm-0"));
	assert_int_equal(guard_altered("/dev/dm-0", lower_signatures_unread, true, why, sizeof(why)), 0);
}

/* the guard once refused on a needs-root note whose message said "signatures": wording must decide nothing */
static void note_about_signatures(struct lcloud_probe *p)
{
	layer_named(p, "sdc")->signatures = LAYER_SIGNATURES_READ;
	assert_int_equal(report_note(p, NOTE_NEEDS_ROOT, 0, "reading on-disk signatures needs read access to "
				     "/dev/sdc; run as root to see them"), 0);
	assert_int_equal(report_note(p, NOTE_SIGNATURES_UNREADABLE, 0, "signatures of another device"), 0);
}

static void test_note_text_decides_nothing(void **state)
{
	char why[8192];
	(void)state;

	assert_int_equal(guard_altered("/dev/sdc", note_about_signatures, false, why, sizeof(why)), 0);
}

/* an NVMe generic node whose namespace could not be found, say */
static void test_no_block_device_refused(void **state)
{
	struct guard_decision d = GUARD_DECISION_INIT;
	struct lcloud_probe *p;
	struct lcloud_ctx *ctx;
	(void)state;

	assert_int_equal(lcloud_ctx_new(&ctx), 0);
	assert_int_equal(lcloud_ctx_set_sysroot(ctx, root), 0);
	p = report_new("/dev/ng0n1");
	assert_non_null(p);
	p->target_type = LCLOUD_TARGET_NVME_CHAR;
	assert_true(report_add_layer(p, LCLOUD_LAYER_NVME, "ng0n1", -1) >= 0);
	for (int force = 0; force < 2; force++) {
		assert_int_equal(guard_decide(ctx, -1, p, force ? GUARD_FORCE : 0, &d), -ENODEV);
		assert_int_equal(d.refusal, GUARD_NO_DEVICE);
		assert_non_null(strstr(d.reason, "no block device behind the target"));
	}
	guard_decision_release(&d);
	lcloud_probe_free(p);
	lcloud_ctx_free(ctx);
}

static void forget_dev(struct lcloud_probe *p)
{
	struct lcloud_fact *dev = (struct lcloud_fact *)layer_fact(layer_named(p, "sdc"), FACT_DEV);

	assert_non_null(dev);
	dev->state = LCLOUD_FACT_UNREADABLE;
}

static void test_unknown_device_number_refused(void **state)
{
	char why[8192];
	(void)state;

	/* nothing opened (a captured tree): the device number is the probe's, and without it nothing is known */
	for (int force = 0; force < 2; force++) {
		assert_int_equal(guard_altered("/dev/sdc", forget_dev, force, why, sizeof(why)), -ENODEV);
		assert_non_null(strstr(why, "/dev/sdc: which device it is cannot be told"));
	}
}

static void drop_target_size(struct lcloud_probe *p)
{
	(void)p;
	remove_path("/sys/devices/pci0000:00/0000:00:05.0/virtio3/host0/target0:0:2/0:0:2:0/block/sdc/size");
}

static void test_unmapped_target_refused(void **state)
{
	char why[8192];
	(void)state;

	for (int force = 0; force < 2; force++) {
		assert_int_equal(guard_altered("/dev/sdc", drop_target_size, force, why, sizeof(why)), -EACCES);
		assert_non_null(strstr(why, "cannot tell where the data of /dev/sdc is: the size of sdc"));
		fresh_tree();
	}
}

static void drop_mountinfo(struct lcloud_probe *p)
{
	(void)p;
	remove_path("/proc/self/mountinfo");
}

static void test_unreadable_mount_table_refused(void **state)
{
	char why[8192];
	(void)state;

	for (int force = 0; force < 2; force++) {
		assert_int_equal(guard_altered("/dev/sdc", drop_mountinfo, force, why, sizeof(why)), -EBUSY);
		assert_non_null(strstr(why, "cannot read the mount table"));
		fresh_tree();
	}
}

static void drop_block_class(struct lcloud_probe *p)
{
	(void)p;
	remove_path("/sys/class/block");
}

static void test_unlisted_block_devices_refused(void **state)
{
	char why[8192];
	(void)state;

	for (int force = 0; force < 2; force++) {
		assert_int_equal(guard_altered("/dev/sdc", drop_block_class, force, why, sizeof(why)), -EBUSY);
		assert_non_null(strstr(why, "cannot list the block devices"));
		fresh_tree();
	}
}

static void test_mounted_unresolved_device_refused(void **state)
{
	char why[8192];
	(void)state;

	/* sdb's size cannot be read, so whether it shares sdc's storage is unknown: mounted, it is refused */
	remove_path("/sys/devices/pci0000:00/0000:00:05.0/virtio3/host0/target0:0:1/0:0:1:0/block/sdb/size");
	assert_int_equal(guard("/dev/sdc", false, why, sizeof(why)), 0);
	put("/proc/self/mountinfo", "22 1 0:21 / /proc rw - proc proc rw\n"
				    "30 1 8:16 / /mnt/sdb rw - ext4 /dev/sdb rw\n");
	for (int force = 0; force < 2; force++) {
		assert_int_equal(guard("/dev/sdc", force, why, sizeof(why)), -EBUSY);
		assert_non_null(strstr(why, "cannot tell whether /dev/sdc shares storage with /dev/sdb, which is "
					    "mounted at /mnt/sdb: the size of sdb"));
	}
	/*
	 * The same for an active swap area, and a sharer that is swap, has no device node or is claimed by
	 * another program (O_EXCL), need live devices: /proc/swaps is not read under a sysroot and nothing
	 * is claimed there. tests/host/test_guard_aliases.py refuses those (test_loop_over_active_swap_image,
	 * test_second_loop_over_claimed_loop), and tests/host/test_guard.py the target's own claim
	 * (test_exclusive_holder_refused).
	 */
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_free_devices_pass, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_under_held_partition_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_under_mounted_dm_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_target_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_device_below_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mounted_device_below_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mounted_partition_of_target_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mounted_target_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_signature_refused_unless_forced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partition_table_refused_unless_forced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unread_signatures_refused_unless_forced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_note_text_decides_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_block_device_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_device_number_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unmapped_target_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_mount_table_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlisted_block_devices_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mounted_unresolved_device_refused, setup, teardown),
	};

	return fixture_main(argc, argv, "guard", tests, sizeof(tests) / sizeof(tests[0]));
}
