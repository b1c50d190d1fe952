/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A block device's node that nobody else sees (private_node.h). The first
 * way is a tmpfs created with fsopen() and fsmount() and never attached
 * to any mount namespace: the node is made in it with mknodat() and opened
 * with openat(), and the tmpfs goes away with the last descriptor. Where
 * the new mount API is not allowed (an older kernel, a seccomp filter), a
 * folder of mode 0700 is made in /dev (devtmpfs honours device nodes, where
 * /tmp and /run are often nodev), the node made and opened there, and both
 * removed before this returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "private_node.h"

#ifndef __NR_fsopen
#define __NR_fsopen 430 /* Linux 5.2; the same number on every architecture */
#define __NR_fsconfig 431
#define __NR_fsmount 432
#endif
#define PN_FSOPEN_CLOEXEC 0x00000001
#define PN_FSCONFIG_CMD_CREATE 6
#define PN_FSMOUNT_CLOEXEC 0x00000001

static int open_in_detached_tmpfs(dev_t dev, int flags)
{
	int fs, mnt, fd = -1, err;

	fs = (int)syscall(__NR_fsopen, "tmpfs", PN_FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	if (syscall(__NR_fsconfig, fs, PN_FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		err = -errno;
		close(fs);
		return err;
	}
	mnt = (int)syscall(__NR_fsmount, fs, PN_FSMOUNT_CLOEXEC, 0);
	err = mnt < 0 ? -errno : 0;
	close(fs);
	if (err < 0)
		return err;
	if (mknodat(mnt, "node", S_IFBLK | 0600, dev) < 0)
		err = -errno;
	else if ((fd = openat(mnt, "node", flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
		err = -errno;
	close(mnt);
	return fd >= 0 ? fd : err;
}

static int open_in_dev_folder(dev_t dev, int flags)
{
	char dir[] = "/dev/.lcloud-guard-XXXXXX", node[sizeof(dir) + 8];
	int fd, err = 0;

	if (!mkdtemp(dir))
		return -errno;
	snprintf(node, sizeof(node), "%s/node", dir);
	if (mknod(node, S_IFBLK | 0600, dev) < 0) {
		err = -errno;
		rmdir(dir);
		return err;
	}
	fd = open(node, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		err = -errno;
	unlink(node);
	rmdir(dir);
	return fd >= 0 ? fd : err;
}

int private_node_open(dev_t dev, int flags)
{
	int fd = open_in_detached_tmpfs(dev, flags);

	/* the device's own answer (EBUSY, ENXIO) is the answer; only a node that could not be made tries again */
	if (fd >= 0 || fd == -EBUSY || fd == -ENXIO || fd == -ENODEV || fd == -ENOMEDIUM)
		return fd;
	return open_in_dev_folder(dev, flags);
}
