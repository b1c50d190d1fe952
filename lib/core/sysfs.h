/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading sysfs (under the context's sysroot). Paths are absolute, e.g. "/sys/block/vda". */
#ifndef LCLOUD_SYSFS_H
#define LCLOUD_SYSFS_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

#define SYSFS_PATH_MAX 4096

/* Reads DIR/ATTR into BUF without the trailing newline. -ENOENT when absent. */
int sysfs_read_attr(const struct lcloud_ctx *ctx, const char *dir, const char *attr,
		    char *buf, size_t size);
int sysfs_read_attr_u64(const struct lcloud_ctx *ctx, const char *dir, const char *attr,
			uint64_t *ret);
int sysfs_attr_exists(const struct lcloud_ctx *ctx, const char *dir, const char *attr);

/*
 * One device's attributes read relative to its open folder, as lsblk does:
 * the folder's path is resolved once, each attribute costs one openat(),
 * read() and close(). sysfs_open_dir() returns an O_PATH descriptor of DIR
 * (under the sysroot) or -errno; ATTR may be "queue/x" or "loop/dio".
 */
int sysfs_open_dir(const struct lcloud_ctx *ctx, const char *dir);
int sysfs_read_at(int dirfd, const char *attr, char *buf, size_t size);
int sysfs_read_u64_at(int dirfd, const char *attr, uint64_t *ret);
/* 1 when ATTR (a file or folder) exists under DIRFD, 0 when not, -errno. */
int sysfs_exists_at(int dirfd, const char *attr);

/* Canonical device directory (/sys/devices/...) of a device number; TYPE "block" or "char". */
int sysfs_dev_dir(const struct lcloud_ctx *ctx, const char *type, unsigned int major,
		  unsigned int minor, char *ret_dir, size_t size);
/* Canonical device directory of the block device called NAME. */
int sysfs_block_dir(const struct lcloud_ctx *ctx, const char *name, char *ret_dir, size_t size);
/* DIR + relative link TARGET with "." and ".." folded lexically; -ENOENT above the root. */
int sysfs_join_link(const char *dir, const char *target, char *ret, size_t size);
/* Canonical form of an absolute sysfs path (resolving links inside the sysroot). */
int sysfs_canonical(const struct lcloud_ctx *ctx, const char *path, char *ret_dir, size_t size);

/*
 * A partition's disk: in the canonical tree a partition's folder sits in
 * its disk's, so the disk's folder is PARTDIR without its last part.
 * 0, or -EINVAL for a path with no folder above it, -ENAMETOOLONG.
 */
int sysfs_partition_disk_dir(const char *partdir, char *ret_dir, size_t size);
/*
 * The partitions of the disk whose canonical folder is DIR: FN is called
 * with each subfolder that has a "partition" attribute, until it returns
 * non-zero, which is returned; 0 when it never does or DIR cannot be listed.
 */
int sysfs_for_each_partition(const struct lcloud_ctx *ctx, const char *dir,
			     int (*fn)(const char *partdir, void *data), void *data);

#endif
