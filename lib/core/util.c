/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "util.h"

int path_printf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int kernel_release_followed(const char *release)
{
	unsigned int major, minor;

	if (!release || sscanf(release, "%u.%u", &major, &minor) != 2)
		return -EINVAL;
	return major > FOLLOWED_KERNEL_MAJOR || (major == FOLLOWED_KERNEL_MAJOR && minor >= FOLLOWED_KERNEL_MINOR);
}
