/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How lcloudctl ends: the exit codes lcloudctl(1) documents (scripts branch
 * on them, tests/man/test_exit_codes.py keeps them and the docs in step),
 * and how a failed probe becomes one, with what to do about it (errors.c).
 */
#ifndef LCLOUDCTL_EXIT_CODES_H
#define LCLOUDCTL_EXIT_CODES_H

#include <json-c/json.h>
#include <stdbool.h>

enum {
	EXIT_OK = 0,
	EXIT_FAILURE_GENERIC = 1,
	EXIT_USAGE = 2,
	EXIT_NOT_FOUND = 3,
	EXIT_PERMISSION = 4,
	EXIT_WRONG_KIND = 5,
	EXIT_NOT_UNTORN = 6, /* check: the write would not be untorn */
	EXIT_REFUSED = 7,    /* write/read: refused before submission (in use, holds data, not atomic) */
	EXIT_UNKNOWN = 8,    /* check, advise: the evidence could not be read; neither untorn nor not */
	EXIT_TORN = 9,       /* torture verify: torn or damaged pages; replay --cut-all: an image shows one */
	EXIT_LOST = 10,      /* torture verify: acknowledged writes lost (and no torn page) */
	EXIT_TEARABLE = 11,  /* replay: a page write a power cut could tear under the model */
	EXIT_CHANGED = 12,   /* diff: something changed, no verdict got weaker */
	EXIT_WEAKER = 13,    /* diff: a verdict got weaker */
};

/* Reports a failed probe of PATH on stderr with what to do; returns the exit code. */
int report_probe_error(const char *prog, const char *path, int err);
json_object *probe_error_to_json(const char *path, int err);
int exit_code_for_error(int err);
/*
 * After PATH could not be opened with ERR: when that is a permission error
 * and this is not root, that reading (or, WRITE, writing) it needs root or
 * the device's group, on stderr. Commands that read or write devices call it.
 */
void hint_needs_root(const char *prog, const char *path, int err, bool write);

#endif
