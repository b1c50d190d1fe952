/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The device stack, walked down from the device a path lives on: a partition
 * leads to its disk, dm and md devices to the devices in their slaves/ folder.
 * A loop device ends the walk: its backing file's stack is another probe's
 * (probe.c follows it, as a target of its own, where the loop writes to it
 * with direct I/O), so no layer here belongs to it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dm_table.h"
#include "kernel_release.h"
#include "loop_status.h"
#include "block_limits.h"
#include "stack.h"
#include "sysfs.h"
#include "util.h"

#define STACK_DEPTH_MAX 16

/* Adds the attribute's value, or why it is missing (R from the read). */
static int add_u64_read(struct lcloud_layer *l, const char *attr, enum fact_id id, int r, uint64_t v)
{
	char source[128];

	snprintf(source, sizeof(source), "sysfs:%s", attr);
	if (r == -ENOENT)
		return layer_add_missing(l, id, LCLOUD_FACT_NOT_PROVIDED, source,
					 "not provided by this kernel");
	if (r < 0)
		return layer_add_missing(l, id, r == -EACCES ? LCLOUD_FACT_NEEDS_ROOT : LCLOUD_FACT_UNREADABLE,
					 source, strerror(-r));
	return layer_add_u64(l, id, v, source);
}

static int add_sysfs_u64(int dirfd, struct lcloud_layer *l, const char *attr, enum fact_id id)
{
	uint64_t v = 0;
	int r = sysfs_read_u64_at(dirfd, attr, &v);

	return add_u64_read(l, attr, id, r, v);
}

/* String attributes are optional context (model, serial): absent ones are left out. */
static int add_sysfs_string(int dirfd, struct lcloud_layer *l, const char *attr, enum fact_id id)
{
	char source[128], buf[512];
	int r;

	r = sysfs_read_at(dirfd, attr, buf, sizeof(buf));
	if (r <= 0)
		return 0;
	snprintf(source, sizeof(source), "sysfs:%s", attr);
	return layer_add_string(l, id, buf, source);
}

static int add_common(int dirfd, struct lcloud_layer *l)
{
	char buf[32];
	uint64_t sectors;
	int r;

	r = sysfs_read_at(dirfd, "dev", buf, sizeof(buf));
	if (r > 0) {
		r = layer_add_string(l, FACT_DEV, buf, "sysfs:dev");
		if (r < 0)
			return r;
	}
	if (sysfs_read_u64_at(dirfd, "size", &sectors) == 0) {
		/* sysfs size is always in 512-byte sectors, whatever the logical block size. */
		r = layer_add_u64(l, FACT_SIZE, sectors * 512, "sysfs:size");
		if (r < 0)
			return r;
	}
	if (sysfs_read_at(dirfd, "ro", buf, sizeof(buf)) > 0) {
		r = layer_add_bool(l, FACT_RO, streq(buf, "1"), "sysfs:ro");
		if (r < 0)
			return r;
	}
	return 0;
}

static int fill_partition(int dirfd, struct lcloud_layer *l)
{
	uint64_t start = 0;
	int r, read_r;

	r = add_sysfs_u64(dirfd, l, "partition", FACT_PARTITION);
	if (r < 0)
		return r;
	read_r = sysfs_read_u64_at(dirfd, "start", &start);
	r = add_u64_read(l, "start", FACT_START, read_r, start);
	if (r < 0)
		return r;
	if (read_r == 0) {
		r = layer_add_u64(l, FACT_START_BYTES, start * 512, "sysfs:start");
		if (r < 0)
			return r;
	}
	/* The kernel's own view: bytes from the partition start to the device's natural alignment. */
	return add_sysfs_u64(dirfd, l, "alignment_offset", FACT_ALIGNMENT_OFFSET);
}

/*
 * A striped or crypt target is followed only as the kernel code checked runs
 * it: the kernel's release, and for crypt the size above which it splits a
 * write (module parameter max_write_size; 0 is its default).
 */
static int add_followed_dm_facts(const struct lcloud_ctx *ctx, struct lcloud_layer *l)
{
	bool striped = false, crypt = false;
	uint64_t v;
	int r;

	for (unsigned int i = 0; i < l->n_dm_segments; i++) {
		striped = striped || l->dm_segments[i].stripes;
		crypt = crypt || l->dm_segments[i].crypt;
	}
	if (!striped && !crypt)
		return 0;
	r = kernel_release_add(ctx, l);
	if (r < 0 || !crypt)
		return r;
	r = sysfs_read_attr_u64(ctx, "/sys/module/dm_crypt/parameters", "max_write_size", &v);
	return add_u64_read(l, "module/dm_crypt/parameters/max_write_size", FACT_DM_CRYPT_MAX_WRITE_SIZE, r, v);
}

static int fill_dm(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int index, int dirfd)
{
	struct lcloud_layer *l = report_layer(p, index);
	struct dm_target_line targets[16];
	dev_t devno;
	int r, n;

	r = add_sysfs_string(dirfd, l, "dm/name", FACT_DM_NAME);
	if (r < 0)
		return r;
	r = add_sysfs_string(dirfd, l, "dm/uuid", FACT_DM_UUID);
	if (r < 0)
		return r;
	if (layer_get_devno(l, &devno) <= 0) /* read by add_common already */
		return 0;
	n = dm_table_read(ctx, major(devno), minor(devno), targets, (int)ARRAY_SIZE(targets));
	if (n == -EACCES || n == -EPERM)
		return report_note(p, NOTE_NEEDS_ROOT, index,
				   "%s: reading the device-mapper table (target offsets) needs root; "
				   "run as root to check dm target alignment",
				   l->name);
	if (n < 0)
		return report_note(p, NOTE_DM_TABLE_UNAVAILABLE, index,
				   "%s: device-mapper table not available (%s)", l->name, strerror(-n));
	for (int i = 0; i < n; i++) {
		r = layer_add_dm_segment(l, targets[i].start, targets[i].length, targets[i].type, targets[i].params,
					 "dm:table");
		if (r < 0)
			return r;
	}
	return add_followed_dm_facts(ctx, l);
}

/* Where each member's data starts (md/dev-NAME/offset, sectors): md metadata sits before it. */
static int add_md_data_offsets(int dirfd, struct lcloud_layer *l)
{
	struct dirent *de;
	DIR *dir;
	int fd, r = 0;

	fd = openat(dirfd, "md", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return 0;
	}
	while (r >= 0 && (de = readdir(dir))) {
		char sub[300];
		uint64_t sectors;

		if (!has_prefix(de->d_name, "dev-") ||
		    path_printf(sub, sizeof(sub), "%s/offset", de->d_name) < 0 ||
		    sysfs_read_u64_at(fd, sub, &sectors) < 0)
			continue;
		r = layer_add_md_member(l, de->d_name + 4, sectors * 512, "sysfs:md/dev-*/offset");
	}
	closedir(dir);
	return r;
}

static int fill_md(int dirfd, struct lcloud_layer *l)
{
	int r;

	r = add_md_data_offsets(dirfd, l);
	if (r < 0)
		return r;

	r = add_sysfs_string(dirfd, l, "md/level", FACT_MD_LEVEL);
	if (r < 0)
		return r;
	r = add_sysfs_u64(dirfd, l, "md/chunk_size", FACT_MD_CHUNK_SIZE);
	if (r < 0)
		return r;
	return add_sysfs_u64(dirfd, l, "md/raid_disks", FACT_MD_RAID_DISKS);
}

/* BACKING: loop/backing_file as read to tell the kind (NULL when it was not read). */
static int fill_loop(const struct lcloud_ctx *ctx, int dirfd, struct lcloud_layer *l, bool bound, const char *backing,
		     bool verdict_facts)
{
	char buf[8];
	int r;

	/* An unbound loop device has no loop/ folder: nothing behind it. */
	if (!bound)
		return layer_add_bool(l, FACT_LOOP_BOUND, false, "sysfs:loop");
	r = layer_add_bool(l, FACT_LOOP_BOUND, true, "sysfs:loop");
	if (r < 0)
		return r;
	if (!backing)
		r = add_sysfs_string(dirfd, l, "loop/backing_file", FACT_LOOP_BACKING_FILE);
	else if (backing[0])
		r = layer_add_string(l, FACT_LOOP_BACKING_FILE, backing, "sysfs:loop/backing_file");
	if (r < 0)
		return r;
	r = add_sysfs_u64(dirfd, l, "loop/offset", FACT_LOOP_OFFSET);
	if (r < 0)
		return r;
	if (!verdict_facts)
		return 0; /* the offset is kept: the alignment check reads it */
	r = add_sysfs_u64(dirfd, l, "loop/sizelimit", FACT_LOOP_SIZELIMIT);
	if (r < 0)
		return r;
	/* Buffered loop I/O goes through the backing file's page cache: nothing is untorn there. */
	if (sysfs_read_at(dirfd, "loop/dio", buf, sizeof(buf)) <= 0)
		return 0;
	r = layer_add_bool(l, FACT_LOOP_DIO, streq(buf, "1"), "sysfs:loop/dio");
	if (r < 0 || !streq(buf, "1"))
		return r;
	/* direct I/O: the verdict follows the backing file (probe.c), as the kernel it checked runs it */
	r = kernel_release_add(ctx, l);
	return r < 0 ? r : loop_status_add(ctx, l);
}

static int fill_disk(int dirfd, struct lcloud_layer *l)
{
	static const struct {
		const char *attr;
		enum fact_id id;
	} ids[] = {
		{ "device/vendor", FACT_VENDOR },   { "device/model", FACT_MODEL },
		{ "device/serial", FACT_SERIAL },   { "serial", FACT_SERIAL },
		{ "device/firmware_rev", FACT_FIRMWARE }, { "device/rev", FACT_REVISION },
		{ "wwid", FACT_WWID },              { "device/wwid", FACT_WWID },
	};
	uint64_t nsid, align_off;
	int r;

	/*
	 * Where the disk's physical blocks start (READ CAPACITY's lowest aligned
	 * LBA, as the kernel keeps it): a cloud promise per physical block needs
	 * it. Every kernel since 2.6.31 has it; a captured tree may not.
	 */
	r = sysfs_read_u64_at(dirfd, "alignment_offset", &align_off);
	if (r != -ENOENT) {
		/* -1 (a misaligned stack) or unreadable: recorded, so that no promise rests on it */
		r = add_u64_read(l, "alignment_offset", FACT_ALIGNMENT_OFFSET, r, align_off);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
		if (layer_fact(l, ids[i].id))
			continue; /* first source wins: serial lives in one place or the other */
		r = add_sysfs_string(dirfd, l, ids[i].attr, ids[i].id);
		if (r < 0)
			return r;
	}
	/* a number, as the nvme layer's nsid: one type per fact name in every layer */
	if (sysfs_read_u64_at(dirfd, "nsid", &nsid) == 0)
		return layer_add_u64(l, FACT_NSID, nsid, "sysfs:nsid");
	return 0;
}

static int resolve(const struct lcloud_ctx *ctx, struct lcloud_probe *p, const char *devdir, int parent,
		   int depth);
static int resolve_slaves(const struct lcloud_ctx *ctx, struct lcloud_probe *p, const char *devdir, int dirfd,
			  int index, int depth);

/* The device at DEVDIR, open as DIRFD: its layer, then the layers below it. */
static int resolve_at(const struct lcloud_ctx *ctx, struct lcloud_probe *p, const char *devdir, int dirfd,
		      int parent, int depth)
{
	char canon[SYSFS_PATH_MAX], backing[512];
	const char *name = path_basename(devdir);
	enum lcloud_layer_kind kind;
	bool has_loop = false, have_backing = false;
	int index, r;

	/*
	 * The kernel's names say what to look for first: one lookup for most
	 * devices; a bound loop device's backing file is that lookup.
	 */
	if (has_prefix(name, "loop")) {
		r = sysfs_read_at(dirfd, "loop/backing_file", backing, sizeof(backing));
		have_backing = r >= 0;
		if (r < 0)
			backing[0] = '\0';
		has_loop = r >= 0 || (r != -ENOENT && sysfs_exists_at(dirfd, "loop") > 0);
	}
	if (has_loop)
		kind = LCLOUD_LAYER_LOOP;
	else if (has_prefix(name, "dm-") && sysfs_exists_at(dirfd, "dm") > 0)
		kind = LCLOUD_LAYER_DM;
	else if (sysfs_exists_at(dirfd, "partition") > 0)
		kind = LCLOUD_LAYER_PARTITION;
	else if (sysfs_exists_at(dirfd, "dm") > 0)
		kind = LCLOUD_LAYER_DM;
	else if (sysfs_exists_at(dirfd, "md") > 0)
		kind = LCLOUD_LAYER_MD;
	else if ((has_loop = sysfs_exists_at(dirfd, "loop") > 0) || has_prefix(name, "loop"))
		kind = LCLOUD_LAYER_LOOP;
	else
		kind = LCLOUD_LAYER_DISK;

	index = report_add_layer(p, kind, name, parent);
	if (index < 0)
		return index;
	r = add_common(dirfd, report_layer(p, index));
	if (r < 0)
		return r;

	if (kind == LCLOUD_LAYER_PARTITION) {
		char diskdir[SYSFS_PATH_MAX];

		r = fill_partition(dirfd, report_layer(p, index));
		if (r < 0)
			return r;
		/* the disk's folder is found from the canonical tree */
		if (has_prefix(devdir, "/sys/class/block/")) {
			r = sysfs_block_dir(ctx, name, canon, sizeof(canon));
			if (r < 0)
				return r;
			devdir = canon;
		}
		r = sysfs_partition_disk_dir(devdir, diskdir, sizeof(diskdir));
		if (r < 0)
			return r;
		r = resolve(ctx, p, diskdir, index, depth + 1);
		return r < 0 ? r : index;
	}

	/* Every whole device (dm, md, loop, disk) has its own queue limits. */
	r = block_limits_fill_layer(dirfd, report_layer(p, index), !(p->flags & LCLOUD_PROBE_NO_VERDICT));
	if (r < 0)
		return r;
	switch (kind) {
	case LCLOUD_LAYER_DM:
		r = fill_dm(ctx, p, index, dirfd);
		break;
	case LCLOUD_LAYER_MD:
		r = fill_md(dirfd, report_layer(p, index));
		break;
	case LCLOUD_LAYER_LOOP:
		r = fill_loop(ctx, dirfd, report_layer(p, index), has_loop, have_backing ? backing : NULL,
			      !(p->flags & LCLOUD_PROBE_NO_VERDICT));
		break;
	default:
		r = fill_disk(dirfd, report_layer(p, index));
		break;
	}
	if (r < 0)
		return r;
	/* A loop device stacks on a file, which is not followed: its slaves/ is always empty. */
	if (kind == LCLOUD_LAYER_DM || kind == LCLOUD_LAYER_MD || kind == LCLOUD_LAYER_DISK) {
		r = resolve_slaves(ctx, p, devdir, dirfd, index, depth);
		if (r < 0)
			return r;
	}
	return index;
}

static int resolve(const struct lcloud_ctx *ctx, struct lcloud_probe *p, const char *devdir, int parent,
		   int depth)
{
	int dirfd, r;

	if (depth > STACK_DEPTH_MAX)
		return report_note(p, NOTE_STACK_TOO_DEEP, parent,
				   "device stack deeper than %d levels at %s; not followed further",
				   STACK_DEPTH_MAX, path_basename(devdir));
	/* one path resolution per device; every attribute is read relative to it */
	dirfd = sysfs_open_dir(ctx, devdir);
	if (dirfd < 0)
		return dirfd;
	r = resolve_at(ctx, p, devdir, dirfd, parent, depth);
	close(dirfd);
	return r;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int resolve_slaves(const struct lcloud_ctx *ctx, struct lcloud_probe *p, const char *devdir, int dirfd,
			  int index, int depth)
{
	char *names[64];
	struct dirent *de;
	size_t n = 0;
	DIR *dir;
	int fd, r = 0;

	fd = openat(dirfd, "slaves", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* no slaves folder: a leaf */
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return 0;
	}
	while ((de = readdir(dir)) && n < ARRAY_SIZE(names)) {
		if (de->d_name[0] == '.')
			continue;
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			r = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(dir);
	/* Stable order, so that output and tests do not depend on readdir. */
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (size_t i = 0; i < n && r >= 0; i++) {
		char link[SYSFS_PATH_MAX], slavedir[SYSFS_PATH_MAX];

		r = path_printf(link, sizeof(link), "%s/slaves/%s", devdir, names[i]);
		if (r >= 0)
			r = sysfs_canonical(ctx, link, slavedir, sizeof(slavedir));
		if (r < 0) {
			r = report_note(p, NOTE_SLAVE_UNRESOLVED, index,
					"%s: cannot follow slave %s (%s)", path_basename(devdir), names[i],
					strerror(-r));
			continue;
		}
		r = resolve(ctx, p, slavedir, index, depth + 1);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	return r < 0 ? r : 0;
}

int stack_resolve(const struct lcloud_ctx *ctx, struct lcloud_probe *p, const char *devdir, int parent)
{
	return resolve(ctx, p, devdir, parent, 0);
}
