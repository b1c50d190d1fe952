/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl list: block devices in lsblk's idiom (-o COLUMNS, -n, -r, -P,
 * -J, --tree, devices as filters), with the atomic write and write stream
 * limits lsblk does not show and, when asked, the verdict per I/O path.
 * Partitions show their disk's queue limits (the kernel has none per
 * partition) and whether they are aligned. The default columns cost what
 * lsblk -t costs: the probe reads sysfs only (no device commands, no
 * signatures, no verdicts); a verdict column turns the verdicts on.
 * Where lsblk has a convention, list follows it: the TYPE word "part",
 * devices sorted by device number, lsblk's column order for the columns
 * both have, sizes as lsblk writes them ("512M", "1.5G"), sector and I/O
 * sizes as plain numbers, a named device listed with what is built on it,
 * -d, -e and -I, RAM disks left out unless --all, MOUNTPOINTS one a line, a
 * Unicode tree under a UTF-8 locale and ASCII with --ascii.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libsmartcols/libsmartcols.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "args.h"
#include "block_sysfs.h"
#include "color.h"
#include "commands.h"
#include "escape.h"
#include "exit_codes.h"
#include "print.h"
#include "cli_facts.h"
#include "notes.h"
#include "usage.h"

enum column_kind {
	COL_NAME,
	COL_PATH,
	COL_TYPE,
	COL_FACT,     /* a sysfs fact of the device or, for a partition, of its disk */
	COL_IO_SIZE,  /* a COL_FACT that lsblk prints as a plain number of bytes, even without -b */
	COL_WC,       /* write_cache, one word */
	COL_ALIGN,
	COL_MODEL,
	COL_TRAN,
	COL_FSTYPE,
	COL_MOUNTPOINT,
	COL_MOUNTPOINTS, /* every mount, one a line; a JSON array ([null]: none), as lsblk */
	COL_VERDICT,  /* largest untorn write on one I/O path */
	COL_UNTORN,   /* --size N untorn on the best path */
};

struct list_column {
	const char *header;
	const char *json_key; /* the header lowercased, as lsblk -J */
	enum column_kind kind;
	enum fact_id fact; /* COL_FACT, COL_WC, COL_MODEL; FACT__COUNT for the others */
	int io_path;      /* COL_VERDICT */
	double width;
	int flags;
	bool in_default;
};

/*
 * The order here is the order of -O and of lcloudctl(1)'s COLUMNS: the
 * columns lsblk has in the order lsblk shows them (NAME SIZE RO TYPE from
 * its default, MIN-IO OPT-IO PHY-SEC LOG-SEC ROTA from -t), then ours.
 */
static const struct list_column columns[] = {
	{ "NAME", "name", COL_NAME, FACT__COUNT, 0, 0.15, SCOLS_FL_NOEXTREMES, true },
	{ "PATH", "path", COL_PATH, FACT__COUNT, 0, 0.15, SCOLS_FL_NOEXTREMES, false },
	{ "SIZE", "size", COL_FACT, FACT_SIZE, 0, 0.06, SCOLS_FL_RIGHT, true },
	{ "RO", "ro", COL_FACT, FACT_RO, 0, 0.02, SCOLS_FL_RIGHT, false },
	{ "TYPE", "type", COL_TYPE, FACT__COUNT, 0, 0.05, 0, true },
	{ "MIN-IO", "min-io", COL_IO_SIZE, FACT_MINIMUM_IO_SIZE, 0, 0.05, SCOLS_FL_RIGHT, true },
	{ "OPT-IO", "opt-io", COL_IO_SIZE, FACT_OPTIMAL_IO_SIZE, 0, 0.05, SCOLS_FL_RIGHT, true },
	{ "PHY-SEC", "phy-sec", COL_IO_SIZE, FACT_PHYSICAL_BLOCK_SIZE, 0, 0.05, SCOLS_FL_RIGHT, true },
	{ "LOG-SEC", "log-sec", COL_IO_SIZE, FACT_LOGICAL_BLOCK_SIZE, 0, 0.05, SCOLS_FL_RIGHT, true },
	{ "ROTA", "rota", COL_FACT, FACT_ROTATIONAL, 0, 0.02, SCOLS_FL_RIGHT, false },
	{ "AWU-MIN", "awu-min", COL_FACT, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, 0, 0.05, SCOLS_FL_RIGHT, true },
	{ "AWU-MAX", "awu-max", COL_FACT, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, 0, 0.05, SCOLS_FL_RIGHT, true },
	{ "AW-MAX", "aw-max", COL_FACT, FACT_ATOMIC_WRITE_MAX_BYTES, 0, 0.05, SCOLS_FL_RIGHT, true },
	{ "AW-BOUND", "aw-bound", COL_FACT, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, 0, 0.05, SCOLS_FL_RIGHT, true },
	{ "STREAMS", "streams", COL_FACT, FACT_MAX_WRITE_STREAMS, 0, 0.04, SCOLS_FL_RIGHT, true },
	{ "STREAM-GRAN", "stream-gran", COL_FACT, FACT_WRITE_STREAM_GRANULARITY, 0, 0.05, SCOLS_FL_RIGHT, true },
	{ "WC", "wc", COL_WC, FACT_WRITE_CACHE, 0, 0.06, 0, true },
	{ "ALIGN", "align", COL_ALIGN, FACT__COUNT, 0, 0.05, 0, true },
	{ "MODEL", "model", COL_MODEL, FACT_MODEL, 0, 0.1, SCOLS_FL_TRUNC, false },
	{ "TRAN", "tran", COL_TRAN, FACT__COUNT, 0, 0.04, 0, false },
	{ "FSTYPE", "fstype", COL_FSTYPE, FACT__COUNT, 0, 0.05, 0, false },
	{ "MOUNTPOINT", "mountpoint", COL_MOUNTPOINT, FACT__COUNT, 0, 0.1, SCOLS_FL_TRUNC, false },
	{ "MOUNTPOINTS", "mountpoints", COL_MOUNTPOINTS, FACT__COUNT, 0, 0.1, SCOLS_FL_WRAP, false },
	{ "RWF-ATOMIC", "rwf-atomic", COL_VERDICT, FACT__COUNT, LCLOUD_PATH_RWF_ATOMIC, 0.06, SCOLS_FL_RIGHT, false },
	{ "PASSTHROUGH", "passthrough", COL_VERDICT, FACT__COUNT, LCLOUD_PATH_PASSTHROUGH, 0.06, SCOLS_FL_RIGHT, false },
	{ "PLAIN-DIRECT", "plain-direct", COL_VERDICT, FACT__COUNT, LCLOUD_PATH_PLAIN_DIRECT, 0.06, SCOLS_FL_RIGHT, false },
	{ "UNTORN", "untorn", COL_UNTORN, FACT__COUNT, 0, 0.05, 0, false },
};
#define N_COLUMNS (sizeof(columns) / sizeof(columns[0]))

struct row {
	char *name;
	uint64_t devno; /* lsblk's sort key (dev_t value) */
	bool has_devno;
	bool wanted;    /* named, or built on a named device; everything without a filter (-d, -e, -I aside) */
	bool root;      /* named, or (without a filter) built on no listed device */
	bool probed;
	char **parents; /* a partition's disk; a dm/md/loop device's slaves */
	size_t n_parents;
	char *text[N_COLUMNS];
	json_object *json;
	enum color_role role[N_COLUMNS];
	bool colored[N_COLUMNS];
};

/* As lsblk: at most this many majors after -e or -I. */
#define MAX_MAJORS 256
#define RAM_DISK_MAJOR 1

struct list_state {
	struct lcloud_ctx *ctx;
	const struct global_opts *g;
	const char *sysroot;
	int selected[N_COLUMNS];
	size_t n_selected;
	bool verdicts; /* a verdict column is selected: probe with verdicts */
	bool pairs;
	bool nodeps;    /* -d: no partitions or holders */
	/* -e (exclude) or -I (include): majors of the devices listed at the top; RAM disks (1) by default */
	unsigned int majors[MAX_MAJORS];
	size_t n_majors;
	bool include_majors;
	uint64_t untorn_size;
	struct row *rows;
	size_t n_rows;
	struct mount_table mounts;
	int failures;
	json_object *errors;
};

static int find_column(const char *name, size_t len)
{
	for (size_t i = 0; i < N_COLUMNS; i++)
		if (strlen(columns[i].header) == len && strncasecmp(columns[i].header, name, len) == 0)
			return (int)i;
	return -1;
}

/* "NAME,SIZE" replaces the default set; "+MODEL,TRAN" adds to it (lsblk's -o). */
static bool parse_columns(struct list_state *st, const char *arg)
{
	const char *s = arg;

	if (*s == '+')
		s++;
	else
		st->n_selected = 0;
	while (*s) {
		size_t len = strcspn(s, ",");
		int c = find_column(s, len);

		if (c < 0 && ((len == 4 && !strncmp(s, "json", 4)) || (len == 6 && !strncmp(s, "normal", 6)))) {
			/* lsblk's -o: the columns; the format has its own options */
			usage_error("lcloudctl list", "-o takes COLUMNS, as lsblk's; for JSON say -J or --format json");
			return false;
		}
		if (c < 0) {
			usage_error("lcloudctl list", "unknown column '%s'", tty_strn(s, len));
			return false;
		}
		if (st->n_selected < N_COLUMNS)
			st->selected[st->n_selected++] = c;
		s += len;
		if (*s == ',')
			s++;
	}
	return st->n_selected > 0;
}

/*
 * The device's own fact or, for a partition, its disk's. Never a fact of
 * the devices a dm or md device is built on: their model or limits are not
 * the dm device's.
 */
static const struct lcloud_fact *stack_fact(const struct lcloud_probe *p, enum fact_id id)
{
	const struct lcloud_fact *f = cli_fact(lcloud_probe_get_layer(p, 0), id);
	int below = cli_below_partitions(p);

	if (!f && below > 0)
		f = cli_fact(lcloud_probe_get_layer(p, (unsigned int)below), id);
	return f;
}

static const char *present_string(const struct lcloud_probe *p, enum fact_id id)
{
	const struct lcloud_fact *f = stack_fact(p, id);

	return f && lcloud_fact_get_state(f) == LCLOUD_FACT_PRESENT ? lcloud_fact_get_string(f) : NULL;
}

/* A partition, dm target or loop mapping off its device's grid (align.c's notes). */
static bool is_misaligned(const struct lcloud_probe *p)
{
	for (unsigned int i = 0; i < lcloud_probe_get_note_count(p); i++) {
		int code = note_code_from_name(lcloud_note_get_code(lcloud_probe_get_note(p, i)));

		if (code == NOTE_PARTITION_MISALIGNED || code == NOTE_DM_TARGET_MISALIGNED ||
		    code == NOTE_LOOP_OFFSET_MISALIGNED)
			return true;
	}
	return false;
}

/* A size as lsblk writes it ("512M", "1.5G", "0B"), or the bytes with -b. */
static char *size_text(uint64_t v, bool bytes)
{
	char buf[64];

	if (bytes)
		snprintf(buf, sizeof(buf), "%" PRIu64, v);
	else
		format_size_short(v, buf, sizeof(buf));
	return strdup(buf);
}

static char *fact_text(const struct lcloud_fact *f, bool bytes)
{
	char buf[64];

	if (!f || lcloud_fact_get_state(f) != LCLOUD_FACT_PRESENT)
		return NULL; /* not provided by this kernel: "-", not 0 */
	if (lcloud_fact_get_type(f) == LCLOUD_FACT_STRING)
		return strdup(lcloud_fact_get_string(f));
	if (lcloud_fact_get_type(f) == LCLOUD_FACT_BOOL)
		return strdup(lcloud_fact_get_u64(f) ? "1" : "0");
	if (lcloud_fact_get_unit(f) == LCLOUD_UNIT_BYTES)
		return size_text(lcloud_fact_get_u64(f), bytes);
	snprintf(buf, sizeof(buf), "%" PRIu64, lcloud_fact_get_u64(f));
	return strdup(buf);
}

/* "write back" -> "write-back": one word per cell, for awk and -r. */
static char *one_word(const char *s)
{
	char *w = s ? strdup(s) : NULL;

	for (char *c = w; c && *c; c++)
		if (*c == ' ')
			*c = '-';
	return w;
}

/* One cell as text (NULL: "-") and as a JSON value (NULL: null). */
static void fill_cell(struct list_state *st, struct row *row, const struct lcloud_probe *p, int c)
{
	const struct list_column *col = &columns[c];
	const char *devno = present_string(p, FACT_DEV);
	const struct lcloud_layer *top = lcloud_probe_get_layer(p, 0);
	json_object *j = NULL;
	char *t = NULL;

	switch (col->kind) {
	case COL_NAME:
		t = strdup(row->name);
		j = json_object_new_string(row->name);
		break;
	case COL_PATH:
		if (asprintf(&t, "/dev/%s", row->name) < 0)
			t = NULL;
		j = t ? json_object_new_string(t) : NULL;
		break;
	case COL_TYPE:
		/* lsblk's word for a partition; the probe's layer kind stays "partition" */
		t = strdup(lcloud_layer_get_kind(top) == LCLOUD_LAYER_PARTITION
				   ? "part"
				   : lcloud_layer_kind_to_string(lcloud_layer_get_kind(top)));
		j = json_object_new_string(t);
		break;
	case COL_FACT:
	case COL_IO_SIZE: {
		const struct lcloud_fact *f = stack_fact(p, col->fact);

		t = fact_text(f, st->g->bytes || col->kind == COL_IO_SIZE);
		j = f ? fact_to_json(f) : NULL;
		break;
	}
	case COL_WC:
		t = one_word(present_string(p, col->fact));
		j = t ? json_object_new_string(t) : NULL;
		break;
	case COL_ALIGN:
		t = strdup(is_misaligned(p) ? "MISALIGNED" : "ok");
		j = json_object_new_string(t);
		row->colored[c] = true;
		row->role[c] = is_misaligned(p) ? COLOR_BAD : COLOR_GOOD;
		break;
	case COL_MODEL: {
		const char *m = present_string(p, col->fact);

		/* sysfs pads the model with spaces; libsmartcols escapes the rest as lsblk's cells */
		if (m) {
			size_t len = strlen(m);

			while (len && m[len - 1] == ' ')
				len--;
			t = strndup(m, len);
			j = t ? json_string_from_device(t) : NULL;
		}
		break;
	}
	case COL_TRAN: {
		/* a partition's transport is its disk's */
		int below = cli_below_partitions(p);
		const char *disk = below > 0 ? lcloud_layer_get_name(lcloud_probe_get_layer(p, (unsigned int)below))
					     : row->name;

		t = block_transport(st->sysroot, disk);
		j = t ? json_object_new_string(t) : NULL;
		break;
	}
	case COL_FSTYPE: {
		const struct mount_entry *m = mount_table_find(&st->mounts, st->sysroot, devno);

		t = m ? strdup(m->fstype) : udev_fs_type(st->sysroot, devno);
		j = t ? json_string_from_device(t) : NULL;
		break;
	}
	case COL_MOUNTPOINT: {
		const struct mount_entry *m = mount_table_find(&st->mounts, st->sysroot, devno);

		if (m) {
			j = json_string_from_device(m->mount_point);
			t = strdup(m->mount_point); /* unescaped from mountinfo; libsmartcols escapes it once */
		}
		break;
	}
	case COL_MOUNTPOINTS: {
		const struct mount_entry *m = NULL, **seen = NULL;
		size_t n = 0, len = 0;

		/*
		 * The latest mount first, as lsblk walks the mount table backwards; one a line
		 * (libsmartcols writes \x0a for the newline in -r and -P, as lsblk); JSON: an array.
		 */
		while ((m = mount_table_next(&st->mounts, st->sysroot, devno, m))) {
			const struct mount_entry **grown = realloc(seen, (n + 1) * sizeof(*seen));

			if (!grown)
				break;
			seen = grown;
			seen[n++] = m;
			len += strlen(m->mount_point) + 1;
		}
		j = json_object_new_array();
		t = n ? calloc(1, len) : NULL;
		for (size_t k = n; k-- > 0;) {
			if (t) {
				if (*t)
					strcat(t, "\n");
				strcat(t, seen[k]->mount_point);
			}
			json_object_array_add(j, json_string_from_device(seen[k]->mount_point));
		}
		if (!n)
			json_object_array_add(j, NULL);
		free(seen);
		break;
	}
	case COL_VERDICT: {
		const struct lcloud_verdict *v = lcloud_probe_get_verdict(p, (enum lcloud_io_path)col->io_path);
		uint64_t max = v ? lcloud_verdict_get_max_untorn_bytes(v) : 0;
		bool unknown = !v || lcloud_verdict_get_unknown_reason(v);

		/* JSON: the bytes, 0 for none, null when nothing could be proved and the evidence was unreadable */
		if (max) {
			t = size_text(max, st->g->bytes);
			j = json_object_new_uint64(max);
		} else {
			t = strdup(unknown ? "unknown" : "none");
			j = unknown ? NULL : json_object_new_uint64(0);
		}
		row->colored[c] = true;
		row->role[c] = max ? COLOR_GOOD : unknown ? COLOR_UNKNOWN : COLOR_BAD;
		break;
	}
	case COL_UNTORN: {
		enum lcloud_io_path decided = LCLOUD_PATH_BEST;
		char why[256];
		int r = lcloud_probe_check(p, LCLOUD_PATH_BEST, st->untorn_size, &decided, why, sizeof(why));

		/* larger than the device itself: no write of that size is untorn there */
		t = strdup(r == LCLOUD_ANSWER_UNTORN ? "yes" : r == LCLOUD_ANSWER_NO || r == -ERANGE ? "no" : "unknown");
		j = json_object_new_string(t);
		row->colored[c] = true;
		row->role[c] = r == LCLOUD_ANSWER_UNTORN ? COLOR_GOOD : t[0] == 'n' ? COLOR_BAD : COLOR_UNKNOWN;
		break;
	}
	}
	row->text[c] = t;
	json_object_object_add(row->json, col->json_key, j);
}

static void probe_row(struct list_state *st, struct row *row)
{
	uint32_t flags = LCLOUD_PROBE_NO_SIGNATURES;
	struct lcloud_probe *p = NULL;
	int r;

	if (row->probed)
		return;
	row->probed = true;
	/* the default columns are the kernel's view: no device commands, no verdicts */
	if (!st->verdicts)
		flags |= LCLOUD_PROBE_NO_DEVICE_QUERY | LCLOUD_PROBE_NO_VERDICT;
	r = lcloud_probe_blockdev(st->ctx, row->name, flags, &p);
	if (r < 0) {
		/* A device can vanish between listing and probing; say so and go on. */
		report_probe_error("lcloudctl list", row->name, r);
		if (st->errors)
			json_object_array_add(st->errors, probe_error_to_json(row->name, r));
		if (r != -ENOENT)
			st->failures++;
		return;
	}
	row->json = json_object_new_object();
	for (size_t k = 0; k < st->n_selected; k++)
		if (!row->json || !json_object_object_get_ex(row->json, columns[st->selected[k]].json_key, NULL))
			fill_cell(st, row, p, st->selected[k]);
	lcloud_probe_free(p);
}

static int collect_name(const char *name, void *userdata)
{
	struct list_state *st = userdata;
	struct row *grown = realloc(st->rows, (st->n_rows + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	st->rows = grown;
	memset(&grown[st->n_rows], 0, sizeof(*grown));
	grown[st->n_rows].name = strdup(name);
	if (!grown[st->n_rows].name)
		return -ENOMEM;
	st->n_rows++;
	return 0;
}

static struct row *find_row(struct list_state *st, const char *name)
{
	for (size_t i = 0; i < st->n_rows; i++)
		if (strcmp(st->rows[i].name, name) == 0)
			return &st->rows[i];
	return NULL;
}

static bool is_child_of(const struct row *child, const char *parent)
{
	for (size_t i = 0; i < child->n_parents; i++)
		if (strcmp(child->parents[i], parent) == 0)
			return true;
	return false;
}

/* ROW and everything built on it (partitions, holders): what lsblk lists for a named device, tree or not. */
static void want_with_children(struct list_state *st, struct row *row, int depth)
{
	row->wanted = true;
	if (depth > 16)
		return;
	for (size_t i = 0; i < st->n_rows; i++)
		if (&st->rows[i] != row && is_child_of(&st->rows[i], row->name))
			want_with_children(st, &st->rows[i], depth + 1);
}

/*
 * lsblk's order (its default sort column is MAJ:MIN, compared as dev_t
 * values): loop2 before loop10, a disk before the partitions the kernel
 * numbered after it. A device whose number cannot be read goes last, in
 * the natural order of its name.
 */
static int compare_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->has_devno != y->has_devno)
		return x->has_devno ? -1 : 1;
	if (x->has_devno && x->devno != y->devno)
		return x->devno < y->devno ? -1 : 1;
	return strverscmp(x->name, y->name);
}

static bool has_parent_in_list(struct list_state *st, const struct row *row)
{
	for (size_t i = 0; i < row->n_parents; i++) {
		struct row *p = find_row(st, row->parents[i]);

		if (p && p->json)
			return true;
	}
	return false;
}

/*
 * ROW's line and, with DESCEND, the lines of what is built on it after it:
 * drawn under it with NEST (--tree), flat rows in tree order without it
 * (-r and -P, as lsblk -r and -P keep a device's children after it).
 */
static void add_table_line(struct list_state *st, struct libscols_table *table, struct libscols_line *parent,
			   struct row *row, bool descend, bool nest, int depth)
{
	struct libscols_line *line;

	if (!row->json)
		return;
	line = scols_table_new_line(table, nest ? parent : NULL);
	for (size_t k = 0; line && k < st->n_selected; k++) {
		int c = st->selected[k];

		/* a missing value: "-" in a table and in -r (awk counts fields), empty in -P as lsblk */
		scols_line_set_data(line, k, row->text[c] ? row->text[c] : st->pairs ? "" : "-");
		if (st->g->color && row->colored[c])
			scols_cell_set_color(scols_line_get_cell(line, k), color_name(row->role[c]));
	}
	if (!descend || depth > 16 || !line)
		return;
	for (size_t i = 0; i < st->n_rows; i++)
		if (is_child_of(&st->rows[i], row->name))
			add_table_line(st, table, line, &st->rows[i], descend, nest, depth + 1);
}

static json_object *row_json(struct list_state *st, struct row *row, bool tree, int depth)
{
	json_object *o = NULL, *children;

	if (!row->json || json_object_deep_copy(row->json, &o, NULL) < 0)
		return NULL;
	if (!tree || depth > 16)
		return o;
	children = json_object_new_array();
	for (size_t i = 0; i < st->n_rows; i++)
		if (is_child_of(&st->rows[i], row->name)) {
			json_object *c = row_json(st, &st->rows[i], tree, depth + 1);

			if (c)
				json_object_array_add(children, c);
		}
	if (json_object_array_length(children))
		json_object_object_add(o, "children", children);
	else
		json_object_put(children);
	return o;
}

void cmd_list_usage(FILE *out)
{
	fputs("Usage: lcloudctl list [options] [DEVICE...]\n"
	      "\n"
	      "List block devices with their sector sizes, atomic write limits (AWU-MIN,\n"
	      "AWU-MAX, AW-MAX, AW-BOUND), write streams and alignment, as lsblk -t lists\n"
	      "its topology, in lsblk's order (by device number). DEVICE (nvme0n1, /dev/sda,\n"
	      "/dev/mapper/NAME) lists only those and what is built on them (partitions,\n"
	      "dm and md devices), as lsblk DEVICE does. '-' marks a value this kernel or\n"
	      "device does not provide. Loop devices with no file attached and RAM disks\n"
	      "are left out, as lsblk does, unless --all.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output COLUMNS  the columns to show, e.g. NAME,SIZE,AWU-MAX;\n"
	      "                        +COLUMNS adds to the default set\n"
	      "  -O, --output-all      every column\n"
	      "  -n, --noheadings      no heading line\n"
	      "  -r, --raw             raw output: one space between columns\n"
	      "  -P, --pairs           KEY=\"value\" pairs, one device a line\n"
	      "  -J, --json            JSON (the same as --format json)\n"
	      "      --format FORMAT   normal (default) or json\n"
	      "  -b, --bytes           print sizes as plain numbers\n"
	      "  -d, --nodeps          no partitions, nor what is built on a device\n"
	      "  -e, --exclude LIST    leave out the devices of these major numbers\n"
	      "                        (comma-separated; default 1, RAM disks)\n"
	      "  -I, --include LIST    list only the devices of these major numbers\n"
	      "  -t, --topology        the default columns (as lsblk -t, with the atomic\n"
	      "                        write limits): undoes an -o or -O before it\n"
	      "  -T, --tree            partitions under their disk, dm and md devices under\n"
	      "                        the devices they are built on\n"
	      "  -l, --list            one flat line per device (the default; undoes -T)\n"
	      "  -i, --ascii           draw the tree in ASCII (the default under a locale\n"
	      "                        that is not UTF-8)\n"
	      "  -s, --size N          the write size of the UNTORN column (added when not\n"
	      "                        asked for); a power of two, e.g. 16K\n"
	      "  -a, --all             also loop devices with no file attached and RAM disks\n"
	      "  -h, --help            show this help\n"
	      "\n"
	      "Columns:\n"
	      "  NAME          device name             PATH          /dev/NAME\n"
	      "  SIZE          size (512M, 1.5G)       RO            read-only (1, 0)\n"
	      "  TYPE          disk, part, loop, dm, md\n"
	      "  MIN-IO        minimum I/O size        OPT-IO        optimal I/O size\n"
	      "  PHY-SEC       physical sector size    LOG-SEC       logical sector size\n"
	      "  (MIN-IO, OPT-IO, PHY-SEC and LOG-SEC in bytes, as lsblk prints them)\n"
	      "  ROTA          rotational (1, 0)       AWU-MIN       atomic write unit min\n"
	      "  AWU-MAX       atomic write unit max   AW-MAX        atomic write max bytes\n"
	      "  AW-BOUND      atomic write boundary   STREAMS       write streams\n"
	      "  STREAM-GRAN   write stream granularity\n"
	      "  WC            write cache: write-back or write-through\n"
	      "  ALIGN         ok, or MISALIGNED (a partition off its disk's atomic unit)\n"
	      "  MODEL         the disk's model        TRAN          nvme, sata, virtio...\n"
	      "  FSTYPE        file system type        MOUNTPOINT    where it is mounted\n"
	      "  MOUNTPOINTS   every mount point of it, one a line\n"
	      "  RWF-ATOMIC    largest untorn write with RWF_ATOMIC (none, unknown)\n"
	      "  PASSTHROUGH   largest untorn NVMe passthrough write\n"
	      "  PLAIN-DIRECT  largest untorn plain O_DIRECT write\n"
	      "  UNTORN        is an aligned --size write untorn: yes, no, unknown\n"
	      "The verdict columns (the last four) probe the devices as 'probe' does;\n"
	      "the others read sysfs and mountinfo only.\n"
	      "Default: NAME,SIZE,TYPE,MIN-IO,OPT-IO,PHY-SEC,LOG-SEC,AWU-MIN,AWU-MAX,\n"
	      "AW-MAX,AW-BOUND,STREAMS,STREAM-GRAN,WC,ALIGN\n",
	      out);
}

#define LIST_HELP_SHOWN (-1)

/* How the rows are shown: lsblk's options that choose a layout, not columns. */
struct list_view {
	bool output_all, noheadings, raw, pairs, tree, ascii;
	uint32_t enumerate_flags;
};

static void select_default_columns(struct list_state *st)
{
	st->n_selected = 0;
	for (size_t k = 0; k < N_COLUMNS; k++)
		if (columns[k].in_default)
			st->selected[st->n_selected++] = (int)k;
}

/* -e/-I LIST: comma-separated major numbers; false when one is not a number (said on stderr). */
static bool parse_majors(struct list_state *st, const char *arg, bool include)
{
	const char *s = arg;

	st->n_majors = 0;
	st->include_majors = include;
	while (*s) {
		char *end;
		unsigned long m;

		errno = 0;
		m = strtoul(s, &end, 10);
		if (end == s || errno || m > UINT32_MAX || (*end && *end != ',') || st->n_majors == MAX_MAJORS) {
			usage_error("lcloudctl list", "%s '%s': give major numbers separated by commas, e.g. 1,7",
				    include ? "--include" : "--exclude", tty_str(arg));
			return false;
		}
		st->majors[st->n_majors++] = (unsigned int)m;
		s = *end ? end + 1 : end;
	}
	return true;
}

/* Left out at the top by -e/-I (or the default, RAM disks): ROW's major is listed (-e) or not (-I). */
static bool major_filtered(const struct list_state *st, const struct row *row)
{
	bool listed = false;

	if (!row->has_devno)
		return false;
	for (size_t i = 0; i < st->n_majors; i++)
		listed |= major(row->devno) == st->majors[i];
	return st->include_majors ? !listed : listed;
}

/* EXIT_OK to go on, LIST_HELP_SHOWN after --help; else the exit code of a usage error. */
static int parse_list_options(struct list_state *st, struct global_opts *opts, struct list_view *v,
			      int argc, char **argv)
{
	static const struct option options[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "output", required_argument, NULL, 'o' },
		{ "output-all", no_argument, NULL, 'O' },
		{ "noheadings", no_argument, NULL, 'n' },
		{ "raw", no_argument, NULL, 'r' },
		{ "pairs", no_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'J' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "bytes", no_argument, NULL, 'b' },
		{ "topology", no_argument, NULL, 't' },
		{ "tree", no_argument, NULL, 'T' },
		{ "ascii", no_argument, NULL, 'i' },
		{ "list", no_argument, NULL, 'l' },
		{ "size", required_argument, NULL, 's' },
		{ "nodeps", no_argument, NULL, 'd' },
		{ "exclude", required_argument, NULL, 'e' },
		{ "include", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool majors_given = false;
	int c;

	select_default_columns(st);
	/* RAM disks are left out unless --all, -e or -I says otherwise (lsblk) */
	st->majors[0] = RAM_DISK_MAJOR;
	st->n_majors = 1;
	optind = 0; /* 0, not 1: glibc then re-reads the option string (main used "+") */
	while ((c = getopt_long(argc, argv, ":ao:OnrPJbtTils:de:I:h", options, NULL)) != -1) {
		switch (c) {
		case 'a':
			v->enumerate_flags |= LCLOUD_BLOCKDEV_UNBOUND_LOOPS;
			if (!majors_given)
				st->n_majors = 0;
			break;
		case 'd':
			st->nodeps = true;
			break;
		case 'e':
		case 'I':
			if (majors_given) {
				usage_error("lcloudctl list", "give one of --exclude and --include, once");
				return EXIT_USAGE;
			}
			majors_given = true;
			if (!parse_majors(st, optarg, c == 'I'))
				return EXIT_USAGE;
			break;
		case 'o':
			if (!parse_columns(st, optarg))
				return EXIT_USAGE;
			break;
		case 'O':
			v->output_all = true;
			break;
		case 'n':
			v->noheadings = true;
			break;
		case 'r':
			v->raw = true;
			break;
		case 'P':
			v->pairs = true;
			break;
		case 'J':
		case OPT_FORMAT:
			if (format_option("lcloudctl list", c, argc, argv, &opts->format) < 0)
				return EXIT_USAGE;
			break;
		case 'b':
			opts->bytes = true;
			break;
		case 't':
			v->output_all = false;
			select_default_columns(st);
			break;
		case 'T':
			v->tree = true;
			break;
		case 'i':
			v->ascii = true;
			break;
		case 'l':
			v->tree = false; /* lsblk's -l; flat rows are already the default here */
			break;
		case 's':
			if (parse_size(optarg, &st->untorn_size) < 0 || !st->untorn_size ||
			    (st->untorn_size & (st->untorn_size - 1)))
				return usage_error("lcloudctl list", "--size '%s' is not a power of two (try 16K)",
						   tty_str(optarg));
			break;
		case 'h':
			cmd_list_usage(stdout);
			return LIST_HELP_SHOWN;
		default:
			return usage_option_error("lcloudctl list", c, argc, argv);
		}
	}
	return EXIT_OK;
}

/* The columns -O, -s and the UNTORN column ask for, checked against each other. */
static int settle_columns(struct list_state *st, const struct global_opts *opts, const struct list_view *v)
{
	bool has_untorn = false;

	st->pairs = v->pairs;
	if (v->output_all) {
		/* UNTORN only with the --size it answers for */
		st->n_selected = 0;
		for (size_t k = 0; k < N_COLUMNS; k++)
			if (columns[k].kind != COL_UNTORN || st->untorn_size)
				st->selected[st->n_selected++] = (int)k;
	}
	if (v->raw + v->pairs + (opts->format == OUTPUT_JSON) > 1)
		return usage_error("lcloudctl list", "choose one of --raw, --pairs and --json");
	for (size_t k = 0; k < st->n_selected; k++) {
		has_untorn |= columns[st->selected[k]].kind == COL_UNTORN;
		st->verdicts |= columns[st->selected[k]].kind == COL_VERDICT ||
				columns[st->selected[k]].kind == COL_UNTORN;
	}
	if (has_untorn && !st->untorn_size)
		return usage_error("lcloudctl list", "the UNTORN column needs --size N (e.g. --size 16K)");
	if (st->untorn_size && !has_untorn) {
		st->selected[st->n_selected++] = find_column("UNTORN", 6); /* --size alone asks for it */
		st->verdicts = true;
	}
	return EXIT_OK;
}

/* A parent of ROW is among the devices listed (probed or not). */
static bool has_parent_row(struct list_state *st, const struct row *row)
{
	for (size_t i = 0; i < row->n_parents; i++)
		if (find_row(st, row->parents[i]))
			return true;
	return false;
}

/*
 * ARG names no block device lcloudctl lists: 3 when nothing is there, 5
 * when something of another kind is (a directory, a file), as probe's exit
 * codes; said on stderr and in the JSON's errors.
 */
static int not_a_block_device(struct list_state *st, const char *arg)
{
	char *full = NULL;
	struct stat sb;
	int err = -ENOENT;

	/* a /dev path under --sysroot; a bare name that is no device, in the current folder */
	if (asprintf(&full, "%s%s", arg[0] == '/' ? st->sysroot : "", arg) >= 0 && stat(full, &sb) == 0 &&
	    !S_ISBLK(sb.st_mode))
		err = -ENOTBLK;
	free(full);
	if (err == -ENOTBLK)
		fprintf(stderr, "lcloudctl list: %s: not a block device (%s); 'lcloudctl probe' takes files and "
			"directories\n", tty_str(arg), S_ISDIR(sb.st_mode) ? "a directory" : S_ISREG(sb.st_mode) ? "a file"
												  : "another kind of file");
	else
		fprintf(stderr, "lcloudctl list: %s: no such block device\n", tty_str(arg));
	if (st->errors)
		json_object_array_add(st->errors, probe_error_to_json(arg, err));
	return err == -ENOTBLK ? EXIT_WRONG_KIND : EXIT_NOT_FOUND;
}

/*
 * The roots, in lsblk's order whatever the order given: the named
 * devices, each with what is built on it (its partitions, the dm and
 * md devices on it), or every device not built on another listed one
 * that -e and -I keep (RAM disks left out by default), with what is built
 * on those. -d: the roots alone.
 */
static int choose_rows(struct list_state *st, int argc, char **argv)
{
	int rc = EXIT_OK;

	if (optind >= argc) {
		for (size_t i = 0; i < st->n_rows; i++)
			st->rows[i].root = !has_parent_row(st, &st->rows[i]);
		for (size_t i = 0; i < st->n_rows; i++) {
			if (!st->rows[i].root || major_filtered(st, &st->rows[i]))
				continue;
			if (st->nodeps)
				st->rows[i].wanted = true;
			else
				want_with_children(st, &st->rows[i], 0);
		}
		for (size_t i = 0; i < st->n_rows; i++)
			if (st->rows[i].wanted)
				probe_row(st, &st->rows[i]);
		/* a parent that vanished before its probe: its children stand at the top */
		for (size_t i = 0; i < st->n_rows; i++)
			st->rows[i].root = st->rows[i].wanted && !has_parent_in_list(st, &st->rows[i]);
		return rc;
	}
	for (int i = optind; i < argc; i++) {
		char *name = block_device_name(st->sysroot, argv[i]);
		struct row *row = name ? find_row(st, name) : NULL;
		int r;

		if (!row) {
			r = not_a_block_device(st, argv[i]);
			/* not found (3) unless something of the wrong kind was named (5) */
			if (rc == EXIT_OK || r == EXIT_WRONG_KIND)
				rc = r;
		} else {
			row->root = true;
			if (st->nodeps)
				row->wanted = true;
			else
				want_with_children(st, row, 0);
		}
		free(name);
	}
	for (size_t i = 0; i < st->n_rows; i++)
		if (st->rows[i].wanted)
			probe_row(st, &st->rows[i]);
	return rc;
}

static void print_list_json(struct list_state *st, bool tree_order, bool tree)
{
	json_object *root = json_object_new_object(), *devices = json_object_new_array();

	json_object_object_add(root, "schema", json_object_new_int(1));
	json_object_object_add(root, "blockdevices", devices);
	for (size_t i = 0; i < st->n_rows; i++) {
		json_object *o = (tree_order ? st->rows[i].root : st->rows[i].wanted)
					 ? row_json(st, &st->rows[i], tree && !st->nodeps, 0)
					 : NULL;

		if (o)
			json_object_array_add(devices, o);
	}
	json_object_object_add(root, "errors", st->errors);
	st->errors = NULL; /* the document owns it now */
	print_json(stdout, root);
	json_object_put(root);
}

static int print_list_table(struct list_state *st, const struct list_view *v, bool tree_order, bool color)
{
	struct libscols_table *table = scols_new_table();

	if (!table)
		return EXIT_FAILURE_GENERIC;
	scols_table_enable_noheadings(table, v->noheadings);
	scols_table_enable_raw(table, v->raw);
	scols_table_enable_export(table, v->pairs);
	/* libsmartcols draws the tree with line characters under a UTF-8 LC_CTYPE, in ASCII otherwise */
	scols_table_enable_ascii(table, v->ascii);
	scols_table_enable_colors(table, color && !v->raw && !v->pairs);
	for (size_t k = 0; k < st->n_selected; k++) {
		const struct list_column *col = &columns[st->selected[k]];
		struct libscols_column *cl;
		int fl = col->flags;

		if (v->tree && col->kind == COL_NAME)
			fl |= SCOLS_FL_TREE;
		cl = scols_table_new_column(table, col->header, col->width, fl);
		/* MOUNTPOINTS: one mount point a line, as lsblk wraps it */
		if (cl && col->kind == COL_MOUNTPOINTS)
			scols_column_set_wrapfunc(cl, scols_wrapnl_chunksize, scols_wrapnl_nextchunk, NULL);
	}
	for (size_t i = 0; i < st->n_rows; i++)
		if (tree_order ? st->rows[i].root : st->rows[i].wanted)
			add_table_line(st, table, NULL, &st->rows[i], tree_order && !st->nodeps, v->tree, 0);
	scols_print_table(table);
	scols_unref_table(table);
	return EXIT_OK;
}

static void free_rows(struct list_state *st)
{
	for (size_t i = 0; i < st->n_rows; i++) {
		free(st->rows[i].name);
		for (size_t k = 0; k < N_COLUMNS; k++)
			free(st->rows[i].text[k]);
		for (size_t k = 0; k < st->rows[i].n_parents; k++)
			free(st->rows[i].parents[k]);
		free(st->rows[i].parents);
		json_object_put(st->rows[i].json);
	}
	free(st->rows);
	json_object_put(st->errors);
	mount_table_release(&st->mounts);
}

int cmd_list(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	struct global_opts opts = *g;
	struct list_state st = { .ctx = ctx, .g = &opts };
	struct list_view v = { 0 };
	int r, rc;

	st.sysroot = lcloud_ctx_get_sysroot(ctx) ? lcloud_ctx_get_sysroot(ctx) : "";
	rc = parse_list_options(&st, &opts, &v, argc, argv);
	if (rc == LIST_HELP_SHOWN)
		return EXIT_OK;
	if (rc == EXIT_OK)
		rc = settle_columns(&st, &opts, &v);
	if (rc != EXIT_OK)
		return rc;
	/* a named device is listed even if it is an unbound loop device */
	if (optind < argc)
		v.enumerate_flags |= LCLOUD_BLOCKDEV_UNBOUND_LOOPS;
	r = lcloud_blockdev_foreach_flags(ctx, v.enumerate_flags, collect_name, &st);
	if (r < 0) {
		fprintf(stderr, "lcloudctl list: cannot enumerate block devices: %s\n", strerror(-r));
		rc = EXIT_FAILURE_GENERIC;
	}
	if (opts.format == OUTPUT_JSON)
		st.errors = json_object_new_array();
	for (size_t i = 0; i < st.n_rows; i++) {
		block_parents(st.sysroot, st.rows[i].name, &st.rows[i].parents, &st.rows[i].n_parents);
		st.rows[i].has_devno = block_devno(st.sysroot, st.rows[i].name, &st.rows[i].devno) == 0;
	}
	qsort(st.rows, st.n_rows, sizeof(*st.rows), compare_rows);
	r = choose_rows(&st, argc, argv);
	if (r != EXIT_OK)
		rc = r;

	/*
	 * As lsblk: --tree draws each root with what is built on it; -r and -P
	 * print the same order flat; the plain table and JSON without --tree
	 * list each device once in device number order (lsblk -l, -J -l).
	 */
	bool tree_order = v.tree || (opts.format != OUTPUT_JSON && (v.raw || v.pairs));

	if (opts.format == OUTPUT_JSON)
		print_list_json(&st, tree_order, v.tree);
	else if (print_list_table(&st, &v, tree_order, opts.color) != EXIT_OK)
		rc = EXIT_FAILURE_GENERIC;
	free_rows(&st);
	if (rc != EXIT_OK)
		return rc;
	return st.failures ? EXIT_FAILURE_GENERIC : EXIT_OK;
}
