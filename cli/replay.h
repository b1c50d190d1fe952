/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl replay: the write log oracle (cmd_replay.c), the power-fail
 * model from a probe (replay_model.c) and crash images (replay_images.c).
 */
#ifndef LCLOUDCTL_REPLAY_H
#define LCLOUDCTL_REPLAY_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lcloud/lcloud.h>

#include "args.h"
#include "oracle.h"
#include "writelog.h"

struct replay_opts {
	const char *const *logs; /* LOG paths, one per device */
	uint32_t n_logs;
	const char *model_from, *base, *out;
	uint64_t lba, atomic, boundary, boundary_offset, cut, tear, run;
	bool have_lba, have_atomic, have_boundary, have_boundary_offset, volatile_cache, scan_tail, all, have_run;
	bool have_cut, cut_all, keep_going;
	bool force; /* --force: an --out device with a signature is written (never one in use) */
	struct lcloud_ctx *ctx; /* the write guard's, for an --out block device */
	enum output_format format;
};

/* The power-fail model and where each part of it came from. */
struct replay_model {
	struct oracle_model m;
	char src_lba[160], src_atomic[160], src_boundary[160], src_cache[160];
};

/*
 * Fills what PATH (the JSON of 'lcloudctl probe --format json') says. -EBADMSG with
 * ERR naming the file and the key when it is not that, -errno (with ERR) when
 * it cannot be read. PARSE reads SIZE bytes of TEXT, named NAME in ERR.
 */
int replay_model_from_probe(const char *path, struct replay_model *m, char *err, size_t err_size);
int replay_model_parse(const char *name, const void *text, size_t size, struct replay_model *m, char *err,
		       size_t err_size);

/* One line for a person on why W is tearable, incomplete or not durable, into BUF. */
const char *replay_reasons(const struct writelog *const *logs, const struct oracle_model *m,
			   const struct oracle_page_write *w, char *buf, size_t size);

/* Is W one of the page writes the options ask about (--run)? */
bool replay_selected(const struct replay_opts *o, const struct oracle_page_write *w);

/* --cut K [--tear BLOCKS]: one image. */
int replay_cut(const struct replay_opts *o, const struct writelog *log, const struct replay_model *rm);
/* --cut-all: the tearing cut of each tearable page write until an image shows the tear (all with --keep-going). */
int replay_cut_all(const struct replay_opts *o, const struct writelog *log, const struct replay_model *rm);

/* replay_report.c: one page write as JSON and as a line of text; the runs of a result; the model as text. */
json_object *replay_page_write_json(const struct writelog *const *logs, const struct replay_model *rm,
				    const struct oracle_page_write *w);
void replay_print_page_write(const struct writelog *const *logs, uint32_t n_logs, const struct replay_model *rm,
			     const struct oracle_page_write *w);
json_object *replay_runs_json(const struct oracle_result *r);
void replay_print_model(const struct replay_model *rm);

/* One log's header facts and entry counts, and the model, as JSON. */
json_object *replay_log_info_json(const char *path, const struct writelog *log);
json_object *replay_model_json(const struct replay_model *rm);

#endif
