/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_MOUNT_TABLE_H
#define LCLOUD_MOUNT_TABLE_H

/*
 * Every mount the guard can see: this process's mount namespace first, then
 * each other mount namespace once, read from /proc/PID/mountinfo of one of
 * its processes (root sees them all). A device mounted only inside a
 * container is as mounted as one mounted here, and a file-backed mount's
 * source or an overlay's layers are paths in the namespace that mounted
 * them, reached from here through /proc/PID/root. Under a sysroot only the
 * captured /proc/self/mountinfo is read.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctx.h"

struct mount_rec {
	uint64_t mount_id;
	dev_t dev; /* the file system's st_dev (mountinfo's major:minor) */
	char *root, *mount_point, *fstype, *source, *super_options;
	pid_t ns_pid; /* a process of the namespace it was read from; 0: this process's own */
	char *buf;    /* owns the strings */
};

struct mount_table {
	struct mount_rec *m;
	unsigned int n, cap;
	unsigned int n_namespaces; /* this one included */
	unsigned int unreadable;   /* namespaces whose table could not be read */
};

/* Reads the tables; 0, or -errno when this namespace's own table cannot be read. */
int mount_table_read(const struct lcloud_ctx *ctx, struct mount_table *t);
void mount_table_free(struct mount_table *t);

/* The first mount of DEV, this namespace's before others'; NULL when none. */
const struct mount_rec *mount_table_find_dev(const struct mount_table *t, dev_t dev);

/*
 * PATH (as seen from the mount's namespace) as a path this process can
 * open: unchanged in this namespace, else under /proc/NS_PID/root. 0, or
 * -ENAMETOOLONG.
 */
int mount_rec_reach(const struct mount_rec *m, const char *path, char *buf, size_t size);

/* "at /mnt" or "at /mnt in the mount namespace of process 1234", for a person. */
void mount_rec_where(const struct mount_rec *m, char *buf, size_t size);

/* Is the file system one whose operations go to a server that may not answer (FUSE, NFS, SMB, 9p, ...)? */
bool fstype_may_stall(const char *fstype);

#endif
