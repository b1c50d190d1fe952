/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The file system layer: which file system and mount a file is on, its block
 * size, and what statx says about atomic writes and direct I/O for this file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "file_extents.h"
#include "filesystem.h"
#include "statx.h"
#include "util.h"

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U /* 5.8 */
#endif

struct mount_search {
	uint64_t mnt_id;
	unsigned int major, minor;
	struct mountinfo_entry found; /* owned once found.buf is set */
};

static int match_mount(struct mountinfo_entry *e, void *data)
{
	struct mount_search *s = data;

	if (s->mnt_id ? e->mount_id != s->mnt_id : (e->major != s->major || e->minor != s->minor))
		return 0;
	/* by id: the one; by device: the last one wins (the latest mount on top) */
	mountinfo_entry_free(&s->found);
	s->found = *e;
	e->buf = NULL;
	return s->mnt_id ? 1 : 0;
}

/* Finds the mount by id, or (kernels without STATX_MNT_ID) the last mount of the device. */
static int find_mount(const struct lcloud_ctx *ctx, uint64_t mnt_id, unsigned int major,
		      unsigned int minor, struct mountinfo_entry *ret, struct mountinfo_bad *bad)
{
	struct mount_search s = { .mnt_id = mnt_id, .major = major, .minor = minor };
	int r;

	r = mountinfo_foreach(ctx, match_mount, &s, bad);
	if (r < 0) {
		mountinfo_entry_free(&s.found);
		return r;
	}
	if (!s.found.buf)
		return -ENOENT;
	*ret = s.found;
	return 0;
}

/*
 * ext4 with bigalloc allocates in clusters larger than its blocks: the unit
 * that keeps a database page in one extent. The cluster size is only in the
 * superblock (1024 bytes in): s_log_block_size at 0x18, s_log_cluster_size at
 * 0x1c, s_magic 0xef53 at 0x38, s_feature_ro_compat at 0x64 (bigalloc 0x200).
 */
static int add_ext4_cluster(const struct lcloud_ctx *ctx, struct lcloud_layer *l, const char *source_dev)
{
	static const char src[] = "ext4:superblock:s_log_cluster_size";
	uint8_t sb[1024];
	uint32_t log_block, log_cluster, ro_compat;
	ssize_t n;
	int fd;

	if (ctx_has_sysroot(ctx) || !has_prefix(source_dev, "/dev/"))
		return 0;
	fd = open(source_dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		char why[1200];

		/* root refused: a device cgroup or security policy, not a missing privilege */
		if ((e == EACCES || e == EPERM) && geteuid() != 0)
			return layer_add_missing(l, FACT_CLUSTER_SIZE,
						 LCLOUD_FACT_NEEDS_ROOT, src, "reading the ext4 superblock needs root");
		snprintf(why, sizeof(why), "opening %s to read the ext4 superblock failed: %s%s", source_dev,
			 strerror(e), e == EACCES || e == EPERM ? " (refused even for root: a device cgroup or "
								  "security policy)" : "");
		return layer_add_missing(l, FACT_CLUSTER_SIZE, LCLOUD_FACT_UNREADABLE,
					 src, why);
	}
	n = pread(fd, sb, sizeof(sb), 1024);
	close(fd);
	if (n != (ssize_t)sizeof(sb) || sb[0x38] != 0x53 || sb[0x39] != 0xef)
		return layer_add_missing(l, FACT_CLUSTER_SIZE, LCLOUD_FACT_UNREADABLE,
					 src, "no ext4 superblock where expected");
	log_block = (uint32_t)sb[0x18] | (uint32_t)sb[0x19] << 8;
	log_cluster = (uint32_t)sb[0x1c] | (uint32_t)sb[0x1d] << 8;
	ro_compat = (uint32_t)sb[0x64] | (uint32_t)sb[0x65] << 8 | (uint32_t)sb[0x66] << 16 | (uint32_t)sb[0x67] << 24;
	if (log_block > 6 || log_cluster > 20)
		return layer_add_missing(l, FACT_CLUSTER_SIZE, LCLOUD_FACT_UNREADABLE,
					 src, "implausible block or cluster size in the superblock");
	/* without bigalloc the cluster is the block */
	return layer_add_u64(l, FACT_CLUSTER_SIZE,
			     1024ull << ((ro_compat & 0x200) ? log_cluster : log_block), src);
}

/* What FIEMAP says of a regular file's extents; plain_direct reads it (lcloud(7)). */
static int add_file_edges(struct lcloud_layer *l, int fd)
{
	char self[64];
	struct file_edges e = { 0 };
	int r, rfd;

	/* FIEMAP needs an open file, the probe holds an O_PATH one: open it again, for reading */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	rfd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (rfd < 0) {
		r = -errno;
	} else {
		r = file_edges_read(rfd, &e);
		close(rfd);
	}
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		const char *why = r == -E2BIG ? "more than 1048576 extents" : strerror(-r);

		r = layer_add_missing(l, FACT_EXTENTS, LCLOUD_FACT_UNREADABLE,
				      "ioctl:FS_IOC_FIEMAP", why);
		if (r >= 0)
			r = layer_add_missing(l, FACT_EXTENT_EDGE_ALIGNMENT,
					      LCLOUD_FACT_UNREADABLE, "ioctl:FS_IOC_FIEMAP", why);
		return r < 0 ? r : 0;
	}
	r = layer_add_u64(l, FACT_EXTENTS, e.count, "ioctl:FS_IOC_FIEMAP");
	if (r < 0)
		return r;
	if (e.count == 0)
		return 0; /* no data yet: a write allocates, nothing to meet */
	/* inline, tail-packed or encoded data is not where a direct write would put it */
	r = layer_add_u64(l, FACT_EXTENT_EDGE_ALIGNMENT, e.not_placed ? 1 : e.alignment,
			  "ioctl:FS_IOC_FIEMAP");
	if (r >= 0 && (e.not_placed || e.alignment < FILE_EDGES_ALIGN_CAP))
		r = layer_add_u64(l, FACT_EXTENT_EDGE_WORST, e.worst, "ioctl:FS_IOC_FIEMAP");
	return r < 0 ? r : 0;
}

static int filesystem_layer(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int fd,
			    const struct lcloud_statx *stx_in, const struct mountinfo_entry *found,
			    const struct mountinfo_bad *bad, struct fs_device *ret_dev);

int filesystem_probe(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int fd,
		     struct fs_device *ret_dev)
{
	struct mountinfo_entry mnt;
	struct mountinfo_bad bad;
	struct lcloud_statx stx;
	bool have_mount;
	int r;

	r = lcloud_sys_statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_MNT_ID | STATX_PROBE_MASK,
			     &stx);
	if (r < 0)
		return r;
	memset(&mnt, 0, sizeof(mnt));
	have_mount = find_mount(ctx, (stx.stx_mask & STATX_MNT_ID) ? stx.stx_mnt_id : 0,
				stx.stx_dev_major, stx.stx_dev_minor, &mnt, &bad) == 0;
	r = filesystem_layer(ctx, p, fd, &stx, have_mount ? &mnt : NULL, &bad, ret_dev);
	mountinfo_entry_free(&mnt);
	return r;
}

static int filesystem_layer(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int fd,
			    const struct lcloud_statx *stx_in, const struct mountinfo_entry *found,
			    const struct mountinfo_bad *bad, struct fs_device *ret_dev)
{
	struct mountinfo_entry mnt = { 0 };
	struct lcloud_statx stx = *stx_in;
	struct lcloud_layer *l;
	struct statfs sfs;
	bool have_mount = found != NULL;
	int index, r;

	if (found)
		mnt = *found;
	index = report_add_layer(p, LCLOUD_LAYER_FILESYSTEM, have_mount ? mnt.fstype : "unknown", -1);
	if (index < 0)
		return index;
	l = report_layer(p, index);
	if (bad->count) {
		r = report_note(p, NOTE_MOUNTINFO_UNPARSED, index,
				"%u line%s of /proc/self/mountinfo could not be parsed (the first is line %u): "
				"a mount described there is not seen", bad->count, bad->count == 1 ? "" : "s",
				bad->first_line);
		if (r < 0)
			return r;
	}

	if (have_mount) {
		r = layer_add_string(l, FACT_FSTYPE, mnt.fstype, "mountinfo");
		if (r >= 0)
			r = layer_add_string(l, FACT_MOUNT_POINT, mnt.mount_point, "mountinfo");
		if (r >= 0)
			r = layer_add_string(l, FACT_MOUNT_SOURCE, mnt.source, "mountinfo");
		if (r >= 0)
			r = layer_add_string(l, FACT_MOUNT_OPTIONS, mnt.options, "mountinfo");
		if (r < 0)
			return r;
	} else {
		r = report_note(p, NOTE_MOUNT_NOT_FOUND, index,
				"the mount of this file was not found in /proc/self/mountinfo");
		if (r < 0)
			return r;
	}
	{
		char dev[32];

		snprintf(dev, sizeof(dev), "%u:%u", stx.stx_dev_major, stx.stx_dev_minor);
		r = layer_add_string(l, FACT_DEV, dev, "statx");
		if (r < 0)
			return r;
	}
	if (fstatfs(fd, &sfs) == 0)
		r = layer_add_u64(l, FACT_BLOCK_SIZE, (uint64_t)sfs.f_bsize, "statfs:f_bsize");
	else
		r = layer_add_missing(l, FACT_BLOCK_SIZE,
				      LCLOUD_FACT_UNREADABLE, "statfs:f_bsize", strerror(errno));
	if (r < 0)
		return r;
	r = layer_add_u64(l, FACT_STX_BLKSIZE, stx.stx_blksize, "statx");
	if (r < 0)
		return r;
	r = statx_fill_layer(l, &stx);
	if (r < 0)
		return r;
	if (have_mount && streq(mnt.fstype, "ext4")) {
		r = add_ext4_cluster(ctx, l, mnt.source);
		if (r < 0)
			return r;
	}
	if (S_ISREG(stx.stx_mode)) {
		r = add_file_edges(l, fd);
		if (r < 0)
			return r;
	}

	ret_dev->major = stx.stx_dev_major;
	ret_dev->minor = stx.stx_dev_minor;
	/*
	 * Btrfs and others give files an anonymous device (major 0); a mount
	 * source naming a block device still tells which disk holds the data.
	 */
	if (ret_dev->major == 0 && have_mount && has_prefix(mnt.source, "/dev/")) {
		struct stat st;

		if (stat(mnt.source, &st) == 0 && S_ISBLK(st.st_mode)) {
			ret_dev->major = major(st.st_rdev);
			ret_dev->minor = minor(st.st_rdev);
		}
	}
	if (have_mount) {
		r = fs_data_device(ctx, p, index, fd, &mnt, ret_dev);
		if (r < 0)
			return r;
	}
	return index;
}
