/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysfs access: one attribute per read, no caching (values change), every
 * path under the sysroot. Callers that read many attributes of one device
 * open its folder once and read relative to it (the *_at functions).
 */
#include <dirent.h>
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

/* One read: a sysfs attribute hands out its whole value (at most a page) at once. */
static int read_value(int fd, char *buf, size_t size)
{
	ssize_t n;

	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return (int)n;
}

static int parse_u64(const char *buf, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (buf[0] < '0' || buf[0] > '9')
		return -EINVAL; /* strtoull would accept "-1" and spaces */
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || *end != '\0')
		return -EINVAL;
	*ret = v;
	return 0;
}

int sysfs_read_at(int dirfd, const char *attr, char *buf, size_t size)
{
	int fd, r;

	if (size == 0)
		return -EINVAL;
	fd = openat(dirfd, attr, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read_value(fd, buf, size);
	close(fd);
	return r;
}

int sysfs_read_u64_at(int dirfd, const char *attr, uint64_t *ret)
{
	char buf[64];
	int r;

	r = sysfs_read_at(dirfd, attr, buf, sizeof(buf));
	return r < 0 ? r : parse_u64(buf, ret);
}

int sysfs_exists_at(int dirfd, const char *attr)
{
	if (faccessat(dirfd, attr, F_OK, 0) == 0)
		return 1;
	return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
}

int sysfs_open_dir(const struct lcloud_ctx *ctx, const char *dir)
{
	char path[SYSFS_PATH_MAX];
	int fd, r;

	r = ctx_path(ctx, dir, path, sizeof(path));
	if (r < 0)
		return r;
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* DIR/ATTR under the sysroot, into PATH (SYSFS_PATH_MAX bytes). */
static int attr_path(const struct lcloud_ctx *ctx, const char *dir, const char *attr, char *path)
{
	char rel[SYSFS_PATH_MAX];
	int r = path_printf(rel, sizeof(rel), "%s/%s", dir, attr);

	return r < 0 ? r : ctx_path(ctx, rel, path, SYSFS_PATH_MAX);
}

int sysfs_read_attr(const struct lcloud_ctx *ctx, const char *dir, const char *attr,
		    char *buf, size_t size)
{
	char path[SYSFS_PATH_MAX];
	int r = attr_path(ctx, dir, attr, path);

	return r < 0 ? r : sysfs_read_at(AT_FDCWD, path, buf, size);
}

int sysfs_read_attr_u64(const struct lcloud_ctx *ctx, const char *dir, const char *attr,
			uint64_t *ret)
{
	char buf[64];
	int r;

	r = sysfs_read_attr(ctx, dir, attr, buf, sizeof(buf));
	return r < 0 ? r : parse_u64(buf, ret);
}

int sysfs_attr_exists(const struct lcloud_ctx *ctx, const char *dir, const char *attr)
{
	char path[SYSFS_PATH_MAX];
	int r = attr_path(ctx, dir, attr, path);

	return r < 0 ? r : access(path, F_OK) == 0;
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

int sysfs_join_link(const char *dir, const char *target, char *ret, size_t size)
{
	char buf[SYSFS_PATH_MAX];
	const char *comp;
	size_t len;
	int r;

	if (dir[0] != '/' || target[0] == '/')
		return -EINVAL;
	r = path_printf(buf, sizeof(buf), "%s", dir);
	if (r < 0)
		return r;
	len = strlen(buf);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	for (comp = target; *comp;) {
		size_t n = strcspn(comp, "/");

		if (n == 2 && comp[0] == '.' && comp[1] == '.') {
			char *slash = strrchr(buf, '/');

			if (len <= 1)
				return -ENOENT; /* above the root: a broken link, not a device */
			len = slash == buf ? 1 : (size_t)(slash - buf);
			buf[len] = '\0';
		} else if (n > 0 && !(n == 1 && comp[0] == '.')) {
			if (len + 1 + n >= sizeof(buf))
				return -ENAMETOOLONG;
			if (len > 1)
				buf[len++] = '/';
			memcpy(buf + len, comp, n);
			len += n;
			buf[len] = '\0';
		}
		comp += n;
		while (*comp == '/')
			comp++;
	}
	return path_printf(ret, size, "%s", buf);
}

/*
 * The folder a /sys/class or /sys/dev link points to. Those links are relative
 * and sit in real folders, so one readlink() and the lexical join give what
 * realpath() gives with a walk of every component; anything else goes the long way.
 */
static int link_dir(const struct lcloud_ctx *ctx, const char *link, char *ret_dir, size_t size)
{
	char full[SYSFS_PATH_MAX], target[SYSFS_PATH_MAX], parent[SYSFS_PATH_MAX];
	ssize_t n;
	int r;

	r = ctx_path(ctx, link, full, sizeof(full));
	if (r < 0)
		return r;
	n = readlink(full, target, sizeof(target) - 1);
	if (n < 0 && errno == ENOENT)
		return -ENOENT;
	if (n <= 0 || (size_t)n >= sizeof(target) - 1 || target[0] == '/')
		return sysfs_canonical(ctx, link, ret_dir, size);
	target[n] = '\0';
	r = path_printf(parent, sizeof(parent), "%s", link);
	if (r < 0)
		return r;
	*strrchr(parent, '/') = '\0';
	return sysfs_join_link(parent[0] ? parent : "/", target, ret_dir, size);
}

int sysfs_dev_dir(const struct lcloud_ctx *ctx, const char *type, unsigned int major,
		  unsigned int minor, char *ret_dir, size_t size)
{
	char link[SYSFS_PATH_MAX];
	int r;

	r = path_printf(link, sizeof(link), "/sys/dev/%s/%u:%u", type, major, minor);
	if (r < 0)
		return r;
	return link_dir(ctx, link, ret_dir, size);
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
	return link_dir(ctx, link, ret_dir, size);
}

int sysfs_partition_disk_dir(const char *partdir, char *ret_dir, size_t size)
{
	char *slash;
	int r = path_printf(ret_dir, size, "%s", partdir);

	if (r < 0)
		return r;
	slash = strrchr(ret_dir, '/');
	if (!slash || slash == ret_dir)
		return -EINVAL;
	*slash = '\0';
	return 0;
}

int sysfs_for_each_partition(const struct lcloud_ctx *ctx, const char *dir,
			     int (*fn)(const char *partdir, void *data), void *data)
{
	char full[SYSFS_PATH_MAX + 256];
	struct dirent *de;
	int r = 0;
	DIR *d;

	if (ctx_path(ctx, dir, full, sizeof(full)) < 0 || !(d = opendir(full)))
		return 0;
	while (!r && (de = readdir(d))) {
		char sub[SYSFS_PATH_MAX];

		if (de->d_name[0] != '.' && path_printf(sub, sizeof(sub), "%s/%s", dir, de->d_name) == 0 &&
		    sysfs_attr_exists(ctx, sub, "partition") > 0)
			r = fn(sub, data);
	}
	closedir(d);
	return r;
}
