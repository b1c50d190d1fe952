/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A path made absolute without resolving it: what a fingerprint keeps for a
 * later diff, and what an export labels its targets with, must name the same
 * file from any folder, yet a symbolic link the user named stays a link
 * (diff probes it anew, and the link may have moved on purpose).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"

int absolute_path(const char *path, char *buf, size_t size)
{
	char cwd[PATH_MAX];
	int n;

	if (path[0] == '/' || !path[0]) {
		n = snprintf(buf, size, "%s", path);
	} else {
		if (!getcwd(cwd, sizeof(cwd)))
			return -errno;
		/* "./x" and "x" alike; ".." is left for the kernel, as a symlink's target may need it */
		while (path[0] == '.' && path[1] == '/')
			path += 2;
		n = snprintf(buf, size, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", path);
	}
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}
