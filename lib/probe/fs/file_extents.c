/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a file's extents meet. Direct I/O maps a write one extent at a time
 * (ext4 and XFS through iomap): a write that covers the end of one extent
 * and the start of the next, or a hole, leaves as two bios, whatever the
 * device promises. A data directory restored with sparse copies onto ext4
 * with bigalloc has such edges inside its pages.
 */
#include <errno.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "file_extents.h"

#define BATCH 256
/* A file may have millions of extents; past this many the answer is "not read". */
#define EXTENTS_MAX (1u << 20)

/* Flags that mean the data is not in whole blocks of its own on the device. */
#define NOT_PLACED (FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_NOT_ALIGNED | \
		    FIEMAP_EXTENT_DATA_ENCRYPTED | FIEMAP_EXTENT_ENCODED)

static uint64_t alignment_of(uint64_t edge)
{
	uint64_t a = edge & -edge;

	return edge == 0 || a > FILE_EDGES_ALIGN_CAP ? FILE_EDGES_ALIGN_CAP : a;
}

static void add_edge(struct file_edges *e, uint64_t at)
{
	uint64_t a = alignment_of(at);

	if (a < e->alignment) {
		e->alignment = a;
		e->worst = at;
	}
}

int file_edges_read(int fd, struct file_edges *e)
{
	struct fiemap *fm = calloc(1, sizeof(*fm) + BATCH * sizeof(struct fiemap_extent));
	uint64_t start = 0, prev_end = 0;
	bool last = false;
	int r = 0;

	if (!fm)
		return -ENOMEM;
	*e = (struct file_edges){ .alignment = FILE_EDGES_ALIGN_CAP };
	while (!last) {
		memset(fm, 0, sizeof(*fm));
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_extent_count = BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
			r = -errno;
			break;
		}
		if (fm->fm_mapped_extents == 0)
			break;
		for (unsigned int i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *x = &fm->fm_extents[i];

			/* two extents that touch are still two mappings: every start and end is an edge */
			add_edge(e, x->fe_logical);
			add_edge(e, x->fe_logical + x->fe_length);
			if (x->fe_flags & NOT_PLACED)
				e->not_placed = true;
			prev_end = x->fe_logical + x->fe_length;
			e->count++;
			if (x->fe_flags & FIEMAP_EXTENT_LAST)
				last = true;
		}
		if (e->count >= EXTENTS_MAX) {
			r = -E2BIG;
			break;
		}
		/* a map that does not move on would be asked again forever */
		if (!last && prev_end <= start) {
			r = -EIO;
			break;
		}
		start = prev_end;
	}
	free(fm);
	return r;
}
