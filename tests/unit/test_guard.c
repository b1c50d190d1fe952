/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The write guard's look at who holds a device, over a copy of the dm-stack
 * tree (dm-0 'vg-data' over sdb1 and sdc1) given holders/ entries and a
 * mountinfo: a holder of the target, a holder of a device below it that is
 * not part of the stack, a mount of a device below it, and through the
 * storage map a disk under a held partition or a mounted dm device.
 * LCLOUD_QUEUE_FORCE changes none of these. (The kernel's O_EXCL claim and
 * loop devices are tested on the host: test_guard_aliases.py.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "queue.h"

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
	char cmd[4200];
	(void)state;

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

/* The guard on DEV in the tree as it is now; returns its result, the reason in WHY. */
static int guard(const char *dev, bool force, char *why, size_t size)
{
	struct lcloud_queue q;
	struct lcloud_ctx *ctx;
	int r;

	memset(&q, 0, sizeof(q));
	q.fd = q.hold_fd = -1;
	q.writable = true;
	assert_int_equal(lcloud_ctx_new(&ctx), 0);
	assert_int_equal(lcloud_ctx_set_sysroot(ctx, root), 0);
	assert_int_equal(lcloud_probe_path(ctx, dev, 0, &q.probe), 0);
	r = write_guard_check(ctx, &q, force);
	snprintf(why, size, "%s", q.error.text);
	lcloud_probe_free(q.probe);
	lcloud_ctx_free(ctx);
	return r;
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
	};

	return fixture_main(argc, argv, "guard", tests, sizeof(tests) / sizeof(tests[0]));
}
