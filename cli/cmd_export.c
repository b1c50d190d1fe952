/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl export --prometheus: the verdicts of every block device (or of
 * the given paths) as gauges in the Prometheus text format, for
 * node_exporter's textfile collector. Written to a temporary file and
 * renamed, so that the collector never reads half a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "escape.h"
#include "exit_codes.h"
#include "usage.h"
#include "cli_facts.h"
#include "output_file.h"

void cmd_export_usage(FILE *out)
{
	fputs("Usage: lcloudctl export --prometheus [options] [PATH...]\n"
	      "\n"
	      "Write the verdict of every block device (or of each PATH: files,\n"
	      "directories, devices) as Prometheus gauges for node_exporter's textfile\n"
	      "collector: lcloud_untorn_max_bytes and lcloud_untorn_unknown per I/O path,\n"
	      "lcloud_rwf_atomic_hardware_max_bytes, lcloud_probe_success and lcloud_info,\n"
	      "labelled with the target, the path and the evidence.\n"
	      "\n"
	      "Options:\n"
	      "      --prometheus      the Prometheus text format (the only one so far)\n"
	      "  -f, --file FILE       write FILE atomically (temporary file, then rename)\n"
	      "                        instead of standard output\n"
	      "  -h, --help            show this help\n",
	      out);
}

/* A label value: backslash, double quote and newline escaped, as the format wants. */
static void label(FILE *out, const char *name, const char *value, bool last)
{
	fprintf(out, "%s=\"", name);
	for (const char *c = value ? value : ""; *c; c++) {
		if (*c == '\\' || *c == '"')
			fputc('\\', out);
		if (*c == '\n')
			fputs("\\n", out);
		else
			fputc(*c, out);
	}
	fputs(last ? "\"" : "\",", out);
}

static const char *string_fact(const struct lcloud_probe *p, enum lcloud_layer_kind kind, enum fact_id id)
{
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++) {
		const struct lcloud_layer *l = lcloud_probe_get_layer(p, i);

		if (lcloud_layer_get_kind(l) == kind) {
			const char *s = cli_fact_string(l, id);

			if (s)
				return s;
		}
	}
	return "";
}

struct sample {
	char target[4200];
	struct lcloud_probe *probe; /* NULL: the probe failed */
	int err;
};

struct export_state {
	struct lcloud_ctx *ctx;
	struct sample *samples;
	size_t n;
	int failures;
};

static int add_sample(struct export_state *st, const char *target, bool by_name)
{
	struct sample *s = realloc(st->samples, (st->n + 1) * sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	st->samples = s;
	s = &st->samples[st->n++];
	/* a label names the target from anywhere: a path is made absolute (not resolved) */
	if (by_name || absolute_path(target, s->target, sizeof(s->target)) < 0)
		snprintf(s->target, sizeof(s->target), "%s%s", by_name ? "/dev/" : "", target);
	s->probe = NULL;
	r = by_name ? lcloud_probe_blockdev(st->ctx, target, LCLOUD_PROBE_NO_SIGNATURES, &s->probe)
		    : lcloud_probe_path(st->ctx, target, LCLOUD_PROBE_NO_SIGNATURES, &s->probe);
	s->err = r < 0 ? r : 0;
	if (r < 0)
		st->failures++;
	return 0;
}

static int add_blockdev(const char *name, void *userdata)
{
	struct export_state *st = userdata;
	struct lcloud_probe *p = NULL;
	uint64_t size = 0;

	/* an unbound loop device (size 0) stores nothing: lsblk hides it too */
	if (lcloud_probe_blockdev(st->ctx, name, LCLOUD_PROBE_NO_SIGNATURES | LCLOUD_PROBE_NO_DEVICE_QUERY, &p) == 0) {
		const struct lcloud_layer *l = lcloud_probe_get_layer(p, 0);

		/* not read: 0, and the device is left out as an empty one */
		if (cli_fact_u64(l, FACT_SIZE, &size) <= 0)
			size = 0;
		lcloud_probe_free(p);
		if (!size && strncmp(name, "loop", 4) == 0)
			return 0;
	}
	return add_sample(st, name, true);
}

static void write_metrics(FILE *out, const struct export_state *st)
{
	static const char *const help[][2] = {
		{ "lcloud_untorn_max_bytes", "Largest write that is untorn on power loss on this I/O path, in bytes (0: none)." },
		{ "lcloud_untorn_unknown", "1 when larger writes rest on evidence that could not be read (run as root)." },
		{ "lcloud_rwf_atomic_hardware_max_bytes", "Largest RWF_ATOMIC write the device does itself; above it the file system's software path." },
		{ "lcloud_probe_success", "1 when the target could be probed." },
		{ "lcloud_info", "The target's provider and the source of its promise, as labels." },
	};

	for (size_t m = 0; m < sizeof(help) / sizeof(help[0]); m++) {
		fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", help[m][0], help[m][1], help[m][0]);
		for (size_t i = 0; i < st->n; i++) {
			const struct sample *s = &st->samples[i];
			const struct lcloud_probe *p = s->probe;

			if (m == 3) {
				fprintf(out, "%s{", help[m][0]);
				label(out, "target", s->target, true);
				fprintf(out, "} %d\n", p ? 1 : 0);
				continue;
			}
			if (!p)
				continue;
			if (m == 4) {
				fprintf(out, "%s{", help[m][0]);
				label(out, "target", s->target, false);
				label(out, "kind", lcloud_target_type_to_string(lcloud_probe_get_target_type(p)), false);
				label(out, "provider", string_fact(p, LCLOUD_LAYER_CLOUD, FACT_PROVIDER), false);
				label(out, "promise_source", string_fact(p, LCLOUD_LAYER_CLOUD, FACT_PROMISE_SOURCE), true);
				fputs("} 1\n", out);
				continue;
			}
			if (m == 2) {
				fprintf(out, "%s{", help[m][0]);
				label(out, "target", s->target, true);
				fprintf(out, "} %" PRIu64 "\n", lcloud_verdict_get_hardware_max_bytes(
									lcloud_probe_get_verdict(p, LCLOUD_PATH_RWF_ATOMIC)));
				continue;
			}
			for (int path = LCLOUD_PATH_RWF_ATOMIC; path <= LCLOUD_PATH_BUFFERED; path++) {
				const struct lcloud_verdict *v = lcloud_probe_get_verdict(p, (enum lcloud_io_path)path);
				unsigned int n = lcloud_verdict_get_reason_count(v);

				fprintf(out, "%s{", help[m][0]);
				label(out, "target", s->target, false);
				label(out, "io_path", lcloud_io_path_to_string((enum lcloud_io_path)path), false);
				label(out, "evidence", n ? lcloud_verdict_get_reason_evidence(v, 0) : "", true);
				if (m == 0)
					fprintf(out, "} %" PRIu64 "\n", lcloud_verdict_get_max_untorn_bytes(v));
				else
					fprintf(out, "} %d\n", lcloud_verdict_get_unknown_reason(v) ? 1 : 0);
			}
		}
	}
}

/* FILE written whole or not at all (output_file.c), readable by the collector; a regular file only. */
static int write_file(const char *file, const struct export_state *st, char *err, size_t err_size)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int r;

	if (!out)
		return -errno;
	write_metrics(out, st);
	if (fclose(out) != 0) {
		free(text);
		snprintf(err, err_size, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	r = write_file_atomically(file, text, len, 0644, err, err_size);
	free(text);
	return r;
}

int cmd_export(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	enum { OPT_PROMETHEUS = 256 };
	static const struct option options[] = {
		{ "prometheus", no_argument, NULL, OPT_PROMETHEUS },
		{ "file", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct export_state st = { .ctx = ctx };
	const char *file = NULL;
	bool prometheus = false;
	int c, r = 0, rc = 0;

	(void)g;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":f:h", options, NULL)) != -1) {
		switch (c) {
		case OPT_PROMETHEUS:
			prometheus = true;
			break;
		case 'f':
			file = optarg;
			break;
		case 'h':
			cmd_export_usage(stdout);
			return EXIT_OK;
		default:
			return usage_option_error("lcloudctl export", c, argc, argv);
		}
	}
	if (!prometheus)
		return usage_error("lcloudctl export", "say which format: --prometheus");
	if (optind == argc)
		r = lcloud_blockdev_foreach(ctx, add_blockdev, &st);
	for (int i = optind; i < argc && r >= 0; i++)
		r = add_sample(&st, argv[i], false);
	if (r < 0) {
		fprintf(stderr, "lcloudctl export: %s\n", strerror(-r));
	} else if (file) {
		char err[512];

		r = write_file(file, &st, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "lcloudctl export: -f %s: %s\n", tty_str(file), tty_str(err));
			rc = output_file_exit_code(r);
		}
	} else {
		write_metrics(stdout, &st);
	}
	for (size_t i = 0; i < st.n; i++) {
		if (st.samples[i].err)
			fprintf(stderr, "lcloudctl export: %s: %s (lcloud_probe_success 0)\n", tty_str(st.samples[i].target),
				strerror(-st.samples[i].err));
		lcloud_probe_free(st.samples[i].probe);
	}
	free(st.samples);
	if (r < 0)
		return rc ? rc : exit_code_for_error(r);
	return st.failures ? EXIT_FAILURE_GENERIC : EXIT_OK;
}
