/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lcloudctl replay: the write log oracle and crash images (cmd_replay.c, replay_*.c). */
#ifndef LCLOUDCTL_REPLAY_H
#define LCLOUDCTL_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "oracle.h"
#include "writelog.h"

/* The power-fail model and where each part of it came from. */
struct replay_model {
	struct oracle_model m;
	char src_lba[160], src_atomic[160], src_boundary[160], src_cache[160];
};

/* Fills what PATH (the JSON of 'lcloudctl probe -o json') says; -EINVAL with ERR. */
int replay_model_from_probe(const char *path, struct replay_model *m, char *err, size_t err_size);

/* One line for a person on why W is tearable, incomplete or not durable, into BUF. */
const char *replay_reasons(const struct writelog *const *logs, const struct oracle_model *m,
			   const struct oracle_page_write *w, char *buf, size_t size);

#endif
