/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every block device: from udev on the live system, from sysfs under a sysroot. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devdb.h"
#include "sysfs.h"
#include "util.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* /sys/class/block lists disks and partitions; sort by device folder so partitions follow disks. */
static int foreach_sysfs(const struct lcloud_ctx *ctx, lcloud_blockdev_cb cb, void *userdata)
{
	char path[SYSFS_PATH_MAX];
	char **entries = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *dir;
	int r;

	r = ctx_path(ctx, "/sys/class/block", path, sizeof(path));
	if (r < 0)
		return r;
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		char link[SYSFS_PATH_MAX], canon[SYSFS_PATH_MAX], *entry;

		if (de->d_name[0] == '.')
			continue;
		if (path_printf(link, sizeof(link), "/sys/class/block/%s", de->d_name) < 0 ||
		    sysfs_canonical(ctx, link, canon, sizeof(canon)) < 0)
			continue;
		if (n == cap) {
			char **grown = realloc(entries, (cap = cap ? cap * 2 : 32) * sizeof(*entries));

			if (!grown) {
				r = -ENOMEM;
				break;
			}
			entries = grown;
		}
		entry = strdup(canon);
		if (!entry) {
			r = -ENOMEM;
			break;
		}
		entries[n++] = entry;
	}
	closedir(dir);
	if (r >= 0 && n > 0) { /* no devices: ENTRIES is NULL, which qsort must not get */
		qsort(entries, n, sizeof(*entries), cmp_str);
		for (size_t i = 0; i < n; i++) {
			r = cb(path_basename(entries[i]), userdata);
			if (r != 0)
				break;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(entries[i]);
	free(entries);
	return r;
}

LCLOUD_EXPORT int lcloud_blockdev_foreach(struct lcloud_ctx *ctx, lcloud_blockdev_cb cb, void *userdata)
{
	if (!ctx || !cb)
		return -EINVAL;
	if (ctx_has_sysroot(ctx))
		return foreach_sysfs(ctx, cb, userdata);
	return devdb_foreach_block(cb, userdata);
}
