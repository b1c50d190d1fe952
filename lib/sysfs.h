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

/* Canonical device directory (/sys/devices/...) of a device number; TYPE "block" or "char". */
int sysfs_dev_dir(const struct lcloud_ctx *ctx, const char *type, unsigned int major,
		  unsigned int minor, char *ret_dir, size_t size);
/* Canonical device directory of the block device called NAME. */
int sysfs_block_dir(const struct lcloud_ctx *ctx, const char *name, char *ret_dir, size_t size);
/* Canonical form of an absolute sysfs path (resolving links inside the sysroot). */
int sysfs_canonical(const struct lcloud_ctx *ctx, const char *path, char *ret_dir, size_t size);

#endif
