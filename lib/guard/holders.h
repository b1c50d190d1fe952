/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_HOLDERS_H
#define LCLOUD_HOLDERS_H

#include <stdbool.h>
#include <stddef.h>

#include "ctx.h"

/*
 * Who holds the block device in sysfs folder DEVDIR, for a person: its
 * mounts and those of its partitions (or, for a partition, of its disk),
 * swap on it, the dm or md devices built on it (sysfs holders/) and the
 * processes that have it open. Writes "" when nothing is visible from here.
 */
void holders_describe(const struct lcloud_ctx *ctx, const char *devdir, char *buf, size_t size);

/*
 * The mount point of the first mount of the device in DEVDIR, or with
 * WITH_PARTITIONS of one of its partitions; NULL when there is none (or
 * on error). Free the result.
 */
char *holders_mount_point(const struct lcloud_ctx *ctx, const char *devdir, bool with_partitions);

/*
 * The first entry of DEVDIR/holders that is not one of the NAMES_TO_SKIP
 * (N_SKIP of them) into RET_NAME; 1 when found, 0 when none, -errno.
 */
int holders_first_other(const struct lcloud_ctx *ctx, const char *devdir, const char *const *names_to_skip,
			unsigned int n_skip, char *ret_name, size_t size);

#endif
