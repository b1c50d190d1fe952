/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The output format (normal or json), which every command and the global
 * options take the same way: --format FORMAT and -J (lsblk's --json). -o
 * FORMAT and --output FORMAT still work in 0.5 with a note: -o and --output
 * name output columns, as in 'lcloudctl list' and lsblk. Here, so that no
 * command calls back into lcloudctl.c, which calls the commands.
 */
#include <getopt.h>
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

/* "-o" or "--output": how the option getopt just returned with OPTARG was typed. */
static const char *option_as_typed(int argc, char **argv, const char *optarg_seen)
{
	/* "-o json" and "--output json" are two words; "-ojson" and "--output=json" one */
	const char *opt = optind >= 2 && optind <= argc && optarg_seen == argv[optind - 1] ? argv[optind - 2]
											   : argv[optind - 1];

	return !strncmp(opt, "--", 2) ? "--output" : "-o";
}

int format_option(const char *who, int c, int argc, char **argv, enum output_format *ret)
{
	const char *typed;

	switch (c) {
	case OPT_FORMAT:
		return parse_output_format(who, optarg, ret) ? 1 : -1;
	case 'J':
		*ret = OUTPUT_JSON;
		return 1;
	case 'o':
		typed = option_as_typed(argc, argv, optarg);
		if (!parse_output_format(who, optarg, ret))
			return -1;
		fprintf(stderr, "%s: note: '%s %s' is deprecated and goes in 0.6: say --format %s%s (%s names "
			"output columns, as in 'lcloudctl list' and lsblk)\n", who, typed, tty_str(optarg),
			tty_str(optarg), *ret == OUTPUT_JSON ? " or -J" : "", typed);
		return 1;
	default:
		return 0;
	}
}
