/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lcloudctl replay --base: crash images (replay_images.c). */
#ifndef LCLOUDCTL_REPLAY_IMAGES_H
#define LCLOUDCTL_REPLAY_IMAGES_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "replay.h"

struct replay_opts {
	const char *const *logs; /* LOG paths, one per device */
	uint32_t n_logs;
	const char *model_from, *base, *out;
	uint64_t lba, atomic, boundary, boundary_offset, cut, tear, run;
	bool keep_going, have_run, have_lba, have_atomic, have_boundary, have_boundary_offset, volatile_cache, scan_tail, all, have_cut,
		cut_all;
	enum output_format format;
};

/* Is W one of the page writes the options ask about (--run)? */
bool replay_selected(const struct replay_opts *o, const struct oracle_page_write *w);
/* --cut K [--tear BLOCKS]: one image. */
int replay_cut(const struct replay_opts *o, const struct writelog *log, const struct replay_model *rm);
/* --cut-all: the tearing cut of each tearable page write until an image shows the tear. */
int replay_cut_all(const struct replay_opts *o, const struct writelog *log, const struct replay_model *rm);

/* One log's header facts (and, with R, the counts over all the logs read: pass R with the first log only). */
json_object *replay_log_info_json(const char *path, const struct writelog *log);
json_object *replay_counts_json(const struct oracle_result *r);
json_object *replay_model_json(const struct replay_model *rm);

#endif
