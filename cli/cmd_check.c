/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lcloudctl check PATH --size N [--path NAME]: one answer, for scripts and config management. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "args.h"
#include "color.h"
#include "commands.h"
#include "escape.h"
#include "exit_codes.h"
#include "print.h"
#include "usage.h"

void cmd_check_usage(FILE *out)
{
	fputs("Usage: lcloudctl check [options] PATH --size N\n"
	      "       lcloudctl check [options] PATH --for mysql|mariadb|postgresql\n"
	      "\n"
	      "Is an aligned N-byte write to PATH untorn on power loss? Without --path or\n"
	      "--for, prints the answer on each I/O path (rwf_atomic, passthrough,\n"
	      "plain_direct, buffered: untorn or not, the largest untorn size, why) and\n"
	      "exits 0 when any path is untorn (naming it), 6 when none is, 8 when it\n"
	      "cannot be told (evidence that needs root, a directory this user cannot\n"
	      "write in). --for answers for the path the database itself writes its pages\n"
	      "through (InnoDB: O_DIRECT, plain_direct; PostgreSQL: the page cache,\n"
	      "buffered), at its page size unless --size is given; --path for one path.\n"
	      "On a file or directory the kernel's RWF_ATOMIC limits are confirmed with\n"
	      "live writes to a temporary file in the same directory, which vanishes.\n"
	      "\n"
	      "Options:\n"
	      "  -s, --size N          write size: a power of two, e.g. 16384, 16K, 16KiB\n"
	      "  -p, --path NAME       one path: rwf_atomic, passthrough, plain_direct,\n"
	      "                        buffered, or best (the first untorn, one line)\n"
	      "      --for DB          mysql, mariadb or postgresql: the database's own path\n"
	      "                        and page size (16K for InnoDB, 8K for PostgreSQL)\n"
	      "      --format FORMAT   normal (default) or json\n"
	      "  -J, --json            the same as --format json\n"
	      "      --no-confirm      no live RWF_ATOMIC writes: statx's word alone\n"
	      "  -h, --help            show this help\n",
	      out);
}

/* The databases --for knows: the path each writes its pages through, and its page size (as advise has it). */
struct database {
	const char *name;
	enum lcloud_io_path path;
	uint64_t page_size;
	const char *writes; /* what the answer is about, for a person */
};

static const struct database databases[] = {
	{ "mysql", LCLOUD_PATH_PLAIN_DIRECT, 16384,
	  "InnoDB pages written with O_DIRECT (innodb_flush_method=O_DIRECT), the plain_direct path" },
	{ "mariadb", LCLOUD_PATH_PLAIN_DIRECT, 16384,
	  "InnoDB pages written with O_DIRECT (innodb_flush_method=O_DIRECT, MariaDB's default since 10.6), the "
	  "plain_direct path" },
	{ "postgresql", LCLOUD_PATH_BUFFERED, 8192,
	  "PostgreSQL pages written through the page cache, the buffered path" },
};

static const struct database *database_named(const char *name)
{
	for (size_t i = 0; i < sizeof(databases) / sizeof(databases[0]); i++)
		if (!strcmp(name, databases[i].name))
			return &databases[i];
	return NULL;
}

static enum color_role answer_color(int answer)
{
	return answer == LCLOUD_ANSWER_UNTORN ? COLOR_GOOD : answer == LCLOUD_ANSWER_UNKNOWN ? COLOR_UNKNOWN : COLOR_BAD;
}

static int exit_of(int answer)
{
	return answer == LCLOUD_ANSWER_UNTORN ? EXIT_OK : answer == LCLOUD_ANSWER_UNKNOWN ? EXIT_UNKNOWN
											   : EXIT_NOT_UNTORN;
}

static int size_too_large(const char *target, uint64_t size)
{
	fprintf(stderr, "lcloudctl check: --size %" PRIu64 " is larger than %s itself\n", size, tty_str(target));
	return EXIT_USAGE;
}

static json_object *check_json(const char *target, uint64_t size, int answer, enum lcloud_io_path path,
			       const char *why)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "schema", json_object_new_int(1));
	json_object_object_add(o, "path", json_string_from_device(target));
	json_object_object_add(o, "size", json_object_new_uint64(size));
	json_object_object_add(o, "untorn", json_object_new_boolean(answer == LCLOUD_ANSWER_UNTORN));
	json_object_object_add(o, "answer", json_object_new_string(lcloud_answer_to_string(answer)));
	json_object_object_add(o, "io_path", json_object_new_string(lcloud_io_path_to_string(path)));
	json_object_object_add(o, "why", json_object_new_string(why));
	return o;
}

/*
 * A path's reason for its row: past "untorn on PATH: " (the row says that),
 * without the evidence in brackets (the first line has it), never cut.
 */
static void row_reason(const char *why, char *buf, size_t size)
{
	const char *lead = strstr(why, " on "), *end;

	if (lead && (lead = strstr(lead, ": ")))
		why = lead + 2;
	end = strrchr(why, '[');
	if (!end || end == why || end[-1] != ' ' || end[strlen(end) - 1] != ']')
		end = why + strlen(why);
	else
		end--;
	snprintf(buf, size, "%.*s", (int)(end - why), why);
}

/* The terminal's width, or 0 when standard output is no terminal (then nothing is wrapped). */
static size_t terminal_width(void)
{
	struct winsize ws;

	if (!isatty(STDOUT_FILENO))
		return 0;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col)
		return ws.ws_col;
	return 80;
}

/*
 * TEXT from column INDENT on: whole, wrapped at spaces within WIDTH (0: one
 * line) with the next lines indented to INDENT, never cut.
 */
static void put_wrapped(const char *text, size_t indent, size_t width)
{
	char escaped[4 * 1024 + 1]; /* each byte of a 1024-byte reason as \xNN at most */
	const char *s = escape_text(text, escaped, sizeof(escaped));
	size_t room = width > indent + 20 ? width - indent : 0;

	while (room && strlen(s) > room) {
		const char *cut = s + room;

		while (cut > s && *cut != ' ')
			cut--;
		if (cut == s) /* one word longer than the room: it stays whole */
			cut = strchr(s + room, ' ');
		if (!cut)
			break;
		printf("%.*s\n%*s", (int)(cut - s), s, (int)indent, "");
		s = cut + 1;
	}
	puts(s);
}

/* Where a row's reason starts: "  %-13s %-8s %-14s ". */
#define REASON_COLUMN 40

/*
 * Every path, one line each (a file: not passthrough), and the answer: untorn when any path is (naming
 * them), unknown when none is and one could not be decided, else no.
 */
static int check_every_path(const struct global_opts *g, struct lcloud_probe *p, const char *target, uint64_t size,
			    enum output_format format)
{
	static const enum lcloud_io_path paths[] = { LCLOUD_PATH_RWF_ATOMIC, LCLOUD_PATH_PASSTHROUGH,
						     LCLOUD_PATH_PLAIN_DIRECT, LCLOUD_PATH_BUFFERED };
	enum lcloud_target_type type = lcloud_probe_get_target_type(p);
	bool is_file = type == LCLOUD_TARGET_REGULAR || type == LCLOUD_TARGET_DIRECTORY;
	char why[4][1024], untorn_on[128] = "", best_why[1024];
	size_t width = terminal_width();
	int answers[4], overall;
	enum lcloud_io_path decided;
	json_object *o, *list;

	overall = lcloud_probe_check(p, LCLOUD_PATH_BEST, size, &decided, best_why, sizeof(best_why));
	if (overall == -ERANGE) {
		lcloud_probe_free(p);
		return size_too_large(target, size);
	}
	for (size_t i = 0; i < 4 && overall >= 0; i++) {
		answers[i] = lcloud_probe_check(p, paths[i], size, NULL, why[i], sizeof(why[i]));
		if (answers[i] < 0)
			overall = answers[i];
		else if (answers[i] == LCLOUD_ANSWER_UNTORN)
			snprintf(untorn_on + strlen(untorn_on), sizeof(untorn_on) - strlen(untorn_on), "%s%s",
				 untorn_on[0] ? ", " : "", lcloud_io_path_to_string(paths[i]));
	}
	if (overall < 0) {
		lcloud_probe_free(p);
		fprintf(stderr, "lcloudctl check: %s: %s\n", tty_str(target), strerror(-overall));
		return EXIT_FAILURE_GENERIC;
	}
	if (format == OUTPUT_JSON) {
		o = check_json(target, size, overall, decided, best_why);
		list = json_object_new_array();
		for (size_t i = 0; i < 4; i++) {
			const struct lcloud_verdict *v = lcloud_probe_get_verdict(p, paths[i]);
			json_object *e = json_object_new_object();

			json_object_object_add(e, "io_path", json_object_new_string(lcloud_io_path_to_string(paths[i])));
			json_object_object_add(e, "answer", json_object_new_string(lcloud_answer_to_string(answers[i])));
			json_object_object_add(e, "max_untorn_bytes",
					       json_object_new_uint64(v ? lcloud_verdict_get_max_untorn_bytes(v) : 0));
			json_object_object_add(e, "why", json_object_new_string(why[i]));
			json_object_array_add(list, e);
		}
		json_object_object_add(o, "paths", list);
		print_json(stdout, o);
		json_object_put(o);
		lcloud_probe_free(p);
		return exit_of(overall);
	}
	/*
	 * The first line is the answer with the deciding path's whole reason (what scripts read); a "no"
	 * names every path, not only the one that came closest.
	 */
	printf("%s: %s", tty_str(target), color_start(g, answer_color(overall)));
	if (overall == LCLOUD_ANSWER_NO) {
		const char *rest = strstr(best_why, ": ");

		printf("not untorn on any path; %s comes closest: ", lcloud_io_path_to_string(decided));
		fputs_escaped(rest ? rest + 2 : best_why, stdout);
	} else {
		fputs_escaped(best_why, stdout);
		if (overall == LCLOUD_ANSWER_UNTORN && strchr(untorn_on, ','))
			printf(" (untorn on %s)", untorn_on);
	}
	printf("%s\n", color_end(g));
	for (size_t i = 0; i < 4; i++) {
		const struct lcloud_verdict *v = lcloud_probe_get_verdict(p, paths[i]);
		uint64_t max = v ? lcloud_verdict_get_max_untorn_bytes(v) : 0;
		char reason[1024], most[32] = "none";

		/* a file is never written by NVMe passthrough, which addresses a namespace's blocks: no row */
		if (paths[i] == LCLOUD_PATH_PASSTHROUGH && is_file)
			continue;
		if (max)
			snprintf(most, sizeof(most), "up to %s", format_size(max, reason, sizeof(reason)));
		else if (answers[i] == LCLOUD_ANSWER_UNKNOWN)
			snprintf(most, sizeof(most), "-");
		row_reason(why[i], reason, sizeof(reason));
		printf("  %-13s %s%-8s%s %-14s ", lcloud_io_path_to_string(paths[i]),
		       color_start(g, answer_color(answers[i])), lcloud_answer_to_string(answers[i]), color_end(g), most);
		put_wrapped(reason, REASON_COLUMN, width);
	}
	/* untorn only where the databases do not write: say so, and how to ask for theirs */
	if (overall == LCLOUD_ANSWER_UNTORN && answers[2] != LCLOUD_ANSWER_UNTORN)
		printf("InnoDB writes its pages with O_DIRECT (plain_direct) and PostgreSQL through the page cache "
		       "(buffered): check --for mysql or --for postgresql answers for them\n");
	lcloud_probe_free(p);
	return exit_of(overall);
}

int cmd_check(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	static const struct option options[] = {
		{ "size", required_argument, NULL, 's' },
		{ "path", required_argument, NULL, 'p' },
		FORMAT_OPTIONS,
		{ "no-confirm", no_argument, NULL, 'C' },
		{ "for", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum lcloud_io_path path = LCLOUD_PATH_BEST, decided = LCLOUD_PATH_BEST;
	enum output_format format = g->format;
	struct lcloud_probe *p = NULL;
	const char *target;
	uint32_t flags = LCLOUD_PROBE_NO_SIGNATURES | LCLOUD_PROBE_CONFIRM_ATOMIC;
	bool have_size = false, have_path = false;
	const struct database *db = NULL;
	uint64_t size = 0;
	char why[1024];
	int c, r;

	optind = 0; /* 0, not 1: glibc then re-reads the option string (main used "+") */
	while ((c = getopt_long(argc, argv, ":s:p:o:Jh", options, NULL)) != -1) {
		r = format_option("lcloudctl check", c, argc, argv, &format);
		if (r < 0)
			return EXIT_USAGE;
		if (r > 0)
			continue;
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
		case 'F':
			db = database_named(optarg);
			if (!db) {
				fprintf(stderr, "lcloudctl check: unknown database '%s' (use mysql, mariadb or "
					"postgresql)\n", tty_str(optarg));
				return EXIT_USAGE;
			}
			break;
		case 'p':
			have_path = true;
			if (lcloud_io_path_from_string(optarg, &path) < 0) {
				fprintf(stderr, "lcloudctl check: unknown path '%s' (use rwf_atomic, passthrough, "
					"plain_direct, buffered or best)\n", tty_str(optarg));
				return EXIT_USAGE;
			}
			break;
		case 'h':
			cmd_check_usage(stdout);
			return EXIT_OK;
		default:
			return usage_option_error("lcloudctl check", c, argc, argv);
		}
	}
	if (db && have_path)
		return usage_error("lcloudctl check", "give --for or --path, not both: --for picks the database's own path");
	if (db && !have_size) {
		size = db->page_size;
		have_size = true;
	}
	if (db)
		path = db->path;
	if (optind + 1 != argc)
		return usage_error("lcloudctl check", optind == argc ? "no PATH given" : "give exactly one PATH");
	if (!have_size)
		return usage_error("lcloudctl check", "--size is required (e.g. --size 16K), or --for DB");
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
	if (!have_path && !db)
		return check_every_path(g, p, target, size, format);
	r = lcloud_probe_check(p, path, size, &decided, why, sizeof(why));
	lcloud_probe_free(p);
	if (r == -ERANGE)
		return size_too_large(target, size);
	if (r < 0) {
		fprintf(stderr, "lcloudctl check: %s: %s\n", tty_str(target), strerror(-r));
		return EXIT_FAILURE_GENERIC;
	}
	if (format == OUTPUT_JSON) {
		json_object *o = check_json(target, size, r, decided, why);

		if (db)
			json_object_object_add(o, "for", json_object_new_string(db->name));
		print_json(stdout, o);
		json_object_put(o);
	} else {
		/* the reason may quote what a device calls itself: escaped, as every device string */
		printf("%s: %s", tty_str(target), color_start(g, answer_color(r)));
		if (db)
			printf("%s: ", db->writes);
		fputs_escaped(why, stdout);
		fputs(color_end(g), stdout);
		putchar('\n');
	}
	return exit_of(r);
}
