/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A storage engine's page flush, done the three ways a database can make a
 * page write survive a torn write:
 *   doublewrite   write the batch to a doublewrite area, fdatasync, write the
 *                 pages in place, fdatasync (InnoDB's protocol);
 *   rwf_atomic    write the pages in place with RWF_ATOMIC through the liblcloud
 *                 queue (LCLOUD_IO_ATOMIC), fdatasync;
 *   plain_direct  aligned O_DIRECT writes in place, fdatasync (what a device
 *                 or provider promise allows).
 * Each flush writes BATCH dirty pages at random page-aligned offsets (fixed
 * seed, the same for every method) with up to QD writes in flight through the
 * liblcloud queue (io_uring backend), then makes them durable.
 *
 *   page_flush METHOD TARGET PAGE_SIZE QD PAGES [options]
 *     --batch N        pages per flush (default 64)
 *     --span BYTES     data area: pages land in [0, SPAN) (default 256 MiB)
 *     --dw-file PATH   doublewrite area in this file (default TARGET.dblwr for
 *                      a file; the same device past SPAN for a block device)
 *     --stat PATH      block device stat file whose write, sector and flush
 *                      counts are read before and after (default: the device TARGET is on,
 *                      /sys/dev/block/MAJ:MIN/stat)
 *     --force          allow writing to a block device (destroys its data)
 *
 * TARGET is a file (at least SPAN bytes, written once so that the flush
 * overwrites allocated blocks) or a block device (/dev/nvme0n1). Prints:
 *   method page_size qd pages seconds pages_per_s device_bytes bytes_per_page
 *   device_writes_per_page device_flushes_per_1000_pages
 * (a cache flush sent as an empty write with PREFLUSH is counted by the block
 * layer as a write, not a flush: then the flushes show in the writes).
 * Exit 3 when the rwf_atomic path is refused (the line then says why and what
 * the kernel itself answers to one RWF_ATOMIC write of PAGE_SIZE).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <lcloud/lcloud.h>

#ifndef RWF_ATOMIC
#define RWF_ATOMIC 0x00000040
#endif

enum method { DOUBLEWRITE, RWF_ATOMIC_PATH, PLAIN_DIRECT };

struct flush {
	enum method method;
	const char *target;
	uint64_t page, span, dw_offset;
	unsigned int qd, batch;
	uint64_t pages;
	struct lcloud_queue *data, *dw; /* dw: the doublewrite area's queue (may be data) */
	int data_sync_fd, dw_sync_fd;
	uint8_t *buf; /* BATCH dirty pages */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t next_page(uint64_t *seed, uint64_t npages)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	return (*seed >> 33) % npages;
}

/* What the device was asked to do, from the block layer's stat file (Documentation/block/stat.rst). */
struct device_counts {
	uint64_t writes;  /* field 5: write requests completed */
	uint64_t sectors; /* field 7: sectors written */
	uint64_t flushes; /* field 15: flush requests completed (Linux 5.5+) */
};

static int device_counts(const char *stat_path, struct device_counts *ret)
{
	unsigned long long f[17] = { 0 };
	FILE *in = fopen(stat_path, "re");
	int n = 0;

	if (!in)
		return -errno;
	while (n < 17 && fscanf(in, "%llu", &f[n]) == 1)
		n++;
	fclose(in);
	if (n < 7)
		return -EINVAL;
	ret->writes = f[4];
	ret->sectors = f[6];
	ret->flushes = f[14];
	return 0;
}

/* Queues LEN-byte writes from BUF at the offsets OFFS[0..N) with up to QD in flight; waits for all. */
static int write_all(struct lcloud_queue *q, unsigned int qd, const uint8_t *buf, uint64_t len,
		     const uint64_t *offs, unsigned int n, const struct lcloud_hint *hint)
{
	struct lcloud_completion c[256];
	unsigned int queued = 0, done = 0;
	int r;

	while (done < n) {
		while (queued - done < qd && queued < n) {
			r = lcloud_queue_prep_write(q, buf + (uint64_t)queued * len, len, offs[queued], hint, queued);
			if (r < 0)
				return r;
			queued++;
		}
		r = lcloud_queue_submit_and_reap(q, c, qd, 1);
		if (r < 0)
			return r;
		for (int i = 0; i < r; i++)
			if (c[i].result != (int32_t)len) {
				fprintf(stderr, "page_flush: write failed: %s\n",
					c[i].result < 0 ? strerror(-c[i].result) : "short write");
				return c[i].result < 0 ? c[i].result : -EIO;
			}
		done += (unsigned int)r;
	}
	return 0;
}

static int flush_once(struct flush *fl, uint64_t *seed, unsigned int n)
{
	const struct lcloud_hint atomic = { .flags = LCLOUD_IO_ATOMIC };
	uint64_t offs[1024], dw_offs[1024];
	unsigned int dw_n = 0;
	int r;

	for (unsigned int i = 0; i < n; i++)
		offs[i] = next_page(seed, fl->span / fl->page) * fl->page;
	if (fl->method == DOUBLEWRITE) {
		/* the batch goes to the doublewrite area in sequential writes of up to 1 MiB */
		uint64_t chunk = fl->page;

		while (chunk < (1u << 20) && ((uint64_t)n * fl->page) % (chunk * 2) == 0)
			chunk *= 2;
		for (uint64_t off = 0; off < (uint64_t)n * fl->page; off += chunk)
			dw_offs[dw_n++] = fl->dw_offset + off;
		r = write_all(fl->dw, fl->qd, fl->buf, chunk, dw_offs, dw_n, NULL);
		if (r < 0)
			return r;
		if (fdatasync(fl->dw_sync_fd) < 0)
			return -errno;
	}
	r = write_all(fl->data, fl->qd, fl->buf, fl->page, offs, n,
		      fl->method == RWF_ATOMIC_PATH ? &atomic : NULL);
	if (r < 0)
		return r;
	return fdatasync(fl->data_sync_fd) < 0 ? -errno : 0;
}

/* What the kernel itself says to one RWF_ATOMIC write of PAGE bytes at offset 0. */
static const char *kernel_atomic_answer(const char *target, uint64_t page, const uint8_t *buf, char *out, size_t size)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = page };
	int fd = open(target, O_RDWR | O_DIRECT | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		snprintf(out, size, "open: %s", strerror(errno));
		return out;
	}
	n = pwritev2(fd, &iov, 1, 0, RWF_ATOMIC);
	if (n < 0)
		snprintf(out, size, "pwritev2(RWF_ATOMIC, %llu) = %s", (unsigned long long)page, strerrorname_np(errno));
	else
		snprintf(out, size, "pwritev2(RWF_ATOMIC, %llu) = %zd (accepted)", (unsigned long long)page, n);
	close(fd);
	return out;
}

static int open_queue(struct lcloud_ctx *ctx, const char *path, unsigned int qd, uint32_t flags,
		      struct lcloud_queue **ret)
{
	int r = lcloud_queue_open(ctx, path, qd, LCLOUD_BACKEND_IO_URING, LCLOUD_QUEUE_WRITE | flags, ret);

	if (r < 0)
		fprintf(stderr, "page_flush: cannot open %s: %s\n", path, lcloud_ctx_get_error(ctx));
	return r;
}

static void usage(FILE *out)
{
	fputs("usage: page_flush doublewrite|rwf_atomic|plain_direct TARGET PAGE_SIZE QD PAGES\n"
	      "       [--batch N] [--span BYTES] [--dw-file PATH] [--stat PATH] [--force]\n",
	      out);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "batch", required_argument, NULL, 'b' }, { "span", required_argument, NULL, 's' },
		{ "dw-file", required_argument, NULL, 'd' }, { "stat", required_argument, NULL, 't' },
		{ "force", no_argument, NULL, 'f' },        { NULL, 0, NULL, 0 },
	};
	struct flush fl = { .batch = 64, .span = 256ull << 20, .data_sync_fd = -1, .dw_sync_fd = -1 };
	const char *dw_file = NULL, *stat_path = NULL;
	char stat_buf[128], dw_buf[4200];
	struct lcloud_ctx *ctx = NULL;
	uint64_t seed = 42, flushed = 0;
	struct device_counts c0, c1;
	uint32_t qflags = 0;
	bool is_bdev;
	struct stat st;
	double t0, t1;
	int c, r;

	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (c) {
		case 'b': fl.batch = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 's': fl.span = strtoull(optarg, NULL, 0); break;
		case 'd': dw_file = optarg; break;
		case 't': stat_path = optarg; break;
		case 'f': qflags |= LCLOUD_QUEUE_FORCE; break;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind != 5) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[optind], "doublewrite") == 0)
		fl.method = DOUBLEWRITE;
	else if (strcmp(argv[optind], "rwf_atomic") == 0)
		fl.method = RWF_ATOMIC_PATH;
	else if (strcmp(argv[optind], "plain_direct") == 0)
		fl.method = PLAIN_DIRECT;
	else {
		usage(stderr);
		return 2;
	}
	fl.target = argv[optind + 1];
	fl.page = strtoull(argv[optind + 2], NULL, 0);
	fl.qd = (unsigned int)strtoul(argv[optind + 3], NULL, 0);
	fl.pages = strtoull(argv[optind + 4], NULL, 0);
	if (!fl.page || (fl.page & (fl.page - 1)) || !fl.qd || fl.qd > 256 || !fl.pages || !fl.batch ||
	    fl.batch > 1024 || fl.span < fl.page * fl.batch) {
		fprintf(stderr, "page_flush: PAGE_SIZE a power of two, 1 <= QD <= 256, 1 <= batch <= 1024, "
				"span >= page * batch\n");
		return 2;
	}
	if (stat(fl.target, &st) < 0) {
		fprintf(stderr, "page_flush: %s: %s\n", fl.target, strerror(errno));
		return 1;
	}
	is_bdev = S_ISBLK(st.st_mode);
	if (is_bdev && !(qflags & LCLOUD_QUEUE_FORCE)) {
		fprintf(stderr, "page_flush: %s is a block device: its data is overwritten; pass --force\n", fl.target);
		return 2;
	}
	if (!stat_path) {
		dev_t dev = is_bdev ? st.st_rdev : st.st_dev;

		snprintf(stat_buf, sizeof(stat_buf), "/sys/dev/block/%u:%u/stat", major(dev), minor(dev));
		stat_path = stat_buf;
	}
	if (posix_memalign((void **)&fl.buf, 4096, fl.page * fl.batch))
		return 1;
	memset(fl.buf, 0xa5, fl.page * fl.batch);
	if (lcloud_ctx_new(&ctx) < 0)
		return 1;
	if (open_queue(ctx, fl.target, fl.qd, qflags, &fl.data) < 0)
		return 1;
	fl.data_sync_fd = open(fl.target, O_RDWR | O_CLOEXEC);
	if (fl.data_sync_fd < 0)
		return 1;
	fl.dw = fl.data;
	fl.dw_sync_fd = fl.data_sync_fd;
	if (fl.method == DOUBLEWRITE) {
		if (!dw_file && !is_bdev) {
			snprintf(dw_buf, sizeof(dw_buf), "%s.dblwr", fl.target);
			dw_file = dw_buf;
		}
		if (dw_file) {
			/* a preallocated, written file, like InnoDB's #ib_*.dblwr */
			int fd = open(dw_file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

			if (fd < 0 || fstat(fd, &st) < 0)
				return 1;
			if ((uint64_t)st.st_size < fl.page * fl.batch) {
				void *zero = calloc(1, fl.page * fl.batch);

				if (!zero || pwrite(fd, zero, fl.page * fl.batch, 0) != (ssize_t)(fl.page * fl.batch) ||
				    fsync(fd) < 0)
					return 1;
				free(zero);
			}
			close(fd);
			if (open_queue(ctx, dw_file, fl.qd, qflags, &fl.dw) < 0)
				return 1;
			fl.dw_sync_fd = open(dw_file, O_RDWR | O_CLOEXEC);
			if (fl.dw_sync_fd < 0)
				return 1;
		} else {
			fl.dw_offset = fl.span; /* the same device, past the data area */
		}
	}
	if (fl.method == RWF_ATOMIC_PATH) {
		const struct lcloud_verdict *v =
			lcloud_probe_get_verdict(lcloud_queue_get_probe(fl.data), LCLOUD_PATH_RWF_ATOMIC);
		const struct lcloud_hint atomic = { .flags = LCLOUD_IO_ATOMIC };
		char answer[160];

		/* ask before timing: a refusal is a result, not a failure */
		r = lcloud_queue_prep_write(fl.data, fl.buf, fl.page, 0, &atomic, 0);
		if (r < 0) {
			printf("rwf_atomic %llu %u refused: liblcloud: %s (rwf_atomic verdict: %s); kernel: %s\n",
			       (unsigned long long)fl.page, fl.qd, lcloud_queue_get_error(fl.data),
			       v ? lcloud_answer_to_string(lcloud_verdict_check_size(v, fl.page)) : "none",
			       kernel_atomic_answer(fl.target, fl.page, fl.buf, answer, sizeof(answer)));
			return 3;
		}
		{
			struct lcloud_completion comp;

			r = lcloud_queue_submit_and_reap(fl.data, &comp, 1, 1);
			if (r < 0 || comp.result != (int32_t)fl.page) {
				printf("rwf_atomic %llu %u refused: the kernel failed the write: %s\n",
				       (unsigned long long)fl.page, fl.qd,
				       r < 0 ? strerror(-r) : strerror(-comp.result));
				return 3;
			}
		}
		if (fdatasync(fl.data_sync_fd) < 0)
			return 1;
	}

	r = device_counts(stat_path, &c0);
	if (r < 0) {
		fprintf(stderr, "page_flush: %s: %s\n", stat_path, strerror(-r));
		return 1;
	}
	t0 = now();
	while (flushed < fl.pages) {
		unsigned int n = fl.pages - flushed < fl.batch ? (unsigned int)(fl.pages - flushed) : fl.batch;

		r = flush_once(&fl, &seed, n);
		if (r < 0) {
			fprintf(stderr, "page_flush: flush failed: %s (%s)\n", strerror(-r),
				lcloud_queue_get_error(fl.data));
			return 1;
		}
		flushed += n;
	}
	t1 = now();
	if (device_counts(stat_path, &c1) < 0)
		return 1;
	printf("%s %llu %u %llu %.3f %.0f %llu %.0f %.3f %.1f\n", argv[optind], (unsigned long long)fl.page, fl.qd,
	       (unsigned long long)fl.pages, t1 - t0, (double)fl.pages / (t1 - t0),
	       (unsigned long long)((c1.sectors - c0.sectors) * 512),
	       (double)(c1.sectors - c0.sectors) * 512 / (double)fl.pages,
	       (double)(c1.writes - c0.writes) / (double)fl.pages,
	       (double)(c1.flushes - c0.flushes) * 1000 / (double)fl.pages);
	if (fl.dw != fl.data)
		lcloud_queue_free(fl.dw);
	lcloud_queue_free(fl.data);
	lcloud_ctx_free(ctx);
	free(fl.buf);
	return 0;
}
