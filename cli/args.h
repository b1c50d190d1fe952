/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What lcloudctl's arguments become: the global options every command is
 * handed, and the parsers of values more than one command takes (--format,
 * sizes, paths kept for later), so that each command reads them the same way.
 */
#ifndef LCLOUDCTL_ARGS_H
#define LCLOUDCTL_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum output_format {
	OUTPUT_NORMAL,
	OUTPUT_JSON,
};

struct global_opts {
	const char *sysroot;
	enum output_format format;
	bool bytes; /* raw byte values instead of human units */
	bool human; /* probe -H: decode the bits of NVMe capability fields */
	bool color; /* --color, NO_COLOR and whether stdout is a terminal, decided once in main */
};

/* "16384", "16K", "16KiB", "1M": binary units; -EINVAL or -ERANGE. */
int parse_size(const char *s, uint64_t *ret);

/* --format's argument; for an unknown format says so on stderr as WHO ("lcloudctl check") and returns false. */
bool parse_output_format(const char *who, const char *arg, enum output_format *ret);

/*
 * The format options of a command with a normal and a JSON form: FORMAT_OPTIONS
 * in its option table, "o:J" in its getopt string. format_option() takes
 * getopt's C when it is one of them: 1 (*RET set; the old -o/--output FORMAT
 * with a note on stderr), -1 (said on stderr), or 0 for another option.
 */
#define OPT_FORMAT 0x1000
#define FORMAT_OPTIONS                                                         \
	{ "format", required_argument, NULL, OPT_FORMAT },                         \
	{ "json", no_argument, NULL, 'J' },                                        \
	{ "output", required_argument, NULL, 'o' } /* deprecated: columns in 0.6 */
int format_option(const char *who, int c, int argc, char **argv, enum output_format *ret);

/* abs_path.c: PATH made absolute against the current folder, not resolved; 0 or -errno. */
int absolute_path(const char *path, char *buf, size_t size);

#endif
