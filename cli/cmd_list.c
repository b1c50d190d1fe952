/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl list: every block device, one line each, with the atomic write
 * and write stream limits lsblk does not show. Partitions show their disk's
 * queue limits (the kernel has none per partition) and whether they are aligned.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libsmartcols/libsmartcols.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct list_column {
	const char *header;
	const char *fact; /* NULL: computed */
	double width;
	int flags;
};

static const struct list_column columns[] = {
	{ "NAME", NULL, 0.15, SCOLS_FL_NOEXTREMES },
	{ "TYPE", NULL, 0.05, 0 },
	{ "SIZE", "size", 0.06, SCOLS_FL_RIGHT },
	{ "LOG-SEC", "logical_block_size", 0.05, SCOLS_FL_RIGHT },
	{ "PHY-SEC", "physical_block_size", 0.05, SCOLS_FL_RIGHT },
	{ "MIN-IO", "minimum_io_size", 0.05, SCOLS_FL_RIGHT },
	{ "OPT-IO", "optimal_io_size", 0.05, SCOLS_FL_RIGHT },
	{ "AWU-MIN", "atomic_write_unit_min_bytes", 0.05, SCOLS_FL_RIGHT },
	{ "AWU-MAX", "atomic_write_unit_max_bytes", 0.05, SCOLS_FL_RIGHT },
	{ "AW-MAX", "atomic_write_max_bytes", 0.05, SCOLS_FL_RIGHT },
	{ "AW-BOUND", "atomic_write_boundary_bytes", 0.05, SCOLS_FL_RIGHT },
	{ "STREAMS", "max_write_streams", 0.04, SCOLS_FL_RIGHT },
	{ "STREAM-GRAN", "write_stream_granularity", 0.05, SCOLS_FL_RIGHT },
	{ "WC", "write_cache", 0.06, 0 },
	{ "ALIGN", NULL, 0.05, 0 },
};

/* JSON keys beside the queue limits. */
static const char *const json_facts[] = {
	"dev", "size", "ro", "start", "logical_block_size", "physical_block_size", "minimum_io_size",
	"optimal_io_size", "max_sectors_kb", "max_hw_sectors_kb", "dma_alignment", "write_cache",
	"rotational", "atomic_write_unit_min_bytes", "atomic_write_unit_max_bytes",
	"atomic_write_max_bytes", "atomic_write_boundary_bytes", "max_write_streams",
	"write_stream_granularity",
};

struct list_state {
	struct lcloud_ctx *ctx;
	const struct global_opts *g;
	struct libscols_table *table;
	json_object *devices;
	json_object *errors;
	int failures;
};

/* The fact from the first layer that has it: the device, or a partition's disk. */
static const struct lcloud_fact *stack_fact(const struct lcloud_probe *p, const char *name)
{
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++) {
		const struct lcloud_fact *f = lcloud_layer_find_fact(lcloud_probe_get_layer(p, i), name);

		if (f)
			return f;
	}
	return NULL;
}

static bool is_misaligned(const struct lcloud_probe *p)
{
	for (unsigned int i = 0; i < lcloud_probe_get_note_count(p); i++)
		if (strstr(lcloud_note_get_code(lcloud_probe_get_note(p, i)), "misaligned"))
			return true;
	return false;
}

static const char *cell_value(const struct lcloud_probe *p, const struct list_column *col, bool bytes,
			      char *buf, size_t size)
{
	const struct lcloud_fact *f = col->fact ? stack_fact(p, col->fact) : NULL;

	if (!col->fact)
		return NULL;
	if (!f || lcloud_fact_get_state(f) != LCLOUD_FACT_PRESENT)
		return "-"; /* not provided by this kernel: not 0 */
	if (lcloud_fact_get_type(f) == LCLOUD_FACT_STRING)
		return lcloud_fact_get_string(f);
	if (lcloud_fact_get_unit(f) == LCLOUD_UNIT_BYTES && !bytes && lcloud_fact_get_u64(f) >= 1024)
		return format_size(lcloud_fact_get_u64(f), buf, size);
	snprintf(buf, size, "%" PRIu64, lcloud_fact_get_u64(f));
	return buf;
}

static int list_one(const char *name, void *userdata)
{
	struct list_state *st = userdata;
	struct lcloud_probe *p = NULL;
	const struct lcloud_layer *top;
	const char *type;
	int r;

	/* the columns are the kernel's view: no device commands, no signatures, no verdicts */
	r = lcloud_probe_blockdev(st->ctx, name,
				  LCLOUD_PROBE_NO_SIGNATURES | LCLOUD_PROBE_NO_DEVICE_QUERY | LCLOUD_PROBE_NO_VERDICT, &p);
	if (r < 0) {
		/* A device can vanish between listing and probing; say so and go on. */
		report_probe_error("lcloudctl list", name, r);
		if (st->errors)
			json_object_array_add(st->errors, probe_error_to_json(name, r));
		if (r != -ENOENT)
			st->failures++;
		return 0;
	}
	top = lcloud_probe_get_layer(p, 0);
	type = lcloud_layer_kind_to_string(lcloud_layer_get_kind(top));
	if (st->table) {
		struct libscols_line *line = scols_table_new_line(st->table, NULL);

		for (size_t c = 0; line && c < sizeof(columns) / sizeof(columns[0]); c++) {
			char buf[64];
			const char *v;

			if (c == 0)
				v = name;
			else if (c == 1)
				v = type;
			else if (!columns[c].fact)
				v = is_misaligned(p) ? "MISALIGNED" : "ok";
			else
				v = cell_value(p, &columns[c], st->g->bytes, buf, sizeof(buf));
			scols_line_set_data(line, c, v);
		}
	} else {
		json_object *obj = json_object_new_object();
		int parent = -1;

		json_object_object_add(obj, "name", json_object_new_string(name));
		json_object_object_add(obj, "type", json_object_new_string(type));
		if (lcloud_layer_get_kind(top) == LCLOUD_LAYER_PARTITION && lcloud_probe_get_layer_count(p) > 1)
			parent = 1;
		json_object_object_add(obj, "parent", parent > 0 ? json_object_new_string(
			lcloud_layer_get_name(lcloud_probe_get_layer(p, 1))) : NULL);
		for (size_t k = 0; k < sizeof(json_facts) / sizeof(json_facts[0]); k++) {
			const struct lcloud_fact *f = stack_fact(p, json_facts[k]);

			if (f || strcmp(json_facts[k], "start") != 0)
				json_object_object_add(obj, json_facts[k], f ? fact_to_json(f) : NULL);
		}
		json_object_object_add(obj, "misaligned", json_object_new_boolean(is_misaligned(p)));
		json_object_array_add(st->devices, obj);
	}
	lcloud_probe_free(p);
	return 0;
}

void cmd_list_usage(FILE *out)
{
	fputs("Usage: lcloudctl list [options]\n"
	      "\n"
	      "List every block device with its sector sizes, atomic write limits\n"
	      "(AWU-MIN, AWU-MAX, AW-MAX, AW-BOUND), write streams and alignment.\n"
	      "'-' marks a limit this kernel does not provide. Loop devices with no\n"
	      "file attached are left out, as lsblk does.\n"
	      "\n"
	      "Options:\n"
	      "  -a, --all             also list loop devices with no file attached\n"
	      "  -o, --output FORMAT   normal (default) or json\n"
	      "  -b, --bytes           print sizes as plain numbers\n"
	      "  -h, --help            show this help\n",
	      out);
}

int cmd_list(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	static const struct option options[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "output", required_argument, NULL, 'o' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct global_opts opts = *g;
	struct list_state st = { .ctx = ctx, .g = &opts };
	json_object *root = NULL;
	uint32_t flags = 0;
	int c, r;

	optind = 0; /* 0, not 1: glibc then re-reads the option string (main used "+") */
	while ((c = getopt_long(argc, argv, "ao:bh", options, NULL)) != -1) {
		switch (c) {
		case 'a':
			flags |= LCLOUD_BLOCKDEV_UNBOUND_LOOPS;
			break;
		case 'o':
			if (!parse_output_format(optarg, &opts.format)) {
				fprintf(stderr, "lcloudctl list: unknown output format '%s' (use normal or json)\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'b':
			opts.bytes = true;
			break;
		case 'h':
			cmd_list_usage(stdout);
			return EXIT_OK;
		default:
			cmd_list_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "lcloudctl list: unexpected argument '%s' (use 'lcloudctl probe PATH' for one device)\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	if (opts.format == OUTPUT_JSON) {
		root = json_object_new_object();
		st.devices = json_object_new_array();
		st.errors = json_object_new_array();
		json_object_object_add(root, "blockdevices", st.devices);
		json_object_object_add(root, "errors", st.errors);
	} else {
		st.table = scols_new_table();
		if (!st.table)
			return EXIT_FAILURE_GENERIC;
		for (size_t k = 0; k < sizeof(columns) / sizeof(columns[0]); k++)
			scols_table_new_column(st.table, columns[k].header, columns[k].width, columns[k].flags);
	}
	r = lcloud_blockdev_foreach_flags(ctx, flags, list_one, &st);
	if (r < 0)
		fprintf(stderr, "lcloudctl list: cannot enumerate block devices: %s\n", strerror(-r));
	if (root) {
		print_json(stdout, root);
		json_object_put(root);
	} else {
		scols_print_table(st.table);
		scols_unref_table(st.table);
	}
	if (r < 0)
		return EXIT_FAILURE_GENERIC;
	return st.failures ? EXIT_FAILURE_GENERIC : EXIT_OK;
}
