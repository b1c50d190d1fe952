/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The value of -o/--format (normal or json), which every command and the
 * global options parse the same way: here, so that no command calls back
 * into lcloudctl.c, which calls the commands.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "escape.h"


bool parse_output_format(const char *who, const char *arg, enum output_format *ret)
{
	if (strcmp(arg, "normal") == 0) {
		*ret = OUTPUT_NORMAL;
	} else if (strcmp(arg, "json") == 0) {
		*ret = OUTPUT_JSON;
	} else {
		fprintf(stderr, "%s: unknown output format '%s' (use normal or json)\n", who, tty_str(arg));
		return false;
	}
	return true;
}
