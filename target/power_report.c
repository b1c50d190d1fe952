/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The power report's file (--power-report): checked and made at start, so a
 * name the report could never go to (a directory, a device, a missing or
 * unwritable folder, a namespace's own file) is refused before the target
 * serves, and written whole at the cut, replacing what the name held, as
 * lcloudctl's output files are (cli/output_file.c): the report is written
 * into a file of its own beside the name, unnamed until it is complete
 * (O_TMPFILE, or a temporary name where the file system has no unnamed
 * files), synced, and renamed over the name. A symlink at the name is
 * replaced, never followed. A write that fails at the cut (a full file
 * system) leaves the name as it was and is an error the exit status says.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "power.h"
#include "target.h"

static const char *kind_name(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
	       : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* The folder PATH's name is in, into DIR. */
static void folder_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

static mode_t current_umask(void)
{
	mode_t m = umask(0);

	umask(m);
	return m;
}

int power_report_prepare(struct target *t, char *err, size_t err_len)
{
	const char *path = t->cfg.report_path;
	char dir[sizeof(t->cfg.report_path)], probe[sizeof(t->cfg.report_path) + 8];
	struct stat st;
	int fd;

	t->report_fd = -1;
	if (lstat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			snprintf(err, err_len, "is %s: the report is a regular file, made or replaced at the cut",
				 kind_name(st.st_mode));
			return -EISDIR;
		}
		for (unsigned int i = 0; S_ISREG(st.st_mode) && i < t->n_ns; i++) {
			struct stat ns;

			if (fstat(t->ns[i].fd, &ns) == 0 && ns.st_dev == st.st_dev && ns.st_ino == st.st_ino) {
				snprintf(err, err_len, "is namespace %u's file: the report would replace it", i + 1);
				return -EBUSY;
			}
		}
	} else if (errno != ENOENT) {
		snprintf(err, err_len, "%s", strerror(errno));
		return -errno;
	}
	folder_of(path, dir, sizeof(dir));
	/* an unnamed file in the folder now: the cut only writes it and gives it the name */
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (fd >= 0) {
		t->report_fd = fd;
		return 0;
	}
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
		snprintf(err, err_len, "cannot make a file in %s: %s", dir, strerror(errno));
		return -errno;
	}
	/* no unnamed files there: a temporary beside the name proves the folder takes one */
	snprintf(probe, sizeof(probe), "%s.XXXXXX", path);
	fd = mkostemp(probe, O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_len, "cannot make a file in %s: %s", dir, strerror(errno));
		return -errno;
	}
	close(fd);
	unlink(probe);
	return 0;
}

FILE *power_report_begin(struct target *t, char *tmp, size_t tmp_len)
{
	int fd;
	FILE *f;

	tmp[0] = '\0';
	if (t->report_fd >= 0) {
		fd = dup(t->report_fd);
	} else {
		snprintf(tmp, tmp_len, "%s.XXXXXX", t->cfg.report_path);
		fd = mkostemp(tmp, O_CLOEXEC);
		if (fd < 0)
			tmp[0] = '\0';
	}
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		tlog(t, "power report %s: %s: no report is written", t->cfg.report_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		if (tmp[0])
			unlink(tmp);
	}
	return f;
}

/* Gives the unnamed file a temporary name beside the report's, in TMP. */
static int name_tmpfile(struct target *t, char *tmp, size_t tmp_len)
{
	char self[64];

	snprintf(self, sizeof(self), "/proc/self/fd/%d", t->report_fd);
	for (unsigned int i = 0; i < 100; i++) {
		snprintf(tmp, tmp_len, "%s.%06x", t->cfg.report_path, (unsigned int)(random() & 0xffffff));
		if (linkat(AT_FDCWD, self, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	tmp[0] = '\0';
	return -errno;
}

int power_report_commit(struct target *t, FILE *f, char *tmp, size_t tmp_len)
{
	char dir[sizeof(t->cfg.report_path)];
	int r = 0, fd;

	if (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) < 0)
		r = -(errno ? errno : EIO);
	/* mkostemp made it 0600; the reader may be another user */
	if (r == 0 && fchmod(fileno(f), 0644 & ~current_umask()) < 0)
		r = -errno;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	if (r == 0 && t->report_fd >= 0)
		r = name_tmpfile(t, tmp, tmp_len);
	if (r == 0 && rename(tmp, t->cfg.report_path) < 0)
		r = -errno;
	if (r < 0) {
		tlog(t, "power report %s: %s: the report is not written (the name is as it was)", t->cfg.report_path,
		     strerror(-r));
		if (tmp[0])
			unlink(tmp);
		return r;
	}
	/* the rename is kept once the folder that records it is synced */
	folder_of(t->cfg.report_path, dir, sizeof(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		if (fsync(fd) < 0)
			r = -errno;
		close(fd);
	}
	if (r < 0)
		tlog(t, "power report %s: syncing its folder: %s", t->cfg.report_path, strerror(-r));
	return r;
}
