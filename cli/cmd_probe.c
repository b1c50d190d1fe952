/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lcloudctl probe PATH...: every layer of every path. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "escape.h"
#include "exit_codes.h"
#include "fingerprint.h"
#include "print.h"
#include "output_file.h"
#include "usage.h"

void cmd_probe_usage(FILE *out)
{
	fputs("Usage: lcloudctl probe [options] PATH...\n"
	      "\n"
	      "Show what each layer under PATH says about atomic (untorn) writes and I/O:\n"
	      "the file system (statx), partitions, dm/md/loop devices and the disks\n"
	      "(sysfs queue limits). PATH may be a file, a directory (probed through a\n"
	      "temporary file that leaves nothing behind), a block device, a partition,\n"
	      "an NVMe generic node /dev/ngXnY, or a symlink to any of these.\n"
	      "\n"
	      "Options:\n"
	      "      --format FORMAT   normal (default) or json\n"
	      "  -J, --json            the same as --format json\n"
	      "  -b, --bytes           print sizes as plain numbers\n"
	      "  -H, --human-readable  decode the bits of NVMe capability fields (OACS,\n"
	      "                        ONCS, CTRATT, VWC, NSFEAT) by name, as nvme-cli -H\n"
	      "      --no-follow       refuse a PATH that is a symbolic link\n"
	      "      --no-signatures   do not read on-disk signatures (libblkid)\n"
	      "      --save FILE       keep a fingerprint of PATH (kernel, facts, verdicts)\n"
	      "                        for 'lcloudctl diff FILE' after an upgrade\n"
	      "      --confirm         files and directories: confirm statx's atomic write\n"
	      "                        limits with live RWF_ATOMIC writes to a temporary\n"
	      "                        file in the same directory (as check does)\n"
	      "  -h, --help            show this help\n",
	      out);
}

int cmd_probe(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	enum { OPT_NO_FOLLOW = 256, OPT_NO_SIGNATURES, OPT_CONFIRM, OPT_SAVE };
	static const struct option options[] = {
		FORMAT_OPTIONS,
		{ "bytes", no_argument, NULL, 'b' },
		{ "human-readable", no_argument, NULL, 'H' },
		{ "no-follow", no_argument, NULL, OPT_NO_FOLLOW },
		{ "no-signatures", no_argument, NULL, OPT_NO_SIGNATURES },
		{ "confirm", no_argument, NULL, OPT_CONFIRM },
		{ "save", required_argument, NULL, OPT_SAVE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct global_opts opts = *g;
	json_object *all = NULL, *probes = NULL;
	uint32_t flags = 0;
	const char *save = NULL;
	int c, rc = EXIT_OK;

	optind = 0; /* 0, not 1: glibc then re-reads the option string (main used "+") */
	while ((c = getopt_long(argc, argv, ":o:JbHh", options, NULL)) != -1) {
		int r = format_option("lcloudctl probe", c, argc, argv, &opts.format);

		if (r < 0)
			return EXIT_USAGE;
		if (r > 0)
			continue;
		switch (c) {
		case 'b':
			opts.bytes = true;
			break;
		case 'H':
			opts.human = true;
			break;
		case OPT_NO_FOLLOW:
			flags |= LCLOUD_PROBE_NOFOLLOW;
			break;
		case OPT_NO_SIGNATURES:
			flags |= LCLOUD_PROBE_NO_SIGNATURES;
			break;
		case OPT_CONFIRM:
			flags |= LCLOUD_PROBE_CONFIRM_ATOMIC;
			break;
		case OPT_SAVE:
			save = optarg;
			break;
		case 'h':
			cmd_probe_usage(stdout);
			return EXIT_OK;
		default:
			return usage_option_error("lcloudctl probe", c, argc, argv);
		}
	}
	if (optind >= argc)
		return usage_error("lcloudctl probe", "no PATH given (e.g. 'lcloudctl probe .')");
	if (save && argc - optind != 1) {
		fputs("lcloudctl probe: --save keeps the fingerprint of one PATH\n", stderr);
		return EXIT_USAGE;
	}
	if (opts.format == OUTPUT_JSON) {
		all = json_object_new_object();
		probes = json_object_new_array();
		json_object_object_add(all, "schema", json_object_new_int(1));
		json_object_object_add(all, "probes", probes);
	}
	for (int i = optind; i < argc; i++) {
		struct lcloud_probe *p = NULL;
		int r = *argv[i] ? lcloud_probe_path(ctx, argv[i], flags, &p) : -ENOENT;

		if (r < 0) {
			int code = report_probe_error("lcloudctl probe", argv[i], r);

			if (rc == EXIT_OK)
				rc = code; /* the first failure decides, the other paths still print */
			if (probes)
				json_object_array_add(probes, probe_error_to_json(argv[i], r));
			continue;
		}
		if (save) {
			json_object *fp = fingerprint_new(p, g->sysroot);
			char err[512];

			r = fingerprint_save(save, fp, err, sizeof(err));
			json_object_put(fp);
			if (r < 0) {
				fprintf(stderr, "lcloudctl probe: --save %s: %s\n", tty_str(save), tty_str(err));
				rc = output_file_exit_code(r);
			}
		}
		if (probes) {
			json_object_array_add(probes, probe_to_json(p));
		} else {
			if (i > optind)
				fputs("\n", stdout);
			print_probe_normal(stdout, p, &opts);
		}
		lcloud_probe_free(p);
	}
	if (all) {
		print_json(stdout, all);
		json_object_put(all);
	}
	return rc;
}
