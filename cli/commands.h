/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl's commands and the verbs of nested commands: the table shape
 * lcloudctl.c and cmd_torture.c dispatch by name, and each command's entry
 * point and usage text.
 */
#ifndef LCLOUDCTL_COMMANDS_H
#define LCLOUDCTL_COMMANDS_H

#include <stddef.h>
#include <stdio.h>

#include <lcloud/lcloud.h>

#include "args.h"

struct command {
	const char *name;
	const char *summary;
	int (*run)(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
	void (*usage)(FILE *out);
};

/* A nested command's verbs (torture run, torture verify), dispatched by their name in argv[1] (verbs.c). */
struct verb {
	const char *name;
	int (*run)(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
	void (*usage)(FILE *out);
};
int dispatch_verb(const char *who, const struct verb *verbs, size_t n, void (*usage)(FILE *out),
		  struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);

int cmd_probe(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_probe_usage(FILE *out);
int cmd_list(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_list_usage(FILE *out);
int cmd_check(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_check_usage(FILE *out);
int cmd_advise(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_advise_usage(FILE *out);
int cmd_write(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_write_usage(FILE *out);
int cmd_read(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_read_usage(FILE *out);
int cmd_udev(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_udev_usage(FILE *out);
int cmd_diff(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_diff_usage(FILE *out);
int cmd_export(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_export_usage(FILE *out);
int cmd_replay(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_replay_usage(FILE *out);
int cmd_torture(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_torture_usage(FILE *out);
int cmd_torture_run(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_torture_run_usage(FILE *out);
int cmd_torture_verify(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_torture_verify_usage(FILE *out);

#endif
