/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUDCTL_CLI_H
#define LCLOUDCTL_CLI_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <lcloud/lcloud.h>

/* Exit codes, documented in lcloudctl(8). */
enum {
	EXIT_OK = 0,
	EXIT_FAILURE_GENERIC = 1,
	EXIT_USAGE = 2,
	EXIT_NOT_FOUND = 3,
	EXIT_PERMISSION = 4,
	EXIT_WRONG_KIND = 5,
	EXIT_NOT_UNTORN = 6, /* check: the write would not be untorn */
	EXIT_REFUSED = 7,    /* write/read: refused before submission (in use, holds data, not atomic) */
	EXIT_TORN = 8,       /* torture verify: torn or damaged pages; replay --cut-all: an image shows one */
	EXIT_LOST = 9,       /* torture verify: acknowledged writes lost (and no torn page) */
	EXIT_TEARABLE = 10,  /* replay: a page write a power cut could tear under the model */
};

enum output_format {
	OUTPUT_NORMAL,
	OUTPUT_JSON,
};

struct global_opts {
	const char *sysroot;
	enum output_format format;
	bool bytes; /* raw byte values instead of human units */
};

struct command {
	const char *name;
	const char *summary;
	int (*run)(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
	void (*usage)(FILE *out);
};

int cmd_probe(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_probe_usage(FILE *out);
int cmd_list(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_list_usage(FILE *out);
int cmd_check(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_check_usage(FILE *out);
int cmd_advise(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
int cmd_write(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_write_usage(FILE *out);
int cmd_read(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_read_usage(FILE *out);
void cmd_advise_usage(FILE *out);
int cmd_torture(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_torture_usage(FILE *out);
int cmd_replay(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_replay_usage(FILE *out);
int cmd_torture_run(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
int cmd_torture_verify(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);

/* "16384", "16K", "16KiB", "1M": binary units; -EINVAL or -ERANGE. */
int parse_size(const char *s, uint64_t *ret);

/* -o/--output argument; returns false for an unknown format. */
bool parse_output_format(const char *arg, enum output_format *ret);

/* "4 KiB (4096)" style rendering of a fact value into BUF. */
const char *format_fact_value(const struct lcloud_fact *f, bool bytes, char *buf, size_t size);
/* Human size, "16 KiB", "1.5 MiB", "512 B". */
const char *format_size(uint64_t bytes, char *buf, size_t size);

/* JSON value of a fact: number, boolean, string or null when not present. */
json_object *fact_to_json(const struct lcloud_fact *f);
json_object *probe_to_json(const struct lcloud_probe *p);
void print_probe_normal(FILE *out, const struct lcloud_probe *p, bool bytes);

/* Reports a failed probe of PATH on stderr with what to do; returns the exit code. */
int report_probe_error(const char *prog, const char *path, int err);
json_object *probe_error_to_json(const char *path, int err);
int exit_code_for_error(int err);

void print_json(FILE *out, json_object *obj);

#endif
