/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runs lcloudctl advise's walk over a data directory (cli/data_file_edges.c)
 * on its own: on loop devices the verdict is never untorn, so advise never
 * reaches the walk there. Prints what it found, one "key value" a line.
 * Usage: data_files_scan DIR PAGE
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_file_edges.h"
#include "escape.h"

int main(int argc, char **argv)
{
	struct data_file_edges e;
	int r;

	if (argc != 3) {
		fputs("usage: data_files_scan DIR PAGE\n", stderr);
		return 2;
	}
	r = data_file_edges_scan(argv[1], strtoull(argv[2], NULL, 0), &e);
	printf("result %d\nfiles %lu\nsplit %lu\nunread %lu\n", r, e.files, e.split, e.unread);
	fputs("unread_first ", stdout);
	fputs_escaped(e.unread_first, stdout);
	fputs("\nsplit_first ", stdout);
	fputs_escaped(e.split_first, stdout);
	printf("\nsplit_first_edge %" PRIu64 "\n", e.split_first_edge);
	fflush(stdout); /* before any exit handler: a sanitizer's may fail where /proc is gone */
	return 0;
}
