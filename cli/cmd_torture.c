/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl torture: a workload for power cuts. 'run' (cmd_torture_run.c)
 * writes self-describing pages and records what the target acknowledged;
 * 'verify' (cmd_torture_verify.c) holds the disk to that record afterwards.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

void cmd_torture_usage(FILE *out)
{
	fputs("Usage: lcloudctl torture run TARGET --pages N --record FILE [options]\n"
	      "       lcloudctl torture verify TARGET --record FILE [options]\n"
	      "\n"
	      "run writes self-describing pages (every 512-byte block stamped with the run,\n"
	      "page, generation and CRC32C) in random order through one I/O path, and\n"
	      "appends each write the target acknowledged and flushed to the record FILE.\n"
	      "Cut the power (stop the VM hard) while it runs; then verify reads every page\n"
	      "and reports torn pages (old and new parts), lost acknowledged writes and\n"
	      "damaged blocks. A file TARGET is created or extended to hold the pages; a\n"
	      "device that is mounted or carries data is refused unless --force.\n"
	      "\n"
	      "run options:\n"
	      "      --page-size N     page size, 4K to 1M, a power of two (default 16K)\n"
	      "      --pages N         number of pages (required)\n"
	      "      --offset N        where page 0 starts in TARGET (default 0)\n"
	      "      --path PATH       rwf_atomic (default), plain_direct, passthrough or buffered\n"
	      "      --depth N         writes in flight per batch (default 8)\n"
	      "      --writes N        stop after N writes (default 4 x pages)\n"
	      "      --duration S      stop after S seconds\n"
	      "      --record FILE     the record of acknowledged writes (created; must not exist)\n"
	      "      --seed N          reproducible run id and page order\n"
	      "      --progress        progress once a second on stderr (default: only on a terminal)\n"
	      "  -f, --force           write to a device even if it is mounted or holds data\n"
	      "\n"
	      "verify options:\n"
	      "      --record FILE     the run's record (required)\n"
	      "      --offset N        where page 0 starts in TARGET (default: as recorded)\n"
	      "      --all             list every page, not only the ones with a problem\n"
	      "\n"
	      "  -o, --format FORMAT   normal (default) or json (or --output FORMAT)\n"
	      "  -h, --help            show this help\n"
	      "\n"
	      "Exit status of verify: 0 every page intact and no acknowledged write lost,\n"
	      "9 torn or damaged pages, 10 lost acknowledged writes (and no torn page).\n",
	      out);
}

int cmd_torture(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "run"))
		return cmd_torture_run(ctx, g, argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "verify"))
		return cmd_torture_verify(ctx, g, argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		cmd_torture_usage(stdout);
		return EXIT_OK;
	}
	fprintf(stderr, "lcloudctl torture: give 'run' or 'verify'\n");
	cmd_torture_usage(stderr);
	return EXIT_USAGE;
}
