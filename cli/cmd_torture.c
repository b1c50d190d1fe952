/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl torture: a workload for power cuts. 'run' (cmd_torture_run.c)
 * writes self-describing pages and records what the target acknowledged;
 * 'verify' (cmd_torture_verify.c) holds the disk to that record afterwards.
 */
#include <stdio.h>

#include "args.h"
#include "commands.h"

/* torture's verbs, dispatched by name (systemd's Verb table, lcloudctl's command table in small) */
static const struct verb torture_verbs[] = {
	{ "run", cmd_torture_run, cmd_torture_run_usage },
	{ "verify", cmd_torture_verify, cmd_torture_verify_usage },
};

void cmd_torture_usage(FILE *out)
{
	for (size_t i = 0; i < sizeof(torture_verbs) / sizeof(torture_verbs[0]); i++) {
		if (i)
			fputc('\n', out);
		torture_verbs[i].usage(out);
	}
}

int cmd_torture(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	return dispatch_verb("lcloudctl torture", torture_verbs, sizeof(torture_verbs) / sizeof(torture_verbs[0]),
			     cmd_torture_usage, ctx, g, argc, argv);
}
