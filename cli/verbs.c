/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Nested commands by table: "lcloudctl torture run ..." finds "run" among the
 * command's verbs and hands it the arguments from there on (argv[0] is the
 * verb), as systemd's dispatch_verb() does. The verbs' own files never call
 * back into the command that dispatched them.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "escape.h"
#include "exit_codes.h"
#include "usage.h"

int dispatch_verb(const char *who, const struct verb *verbs, size_t n, void (*usage)(FILE *out),
		  struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return EXIT_OK;
	}
	for (size_t i = 0; argc >= 2 && i < n; i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].run(ctx, g, argc - 1, argv + 1);
	fprintf(stderr, "%s: give ", who);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s'%s'", i ? (i + 1 == n ? " or " : ", ") : "", verbs[i].name);
	if (argc >= 2)
		fprintf(stderr, " (not '%s')", tty_str(argv[1]));
	fputc('\n', stderr);
	usage_try_help(who);
	return EXIT_USAGE;
}
