/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a file's extents meet, from FIEMAP. Plain C on a descriptor, nothing
 * of the probe's: lcloudctl builds it too, to look over a data directory.
 */
#ifndef LCLOUD_FILE_EXTENTS_H
#define LCLOUD_FILE_EXTENTS_H

#include <stdbool.h>
#include <stdint.h>

/* Edges aligned to more than this say nothing more about a page. */
#define FILE_EDGES_ALIGN_CAP ((uint64_t)1 << 30)

struct file_edges {
	uint64_t count;     /* extents */
	uint64_t alignment; /* the largest power of two every edge divides (FILE_EDGES_ALIGN_CAP at most) */
	uint64_t worst;     /* the first edge with that alignment */
	bool not_placed;    /* inline, tail-packed, encrypted or encoded data: not in blocks of its own */
};

/*
 * Reads every extent of FD, which must be open for reading (FIEMAP refuses
 * O_PATH). A page write across an edge is mapped in two pieces and reaches
 * the device as two writes. Returns 0 or -errno (-E2BIG: too many extents).
 */
int file_edges_read(int fd, struct file_edges *ret);

#endif
