/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl replay --base: write the disk as a power cut at a chosen moment of
 * the log would have left it, and (--cut-all) look on each such image at the
 * blocks where the log put a tearable page write, to show the tear. OUT is
 * an output file (output_file.c): a regular file is made beside its name and
 * renamed into place when whole, a block device is written only through the
 * write guard, and OUT is never the base or a log.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crash_image.h"
#include "escape.h"
#include "exit_codes.h"
#include "output_file.h"
#include "print.h"
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

#define IMAGE_CHUNK (1u << 20)

/* Refuses IMAGE when it is the base or a log (by inode, through links): writing it would destroy the input. */
static int check_not_input(const struct replay_opts *o, const char *image)
{
	const char *what = NULL, *input = NULL;

	if (output_file_same(image, o->base)) {
		what = "the base image --base";
		input = o->base;
	}
	for (uint32_t i = 0; i < o->n_logs && !what; i++)
		if (output_file_same(image, o->logs[i])) {
			what = "the write log";
			input = o->logs[i];
		}
	if (!what)
		return 0;
	fprintf(stderr, "lcloudctl replay: --out %s is %s %s (the same file or device): the image would destroy it; "
		"name another file\n", tty_str(image), what, tty_str(input));
	return EXIT_USAGE;
}

/*
 * A device OUT whose writes reach the base or a log (a loop device over it,
 * directly or through other loop devices, or a partition of one) is that
 * file under another name: -EINVAL, with ERR; -EACCES when it cannot be told.
 */
static int check_device_not_over_input(const struct replay_opts *o, const struct output_file *of, char *err,
				       size_t err_size)
{
	const char *input = NULL;
	int r = 0;

	for (uint32_t i = 0; i <= o->n_logs && r == 0; i++) {
		input = i == 0 ? o->base : o->logs[i - 1];
		r = output_file_reaches(o->ctx, of, input);
	}
	if (r == 0)
		return 0;
	if (r < 0) {
		snprintf(err, err_size, "whether --out %s writes into %s, an input of this replay, cannot be told (%s): "
			 "the image could destroy it; run as root, or name another device or file", of->path, input,
			 strerror(-r));
		return -EACCES;
	}
	snprintf(err, err_size, "--out %s is a loop device over %s (directly or through other devices), an input of "
		 "this replay: the image would destroy it; name another device or file", of->path, input);
	return -EINVAL;
}

/* An entry's data onto a device image: [offset, offset + bytes) within SIZE. */
static int device_apply(const struct writelog *log, const struct writelog_entry *e, uint64_t bytes, uint64_t size,
			struct output_file *of, uint8_t *buf, char *err, size_t err_size)
{
	uint64_t dev = e->sector * writelog_sector_size(log);
	bool zeros = e->flags & WRITELOG_DISCARD; /* a discarded range is zeros on the image (crash_image.h) */

	if (dev > size || bytes > size - dev) {
		snprintf(err, err_size, "entry %" PRIu64 " writes [%" PRIu64 ", %" PRIu64 ") past the end of the base "
			 "image (%" PRIu64 " bytes): is it the image of this disk?", e->index, dev, dev + bytes, size);
		return -ENOSPC;
	}
	if (zeros)
		memset(buf, 0, bytes < IMAGE_CHUNK ? bytes : IMAGE_CHUNK);
	for (uint64_t off = 0; off < bytes; off += IMAGE_CHUNK) {
		uint64_t len = bytes - off < IMAGE_CHUNK ? bytes - off : IMAGE_CHUNK;
		int r = zeros ? 0 : writelog_read_data(log, e, off, buf, len);

		if (r < 0) {
			snprintf(err, err_size, "entry %" PRIu64 ": cannot read its data: %s", e->index, strerror(-r));
			return r;
		}
		r = output_file_pwrite(of, buf, len, dev + off, err, err_size);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * The crash image onto a block device, as crash_image_make() makes one in a
 * file: that one opens its output by name and writes with pwrite, which
 * would pass by the write guard, so a device is written here, through it.
 */
static int device_image(const struct writelog *log, const char *base, struct output_file *of, uint64_t cut,
			uint64_t tear_bytes, char *err, size_t err_size)
{
	uint64_t n = writelog_entry_count(log), size, done = 0;
	const struct writelog_entry *torn = cut < n ? writelog_entry(log, cut) : NULL;
	uint8_t *buf = NULL;
	struct stat st;
	int in, r = 0;

	if (cut > n || (tear_bytes && (!torn || tear_bytes >= torn->data_bytes))) {
		snprintf(err, err_size, "cut %" PRIu64 " (tear %" PRIu64 " bytes) is not within the log's %" PRIu64
			 " entries", cut, tear_bytes, n);
		return -EINVAL;
	}
	in = open(base, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) < 0) {
		r = -errno;
		snprintf(err, err_size, "cannot read the base image %s: %s", base, strerror(-r));
		goto out;
	}
	size = crash_image_base_size(in, &st);
	/* checked before the first write: a base that does not fit leaves the device as it was */
	if (of->device_size && size > of->device_size) {
		snprintf(err, err_size, "the base image %s (%" PRIu64 " bytes) is larger than %s (%" PRIu64 " bytes): "
			 "nothing was written", base, size, of->path, of->device_size);
		r = -ENOSPC;
		goto out;
	}
	/* and every entry's range: a device cannot be put back as a file's temporary can be removed */
	for (uint64_t i = 0; i <= cut && i < n && r == 0; i++) {
		const struct writelog_entry *e = writelog_entry(log, i);
		uint64_t at = e->sector * writelog_sector_size(log);
		uint64_t len = i < cut ? writelog_entry_image_bytes(log, e) : tear_bytes;

		if (len && (at > size || len > size - at)) {
			snprintf(err, err_size, "entry %" PRIu64 " writes [%" PRIu64 ", %" PRIu64 ") past the end of the "
				 "base image (%" PRIu64 " bytes): is it the image of this disk? Nothing was written", i, at,
				 at + len, size);
			r = -ENOSPC;
		}
	}
	if (r < 0)
		goto out;
	buf = malloc(IMAGE_CHUNK);
	if (!buf) {
		r = -ENOMEM;
		snprintf(err, err_size, "%s", strerror(ENOMEM));
		goto out;
	}
	while (done < size && r == 0) {
		ssize_t got = pread(in, buf, size - done < IMAGE_CHUNK ? size - done : IMAGE_CHUNK, (off_t)done);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			r = got < 0 ? -errno : -EIO;
			snprintf(err, err_size, "copying %s to %s: %s", base, of->path, strerror(-r));
			break;
		}
		r = output_file_pwrite(of, buf, (uint64_t)got, done, err, err_size);
		done += (uint64_t)got;
	}
	for (uint64_t i = 0; i < cut && r == 0; i++) {
		const struct writelog_entry *e = writelog_entry(log, i);

		if (writelog_entry_image_bytes(log, e))
			r = device_apply(log, e, writelog_entry_image_bytes(log, e), size, of, buf, err, err_size);
	}
	if (r == 0 && tear_bytes)
		r = device_apply(log, torn, tear_bytes, size, of, buf, err, err_size);
out:
	free(buf);
	if (in >= 0)
		close(in);
	return r;
}

/* "/proc/self/fd/N" in a message from crash_image_make() is the image the user named. */
static void name_the_image(char *err, size_t err_size, const char *fd_path, const char *image)
{
	char *at = strstr(err, fd_path);
	char tail[512];

	if (!at)
		return;
	snprintf(tail, sizeof(tail), "%s", at + strlen(fd_path));
	snprintf(at, err_size - (size_t)(at - err), "%s%s", image, tail);
}

/*
 * IMAGE: the base with the first CUT entries of LOG and TEAR_BYTES of entry
 * CUT. An open device OF (--cut-all's tries) is written again as it is;
 * otherwise IMAGE is opened, made and put in place here. Returns 0 or
 * -errno, with ERR.
 */
static int make_image(const struct replay_opts *o, const struct writelog *log, const char *image,
		      struct output_file *device, uint64_t cut, uint64_t tear_bytes, char *err, size_t err_size)
{
	struct output_file of;
	char fd_path[64];
	int r;

	if (device)
		return device_image(log, o->base, device, cut, tear_bytes, err, err_size);
	r = output_file_open(o->ctx, image, 0644, OUTPUT_FILE_DEVICE | (o->force ? OUTPUT_FILE_FORCE : 0), &of, err,
			     err_size);
	if (r < 0) {
		output_file_abort(&of);
		return r;
	}
	if (output_file_is_device(&of)) {
		r = check_device_not_over_input(o, &of, err, err_size);
		if (r == 0)
			r = device_image(log, o->base, &of, cut, tear_bytes, err, err_size);
	} else {
		/* the lab writes the temporary through its descriptor: the name may be replaced, not this file */
		output_file_fd_path(&of, fd_path, sizeof(fd_path));
		r = crash_image_make(log, o->base, fd_path, cut, tear_bytes, err, err_size);
		if (r < 0)
			name_the_image(err, err_size, fd_path, image);
	}
	if (r == 0)
		r = output_file_commit(&of, err, err_size);
	output_file_abort(&of);
	return r;
}

/* The output was refused before anything was written: by the write guard, or as a kind never written. */
static bool out_refused(int r)
{
	return r == -EEXIST || r == -EBUSY || r == -EROFS || r == -ESTALE || r == -EBADFD;
}

/* Exit status for a failed image: the guard's refusals 7, a wrong kind 5, a wrong cut or base 2. */
static int image_exit(int r)
{
	if (r == -EINVAL || r == -ENOSPC)
		return EXIT_USAGE;
	return out_refused(r) ? output_file_exit_code(r) : exit_code_for_error(r);
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
	r = check_not_input(o, o->out);
	if (r)
		return r;
	err[0] = '\0';
	r = make_image(o, log, o->out, NULL, o->cut, tear_bytes, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "lcloudctl replay: %s\n", err[0] ? tty_str(err) : strerror(-r));
		return image_exit(r);
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
	struct output_file device = { .fd = -1 };
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
	rc = check_not_input(o, o->out);
	if (!rc && o->keep_going)
		rc = check_not_input(o, trial);
	if (!rc) {
		/* a device is claimed once for every try: its first image's own signature must not refuse the next */
		err[0] = '\0';
		r = output_file_open(o->ctx, o->out, 0644, OUTPUT_FILE_DEVICE | (o->force ? OUTPUT_FILE_FORCE : 0),
				     &device, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "lcloudctl replay: %s\n", err[0] ? tty_str(err) : strerror(-r));
			rc = image_exit(r);
		} else if (!output_file_is_device(&device)) {
			output_file_abort(&device); /* a file: each try makes its own and renames it into place */
		} else if ((r = check_device_not_over_input(o, &device, err, sizeof(err))) < 0) {
			fprintf(stderr, "lcloudctl replay: %s\n", tty_str(err));
			rc = image_exit(r);
		} else if (o->keep_going) {
			fprintf(stderr, "lcloudctl replay: --keep-going makes its later images beside --out (%s): give a "
				"regular file for --out, not a block device\n", tty_str(trial));
			rc = EXIT_USAGE;
		}
	}
	for (uint64_t i = 0; i < res.n_writes && !rc && (!found || o->keep_going); i++) {
		const struct oracle_page_write *w = &res.writes[i];
		const char *image = found ? trial : o->out;
		struct shown s = { .word = "none" };

		if (w->verdict != ORACLE_TEARABLE || !replay_selected(o, w))
			continue;
		err[0] = '\0';
		r = make_image(o, log, image, output_file_is_device(&device) ? &device : NULL, w->cut_entry, w->cut_bytes,
			       err, sizeof(err));
		if (r >= 0)
			r = look(image, w, &s);
		if (r < 0) {
			fprintf(stderr, "lcloudctl replay: %s\n", err[0] ? tty_str(err) : strerror(-r));
			rc = r == -ENOSPC ? EXIT_USAGE : out_refused(r) ? output_file_exit_code(r) : EXIT_FAILURE_GENERIC;
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
	output_file_abort(&device);
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
