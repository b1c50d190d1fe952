/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A loop device's binding as the kernel keeps it (LOOP_GET_STATUS64 on its
 * node): the device of the backing file's file system (or the backing block
 * device) and the file's inode. sysfs names the backing file only as a path,
 * which may have been renamed, replaced or seen from another mount
 * namespace since; the verdict follows a backing file only when the file it
 * opens by that path is this one.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "loop_status.h"
#include "util.h"

#define SOURCE "ioctl:LOOP_GET_STATUS64"

static int missing(struct lcloud_layer *l, enum lcloud_fact_state state, const char *why)
{
	int r = layer_add_missing(l, FACT_LOOP_BACKING_DEV, state, SOURCE, why);

	return r < 0 ? r : layer_add_missing(l, FACT_LOOP_BACKING_INODE, state, SOURCE, why);
}

/* The loop device's own node: /dev/NAME, else /dev/block/MAJOR:MINOR, checked to be DEVNO. */
static int open_node(const struct lcloud_layer *l, dev_t devno)
{
	char node[300];
	struct stat st;
	int fd;

	for (int i = 0; i < 2; i++) {
		if (i == 0)
			snprintf(node, sizeof(node), "/dev/%s", l->name);
		else
			snprintf(node, sizeof(node), "/dev/block/%u:%u", major(devno), minor(devno));
		fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0) {
			if (errno == EACCES || errno == EPERM)
				return -errno;
			continue;
		}
		if (fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == devno)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

int loop_status_add(const struct lcloud_ctx *ctx, struct lcloud_layer *l)
{
	struct loop_info64 info;
	char dev[32];
	dev_t devno;
	int fd, r;

	if (ctx_has_sysroot(ctx))
		return missing(l, LCLOUD_FACT_NOT_PROVIDED, "a captured tree has no loop device to ask");
	if (layer_get_devno(l, &devno) <= 0)
		return missing(l, LCLOUD_FACT_UNREADABLE, "the loop device's number (sysfs dev) was not read");
	fd = open_node(l, devno);
	if (fd == -EACCES || fd == -EPERM)
		return missing(l, LCLOUD_FACT_NEEDS_ROOT, "opening the loop device to ask what it is bound to needs root");
	if (fd < 0)
		return missing(l, LCLOUD_FACT_UNREADABLE, "the loop device's node was not found in /dev");
	r = ioctl(fd, LOOP_GET_STATUS64, &info) < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return missing(l, r == -EACCES || r == -EPERM ? LCLOUD_FACT_NEEDS_ROOT : LCLOUD_FACT_UNREADABLE, strerror(-r));
	/* lo_rdevice is the backing inode's rdev: set only for a block device (huge_encode_dev, as glibc's makedev) */
	devno = info.lo_rdevice ? (dev_t)info.lo_rdevice : (dev_t)info.lo_device;
	snprintf(dev, sizeof(dev), "%u:%u", major(devno), minor(devno));
	r = layer_add_string(l, FACT_LOOP_BACKING_DEV, dev, SOURCE);
	return r < 0 ? r : layer_add_u64(l, FACT_LOOP_BACKING_INODE, info.lo_inode, SOURCE);
}
