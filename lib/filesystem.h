/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_FILESYSTEM_H
#define LCLOUD_FILESYSTEM_H

#include "compat.h"
#include "ctx.h"
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

/*
 * One /proc/self/mountinfo line. The strings point into BUF, which the entry
 * owns (mountinfo_entry_free); they have no length limit, and SOURCE may be "".
 */
struct mountinfo_entry {
	uint64_t mount_id, parent_id;
	unsigned int major, minor;
	char *root, *mount_point, *options, *fstype, *source, *super_options;
	char *buf;
};
/* Parses one line (escapes undone); -EINVAL when it is not a mountinfo line. Exposed for the tests. */
int mountinfo_parse_line(const char *line, struct mountinfo_entry *ret);
void mountinfo_entry_free(struct mountinfo_entry *e);

/* Lines of mountinfo that did not parse: how many, and the first one's number (from 1). */
struct mountinfo_bad {
	unsigned int count, first_line;
};
/*
 * Calls CB for every entry of the context's mountinfo, in order, until it
 * returns non-zero (a negative value is returned as the error). CB may keep
 * the entry by copying it and setting its BUF to NULL. Lines that do not
 * parse are skipped and counted in BAD (may be NULL).
 */
typedef int (*mountinfo_cb)(struct mountinfo_entry *e, void *data);
int mountinfo_foreach(const struct lcloud_ctx *ctx, mountinfo_cb cb, void *data, struct mountinfo_bad *bad);

#endif
