/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Probing a path: classify what the user pointed at, then run one probe per
 * layer, top down (file system, then the block device stack), then the checks
 * that read the finished layers. Each probe fills its own layer; a failure in
 * one becomes a note and the others still run.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "align.h"
#include "atomic_confirm.h"
#include "devdb.h"
#include "filesystem.h"
#include "nvme_layer.h"
#include "probe.h"
#include "scsi_layer.h"
#include "report.h"
#include "signature.h"
#include "stack.h"
#include "statx.h"
#include "sysfs.h"
#include "util.h"
#include "verdict.h"

#define LCLOUD_PROBE_KNOWN_FLAGS \
	(LCLOUD_PROBE_NOFOLLOW | LCLOUD_PROBE_NO_SIGNATURES | LCLOUD_PROBE_NO_DEVICE_QUERY |                 \
	 LCLOUD_PROBE_CONFIRM_ATOMIC | LCLOUD_PROBE_NO_VERDICT)

/* The stack below a file system's device; a device-less file system just ends there. */
static int probe_fs_stack(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int fs_index,
			  const struct fs_device *dev)
{
	char devdir[SYSFS_PATH_MAX];
	int r;

	if (dev->unresolved)
		return 0; /* the file system layer says why */
	if (dev->major == 0)
		return report_note(p, NOTE_NO_BLOCK_DEVICE, fs_index,
				   "the file system is not on a single block device (network, memory or "
				   "overlay file system): there is no device stack below it");
	r = sysfs_dev_dir(ctx, "block", dev->major, dev->minor, devdir, sizeof(devdir));
	if (r < 0)
		return report_note(p, NOTE_DEVICE_NOT_FOUND, fs_index,
				   "block device %u:%u of the file system not found in sysfs (%s)",
				   dev->major, dev->minor, strerror(-r));
	r = stack_resolve(ctx, p, devdir, fs_index);
	if (r == -ENOENT || r == -ENOTDIR)
		return report_note(p, NOTE_DEVICE_NOT_FOUND, fs_index,
				   "block device %u:%u of the file system not found in sysfs (%s)",
				   dev->major, dev->minor, strerror(-r));
	return r < 0 ? r : 0;
}

/* Open FD (regular file or O_TMPFILE file): file system layer, then the stack. */
static int probe_file_fd(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int fd)
{
	struct fs_device dev = { 0, 0, false };
	int index;

	index = filesystem_probe(ctx, p, fd, &dev);
	if (index < 0)
		return index;
	return probe_fs_stack(ctx, p, index, &dev);
}

/* The file system layer (the first layer) confirmed by live writes in directory DIRFD. */
static int confirm_in_dir(struct lcloud_probe *p, int dirfd)
{
	if (p->n_layers == 0 || p->layers[0].kind != LCLOUD_LAYER_FILESYSTEM)
		return 0;
	return atomic_confirm(p, 0, dirfd);
}

/* A regular file's live confirmation happens beside it, in its directory. */
static int confirm_beside(struct lcloud_probe *p)
{
	char *dir, *slash;
	int dirfd, r;

	if (!p->resolved_path || p->resolved_path[0] != '/' || strstr(p->resolved_path, " (deleted)"))
		return layer_add_missing(&p->layers[0], FACT_LIVE_RWF_ATOMIC_MAX_BYTES, LCLOUD_FACT_UNREADABLE, "live:pwritev2(RWF_ATOMIC)",
					 "the file's directory is not known (an unlinked file?): nothing was confirmed");
	dir = strdup(p->resolved_path);
	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (dirfd < 0)
		return layer_add_missing(&p->layers[0], FACT_LIVE_RWF_ATOMIC_MAX_BYTES, LCLOUD_FACT_UNREADABLE, "live:pwritev2(RWF_ATOMIC)",
					 "the file's directory could not be opened: nothing was confirmed");
	r = confirm_in_dir(p, dirfd);
	close(dirfd);
	return r;
}

/*
 * A directory stands for the files that will be created in it: probe a
 * nameless O_TMPFILE file there, which vanishes when closed and never
 * changes the directory. Where that is refused, fall back to the directory.
 */
static int probe_directory(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int dirfd,
			   const char *display)
{
	bool denied;
	int fd, r;

	fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0) {
		r = probe_file_fd(ctx, p, fd);
		close(fd);
		return r;
	}
	r = -errno;
	{
		int fallback_r = probe_file_fd(ctx, p, dirfd);

		if (fallback_r < 0)
			return fallback_r;
	}
	/* root refused (an immutable directory, a security policy): another user would not help */
	denied = (r == -EACCES || r == -EPERM) && geteuid() != 0;
	return report_note(p, denied ? NOTE_NEEDS_WRITE_ACCESS : NOTE_TMPFILE_REFUSED, 0,
			   "could not create a temporary file in %s (%s): the file system facts are "
			   "the directory's own, and file systems report atomic write limits only for "
			   "regular files; %s",
			   display, strerror(-r),
			   denied ? "run as a user who may write there, or probe a file in it"
				  : "probe a regular file in it instead");
}

/*
 * statx of a block device node (6.11+ fills atomic limits for the device
 * itself): of the open descriptor FD when there is one, else of NODE.
 */
static int add_bdev_statx(struct lcloud_probe *p, int index, int fd, const char *node)
{
	struct lcloud_statx stx;
	int r;

	r = fd >= 0 ? lcloud_sys_statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_PROBE_MASK, &stx)
		    : lcloud_sys_statx(AT_FDCWD, node, 0, STATX_BASIC_STATS | STATX_PROBE_MASK, &stx);
	if (r == -ENOENT)
		return 0; /* no node in /dev (a container, a device named by sysfs only): sysfs stands alone */
	if (r < 0)
		return report_note(p, NOTE_STATX_FAILED, index, "statx(%s) failed: %s",
				   node, strerror(-r));
	return statx_fill_layer(report_layer(p, index), &stx);
}

static int probe_block_dir(const struct lcloud_ctx *ctx, struct lcloud_probe *p, const char *devdir,
			   int fd, const char *node)
{
	int index;

	index = stack_resolve(ctx, p, devdir, -1);
	if (index < 0)
		return index;
	p->target_type = p->layers[index].kind == LCLOUD_LAYER_PARTITION ? LCLOUD_TARGET_PARTITION
									 : LCLOUD_TARGET_DISK;
	if ((fd >= 0 || node) && !ctx_has_sysroot(ctx) && !(p->flags & LCLOUD_PROBE_NO_VERDICT))
		return add_bdev_statx(p, index, fd, node ? node : p->path);
	return 0;
}

/*
 * /dev/ngXnY is the NVMe generic (passthrough) node of namespace nvmeXnY; the
 * facts are the namespace's. Returns -ENODEV for any other char device.
 */
static int probe_nvme_char(const struct lcloud_ctx *ctx, struct lcloud_probe *p, const char *chardir)
{
	char link[SYSFS_PATH_MAX], subsys[SYSFS_PATH_MAX], blockname[64], devdir[SYSFS_PATH_MAX];
	const char *name = path_basename(chardir);
	unsigned int ctrl, ns;
	int r;

	r = path_printf(link, sizeof(link), "%s/subsystem", chardir);
	if (r < 0)
		return r;
	if (sysfs_canonical(ctx, link, subsys, sizeof(subsys)) < 0 ||
	    !streq(path_basename(subsys), "nvme-generic"))
		return -ENODEV;
	if (sscanf(name, "ng%un%u", &ctrl, &ns) != 2)
		return -ENODEV;
	snprintf(blockname, sizeof(blockname), "nvme%un%u", ctrl, ns);
	r = sysfs_block_dir(ctx, blockname, devdir, sizeof(devdir));
	if (r < 0)
		return -ENXIO; /* the namespace has no block device (e.g. unsupported format) */
	p->target_type = LCLOUD_TARGET_NVME_CHAR;
	r = stack_resolve(ctx, p, devdir, -1);
	if (r < 0)
		return r;
	return report_note(p, NOTE_NVME_GENERIC, 0,
			   "%s is the NVMe generic (passthrough) node of namespace %s", name, blockname);
}

static int probe_open_fd(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int fd, const char *display,
			 uint32_t flags);
static int finish(const struct lcloud_ctx *ctx, struct lcloud_probe *p, uint32_t flags, int target_fd,
		  unsigned int depth);

/* Loops on files on loops: deeper than any real stack. */
#define BACKING_DEPTH_MAX 4

/*
 * The backing file of loop layer L, opened by the path sysfs names and kept
 * only when it is the file (or device) the kernel says the loop is bound
 * to: a descriptor, or -1 with a note saying why not.
 */
static int open_backing(struct lcloud_probe *p, int index, const char *path)
{
	const struct lcloud_layer *l = &p->layers[index];
	const char *dev = NULL;
	unsigned int maj, min;
	uint64_t ino = 0;
	struct stat st;
	int fd, r;

	if (layer_get_string(l, FACT_LOOP_BACKING_DEV, &dev) <= 0 || !dev ||
	    layer_get_u64(l, FACT_LOOP_BACKING_INODE, &ino) <= 0 || sscanf(dev, "%u:%u", &maj, &min) != 2)
		return -1; /* the facts say why: the verdict reads them */
	if (maj == 0)
		return -1; /* a file system on no block device: nothing below it promises anything */
	if (!path || strstr(path, " (deleted)")) {
		r = report_note(p, NOTE_LOOP_BACKING_NOT_FOLLOWED, index, "%s: its backing file has no name any more "
				"(deleted), so it is not probed", l->name);
		return r < 0 ? r : -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = report_note(p, NOTE_LOOP_BACKING_NOT_FOLLOWED, index, "%s: its backing file %s could not be opened "
				"(%s)", l->name, path, strerror(errno));
		return r < 0 ? r : -1;
	}
	if (fstat(fd, &st) < 0 ||
	    !(S_ISREG(st.st_mode) ? st.st_dev == makedev(maj, min) && st.st_ino == ino
				  : S_ISBLK(st.st_mode) && st.st_rdev == makedev(maj, min))) {
		close(fd);
		r = report_note(p, NOTE_LOOP_BACKING_NOT_FOLLOWED, index, "%s: the file at %s is not the one it is bound "
				"to (device %s, inode %" PRIu64 "): renamed, replaced, or seen from another mount "
				"namespace, so it is not probed", l->name, path, dev, ino);
		return r < 0 ? r : -1;
	}
	return fd;
}

/*
 * A loop device with direct I/O writes each request to its backing file (or
 * device) as one direct write (Linux 7.3, drivers/block/loop.c: lo_rw_aio):
 * the verdict follows it there, as a target of its own, probed here. The
 * nested probe writes nothing (no live RWF_ATOMIC check) and reads no
 * signatures. A failure is a note on the loop layer; the outer probe goes on.
 */
static int follow_loops(const struct lcloud_ctx *ctx, struct lcloud_probe *p, uint32_t flags, unsigned int depth)
{
	for (unsigned int i = 0; i < p->n_layers; i++) {
		struct lcloud_probe *sub;
		const char *path = NULL;
		bool dio = false;
		int fd, r;

		const char *release = NULL;

		if (p->layers[i].kind != LCLOUD_LAYER_LOOP || layer_get_bool(&p->layers[i], FACT_LOOP_DIO, &dio) <= 0 || !dio)
			continue;
		/* an older kernel's loop device is not followed (the verdict says why): its file needs no probe */
		if (layer_get_string(&p->layers[i], FACT_KERNEL_RELEASE, &release) > 0 && kernel_release_followed(release) == 0)
			continue;
		(void)layer_get_string(&p->layers[i], FACT_LOOP_BACKING_FILE, &path);
		if (depth >= BACKING_DEPTH_MAX) {
			r = report_note(p, NOTE_LOOP_BACKING_NOT_FOLLOWED, (int)i, "%s: loop devices over files on loop "
					"devices deeper than %d levels are not followed", p->layers[i].name, BACKING_DEPTH_MAX);
			if (r < 0)
				return r;
			continue;
		}
		fd = open_backing(p, (int)i, path);
		if (fd < -1)
			return fd;
		if (fd < 0)
			continue;
		sub = report_new(path);
		if (!sub) {
			close(fd);
			return -ENOMEM;
		}
		sub->flags = (flags & ~LCLOUD_PROBE_CONFIRM_ATOMIC) | LCLOUD_PROBE_NO_SIGNATURES;
		sub->resolved_path = strdup(path);
		r = sub->resolved_path ? probe_open_fd(ctx, sub, fd, path, sub->flags) : -ENOMEM;
		if (r >= 0)
			r = finish(ctx, sub, sub->flags, -1, depth + 1);
		close(fd);
		if (r == -ENOMEM) {
			lcloud_probe_free(sub);
			return r;
		}
		if (r < 0) {
			lcloud_probe_free(sub);
			r = report_note(p, NOTE_LOOP_BACKING_NOT_FOLLOWED, (int)i, "%s: probing its backing file %s failed "
					"(%s)", p->layers[i].name, path, strerror(-r));
			if (r < 0)
				return r;
			continue;
		}
		p->layers[i].backing = sub;
	}
	return 0;
}

/* TARGET_FD: a readable descriptor of the target device for its signatures, or -1 to open it by name. */
static int finish(const struct lcloud_ctx *ctx, struct lcloud_probe *p, uint32_t flags, int target_fd,
		  unsigned int depth)
{
	int r;

	r = devdb_add_identifiers(ctx, p);
	if (r >= 0 && !(flags & LCLOUD_PROBE_NO_DEVICE_QUERY))
		r = nvme_probe_layers(ctx, p);
	if (r >= 0 && !(flags & LCLOUD_PROBE_NO_DEVICE_QUERY))
		r = scsi_probe_layers(ctx, p);
	if (r >= 0 && !(flags & LCLOUD_PROBE_NO_SIGNATURES))
		r = signature_probe_layers(ctx, p, target_fd);
	if (r >= 0)
		r = align_check_stack(p);
	if (r >= 0 && !(flags & LCLOUD_PROBE_NO_VERDICT) && !ctx_has_sysroot(ctx))
		r = follow_loops(ctx, p, flags, depth);
	if (r >= 0 && !(flags & LCLOUD_PROBE_NO_VERDICT))
		r = verdict_compute(p);
	return r;
}

/* R, the probe proper's result: P finished and handed to the caller, or freed on failure; 0 or -errno. */
static int hand_over(const struct lcloud_ctx *ctx, struct lcloud_probe *p, uint32_t flags, int target_fd, int r,
		     struct lcloud_probe **ret_probe)
{
	if (r >= 0)
		r = finish(ctx, p, flags, target_fd, 0);
	if (r < 0) {
		lcloud_probe_free(p);
		return r;
	}
	*ret_probe = p;
	return 0;
}

/* FD is any open descriptor (O_PATH is enough); DISPLAY names it in notes. */
static int probe_open_fd(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int fd,
			 const char *display, uint32_t flags)
{
	char dir[SYSFS_PATH_MAX];
	struct stat st;
	int r;

	if (fstat(fd, &st) < 0)
		return -errno;
	switch (st.st_mode & S_IFMT) {
	case S_IFREG:
		p->target_type = LCLOUD_TARGET_REGULAR;
		r = probe_file_fd(ctx, p, fd);
		if (r >= 0 && (flags & LCLOUD_PROBE_CONFIRM_ATOMIC))
			r = confirm_beside(p);
		return r;
	case S_IFDIR:
		p->target_type = LCLOUD_TARGET_DIRECTORY;
		r = probe_directory(ctx, p, fd, display);
		if (r >= 0 && (flags & LCLOUD_PROBE_CONFIRM_ATOMIC))
			r = confirm_in_dir(p, fd);
		return r;
	case S_IFBLK:
		r = sysfs_dev_dir(ctx, "block", major(st.st_rdev), minor(st.st_rdev), dir, sizeof(dir));
		if (r < 0)
			return -ENODEV;
		return probe_block_dir(ctx, p, dir, fd, p->resolved_path ? p->resolved_path : display);
	case S_IFCHR:
		r = sysfs_dev_dir(ctx, "char", major(st.st_rdev), minor(st.st_rdev), dir, sizeof(dir));
		if (r < 0)
			return -ENODEV;
		return probe_nvme_char(ctx, p, dir);
	default:
		return -EBADFD; /* a FIFO or socket has no storage */
	}
}

/* Under a sysroot only device names can be looked up: /dev/NAME. */
static int probe_sysroot_path(const struct lcloud_ctx *ctx, struct lcloud_probe *p, const char *path)
{
	char dir[SYSFS_PATH_MAX], link[SYSFS_PATH_MAX];
	const char *name;

	if (!has_prefix(path, "/dev/"))
		return -EOPNOTSUPP;
	name = path + strlen("/dev/");
	if (sysfs_block_dir(ctx, name, dir, sizeof(dir)) == 0)
		return probe_block_dir(ctx, p, dir, -1, NULL);
	if (path_printf(link, sizeof(link), "/sys/class/nvme-generic/%s", name) == 0 &&
	    sysfs_canonical(ctx, link, dir, sizeof(dir)) == 0)
		return probe_nvme_char(ctx, p, dir);
	return -ENOENT;
}

LCLOUD_EXPORT int lcloud_probe_path(struct lcloud_ctx *ctx, const char *path, uint32_t flags,
				    struct lcloud_probe **ret_probe)
{
	struct lcloud_probe *p;
	struct stat st;
	int fd = -1, r;

	if (!ctx || !path || !*path || !ret_probe || (flags & ~LCLOUD_PROBE_KNOWN_FLAGS))
		return -EINVAL;
	p = report_new(path);
	if (!p)
		return -ENOMEM;
	p->flags = flags;

	if (ctx_has_sysroot(ctx)) {
		r = probe_sysroot_path(ctx, p, path);
		goto done;
	}
	if (lstat(path, &st) < 0) {
		r = -errno;
		goto done;
	}
	if (S_ISLNK(st.st_mode) && (flags & LCLOUD_PROBE_NOFOLLOW)) {
		r = -ELOOP;
		goto done;
	}
	/* O_PATH needs no read permission: an unprivileged user can still probe. */
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		goto done;
	}
	p->resolved_path = realpath(path, NULL);
	if (!p->resolved_path && errno == ENOENT) {
		/* /proc/self/fd/N of an unlinked file opens, but its link names no path: the kernel's name */
		char link[64], target[PATH_MAX];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			p->resolved_path = strdup(target);
		}
		errno = n > 0 ? ENOMEM : ENOENT;
	}
	if (!p->resolved_path) {
		r = -errno;
		goto done;
	}
	r = probe_open_fd(ctx, p, fd, p->resolved_path, flags);
done:
	if (fd >= 0)
		close(fd);
	return hand_over(ctx, p, flags, -1, r, ret_probe);
}

/* The probe of an open descriptor, named DISPLAY (NULL: what /proc/self/fd says). */
static int probe_descriptor(struct lcloud_ctx *ctx, int fd, const char *display, uint32_t flags, int target_fd,
			    struct lcloud_probe **ret_probe)
{
	char link[64], target[PATH_MAX];
	struct lcloud_probe *p;
	ssize_t n;
	int r;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	p = report_new(display ? display : n > 0 ? target : link);
	if (!p)
		return -ENOMEM;
	p->flags = flags;
	if (n > 0 && target[0] == '/') {
		p->resolved_path = strdup(target);
		if (!p->resolved_path) {
			lcloud_probe_free(p);
			return -ENOMEM;
		}
	}
	r = probe_open_fd(ctx, p, fd, p->path, flags);
	return hand_over(ctx, p, flags, target_fd, r, ret_probe);
}

LCLOUD_EXPORT int lcloud_probe_fd(struct lcloud_ctx *ctx, int fd, uint32_t flags,
				  struct lcloud_probe **ret_probe)
{
	if (!ctx || fd < 0 || !ret_probe || (flags & ~LCLOUD_PROBE_KNOWN_FLAGS))
		return -EINVAL;
	if (ctx_has_sysroot(ctx))
		return -EOPNOTSUPP; /* a descriptor is always of the live system */
	return probe_descriptor(ctx, fd, NULL, flags, -1, ret_probe);
}

int probe_io_target(struct lcloud_ctx *ctx, int fd, const char *display, struct lcloud_probe **ret_probe)
{
	if (ctx_has_sysroot(ctx))
		return -EOPNOTSUPP;
	return probe_descriptor(ctx, fd, display, 0, fd, ret_probe);
}

LCLOUD_EXPORT int lcloud_probe_blockdev(struct lcloud_ctx *ctx, const char *name, uint32_t flags,
					struct lcloud_probe **ret_probe)
{
	char dir[SYSFS_PATH_MAX], node[300];
	struct lcloud_probe *p;
	int r;

	if (!ctx || !name || !ret_probe || (flags & ~LCLOUD_PROBE_KNOWN_FLAGS))
		return -EINVAL;
	if (!name[0] || strchr(name, '/') || streq(name, ".") || streq(name, ".."))
		return -EINVAL;
	/* the class link is opened as it is: its canonical folder is needed only for a partition's disk */
	r = path_printf(dir, sizeof(dir), "/sys/class/block/%s", name);
	if (r < 0)
		return r;
	r = path_printf(node, sizeof(node), "/dev/%s", name);
	if (r < 0)
		return r;
	p = report_new(node);
	if (!p)
		return -ENOMEM;
	p->flags = flags;
	r = probe_block_dir(ctx, p, dir, -1, ctx_has_sysroot(ctx) ? NULL : node);
	return hand_over(ctx, p, flags, -1, r, ret_probe);
}

/*
 * The pipeline made the report and attached the verdicts and the backing
 * files' probes to it, so it frees them all: the report never calls the
 * verdict, which reads the report.
 */
LCLOUD_EXPORT void lcloud_probe_free(struct lcloud_probe *p)
{
	if (!p)
		return;
	for (unsigned int i = 0; i < p->n_layers; i++) {
		lcloud_probe_free(p->layers[i].backing);
		p->layers[i].backing = NULL;
	}
	verdict_free(p->verdicts);
	p->verdicts = NULL;
	report_free(p);
}
