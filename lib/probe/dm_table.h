/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The device-mapper table of a dm device (DM_TABLE_STATUS), behind a replaceable reader. */
#ifndef LCLOUD_DM_TABLE_H
#define LCLOUD_DM_TABLE_H

#include <stdint.h>

#include "ctx.h"

struct dm_target_line {
	uint64_t start;   /* sectors, in the dm device */
	uint64_t length;  /* sectors */
	char type[16];    /* "linear", "striped", ... */
	char params[256]; /* as dmsetup table prints them */
};

/*
 * Reads up to MAX targets of the dm device MAJOR:MINOR into TARGETS.
 * Returns the number of targets, or -errno (-EACCES without root,
 * -EOPNOTSUPP when reading from a captured tree).
 */
typedef int (*dm_table_reader)(const struct lcloud_ctx *ctx, unsigned int major, unsigned int minor,
			       struct dm_target_line *targets, int max);

int dm_table_read(const struct lcloud_ctx *ctx, unsigned int major, unsigned int minor,
		  struct dm_target_line *targets, int max);

/* Test seam: replace the reader (NULL restores the ioctl one). */
void dm_table_set_reader(dm_table_reader reader);

#endif
