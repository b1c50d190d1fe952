/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_SWAPS_H
#define LCLOUD_SWAPS_H

#include <sys/stat.h>

/*
 * Calls CB for every active swap area of /proc/swaps that stat() finds, with
 * its path (octal escapes undone) and what stat() says of it (a block device
 * or a swap file), until CB returns non-zero. Returns that value, 0, or
 * -errno when /proc/swaps cannot be read.
 */
typedef int (*swaps_cb)(const char *path, const struct stat *st, void *data);
int swaps_foreach(swaps_cb cb, void *data);

#endif
