/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_STORAGE_MAP_H
#define LCLOUD_STORAGE_MAP_H

/*
 * Where a block device's bytes really are. Two names can reach the same
 * storage: a partition and its disk, a loop device at an offset over
 * another block device, two loop devices over one image file, a dm or md
 * device over its members. Names cannot tell whether a write to one lands
 * in the other; this maps each device down to its base storage (a block
 * device with nothing below it, or the inode of a loop's backing file) as
 * byte ranges, so that two devices share storage exactly when their maps
 * overlap. dm and md devices map onto the whole of each member: more than
 * their table uses, which only ever refuses more.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctx.h"

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

/* Maps bytes [START, END) of block device DEV; 0 or -ENOMEM (unfollowed parts set UNRESOLVED). */
int storage_map_blockdev(const struct lcloud_ctx *ctx, dev_t dev, uint64_t start, uint64_t end,
			 struct storage_map *m);
/* Maps the whole of a regular file (a loop may sit on any part of it). */
int storage_map_file(struct storage_map *m, dev_t dev, uint64_t ino);
bool storage_maps_overlap(const struct storage_map *a, const struct storage_map *b);
bool storage_map_passes_through(const struct storage_map *m, dev_t dev);
void storage_map_free(struct storage_map *m);

/*
 * A node in /dev for block device DEV (checked by stat to be that device),
 * into BUF; -ENOENT when none is found.
 */
int storage_find_node(const struct lcloud_ctx *ctx, dev_t dev, char *buf, size_t size);

#endif
