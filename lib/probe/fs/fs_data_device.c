/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which device holds a file's data, where that is not simply the device the
 * file system is mounted from: an XFS realtime file's data is on the
 * realtime device (mount option rtdev=), and a btrfs file system may span
 * several devices while its mount names one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "filesystem.h"
#include "sysfs.h"
#include "util.h"

#ifndef FS_XFLAG_REALTIME
#define FS_XFLAG_REALTIME 0x00000001
#endif
#ifndef FS_XFLAG_RTINHERIT
#define FS_XFLAG_RTINHERIT 0x00000100
#endif

/* The value of OPTION= in a comma-separated option list, copied to BUF; false when absent. */
static bool mount_option(const char *options, const char *option, char *buf, size_t size)
{
	size_t len = strlen(option);

	for (const char *o = options; o && *o; o = strchr(o, ',') ? strchr(o, ',') + 1 : NULL) {
		size_t n;

		if (strncmp(o, option, len) != 0 || o[len] != '=')
			continue;
		o += len + 1;
		n = strcspn(o, ",");
		if (n >= size)
			return false;
		memcpy(buf, o, n);
		buf[n] = '\0';
		return true;
	}
	return false;
}

/* The file's XFS flags (FS_IOC_FSGETXATTR); an O_PATH descriptor is opened again to ask. */
static int read_xflags(int fd, uint32_t *ret)
{
	struct fsxattr fsx;
	char link[64];
	int rfd, r = 0;

	if (ioctl(fd, FS_IOC_FSGETXATTR, &fsx) == 0) {
		*ret = fsx.fsx_xflags;
		return 0;
	}
	if (errno != EBADF)
		return -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	rfd = open(link, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (rfd < 0)
		return -errno;
	if (ioctl(rfd, FS_IOC_FSGETXATTR, &fsx) == 0)
		*ret = fsx.fsx_xflags;
	else
		r = -errno;
	close(rfd);
	return r;
}

/*
 * XFS: a file with the realtime flag (or, for a directory, the flag that new
 * files inherit it from) keeps its data on the realtime device, which only
 * the mount options name. Flags that cannot be read keep the data device's
 * stack for the facts; a realtime device that cannot be found leaves no
 * stack. Either way a missing fact says what was not read.
 */
static int xfs_realtime(struct lcloud_probe *p, int index, int fd, const struct mountinfo_entry *mnt,
			struct fs_device *dev)
{
	static const char flags_src[] = "ioctl:FS_IOC_FSGETXATTR";
	struct lcloud_layer *l = report_layer(p, index);
	char rtdev[1024], why[1400];
	bool has_rtdev = mount_option(mnt->super_options, "rtdev", rtdev, sizeof(rtdev)) ||
			 mount_option(mnt->options, "rtdev", rtdev, sizeof(rtdev));
	uint32_t xflags = 0;
	struct stat st;
	bool realtime;
	int r;

	r = read_xflags(fd, &xflags);
	if (r < 0) {
		/* without a realtime device no file can be realtime */
		if (!has_rtdev)
			return 0;
		snprintf(why, sizeof(why), "the file's XFS flags could not be read (%s), so whether its data is on "
			 "the realtime device %s or on the data device is unknown; run as a user who may read the "
			 "file", strerror(-r), rtdev);
		return layer_add_missing(l, FACT_REALTIME,
					 (-r == EACCES || -r == EPERM) && geteuid() != 0 ? LCLOUD_FACT_NEEDS_ROOT
											 : LCLOUD_FACT_UNREADABLE,
					 flags_src, why);
	}
	/* a directory probed itself (no temporary file in it): what files made in it inherit */
	realtime = (xflags & FS_XFLAG_REALTIME) ||
		   (p->target_type == LCLOUD_TARGET_DIRECTORY && (xflags & FS_XFLAG_RTINHERIT));
	if (!realtime && !has_rtdev)
		return 0;
	r = layer_add_bool(l, FACT_REALTIME, realtime, flags_src);
	if (r < 0 || !realtime)
		return r;
	if (!has_rtdev) {
		dev->unresolved = true;
		return layer_add_missing(l, FACT_REALTIME_DEVICE,
					 LCLOUD_FACT_UNREADABLE, "mountinfo:rtdev",
					 "the mount names no realtime device (rtdev=): the data is in an internal "
					 "realtime section, which liblcloud does not follow");
	}
	r = stat(rtdev, &st) < 0 ? -errno : S_ISBLK(st.st_mode) ? 0 : -ENOTBLK;
	if (r < 0) {
		snprintf(why, sizeof(why), "the realtime device the mount names, %s, is not a block device here (%s)",
			 rtdev, strerror(-r));
		dev->unresolved = true;
		return layer_add_missing(l, FACT_REALTIME_DEVICE,
					 LCLOUD_FACT_UNREADABLE, "mountinfo:rtdev", why);
	}
	r = layer_add_string(l, FACT_REALTIME_DEVICE, rtdev, "mountinfo:rtdev");
	if (r < 0)
		return r;
	dev->major = major(st.st_rdev);
	dev->minor = minor(st.st_rdev);
	return report_note(p, NOTE_REALTIME_FILE, index,
			   "the file is an XFS realtime file: its data is on the realtime device %s, not on the "
			   "data device %s that the mount names; the stack below is the realtime device's",
			   rtdev, mnt->source);
}

/* How many entries folder DIR (under the sysroot) has; -errno. */
static int count_entries(const struct lcloud_ctx *ctx, const char *dir)
{
	char path[4200];
	struct dirent *de;
	int n = 0, r;
	DIR *d;

	r = ctx_path(ctx, dir, path, sizeof(path));
	if (r < 0)
		return r;
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/*
 * btrfs: /sys/fs/btrfs/FSID/devices/ links every device of a file system.
 * The one that holds the mount's device tells how many devices data may
 * land on; the probe follows only the mount's.
 */
static int btrfs_devices(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int index,
			 const struct fs_device *dev)
{
	static const char src[] = "sysfs:fs/btrfs/devices";
	struct lcloud_layer *l = report_layer(p, index);
	char devdir[SYSFS_PATH_MAX], root[4200], path[4400];
	const char *name;
	struct dirent *de;
	int n = -ENOENT, r;
	DIR *d;

	if (dev->major == 0)
		return layer_add_missing(l, FACT_BTRFS_DEVICES, LCLOUD_FACT_UNREADABLE,
					 src, "the mount names no block device, so the file system's devices are unknown");
	r = sysfs_dev_dir(ctx, "block", dev->major, dev->minor, devdir, sizeof(devdir));
	if (r < 0)
		return layer_add_missing(l, FACT_BTRFS_DEVICES, LCLOUD_FACT_UNREADABLE,
					 src, "the mount's block device was not found in sysfs");
	name = path_basename(devdir);
	r = ctx_path(ctx, "/sys/fs/btrfs", root, sizeof(root));
	if (r < 0)
		return r;
	d = opendir(root);
	while (d && (de = readdir(d)) && n == -ENOENT) {
		struct stat st;

		if (de->d_name[0] == '.' || path_printf(path, sizeof(path), "%s/%s/devices/%s", root, de->d_name, name) < 0 ||
		    lstat(path, &st) < 0)
			continue;
		r = path_printf(path, sizeof(path), "/sys/fs/btrfs/%s/devices", de->d_name);
		n = r < 0 ? r : count_entries(ctx, path);
	}
	if (d)
		closedir(d);
	if (n <= 0) {
		char why[600];

		snprintf(why, sizeof(why), "/sys/fs/btrfs/*/devices/%s not found: which devices the file system spans "
			 "is unknown", name);
		return layer_add_missing(l, FACT_BTRFS_DEVICES, LCLOUD_FACT_UNREADABLE,
					 src, why);
	}
	return layer_add_u64(l, FACT_BTRFS_DEVICES, (uint64_t)n, src);
}

int fs_data_device(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int index, int fd,
		   const struct mountinfo_entry *mnt, struct fs_device *dev)
{
	if (streq(mnt->fstype, "xfs"))
		return xfs_realtime(p, index, fd, mnt, dev);
	if (streq(mnt->fstype, "btrfs"))
		return btrfs_devices(ctx, p, index, dev);
	return 0;
}
