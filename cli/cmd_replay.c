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

#include "args.h"
#include "commands.h"
#include "escape.h"
#include "exit_codes.h"
#include "usage.h"
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
	      "      --model-from FILE     take the model from 'lcloudctl probe --format json' of the device\n"
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
	      "      --format FORMAT       normal (default) or json\n"
	      "  -J, --json               the same as --format json\n"
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

/* The options that go together, once all are read: the crash image's and the cut's. 0, or -1 said on stderr. */
static int check_replay_opts(const struct replay_opts *o)
{
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
		FORMAT_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->format = g->format;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":o:Jh", options, NULL)) != -1) {
		int fr = format_option("lcloudctl replay", c, argc, argv, &o->format);

		if (fr < 0)
			return -1;
		if (fr > 0)
			continue;
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
		case 'h':
			cmd_replay_usage(stdout);
			return 1;
		default:
			usage_option_error("lcloudctl replay", c, argc, argv);
			return -1;
		}
	}
	if (optind >= argc) {
		usage_error("lcloudctl replay", "give a LOG");
		return -1;
	}
	o->logs = (const char *const *)argv + optind;
	o->n_logs = (uint32_t)(argc - optind);
	return check_replay_opts(o);
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
	/* a unit or boundary given here is a model of its own: no provider's whole blocks in it */
	if (o->have_atomic || o->have_boundary)
		m->m.whole_block = 0;
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

static json_object *u64_json(uint64_t v)
{
	return json_object_new_int64((int64_t)v);
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
		json_object *runs = replay_runs_json(&r);
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
				json_stream_element(&js, replay_page_write_json(logs, rm, &r.writes[i]));
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
		replay_print_model(rm);
		for (uint64_t i = 0; i < r.n_writes; i++)
			if (replay_selected(o, &r.writes[i]) &&
			    (o->all || r.writes[i].verdict != ORACLE_ATOMIC || !r.writes[i].durable))
				replay_print_page_write(logs, o->n_logs, rm, &r.writes[i]);
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
