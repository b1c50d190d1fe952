/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_FILESYSTEM_H
#define LCLOUD_FILESYSTEM_H

#include "compat.h"
#include "ctx.h"
#include "mountinfo.h"
#include "report.h"

struct fs_device {
	unsigned int major, minor; /* the block device the file's data is on; 0:0 if none */
	bool unresolved;           /* it has one, but which could not be told (the layer says why) */
};

/*
 * Adds the FILESYSTEM layer for the open file FD: mount (from mountinfo),
 * statfs block size, and the statx facts. Fills RET_DEV with the device to
 * walk down from. Returns the layer index.
 */
int filesystem_probe(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int fd,
		     struct fs_device *ret_dev);

struct mountinfo_entry;
/*
 * Where the data of the file FD (file system layer INDEX, mount MNT) is when
 * not on the mount's device DEV: moves DEV to an XFS realtime file's
 * realtime device, counts a btrfs file system's devices. Returns 0 or -ENOMEM.
 */
int fs_data_device(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int index, int fd,
		   const struct mountinfo_entry *mnt, struct fs_device *dev);

#endif
