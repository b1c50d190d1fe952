/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lcloudctl diff FILE [PATH]: what changed since 'probe --save FILE', and whether a verdict got weaker. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "color.h"
#include "commands.h"
#include "escape.h"
#include "exit_codes.h"
#include "usage.h"
#include "fingerprint.h"
#include "print.h"

void cmd_diff_usage(FILE *out)
{
	fputs("Usage: lcloudctl diff [options] FILE [PATH]\n"
	      "\n"
	      "Probe PATH again (by default the path saved in FILE by 'lcloudctl probe\n"
	      "--save FILE') and say what changed: the kernel, the verdict of each I/O\n"
	      "path, and every fact of every layer (firmware, limits, promises).\n"
	      "Exits 0 when nothing changed, 12 when something did but no verdict got\n"
	      "weaker, 13 when one did (a proved size lost, less done by the device\n"
	      "itself, or a \"no\" become \"unknown\"); 5 when FILE is not a fingerprint.\n"
	      "\n"
	      "Options:\n"
	      "      --format FORMAT   normal (default) or json\n"
	      "  -J, --json           the same as --format json\n"
	      "  -h, --help            show this help\n",
	      out);
}

static void print_changes(const struct global_opts *g, const char *title, json_object *list, bool verdict)
{
	if (!json_object_array_length(list))
		return;
	printf("%s:\n", title);
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		json_object *c = json_object_array_get_idx(list, i), *a, *b, *x, *y, *w;

		if (verdict) {
			json_object_object_get_ex(c, "io_path", &x);
			json_object_object_get_ex(c, "field", &y);
			json_object_object_get_ex(c, "old", &a);
			json_object_object_get_ex(c, "new", &b);
			json_object_object_get_ex(c, "weaker", &w);
			printf("  %-13s %-22s %s -> %s%s%s%s\n", tty_str(json_object_get_string(x)), tty_str(json_object_get_string(y)),
			       a ? tty_str(json_object_get_string(a)) : "-", b ? tty_str(json_object_get_string(b)) : "-",
			       json_object_get_boolean(w) ? color_start(g, COLOR_BAD) : "",
			       json_object_get_boolean(w) ? "  (weaker)" : "", json_object_get_boolean(w) ? color_end(g) : "");
		} else {
			json_object_object_get_ex(c, "what", &x);
			json_object_object_get_ex(c, "key", &y);
			json_object_object_get_ex(c, "old", &a);
			json_object_object_get_ex(c, "new", &b);
			printf("  %s: %s %s -> %s\n", tty_str(json_object_get_string(x)), tty_str(json_object_get_string(y)),
			       tty_json(json_object_get_string(a)), tty_json(json_object_get_string(b)));
		}
	}
}

int cmd_diff(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	static const struct option options[] = {
		FORMAT_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum output_format format = g->format;
	json_object *saved = NULL, *now = NULL, *report = NULL, *o;
	struct lcloud_probe *p = NULL;
	const char *file, *saved_path;
	char *path = NULL, err[512];
	int c, r, level;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":o:Jh", options, NULL)) != -1) {
		int fr = format_option("lcloudctl diff", c, argc, argv, &format);

		if (fr < 0)
			return EXIT_USAGE;
		if (fr > 0)
			continue;
		switch (c) {
		case 'h':
			cmd_diff_usage(stdout);
			return EXIT_OK;
		default:
			return usage_option_error("lcloudctl diff", c, argc, argv);
		}
	}
	if (optind >= argc || argc - optind > 2)
		return usage_error("lcloudctl diff", "give the saved FILE and, optionally, the PATH to probe now");
	file = argv[optind];
	r = fingerprint_load(file, &saved, err, sizeof(err));
	if (r < 0) {
		if (r == -EBADMSG)
			fprintf(stderr, "lcloudctl diff: %s\n", tty_str(err));
		else
			fprintf(stderr, "lcloudctl diff: %s: %s\n", tty_str(file), strerror(-r));
		return r == -EBADMSG ? EXIT_WRONG_KIND : exit_code_for_error(r);
	}
	saved_path = optind + 1 < argc ? argv[optind + 1] : NULL;
	if (!saved_path && json_object_object_get_ex(saved, "probe", &o) && json_object_object_get_ex(o, "path", &o))
		saved_path = json_object_get_string(o);
	if (!saved_path) {
		fprintf(stderr, "lcloudctl diff: %s saves no path: give the PATH to probe\n", tty_str(file));
		json_object_put(saved);
		return EXIT_USAGE;
	}
	/* a copy: the saved path lives in SAVED, and messages below outlive it */
	path = strdup(saved_path);
	if (!path) {
		json_object_put(saved);
		return EXIT_FAILURE_GENERIC;
	}
	r = lcloud_probe_path(ctx, path, 0, &p);
	if (r < 0) {
		json_object_put(saved);
		r = report_probe_error("lcloudctl diff", path, r);
		free(path);
		return r;
	}
	now = fingerprint_new(p, g->sysroot);
	lcloud_probe_free(p);
	level = fingerprint_compare(saved, now, &report);
	if (format == OUTPUT_JSON) {
		print_json(stdout, report);
	} else {
		json_object *x;

		if (!level)
			printf("%s: nothing changed since %s\n", tty_str(path), tty_str(file));
		if (json_object_object_get_ex(report, "kernel_changed", &x) && json_object_get_boolean(x)) {
			json_object *a, *b;

			json_object_object_get_ex(report, "kernel_old", &a);
			json_object_object_get_ex(report, "kernel_new", &b);
			printf("kernel: %s -> %s\n", tty_str(json_object_get_string(a)), tty_str(json_object_get_string(b)));
		}
		json_object_object_get_ex(report, "verdict_changes", &x);
		print_changes(g, "verdict", x, true);
		json_object_object_get_ex(report, "fact_changes", &x);
		print_changes(g, "facts", x, false);
		if (level == 2)
			printf("%s%s: a verdict got weaker since %s%s\n", color_start(g, COLOR_BAD), tty_str(path),
			       tty_str(file), color_end(g));
	}
	json_object_put(report);
	json_object_put(now);
	json_object_put(saved);
	free(path);
	return level == 2 ? EXIT_WEAKER : level == 1 ? EXIT_CHANGED : EXIT_OK;
}
