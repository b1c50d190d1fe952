/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl torture run: write self-describing pages (torture_page.h) at
 * random through one I/O path, and keep a record of every write the target
 * acknowledged and flushed, for 'torture verify' to hold the disk to after a
 * power cut.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "escape.h"
#include "exit_codes.h"
#include "usage.h"
#include "print.h"
#include "torture_page.h"
#include "torture_record.h"

struct run_opts {
	const char *target, *record;
	uint64_t page_size, pages, offset, writes, duration, seed;
	uint32_t depth;
	enum lcloud_io_path path;
	bool force, progress, have_seed, have_pages, have_writes, have_duration;
	enum output_format format;
};

struct run_state {
	struct run_opts *o;
	struct lcloud_queue *q;
	int data_fd;  /* buffered path: the page-cache fd */
	int flush_fd; /* fsync()/fdatasync() here flushes the target's cache */
	int record_fd;
	uint64_t run_id, rng, generation, writes;
	void **bufs;
	uint64_t *batch_pages;
	uint8_t *in_batch;
	struct lcloud_hint hint;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64*: reproducible page order for a given --seed */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int parse_u64(const char *s, uint64_t *ret)
{
	char *end;

	errno = 0;
	if (!s[0] || s[0] == '-')
		return -EINVAL;
	*ret = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

static int parse_run_opts(int argc, char **argv, const struct global_opts *g, struct run_opts *o)
{
	enum { OPT_PAGE_SIZE = 256, OPT_PAGES, OPT_OFFSET, OPT_PATH, OPT_DEPTH, OPT_WRITES, OPT_DURATION, OPT_RECORD,
	       OPT_SEED, OPT_PROGRESS };
	static const struct option options[] = {
		{ "page-size", required_argument, NULL, OPT_PAGE_SIZE },
		{ "pages", required_argument, NULL, OPT_PAGES },
		{ "offset", required_argument, NULL, OPT_OFFSET },
		{ "path", required_argument, NULL, OPT_PATH },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "writes", required_argument, NULL, OPT_WRITES },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "record", required_argument, NULL, OPT_RECORD },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "force", no_argument, NULL, 'f' },
		FORMAT_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->page_size = 16384;
	o->depth = 8;
	o->path = LCLOUD_PATH_RWF_ATOMIC;
	o->format = g->format;
	optind = 0; /* 0, not 1: glibc then re-reads the option string (main used "+") */
	while ((c = getopt_long(argc, argv, ":fo:Jh", options, NULL)) != -1) {
		int fr = format_option("lcloudctl torture run", c, argc, argv, &o->format);

		if (fr < 0)
			return -1;
		if (fr > 0)
			continue;
		switch (c) {
		case OPT_PAGE_SIZE:
			if (parse_size(optarg, &o->page_size) < 0 || !torture_page_size_valid(o->page_size)) {
				fprintf(stderr, "lcloudctl torture run: --page-size %s: use a power of two from 4K to 1M\n",
					tty_str(optarg));
				return -1;
			}
			break;
		case OPT_PAGES:
			if (parse_u64(optarg, &o->pages) < 0 || !o->pages || o->pages > (1ull << 32))
				goto bad;
			o->have_pages = true;
			break;
		case OPT_OFFSET:
			if (parse_size(optarg, &o->offset) < 0)
				goto bad;
			break;
		case OPT_PATH:
			if (lcloud_io_path_from_string(optarg, &o->path) < 0 || o->path == LCLOUD_PATH_BEST) {
				fprintf(stderr, "lcloudctl torture run: unknown path '%s' (rwf_atomic, plain_direct, "
					"passthrough, buffered)\n", tty_str(optarg));
				return -1;
			}
			break;
		case OPT_DEPTH:
			if (parse_u64(optarg, &v) < 0 || !v || v > 1024)
				goto bad;
			o->depth = (uint32_t)v;
			break;
		case OPT_WRITES:
			if (parse_u64(optarg, &o->writes) < 0 || !o->writes)
				goto bad;
			o->have_writes = true;
			break;
		case OPT_DURATION:
			if (parse_u64(optarg, &o->duration) < 0 || !o->duration)
				goto bad;
			o->have_duration = true;
			break;
		case OPT_RECORD:
			o->record = optarg;
			break;
		case OPT_SEED:
			if (parse_u64(optarg, &o->seed) < 0)
				goto bad;
			o->have_seed = true;
			break;
		case OPT_PROGRESS:
			o->progress = true;
			break;
		case 'f':
			o->force = true;
			break;
		case 'h':
			cmd_torture_run_usage(stdout);
			return 1;
		default:
			usage_option_error("lcloudctl torture run", c, argc, argv);
			return -1;
		}
		continue;
bad:
		fprintf(stderr, "lcloudctl torture run: bad value '%s' for --%s\n", tty_str(optarg), options[c - OPT_PAGE_SIZE].name);
		return -1;
	}
	if (optind + 1 != argc || !o->have_pages || !o->record) {
		usage_error("lcloudctl torture run", "give one TARGET, --pages N and --record FILE");
		return -1;
	}
	if (o->offset % 4096) {
		fprintf(stderr, "lcloudctl torture run: --offset %" PRIu64 " is not a multiple of 4096\n", o->offset);
		return -1;
	}
	if (o->pages > (UINT64_MAX - o->offset) / o->page_size) {
		fprintf(stderr, "lcloudctl torture run: %" PRIu64 " pages of %" PRIu64 " bytes do not fit\n", o->pages,
			o->page_size);
		return -1;
	}
	if (!o->have_writes && !o->have_duration) {
		o->writes = o->pages * 4;
		o->have_writes = true;
	}
	if (o->depth > o->pages)
		o->depth = (uint32_t)o->pages;
	o->target = argv[optind];
	return 0;
}

/*
 * A missing file target is created (*CREATED); a device must be large enough. An existing file is not
 * touched before the write guard has looked at it (it may be another program's): extend_target() grows it.
 */
static int prepare_target(const struct run_opts *o, bool *created)
{
	uint64_t end = o->offset + o->pages * o->page_size;
	struct stat st;
	int fd, sr = stat(o->target, &st);

	if (sr < 0 && errno != ENOENT) {
		fprintf(stderr, "lcloudctl torture run: %s: %s\n", tty_str(o->target), strerror(errno));
		return exit_code_for_error(-errno);
	}
	if (sr < 0) {
		/* O_EXCL: a name that appeared meanwhile is left to the guard, not made here */
		fd = open(o->target, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST) {
			fprintf(stderr, "lcloudctl torture run: cannot create %s: %s\n", tty_str(o->target), strerror(errno));
			return exit_code_for_error(-errno);
		}
		*created = fd >= 0;
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (S_ISREG(st.st_mode))
		return 0;
	if (S_ISBLK(st.st_mode)) {
		uint64_t size = 0;

		fd = open(o->target, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || ioctl(fd, BLKGETSIZE64, &size) < 0) {
			fprintf(stderr, "lcloudctl torture run: %s: %s\n", tty_str(o->target), strerror(errno));
			if (fd >= 0)
				close(fd);
			return exit_code_for_error(-errno);
		}
		close(fd);
		if (size < end) {
			fprintf(stderr, "lcloudctl torture run: %s has %" PRIu64 " bytes; %" PRIu64 " pages of %" PRIu64
				" from offset %" PRIu64 " need %" PRIu64 "\n", tty_str(o->target), size, o->pages, o->page_size,
				o->offset, end);
			return EXIT_USAGE;
		}
		return 0;
	}
	fprintf(stderr, "lcloudctl torture run: %s is neither a regular file nor a block device%s\n", tty_str(o->target),
		S_ISCHR(st.st_mode) ? " (for passthrough, give the namespace's block device: the queue reaches its "
				      "generic node, and the block device is what a flush goes to)" : "");
	return EXIT_WRONG_KIND;
}

/*
 * The buffered path's descriptor: the queue's own open file without O_DIRECT. A duplicate, not a new open:
 * a new open of the file would break the write lease the queue holds on it (it would be a new user), and
 * no name is looked up again. O_DIRECT is a flag of the open file both share, so the queue's own I/O would
 * be buffered too; this path submits none (the queue only guards, watches and holds the claims).
 */
static int buffered_descriptor(const struct lcloud_queue *q)
{
	int fd = fcntl(lcloud_queue_get_fd(q), F_DUPFD_CLOEXEC, 3), fl;

	if (fd < 0)
		return -errno;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_DIRECT) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* A file target grows to hold the pages, through the guarded descriptor once the guard let it be written. */
static int extend_target(const struct run_state *s)
{
	const struct run_opts *o = s->o;
	uint64_t end = o->offset + o->pages * o->page_size;
	struct stat st;

	if (fstat(s->flush_fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size >= end)
		return 0;
	if (ftruncate(s->flush_fd, (off_t)end) < 0) {
		fprintf(stderr, "lcloudctl torture run: cannot extend %s to %" PRIu64 " bytes: %s\n", tty_str(o->target), end,
			strerror(errno));
		return EXIT_FAILURE_GENERIC;
	}
	return 0;
}

static int open_queue(struct lcloud_ctx *ctx, struct run_state *s)
{
	const struct run_opts *o = s->o;
	uint32_t flags = LCLOUD_QUEUE_WRITE | (o->force ? LCLOUD_QUEUE_FORCE : 0);
	enum lcloud_backend backend;
	int r;

	switch (o->path) {
	case LCLOUD_PATH_PASSTHROUGH:
		backend = LCLOUD_BACKEND_PASSTHROUGH;
		break;
	case LCLOUD_PATH_BUFFERED:
		/* the queue only guards the device here; the writes go through the page cache */
		backend = LCLOUD_BACKEND_SYNC;
		break;
	default:
		backend = LCLOUD_BACKEND_IO_URING;
		break;
	}
	r = lcloud_queue_open(ctx, o->target, o->depth, backend, flags, &s->q);
	if (r < 0 && backend == LCLOUD_BACKEND_IO_URING && (r == -EPERM || r == -ENOSYS || r == -EACCES) &&
	    !strstr(lcloud_ctx_get_error(ctx), "mounted")) {
		/* io_uring switched off on this system: the synchronous backend takes the same path */
		r = lcloud_queue_open(ctx, o->target, o->depth, LCLOUD_BACKEND_SYNC, flags, &s->q);
	}
	if (r < 0) {
		const char *why = lcloud_ctx_get_error(ctx);

		fprintf(stderr, "lcloudctl torture run: %s: %s\n", tty_str(o->target), why[0] ? tty_str(why) : strerror(-r));
		hint_needs_root("lcloudctl torture run", o->target, r, true);
		return r == -EBUSY ? EXIT_REFUSED : exit_code_for_error(r);
	}
	/*
	 * Never the target's name again: a symlink or node swapped since the guard
	 * looked would be written or flushed instead. The buffered path writes a
	 * duplicate of the guarded descriptor, and the queue stays open to keep its
	 * exclusive claims and its watch while the page cache writes.
	 */
	if (o->path == LCLOUD_PATH_BUFFERED) {
		s->data_fd = buffered_descriptor(s->q);
		if (s->data_fd < 0) {
			fprintf(stderr, "lcloudctl torture run: %s: %s\n", tty_str(o->target), strerror(-s->data_fd));
			return exit_code_for_error(s->data_fd);
		}
	}
	s->flush_fd = fcntl(lcloud_queue_get_fd(s->q), F_DUPFD_CLOEXEC, 3);
	if (s->flush_fd < 0) {
		fprintf(stderr, "lcloudctl torture run: %s: %s\n", tty_str(o->target), strerror(errno));
		return exit_code_for_error(-errno);
	}
	r = extend_target(s);
	if (r)
		return r;
	if (o->path == LCLOUD_PATH_RWF_ATOMIC || o->path == LCLOUD_PATH_PASSTHROUGH)
		s->hint.flags = LCLOUD_IO_ATOMIC;
	return 0;
}

/*
 * The atomic paths: every page must be a write the verdict calls untorn, or
 * the run is refused before anything is written (the queue would refuse
 * each write anyway, after the target and the record exist).
 */
/* What to try instead when the atomic path cannot take these pages: the plain paths still exercise the device. */
static const char *hint_plain(const struct run_opts *o)
{
	return o->path == LCLOUD_PATH_RWF_ATOMIC || o->path == LCLOUD_PATH_PASSTHROUGH
		       ? "; to see what the device does with plain page writes (torn pages expected where nothing is "
			 "promised), pass --path plain_direct"
		       : "";
}

static int check_atomic(const struct run_state *s)
{
	const struct run_opts *o = s->o;
	const struct lcloud_verdict *v;
	char why[400];

	v = lcloud_probe_get_verdict(lcloud_queue_get_probe(s->q), o->path);
	if (!(s->hint.flags & LCLOUD_IO_ATOMIC)) {
		char size[32];

		/* the plain paths run anyway (that is the experiment), but nobody should read the result as a test */
		format_size(o->page_size, size, sizeof(size));
		if (!v || lcloud_verdict_check_size(v, o->page_size) != LCLOUD_ANSWER_UNTORN)
			fprintf(stderr, "lcloudctl torture run: warning: %s pages on the %s path of %s are not promised "
				"untorn (%s): torn pages after a power cut are what the device may do, not a fault\n",
				size, lcloud_io_path_to_string(o->path), tty_str(o->target),
				v && lcloud_verdict_get_reason_count(v) ? tty_str(lcloud_verdict_get_reason(v, 0))
									  : "no verdict");
		return 0;
	}
	if (!v || !lcloud_verdict_get_max_untorn_bytes(v)) {
		fprintf(stderr, "lcloudctl torture run: %s: no atomic writes on the %s path: %s%s\n", tty_str(o->target),
			lcloud_io_path_to_string(o->path),
			v && lcloud_verdict_get_reason_count(v) ? tty_str(lcloud_verdict_get_reason(v, 0)) : "no verdict",
			hint_plain(o));
		return EXIT_REFUSED;
	}
	for (uint64_t p = 0; p < o->pages; p++)
		if (lcloud_verdict_allows(v, o->offset + p * o->page_size, o->page_size, why, sizeof(why)) != 1) {
			fprintf(stderr, "lcloudctl torture run: %s: page %" PRIu64 " (offset %" PRIu64 ") would not be an "
				"untorn write on the %s path: %s%s\n", tty_str(o->target), p, o->offset + p * o->page_size,
				lcloud_io_path_to_string(o->path), tty_str(why), hint_plain(o));
			return EXIT_REFUSED;
		}
	return 0;
}

static int append_records(struct run_state *s, const struct torture_record *recs, uint32_t n)
{
	uint8_t *buf = malloc((size_t)n * TORTURE_RECORD_SIZE);
	size_t len = (size_t)n * TORTURE_RECORD_SIZE, done = 0;

	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		torture_record_encode(buf + (size_t)i * TORTURE_RECORD_SIZE, &recs[i]);
	while (done < len) {
		ssize_t w = write(s->record_fd, buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			int r = -errno;

			free(buf);
			return r;
		}
		done += (size_t)w;
	}
	free(buf);
	/* the record may claim a write only once both the write and the claim are durable */
	return fdatasync(s->record_fd) < 0 ? -errno : 0;
}

static struct torture_record record_of(const struct run_state *s, uint8_t kind)
{
	return (struct torture_record){ .kind = kind, .path = (uint16_t)s->o->path, .seed = (uint32_t)s->o->seed,
					.run_id = s->run_id, .page_size = s->o->page_size, .pages = s->o->pages,
					.offset = s->o->offset };
}

/*
 * The queue stopped: its storage gained a user while the run wrote (a loop device, a mount, another
 * program's open). The batch was not written and the record ends with the last acknowledged one.
 */
static int storage_gone(const struct run_state *s)
{
	fprintf(stderr, "lcloudctl torture run: %s; the record holds every write acknowledged before\n",
		tty_str(lcloud_queue_get_error(s->q)));
	return EXIT_REFUSED;
}

/* Writes the batch's N pages (batch_pages[i] from bufs[i]) and waits until all of them completed. */
static int write_batch(struct run_state *s, uint32_t n)
{
	const struct run_opts *o = s->o;
	struct lcloud_completion done[64];
	uint32_t reaped = 0;
	int r;

	if (o->path == LCLOUD_PATH_BUFFERED) {
		/* these writes bypass the queue: its watch is asked before each batch, as a submission would */
		r = lcloud_queue_check_storage(s->q);
		if (r < 0)
			return storage_gone(s);
		for (uint32_t i = 0; i < n; i++) {
			ssize_t w = pwrite(s->data_fd, s->bufs[i], o->page_size,
					   (off_t)(o->offset + s->batch_pages[i] * o->page_size));

			if (w != (ssize_t)o->page_size) {
				fprintf(stderr, "lcloudctl torture run: write of page %" PRIu64 " failed: %s\n",
					s->batch_pages[i], w < 0 ? strerror(errno) : "short write");
				return EXIT_FAILURE_GENERIC;
			}
		}
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		r = lcloud_queue_prep_write(s->q, s->bufs[i], o->page_size, o->offset + s->batch_pages[i] * o->page_size,
					    &s->hint, i);
		if (r == -EBUSY)
			return storage_gone(s);
		if (r < 0) {
			fprintf(stderr, "lcloudctl torture run: page %" PRIu64 ": %s\n", s->batch_pages[i],
				lcloud_queue_get_error(s->q)[0] ? tty_str(lcloud_queue_get_error(s->q)) : strerror(-r));
			return r == -EINVAL || r == -EOPNOTSUPP ? EXIT_REFUSED : EXIT_FAILURE_GENERIC;
		}
	}
	r = lcloud_queue_submit(s->q);
	if (r == -EBUSY)
		return storage_gone(s);
	if (r < 0) {
		fprintf(stderr, "lcloudctl torture run: submit failed: %s\n", tty_str(lcloud_queue_get_error(s->q)));
		return EXIT_FAILURE_GENERIC;
	}
	while (reaped < n) {
		uint32_t want = n - reaped > 64 ? 64 : n - reaped;

		r = lcloud_queue_reap(s->q, done, want, 1);
		if (r < 0) {
			fprintf(stderr, "lcloudctl torture run: reap failed: %s\n", tty_str(lcloud_queue_get_error(s->q)));
			return EXIT_FAILURE_GENERIC;
		}
		for (int i = 0; i < r; i++) {
			uint64_t page = s->batch_pages[done[i].user_data];

			if (done[i].nvme_status) {
				fprintf(stderr, "lcloudctl torture run: write of page %" PRIu64 " failed: %s (NVMe status "
					"0x%x)\n", page, lcloud_nvme_status_to_string(done[i].nvme_status),
					done[i].nvme_status);
				return EXIT_FAILURE_GENERIC;
			}
			if (done[i].result != (int32_t)o->page_size) {
				bool refused = (s->hint.flags & LCLOUD_IO_ATOMIC) &&
					       (done[i].result == -EINVAL || done[i].result == -EOPNOTSUPP);

				fprintf(stderr, "lcloudctl torture run: write of page %" PRIu64 " failed: %s%s\n", page,
					done[i].result < 0 ? strerror(-done[i].result) : "short write",
					refused ? " (the kernel refused the atomic write)" : "");
				return refused ? EXIT_REFUSED : EXIT_FAILURE_GENERIC;
			}
		}
		reaped += (uint32_t)r;
	}
	return 0;
}

static int flush_target(struct run_state *s)
{
	if (fdatasync(s->flush_fd) < 0) {
		fprintf(stderr, "lcloudctl torture run: flushing %s failed: %s\n", tty_str(s->o->target), strerror(errno));
		return EXIT_FAILURE_GENERIC;
	}
	return 0;
}

static int fill(struct run_state *s)
{
	const struct run_opts *o = s->o;
	struct torture_record rec = record_of(s, TORTURE_RECORD_FILLED);
	int rc, r;

	for (uint64_t p = 0; p < o->pages; p += o->depth) {
		uint32_t n = (uint32_t)(o->pages - p < o->depth ? o->pages - p : o->depth);

		for (uint32_t i = 0; i < n; i++) {
			s->batch_pages[i] = p + i;
			torture_page_fill(s->bufs[i], (uint32_t)o->page_size, s->run_id, p + i, 0);
		}
		rc = write_batch(s, n);
		if (rc)
			return rc;
	}
	rc = flush_target(s);
	if (rc)
		return rc;
	r = append_records(s, &rec, 1);
	if (r < 0) {
		fprintf(stderr, "lcloudctl torture run: writing the record %s failed: %s\n", tty_str(o->record), strerror(-r));
		return EXIT_FAILURE_GENERIC;
	}
	return 0;
}

static void progress(const struct run_state *s, double start, bool tty)
{
	double t = now_seconds() - start;

	fprintf(stderr, "%storture: %" PRIu64 " writes, %.0f/s, %.0f s%s", tty ? "\r" : "", s->writes,
		t > 0 ? s->writes / t : 0.0, t, tty ? "   " : "\n");
	fflush(stderr);
}

static int torture_loop(struct run_state *s, const char **ret_stop)
{
	const struct run_opts *o = s->o;
	struct torture_record *recs = calloc(o->depth, sizeof(*recs));
	bool tty = isatty(STDERR_FILENO), show = tty || o->progress;
	double start = now_seconds(), last = start;
	int rc = 0, r;

	if (!recs)
		return EXIT_FAILURE_GENERIC;
	*ret_stop = "writes";
	for (;;) {
		uint32_t n = o->depth;

		if (stop_requested) {
			*ret_stop = "signal";
			break;
		}
		if (o->have_writes && s->writes >= o->writes)
			break;
		if (o->have_duration && now_seconds() - start >= (double)o->duration) {
			*ret_stop = "duration";
			break;
		}
		if (o->have_writes && o->writes - s->writes < n)
			n = (uint32_t)(o->writes - s->writes);
		/* distinct pages per batch: two writes of one page in flight would race */
		for (uint32_t i = 0; i < n; i++) {
			uint64_t p;

			do
				p = rng_next(&s->rng) % o->pages;
			while (s->in_batch[p]);
			s->in_batch[p] = 1;
			s->batch_pages[i] = p;
			recs[i] = record_of(s, TORTURE_RECORD_ACK);
			recs[i].page = p;
			recs[i].generation = ++s->generation;
			torture_page_fill(s->bufs[i], (uint32_t)o->page_size, s->run_id, p, s->generation);
		}
		for (uint32_t i = 0; i < n; i++)
			s->in_batch[s->batch_pages[i]] = 0;
		rc = write_batch(s, n);
		if (!rc)
			rc = flush_target(s);
		if (rc)
			break;
		r = append_records(s, recs, n);
		if (r < 0) {
			fprintf(stderr, "lcloudctl torture run: writing the record %s failed: %s\n", tty_str(o->record), strerror(-r));
			rc = EXIT_FAILURE_GENERIC;
			break;
		}
		s->writes += n;
		if (show && now_seconds() - last >= 1.0) {
			progress(s, start, tty);
			last = now_seconds();
		}
	}
	if (show && tty)
		fputc('\n', stderr);
	free(recs);
	return rc;
}

static void print_summary(const struct run_state *s, const char *stop, double seconds)
{
	const struct run_opts *o = s->o;
	const char *backend = o->path == LCLOUD_PATH_BUFFERED || !s->q ? "page cache"
										: lcloud_backend_to_string(lcloud_queue_get_backend(s->q));
	char size[32];

	if (o->format == OUTPUT_JSON) {
		json_object *j = json_object_new_object();
		char id[32];

		snprintf(id, sizeof(id), "0x%016" PRIx64, s->run_id);
		json_object_object_add(j, "schema", json_object_new_int(1));
		json_object_object_add(j, "command", json_object_new_string("torture run"));
		json_object_object_add(j, "target", json_object_new_string(o->target));
		json_object_object_add(j, "run_id", json_object_new_string(id));
		json_object_object_add(j, "path", json_object_new_string(lcloud_io_path_to_string(o->path)));
		json_object_object_add(j, "backend", json_object_new_string(backend));
		json_object_object_add(j, "page_size", json_object_new_int64((int64_t)o->page_size));
		json_object_object_add(j, "pages", json_object_new_int64((int64_t)o->pages));
		json_object_object_add(j, "offset", json_object_new_int64((int64_t)o->offset));
		json_object_object_add(j, "depth", json_object_new_int64(o->depth));
		json_object_object_add(j, "writes", json_object_new_int64((int64_t)s->writes));
		json_object_object_add(j, "last_generation", json_object_new_int64((int64_t)s->generation));
		json_object_object_add(j, "seconds", json_object_new_double(seconds));
		json_object_object_add(j, "stopped_by", json_object_new_string(stop));
		json_object_object_add(j, "record", json_object_new_string(o->record));
		print_json(stdout, j);
		json_object_put(j);
		return;
	}
	printf("torture run: %" PRIu64 " writes of %s pages (%" PRIu64 " pages from offset %" PRIu64 ") to %s via %s "
	       "(%s), depth %u, in %.1f s, stopped by %s\n", s->writes, format_size(o->page_size, size, sizeof(size)),
	       o->pages, o->offset, tty_str(o->target), lcloud_io_path_to_string(o->path), backend, o->depth, seconds, stop);
	printf("run id 0x%016" PRIx64 ", last generation %" PRIu64 ", record %s\n", s->run_id, s->generation,
	       tty_str(o->record));
}

void cmd_torture_run_usage(FILE *out)
{
	fputs("Usage: lcloudctl torture run TARGET --pages N --record FILE [options]\n"
	      "\n"
	      "Writes self-describing pages (every 512-byte block stamped with the run,\n"
	      "page, generation and CRC32C) in random order through one I/O path, and\n"
	      "appends each write the target acknowledged and flushed to the record FILE.\n"
	      "Cut the power (stop the VM hard) while it runs; then 'lcloudctl torture\n"
	      "verify' reads every page. A file TARGET is created or extended to hold the\n"
	      "pages; a file or device in use (mounted, swap, held, open in another\n"
	      "program) is refused, and one that carries data (a file system or partition\n"
	      "table) unless --force. A run stops when its target gains a user (another\n"
	      "program opens the file, a loop device or mount appears over it).\n"
	      "\n"
	      "Options:\n"
	      "      --page-size N     page size, 4K to 1M, a power of two (default 16K)\n"
	      "      --pages N         number of pages (required)\n"
	      "      --offset N        where page 0 starts in TARGET (default 0)\n"
	      "      --path PATH       rwf_atomic (default), plain_direct, passthrough or buffered\n"
	      "      --depth N         writes in flight per batch (default 8)\n"
	      "      --writes N        stop after N writes (default 4 x pages)\n"
	      "      --duration S      stop after S seconds\n"
	      "      --record FILE     the record of acknowledged writes (created; must not exist)\n"
	      "      --seed N          reproducible run id and page order\n"
	      "      --progress        progress once a second on stderr (default: only on a terminal)\n"
	      "  -f, --force           write to a device that carries a signature (never one\n"
	      "                        that is mounted, swap or held)\n"
	      "      --format FORMAT   normal (default) or json\n"
	      "  -J, --json           the same as --format json\n"
	      "  -h, --help            show this help\n",
	      out);
}

int cmd_torture_run(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	struct run_opts o;
	struct run_state s = { .o = &o, .data_fd = -1, .flush_fd = -1, .record_fd = -1 };
	struct torture_record start_rec, end_rec;
	struct sigaction sa = { .sa_handler = on_signal };
	const char *stop = "error";
	bool created = false;
	double t0;
	int rc, r;

	rc = parse_run_opts(argc, argv, g, &o);
	if (rc)
		return rc > 0 ? EXIT_OK : EXIT_USAGE;
	if (o.have_seed) {
		uint64_t x = o.seed ^ 0x6c636c6f7564ull;

		s.run_id = rng_next(&x) | 1;
	} else if (getrandom(&s.run_id, sizeof(s.run_id), 0) != sizeof(s.run_id)) {
		fprintf(stderr, "lcloudctl torture run: no random run id: %s\n", strerror(errno));
		return EXIT_FAILURE_GENERIC;
	}
	s.rng = s.run_id ? s.run_id : 1;
	if (access(o.record, F_OK) == 0) {
		fprintf(stderr, "lcloudctl torture run: the record %s exists (a record belongs to one run: remove it or "
			"name another)\n", tty_str(o.record));
		return EXIT_USAGE;
	}
	rc = prepare_target(&o, &created);
	if (rc)
		return rc;
	rc = open_queue(ctx, &s);
	if (!rc)
		rc = check_atomic(&s);
	if (rc) {
		if (created)
			unlink(o.target); /* refused: leave nothing behind */
		goto out;
	}
	/*
	 * Not a temporary renamed into place (output_file.c): the record must be
	 * at its name while the run goes, for verify after a crash. O_EXCL never
	 * opens an existing name, a symlink included; O_NOFOLLOW says so twice.
	 */
	s.record_fd = open(o.record, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0644);
	if (s.record_fd < 0) {
		fprintf(stderr, "lcloudctl torture run: cannot create the record %s: %s%s\n", tty_str(o.record), strerror(errno),
			errno == EEXIST ? " (a record belongs to one run: remove it or name another)" : "");
		rc = errno == EEXIST ? EXIT_USAGE : exit_code_for_error(-errno);
		goto out;
	}
	s.bufs = calloc(o.depth, sizeof(*s.bufs));
	s.batch_pages = calloc(o.depth, sizeof(*s.batch_pages));
	s.in_batch = calloc(o.pages, 1);
	if (!s.bufs || !s.batch_pages || !s.in_batch) {
		rc = EXIT_FAILURE_GENERIC;
		goto out;
	}
	for (uint32_t i = 0; i < o.depth; i++)
		if (posix_memalign(&s.bufs[i], 4096, o.page_size)) {
			rc = EXIT_FAILURE_GENERIC;
			goto out;
		}
	start_rec = record_of(&s, TORTURE_RECORD_START);
	r = append_records(&s, &start_rec, 1);
	if (r < 0) {
		fprintf(stderr, "lcloudctl torture run: writing the record %s failed: %s\n", tty_str(o.record), strerror(-r));
		rc = EXIT_FAILURE_GENERIC;
		goto out;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	t0 = now_seconds();
	rc = fill(&s);
	if (!rc)
		rc = torture_loop(&s, &stop);
	if (!rc) {
		end_rec = record_of(&s, TORTURE_RECORD_END);
		end_rec.generation = s.generation;
		r = append_records(&s, &end_rec, 1);
		if (r < 0) {
			fprintf(stderr, "lcloudctl torture run: writing the record %s failed: %s\n", tty_str(o.record),
				strerror(-r));
			rc = EXIT_FAILURE_GENERIC;
		}
	}
	if (!rc)
		print_summary(&s, stop, now_seconds() - t0);
out:
	if (s.bufs)
		for (uint32_t i = 0; i < o.depth; i++)
			free(s.bufs[i]);
	free(s.bufs);
	free(s.batch_pages);
	free(s.in_batch);
	lcloud_queue_free(s.q);
	if (s.data_fd >= 0)
		close(s.data_fd);
	if (s.flush_fd >= 0)
		close(s.flush_fd);
	if (s.record_fd >= 0)
		close(s.record_fd);
	return rc;
}
