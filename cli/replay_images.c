/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl replay --base: write the disk as a power cut at a chosen moment of
 * the log would have left it, and (--cut-all) look on each such image at the
 * blocks where the log put a tearable page write, to show the tear.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash_image.h"
#include "replay.h"
#include "torture_page.h"

/* What an image holds where the log wrote page write W. */
struct shown {
	uint32_t new_blocks, old_blocks, other_blocks;
	const char *word; /* torn, damaged, new, old */
};

static int look(const char *image, const struct oracle_page_write *w, struct shown *ret)
{
	struct shown s = { 0 };
	uint8_t block[TORTURE_BLOCK_SIZE];
	int fd = open(image, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (uint32_t i = 0; i < w->n_parts; i++)
		for (uint32_t b = 0; b < w->parts[i].blocks; b++) {
			struct torture_stamp st;
			uint64_t at = w->parts[i].dev_offset + (uint64_t)b * TORTURE_BLOCK_SIZE;

			if (pread(fd, block, sizeof(block), (off_t)at) != (ssize_t)sizeof(block) ||
			    torture_block_decode(block, &st) != TORTURE_BLOCK_STAMPED || st.run_id != w->run_id ||
			    st.page != w->page || st.block != w->parts[i].first_block + b)
				s.other_blocks++;
			else if (st.generation == w->generation)
				s.new_blocks++;
			else
				s.old_blocks++;
		}
	close(fd);
	/* torn: part new, part an older generation; damaged: part of it not the page at all */
	if (s.new_blocks && s.old_blocks)
		s.word = "torn";
	else if (s.other_blocks)
		s.word = "damaged";
	else
		s.word = s.new_blocks ? "new" : "old";
	*ret = s;
	return 0;
}

static json_object *entry_json(const struct writelog *log, const struct replay_model *rm, uint64_t index)
{
	const struct writelog_entry *e = writelog_entry(log, index);
	uint64_t off;
	json_object *j;

	if (!e)
		return NULL;
	off = e->sector * writelog_sector_size(log);
	j = json_object_new_object();
	json_object_object_add(j, "entry", json_object_new_int64((int64_t)index));
	json_object_object_add(j, "kind", json_object_new_string(writelog_entry_kind(e)));
	json_object_object_add(j, "offset", json_object_new_int64((int64_t)off));
	json_object_object_add(j, "length", json_object_new_int64((int64_t)e->data_bytes));
	json_object_object_add(j, "atomic", json_object_new_boolean(oracle_command_atomic(&rm->m, off, e->data_bytes)));
	return j;
}

static json_object *image_json(const struct replay_opts *o, const struct writelog *log, const struct replay_model *rm,
			       uint64_t cut, uint64_t tear_bytes)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "base", json_object_new_string(o->base));
	json_object_object_add(j, "out", json_object_new_string(o->out));
	json_object_object_add(j, "cut", json_object_new_int64((int64_t)cut));
	json_object_object_add(j, "tear_blocks", json_object_new_int64((int64_t)(tear_bytes / rm->m.lba)));
	json_object_object_add(j, "tear_bytes", json_object_new_int64((int64_t)tear_bytes));
	json_object_object_add(j, "entry_in_flight", entry_json(log, rm, cut));
	return j;
}

static json_object *doc_new(const struct replay_opts *o, const struct writelog *log, const struct replay_model *rm)
{
	json_object *doc = json_object_new_object();

	json_object_object_add(doc, "schema", json_object_new_int(1));
	json_object_object_add(doc, "command", json_object_new_string("replay"));
	json_object *infos = json_object_new_array();

	json_object_array_add(infos, replay_log_info_json(o->logs[0], log));
	json_object_object_add(doc, "logs", infos);
	json_object_object_add(doc, "model", replay_model_json(rm));
	return doc;
}

int replay_cut(const struct replay_opts *o, const struct writelog *log, const struct replay_model *rm)
{
	const struct writelog_entry *e = writelog_entry(log, o->cut);
	uint64_t tear_bytes, off;
	char err[512];
	int r;

	if (o->cut > writelog_entry_count(log)) {
		fprintf(stderr, "lcloudctl replay: --cut %" PRIu64 " is past the log's %" PRIu64 " entries\n", o->cut,
			writelog_entry_count(log));
		return EXIT_USAGE;
	}
	if (o->tear > UINT64_MAX / rm->m.lba) {
		fprintf(stderr, "lcloudctl replay: --tear %" PRIu64 " is too large\n", o->tear);
		return EXIT_USAGE;
	}
	tear_bytes = o->tear * rm->m.lba;
	if (tear_bytes) {
		if (!e || !writelog_entry_writes(e) || tear_bytes >= e->data_bytes) {
			fprintf(stderr, "lcloudctl replay: entry %" PRIu64 " %s: --tear %" PRIu64 " (%" PRIu64 " bytes) must "
				"leave part of it unwritten\n", o->cut,
				!e ? "does not exist" : !writelog_entry_writes(e) ? "writes no data" : "is not that long",
				o->tear, tear_bytes);
			return EXIT_USAGE;
		}
		off = e->sector * writelog_sector_size(log);
		if (oracle_command_atomic(&rm->m, off, e->data_bytes)) {
			fprintf(stderr, "lcloudctl replay: entry %" PRIu64 " is a command of %" PRIu64 " bytes at %" PRIu64
				" within the atomic unit (%" PRIu64 ") and crossing no boundary: under this model the device "
				"writes it whole or not at all; use --tear 0, or --cut %" PRIu64 "\n", o->cut, e->data_bytes,
				off, rm->m.atomic_bytes, o->cut + 1);
			return EXIT_USAGE;
		}
	}
	r = crash_image_make(log, o->base, o->out, o->cut, tear_bytes, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "lcloudctl replay: %s\n", err[0] ? tty_str(err) : strerror(-r));
		return r == -EINVAL || r == -ENOSPC ? EXIT_USAGE : exit_code_for_error(r);
	}
	if (o->format == OUTPUT_JSON) {
		json_object *doc = doc_new(o, log, rm);

		json_object_object_add(doc, "image", image_json(o, log, rm, o->cut, tear_bytes));
		print_json(stdout, doc);
		json_object_put(doc);
	} else {
		printf("image %s: %s with entries 0 to %" PRIu64 " of %s applied", tty_str(o->out), tty_str(o->base),
		       o->cut - (o->cut > 0), tty_str(o->logs[0]));
		if (!o->cut)
			printf(" (none)");
		if (tear_bytes)
			printf(", and the first %" PRIu64 " of the %" PRIu64 " bytes of entry %" PRIu64 " (%" PRIu64
			       " logical blocks): the command in flight when the power went", tear_bytes, e->data_bytes,
			       o->cut, o->tear);
		putchar('\n');
	}
	return EXIT_OK;
}

int replay_cut_all(const struct replay_opts *o, const struct writelog *log, const struct replay_model *rm)
{
	struct oracle_result res;
	json_object *doc = NULL, *tries = NULL;
	const struct oracle_page_write *found = NULL;
	uint64_t tried = 0, tearable = 0, shown_torn = 0;
	char err[512], trial[4200];
	int r = oracle_run(&log, 1, &rm->m, &res, err, sizeof(err)), rc = EXIT_OK;

	if (r < 0) {
		fprintf(stderr, "lcloudctl replay: %s: %s\n", tty_str(o->logs[0]), err[0] ? tty_str(err) : strerror(-r));
		return EXIT_FAILURE_GENERIC;
	}
	if (o->format == OUTPUT_JSON) {
		doc = doc_new(o, log, rm);
		tries = json_object_new_array();
	}
	for (uint64_t i = 0; i < res.n_writes; i++)
		tearable += res.writes[i].verdict == ORACLE_TEARABLE && replay_selected(o, &res.writes[i]);
	/* with --keep-going the images after the first torn one are made beside it, then removed */
	snprintf(trial, sizeof(trial), "%s.try", o->out);
	for (uint64_t i = 0; i < res.n_writes && (!found || o->keep_going); i++) {
		const struct oracle_page_write *w = &res.writes[i];
		const char *image = found ? trial : o->out;
		struct shown s = { .word = "none" };

		if (w->verdict != ORACLE_TEARABLE || !replay_selected(o, w))
			continue;
		err[0] = '\0';
		r = crash_image_make(log, o->base, image, w->cut_entry, w->cut_bytes, err, sizeof(err));
		if (r >= 0)
			r = look(image, w, &s);
		if (r < 0) {
			fprintf(stderr, "lcloudctl replay: %s\n", err[0] ? tty_str(err) : strerror(-r));
			rc = r == -ENOSPC ? EXIT_USAGE : EXIT_FAILURE_GENERIC;
			break;
		}
		tried++;
		if (s.new_blocks && (s.old_blocks || s.other_blocks)) {
			/* the new write is on the image, and so is something else where the page is */
			shown_torn++;
			if (!found)
				found = w;
		}
		if (tries) {
			json_object *t = json_object_new_object();
			char id[32];

			snprintf(id, sizeof(id), "0x%016" PRIx64, w->run_id);
			json_object_object_add(t, "run_id", json_object_new_string(id));
			json_object_object_add(t, "page", json_object_new_int64((int64_t)w->page));
			json_object_object_add(t, "generation", json_object_new_int64((int64_t)w->generation));
			json_object_object_add(t, "copy", json_object_new_int64(w->copy));
			json_object_object_add(t, "image", image_json(o, log, rm, w->cut_entry, w->cut_bytes));
			json_object_object_add(t, "shown", json_object_new_string(s.word));
			json_object_object_add(t, "new_blocks", json_object_new_int64(s.new_blocks));
			json_object_object_add(t, "old_blocks", json_object_new_int64(s.old_blocks));
			json_object_object_add(t, "other_blocks", json_object_new_int64(s.other_blocks));
			json_object_array_add(tries, t);
		} else {
			printf("run 0x%016" PRIx64 " page %" PRIu64 " generation %" PRIu64 ": --cut %" PRIu64 " --tear %" PRIu64
			       ": the image shows it %s (%u new, %u old, %u other blocks where the log wrote it)\n", w->run_id,
			       w->page, w->generation, w->cut_entry, w->cut_bytes / rm->m.lba, s.word, s.new_blocks,
			       s.old_blocks, s.other_blocks);
		}
	}
	if (found && o->keep_going)
		unlink(trial);
	if (rc == EXIT_OK && found)
		rc = EXIT_TORN;
	if (doc) {
		json_object_object_add(doc, "tearable", json_object_new_int64((int64_t)tearable));
		json_object_object_add(doc, "tried", json_object_new_int64((int64_t)tried));
		json_object_object_add(doc, "shown_torn", json_object_new_int64((int64_t)shown_torn));
		json_object_object_add(doc, "tries", tries);
		json_object_object_add(doc, "result", json_object_new_string(found ? "torn" : rc ? "error" : "none shown"));
		json_object_object_add(doc, "image", found ? json_object_new_string(o->out) : NULL);
		print_json(stdout, doc);
		json_object_put(doc);
	} else if (rc == EXIT_TORN) {
		printf("result: TORN: %s shows run 0x%016" PRIx64 " page %" PRIu64 " generation %" PRIu64 " torn", tty_str(o->out),
		       found->run_id, found->page, found->generation);
		if (o->keep_going)
			printf(" (%" PRIu64 " of %" PRIu64 " images showed a tear)", shown_torn, tried);
		putchar('\n');
	} else if (rc == EXIT_OK) {
		printf("result: %s\n", tearable ? "no image showed a torn page" : "no tearable page write: nothing to cut");
	}
	oracle_result_release(&res);
	return rc;
}
