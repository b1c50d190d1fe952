/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Colour for text output (color.c): which words stand out, and whether colour is on at all. */
#ifndef LCLOUDCTL_COLOR_H
#define LCLOUDCTL_COLOR_H

#include <stdbool.h>

#include "args.h"

/* What a coloured word says; never used in JSON. */
enum color_role {
	COLOR_GOOD,    /* untorn, ok */
	COLOR_BAD,     /* not untorn, misaligned, an error note, a weaker verdict */
	COLOR_UNKNOWN, /* unknown, a warning note */
};

/* --color=WHEN: auto (a terminal and no NO_COLOR), always or never; false for another word. */
bool color_decide(const char *when, bool *ret);
/* WORD is one of those WHENs (for "--color WHEN" in two words). */
bool is_color_when(const char *word);
/* The escape that starts ROLE's colour, or "" when G says no colour; color_end() likewise. */
const char *color_start(const struct global_opts *g, enum color_role role);
const char *color_end(const struct global_opts *g);
/* libsmartcols' colour name for ROLE. */
const char *color_name(enum color_role role);

#endif
