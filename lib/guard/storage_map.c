/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Following a block device down to the storage that holds its bytes: a
 * partition onto its disk at its start, a loop device onto its backing file
 * or device at its offset (the kernel's own answer, LOOP_GET_STATUS64, and
 * sysfs loop/ where the device cannot be opened), dm and md devices onto
 * their members. The write guard compares these maps, because the loop
 * driver claims nothing below it: a second loop over a mounted image, or a
 * loop at an offset over a mounted disk, is invisible to holders/ and O_EXCL.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <dirent.h>

#include "storage_map.h"
#include "sysfs.h"
#include "util.h"

#define MAP_DEPTH_MAX 16 /* loops on loops on dm: deeper than any real stack */

static void map_unresolved(struct storage_map *m, const char *fmt, const char *a, const char *b)
{
	if (m->unresolved)
		return;
	m->unresolved = true;
	snprintf(m->why, sizeof(m->why), fmt, a, b);
}

static int add_piece(struct storage_map *m, bool file, dev_t dev, uint64_t ino, uint64_t start, uint64_t end)
{
	if (start >= end)
		return 0;
	if (m->n == m->cap) {
		unsigned int cap = m->cap ? m->cap * 2 : 4;
		struct storage_piece *p = realloc(m->pieces, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		m->pieces = p;
		m->cap = cap;
	}
	m->pieces[m->n++] = (struct storage_piece){ .file = file, .dev = dev, .ino = ino, .start = start, .end = end };
	return 0;
}

static int add_through(struct storage_map *m, dev_t dev)
{
	if (storage_map_passes_through(m, dev))
		return 0;
	if (m->n_through == m->cap_through) {
		unsigned int cap = m->cap_through ? m->cap_through * 2 : 4;
		dev_t *t = realloc(m->through, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		m->through = t;
		m->cap_through = cap;
	}
	m->through[m->n_through++] = dev;
	return 0;
}

/* start + len without wrapping; STORAGE_END stays the end */
static uint64_t add_clamped(uint64_t a, uint64_t b)
{
	return a > STORAGE_END - b ? STORAGE_END : a + b;
}

int storage_find_node(const struct lcloud_ctx *ctx, dev_t dev, char *buf, size_t size)
{
	char dir[SYSFS_PATH_MAX], uevent[1024], *name;
	struct stat st;

	snprintf(buf, size, "/dev/block/%u:%u", major(dev), minor(dev));
	if (stat(buf, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev)
		return 0;
	if (sysfs_dev_dir(ctx, "block", major(dev), minor(dev), dir, sizeof(dir)) < 0 ||
	    sysfs_read_attr(ctx, dir, "uevent", uevent, sizeof(uevent)) < 0)
		return -ENOENT;
	name = strstr(uevent, "DEVNAME=");
	if (!name)
		return -ENOENT;
	name += strlen("DEVNAME=");
	name[strcspn(name, "\n")] = '\0';
	if (path_printf(buf, size, "/dev/%s", name) < 0)
		return -ENAMETOOLONG;
	if (stat(buf, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev)
		return 0;
	return -ENOENT;
}

struct loop_backing {
	bool is_device;
	dev_t dev;    /* the backing block device, or the device of the backing file */
	uint64_t ino; /* the backing file */
	uint64_t offset, sizelimit;
};

/* The kernel's own record of what a loop device is bound to: needs the device opened (root). */
static int loop_backing_ioctl(const struct lcloud_ctx *ctx, dev_t dev, struct loop_backing *b)
{
	struct loop_info64 info;
	char node[SYSFS_PATH_MAX];
	int fd, r;

	if (ctx_has_sysroot(ctx) || storage_find_node(ctx, dev, node, sizeof(node)) < 0)
		return -ENOENT;
	fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	r = ioctl(fd, LOOP_GET_STATUS64, &info) < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	/* lo_rdevice is the backing inode's rdev: non-zero only for a device (huge_encode_dev = glibc's makedev) */
	b->is_device = info.lo_rdevice != 0;
	b->dev = b->is_device ? (dev_t)info.lo_rdevice : (dev_t)info.lo_device;
	b->ino = info.lo_inode;
	b->offset = info.lo_offset;
	b->sizelimit = info.lo_sizelimit;
	return 0;
}

/* Without root: sysfs names the backing file as a path, which stat() follows (in our mount namespace). */
static int loop_backing_sysfs(const struct lcloud_ctx *ctx, const char *dir, struct loop_backing *b,
			      char *path, size_t size)
{
	struct stat st;
	int r;

	r = sysfs_read_attr(ctx, dir, "loop/backing_file", path, size);
	if (r < 0)
		return r;
	if (strstr(path, " (deleted)") || stat(path, &st) < 0)
		return -ENOENT;
	b->is_device = S_ISBLK(st.st_mode);
	b->dev = b->is_device ? st.st_rdev : st.st_dev;
	b->ino = st.st_ino;
	if (sysfs_read_attr_u64(ctx, dir, "loop/offset", &b->offset) < 0 ||
	    sysfs_read_attr_u64(ctx, dir, "loop/sizelimit", &b->sizelimit) < 0)
		return -ENOENT;
	return 0;
}

static int map_members(const struct lcloud_ctx *ctx, const char *dir, struct storage_map *m, int depth);

static int map_dev(const struct lcloud_ctx *ctx, dev_t dev, uint64_t start, uint64_t end, struct storage_map *m,
		   int depth)
{
	char dir[SYSFS_PATH_MAX], devname[64];
	uint64_t sectors, size;
	int r;

	snprintf(devname, sizeof(devname), "%u:%u", major(dev), minor(dev));
	if (depth > MAP_DEPTH_MAX) {
		map_unresolved(m, "the devices below %s go deeper than %s levels", devname, "16");
		return 0;
	}
	r = add_through(m, dev);
	if (r < 0)
		return r;
	if (sysfs_dev_dir(ctx, "block", major(dev), minor(dev), dir, sizeof(dir)) < 0) {
		map_unresolved(m, "block device %s has no folder in sysfs%s", devname, "");
		return 0;
	}
	if (sysfs_read_attr_u64(ctx, dir, "size", &sectors) < 0) {
		map_unresolved(m, "the size of %s (%s) cannot be read", path_basename(dir), devname);
		return 0;
	}
	size = sectors * 512;
	if (end > size)
		end = size;
	if (start >= end)
		return 0;

	if (sysfs_attr_exists(ctx, dir, "partition") > 0) {
		char parent[SYSFS_PATH_MAX], buf[32];
		unsigned int maj, min;
		uint64_t first;

		if (sysfs_partition_disk_dir(dir, parent, sizeof(parent)) < 0 ||
		    sysfs_read_attr_u64(ctx, dir, "start", &first) < 0 ||
		    sysfs_read_attr(ctx, parent, "dev", buf, sizeof(buf)) < 0 || sscanf(buf, "%u:%u", &maj, &min) != 2) {
			map_unresolved(m, "where partition %s starts on its disk cannot be read%s", path_basename(dir), "");
			return 0;
		}
		return map_dev(ctx, makedev(maj, min), add_clamped(first * 512, start),
			       add_clamped(first * 512, end), m, depth + 1);
	}
	if (sysfs_attr_exists(ctx, dir, "loop") > 0) {
		struct loop_backing b;
		char path[512] = "";
		uint64_t lstart, lend;

		if (loop_backing_ioctl(ctx, dev, &b) < 0 &&
		    loop_backing_sysfs(ctx, dir, &b, path, sizeof(path)) < 0) {
			map_unresolved(m, "what %s is bound to cannot be read (LOOP_GET_STATUS64 needs root, and its "
				       "backing file %s cannot be found by name)", path_basename(dir),
				       path[0] ? path : "(unnamed)");
			return 0;
		}
		if (!m->backing[0]) {
			if (!path[0])
				sysfs_read_attr(ctx, dir, "loop/backing_file", path, sizeof(path));
			snprintf(m->backing, sizeof(m->backing), "%s", path);
		}
		lstart = add_clamped(b.offset, start);
		lend = add_clamped(b.offset, end);
		if (b.sizelimit && lend > add_clamped(b.offset, b.sizelimit))
			lend = add_clamped(b.offset, b.sizelimit);
		if (b.is_device)
			return map_dev(ctx, b.dev, lstart, lend, m, depth + 1);
		/* a file can grow under the loop: the loop's end is where its size says, the file's is open */
		return add_piece(m, true, b.dev, b.ino, lstart, lend);
	}
	if (sysfs_attr_exists(ctx, dir, "slaves") > 0) {
		int n = map_members(ctx, dir, m, depth);

		if (n != 0)
			return n < 0 ? n : 0;
	}
	return add_piece(m, false, dev, 0, start, end);
}

/* dm and md: every member whole. Returns how many members were mapped (0: none, the device is its own base). */
static int map_members(const struct lcloud_ctx *ctx, const char *dir, struct storage_map *m, int depth)
{
	char slaves[SYSFS_PATH_MAX + 16], full[SYSFS_PATH_MAX + 256];
	struct dirent *de;
	int n = 0, r = 0;
	DIR *d;

	if (path_printf(slaves, sizeof(slaves), "%s/slaves", dir) < 0 || ctx_path(ctx, slaves, full, sizeof(full)) < 0 ||
	    !(d = opendir(full)))
		return 0;
	while (r >= 0 && (de = readdir(d))) {
		char sdir[SYSFS_PATH_MAX], buf[32];
		unsigned int maj, min;

		if (de->d_name[0] == '.')
			continue;
		n++;
		if (sysfs_block_dir(ctx, de->d_name, sdir, sizeof(sdir)) < 0 ||
		    sysfs_read_attr(ctx, sdir, "dev", buf, sizeof(buf)) < 0 || sscanf(buf, "%u:%u", &maj, &min) != 2) {
			map_unresolved(m, "member %s of %s cannot be found in sysfs", de->d_name, path_basename(dir));
			continue;
		}
		r = map_dev(ctx, makedev(maj, min), 0, STORAGE_END, m, depth + 1);
	}
	closedir(d);
	return r < 0 ? r : n;
}

int storage_map_blockdev(const struct lcloud_ctx *ctx, dev_t dev, uint64_t start, uint64_t end,
			 struct storage_map *m)
{
	return map_dev(ctx, dev, start, end, m, 0);
}

int storage_map_file(struct storage_map *m, dev_t dev, uint64_t ino)
{
	return add_piece(m, true, dev, ino, 0, STORAGE_END);
}

bool storage_maps_overlap(const struct storage_map *a, const struct storage_map *b)
{
	for (unsigned int i = 0; i < a->n; i++)
		for (unsigned int j = 0; j < b->n; j++) {
			const struct storage_piece *x = &a->pieces[i], *y = &b->pieces[j];

			if (x->file == y->file && x->dev == y->dev && x->ino == y->ino && x->start < y->end &&
			    y->start < x->end)
				return true;
		}
	return false;
}

bool storage_map_passes_through(const struct storage_map *m, dev_t dev)
{
	for (unsigned int i = 0; i < m->n_through; i++)
		if (m->through[i] == dev)
			return true;
	return false;
}

void storage_map_free(struct storage_map *m)
{
	if (!m)
		return;
	free(m->pieces);
	free(m->through);
	*m = (struct storage_map){ 0 };
}
