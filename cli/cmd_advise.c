/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl advise PATH --db mysql|mariadb|postgresql: the verdict turned
 * into database settings, and on a cloud disk model (named, or recognised
 * from the cloud layer) what the doublewrite buffer costs (disk_models.c). What each database does with its pages, and where
 * that is documented, is listed in lcloudctl(1), ADVICE AND SOURCES:
 *  - InnoDB (MySQL, MariaDB) writes data pages with O_DIRECT when
 *    innodb_flush_method=O_DIRECT: the plain_direct path. It does not use
 *    RWF_ATOMIC. innodb_doublewrite protects pages from tearing.
 *  - MySQL 8.0.30+ DETECT_ONLY writes only page metadata to the doublewrite
 *    buffer: torn pages are detected, not repaired.
 *  - PostgreSQL writes data pages through the page cache: the buffered path;
 *    full_page_writes protects them.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "data_file_edges.h"
#include "escape.h"
#include "exit_codes.h"
#include "usage.h"
#include "print.h"
#include "proof.h"
#include "cli_facts.h"
#include "disk_models.h"

enum db { DB_MYSQL, DB_MARIADB, DB_POSTGRESQL };

struct advice {
	json_object *lines;    /* why, one statement each */
	json_object *raw;      /* the same with names' bytes as they are, for the text output */
	json_object *settings; /* name -> value */
	json_object *model;    /* the disk model's figures, or NULL */
	const struct disk_model *disk; /* named with --disk-model or recognised, or NULL */
	const char *disk_why;          /* what was recognised (NULL: named) */
};

__attribute__((format(printf, 2, 3)))
static void say(struct advice *a, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* the lines name files, whose names may hold any byte: JSON stays valid UTF-8, text shows the bytes */
	json_object_array_add(a->lines, json_string_from_device(buf));
	json_object_array_add(a->raw, json_object_new_string(buf));
}

static void setting(struct advice *a, const char *name, const char *value)
{
	json_object_object_add(a->settings, name, json_object_new_string(value));
}

/* Would the file system's device keep the page whole, if the file system allocated in pages? */
static bool device_keeps_page(struct lcloud_ctx *ctx, const struct lcloud_probe *p, uint64_t page, uint64_t *fs_unit)
{
	const char *source = NULL;
	struct lcloud_probe *dev = NULL;
	bool yes = false;

	*fs_unit = 0;
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++) {
		const struct lcloud_layer *l = lcloud_probe_get_layer(p, i);

		if (lcloud_layer_get_kind(l) != LCLOUD_LAYER_FILESYSTEM)
			continue;
		source = cli_fact_string(l, FACT_MOUNT_SOURCE);
		/* the cluster, else the block; neither read: 0, and no advice rests on it */
		if (cli_fact_u64(l, FACT_CLUSTER_SIZE, fs_unit) <= 0 || !*fs_unit)
			*fs_unit = 0;
		if (!*fs_unit && cli_fact_u64(l, FACT_BLOCK_SIZE, fs_unit) <= 0)
			*fs_unit = 0;
	}
	if (!source || strncmp(source, "/dev/", 5) != 0)
		return false;
	if (lcloud_probe_path(ctx, source, LCLOUD_PROBE_NO_SIGNATURES, &dev) == 0) {
		yes = lcloud_probe_check(dev, LCLOUD_PATH_PLAIN_DIRECT, page, NULL, NULL, 0) == 1;
		lcloud_probe_free(dev);
	}
	return yes;
}

/*
 * The plain_direct verdict counts on queue/nomerges 2, which the kernel
 * resets whenever the disk appears again: the udev rule that keeps it, for
 * this disk by its WWID. False when the verdict does not rest on it, or the
 * disk has no WWID a rule can match exactly.
 */
static bool nomerges_rule(const struct lcloud_probe *p, char *buf, size_t len)
{
	const struct lcloud_verdict *v = lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT);
	const struct lcloud_layer *disk = cli_first_layer(p, LCLOUD_LAYER_DISK);
	const char *wwid;
	bool rests = false;

	for (unsigned int i = 0; i < lcloud_verdict_get_reason_count(v); i++) {
		const char *evidence = lcloud_verdict_get_reason_evidence(v, i);

		rests |= evidence && strcmp(evidence, "sysfs:queue/nomerges") == 0;
	}
	wwid = cli_fact_string(disk, FACT_WWID);
	if (!rests || !wwid || !*wwid)
		return false;
	/* a match value is a glob, quoted: only a WWID without those characters names one disk */
	for (const char *c = wwid; *c; c++)
		if (*c < 0x20 || *c > 0x7e || strchr("\"\\*?[]|", *c))
			return false;
	snprintf(buf, len, "ACTION==\"add|change\", SUBSYSTEM==\"block\", ENV{DEVTYPE}==\"disk\", "
		 "ATTRS{wwid}==\"%s\", ATTR{queue/nomerges}=\"2\"", wwid);
	return true;
}

/*
 * What dropping the doublewrite buffer buys on disk model M (named, or
 * recognised as RECOGNISED says): the best gain its caps allow, and what
 * liblcloud measured under the same caps. OFF: the advice turns the buffer off.
 */
static void say_disk_model(struct advice *a, const struct disk_model *m, const char *recognised, uint64_t page,
			   bool off)
{
	const unsigned int batch = 64;
	const char *bound;
	double limit = disk_model_limit(m, page, batch, &bound);
	bool measured = page == 16384 && m->page_flush_ratio > 0;
	char caps[640], seen[768] = "", phases[320] = "";
	json_object *o = json_object_new_object();

	snprintf(caps, sizeof(caps), "%s (%" PRIu64 " IOPS, %" PRIu64 " MiB/s, an I/O of up to %" PRIu64
		 " KiB counted as one operation)%s%s", m->title, m->iops, m->bytes_per_s >> 20, m->iops_size >> 10,
		 recognised ? ", recognised here as " : "", recognised ? recognised : "");
	if (measured && m->mariadb_tps_ratio > 0)
		snprintf(seen, sizeof(seen), "; liblcloud measured %.2fx in its page flush benchmark (16 KiB pages, "
			 "depth 32) and %.2fx the transactions per second of MariaDB's sysbench oltp_write_only, "
			 "doublewrite OFF against ON, under the same caps scaled down for emulation "
			 "(tests/bench/README.md in liblcloud's source, 'page_flush under cloud disk models' and "
			 "'MariaDB under cloud disk models')", m->page_flush_ratio, m->mariadb_tps_ratio);
	else if (measured)
		snprintf(seen, sizeof(seen), "; liblcloud measured %.2fx in its page flush benchmark (16 KiB pages, "
			 "depth 32) under the same caps scaled down for emulation (tests/bench/README.md in "
			 "liblcloud's source, 'page_flush under cloud disk models')", m->page_flush_ratio);
	/* the copy bound by one cap, the pages in place by the other: over short windows they do not share */
	if (page == 16384 && m->phased_limit > limit + 0.005)
		snprintf(phases, sizeof(phases), ", and up to %.2fx where they are enforced over a tenth of a second "
			 "(doublewrite's copy and its pages in place are then bound by one cap each, in turn)",
			 m->phased_limit);
	if (off)
		say(a, "what turning the doublewrite buffer off buys on %s: %" PRIu64 "-byte pages written in place "
		    "are bound by its %s cap, and its caps as steady rates allow %.2fx the pages per second of the "
		    "doublewrite protocol (which writes each page twice, the copy in batches of %u pages)%s%s",
		    caps, page, bound, limit, batch, phases, seen);
	else
		say(a, "what the doublewrite buffer costs on %s: were the pages kept whole (a device or provider "
		    "promise), %" PRIu64 "-byte pages written in place would be bound by its %s cap and could "
		    "flush at %.2fx the pages per second of the doublewrite protocol as steady rates allow%s%s", caps,
		    page, bound, limit, phases, seen);
	json_object_object_add(o, "name", json_object_new_string(m->name));
	json_object_object_add(o, "source", json_object_new_string(recognised ? "recognised" : "named"));
	json_object_object_add(o, "iops", json_object_new_uint64(m->iops));
	json_object_object_add(o, "bytes_per_second", json_object_new_uint64(m->bytes_per_s));
	json_object_object_add(o, "iops_size", json_object_new_uint64(m->iops_size));
	json_object_object_add(o, "bound", json_object_new_string(strcmp(bound, "IOPS") == 0 ? "iops" : "bandwidth"));
	json_object_object_add(o, "limit", json_object_new_double(limit));
	json_object_object_add(o, "limit_phased", page == 16384 && m->phased_limit > 0 ?
				  json_object_new_double(m->phased_limit) : NULL);
	json_object_object_add(o, "measured_page_flush", measured ? json_object_new_double(m->page_flush_ratio) : NULL);
	json_object_object_add(o, "measured_mariadb",
			       measured && m->mariadb_tps_ratio > 0 ? json_object_new_double(m->mariadb_tps_ratio) : NULL);
	a->model = o;
}

/* Returns false when the verdict the advice rests on is unknown: then there is no advice. */
static bool advise_innodb(struct lcloud_ctx *ctx, const struct lcloud_probe *p, const char *path, enum db db,
			  uint64_t page, struct advice *a)
{
	char why[1024], rwf[1024];
	int direct = lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, page, NULL, why, sizeof(why));
	int atomic = lcloud_probe_check(p, LCLOUD_PATH_RWF_ATOMIC, page, NULL, rwf, sizeof(rwf));
	unsigned long whole_files = 0;
	char rule[512];
	uint64_t fs_unit = 0;

	if (direct == LCLOUD_ANSWER_UNKNOWN) {
		say(a, "no advice: whether %" PRIu64 "-byte O_DIRECT page writes are untorn here could not be told, "
		    "and the doublewrite buffer must not be turned off on a guess: %s", page, why);
		return false;
	}
	if (direct == LCLOUD_ANSWER_UNTORN && lcloud_probe_get_target_type(p) == LCLOUD_TARGET_DIRECTORY) {
		/* the verdict is about new files; the data files already there may have pages across extents */
		struct data_file_edges e;
		int r = data_file_edges_scan(path, page, &e);

		if (r < 0 || e.unread) {
			say(a, "no advice: new %" PRIu64 "-byte O_DIRECT page writes here are untorn (%s), but whether "
			    "the data files already in %s keep each page in one extent could not be told: %lu could "
			    "not be read, the first %s", page, why, path, e.unread, r < 0 ? strerror(-r) : e.unread_first);
			return false;
		}
		if (e.split) {
			setting(a, "innodb_doublewrite", "ON");
			say(a, "keep the doublewrite buffer: new %" PRIu64 "-byte O_DIRECT page writes here would be "
			    "untorn (%s), but %lu of the %lu InnoDB data files in %s have extents that meet inside a "
			    "page, the first %s at byte %" PRIu64 ": a page across such an edge reaches the device in two "
			    "writes (a restore or copy that left holes makes them); rebuild those tables (ALTER TABLE "
			    "... FORCE) or copy the data directory again with 'cp --sparse=never' while the server is "
			    "stopped, then run advise again", page, why, e.split, e.files, path, e.split_first,
			    e.split_first_edge);
			goto db_notes;
		}
		whole_files = e.files;
	}
	if (direct == LCLOUD_ANSWER_UNTORN) {
		setting(a, "innodb_doublewrite", "OFF");
		setting(a, "innodb_flush_method", "O_DIRECT");
		say(a, "%" PRIu64 "-byte InnoDB pages written with O_DIRECT are untorn here, so the doublewrite "
		    "buffer can be turned off: %s", page, why);
		if (whole_files)
			say(a, "the %lu InnoDB data files already in %s keep every %" PRIu64 "-byte page in one "
			    "extent (FIEMAP)", whole_files, path, page);
		say(a, "this rests on the device's or provider's promise and on the stack staying as it is: "
		    "moving the data files, adding LVM or RAID, or changing the file system voids it; run "
		    "'lcloudctl check' again after any such change");
		if (nomerges_rule(p, rule, sizeof(rule)))
			say(a, "this rests on %s's queue/nomerges staying 2, which the kernel resets when the disk "
			    "appears again (a reboot, a reattach): a udev rule keeps it, e.g. in "
			    "/etc/udev/rules.d/61-lcloud-nomerges.rules: %s",
			    lcloud_layer_get_name(cli_first_layer(p, LCLOUD_LAYER_DISK)), rule);
		if (proof_for_innodb(p, page))
			say(a, "%s", proof_for_innodb(p, page));
		else
			say(a, "liblcloud's crash lab has not run this exact stack: the verdict rests on the rules in "
			    "lcloud(7), each proved on the stacks of its proof matrix (tests/vm/matrix.md in its source)");
		if (a->disk)
			say_disk_model(a, a->disk, a->disk_why, page, true);
	} else {
		setting(a, "innodb_doublewrite", "ON");
		say(a, "keep the doublewrite buffer: %s", why);
		if (nomerges_rule(p, rule, sizeof(rule)))
			say(a, "if the block layer's merges are what rules the pages out, set %s's queue/nomerges to 2 "
			    "and keep it with a udev rule, e.g. in /etc/udev/rules.d/61-lcloud-nomerges.rules: %s; "
			    "then run advise again", lcloud_layer_get_name(cli_first_layer(p, LCLOUD_LAYER_DISK)), rule);
		if (atomic == LCLOUD_ANSWER_UNKNOWN)
			say(a, "whether the kernel would guarantee %" PRIu64 "-byte RWF_ATOMIC writes here could not "
			    "be told (%s); InnoDB does not issue RWF_ATOMIC, so this advice does not rest on it", page, rwf);
		if (atomic == LCLOUD_ANSWER_UNTORN &&
		    page > lcloud_verdict_get_hardware_max_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_RWF_ATOMIC)))
			say(a, "that guarantee would come from the file system's software path (copy on write), not the "
			    "device: in liblcloud's page flush benchmark on XFS (tests/bench/README.md), 16 KiB RWF_ATOMIC "
			    "pages flushed at 0.30x-0.66x the pages per second of the doublewrite protocol and split the "
			    "data file into thousands of extents, so on this storage it would cost more than the "
			    "doublewrite buffer it replaces");
		if (atomic == LCLOUD_ANSWER_UNTORN)
			say(a, "the kernel would guarantee %" PRIu64 "-byte RWF_ATOMIC writes on this file (%s), but "
			    "InnoDB does not issue RWF_ATOMIC; a storage engine that plans its writes with "
			    "lcloud_plan_page_writes(3) could use it", page, rwf);
		if (device_keeps_page(ctx, p, page, &fs_unit) && fs_unit && fs_unit < page)
			say(a, "the device below keeps %" PRIu64 "-byte aligned writes whole, but this file system "
			    "allocates in %" PRIu64 "-byte units, so a page can span two extents: a file system that "
			    "allocates whole pages fixes that, e.g. 'mkfs.ext4 -O bigalloc -C %" PRIu64 "' (the AWS "
			    "and Google recipes) or 'mkfs.xfs -b size=%" PRIu64 "' (Linux 6.12+ for blocks larger "
			    "than the memory page)", page, fs_unit, page, page);
		if (a->disk)
			say_disk_model(a, a->disk, a->disk_why, page, false);
	}
db_notes:
	if (db == DB_MYSQL)
		say(a, "innodb_doublewrite=DETECT_ONLY (MySQL 8.0.30+) writes only page metadata to the "
		    "doublewrite buffer: a torn page is detected during recovery but cannot be repaired, so it "
		    "does not protect data; DETECT_AND_RECOVER is the same as ON");
	else
		say(a, "MariaDB's innodb_use_atomic_writes acts only on devices MariaDB recognises itself; it "
		    "does not read this device's promise, so set innodb_doublewrite from this verdict; "
		    "innodb_flush_method=O_DIRECT is MariaDB's default since 10.6");
	return true;
}

static void advise_postgresql(const struct lcloud_probe *p, uint64_t page, struct advice *a)
{
	char why[1024], direct[1024];
	int d = lcloud_probe_check(p, LCLOUD_PATH_PLAIN_DIRECT, page, NULL, direct, sizeof(direct));

	setting(a, "full_page_writes", "on");
	lcloud_probe_check(p, LCLOUD_PATH_BUFFERED, page, NULL, why, sizeof(why));
	say(a, "PostgreSQL writes its data pages through the page cache (buffered I/O), and %s", why);
	say(a, "so full_page_writes must stay on: with it off, a torn %" PRIu64 "-byte page after a crash cannot "
	    "be repaired from the WAL; wal_compression makes the full-page images cheaper", page);
	say(a, "%s", proof_for_buffered());
	if (d == LCLOUD_ANSWER_UNTORN)
		say(a, "the device itself would keep %" PRIu64 "-byte O_DIRECT writes whole (%s), but PostgreSQL's "
		    "direct I/O option (debug_io_direct, 16+) is meant for developer testing, not production",
		    page, direct);
}

void cmd_advise_usage(FILE *out)
{
	fputs("Usage: lcloudctl advise [options] PATH --db mysql|mariadb|postgresql\n"
	      "\n"
	      "Turn the verdict for PATH (a data directory or file) into database settings:\n"
	      "whether InnoDB's doublewrite buffer can be turned off and with which flush\n"
	      "method, what MySQL's DETECT_ONLY and MariaDB's settings do and do not protect,\n"
	      "why PostgreSQL's full_page_writes stays on, and which file system layout would\n"
	      "keep pages whole on this device. On a directory, InnoDB's data files already\n"
	      "there are read too: a page across two of a file's extents keeps the\n"
	      "doublewrite buffer on.\n"
	      "\n"
	      "Options:\n"
	      "  -d, --db NAME         mysql, mariadb or postgresql\n"
	      "  -P, --page-size N     database page size (default 16K for InnoDB, 8K for\n"
	      "                        PostgreSQL); a power of two\n"
	      "      --disk-model NAME the cloud disk's caps (gp3, hyperdisk-balanced, ops-bound,\n"
	      "                        bw-bound): say what the doublewrite buffer costs under\n"
	      "                        them, with liblcloud's measured figures (InnoDB); without\n"
	      "                        it, an AWS EBS or Google NVMe disk is recognised\n"
	      "      --format FORMAT   normal (default) or json\n"
	      "  -J, --json           the same as --format json\n"
	      "      --no-confirm      no live RWF_ATOMIC writes in the directory\n"
	      "  -h, --help            show this help\n"
	      "\n"
	      "Exits 8 with no settings when the verdict the advice rests on could not be\n"
	      "told (evidence that needs root): the safe settings stay as they are.\n",
	      out);
}

int cmd_advise(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	static const struct option options[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "page-size", required_argument, NULL, 'P' },
		FORMAT_OPTIONS,
		{ "no-confirm", no_argument, NULL, 'C' },
		{ "disk-model", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const db_names[] = { "mysql", "mariadb", "postgresql" };
	enum output_format format = g->format;
	struct advice a = { NULL, NULL, NULL, NULL, NULL, NULL };
	const struct disk_model *named = NULL;
	struct lcloud_probe *p = NULL;
	uint32_t flags = LCLOUD_PROBE_NO_SIGNATURES | LCLOUD_PROBE_CONFIRM_ATOMIC;
	uint64_t page = 0;
	bool decided = true;
	int c, r, db = -1;
	json_object *root = NULL;

	optind = 0; /* 0, not 1: glibc then re-reads the option string (main used "+") */
	while ((c = getopt_long(argc, argv, ":d:P:o:Jh", options, NULL)) != -1) {
		int fr = format_option("lcloudctl advise", c, argc, argv, &format);

		if (fr < 0)
			return EXIT_USAGE;
		if (fr > 0)
			continue;
		switch (c) {
		case 'd':
			for (int i = 0; i < 3; i++)
				if (strcmp(optarg, db_names[i]) == 0)
					db = i;
			if (db < 0) {
				fprintf(stderr, "lcloudctl advise: unknown database '%s' (use mysql, mariadb or postgresql)\n",
					tty_str(optarg));
				return EXIT_USAGE;
			}
			break;
		case 'P':
			if (parse_size(optarg, &page) < 0 || !page || (page & (page - 1))) {
				fprintf(stderr, "lcloudctl advise: --page-size '%s' is not a power of two "
					"(InnoDB pages are 4K-64K, PostgreSQL's 8K by default)\n", tty_str(optarg));
				return EXIT_USAGE;
			}
			break;
		case 'C':
			flags &= ~(uint32_t)LCLOUD_PROBE_CONFIRM_ATOMIC;
			break;
		case 'M':
			named = disk_model_find(optarg);
			if (!named) {
				fprintf(stderr, "lcloudctl advise: unknown disk model '%s' (use %s)\n", tty_str(optarg),
					disk_model_names());
				return EXIT_USAGE;
			}
			break;
		case 'h':
			cmd_advise_usage(stdout);
			return EXIT_OK;
		default:
			return usage_option_error("lcloudctl advise", c, argc, argv);
		}
	}
	if (optind + 1 != argc || db < 0)
		return usage_error("lcloudctl advise", db < 0 ? "--db is required (mysql, mariadb or postgresql)"
							    : "give exactly one PATH (the data directory)");
	if (!page)
		page = db == DB_POSTGRESQL ? 8192 : 16384;
	r = lcloud_probe_path(ctx, argv[optind], flags, &p);
	if (r < 0)
		return report_probe_error("lcloudctl advise", argv[optind], r);
	/* a page larger than the device has no verdict to advise from */
	r = lcloud_probe_check(p, LCLOUD_PATH_BEST, page, NULL, NULL, 0);
	if (r < 0) {
		if (r == -ERANGE)
			fprintf(stderr, "lcloudctl advise: --page-size %" PRIu64 " is larger than %s itself\n", page,
				tty_str(argv[optind]));
		else
			fprintf(stderr, "lcloudctl advise: %s: %s\n", tty_str(argv[optind]), strerror(-r));
		lcloud_probe_free(p);
		return r == -ERANGE ? EXIT_USAGE : EXIT_FAILURE_GENERIC;
	}
	root = json_object_new_object();
	a.lines = json_object_new_array();
	a.raw = json_object_new_array();
	a.settings = json_object_new_object();
	json_object_object_add(root, "schema", json_object_new_int(1));
	json_object_object_add(root, "path", json_string_from_device(argv[optind]));
	json_object_object_add(root, "db", json_object_new_string(db_names[db]));
	json_object_object_add(root, "page_size", json_object_new_uint64(page));
	json_object_object_add(root, "settings", a.settings);
	json_object_object_add(root, "advice", a.lines);
	a.disk = named ? named : disk_model_recognise(p, &a.disk_why);
	if (named)
		a.disk_why = NULL;
	if (db == DB_POSTGRESQL)
		advise_postgresql(p, page, &a);
	else
		decided = advise_innodb(ctx, p, argv[optind], (enum db)db, page, &a);
	json_object_object_add(root, "answer", json_object_new_string(decided ? "decided" : "unknown"));
	if (a.model)
		json_object_object_add(root, "disk_model", a.model);
	if (format == OUTPUT_JSON) {
		print_json(stdout, root);
	} else {
		fputs_escaped(argv[optind], stdout);
		printf(": %s with %" PRIu64 "-byte pages\n\nsettings:\n", db_names[db], page);
		json_object_object_foreach(a.settings, key, val)
			printf("  %s = %s\n", key, json_object_get_string(val));
		fputs("\nwhy:\n", stdout);
		for (size_t i = 0; i < json_object_array_length(a.raw); i++) {
			fputs("  - ", stdout);
			fputs_escaped(json_object_get_string(json_object_array_get_idx(a.raw, i)), stdout);
			putchar('\n');
		}
	}
	json_object_put(root);
	json_object_put(a.raw);
	lcloud_probe_free(p);
	return decided ? EXIT_OK : EXIT_UNKNOWN;
}
