/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Opening the queue's target once. The path is resolved a single time (an
 * O_PATH descriptor: a symlink the caller named is followed), the real
 * descriptor is reopened from it through /proc/self/fd and checked with
 * fstat to be the same inode, and from then on everything (the probe, the
 * write guard, the I/O) uses that descriptor: a name swapped underneath
 * cannot make the guard check one device and the queue write another.
 * Block devices opened for writing are claimed with O_EXCL, as mkfs and
 * wipefs do; an NVMe generic node is checked against sysfs to be the one
 * of the probed namespace, whose block device is claimed instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "holders.h"
#include "queue.h"
#include "report.h"
#include "sysfs.h"
#include "util.h"

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_rdev == b->st_rdev &&
	       (a->st_mode & S_IFMT) == (b->st_mode & S_IFMT);
}

/* The sysfs folder of character device RDEV when it is an NVMe generic node; -ENODEV otherwise. */
static int nvme_generic_dir(const struct lcloud_ctx *ctx, dev_t rdev, char *dir, size_t size)
{
	char link[SYSFS_PATH_MAX + 16], subsys[SYSFS_PATH_MAX];

	if (sysfs_dev_dir(ctx, "char", major(rdev), minor(rdev), dir, size) < 0 ||
	    path_printf(link, sizeof(link), "%s/subsystem", dir) < 0 ||
	    sysfs_canonical(ctx, link, subsys, sizeof(subsys)) < 0 || !streq(path_basename(subsys), "nvme-generic"))
		return -ENODEV;
	return 0;
}

/* The refusal of a block device that another holder has claimed: who, and why --force does not help. */
static int refuse_held(const struct lcloud_ctx *ctx, struct lcloud_queue *q, const char *path, dev_t rdev)
{
	char dir[SYSFS_PATH_MAX], who[4096] = "";

	if (sysfs_dev_dir(ctx, "block", major(rdev), minor(rdev), dir, sizeof(dir)) == 0)
		holders_describe(ctx, dir, who, sizeof(who));
	return queue_fail(q, -EBUSY, "%s is in use: the kernel refused to open it exclusively (O_EXCL): %s. A write "
			  "under a mounted file system, a dm or md device or another program that claimed the device "
			  "corrupts what they keep there, and their caches hide it; --force does not override this: "
			  "release the device first", path,
			  who[0] ? who : HOLDERS_INVISIBLE);
}

int queue_open_target(const struct lcloud_ctx *ctx, struct lcloud_queue *q, const char *path)
{
	int flags = (q->writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY;
	char self[64], dir[SYSFS_PATH_MAX];
	struct stat st, opened;
	int pfd, fd, r;

	/* O_PATH opens nothing yet (no device is touched) and needs no permission on the file itself */
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return queue_fail(q, -errno, "%s: %s", path, strerror(errno));
	if (fstat(pfd, &st) < 0) {
		r = queue_fail(q, -errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	switch (st.st_mode & S_IFMT) {
	case S_IFREG:
		break;
	case S_IFBLK:
		if (q->writable)
			flags |= O_EXCL; /* a block device's claim: refused while mounted or held */
		break;
	case S_IFDIR:
		r = queue_fail(q, -EISDIR, "%s is a directory: open a file in it", path);
		goto out;
	case S_IFCHR:
		/* opening an unknown character device may do things of its own: only NVMe generic nodes */
		if (nvme_generic_dir(ctx, st.st_rdev, dir, sizeof(dir)) < 0) {
			r = queue_fail(q, -ENODEV, "%s is a character device that is not an NVMe generic node "
				       "(/dev/ngXnY)", path);
			goto out;
		}
		break;
	default:
		r = queue_fail(q, -EBADFD, "%s is a FIFO or socket: it has no storage to read or write", path);
		goto out;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, flags);
	if (fd < 0) {
		r = -errno;
		if (r == -EBUSY && S_ISBLK(st.st_mode))
			r = refuse_held(ctx, q, path, st.st_rdev);
		else if (r == -ENOENT && access("/proc/self/fd", F_OK) < 0)
			r = queue_fail(q, -ENOSYS, "%s: cannot reopen it: /proc is not mounted", path);
		else
			r = queue_fail(q, r, "%s: cannot open it%s: %s", path, q->writable ? " for writing" : "",
				       strerror(-r));
		goto out;
	}
	if (fstat(fd, &opened) < 0 || !same_file(&st, &opened)) {
		close(fd);
		r = queue_fail(q, -ESTALE, "%s changed while it was being opened: nothing was done", path);
		goto out;
	}
	q->fd = fd;
	q->target_rdev = opened.st_rdev;
	q->target_mode = opened.st_mode;
	r = 0;
out:
	close(pfd);
	return r;
}

/* The block device layer of the probe's namespace (the disk an NVMe layer describes). */
static const struct lcloud_layer *namespace_disk(const struct lcloud_probe *p, const struct lcloud_layer *nvme)
{
	if (!nvme || nvme->parent < 0 || (unsigned int)nvme->parent >= p->n_layers)
		return NULL;
	return &p->layers[nvme->parent];
}

int queue_claim_namespace(const struct lcloud_ctx *ctx, struct lcloud_queue *q)
{
	const struct lcloud_layer *disk = NULL;
	char node[300];
	struct stat st;
	dev_t want;
	int fd;

	/* a generic node's probe starts at its namespace's block device */
	for (unsigned int i = 0; i < q->probe->n_layers && !disk; i++)
		if (q->probe->layers[i].kind == LCLOUD_LAYER_DISK)
			disk = &q->probe->layers[i];
	if (!disk || layer_get_devno(disk, &want) <= 0)
		return queue_fail(q, -ENODEV, "the namespace's block device is not known: the write guard cannot "
				  "check it");
	if (path_printf(node, sizeof(node), "/dev/%s", disk->name) < 0)
		return queue_fail(q, -ENAMETOOLONG, "device name too long: %s", disk->name);
	fd = open(node, O_RDONLY | O_EXCL | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == EBUSY)
			return refuse_held(ctx, q, node, want);
		return queue_fail(q, -errno, "cannot claim %s, the block device of the namespace, while writing "
				  "through its generic node: %s", node, strerror(errno));
	}
	if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != want) {
		close(fd);
		return queue_fail(q, -ESTALE, "%s is not the device %u:%u that sysfs names for the namespace: "
				  "nothing was written", node, major(want), minor(want));
	}
	q->hold_fd = fd;
	return 0;
}

int queue_open_generic_node(const struct lcloud_ctx *ctx, struct lcloud_queue *q, const struct lcloud_layer *nvme,
			    int *ret_fd)
{
	const struct lcloud_layer *disk = namespace_disk(q->probe, nvme);
	char ng[300], chardir[SYSFS_PATH_MAX], nsdir[SYSFS_PATH_MAX], *slash;
	unsigned int c, n;
	struct stat st;
	int fd, r;

	if (sscanf(nvme->name, "nvme%un%u", &c, &n) != 2 || !disk)
		return queue_fail(q, -ENODEV, "%s is not an NVMe namespace name", nvme->name);
	snprintf(ng, sizeof(ng), "/dev/ng%un%u", c, n);
	if (S_ISCHR(q->target_mode)) {
		/* the caller named the generic node: it was opened and probed already */
		*ret_fd = q->fd;
		return 0;
	}
	fd = open(ng, (q->writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return queue_fail(q, -errno, "cannot open %s for passthrough: %s%s", ng, strerror(errno),
				  errno == EACCES ? " (it needs read/write access to the generic node)" : "");
	/* the node must be this namespace's: its sysfs folder sits beside the namespace's block device */
	r = fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) ? -ENODEV : nvme_generic_dir(ctx, st.st_rdev, chardir,
										    sizeof(chardir));
	if (r == 0)
		r = sysfs_block_dir(ctx, disk->name, nsdir, sizeof(nsdir));
	if (r == 0) {
		slash = strrchr(chardir, '/');
		r = slash && streq(slash + 1, ng + 5) && strrchr(nsdir, '/') &&
				    (size_t)(strrchr(nsdir, '/') - nsdir) == (size_t)(slash - chardir) &&
				    !strncmp(chardir, nsdir, (size_t)(slash - chardir))
			    ? 0
			    : -ESTALE;
	}
	if (r < 0) {
		close(fd);
		return queue_fail(q, -ESTALE, "%s is not the generic node of namespace %s in sysfs: nothing was %s",
				  ng, disk->name, q->writable ? "written" : "read");
	}
	*ret_fd = fd;
	return 0;
}
