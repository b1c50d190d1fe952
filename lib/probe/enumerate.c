/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every block device, from /sys/class/block (under the sysroot, if any): one
 * readdir and one readlink per device, as lsblk reads /sys/block, instead of
 * libudev's enumeration, which opens and stats every folder on the way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysfs.h"
#include "util.h"

#define LCLOUD_BLOCKDEV_KNOWN_FLAGS LCLOUD_BLOCKDEV_UNBOUND_LOOPS

struct blockdev_entry {
	char *devdir; /* canonical folder: sorting by it puts partitions after their disk */
	const char *name;
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct blockdev_entry *)a)->devdir, ((const struct blockdev_entry *)b)->devdir);
}

/* The canonical device folder of entry NAME of /sys/class/block (open as CLASSFD). */
static int entry_devdir(const struct lcloud_ctx *ctx, int classfd, const char *name, char *ret, size_t size)
{
	char target[SYSFS_PATH_MAX], link[SYSFS_PATH_MAX];
	ssize_t n;

	n = readlinkat(classfd, name, target, sizeof(target) - 1);
	if (n > 0 && (size_t)n < sizeof(target) - 1 && target[0] != '/') {
		target[n] = '\0';
		return sysfs_join_link("/sys/class/block", target, ret, size);
	}
	/* not a relative link (a hand-made tree): resolve it the long way */
	if (path_printf(link, sizeof(link), "/sys/class/block/%s", name) < 0)
		return -ENAMETOOLONG;
	return sysfs_canonical(ctx, link, ret, size);
}

/* A loop device with no file attached has no loop/ folder (and size 0); lsblk leaves it out. */
static bool is_unbound_loop(int classfd, const char *name, const char *devdir)
{
	char attr[300];

	/* loopN itself, not its partitions (loopNpM), which have no loop/ folder either */
	if (!has_prefix(name, "loop") || !name[4] || strspn(name + 4, "0123456789") != strlen(name + 4) ||
	    !has_prefix(devdir, "/sys/devices/virtual/block/") || !streq(path_basename(devdir), name))
		return false;
	if (path_printf(attr, sizeof(attr), "%s/loop", name) < 0)
		return false;
	return faccessat(classfd, attr, F_OK, 0) < 0 && errno == ENOENT;
}

LCLOUD_EXPORT int lcloud_blockdev_foreach_flags(struct lcloud_ctx *ctx, uint32_t flags, lcloud_blockdev_cb cb,
						void *userdata)
{
	struct blockdev_entry *entries = NULL;
	char path[SYSFS_PATH_MAX];
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *dir;
	int r;

	if (!ctx || !cb || (flags & ~LCLOUD_BLOCKDEV_KNOWN_FLAGS))
		return -EINVAL;
	r = ctx_path(ctx, "/sys/class/block", path, sizeof(path));
	if (r < 0)
		return r;
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		char devdir[SYSFS_PATH_MAX];

		if (de->d_name[0] == '.' || entry_devdir(ctx, dirfd(dir), de->d_name, devdir, sizeof(devdir)) < 0)
			continue;
		if (!(flags & LCLOUD_BLOCKDEV_UNBOUND_LOOPS) && is_unbound_loop(dirfd(dir), de->d_name, devdir))
			continue;
		if (n == cap) {
			struct blockdev_entry *grown = realloc(entries, (cap = cap ? cap * 2 : 64) * sizeof(*entries));

			if (!grown) {
				r = -ENOMEM;
				break;
			}
			entries = grown;
		}
		entries[n].devdir = strdup(devdir);
		if (!entries[n].devdir) {
			r = -ENOMEM;
			break;
		}
		entries[n].name = path_basename(entries[n].devdir);
		n++;
	}
	closedir(dir);
	if (r >= 0 && n > 0) { /* no devices: ENTRIES is NULL, which qsort must not get */
		qsort(entries, n, sizeof(*entries), cmp_entry);
		for (size_t i = 0; i < n; i++) {
			r = cb(entries[i].name, userdata);
			if (r != 0)
				break;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(entries[i].devdir);
	free(entries);
	return r;
}

LCLOUD_EXPORT int lcloud_blockdev_foreach(struct lcloud_ctx *ctx, lcloud_blockdev_cb cb, void *userdata)
{
	return lcloud_blockdev_foreach_flags(ctx, LCLOUD_BLOCKDEV_UNBOUND_LOOPS, cb, userdata);
}
