/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsers and pure checks: mountinfo lines (proc(5) format), statx records
 * (what each kernel fills, by stx_mask), malformed sysfs values, and the
 * alignment rules applied to reports built by hand, and the walks every
 * family shares: layer kinds, the stack below a partition, a partition's
 * disk and a disk's partitions in sysfs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fixture.h"
#include "align.h"
#include "compat.h"
#include "dm_params.h"
#include "filesystem.h"
#include "layer_kind.h"
#include "report.h"
#include "stack_walk.h"
#include "statx.h"
#include "sysfs.h"

static void test_mountinfo_line(void **state)
{
	struct mountinfo_entry e;
	char *line, *want;
	(void)state;

	/* optional fields before the separator, an escaped space in the mount point */
	assert_int_equal(mountinfo_parse_line("36 35 98:0 /mnt1 /mnt/my\\040data rw,noatime master:1 shared:7 - "
					      "xfs /dev/loop0 rw,attr2\n", &e), 0);
	assert_int_equal(e.mount_id, 36);
	assert_int_equal(e.parent_id, 35);
	assert_int_equal(e.major, 98);
	assert_int_equal(e.minor, 0);
	assert_string_equal(e.root, "/mnt1");
	assert_string_equal(e.mount_point, "/mnt/my data");
	assert_string_equal(e.options, "rw,noatime");
	assert_string_equal(e.fstype, "xfs");
	assert_string_equal(e.source, "/dev/loop0");
	assert_string_equal(e.super_options, "rw,attr2");
	mountinfo_entry_free(&e);
	/* no optional fields */
	assert_int_equal(mountinfo_parse_line("22 27 0:21 / /proc rw,relatime - proc proc rw", &e), 0);
	assert_string_equal(e.fstype, "proc");
	mountinfo_entry_free(&e);
	/* an empty source field (two spaces) is a field, not a missing one */
	assert_int_equal(mountinfo_parse_line("40 22 0:44 / /run/x rw - tmpfs  rw,size=1024k\n", &e), 0);
	assert_string_equal(e.fstype, "tmpfs");
	assert_string_equal(e.source, "");
	assert_string_equal(e.super_options, "rw,size=1024k");
	mountinfo_entry_free(&e);
	/* backslash, tab and newline escapes */
	assert_int_equal(mountinfo_parse_line("41 22 7:3 / /a\\134b\\011c\\012d rw - ext4 /dev/loop3 rw", &e), 0);
	assert_string_equal(e.mount_point, "/a\\b\tc\nd");
	mountinfo_entry_free(&e);
	/* a mount point far beyond any fixed buffer: 5000 bytes */
	line = malloc(6000);
	want = malloc(6000);
	assert_non_null(line);
	assert_non_null(want);
	want[0] = '/';
	memset(want + 1, 'd', 4999);
	want[5000] = '\0';
	snprintf(line, 6000, "42 22 7:4 / %s rw,relatime - ext4 /dev/loop4 rw\n", want);
	assert_int_equal(mountinfo_parse_line(line, &e), 0);
	assert_string_equal(e.mount_point, want);
	assert_string_equal(e.source, "/dev/loop4");
	mountinfo_entry_free(&e);
	free(line);
	free(want);
	/* garbage and truncation */
	assert_int_equal(mountinfo_parse_line("", &e), -EINVAL);
	assert_int_equal(mountinfo_parse_line("36 35 98:0 / /mnt rw", &e), -EINVAL);
	assert_int_equal(mountinfo_parse_line("x 35 98:0 / /mnt rw - xfs /dev/a rw", &e), -EINVAL);
	assert_int_equal(mountinfo_parse_line("36 35 98-0 / /mnt rw - xfs /dev/a rw", &e), -EINVAL);
	assert_int_equal(mountinfo_parse_line("36 35 98:0 / /mnt rw - xfs", &e), -EINVAL);
	assert_int_equal(mountinfo_parse_line("36 35 98:0 / /mnt rw -  /dev/a rw", &e), -EINVAL);
}

static int count_entry(struct mountinfo_entry *e, void *data)
{
	char **points = data;

	for (int i = 0; i < 3; i++)
		if (!points[i]) {
			points[i] = strdup(e->mount_point);
			return 0;
		}
	return -E2BIG;
}

/* The whole file: a line longer than any stdio buffer, a bad line counted (never dropped silently). */
static void test_mountinfo_file(void **state)
{
	char dir[] = "/tmp/lcloud-mountinfo-XXXXXX", path[128], *points[3] = { NULL, NULL, NULL };
	char *longdir = malloc(20001);
	struct mountinfo_bad bad;
	struct lcloud_ctx *ctx;
	FILE *f;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/proc", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/proc/self", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/proc/self/mountinfo", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	longdir[0] = '/';
	memset(longdir + 1, 'x', 19999);
	longdir[20000] = '\0';
	fprintf(f, "22 1 0:21 / /proc rw - proc proc rw\n");
	fprintf(f, "this is not a mountinfo line\n");
	fprintf(f, "23 1 7:0 / %s rw - ext4 /dev/loop0 rw\n", longdir);
	fclose(f);
	assert_int_equal(lcloud_ctx_new(&ctx), 0);
	assert_int_equal(lcloud_ctx_set_sysroot(ctx, dir), 0);
	assert_int_equal(mountinfo_foreach(ctx, count_entry, points, &bad), 0);
	assert_string_equal(points[0], "/proc");
	assert_string_equal(points[1], longdir);
	assert_null(points[2]);
	assert_int_equal(bad.count, 1);
	assert_int_equal(bad.first_line, 2);
	lcloud_ctx_free(ctx);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc/self", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/proc", dir);
	rmdir(path);
	rmdir(dir);
	free(points[0]);
	free(points[1]);
	free(longdir);
}

static const struct lcloud_fact *fact(const struct lcloud_layer *l, const char *name)
{
	const struct lcloud_fact *f = lcloud_layer_find_fact(l, name);

	assert_non_null(f);
	return f;
}

/* The "dev" fact is parsed in one place; a value not of the MAJOR:MINOR form is no device number. */
static void test_layer_devno(void **state)
{
	struct lcloud_probe *p = report_new("x");
	const char *forms[] = { "259:3x", "259", ":3", "259:3:1", "" };
	struct lcloud_layer *l;
	dev_t d = 42;
	(void)state;

	l = report_layer(p, report_add_layer(p, LCLOUD_LAYER_DISK, "nvme0n1", -1));
	assert_int_equal(layer_get_devno(l, &d), 0); /* absent */
	assert_int_equal(layer_add_string(l, FACT_DEV, "259:3", "sysfs:dev"), 0);
	assert_int_equal(layer_get_devno(l, &d), 1);
	assert_true(d == makedev(259, 3));
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		l = report_layer(p, report_add_layer(p, LCLOUD_LAYER_DISK, "bad", -1));
		assert_int_equal(layer_add_string(l, FACT_DEV, forms[i], "sysfs:dev"), 0);
		d = 42;
		assert_int_equal(layer_get_devno(l, &d), 0);
		assert_true(d == 42); /* left alone */
	}
	l = report_layer(p, report_add_layer(p, LCLOUD_LAYER_DISK, "unread", -1));
	assert_int_equal(layer_add_missing(l, FACT_DEV, LCLOUD_FACT_UNREADABLE, "sysfs:dev", "EIO"), 0);
	assert_int_equal(layer_get_devno(l, &d), -ENODATA);
	lcloud_probe_free(p);
}

static void test_statx_by_mask(void **state)
{
	struct lcloud_probe *p = report_new("x");
	struct lcloud_statx stx;
	struct lcloud_layer *l;
	(void)state;

	/* a 6.11+ kernel on XFS: atomic fields filled, attribute known and set */
	memset(&stx, 0, sizeof(stx));
	stx.stx_mask = STATX_WRITE_ATOMIC | STATX_DIOALIGN;
	stx.stx_attributes_mask = STATX_ATTR_WRITE_ATOMIC;
	stx.stx_attributes = STATX_ATTR_WRITE_ATOMIC;
	stx.stx_atomic_write_unit_min = 4096;
	stx.stx_atomic_write_unit_max = 2097152;
	stx.stx_atomic_write_segments_max = 1;
	stx.stx_dio_mem_align = 512;
	stx.stx_dio_offset_align = 512;
	stx.stx_dio_read_offset_align = 7; /* not in stx_mask: must not be believed */
	l = report_layer(p, report_add_layer(p, LCLOUD_LAYER_FILESYSTEM, "xfs", -1));
	assert_int_equal(statx_fill_layer(l, &stx), 0);
	assert_int_equal(lcloud_fact_get_u64(fact(l, "stx_atomic_write_unit_max")), 2097152);
	assert_int_equal(lcloud_fact_get_u64(fact(l, "stx_atomic_write_segments_max")), 1);
	assert_int_equal(lcloud_fact_get_type(fact(l, "stx_attr_write_atomic")), LCLOUD_FACT_BOOL);
	assert_int_equal(lcloud_fact_get_u64(fact(l, "stx_attr_write_atomic")), 1);
	assert_int_equal(lcloud_fact_get_state(fact(l, "stx_dio_read_offset_align")), LCLOUD_FACT_NOT_PROVIDED);

	/* a 6.1 kernel: neither STATX_WRITE_ATOMIC nor the attribute exist */
	memset(&stx, 0, sizeof(stx));
	stx.stx_mask = STATX_DIOALIGN;
	stx.stx_dio_mem_align = 4;
	l = report_layer(p, report_add_layer(p, LCLOUD_LAYER_FILESYSTEM, "ext4", -1));
	assert_int_equal(statx_fill_layer(l, &stx), 0);
	assert_int_equal(lcloud_fact_get_state(fact(l, "stx_atomic_write_unit_min")), LCLOUD_FACT_NOT_PROVIDED);
	assert_non_null(strstr(lcloud_fact_get_reason(fact(l, "stx_atomic_write_unit_min")), "STATX_WRITE_ATOMIC"));
	assert_int_equal(lcloud_fact_get_state(fact(l, "stx_attr_write_atomic")), LCLOUD_FACT_NOT_PROVIDED);
	assert_int_equal(lcloud_fact_get_u64(fact(l, "stx_dio_mem_align")), 4);
	lcloud_probe_free(p);
}

static void test_malformed_sysfs_values(void **state)
{
	struct lcloud_ctx *ctx = NULL;
	struct lcloud_probe *p = NULL;
	const struct lcloud_layer *l;
	char root[4200];
	(void)state;

	snprintf(root, sizeof(root), "%s/malformed", fixtures_dir);
	assert_int_equal(lcloud_ctx_new(&ctx), 0);
	assert_int_equal(lcloud_ctx_set_sysroot(ctx, root), 0);
	assert_int_equal(lcloud_probe_path(ctx, "/dev/vda", 0, &p), 0);
	l = lcloud_probe_get_layer(p, 0);
	assert_int_equal(lcloud_fact_get_state(fact(l, "physical_block_size")), LCLOUD_FACT_UNREADABLE);
	assert_int_equal(lcloud_fact_get_state(fact(l, "logical_block_size")), LCLOUD_FACT_UNREADABLE);
	assert_int_equal(lcloud_fact_get_state(fact(l, "minimum_io_size")), LCLOUD_FACT_UNREADABLE);
	assert_int_equal(lcloud_fact_get_state(fact(l, "optimal_io_size")), LCLOUD_FACT_UNREADABLE);
	assert_non_null(lcloud_fact_get_reason(fact(l, "physical_block_size")));
	/* the good attributes around them are still read */
	assert_int_equal(lcloud_fact_get_state(fact(l, "max_sectors_kb")), LCLOUD_FACT_PRESENT);
	lcloud_probe_free(p);
	lcloud_ctx_free(ctx);
}

/* A disk with the given limits under partition PART starting at START bytes. */
static struct lcloud_probe *partition_on_disk(uint64_t start, uint64_t physical, uint64_t awu_max,
					      uint64_t boundary)
{
	struct lcloud_probe *p = report_new("/dev/sda1");
	struct lcloud_layer *part, *disk;

	part = report_layer(p, report_add_layer(p, LCLOUD_LAYER_PARTITION, "sda1", -1));
	assert_int_equal(layer_add_u64(part, FACT_START_BYTES, start, "sysfs:start"), 0);
	disk = report_layer(p, report_add_layer(p, LCLOUD_LAYER_DISK, "sda", 0));
	assert_int_equal(layer_add_u64(disk, FACT_PHYSICAL_BLOCK_SIZE, physical, "t"), 0);
	assert_int_equal(layer_add_u64(disk, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES,
				       awu_max ? physical : 0, "t"), 0);
	assert_int_equal(layer_add_u64(disk, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, awu_max, "t"), 0);
	assert_int_equal(layer_add_u64(disk, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, boundary, "t"), 0);
	assert_int_equal(align_check_stack(p), 0);
	return p;
}

static void test_alignment_rules(void **state)
{
	struct lcloud_probe *p;
	(void)state;

	/* 1 MiB start: aligned to everything up to 1 MiB */
	p = partition_on_disk(1048576, 4096, 65536, 65536);
	assert_int_equal(lcloud_probe_get_note_count(p), 0);
	lcloud_probe_free(p);
	/* 63 sectors (the old DOS start) on a 4K disk: 32256 % 4096 = 3584 */
	p = partition_on_disk(63 * 512, 4096, 0, 0);
	assert_int_equal(notes_saying(p, "physical block size 4096 (3584 bytes past"), 1);
	assert_int_equal(lcloud_probe_get_note_count(p), 1);
	lcloud_probe_free(p);
	/* 8 KiB start, units 4-16 KiB, no boundary: the kernel keeps atomic writes (start is a
	 * multiple of unit_min and there is no boundary), but 16 KiB writes are off the device grid */
	p = partition_on_disk(8192, 4096, 16384, 0);
	assert_int_equal(notes_saying(p, "physical block size"), 0);
	assert_int_equal(notes_saying(p, "turns off atomic writes"), 0);
	assert_int_equal(notes_saying(p, "atomic write unit maximum 16384"), 1);
	lcloud_probe_free(p);
	/* 32 KiB start with a 64 KiB boundary: the kernel requires max(unit_min, boundary) = 64 KiB */
	p = partition_on_disk(32768, 4096, 16384, 65536);
	assert_int_equal(notes_saying(p, "not a multiple of 65536"), 1);
	assert_int_equal(notes_saying(p, "turns off atomic writes"), 1);
	lcloud_probe_free(p);
	/* 64 KiB start with the same device: nothing to say */
	p = partition_on_disk(65536, 4096, 16384, 65536);
	assert_int_equal(lcloud_probe_get_note_count(p), 0);
	lcloud_probe_free(p);
	/* 512-byte disk, start 1 MiB + 512: only the 4 KiB page rule applies */
	p = partition_on_disk(1048576 + 512, 512, 0, 0);
	assert_int_equal(notes_saying(p, "not a multiple of 4096 (512 bytes past)"), 1);
	assert_int_equal(lcloud_probe_get_note_count(p), 1);
	lcloud_probe_free(p);
}

static void test_layer_kinds(void **state)
{
	(void)state;
	for (enum lcloud_layer_kind k = LCLOUD_LAYER_FILESYSTEM; k <= LCLOUD_LAYER_SCSI; k++) {
		bool whole = k == LCLOUD_LAYER_DM || k == LCLOUD_LAYER_MD || k == LCLOUD_LAYER_LOOP ||
			     k == LCLOUD_LAYER_DISK;

		assert_int_equal(layer_kind_is_whole_device(k), whole);
		assert_int_equal(layer_kind_is_block_device(k), whole || k == LCLOUD_LAYER_PARTITION);
		/* every layer is the file system, a block device or a description of a disk, one of them */
		assert_int_equal((k == LCLOUD_LAYER_FILESYSTEM) + layer_kind_is_block_device(k) +
					 layer_kind_describes_device(k), 1);
	}
}

/* fs -> partition (START, or unread when START is 0) -> BELOW ("disk" or "loop") -> nvme */
static struct lcloud_probe *partition_over(enum lcloud_layer_kind below, uint64_t start)
{
	struct lcloud_probe *p = report_new("/mnt");
	struct lcloud_layer *part;

	assert_int_equal(report_add_layer(p, LCLOUD_LAYER_FILESYSTEM, "xfs", -1), 0);
	part = report_layer(p, report_add_layer(p, LCLOUD_LAYER_PARTITION, "x1", 0));
	if (start)
		assert_int_equal(layer_add_u64(part, FACT_START_BYTES, start, "sysfs:start"), 0);
	else
		assert_int_equal(layer_add_missing(part, FACT_START_BYTES, LCLOUD_FACT_NEEDS_ROOT, NULL, "t"), 0);
	assert_int_equal(report_add_layer(p, below, "x", 1), 2);
	assert_int_equal(report_add_layer(p, LCLOUD_LAYER_NVME, "x", 2), 3);
	return p;
}

static void test_stack_walks(void **state)
{
	const struct lcloud_layer *unread;
	struct lcloud_probe *p;
	uint64_t start;
	(void)state;

	p = partition_over(LCLOUD_LAYER_DISK, 1048576);
	assert_ptr_equal(stack_first_layer(p, LCLOUD_LAYER_DISK), &p->layers[2]);
	assert_null(stack_first_layer(p, LCLOUD_LAYER_MD));
	assert_ptr_equal(stack_child_layer(p, 2, LCLOUD_LAYER_NVME), &p->layers[3]);
	assert_ptr_equal(stack_child_layer(p, 1, STACK_ANY_KIND), &p->layers[2]);
	assert_null(stack_child_layer(p, 1, LCLOUD_LAYER_NVME));
	assert_int_equal(stack_below_partitions(p, 1, LCLOUD_LAYER_DISK, &start, &unread), 2);
	assert_int_equal(start, 1048576);
	assert_null(unread);
	/* no partition on the way: the layer itself, nothing added */
	assert_int_equal(stack_below_partitions(p, 2, LCLOUD_LAYER_DISK, &start, &unread), 2);
	assert_int_equal(start, 0);
	lcloud_probe_free(p);

	/* a start not read adds nothing and is named, for the caller's "unknown" */
	p = partition_over(LCLOUD_LAYER_DISK, 0);
	assert_int_equal(stack_below_partitions(p, 1, LCLOUD_LAYER_DISK, &start, &unread), 2);
	assert_int_equal(start, 0);
	assert_ptr_equal(unread, &p->layers[1]);
	lcloud_probe_free(p);

	/* a partition of a loop device: not a disk, but the device it sits on for any kind */
	p = partition_over(LCLOUD_LAYER_LOOP, 4096);
	assert_int_equal(stack_below_partitions(p, 1, LCLOUD_LAYER_DISK, NULL, NULL), -1);
	assert_int_equal(stack_below_partitions(p, 1, STACK_ANY_KIND, &start, NULL), 2);
	assert_int_equal(start, 4096);
	lcloud_probe_free(p);
}

static int count_partition(const char *partdir, void *data)
{
	(*(int *)data)++;
	return 0;
}

static int stop_at_first(const char *partdir, void *data)
{
	return 7;
}

/* A dm table line's placement as Linux 7.3 prints it, and nothing followed from a line not read whole. */
static void test_dm_params(void **state)
{
	static const struct {
		const char *type, *params;
		unsigned int stripes;
		bool crypt, linear;
		uint64_t sector;
	} lines[] = {
		{ "linear", "259:0 2048", 0, false, true, 0 },
		{ "linear", "259:0 2048 extra", 0, false, false, 0 },
		{ "striped", "2 32 259:0 0 259:1 2048", 2, false, false, 0 },
		{ "striped", "2 32 259:0 0", 0, false, false, 0 },              /* fewer members than it says */
		{ "striped", "2 32 259:0 0 259:1 0 259:2 0", 0, false, false, 0 }, /* more */
		{ "striped", "2 0 259:0 0 259:1 0", 0, false, false, 0 },       /* a chunk of 0 */
		{ "striped", "1 4294967296 259:0 0", 0, false, false, 0 },      /* a chunk no unsigned int holds */
		{ "striped", "17 8 1:1 0 1:1 0 1:1 0 1:1 0 1:1 0 1:1 0 1:1 0 1:1 0 1:1 0 1:1 0 1:1 0 1:1 0 1:1 0 1:1 0 "
			     "1:1 0 1:1 0 1:1 0", 0, false, false, 0 },          /* more members than followed */
		{ "crypt", "aes-xts-plain64 - 0 259:0 4096", 0, true, false, 512 },
		{ "crypt", "aes-xts-plain64 - 0 259:0 0 2 allow_discards sector_size:4096", 0, true, false, 4096 },
		{ "crypt", "aes-xts-plain64 - 0 259:0 0 1 sector_size:3000", 0, false, false, 0 },
		{ "crypt", "aes-xts-plain64 - 0 259:0 0 2 allow_discards", 0, false, false, 0 }, /* count says 2 */
		{ "crypt", "aes-xts-plain64 - 0 259:0 0 1 a_future_option", 0, false, false, 0 },
		{ "crypt", "aes-xts-plain64 - 0 /dev/nvme0n1 0", 0, false, false, 0 },
		{ "thin", "253:1 7", 0, false, false, 0 },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct layer_dm_segment s = { 0 };

		snprintf(s.type, sizeof(s.type), "%s", lines[i].type);
		snprintf(s.params, sizeof(s.params), "%s", lines[i].params);
		dm_params_parse(&s);
		print_message("%s %s\n", lines[i].type, lines[i].params);
		assert_int_equal(s.stripes, lines[i].stripes);
		assert_int_equal(s.crypt, lines[i].crypt);
		assert_int_equal(s.linear, lines[i].linear);
		if (s.crypt)
			assert_int_equal(s.crypt_sector, lines[i].sector);
	}
	{
		struct layer_dm_segment s = { .type = "crypt" };

		snprintf(s.params, sizeof(s.params), "aes-xts-plain64 - 0 259:0 0 1 integrity:28:aead");
		dm_params_parse(&s);
		assert_true(s.crypt && s.crypt_integrity);
	}
}

/* The keys a crypt or integrity table line carries never stay in what the probe keeps. */
static void test_dm_params_redact(void **state)
{
	char line[256];
	(void)state;

	snprintf(line, sizeof(line), "aes-xts-plain64 0123456789abcdef0123456789abcdef 0 259:0 0 1 sector_size:4096");
	dm_params_redact("crypt", line, sizeof(line));
	assert_string_equal(line, "aes-xts-plain64 - 0 259:0 0 1 sector_size:4096");
	snprintf(line, sizeof(line), "259:0 0 28 J 2 internal_hash:hmac(sha256):00ff11ee journal_crypt:ctr(aes):beef");
	dm_params_redact("integrity", line, sizeof(line));
	assert_string_equal(line, "259:0 0 28 J 2 internal_hash:hmac(sha256) journal_crypt:ctr(aes)");
	snprintf(line, sizeof(line), "259:0 2048");
	dm_params_redact("linear", line, sizeof(line));
	assert_string_equal(line, "259:0 2048");
}

static void test_sysfs_partitions(void **state)
{
	const char *disk = "/sys/devices/pci0000:00/0000:00:0b.0/nvme/nvme7/nvme7n1";
	struct lcloud_ctx *ctx = fixture_ctx("nvme-crafted");
	char dir[SYSFS_PATH_MAX];
	int n = 0;
	(void)state;

	assert_int_equal(sysfs_partition_disk_dir("/sys/devices/pci0000:00/0000:00:0b.0/nvme/nvme7/nvme7n1/nvme7n1p2",
						  dir, sizeof(dir)), 0);
	assert_string_equal(dir, disk);
	assert_int_equal(sysfs_partition_disk_dir("/sda1", dir, sizeof(dir)), -EINVAL);
	assert_int_equal(sysfs_partition_disk_dir("sda1", dir, sizeof(dir)), -EINVAL);
	assert_true(sysfs_partition_disk_dir(disk, dir, 8) < 0);

	/* nvme7n1p1 and nvme7n1p2; the queue/ and device/ folders are no partitions */
	assert_int_equal(sysfs_for_each_partition(ctx, disk, count_partition, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(sysfs_for_each_partition(ctx, disk, stop_at_first, NULL), 7);
	n = 0;
	assert_int_equal(sysfs_for_each_partition(ctx, "/sys/devices/none", count_partition, &n), 0);
	assert_int_equal(n, 0);
	lcloud_ctx_free(ctx);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mountinfo_line),
		cmocka_unit_test(test_mountinfo_file),
		cmocka_unit_test(test_layer_devno),
		cmocka_unit_test(test_statx_by_mask),
		cmocka_unit_test(test_malformed_sysfs_values),
		cmocka_unit_test(test_alignment_rules),
		cmocka_unit_test(test_layer_kinds),
		cmocka_unit_test(test_stack_walks),
		cmocka_unit_test(test_sysfs_partitions),
		cmocka_unit_test(test_dm_params),
		cmocka_unit_test(test_dm_params_redact),
	};

	return fixture_main(argc, argv, "parsers", tests, sizeof(tests) / sizeof(tests[0]));
}
