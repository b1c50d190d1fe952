/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_SWAPS_H
#define LCLOUD_SWAPS_H

#include <stdbool.h>

/*
 * Calls CB for every active swap area of /proc/swaps, with its path (octal
 * escapes undone) and whether the kernel calls it a file (else a block
 * device, "partition"), until CB returns non-zero. Returns that value, 0,
 * or -errno when /proc/swaps cannot be read. Nothing is stat()ed here: a
 * swap file's file system (NFS) may not answer, so callers ask it with a
 * bound (bounded_query.h).
 */
typedef int (*swaps_cb)(const char *path, bool is_file, void *data);
int swaps_foreach(swaps_cb cb, void *data);

#endif
