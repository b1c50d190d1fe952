/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lcloudctl check PATH --size N [--path NAME]: one answer, for scripts and config management. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

void cmd_check_usage(FILE *out)
{
	fputs("Usage: lcloudctl check [options] PATH --size N\n"
	      "\n"
	      "Is an aligned N-byte write to PATH untorn on power loss? Prints one line\n"
	      "saying why, and exits 0 when it is, 6 when it is not, 8 when it cannot be\n"
	      "told (evidence that needs root, a directory this user cannot write in).\n"
	      "On a file or directory the kernel's RWF_ATOMIC limits are confirmed with\n"
	      "live writes to a temporary file in the same directory, which vanishes.\n"
	      "\n"
	      "Options:\n"
	      "  -s, --size N          write size: a power of two, e.g. 16384, 16K, 16KiB\n"
	      "  -p, --path NAME       rwf_atomic, passthrough, plain_direct, buffered or\n"
	      "                        best (default: the best path available)\n"
	      "  -o, --format FORMAT   normal (default) or json (or --output FORMAT)\n"
	      "      --no-confirm      no live RWF_ATOMIC writes: statx's word alone\n"
	      "  -h, --help            show this help\n",
	      out);
}

int cmd_check(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	static const struct option options[] = {
		{ "size", required_argument, NULL, 's' },
		{ "path", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'o' },
		{ "output", required_argument, NULL, 'o' }, /* the older name */
		{ "no-confirm", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum lcloud_io_path path = LCLOUD_PATH_BEST, decided = LCLOUD_PATH_BEST;
	enum output_format format = g->format;
	struct lcloud_probe *p = NULL;
	const char *target;
	uint32_t flags = LCLOUD_PROBE_NO_SIGNATURES | LCLOUD_PROBE_CONFIRM_ATOMIC;
	bool have_size = false;
	uint64_t size = 0;
	char why[1024];
	int c, r;

	optind = 0; /* 0, not 1: glibc then re-reads the option string (main used "+") */
	while ((c = getopt_long(argc, argv, "s:p:o:h", options, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_size(optarg, &size) < 0) {
				fprintf(stderr, "lcloudctl check: --size '%s' is not a size (try 16384 or 16K)\n",
					tty_str(optarg));
				return EXIT_USAGE;
			}
			have_size = true;
			break;
		case 'C':
			flags &= ~(uint32_t)LCLOUD_PROBE_CONFIRM_ATOMIC;
			break;
		case 'p':
			if (lcloud_io_path_from_string(optarg, &path) < 0) {
				fprintf(stderr, "lcloudctl check: unknown path '%s' (use rwf_atomic, passthrough, "
					"plain_direct, buffered or best)\n", tty_str(optarg));
				return EXIT_USAGE;
			}
			break;
		case 'o':
			if (!parse_output_format("lcloudctl check", optarg, &format)) {
				return EXIT_USAGE;
			}
			break;
		case 'h':
			cmd_check_usage(stdout);
			return EXIT_OK;
		default:
			cmd_check_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || !have_size) {
		fputs(optind + 1 != argc ? "lcloudctl check: give exactly one PATH\n"
					 : "lcloudctl check: --size is required (e.g. --size 16K)\n",
		      stderr);
		return EXIT_USAGE;
	}
	target = argv[optind];
	if (!*target) {
		fputs("lcloudctl check: the PATH is empty; give a file, directory or device\n", stderr);
		return EXIT_USAGE;
	}
	if (!size || (size & (size - 1))) {
		fprintf(stderr, "lcloudctl check: --size %" PRIu64 " is not a power of two: atomic writes are "
			"powers of two (4K, 8K, 16K...)\n", size);
		return EXIT_USAGE;
	}
	r = lcloud_probe_path(ctx, target, flags, &p);
	if (r < 0)
		return report_probe_error("lcloudctl check", target, r);
	r = lcloud_probe_check(p, path, size, &decided, why, sizeof(why));
	lcloud_probe_free(p);
	if (r == -ERANGE) {
		fprintf(stderr, "lcloudctl check: --size %" PRIu64 " is larger than %s itself\n", size,
			tty_str(target));
		return EXIT_USAGE;
	}
	if (r < 0) {
		fprintf(stderr, "lcloudctl check: %s: %s\n", tty_str(target), strerror(-r));
		return EXIT_FAILURE_GENERIC;
	}
	if (format == OUTPUT_JSON) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "schema", json_object_new_int(1));
		json_object_object_add(o, "path", json_string_from_device(target));
		json_object_object_add(o, "size", json_object_new_uint64(size));
		json_object_object_add(o, "untorn", json_object_new_boolean(r == LCLOUD_ANSWER_UNTORN));
		json_object_object_add(o, "answer", json_object_new_string(lcloud_answer_to_string(r)));
		json_object_object_add(o, "io_path", json_object_new_string(lcloud_io_path_to_string(decided)));
		json_object_object_add(o, "why", json_object_new_string(why));
		print_json(stdout, o);
		json_object_put(o);
	} else {
		/* the reason may quote what a device calls itself: escaped, as every device string */
		printf("%s: %s", tty_str(target), color_start(g, r == LCLOUD_ANSWER_UNTORN ? COLOR_GOOD
						  : r == LCLOUD_ANSWER_UNKNOWN ? COLOR_UNKNOWN : COLOR_BAD));
		fputs_escaped(why, stdout);
		fputs(color_end(g), stdout);
		putchar('\n');
	}
	return r == LCLOUD_ANSWER_UNTORN ? EXIT_OK : r == LCLOUD_ANSWER_UNKNOWN ? EXIT_UNKNOWN : EXIT_NOT_UNTORN;
}
