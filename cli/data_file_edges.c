/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * advise on a data directory: the verdict speaks of new files, the data
 * files already there may hold pages that straddle two extents (a restore
 * with sparse copies onto ext4 bigalloc makes them). Such a page reaches
 * the device in two writes, whatever the device promises.
 *
 * Every data file the walk cannot read counts as unread, which keeps the
 * doublewrite buffer on: a directory it cannot list or enter, a data file
 * behind a symbolic link or on another file system mounted inside, a name
 * of a data file that is no regular file. Special files are never opened:
 * the walk opens O_PATH, checks the type on that descriptor, and reopens
 * the same inode through /proc/self/fd for FIEMAP.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data_file_edges.h"
#include "file_extents.h" /* built into lcloudctl too (meson.build) */

/* InnoDB keeps data files two levels down; deeper than this is no data directory's layout. */
#define DEPTH_MAX 64

struct walk {
	struct data_file_edges *ret;
	uint64_t page;
	dev_t dev; /* the file system the verdict is about */
};

/*
 * InnoDB's tablespaces: the system tablespace, file-per-table and general
 * tablespaces, MariaDB's undo001 and MySQL's undo_001 and CREATE UNDO
 * TABLESPACE's *.ibu.
 */
static bool is_innodb_file(const char *name)
{
	return fnmatch("ibdata*", name, 0) == 0 || fnmatch("*.ibd", name, 0) == 0 ||
	       fnmatch("*.ibu", name, 0) == 0 || fnmatch("undo[0-9][0-9][0-9]", name, 0) == 0 ||
	       fnmatch("undo_[0-9][0-9][0-9]", name, 0) == 0;
}

/* MariaDB's InnoDB Symbolic Link: the table's .ibd is in a DATA DIRECTORY elsewhere. */
static bool is_isl(const char *name)
{
	return fnmatch("*.isl", name, 0) == 0;
}

/* Returns 0, so that a step of the walk can end with it. */
static int unread(struct walk *w, const char *path, const char *why)
{
	w->ret->files++;
	if (!w->ret->unread++)
		snprintf(w->ret->unread_first, sizeof(w->ret->unread_first), "%s (%s)", path, why);
	return 0;
}

static int unread_errno(struct walk *w, const char *path, int err)
{
	char why[256];

	snprintf(why, sizeof(why), "%s%s", strerror(err),
		 err == EACCES || err == EPERM ? "; run as a user who can read the data directory" :
		 err == ENOENT ? "; it was removed or renamed while the directory was read: run again" : "");
	return unread(w, path, why);
}

static int read_file(struct walk *w, int dfd, const char *name, const char *path, const struct stat *seen)
{
	char self[64];
	struct file_edges e;
	struct stat st;
	int fd, rfd, r;

	fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return unread_errno(w, path, errno);
	/* the name may have been replaced since it was listed: read only the regular file it now names */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != seen->st_dev) {
		close(fd);
		return unread(w, path, "replaced while the directory was read");
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	rfd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (rfd < 0 && errno == ENOENT) {
		close(fd);
		return unread(w, path, "it cannot be opened again through /proc/self/fd: is /proc mounted?");
	}
	r = rfd < 0 ? -errno : file_edges_read(rfd, &e);
	if (rfd >= 0)
		close(rfd);
	close(fd);
	if (r < 0)
		return r == -E2BIG ? unread(w, path, "more than 1048576 extents") : unread_errno(w, path, -r);
	w->ret->files++;
	if (e.count && (e.not_placed || e.alignment < w->page) && !w->ret->split++) {
		snprintf(w->ret->split_first, sizeof(w->ret->split_first), "%s", path);
		w->ret->split_first_edge = e.worst;
	}
	return 0;
}

static int walk_dir(struct walk *w, int dfd, const char *path, bool foreign, unsigned int depth);

static int visit(struct walk *w, int dfd, const char *name, const char *path, bool foreign,
		 unsigned int depth)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return unread_errno(w, path, errno);
	if (S_ISDIR(st.st_mode)) {
		int fd;

		if (depth >= DEPTH_MAX)
			return unread(w, path, "more than 64 directories down: not read");
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return unread_errno(w, path, errno);
		/* another file system mounted inside: the verdict is not about its files */
		return walk_dir(w, fd, path, foreign || st.st_dev != w->dev, depth + 1);
	}
	if (S_ISLNK(st.st_mode)) {
		struct stat target;

		/* InnoDB follows it; this walk does not, the file behind it may be anywhere */
		if (is_innodb_file(name) || is_isl(name))
			return unread(w, path, "a symbolic link: the data file behind it is not read");
		if (fstatat(dfd, name, &target, 0) == 0 && S_ISDIR(target.st_mode))
			return unread(w, path, "a symbolic link to a directory: the data files in it are not read");
		return 0; /* leads to no directory and has no data file's name */
	}
	if (is_isl(name))
		return unread(w, path, "a .isl file: the table's data file is in a DATA DIRECTORY elsewhere; "
			      "run advise on that directory too");
	if (!is_innodb_file(name))
		return 0;
	if (!S_ISREG(st.st_mode))
		return unread(w, path, "not a regular file");
	if (foreign)
		return unread(w, path, "on another file system mounted inside the directory");
	return read_file(w, dfd, name, path, &st);
}

/* Takes DFD. */
static int walk_dir(struct walk *w, int dfd, const char *path, bool foreign, unsigned int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (!d) {
		close(dfd);
		return unread_errno(w, path, errno);
	}
	for (;;) {
		char sub[4096];

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				unread_errno(w, path, errno);
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		/* the path names the file in messages only; every open is relative to its directory */
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		visit(w, dirfd(d), de->d_name, sub, foreign, depth);
	}
	closedir(d);
	return 0;
}

int data_file_edges_scan(const char *dir, uint64_t page, struct data_file_edges *ret)
{
	struct walk w = { .ret = ret, .page = page };
	struct stat st;
	int fd;

	memset(ret, 0, sizeof(*ret));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	w.dev = st.st_dev;
	walk_dir(&w, fd, dir, false, 0);
	return 0;
}
