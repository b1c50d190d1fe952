/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* advise on a data directory: InnoDB data files whose existing pages straddle two extents (data_file_edges.c). */
#ifndef LCLOUDCTL_DATA_FILE_EDGES_H
#define LCLOUDCTL_DATA_FILE_EDGES_H

#include <stdint.h>

struct data_file_edges {
	unsigned long files, split, unread;
	char split_first[4096];
	uint64_t split_first_edge;
	char unread_first[4200];
};
/* Walks DIR (one file system, no symlinks) for PAGE-byte pages across extent edges. Returns 0 or -errno. */
int data_file_edges_scan(const char *dir, uint64_t page, struct data_file_edges *ret);

#endif
