/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl torture verify: after the crash, read every page of a torture
 * run and hold it to the run's record: torn pages (which blocks are old and
 * which new), acknowledged writes the disk lost, blocks that are no page's.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "args.h"
#include "color.h"
#include "commands.h"
#include "escape.h"
#include "exit_codes.h"
#include "usage.h"
#include "print.h"
#include "json_stream.h"
#include "page_check.h"
#include "torture_record.h"

struct verify_opts {
	const char *target, *record;
	uint64_t offset;
	bool have_offset, all;
	enum output_format format;
};

struct verify_counts {
	uint64_t intact, torn, damaged, unwritten, lost, newer;
};

enum page_verdict_flags {
	PAGE_LOST = 1u << 0,      /* the newest generation on disk is older than the last acknowledged */
	PAGE_UNWRITTEN = 1u << 1, /* no stamp of this page and nothing acknowledged for it */
	PAGE_NEWER = 1u << 2,     /* newer than the record: written, but not yet recorded (normal) */
};

static int parse_verify_opts(int argc, char **argv, const struct global_opts *g, struct verify_opts *o)
{
	enum { OPT_RECORD = 256, OPT_OFFSET, OPT_ALL };
	static const struct option options[] = {
		{ "record", required_argument, NULL, OPT_RECORD },
		{ "offset", required_argument, NULL, OPT_OFFSET },
		{ "all", no_argument, NULL, OPT_ALL },
		FORMAT_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->format = g->format;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":o:Jh", options, NULL)) != -1) {
		int fr = format_option("lcloudctl torture verify", c, argc, argv, &o->format);

		if (fr < 0)
			return -1;
		if (fr > 0)
			continue;
		switch (c) {
		case OPT_RECORD:
			o->record = optarg;
			break;
		case OPT_OFFSET:
			if (parse_size(optarg, &o->offset) < 0) {
				fprintf(stderr, "lcloudctl torture verify: bad value '%s' for --offset\n", tty_str(optarg));
				return -1;
			}
			o->have_offset = true;
			break;
		case OPT_ALL:
			o->all = true;
			break;
		case 'h':
			cmd_torture_verify_usage(stdout);
			return 1;
		default:
			usage_option_error("lcloudctl torture verify", c, argc, argv);
			return -1;
		}
	}
	if (optind + 1 != argc || !o->record) {
		usage_error("lcloudctl torture verify", "give one TARGET and --record FILE");
		return -1;
	}
	o->target = argv[optind];
	return 0;
}

/* Reads LEN bytes at OFFSET; what lies past the end of the target reads as zeroes (no stamps). */
static int read_page(int *fd, const char *target, bool *direct, void *buf, uint64_t len, uint64_t offset)
{
	uint64_t done = 0;

	while (done < len) {
		ssize_t n = pread(*fd, (uint8_t *)buf + done, len - done, (off_t)(offset + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EINVAL && *direct) {
			/* this file system takes no O_DIRECT at this size: read through the cache instead */
			int nfd = open(target, O_RDONLY | O_CLOEXEC);

			if (nfd < 0)
				return -errno;
			close(*fd);
			*fd = nfd;
			*direct = false;
			continue;
		}
		if (n < 0)
			return -errno;
		if (n == 0) {
			memset((uint8_t *)buf + done, 0, len - done);
			break;
		}
		done += (uint64_t)n;
	}
	return 0;
}

/* The bytes TARGET (open as FD) holds: a file's size, a block device's capacity. */
static int target_size(int fd, uint64_t *ret)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, ret) < 0 ? -errno : 0;
	if (!S_ISREG(st.st_mode))
		return -EBADFD;
	*ret = (uint64_t)st.st_size;
	return 0;
}

static const char *generation_age(const struct page_check *c, uint64_t gen)
{
	return c->generations > 1 ? (gen == c->newest ? "new" : "old") : "only";
}

static json_object *part_to_json(const struct page_check *c, const struct page_part *p)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "first_block", json_object_new_int64(p->first_block));
	json_object_object_add(j, "blocks", json_object_new_int64(p->blocks));
	switch (p->kind) {
	case PART_GENERATION:
		json_object_object_add(j, "kind", json_object_new_string("generation"));
		json_object_object_add(j, "generation", json_object_new_int64((int64_t)p->generation));
		json_object_object_add(j, "age", json_object_new_string(generation_age(c, p->generation)));
		break;
	case PART_FOREIGN: {
		char id[32];

		snprintf(id, sizeof(id), "0x%016" PRIx64, p->foreign.run_id);
		json_object_object_add(j, "kind", json_object_new_string("foreign"));
		json_object_object_add(j, "run_id", json_object_new_string(id));
		json_object_object_add(j, "page", json_object_new_int64((int64_t)p->foreign.page));
		json_object_object_add(j, "generation", json_object_new_int64((int64_t)p->foreign.generation));
		json_object_object_add(j, "block", json_object_new_int64(p->foreign.block));
		break;
	}
	case PART_GARBAGE:
		json_object_object_add(j, "kind", json_object_new_string("garbage"));
		json_object_object_add(j, "why", json_object_new_string(torture_block_state_to_string(p->state)));
		break;
	}
	return j;
}

static void print_part(const struct page_check *c, const struct page_part *p)
{
	if (p->blocks == 1)
		printf("block %u ", p->first_block);
	else
		printf("blocks %u-%u ", p->first_block, p->first_block + p->blocks - 1);
	switch (p->kind) {
	case PART_GENERATION:
		printf("generation %" PRIu64 "%s", p->generation,
		       c->generations > 1 ? (p->generation == c->newest ? " (new)" : " (old)") : "");
		break;
	case PART_FOREIGN:
		printf("foreign (run 0x%016" PRIx64 " page %" PRIu64 " generation %" PRIu64 " block %u)",
		       p->foreign.run_id, p->foreign.page, p->foreign.generation, p->foreign.block);
		break;
	case PART_GARBAGE:
		printf("garbage (%s)", torture_block_state_to_string(p->state));
		break;
	}
}

static const char *page_status(const struct page_check *c, unsigned int flags)
{
	if (flags & PAGE_UNWRITTEN)
		return "unwritten";
	if (c->state == PAGE_INTACT && (flags & PAGE_LOST))
		return "lost";
	return page_state_to_string(c->state);
}

static json_object *page_to_json(uint64_t page, uint64_t offset, const struct page_check *c, unsigned int flags,
				 uint64_t acked)
{
	json_object *j = json_object_new_object(), *parts = json_object_new_array(), *gens = json_object_new_array();

	json_object_object_add(j, "page", json_object_new_int64((int64_t)page));
	json_object_object_add(j, "offset", json_object_new_int64((int64_t)offset));
	json_object_object_add(j, "status", json_object_new_string(page_status(c, flags)));
	json_object_object_add(j, "lost_acknowledged_write", json_object_new_boolean(flags & PAGE_LOST));
	json_object_object_add(j, "acknowledged_generation",
			       acked == TORTURE_NO_GENERATION ? NULL : json_object_new_int64((int64_t)acked));
	json_object_object_add(j, "newest_generation",
			       c->newest == UINT64_MAX ? NULL : json_object_new_int64((int64_t)c->newest));
	for (uint32_t i = 0; i < c->n_parts; i++) {
		const struct page_part *p = &c->parts[i];
		bool seen = false;

		json_object_array_add(parts, part_to_json(c, p));
		if (p->kind != PART_GENERATION)
			continue;
		for (uint32_t k = 0; k < i; k++)
			if (c->parts[k].kind == PART_GENERATION && c->parts[k].generation == p->generation)
				seen = true;
		if (!seen)
			json_object_array_add(gens, json_object_new_int64((int64_t)p->generation));
	}
	json_object_object_add(j, "generations", gens);
	json_object_object_add(j, "parts", parts);
	return j;
}

static void print_page(uint64_t page, uint64_t offset, const struct page_check *c, unsigned int flags,
		       uint64_t acked)
{
	printf("page %" PRIu64 " (offset %" PRIu64 "): %s: ", page, offset, page_status(c, flags));
	for (uint32_t i = 0; i < c->n_parts; i++) {
		if (i)
			printf(", ");
		print_part(c, &c->parts[i]);
	}
	if (acked != TORTURE_NO_GENERATION)
		printf("; last acknowledged generation %" PRIu64, acked);
	if (flags & PAGE_LOST)
		printf(c->newest == UINT64_MAX ? "; the acknowledged write is lost"
					       : "; the acknowledged write is lost (newest on disk: %" PRIu64 ")",
		       c->newest);
	putchar('\n');
}

static const char *result_word(int rc, const struct verify_counts *n)
{
	if (rc != EXIT_OK && rc != EXIT_TORN && rc != EXIT_LOST)
		return "error";
	return n->torn ? "torn" : n->damaged ? "damaged" : n->lost ? "lost" : "clean";
}

static const char *result_sentence(int rc, const struct verify_counts *n)
{
	const char *w = result_word(rc, n);

	if (!strcmp(w, "torn"))
		return "TORN: pages hold parts of different writes";
	if (!strcmp(w, "damaged"))
		return "DAMAGED: pages hold blocks that are not theirs (garbage, another page's, torn inside a block)";
	if (!strcmp(w, "lost"))
		return "LOST: acknowledged and flushed writes are missing";
	return w;
}

void cmd_torture_verify_usage(FILE *out)
{
	fputs("Usage: lcloudctl torture verify TARGET --record FILE [options]\n"
	      "\n"
	      "Reads every page 'lcloudctl torture run' wrote to TARGET and holds it to the\n"
	      "run's record: torn pages (old and new parts), lost acknowledged writes and\n"
	      "damaged blocks.\n"
	      "\n"
	      "Options:\n"
	      "      --record FILE     the run's record (required)\n"
	      "      --offset N        where page 0 starts in TARGET (default: as recorded)\n"
	      "      --all             list every page, not only the ones with a problem\n"
	      "      --format FORMAT   normal (default) or json\n"
	      "  -J, --json           the same as --format json\n"
	      "  -h, --help            show this help\n"
	      "\n"
	      "Exit status: 0 every page intact and no acknowledged write lost, 9 torn or\n"
	      "damaged pages, 10 lost acknowledged writes (and no torn page).\n",
	      out);
}

/*
 * TARGET opened for reading (O_DIRECT where it can be), checked to hold every
 * page of the record. The record's geometry is the record writer's word:
 * pages that do not fit the target were never written there, and reading
 * them would take time and memory in proportion to a number anyone can put
 * in a file. A descriptor, or -(exit code) with the reason printed.
 */
static int open_verified_target(const struct verify_opts *o, const struct torture_history *h, bool *direct)
{
	uint64_t have_bytes, page_size = h->geometry.page_size;
	int fd, r;

	*direct = true;
	fd = open(o->target, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 && errno == EINVAL) {
		*direct = false;
		fd = open(o->target, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		int e = errno;

		fprintf(stderr, "lcloudctl torture verify: %s: %s\n", tty_str(o->target), strerror(e));
		hint_needs_root("lcloudctl torture verify", o->target, -e, false);
		return -exit_code_for_error(-e);
	}
	r = target_size(fd, &have_bytes);
	if (r < 0) {
		fprintf(stderr, "lcloudctl torture verify: %s: %s\n", o->target,
			r == -EBADFD ? "not a regular file or block device" : strerror(-r));
		close(fd);
		return -(r == -EBADFD ? EXIT_WRONG_KIND : exit_code_for_error(r));
	}
	if (o->offset > have_bytes || h->geometry.pages > (have_bytes - o->offset) / page_size) {
		fprintf(stderr, "lcloudctl torture verify: the record %s claims %" PRIu64 " pages of %" PRIu64 " bytes from "
			"offset %" PRIu64 ", but %s holds %" PRIu64 " bytes: it is not this run's target, or it lost its "
			"end after the run (then acknowledged writes are lost)\n", o->record, h->geometry.pages, page_size,
			o->offset, o->target, have_bytes);
		close(fd);
		return -EXIT_WRONG_KIND;
	}
	return fd;
}

/* What the run and its record were, before the page reports. */
static void print_verify_head(const struct verify_opts *o, const struct torture_history *h, struct json_stream *js)
{
	uint64_t page_size = h->geometry.page_size;
	char id[32], size[32];

	snprintf(id, sizeof(id), "0x%016" PRIx64, h->geometry.run_id);
	if (o->format == OUTPUT_JSON) {
		json_object *head = json_object_new_object(), *rec = json_object_new_object();

		json_object_object_add(head, "schema", json_object_new_int(1));
		json_object_object_add(head, "command", json_object_new_string("torture verify"));
		json_object_object_add(head, "target", json_object_new_string(o->target));
		json_object_object_add(head, "run_id", json_object_new_string(id));
		json_object_object_add(head, "page_size", json_object_new_int64((int64_t)page_size));
		json_object_object_add(head, "pages", json_object_new_int64((int64_t)h->geometry.pages));
		json_object_object_add(head, "offset", json_object_new_int64((int64_t)o->offset));
		json_object_object_add(head, "path",
				       json_object_new_string(lcloud_io_path_to_string((enum lcloud_io_path)h->geometry.path)));
		json_object_object_add(rec, "file", json_object_new_string(o->record));
		json_object_object_add(rec, "started", json_object_new_boolean(h->started));
		json_object_object_add(rec, "filled", json_object_new_boolean(h->filled));
		json_object_object_add(rec, "ended", json_object_new_boolean(h->ended));
		json_object_object_add(rec, "acknowledged_writes", json_object_new_int64((int64_t)h->acks));
		json_object_object_add(rec, "ignored_tail_bytes", json_object_new_int64((int64_t)h->ignored_bytes));
		json_object_object_add(head, "record", rec);
		/* the page reports as they are read; the summary, known only then, after them */
		json_stream_open(js, stdout);
		json_stream_members(js, head);
		json_stream_array_open(js, "page_reports");
		return;
	}
	printf("torture verify: %s: %" PRIu64 " pages of %s from offset %" PRIu64 ", run %s\n", tty_str(o->target),
	       h->geometry.pages, format_size(page_size, size, sizeof(size)), o->offset, id);
	printf("record %s: %s%s, %" PRIu64 " acknowledged writes%s", tty_str(o->record),
	       h->started ? "run started" : "start record missing", h->filled ? ", pages filled" : ", fill not finished",
	       h->acks, h->ended ? ", ended normally" : ", did not end (crash or kill)");
	if (h->ignored_bytes)
		printf(", %" PRIu64 " bytes of torn tail ignored", h->ignored_bytes);
	putchar('\n');
}

/* A page's state against the record's last acknowledged generation: PAGE_* flags, counted into N. */
static unsigned int judge_page(const struct page_check *c, uint64_t acked, struct verify_counts *n)
{
	unsigned int flags = 0;

	if (acked != TORTURE_NO_GENERATION && (c->newest == UINT64_MAX || c->newest < acked))
		flags |= PAGE_LOST;
	if (acked == TORTURE_NO_GENERATION && c->newest == UINT64_MAX && c->state == PAGE_DAMAGED)
		flags |= PAGE_UNWRITTEN;
	if (c->newest != UINT64_MAX && (acked == TORTURE_NO_GENERATION || c->newest > acked))
		flags |= PAGE_NEWER;
	if (flags & PAGE_UNWRITTEN)
		n->unwritten++;
	else if (c->state == PAGE_INTACT)
		n->intact++;
	else if (c->state == PAGE_TORN)
		n->torn++;
	else
		n->damaged++;
	n->lost += (flags & PAGE_LOST) != 0;
	n->newer += (flags & PAGE_NEWER) != 0;
	return flags;
}

static void print_verify_tail(const struct verify_opts *o, const struct global_opts *g, uint64_t pages,
			      const struct verify_counts *n, int rc, struct json_stream *js)
{
	if (o->format == OUTPUT_JSON) {
		json_object *tail = json_object_new_object(), *sum = json_object_new_object();

		json_stream_array_close(js);
		json_object_object_add(sum, "intact", json_object_new_int64((int64_t)n->intact));
		json_object_object_add(sum, "torn", json_object_new_int64((int64_t)n->torn));
		json_object_object_add(sum, "damaged", json_object_new_int64((int64_t)n->damaged));
		json_object_object_add(sum, "unwritten", json_object_new_int64((int64_t)n->unwritten));
		json_object_object_add(sum, "lost_acknowledged_writes", json_object_new_int64((int64_t)n->lost));
		json_object_object_add(sum, "newer_than_record", json_object_new_int64((int64_t)n->newer));
		json_object_object_add(tail, "summary", sum);
		json_object_object_add(tail, "result", json_object_new_string(result_word(rc, n)));
		json_stream_members(js, tail);
		json_stream_close(js);
		return;
	}
	printf("summary: %" PRIu64 " pages: %" PRIu64 " intact, %" PRIu64 " torn, %" PRIu64 " damaged, %" PRIu64
	       " unwritten; %" PRIu64 " lost acknowledged writes; %" PRIu64 " pages newer than the record\n",
	       pages, n->intact, n->torn, n->damaged, n->unwritten, n->lost, n->newer);
	printf("result: %s%s%s\n", color_start(g, strcmp(result_word(rc, n), "clean") ? COLOR_BAD : COLOR_GOOD),
	       result_sentence(rc, n), color_end(g));
}

int cmd_torture_verify(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	struct verify_opts o;
	struct torture_history h;
	struct verify_counts n = { 0 };
	struct json_stream js;
	char err[512];
	bool direct;
	void *buf = NULL;
	uint64_t page_size;
	int fd, r, rc;

	(void)ctx;
	rc = parse_verify_opts(argc, argv, g, &o);
	if (rc)
		return rc > 0 ? EXIT_OK : EXIT_USAGE;
	r = torture_history_read(o.record, &h, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "lcloudctl torture verify: %s\n", err[0] ? tty_str(err) : strerror(-r));
		return r == -EBADMSG ? EXIT_WRONG_KIND : exit_code_for_error(r);
	}
	page_size = h.geometry.page_size;
	if (!o.have_offset)
		o.offset = h.geometry.offset;
	fd = open_verified_target(&o, &h, &direct);
	if (fd < 0) {
		torture_history_release(&h);
		return -fd;
	}
	if (posix_memalign(&buf, 4096, page_size)) {
		close(fd);
		torture_history_release(&h);
		return EXIT_FAILURE_GENERIC;
	}
	print_verify_head(&o, &h, &js);
	rc = EXIT_OK;
	for (uint64_t p = 0; p < h.geometry.pages; p++) {
		uint64_t off = o.offset + p * page_size, acked = torture_history_last_ack(&h, p);
		struct page_check c;
		unsigned int flags;

		r = read_page(&fd, o.target, &direct, buf, page_size, off);
		if (r < 0) {
			fprintf(stderr, "lcloudctl torture verify: %s: reading page %" PRIu64 " at %" PRIu64 ": %s\n",
				tty_str(o.target), p, off, strerror(-r));
			rc = EXIT_FAILURE_GENERIC;
			break;
		}
		if (page_check(buf, (uint32_t)page_size, h.geometry.run_id, p, &c) < 0) {
			rc = EXIT_FAILURE_GENERIC;
			break;
		}
		flags = judge_page(&c, acked, &n);
		if (o.all || (c.state != PAGE_INTACT && !(flags & PAGE_UNWRITTEN)) || (flags & PAGE_LOST)) {
			if (o.format == OUTPUT_JSON)
				json_stream_element(&js, page_to_json(p, off, &c, flags, acked));
			else
				print_page(p, off, &c, flags, acked);
		}
		page_check_release(&c);
	}
	if (rc == EXIT_OK)
		rc = n.torn || n.damaged ? EXIT_TORN : n.lost ? EXIT_LOST : EXIT_OK;
	print_verify_tail(&o, g, h.geometry.pages, &n, rc, &js);
	free(buf);
	close(fd);
	torture_history_release(&h);
	return rc;
}
