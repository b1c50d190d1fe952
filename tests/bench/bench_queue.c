/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Random O_DIRECT writes at a queue depth, either through the liblcloud queue
 * or through a plain liburing loop doing the same I/O on the same file: the
 * baseline the library must keep up with. Prints "mode bs qd ios seconds iops
 * batches" (batches: how often the program submitted).
 *   bench_queue liblcloud|liburing FILE BS QD IOS [full]
 * The file must exist and be at least 256 MiB; offsets are BS-aligned,
 * pseudo-random with a fixed seed, the same for both modes.
 * By default the queue is kept full: after each submission the program waits
 * for one completion, takes what else has completed, and refills, so how many
 * I/Os go per batch depends on the machine's timing. With "full" every batch
 * is QD writes, submitted together and all waited for, in both modes: the
 * same batches in every run, for counting instructions.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lcloud/lcloud.h>

#define SPAN (256ull << 20)

static uint64_t next_offset(uint64_t *seed, uint64_t bs)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	return ((*seed >> 33) % (SPAN / bs)) * bs;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t batches;

static int run_liblcloud(const char *path, uint64_t bs, unsigned int qd, uint64_t ios, void *buf)
{
	struct lcloud_completion c[256];
	struct lcloud_ctx *ctx = NULL;
	struct lcloud_queue *q = NULL;
	uint64_t seed = 42, queued = 0, done = 0;
	int r;

	if (lcloud_ctx_new(&ctx) < 0)
		return 1;
	r = lcloud_queue_open(ctx, path, qd, LCLOUD_BACKEND_IO_URING, LCLOUD_QUEUE_WRITE, &q);
	if (r < 0) {
		fprintf(stderr, "open: %s\n", lcloud_ctx_get_error(ctx));
		return 1;
	}
	while (done < ios) {
		while (queued - done < qd && queued < ios) {
			r = lcloud_queue_prep_write(q, buf, bs, next_offset(&seed, bs), NULL, queued);
			if (r < 0) {
				fprintf(stderr, "prep: %s\n", lcloud_queue_get_error(q));
				return 1;
			}
			queued++;
		}
		r = lcloud_queue_submit_and_reap(q, c, qd, 1);
		if (r < 0)
			return 1;
		batches++;
		for (int i = 0; i < r; i++)
			if (c[i].result != (int32_t)bs) {
				fprintf(stderr, "write failed: %d\n", c[i].result);
				return 1;
			}
		done += (uint64_t)r;
	}
	lcloud_queue_free(q);
	lcloud_ctx_free(ctx);
	return 0;
}

static int run_liburing(const char *path, uint64_t bs, unsigned int qd, uint64_t ios, void *buf)
{
	uint64_t seed = 42, queued = 0, done = 0;
	struct io_uring ring;
	int fd, r;

	fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0 || io_uring_queue_init(qd, &ring, 0) < 0)
		return 1;
	while (done < ios) {
		while (queued - done < qd && queued < ios) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_write(sqe, fd, buf, (unsigned int)bs, next_offset(&seed, bs));
			io_uring_sqe_set_data64(sqe, queued);
			queued++;
		}
		if (io_uring_submit(&ring) < 0)
			return 1;
		batches++;
		for (;;) {
			struct io_uring_cqe *cqe;

			r = done < queued && (queued - done == qd || queued == ios) ? io_uring_wait_cqe(&ring, &cqe)
										     : io_uring_peek_cqe(&ring, &cqe);
			if (r == -EAGAIN)
				break;
			if (r < 0)
				return 1;
			if (cqe->res != (int)bs) {
				fprintf(stderr, "write failed: %d\n", cqe->res);
				return 1;
			}
			io_uring_cqe_seen(&ring, cqe);
			done++;
			if (done == queued)
				break;
		}
	}
	io_uring_queue_exit(&ring);
	close(fd);
	return 0;
}

/* The same two loops in batches of QD: submit, wait for all of them, take them. */
static int run_liblcloud_full(const char *path, uint64_t bs, unsigned int qd, uint64_t ios, void *buf)
{
	struct lcloud_completion c[256];
	struct lcloud_ctx *ctx = NULL;
	struct lcloud_queue *q = NULL;
	uint64_t seed = 42, queued = 0, done = 0;
	int r;

	if (lcloud_ctx_new(&ctx) < 0)
		return 1;
	r = lcloud_queue_open(ctx, path, qd, LCLOUD_BACKEND_IO_URING, LCLOUD_QUEUE_WRITE, &q);
	if (r < 0) {
		fprintf(stderr, "open: %s\n", lcloud_ctx_get_error(ctx));
		return 1;
	}
	while (done < ios) {
		while (queued - done < qd && queued < ios) {
			r = lcloud_queue_prep_write(q, buf, bs, next_offset(&seed, bs), NULL, queued);
			if (r < 0) {
				fprintf(stderr, "prep: %s\n", lcloud_queue_get_error(q));
				return 1;
			}
			queued++;
		}
		r = lcloud_queue_submit_and_reap(q, c, qd, (uint32_t)(queued - done));
		if (r != (int)(queued - done))
			return 1;
		batches++;
		for (int i = 0; i < r; i++)
			if (c[i].result != (int32_t)bs) {
				fprintf(stderr, "write failed: %d\n", c[i].result);
				return 1;
			}
		done += (uint64_t)r;
	}
	lcloud_queue_free(q);
	lcloud_ctx_free(ctx);
	return 0;
}

static int run_liburing_full(const char *path, uint64_t bs, unsigned int qd, uint64_t ios, void *buf)
{
	uint64_t seed = 42, queued = 0, done = 0;
	struct io_uring ring;
	int fd;

	fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0 || io_uring_queue_init(qd, &ring, 0) < 0)
		return 1;
	while (done < ios) {
		while (queued - done < qd && queued < ios) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_write(sqe, fd, buf, (unsigned int)bs, next_offset(&seed, bs));
			io_uring_sqe_set_data64(sqe, queued);
			queued++;
		}
		if (io_uring_submit_and_wait(&ring, (unsigned int)(queued - done)) < 0)
			return 1;
		batches++;
		while (done < queued) {
			struct io_uring_cqe *cqe;

			if (io_uring_peek_cqe(&ring, &cqe) < 0)
				return 1;
			if (cqe->res != (int)bs) {
				fprintf(stderr, "write failed: %d\n", cqe->res);
				return 1;
			}
			io_uring_cqe_seen(&ring, cqe);
			done++;
		}
	}
	io_uring_queue_exit(&ring);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t bs, ios;
	unsigned int qd;
	double t0, t1;
	void *buf;
	bool full;
	int r;

	if ((argc != 6 && argc != 7) || (argc == 7 && strcmp(argv[6], "full"))) {
		fprintf(stderr, "usage: %s liblcloud|liburing FILE BS QD IOS [full]\n", argv[0]);
		return 2;
	}
	full = argc == 7;
	bs = strtoull(argv[3], NULL, 0);
	qd = (unsigned int)strtoul(argv[4], NULL, 0);
	ios = strtoull(argv[5], NULL, 0);
	if (!bs || !qd || qd > 256 || !ios || posix_memalign(&buf, 4096, bs))
		return 2;
	memset(buf, 0xb5, bs);
	t0 = now();
	if (strcmp(argv[1], "liblcloud") == 0)
		r = full ? run_liblcloud_full(argv[2], bs, qd, ios, buf) : run_liblcloud(argv[2], bs, qd, ios, buf);
	else
		r = full ? run_liburing_full(argv[2], bs, qd, ios, buf) : run_liburing(argv[2], bs, qd, ios, buf);
	t1 = now();
	if (r)
		return r;
	printf("%s %llu %u %llu %.3f %.0f %llu\n", argv[1], (unsigned long long)bs, qd, (unsigned long long)ios, t1 - t0,
	       (double)ios / (t1 - t0), (unsigned long long)batches);
	free(buf);
	return 0;
}
