/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_STORAGE_MAP_H
#define LCLOUD_STORAGE_MAP_H

/*
 * Where a block device's or a file's bytes really are. Two names can reach
 * the same storage: a partition and its disk, a loop device at an offset
 * over another block device, two loop devices over one image file, a dm or
 * md device over its members, an overlay file and the layer file that holds
 * its bytes. Names cannot tell whether a write to one lands in the other;
 * this maps each down to its base storage (a block device with nothing
 * below it, or a file's inode, and for a file on overlayfs also the layer
 * files that may hold it) as byte ranges, so that two share storage exactly
 * when their maps overlap. dm and md devices map onto the whole of each
 * member, and an overlay file onto every layer file it may be: more than
 * is used, which only ever refuses more. What cannot be followed leaves
 * the map unresolved, with the reason.
 *
 * The maps are made from a storage_env, read once per decision: the mount
 * tables of every namespace in view and each loop device's binding, which
 * is asked with a time bound (bounded_query.h), since it stats the backing
 * file on whatever file system that is.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctx.h"
#include "mount_table.h"

#define STORAGE_END UINT64_MAX /* a range that runs to the end of what it is on */

struct storage_piece {
	bool file;          /* the inode INO on device DEV; else the block device DEV itself */
	dev_t dev;
	uint64_t ino;
	uint64_t start, end; /* bytes [start, end) */
};

struct storage_map {
	struct storage_piece *pieces;
	unsigned int n, cap;
	dev_t *through; /* every block device the mapping passed through, the first one included */
	unsigned int n_through, cap_through;
	bool unresolved; /* some part could not be followed: WHY says which */
	char why[512];
	char backing[512]; /* the first backing file met, for a person ("" when none) */
};

/* A file's identities: its own inode and, on overlayfs, the layer files that may hold its bytes. */
struct file_ids {
	struct { dev_t dev; uint64_t ino; } *id;
	unsigned int n, cap;
	bool unresolved;
	char why[400];
};

struct loop_binding;

struct storage_env {
	const struct lcloud_ctx *ctx;
	struct mount_table mounts;
	struct loop_binding *loops;
	unsigned int n_loops;
};

/* Reads the mount tables and every loop device's binding; 0 or -errno (the mount table could not be read). */
int storage_env_open(const struct lcloud_ctx *ctx, struct storage_env *env);
void storage_env_close(struct storage_env *env);

/* Maps bytes [START, END) of block device DEV; 0 or -ENOMEM (unfollowed parts set UNRESOLVED). */
int storage_map_blockdev(struct storage_env *env, dev_t dev, uint64_t start, uint64_t end,
			 struct storage_map *m);
/* Maps the whole of each of a file's identities (a loop may sit on any part of it). */
int storage_map_file(struct storage_map *m, const struct file_ids *ids);
bool storage_maps_overlap(const struct storage_map *a, const struct storage_map *b);
bool storage_map_passes_through(const struct storage_map *m, dev_t dev);
bool storage_map_has_file(const struct storage_map *m);
void storage_map_free(struct storage_map *m);

/*
 * The identities of the file (DEV, INO) whose name is PATH in the mount
 * namespace of NS_PID (0: this one; PATH may be NULL or end in " (deleted)"
 * when no name is known): the file itself, and when DEV is an overlayfs
 * mount, each layer file that may hold its bytes (asked with a time bound).
 * MOUNT_ID, when not 0, is the overlay mount the name was opened through.
 * 0 or -ENOMEM.
 */
int file_ids_of(const struct storage_env *env, dev_t dev, uint64_t ino, const char *path, pid_t ns_pid,
		uint64_t mount_id, struct file_ids *ret);
/* The same for the regular file open at FD, by the name and mount it was opened through; its name into PATH. */
int file_ids_of_fd(const struct storage_env *env, int fd, char *path, size_t size, struct file_ids *ret);
void file_ids_free(struct file_ids *ids);

/*
 * A node in /dev for block device DEV (checked by stat to be that device),
 * into BUF; -ENOENT when none is found.
 */
int storage_find_node(const struct lcloud_ctx *ctx, dev_t dev, char *buf, size_t size);
/* DEV opened with FLAGS (O_EXCL for a claim): its /dev node, else a private one (root). -errno. */
int storage_open_dev(const struct lcloud_ctx *ctx, dev_t dev, int flags);

#endif
