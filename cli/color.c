/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Colour for people at a terminal: verdicts and warnings stand out. Never in
 * JSON, never into a pipe unless asked (--color=always), never with NO_COLOR
 * set (https://no-color.org) unless asked.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "color.h"

bool is_color_when(const char *word)
{
	return !strcmp(word, "always") || !strcmp(word, "never") || !strcmp(word, "auto");
}

bool color_decide(const char *when, bool *ret)
{
	const char *no_color = getenv("NO_COLOR");

	if (!strcmp(when, "always"))
		*ret = true;
	else if (!strcmp(when, "never"))
		*ret = false;
	else if (!strcmp(when, "auto"))
		*ret = isatty(STDOUT_FILENO) && !(no_color && *no_color);
	else
		return false;
	return true;
}

const char *color_name(enum color_role role)
{
	switch (role) {
	case COLOR_GOOD:
		return "green";
	case COLOR_BAD:
		return "red";
	default:
		return "yellow";
	}
}

const char *color_start(const struct global_opts *g, enum color_role role)
{
	if (!g->color)
		return "";
	switch (role) {
	case COLOR_GOOD:
		return "\033[32m";
	case COLOR_BAD:
		return "\033[31m";
	default:
		return "\033[33m";
	}
}

const char *color_end(const struct global_opts *g)
{
	return g->color ? "\033[0m" : "";
}
