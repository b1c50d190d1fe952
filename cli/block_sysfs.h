/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * block_sysfs.c: what list shows beside the probe (mounts, file system
 * type, transport, the tree's parents, the sort key); every path under
 * SYSROOT ("" for the live system).
 */
#ifndef LCLOUDCTL_BLOCK_SYSFS_H
#define LCLOUDCTL_BLOCK_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mount_entry {
	char *devno; /* "MAJ:MIN" */
	char *mount_point;
	char *fstype;
};
struct mount_table {
	struct mount_entry *entries;
	size_t n;
	bool read;
};
/* The first mount of DEVNO in /proc/self/mountinfo (read on the first call); NULL: not mounted. */
const struct mount_entry *mount_table_find(struct mount_table *t, const char *sysroot, const char *devno);
/* The mount of DEVNO after AFTER (NULL: the first), in mountinfo's order; NULL: no more. */
const struct mount_entry *mount_table_next(struct mount_table *t, const char *sysroot, const char *devno,
					   const struct mount_entry *after);
void mount_table_release(struct mount_table *t);
/* An unmounted file system's type as udev's blkid builtin recorded it (lsblk reads the same), or NULL. */
char *udev_fs_type(const char *sysroot, const char *devno);
/*
 * TRAN, from where DISK sits in sysfs, as lsblk: nvme (PCIe) or the NVMe
 * fabric, sata, usb, sas, fc, iscsi, virtio; NULL for dm, md, loop and buses not known.
 */
char *block_transport(const char *sysroot, const char *disk);
/* A partition's disk, or the slaves/ of a dm/md device: where --tree hangs NAME. */
int block_parents(const char *sysroot, const char *name, char ***ret, size_t *n_ret);
/*
 * NAME's device number from sysfs "dev" as a dev_t value (makedev), lsblk's
 * default sort key; -ENOENT or -EINVAL when it cannot be read.
 */
int block_devno(const char *sysroot, const char *name, uint64_t *ret);
/* "nvme0n1", "/dev/nvme0n1", "/dev/mapper/x" (a link to ../dm-0): the kernel's name. */
char *block_device_name(const char *sysroot, const char *arg);

#endif
