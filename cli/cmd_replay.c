/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl replay LOG: read a device's write log (dm-log-writes format, as
 * QEMU's blklogwrites writes it), find the torture pages in it and say which
 * page writes a power cut could tear under the device's power-fail model;
 * with --base, make the crash images that show it (replay_images.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json_stream.h"
#include "replay.h"

void cmd_replay_usage(FILE *out)
{
	fputs("Usage: lcloudctl replay [options] LOG...\n"
	      "       lcloudctl replay [options] LOG --base IMAGE --out IMAGE (--cut K [--tear BLOCKS] | --cut-all)\n"
	      "\n"
	      "Read a device's write log (QEMU blklogwrites, Linux dm-log-writes), find the\n"
	      "pages 'lcloudctl torture run' wrote in it, and say for each page write whether\n"
	      "a power cut could tear it under the device's power-fail model: it arrived in\n"
	      "more than one command, or in one command larger than the atomic unit or\n"
	      "crossing an atomic boundary. With --base, write the disk as a power cut would\n"
	      "have left it: the first K entries of the log applied to a copy of the disk\n"
	      "before the run, and the first BLOCKS logical blocks of entry K. Several logs,\n"
	      "one per device of a stack (md, dm), are read as one: a page on two devices\n"
	      "arrived in two commands.\n"
	      "\n"
	      "Model (default: one logical block, the log's sector, is atomic):\n"
	      "      --lba N               the device's logical block size\n"
	      "      --atomic-bytes N      power-fail atomic write size (NVMe NAWUPF/AWUPF)\n"
	      "      --boundary N          atomic boundary size (NVMe NABSPF); 0: none\n"
	      "      --boundary-offset N   where the boundaries start (NVMe NABO)\n"
	      "      --volatile-cache      writes are durable only after a FLUSH (or with FUA)\n"
	      "      --model-from FILE     take the model from 'lcloudctl probe -o json' of the device\n"
	      "\n"
	      "Options:\n"
	      "      --scan-tail           read entries past the super block's count (QEMU updates\n"
	      "                            it only on a flush or every 4096 entries)\n"
	      "      --all                 list every page write, not only the tearable ones\n"
	      "      --run ID              only the page writes of this torture run (its run id)\n"
	      "      --base IMAGE          the disk before the logged run\n"
	      "      --out IMAGE           the crash image to write: a regular file, made beside\n"
	      "                            its name and renamed into place when whole (a symlink\n"
	      "                            there is replaced), or a block device, written through\n"
	      "                            the write guard; never the base or a log\n"
	      "      --cut K               apply entries 0 to K-1\n"
	      "      --tear BLOCKS         and the first BLOCKS logical blocks of entry K\n"
	      "      --cut-all             try the cut of every tearable page write; keep the first\n"
	      "                            image that shows a torn page\n"
	      "      --keep-going          with --cut-all, try every one (the first image is kept)\n"
	      "      --force               write an --out device that carries a file system or\n"
	      "                            partition table (never one mounted, swap or held)\n"
	      "  -o, --format FORMAT       normal (default) or json (or --output FORMAT)\n"
	      "  -h, --help                show this help\n"
	      "\n"
	      "Exit status: 0 no page write is tearable (or the image was written), 11 a page\n"
	      "write is tearable, 9 (--cut-all) an image shows a torn page, 7 --out refused\n"
	      "(a device in use or holding data), 5 --out is a directory, FIFO or character\n"
	      "device, 2 --out is the base or a log.\n",
	      out);
}

static bool parse_opt_size(const char *arg, uint64_t *ret, const char *name)
{
	if (parse_size(arg, ret) < 0) {
		fprintf(stderr, "lcloudctl replay: bad value '%s' for --%s\n", tty_str(arg), name);
		return false;
	}
	return true;
}

static int parse_replay_opts(int argc, char **argv, const struct global_opts *g, struct replay_opts *o)
{
	enum { OPT_LBA = 256, OPT_ATOMIC, OPT_BOUNDARY, OPT_BOUNDARY_OFFSET, OPT_VOLATILE, OPT_MODEL_FROM, OPT_SCAN_TAIL,
	       OPT_ALL, OPT_RUN, OPT_BASE, OPT_OUT, OPT_CUT, OPT_TEAR, OPT_CUT_ALL, OPT_KEEP_GOING, OPT_FORCE };
	static const struct option options[] = {
		{ "lba", required_argument, NULL, OPT_LBA },
		{ "atomic-bytes", required_argument, NULL, OPT_ATOMIC },
		{ "boundary", required_argument, NULL, OPT_BOUNDARY },
		{ "boundary-offset", required_argument, NULL, OPT_BOUNDARY_OFFSET },
		{ "volatile-cache", no_argument, NULL, OPT_VOLATILE },
		{ "model-from", required_argument, NULL, OPT_MODEL_FROM },
		{ "scan-tail", no_argument, NULL, OPT_SCAN_TAIL },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "run", required_argument, NULL, OPT_RUN },
		{ "base", required_argument, NULL, OPT_BASE },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "cut", required_argument, NULL, OPT_CUT },
		{ "tear", required_argument, NULL, OPT_TEAR },
		{ "cut-all", no_argument, NULL, OPT_CUT_ALL },
		{ "keep-going", no_argument, NULL, OPT_KEEP_GOING },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "format", required_argument, NULL, 'o' },
		{ "output", required_argument, NULL, 'o' }, /* the older name */
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->format = g->format;
	optind = 0;
	while ((c = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
		switch (c) {
		case OPT_LBA:
			if (!parse_opt_size(optarg, &o->lba, "lba"))
				return -1;
			o->have_lba = true;
			break;
		case OPT_ATOMIC:
			if (!parse_opt_size(optarg, &o->atomic, "atomic-bytes"))
				return -1;
			o->have_atomic = true;
			break;
		case OPT_BOUNDARY:
			if (!parse_opt_size(optarg, &o->boundary, "boundary"))
				return -1;
			o->have_boundary = true;
			break;
		case OPT_BOUNDARY_OFFSET:
			if (!parse_opt_size(optarg, &o->boundary_offset, "boundary-offset"))
				return -1;
			o->have_boundary_offset = true;
			break;
		case OPT_VOLATILE:
			o->volatile_cache = true;
			break;
		case OPT_MODEL_FROM:
			o->model_from = optarg;
			break;
		case OPT_SCAN_TAIL:
			o->scan_tail = true;
			break;
		case OPT_ALL:
			o->all = true;
			break;
		case OPT_RUN: {
			char *end;

			errno = 0;
			o->run = strtoull(optarg, &end, 0);
			if (errno || *end || !optarg[0]) {
				fprintf(stderr, "lcloudctl replay: bad value '%s' for --run (a run id, 0x...)\n", tty_str(optarg));
				return -1;
			}
			o->have_run = true;
			break;
		}
		case OPT_BASE:
			o->base = optarg;
			break;
		case OPT_OUT:
			o->out = optarg;
			break;
		case OPT_CUT:
			if (parse_size(optarg, &o->cut) < 0) {
				fprintf(stderr, "lcloudctl replay: bad value '%s' for --cut\n", tty_str(optarg));
				return -1;
			}
			o->have_cut = true;
			break;
		case OPT_TEAR:
			if (parse_size(optarg, &o->tear) < 0) {
				fprintf(stderr, "lcloudctl replay: bad value '%s' for --tear\n", tty_str(optarg));
				return -1;
			}
			break;
		case OPT_CUT_ALL:
			o->cut_all = true;
			break;
		case OPT_KEEP_GOING:
			o->keep_going = true;
			break;
		case OPT_FORCE:
			o->force = true;
			break;
		case 'o':
			if (!parse_output_format("lcloudctl replay", optarg, &o->format)) {
				return -1;
			}
			break;
		case 'h':
			cmd_replay_usage(stdout);
			return 1;
		default:
			cmd_replay_usage(stderr);
			return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "lcloudctl replay: give a LOG\n");
		return -1;
	}
	o->logs = (const char *const *)argv + optind;
	o->n_logs = (uint32_t)(argc - optind);
	if (o->n_logs > 1 && (o->base || o->out || o->have_cut || o->cut_all)) {
		fprintf(stderr, "lcloudctl replay: a crash image is made from one device's LOG\n");
		return -1;
	}
	if ((o->base || o->out || o->have_cut || o->tear || o->cut_all) &&
	    (!o->base || !o->out || o->have_cut == o->cut_all)) {
		fprintf(stderr, "lcloudctl replay: a crash image needs --base, --out and one of --cut and --cut-all\n");
		return -1;
	}
	if (o->keep_going && !o->cut_all) {
		fprintf(stderr, "lcloudctl replay: --keep-going goes with --cut-all\n");
		return -1;
	}
	if (o->force && !o->out) {
		fprintf(stderr, "lcloudctl replay: --force goes with --out (a block device that holds data)\n");
		return -1;
	}
	if (o->tear && !o->have_cut) {
		fprintf(stderr, "lcloudctl replay: --tear goes with --cut\n");
		return -1;
	}
	return 0;
}

/* The model: the probe's facts, then the options over them; one logical block by default. */
static int build_model(const struct replay_opts *o, uint32_t log_sector, struct replay_model *m)
{
	char err[400];
	int r;

	memset(m, 0, sizeof(*m));
	if (o->model_from && (r = replay_model_from_probe(o->model_from, m, err, sizeof(err))) < 0) {
		fprintf(stderr, "lcloudctl replay: --model-from %s\n", tty_str(err));
		/* the file is not a probe's JSON: the wrong kind of file, as for a log that is not one */
		return r == -EBADMSG ? EXIT_WRONG_KIND : exit_code_for_error(r);
	}
	if (o->have_lba) {
		m->m.lba = o->lba;
		snprintf(m->src_lba, sizeof(m->src_lba), "option");
	}
	if (!m->m.lba) {
		m->m.lba = log_sector;
		snprintf(m->src_lba, sizeof(m->src_lba), "log sector size");
	}
	if (o->have_atomic) {
		m->m.atomic_bytes = o->atomic;
		snprintf(m->src_atomic, sizeof(m->src_atomic), "option");
	}
	if (!m->m.atomic_bytes) {
		m->m.atomic_bytes = m->m.lba;
		snprintf(m->src_atomic, sizeof(m->src_atomic), "default: one logical block");
	}
	if (o->have_boundary) {
		m->m.boundary = o->boundary;
		m->m.boundary_offset = 0;
		snprintf(m->src_boundary, sizeof(m->src_boundary), "option");
	}
	if (o->have_boundary_offset)
		m->m.boundary_offset = o->boundary_offset;
	if (!m->src_boundary[0])
		snprintf(m->src_boundary, sizeof(m->src_boundary), "default: none");
	if (o->volatile_cache) {
		m->m.volatile_cache = true;
		snprintf(m->src_cache, sizeof(m->src_cache), "option");
	}
	if (!m->src_cache[0])
		snprintf(m->src_cache, sizeof(m->src_cache), "default: none");
	if (oracle_model_check(&m->m, err, sizeof(err)) < 0) {
		fprintf(stderr, "lcloudctl replay: the model: %s\n", tty_str(err));
		return EXIT_USAGE;
	}
	return 0;
}

static const char *verdict_word(enum oracle_verdict v)
{
	return v == ORACLE_ATOMIC ? "atomic" : v == ORACLE_TEARABLE ? "tearable" : "incomplete";
}

const char *replay_reasons(const struct writelog *const *logs, const struct oracle_model *m,
			   const struct oracle_page_write *w, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
#define ADD(...) (n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__))
	if (w->verdict == ORACLE_INCOMPLETE)
		ADD("only %u of its %u blocks are in the log", w->blocks_seen, w->page_size / 512);
	if (w->rules & ORACLE_SPLIT) {
		uint64_t prev = UINT64_MAX;
		uint32_t cmds = 0, prev_log = UINT32_MAX;

		for (uint32_t i = 0; i < w->n_parts; i++)
			if (w->parts[i].entry != prev || w->parts[i].log != prev_log) {
				cmds++;
				prev = w->parts[i].entry;
				prev_log = w->parts[i].log;
			}
		if (w->across_logs)
			ADD("%sarrived in %u commands to more than one device (logs %u to %u): a cut between them "
			    "leaves part of the page old", n ? "; " : "", cmds, w->first_log, w->last_log);
		else
			ADD("%sarrived in %u commands (entries %" PRIu64 " to %" PRIu64 "): a cut between them leaves "
			    "part of the page old", n ? "; " : "", cmds, w->first_entry, w->last_entry);
	}
	if (w->rules & (ORACLE_OVER_UNIT | ORACLE_BOUNDARY | ORACLE_MISALIGNED)) {
		const struct writelog_entry *e = writelog_entry(logs[w->rule_log], w->rule_entry);
		uint64_t cs = e->sector * writelog_sector_size(logs[w->rule_log]);

		if (e->data_bytes > m->atomic_bytes)
			ADD("%sentry %" PRIu64 ": a command of %" PRIu64 " bytes at %" PRIu64 " is larger than the atomic "
			    "unit (%" PRIu64 ") and carries more than one logical block of the page", n ? "; " : "",
			    e->index, e->data_bytes, cs, m->atomic_bytes);
		else if (w->rules & ORACLE_MISALIGNED)
			ADD("%sentry %" PRIu64 ": the command [%" PRIu64 ", %" PRIu64 ") is not aligned to its own size, "
			    "which the promise asks, and carries more than one logical block of the page", n ? "; " : "",
			    e->index, cs, cs + e->data_bytes);
		else
			ADD("%sentry %" PRIu64 ": the command [%" PRIu64 ", %" PRIu64 ") crosses the atomic boundary at "
			    "%" PRIu64 ", so no more than each logical block of it is atomic, and it carries more than "
			    "one of the page", n ? "; " : "", e->index, cs, cs + e->data_bytes,
			    oracle_boundary_after(m, cs));
	}
	if (!w->durable)
		ADD("%snot durable: no FLUSH after its last command (entry %" PRIu64 "), so a volatile cache may lose "
		    "it", n ? "; " : "", w->last_entry);
#undef ADD
	return buf;
}

static json_object *u64_json(uint64_t v)
{
	return json_object_new_int64((int64_t)v);
}

static json_object *page_write_to_json(const struct writelog *const *logs, const struct replay_model *rm,
				       const struct oracle_page_write *w)
{
	json_object *j = json_object_new_object(), *rules = json_object_new_array(), *cmds = json_object_new_array();
	char id[32], why[1024];

	snprintf(id, sizeof(id), "0x%016" PRIx64, w->run_id);
	json_object_object_add(j, "run_id", json_object_new_string(id));
	json_object_object_add(j, "page", u64_json(w->page));
	json_object_object_add(j, "generation", u64_json(w->generation));
	json_object_object_add(j, "copy", u64_json(w->copy));
	json_object_object_add(j, "page_size", u64_json(w->page_size));
	json_object_object_add(j, "verdict", json_object_new_string(verdict_word(w->verdict)));
	if (w->rules & ORACLE_SPLIT)
		json_object_array_add(rules, json_object_new_string("split"));
	if (w->rules & ORACLE_OVER_UNIT)
		json_object_array_add(rules, json_object_new_string("over-unit"));
	if (w->rules & ORACLE_BOUNDARY)
		json_object_array_add(rules, json_object_new_string("boundary"));
	if (w->rules & ORACLE_MISALIGNED)
		json_object_array_add(rules, json_object_new_string("misaligned"));
	json_object_object_add(j, "rules", rules);
	json_object_object_add(j, "reason", json_object_new_string(replay_reasons(logs, &rm->m, w, why, sizeof(why))));
	json_object_object_add(j, "durable", json_object_new_boolean(w->durable));
	json_object_object_add(j, "device_offset", u64_json(w->device_offset));
	json_object_object_add(j, "previous_device_offset",
			       w->previous_offset == UINT64_MAX ? NULL : u64_json(w->previous_offset));
	json_object_object_add(j, "relocated", w->previous_offset == UINT64_MAX
						? NULL : json_object_new_boolean(w->previous_offset != w->device_offset ||
										 w->previous_log != w->first_log));
	json_object_object_add(j, "across_devices", json_object_new_boolean(w->across_logs));
	for (uint32_t i = 0; i < w->n_parts; i++) {
		const struct oracle_part *p = &w->parts[i];
		const uint64_t ss = writelog_sector_size(logs[p->log]);
		const struct writelog_entry *e = writelog_entry(logs[p->log], p->entry);
		json_object *c = json_object_new_object();

		json_object_object_add(c, "log", u64_json(p->log));
		json_object_object_add(c, "entry", u64_json(p->entry));
		json_object_object_add(c, "kind", json_object_new_string(writelog_entry_kind(e)));
		json_object_object_add(c, "offset", u64_json(e->sector * ss));
		json_object_object_add(c, "length", u64_json(e->data_bytes));
		json_object_object_add(c, "atomic", json_object_new_boolean(oracle_command_atomic(&rm->m, e->sector * ss,
												   e->data_bytes)));
		json_object_object_add(c, "first_block", u64_json(p->first_block));
		json_object_object_add(c, "blocks", u64_json(p->blocks));
		json_object_object_add(c, "page_offset", u64_json(p->dev_offset));
		json_object_array_add(cmds, c);
	}
	json_object_object_add(j, "commands", cmds);
	if (w->verdict == ORACLE_TEARABLE) {
		json_object *cut = json_object_new_object();

		json_object_object_add(cut, "log", u64_json(w->cut_log));
		json_object_object_add(cut, "cut", u64_json(w->cut_entry));
		json_object_object_add(cut, "tear_blocks", u64_json(w->cut_bytes / rm->m.lba));
		json_object_object_add(cut, "tear_bytes", u64_json(w->cut_bytes));
		json_object_object_add(j, "tearing_cut", cut);
	} else {
		json_object_object_add(j, "tearing_cut", NULL);
	}
	return j;
}

static void print_page_write(const struct writelog *const *logs, uint32_t n_logs, const struct replay_model *rm,
			     const struct oracle_page_write *w)
{
	char why[1024];

	printf("run 0x%016" PRIx64 " page %" PRIu64 " generation %" PRIu64 "%s: %s", w->run_id, w->page, w->generation,
	       w->copy ? " (a further copy)" : "", verdict_word(w->verdict));
	if (w->verdict != ORACLE_ATOMIC || !w->durable)
		printf(": %s", replay_reasons(logs, &rm->m, w, why, sizeof(why)));
	printf("\n  commands:");
	for (uint32_t i = 0; i < w->n_parts; i++) {
		const struct oracle_part *p = &w->parts[i];
		const uint64_t ss = writelog_sector_size(logs[p->log]);
		const struct writelog_entry *e = writelog_entry(logs[p->log], p->entry);

		printf("%s", i ? ";" : "");
		if (n_logs > 1)
			printf(" log %u", p->log);
		printf(" entry %" PRIu64 " %s [%" PRIu64 ", %" PRIu64 ") blocks %u-%u", p->entry,
		       writelog_entry_kind(e), e->sector * ss, e->sector * ss + e->data_bytes, p->first_block,
		       p->first_block + p->blocks - 1);
	}
	putchar('\n');
	if (w->previous_offset != UINT64_MAX && w->previous_offset != w->device_offset && w->previous_log == w->first_log)
		printf("  relocated: the previous generation was written at %" PRIu64 ", this one at %" PRIu64
		       " (a file system that switches the file to the new blocks keeps the old page whole until then)\n",
		       w->previous_offset, w->device_offset);
	if (w->verdict == ORACLE_TEARABLE && n_logs > 1)
		printf("  shown by: log %u at --cut %" PRIu64 " --tear %" PRIu64 ", the other logs whole\n", w->cut_log,
		       w->cut_entry, w->cut_bytes / rm->m.lba);
	else if (w->verdict == ORACLE_TEARABLE)
		printf("  shown by: --cut %" PRIu64 " --tear %" PRIu64 "\n", w->cut_entry, w->cut_bytes / rm->m.lba);
}

json_object *replay_log_info_json(const char *path, const struct writelog *log)
{
	json_object *j = json_object_new_object();
	uint64_t writes = 0, flushes = 0, fua = 0, discards = 0, marks = 0, bytes = 0;

	for (uint64_t i = 0; i < writelog_entry_count(log); i++) {
		const struct writelog_entry *e = writelog_entry(log, i);

		writes += writelog_entry_writes(e) != 0;
		flushes += (e->flags & WRITELOG_FLUSH) != 0;
		fua += writelog_entry_writes(e) && (e->flags & WRITELOG_FUA);
		discards += (e->flags & WRITELOG_DISCARD) != 0;
		marks += (e->flags & WRITELOG_MARK) != 0;
		bytes += e->data_bytes;
	}
	json_object_object_add(j, "file", json_object_new_string(path));
	json_object_object_add(j, "sector_size", u64_json(writelog_sector_size(log)));
	json_object_object_add(j, "entries", u64_json(writelog_entry_count(log)));
	json_object_object_add(j, "super_entries", u64_json(writelog_super_entries(log)));
	json_object_object_add(j, "trailing_bytes", u64_json(writelog_trailing_bytes(log)));
	json_object_object_add(j, "writes", u64_json(writes));
	json_object_object_add(j, "flushes", u64_json(flushes));
	json_object_object_add(j, "fua_writes", u64_json(fua));
	json_object_object_add(j, "discards", u64_json(discards));
	json_object_object_add(j, "marks", u64_json(marks));
	json_object_object_add(j, "bytes_written", u64_json(bytes));
	return j;
}

json_object *replay_model_json(const struct replay_model *rm)
{
	json_object *j = json_object_new_object(), *src = json_object_new_object();

	json_object_object_add(j, "lba", u64_json(rm->m.lba));
	json_object_object_add(j, "atomic_bytes", u64_json(rm->m.atomic_bytes));
	json_object_object_add(j, "boundary", u64_json(rm->m.boundary));
	json_object_object_add(j, "boundary_offset", u64_json(rm->m.boundary_offset));
	json_object_object_add(j, "aligned_to_size", json_object_new_boolean(rm->m.natural));
	json_object_object_add(j, "volatile_cache", json_object_new_boolean(rm->m.volatile_cache));
	json_object_object_add(src, "lba", json_object_new_string(rm->src_lba));
	json_object_object_add(src, "atomic_bytes", json_object_new_string(rm->src_atomic));
	json_object_object_add(src, "boundary", json_object_new_string(rm->src_boundary));
	json_object_object_add(src, "volatile_cache", json_object_new_string(rm->src_cache));
	json_object_object_add(j, "sources", src);
	return j;
}

static void print_model(const struct replay_model *rm)
{
	printf("model: logical block %" PRIu64 " (%s), atomic unit %" PRIu64 " (%s), ", rm->m.lba, tty_str(rm->src_lba),
	       rm->m.atomic_bytes, tty_str(rm->src_atomic));
	if (rm->m.boundary)
		printf("boundary %" PRIu64 " from %" PRIu64 " (%s), ", rm->m.boundary, rm->m.boundary_offset,
		       tty_str(rm->src_boundary));
	else
		printf("no boundary (%s), ", tty_str(rm->src_boundary));
	if (rm->m.natural)
		printf("only writes aligned to their own size (%s), ", tty_str(rm->src_atomic));
	printf("%s (%s)\n", rm->m.volatile_cache ? "volatile write cache" : "no volatile write cache", tty_str(rm->src_cache));
}

bool replay_selected(const struct replay_opts *o, const struct oracle_page_write *w)
{
	return !o->have_run || w->run_id == o->run;
}

struct run_seen {
	uint64_t run_id, first; /* the run, and the index of its first page write */
};

static int by_run_then_first(const void *a, const void *b)
{
	const struct run_seen *x = a, *y = b;

	if (x->run_id != y->run_id)
		return x->run_id < y->run_id ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static int by_first(const void *a, const void *b)
{
	const struct run_seen *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* The runs of R in the order they first appear; sorted, so a log of many runs costs n log n, not n squared. */
static json_object *runs_json(const struct oracle_result *r)
{
	struct run_seen *seen = malloc((r->n_writes ? r->n_writes : 1) * sizeof(*seen));
	json_object *runs;
	uint64_t n = 0;

	if (!seen)
		return NULL;
	for (uint64_t i = 0; i < r->n_writes; i++)
		seen[i] = (struct run_seen){ r->writes[i].run_id, i };
	qsort(seen, r->n_writes, sizeof(*seen), by_run_then_first);
	for (uint64_t i = 0; i < r->n_writes; i++)
		if (!n || seen[n - 1].run_id != seen[i].run_id)
			seen[n++] = seen[i];
	qsort(seen, n, sizeof(*seen), by_first);
	runs = json_object_new_array();
	for (uint64_t i = 0; i < n; i++) {
		char id[32];

		snprintf(id, sizeof(id), "0x%016" PRIx64, seen[i].run_id);
		json_object_array_add(runs, json_object_new_string(id));
	}
	free(seen);
	return runs;
}

static int analyse(const struct replay_opts *o, const struct writelog *const *logs, const struct replay_model *rm)
{
	struct oracle_result r;
	uint64_t selected, entries = 0;
	char err[400];
	int rc, e = oracle_run(logs, o->n_logs, &rm->m, &r, err, sizeof(err));

	if (e < 0) {
		fprintf(stderr, "lcloudctl replay: %s\n", err[0] ? tty_str(err) : strerror(-e));
		return EXIT_FAILURE_GENERIC;
	}
	for (uint32_t l = 0; l < o->n_logs; l++)
		entries += writelog_entry_count(logs[l]);
	if (o->have_run) {
		/* the counts of the run asked about */
		uint64_t n = 0;

		r.atomic = r.tearable = r.incomplete = r.not_durable = 0;
		for (uint64_t i = 0; i < r.n_writes; i++) {
			const struct oracle_page_write *w = &r.writes[i];

			if (!replay_selected(o, w))
				continue;
			n++;
			r.atomic += w->verdict == ORACLE_ATOMIC;
			r.tearable += w->verdict == ORACLE_TEARABLE;
			r.incomplete += w->verdict == ORACLE_INCOMPLETE;
			r.not_durable += !w->durable;
		}
		selected = n;
	} else {
		selected = r.n_writes;
	}
	rc = r.tearable ? EXIT_TEARABLE : EXIT_OK;
	if (o->format == OUTPUT_JSON) {
		json_object *head = json_object_new_object(), *sum = json_object_new_object(), *infos = json_object_new_array();
		json_object *runs = runs_json(&r);
		struct json_stream js;

		if (!runs) {
			json_object_put(head);
			json_object_put(sum);
			json_object_put(infos);
			oracle_result_release(&r);
			fprintf(stderr, "lcloudctl replay: %s\n", strerror(ENOMEM));
			return EXIT_FAILURE_GENERIC;
		}
		for (uint32_t l = 0; l < o->n_logs; l++)
			json_object_array_add(infos, replay_log_info_json(o->logs[l], logs[l]));
		json_object_object_add(head, "schema", json_object_new_int(1));
		json_object_object_add(head, "command", json_object_new_string("replay"));
		json_object_object_add(head, "logs", infos);
		json_object_object_add(head, "model", replay_model_json(rm));
		json_object_object_add(sum, "runs", runs);
		json_object_object_add(sum, "page_writes", u64_json(selected));
		json_object_object_add(sum, "atomic", u64_json(r.atomic));
		json_object_object_add(sum, "tearable", u64_json(r.tearable));
		json_object_object_add(sum, "incomplete", u64_json(r.incomplete));
		json_object_object_add(sum, "not_durable", u64_json(r.not_durable));
		json_object_object_add(sum, "stamped_blocks", u64_json(r.stamped_blocks));
		json_object_object_add(sum, "other_blocks", u64_json(r.other_blocks));
		json_object_object_add(head, "summary", sum);
		json_object_object_add(head, "result", json_object_new_string(r.tearable ? "tearable" : "atomic"));
		/* one page write at a time: the document of a large log would not fit in memory whole */
		json_stream_open(&js, stdout);
		json_stream_members(&js, head);
		json_stream_array_open(&js, "page_writes");
		for (uint64_t i = 0; i < r.n_writes; i++)
			if (replay_selected(o, &r.writes[i]) &&
			    (o->all || r.writes[i].verdict != ORACLE_ATOMIC || !r.writes[i].durable))
				json_stream_element(&js, page_write_to_json(logs, rm, &r.writes[i]));
		json_stream_array_close(&js);
		json_stream_close(&js);
	} else {
		if (o->n_logs == 1)
			printf("replay: %s: %" PRIu64 " entries (%" PRIu64 " writes, %" PRIu64 " flushes, %" PRIu64 " FUA, %"
			       PRIu64 " discards, %" PRIu64 " marks), log sector %u, %" PRIu64 " bytes written\n", tty_str(o->logs[0]),
			       entries, r.write_entries, r.flush_entries, r.fua_entries, r.discard_entries, r.mark_entries,
			       writelog_sector_size(logs[0]), r.bytes_written);
		else {
			for (uint32_t l = 0; l < o->n_logs; l++)
				printf("replay: log %u: %s: %" PRIu64 " entries, log sector %u\n", l, tty_str(o->logs[l]),
				       writelog_entry_count(logs[l]), writelog_sector_size(logs[l]));
			printf("all logs: %" PRIu64 " entries (%" PRIu64 " writes, %" PRIu64 " flushes, %" PRIu64 " FUA, %"
			       PRIu64 " discards, %" PRIu64 " marks), %" PRIu64 " bytes written\n", entries, r.write_entries,
			       r.flush_entries, r.fua_entries, r.discard_entries, r.mark_entries, r.bytes_written);
		}
		print_model(rm);
		for (uint64_t i = 0; i < r.n_writes; i++)
			if (replay_selected(o, &r.writes[i]) &&
			    (o->all || r.writes[i].verdict != ORACLE_ATOMIC || !r.writes[i].durable))
				print_page_write(logs, o->n_logs, rm, &r.writes[i]);
		printf("summary: %" PRIu64 " page writes: %" PRIu64 " atomic, %" PRIu64 " tearable, %" PRIu64
		       " incomplete; %" PRIu64 " not durable; %" PRIu64 " stamped blocks, %" PRIu64 " other blocks\n",
		       selected, r.atomic, r.tearable, r.incomplete, r.not_durable, r.stamped_blocks, r.other_blocks);
		printf("result: %s\n", r.tearable ? "TEARABLE: a power cut could leave pages part old, part new"
						  : selected ? "atomic: no cut tears a page under this model"
							     : o->have_run ? "no page of that run in the log"
									   : "no torture pages in the log");
	}
	oracle_result_release(&r);
	return rc;
}

int cmd_replay(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	struct replay_opts o;
	struct replay_model rm;
	struct writelog **logs;
	int *fds;
	char err[512];
	uint32_t opened = 0;
	int r, rc;

	rc = parse_replay_opts(argc, argv, g, &o);
	if (rc)
		return rc > 0 ? EXIT_OK : EXIT_USAGE;
	o.ctx = ctx;
	logs = calloc(o.n_logs, sizeof(*logs));
	fds = calloc(o.n_logs, sizeof(*fds));
	if (!logs || !fds) {
		free(logs);
		free(fds);
		return EXIT_FAILURE_GENERIC;
	}
	for (; opened < o.n_logs; opened++) {
		const char *path = o.logs[opened];

		fds[opened] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[opened] < 0) {
			fprintf(stderr, "lcloudctl replay: %s: %s\n", tty_str(path), strerror(errno));
			rc = exit_code_for_error(-errno);
			goto out;
		}
		r = writelog_open_fd(fds[opened], o.scan_tail ? WRITELOG_SCAN_TAIL : 0, &logs[opened], err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "lcloudctl replay: %s: %s\n", tty_str(path), err[0] ? tty_str(err) : strerror(-r));
			close(fds[opened]);
			rc = r == -EBADMSG || r == -EPROTONOSUPPORT ? EXIT_WRONG_KIND : exit_code_for_error(r);
			goto out;
		}
		if (!o.scan_tail && writelog_trailing_bytes(logs[opened]) && o.format != OUTPUT_JSON)
			fprintf(stderr, "lcloudctl replay: %s: %" PRIu64 " bytes follow the %" PRIu64 " entries the super "
				"block counts; if the guest died before QEMU updated it, --scan-tail reads them\n", tty_str(path),
				writelog_trailing_bytes(logs[opened]), writelog_entry_count(logs[opened]));
	}
	/* the default logical block: the first log's sector */
	rc = build_model(&o, writelog_sector_size(logs[0]), &rm);
	if (!rc) {
		if (o.cut_all)
			rc = replay_cut_all(&o, logs[0], &rm);
		else if (o.have_cut)
			rc = replay_cut(&o, logs[0], &rm);
		else
			rc = analyse(&o, (const struct writelog *const *)logs, &rm);
	}
out:
	for (uint32_t i = 0; i < opened; i++) {
		writelog_free(logs[i]);
		close(fds[i]);
	}
	free(logs);
	free(fds);
	return rc;
}
