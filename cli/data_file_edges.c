/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * advise on a data directory: the verdict speaks of new files, the data
 * files already there may hold pages that straddle two extents (a restore
 * with sparse copies onto ext4 bigalloc makes them). Such a page reaches
 * the device in two writes, whatever the device promises.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "../lib/file_extents.h" /* built into lcloudctl too (meson.build) */

static struct data_file_edges *scan;
static uint64_t scan_page;

/*
 * InnoDB's tablespaces: the system tablespace, file-per-table and general
 * tablespaces (.ibd), undo tablespaces (MariaDB undo001, MySQL 8 undo_001
 * and .ibu). Temporary tablespaces are not recovered after a crash.
 */
static bool is_innodb_file(const char *name)
{
	return fnmatch("ibdata*", name, 0) == 0 || fnmatch("*.ibd", name, 0) == 0 ||
	       fnmatch("undo[0-9][0-9][0-9]", name, 0) == 0 || fnmatch("undo_[0-9][0-9][0-9]", name, 0) == 0 ||
	       fnmatch("*.ibu", name, 0) == 0;
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct file_edges e;
	int fd, r;

	if (type != FTW_F || !S_ISREG(st->st_mode) || !is_innodb_file(path + ftw->base))
		return 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
	} else {
		r = file_edges_read(fd, &e);
		close(fd);
	}
	scan->files++;
	if (r < 0) {
		if (!scan->unread++)
			snprintf(scan->unread_first, sizeof(scan->unread_first), "%s (%s)", path, strerror(-r));
		return 0;
	}
	if (e.count && (e.not_placed || e.alignment < scan_page)) {
		if (!scan->split++) {
			snprintf(scan->split_first, sizeof(scan->split_first), "%s", path);
			scan->split_first_edge = e.worst;
		}
	}
	return 0;
}

int data_file_edges_scan(const char *dir, uint64_t page, struct data_file_edges *ret)
{
	int r;

	memset(ret, 0, sizeof(*ret));
	scan = ret;
	scan_page = page;
	/* the file system the verdict is about only: no symlinks, no other mounts */
	r = nftw(dir, visit, 64, FTW_PHYS | FTW_MOUNT);
	scan = NULL;
	return r < 0 ? -errno : 0;
}
