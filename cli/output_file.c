/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The files lcloudctl writes (output_file.h): a regular file whole or not at
 * all, through a temporary beside it that is synced, given its mode and then
 * renamed over the name, so that a reader (node_exporter's textfile
 * collector, a later 'lcloudctl diff', 'torture verify' on a crash image)
 * never sees half of it and a symlink planted at the name is replaced rather
 * than followed; a block device only through the write guard. A regular
 * file at the name is asked of the write guard too (lcloud_guard_check):
 * the rename writes nothing into it, but if it is a mounted loop device's
 * image, a file-backed mount's source or a swap file, its file system is
 * lost with its last name, so it is not replaced.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/loop.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_facts.h"
#include "exit_codes.h"
#include "held_file.h"
#include "lab_error.h"
#include "output_file.h"

/* Direct I/O to a device goes through this much aligned memory at a time. */
#define BOUNCE_SIZE (1u << 20)
#define BOUNCE_ALIGN 4096

static const char *kind_name(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket" : S_ISBLK(m) ? "a block device" : "not a regular file";
}

static mode_t current_umask(void)
{
	mode_t m = umask(0);

	umask(m);
	return m;
}

/* The device's size as its probe says (the "size" fact of the first block layer), or 0. */
static uint64_t probe_device_size(const struct lcloud_probe *p)
{
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++) {
		const struct lcloud_layer *l = lcloud_probe_get_layer(p, i);
		const struct lcloud_fact *f;

		if (lcloud_layer_get_kind(l) == LCLOUD_LAYER_FILESYSTEM)
			return 0;
		f = cli_fact(l, FACT_SIZE);
		if (f && lcloud_fact_get_state(f) == LCLOUD_FACT_PRESENT)
			return lcloud_fact_get_u64(f);
	}
	return 0;
}

/*
 * A regular file at PATH that another program has open is not replaced: the rename would leave that
 * program writing a file nobody can reach by name, and hand it this one at its next open (a database's
 * data file, a loop device's image). Asked at open and again just before the rename.
 */
static int refuse_held_name(const char *path, char *err, size_t err_size)
{
	char why[1500];
	int r = held_file_check_path(path, why, sizeof(why));

	if (r >= 0)
		return 0;
	return lab_fail(err, err_size, r, "%s; it is not replaced: a program that has it open would go on with a file "
			"no name reaches, and find this one at its next start; --force does not override this", why);
}

static int open_device(struct lcloud_ctx *ctx, struct output_file *of, char *err, size_t err_size)
{
	enum lcloud_target_type t;
	int r;

	/* the guard opens, claims (O_EXCL) and checks one descriptor: what it checked is what is written */
	r = lcloud_queue_open(ctx, of->path, 1, LCLOUD_BACKEND_SYNC,
			      LCLOUD_QUEUE_WRITE | (of->flags & OUTPUT_FILE_FORCE ? LCLOUD_QUEUE_FORCE : 0), &of->queue);
	if (r < 0) {
		of->queue = NULL;
		return lab_fail(err, err_size, r, "%s", lcloud_ctx_get_error(ctx)[0] ? lcloud_ctx_get_error(ctx) : strerror(-r));
	}
	/* the name was a block device when looked at; a symlink switched since then opens something else */
	t = lcloud_probe_get_target_type(lcloud_queue_get_probe(of->queue));
	if (t != LCLOUD_TARGET_DISK && t != LCLOUD_TARGET_PARTITION) {
		lcloud_queue_free(of->queue);
		of->queue = NULL;
		return lab_fail(err, err_size, -EBADFD, "%s changed while it was opened: it is no longer a block device; "
				"nothing was written", of->path);
	}
	of->device_size = probe_device_size(lcloud_queue_get_probe(of->queue));
	if (posix_memalign(&of->bounce, BOUNCE_ALIGN, BOUNCE_SIZE)) {
		of->bounce = NULL;
		return lab_fail(err, err_size, -ENOMEM, "cannot allocate a buffer for %s", of->path);
	}
	return 0;
}

/* The regular file at PATH is storage in use (the write guard's word): it is not replaced by a rename. */
static int refuse_replacing_storage_in_use(struct lcloud_ctx *ctx, const char *path, char *err, size_t err_size)
{
	struct lcloud_ctx *own = NULL;
	struct stat st;
	int fd, r;

	/* the name's own inode: O_PATH opens nothing, O_NOFOLLOW never looks through a link */
	fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : lab_fail(err, err_size, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
		close(fd); /* a symlink at the name is replaced, what it points at kept */
		return 0;
	}
	if (!ctx || lcloud_ctx_get_sysroot(ctx)[0]) {
		/* the live system is what a rename changes, whatever the command reads */
		r = lcloud_ctx_new(&own);
		if (r < 0) {
			close(fd);
			return lab_fail(err, err_size, r, "%s: %s", path, strerror(-r));
		}
		ctx = own;
	}
	r = lcloud_guard_check(ctx, fd, 0);
	close(fd);
	if (r == -EBUSY || r == -EACCES)
		r = lab_fail(err, err_size, r, "%s is not replaced: %s%s", path, lcloud_ctx_get_error(ctx),
			     r == -EBUSY ? "; a new file renamed over its name would take the file system with it" : "");
	else if (r < 0)
		r = lab_fail(err, err_size, r, "%s: the write guard cannot check it: %s", path, strerror(-r));
	lcloud_ctx_free(own);
	return r;
}

int output_file_open(struct lcloud_ctx *ctx, const char *path, mode_t mode, uint32_t flags, struct output_file *ret,
		     char *err, size_t err_size)
{
	struct stat lst, st;
	bool exists = true;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->fd = -1;
	ret->path = path;
	ret->mode = mode;
	ret->flags = flags;
	if (err && err_size)
		err[0] = '\0';
	if (!path[0])
		return lab_fail(err, err_size, -ENOENT, "an empty output name");
	if (lstat(path, &lst) < 0) {
		if (errno != ENOENT)
			return lab_fail(err, err_size, -errno, "%s: %s", path, strerror(errno));
		exists = false;
	}
	if (exists) {
		/* what a symlink points at decides only whether it names a device; it is never written through */
		if (stat(path, &st) < 0)
			st = lst;
		if (S_ISBLK(st.st_mode)) {
			if (!(flags & OUTPUT_FILE_DEVICE))
				return lab_fail(err, err_size, -EBADFD, "%s is a block device: this output is written to a "
						"regular file only", path);
			return open_device(ctx, ret, err, err_size);
		}
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
			return lab_fail(err, err_size, -EBADFD, "%s is %s%s: not written", path, kind_name(st.st_mode),
					S_ISLNK(lst.st_mode) ? " (through a symbolic link)" : "");
		if ((flags & OUTPUT_FILE_NO_REPLACE) || ((flags & OUTPUT_FILE_KEEP_LINKS) && S_ISLNK(lst.st_mode)))
			return lab_fail(err, err_size, -EEXIST, "%s exists%s", path,
					S_ISLNK(lst.st_mode) ? " (a symbolic link, never followed nor replaced)" : "");
		/* a symlink at the name is replaced, its target kept; a regular file loses that name */
		if (S_ISREG(lst.st_mode) && (r = refuse_replacing_storage_in_use(ctx, path, err, err_size)) < 0)
			return r;
		r = refuse_held_name(path, err, err_size);
		if (r < 0)
			return r;
	}
	if (snprintf(ret->tmp, sizeof(ret->tmp), "%s.XXXXXX", path) >= (int)sizeof(ret->tmp)) {
		ret->tmp[0] = '\0';
		return lab_fail(err, err_size, -ENAMETOOLONG, "%s: %s", path, strerror(ENAMETOOLONG));
	}
	/* mkostemp creates with O_CREAT|O_EXCL (mode 0600): a name planted there makes it pick another */
	ret->fd = mkostemp(ret->tmp, O_CLOEXEC | O_NOFOLLOW);
	if (ret->fd < 0) {
		int e = errno;

		ret->tmp[0] = '\0';
		return lab_fail(err, err_size, -e, "cannot create a file beside %s: %s", path, strerror(e));
	}
	return 0;
}

bool output_file_is_device(const struct output_file *of)
{
	return of->queue != NULL;
}

static int device_pwrite(struct output_file *of, const uint8_t *buf, uint64_t len, uint64_t offset, char *err,
			 size_t err_size)
{
	/* durable when each write completes: the queue has no flush of its own */
	const struct lcloud_hint fua = { .flags = LCLOUD_IO_FUA };

	while (len) {
		uint64_t n = len < BOUNCE_SIZE ? len : BOUNCE_SIZE;
		int64_t w;

		memcpy(of->bounce, buf, n);
		w = lcloud_queue_write(of->queue, of->bounce, n, offset, &fua, NULL);
		if (w < 0)
			return lab_fail(err, err_size, (int)w, "%s", lcloud_queue_get_error(of->queue)[0]
					     ? lcloud_queue_get_error(of->queue) : strerror((int)-w));
		if (w == 0)
			return lab_fail(err, err_size, -EIO, "%s: nothing written at offset %llu", of->path,
					(unsigned long long)offset);
		buf += w;
		len -= (uint64_t)w;
		offset += (uint64_t)w;
	}
	return 0;
}

int output_file_pwrite(struct output_file *of, const void *data, uint64_t len, uint64_t offset, char *err,
		       size_t err_size)
{
	const uint8_t *buf = data;

	if (of->queue)
		return device_pwrite(of, buf, len, offset, err, err_size);
	if (of->fd < 0)
		return lab_fail(err, err_size, -EBADF, "%s is closed", of->path);
	while (len) {
		ssize_t n = pwrite(of->fd, buf, len, (off_t)offset);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;

			return lab_fail(err, err_size, -e, "writing %s: %s", of->path, strerror(e));
		}
		buf += n;
		len -= (uint64_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

int output_file_write(struct output_file *of, const void *buf, uint64_t len, char *err, size_t err_size)
{
	int r = output_file_pwrite(of, buf, len, of->pos, err, err_size);

	if (r == 0)
		of->pos += len;
	return r;
}

/* The rename is kept only once the directory that records it is synced too. */
static void sync_directory_of(const char *path)
{
	char dir[4200];
	char *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int output_file_commit(struct output_file *of, char *err, size_t err_size)
{
	int r = 0;

	if (of->queue) {
		output_file_abort(of);
		return 0;
	}
	if (of->fd < 0 || !of->tmp[0])
		return lab_fail(err, err_size, -EBADF, "%s is closed", of->path);
	/* mkostemp made it 0600; the reader may be another user */
	if (fsync(of->fd) < 0 || fchmod(of->fd, of->mode & ~current_umask()) < 0)
		r = lab_fail(err, err_size, -errno, "writing %s: %s", of->path, strerror(errno));
	if (close(of->fd) < 0 && r == 0)
		r = lab_fail(err, err_size, -errno, "writing %s: %s", of->path, strerror(errno));
	of->fd = -1;
	if (r == 0 && (of->flags & OUTPUT_FILE_NO_REPLACE)) {
		/* link() never replaces: a name that appeared meanwhile is kept, and this one is refused */
		if (link(of->tmp, of->path) == 0)
			unlink(of->tmp);
		/* no hard links here (vfat): the rename that refuses to replace, where the file system has it */
		else if ((errno != EPERM && errno != EOPNOTSUPP) ||
			 renameat2(AT_FDCWD, of->tmp, AT_FDCWD, of->path, RENAME_NOREPLACE) < 0)
			r = lab_fail(err, err_size, -errno, "%s: %s", of->path, strerror(errno));
	} else if (r == 0 && ((r = refuse_held_name(of->path, err, err_size)) < 0 ||
				(r = refuse_replacing_storage_in_use(NULL, of->path, err, err_size)) < 0)) {
		/* opened, or made storage in use, since output_file_open() looked: the temporary goes, the name stays */
	} else if (r == 0 && rename(of->tmp, of->path) < 0) {
		r = lab_fail(err, err_size, -errno, "cannot put %s in place: %s", of->path, strerror(errno));
	}
	if (r < 0) {
		output_file_abort(of);
		return r;
	}
	of->tmp[0] = '\0';
	sync_directory_of(of->path);
	return 0;
}

void output_file_abort(struct output_file *of)
{
	if (of->fd >= 0)
		close(of->fd);
	of->fd = -1;
	if (of->tmp[0])
		unlink(of->tmp);
	of->tmp[0] = '\0';
	lcloud_queue_free(of->queue);
	of->queue = NULL;
	free(of->bounce);
	of->bounce = NULL;
}

const char *output_file_fd_path(const struct output_file *of, char *buf, size_t size)
{
	if (of->queue || of->fd < 0)
		return NULL;
	snprintf(buf, size, "/proc/self/fd/%d", of->fd);
	return buf;
}

bool output_file_same(const char *out, const char *input)
{
	struct stat a, b;

	if (stat(out, &a) < 0 || stat(input, &b) < 0)
		return false;
	if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return true;
	/* two nodes of one device (/dev/loop0, /dev/block/7:0) */
	return S_ISBLK(a.st_mode) && S_ISBLK(b.st_mode) && a.st_rdev == b.st_rdev;
}

int output_file_reaches(struct lcloud_ctx *ctx, const struct output_file *of, const char *input)
{
	int fd, r;

	if (!of->queue)
		return 0;
	fd = open(input, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	/* the descriptor the guard checked: another device under the same name cannot answer */
	r = lcloud_queue_reaches_file(ctx, of->queue, fd);
	close(fd);
	return r;
}

int output_file_exit_code(int err)
{
	if (err == -EEXIST || err == -EBUSY || err == -EROFS || err == -ESTALE)
		return EXIT_REFUSED;
	if (err == -EBADFD)
		return EXIT_WRONG_KIND;
	return exit_code_for_error(err);
}

int write_file_atomically(const char *file, const char *text, size_t len, mode_t mode, char *err, size_t err_size)
{
	struct output_file of;
	int r = output_file_open(NULL, file, mode, 0, &of, err, err_size);

	if (r == 0)
		r = output_file_write(&of, text, len, err, err_size);
	if (r == 0)
		r = output_file_commit(&of, err, err_size);
	output_file_abort(&of);
	return r;
}
