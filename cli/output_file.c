/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A file written whole or not at all: a temporary file beside it, synced,
 * given its mode, then renamed over it, so that a reader (node_exporter's
 * textfile collector, a later 'lcloudctl diff') never sees half of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int write_file_atomically(const char *file, const char *text, size_t len, mode_t mode)
{
	char tmp[4200];
	int fd, r = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", file) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (size_t done = 0; done < len && r == 0;) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0)
			r = -errno;
		else
			done += (size_t)n;
	}
	/* mkstemp makes it 0600; the reader may be another user */
	if (r == 0 && (fsync(fd) != 0 || fchmod(fd, mode) != 0))
		r = -errno;
	if (close(fd) != 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, file) != 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}
