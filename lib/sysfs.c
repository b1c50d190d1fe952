/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysfs access: one attribute per read, no caching, every path under the sysroot. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysfs.h"
#include "util.h"

int sysfs_read_attr(const struct lcloud_ctx *ctx, const char *dir, const char *attr,
		    char *buf, size_t size)
{
	char rel[SYSFS_PATH_MAX], path[SYSFS_PATH_MAX];
	ssize_t n;
	int fd, r;

	if (size == 0)
		return -EINVAL;
	r = path_printf(rel, sizeof(rel), "%s/%s", dir, attr);
	if (r < 0)
		return r;
	r = ctx_path(ctx, rel, path, sizeof(path));
	if (r < 0)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return (int)n;
}

int sysfs_read_attr_u64(const struct lcloud_ctx *ctx, const char *dir, const char *attr,
			uint64_t *ret)
{
	char buf[64], *end;
	unsigned long long v;
	int r;

	r = sysfs_read_attr(ctx, dir, attr, buf, sizeof(buf));
	if (r < 0)
		return r;
	if (buf[0] < '0' || buf[0] > '9')
		return -EINVAL; /* strtoull would accept "-1" and spaces */
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || *end != '\0')
		return -EINVAL;
	*ret = v;
	return 0;
}

int sysfs_attr_exists(const struct lcloud_ctx *ctx, const char *dir, const char *attr)
{
	char rel[SYSFS_PATH_MAX], path[SYSFS_PATH_MAX];
	int r;

	r = path_printf(rel, sizeof(rel), "%s/%s", dir, attr);
	if (r < 0)
		return r;
	r = ctx_path(ctx, rel, path, sizeof(path));
	if (r < 0)
		return r;
	return access(path, F_OK) == 0;
}

int sysfs_canonical(const struct lcloud_ctx *ctx, const char *path, char *ret_dir, size_t size)
{
	char full[SYSFS_PATH_MAX], *canon;
	size_t rootlen = strlen(ctx->sysroot);
	int r;

	r = ctx_path(ctx, path, full, sizeof(full));
	if (r < 0)
		return r;
	canon = realpath(full, NULL);
	if (!canon)
		return -errno;
	/* A link leaving the sysroot means a broken capture, not a device. */
	if (strncmp(canon, ctx->sysroot, rootlen) != 0 || canon[rootlen] != '/') {
		free(canon);
		return -ENOENT;
	}
	r = path_printf(ret_dir, size, "%s", canon + rootlen);
	free(canon);
	return r;
}

int sysfs_dev_dir(const struct lcloud_ctx *ctx, const char *type, unsigned int major,
		  unsigned int minor, char *ret_dir, size_t size)
{
	char link[SYSFS_PATH_MAX];
	int r;

	r = path_printf(link, sizeof(link), "/sys/dev/%s/%u:%u", type, major, minor);
	if (r < 0)
		return r;
	return sysfs_canonical(ctx, link, ret_dir, size);
}

int sysfs_block_dir(const struct lcloud_ctx *ctx, const char *name, char *ret_dir, size_t size)
{
	char link[SYSFS_PATH_MAX];
	int r;

	if (!name || !name[0] || strchr(name, '/') || streq(name, ".") || streq(name, ".."))
		return -EINVAL;
	r = path_printf(link, sizeof(link), "/sys/class/block/%s", name);
	if (r < 0)
		return r;
	return sysfs_canonical(ctx, link, ret_dir, size);
}
