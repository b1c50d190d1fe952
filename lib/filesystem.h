/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_FILESYSTEM_H
#define LCLOUD_FILESYSTEM_H

#include "compat.h"
#include "ctx.h"
#include "report.h"

struct fs_device {
	unsigned int major, minor; /* the block device the file system is on; 0:0 if none */
};

/*
 * Adds the FILESYSTEM layer for the open file FD: mount (from mountinfo),
 * statfs block size, and the statx facts. Fills RET_DEV with the device to
 * walk down from. Returns the layer index.
 */
int filesystem_probe(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int fd,
		     struct fs_device *ret_dev);

/* Parses one /proc/self/mountinfo line; exposed for the unit tests. */
struct mountinfo_entry {
	uint64_t mount_id;
	unsigned int major, minor;
	char root[1024];
	char mount_point[1024];
	char fstype[64];
	char source[1024];
	char options[512];
};
int mountinfo_parse_line(const char *line, struct mountinfo_entry *ret);

#endif
