/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_HOLDERS_H
#define LCLOUD_HOLDERS_H

#include <stdbool.h>
#include <stddef.h>

#include "ctx.h"

/*
 * Who holds the block device in sysfs folder DEVDIR, for a person: its
 * mounts and those of its partitions (or, for a partition, of its disk) in
 * every mount namespace in view, swap on it, the dm or md devices built on
 * it (sysfs holders/), an ext4 file system whose external journal it is,
 * and the processes that have it open. Writes "" when nothing is visible
 * from here.
 */
void holders_describe(const struct lcloud_ctx *ctx, const char *devdir, char *buf, size_t size);

/* What to say when the kernel refuses an exclusive open and holders_describe() finds nobody. */
#define HOLDERS_INVISIBLE "the kernel names no holder that can be seen from here: a mount in a mount namespace " \
	"that no process here is in, a program in another PID namespace, or a user inside the kernel; " \
	"fuser -v or lsof on the device may tell"

/*
 * Is the device in DEVDIR the external journal of a mounted ext4 file
 * system? jbd2 names each journal in /proc/fs/jbd2 after its device: an
 * internal one "sdb1-8" (the file system's device and the journal inode),
 * an external one by the journal device's own name. ext4 holds it
 * exclusively, in whatever namespace it is mounted, and it appears in no
 * mount table.
 */
bool holders_is_external_journal(const struct lcloud_ctx *ctx, const char *devdir);

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
