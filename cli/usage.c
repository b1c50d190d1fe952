/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Usage errors in one line and a hint, as util-linux's tools give them
 * ("lsblk: unrecognized option '--x'" / "Try 'lsblk --help' for more
 * information."): the whole help on stderr buries the one thing that was
 * wrong.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "exit_codes.h"
#include "usage.h"

void usage_try_help(const char *who)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", who);
}

int usage_error(const char *who, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage_try_help(who);
	return EXIT_USAGE;
}

int usage_option_error(const char *who, int c, int argc, char **argv)
{
	/* the word getopt stopped at: an unknown or argument-less long option is all of it */
	const char *word = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	bool long_form = !strncmp(word, "--", 2) && optopt == 0;

	if (c == ':') {
		/* a long option's val (>= 256 for those without a short form) or its short letter */
		if (!strncmp(word, "--", 2))
			return usage_error(who, "option '%s' needs an argument", tty_strn(word, strcspn(word, "=")));
		return usage_error(who, "option '-%c' needs an argument", optopt);
	}
	if (long_form)
		return usage_error(who, "unknown option '%s'", tty_strn(word, strcspn(word, "=")));
	if (optopt > 0 && optopt < 256)
		return usage_error(who, "unknown option '-%c'", optopt);
	return usage_error(who, "unknown option '%s'", tty_str(word));
}
