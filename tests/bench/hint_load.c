/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hint_load: the loads of the hint benchmarks (tests/bench/run-hints-vm.py),
 * each for SECONDS, each timing itself with CLOCK_MONOTONIC and printing
 * one line of "key=value" figures, so that a guest script can run several
 * side by side and the host can find their windows in lcloud-target's trace
 * (whose times count from its '# clock monotonic start_us' on the same clock).
 *
 *   seqread SECONDS FILE...         buffered sequential reads of 128 KiB, file
 *                                   after file (then again from the first, each
 *                                   file's pages dropped once read): Linux reads
 *                                   ahead for them
 *   randread SECONDS FILE BS        O_DIRECT reads of BS at random aligned
 *                                   offsets, one at a time: a reader that waits
 *                                   on every read (p50/p99 of each read)
 *   commit SECONDS DEV OFFSET STREAM    a commit loop: a 4 KiB O_DIRECT write at
 *                                   OFFSET.. with io_uring write stream STREAM,
 *                                   then fdatasync (p50/p99 of each commit)
 *   background SECONDS DEV OFFSET SIZE BS QD STREAM   O_DIRECT writes of BS
 *                                   through SIZE bytes at OFFSET, over and over,
 *                                   QD at a time, with write stream STREAM
 *   now                             the time on the loads' clock, in µs
 *   copy SECONDS DIR FILE...        a backup: each FILE read buffered (its pages
 *                                   dropped after, so the next round reads the
 *                                   device again) and written to DIR, fdatasync
 *                                   after each file; round after round
 *
 * A write stream (Linux 6.16, struct io_uring_sqe's write_stream, a byte at
 * 44) is what the NVMe driver sends as an FDP placement handle: stream N is
 * the namespace's N-th placement identifier (drivers/nvme/host/core.c);
 * STREAM 0 sends none. Every load stops at its time, also one that failed,
 * and the line says what failed ("error=..."), with exit status 1.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SQE_WRITE_STREAM_AT 44 /* struct io_uring_sqe's write_stream (Linux 6.16), newer than liburing 2.3 */
#define SEQ_CHUNK (128u << 10)
#define MAX_SAMPLES 1000000u

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Latencies, bounded: past MAX_SAMPLES the load stops taking more. */
struct samples {
	uint64_t *v;
	size_t n, cap;
};

static int sample(struct samples *s, uint64_t value)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		uint64_t *v;

		if (cap > MAX_SAMPLES || !(v = realloc(s->v, cap * sizeof(*v))))
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = value;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The value at or below which a fraction P of the samples lie (nearest rank). */
static uint64_t percentile(struct samples *s, double p)
{
	size_t rank;

	if (!s->n)
		return 0;
	rank = (size_t)(p * (double)s->n + 0.999999);
	if (rank < 1)
		rank = 1;
	return s->v[(rank > s->n ? s->n : rank) - 1];
}

static void print_latencies(const char *load, struct samples *s, uint64_t start, uint64_t end, uint64_t bytes,
			    const char *error)
{
	uint64_t sum = 0;

	qsort(s->v, s->n, sizeof(*s->v), cmp_u64);
	for (size_t i = 0; i < s->n; i++)
		sum += s->v[i];
	printf("load=%s start_us=%" PRIu64 " end_us=%" PRIu64 " ops=%zu bytes=%" PRIu64 " p50_us=%" PRIu64
	       " p95_us=%" PRIu64 " p99_us=%" PRIu64 " max_us=%" PRIu64 " mean_us=%" PRIu64 "%s%s\n",
	       load, start, end, s->n, bytes, percentile(s, 0.5), percentile(s, 0.95), percentile(s, 0.99),
	       s->n ? s->v[s->n - 1] : 0, s->n ? sum / s->n : 0, error ? " error=" : "", error ? error : "");
}

static int seqread(uint64_t seconds, char **files, int n_files)
{
	uint64_t start = now_us(), end = start + seconds * 1000000u, bytes = 0;
	char *buf = malloc(SEQ_CHUNK);
	const char *error = NULL;
	int files_read = 0;

	for (int i = 0; buf && now_us() < end && !error; i = (i + 1) % n_files) {
		int fd = open(files[i], O_RDONLY);
		ssize_t n;

		if (fd < 0) {
			error = strerror(errno);
			break;
		}
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); /* from the device, also the second time round */
		while ((n = read(fd, buf, SEQ_CHUNK)) > 0 && now_us() < end)
			bytes += (uint64_t)n;
		if (n < 0)
			error = strerror(errno);
		else if (n == 0)
			files_read++;
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
	end = now_us();
	printf("load=seqread start_us=%" PRIu64 " end_us=%" PRIu64 " bytes=%" PRIu64 " files=%d bytes_per_s=%.0f%s%s\n",
	       start, end, bytes, files_read, (double)bytes / ((double)(end - start) / 1e6), error ? " error=" : "",
	       error ? error : "");
	free(buf);
	return error || !buf ? 1 : 0;
}

/* Copies FROM to DIR/basename(FROM) through BUF; adds the bytes copied to *BYTES. NULL or what failed. */
static const char *copy_file(const char *from, const char *dir, char *buf, uint64_t end, uint64_t *bytes)
{
	const char *base = strrchr(from, '/') ? strrchr(from, '/') + 1 : from, *error = NULL;
	char to[4096];
	int in, out;
	ssize_t n;

	snprintf(to, sizeof(to), "%s/%s", dir, base);
	in = open(from, O_RDONLY);
	if (in < 0)
		return strerror(errno);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		close(in);
		return strerror(errno);
	}
	while (!error && now_us() < end && (n = read(in, buf, SEQ_CHUNK)) > 0) {
		if (write(out, buf, (size_t)n) != n)
			error = strerror(errno);
		else
			*bytes += (uint64_t)n;
	}
	if (!error && fdatasync(out) < 0)
		error = strerror(errno);
	posix_fadvise(in, 0, 0, POSIX_FADV_DONTNEED);
	posix_fadvise(out, 0, 0, POSIX_FADV_DONTNEED);
	close(in);
	close(out);
	return error;
}

static int copy(uint64_t seconds, const char *dir, char **files, int n_files)
{
	uint64_t start = now_us(), end = start + seconds * 1000000u, bytes = 0;
	char *buf = malloc(SEQ_CHUNK);
	const char *error = buf ? NULL : "no memory";
	int copied = 0;

	for (int i = 0; !error && now_us() < end; i = (i + 1) % n_files) {
		error = copy_file(files[i], dir, buf, end, &bytes);
		copied += !error;
	}
	end = now_us();
	printf("load=copy start_us=%" PRIu64 " end_us=%" PRIu64 " bytes=%" PRIu64 " files=%d bytes_per_s=%.0f%s%s\n",
	       start, end, bytes, copied, (double)bytes / ((double)(end - start) / 1e6), error ? " error=" : "",
	       error ? error : "");
	free(buf);
	return error ? 1 : 0;
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static int randread(uint64_t seconds, const char *path, size_t bs)
{
	uint64_t start = now_us(), end = start + seconds * 1000000u, bytes = 0, size;
	struct samples s = {0};
	const char *error = NULL;
	struct stat st;
	void *buf = NULL;
	int fd = open(path, O_RDONLY | O_DIRECT);

	if (fd < 0 || fstat(fd, &st) < 0 || posix_memalign(&buf, 4096, bs) != 0) {
		error = strerror(errno);
		goto out;
	}
	size = (uint64_t)st.st_size / bs;
	while (size && now_us() < end) {
		uint64_t t0 = now_us();
		ssize_t n = pread(fd, buf, bs, (off_t)(rnd() % size * bs));

		if (n != (ssize_t)bs) {
			error = n < 0 ? strerror(errno) : "short read";
			break;
		}
		if (sample(&s, now_us() - t0) < 0)
			break;
		bytes += bs;
	}
out:
	print_latencies("randread", &s, start, now_us(), bytes, error);
	if (fd >= 0)
		close(fd);
	free(buf);
	free(s.v);
	return error ? 1 : 0;
}

/* One write through RING with write stream STREAM, tagged with USER. */
static int queue_write(struct io_uring *ring, int fd, void *buf, size_t len, uint64_t offset, unsigned int stream,
		       uint64_t user)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_write(sqe, fd, buf, (unsigned int)len, offset);
	((uint8_t *)sqe)[SQE_WRITE_STREAM_AT] = (uint8_t)stream;
	io_uring_sqe_set_data64(sqe, user);
	return 0;
}

static void *page_buffer(size_t len, int byte)
{
	void *buf = NULL;

	if (posix_memalign(&buf, 4096, len) != 0)
		return NULL;
	memset(buf, byte, len);
	return buf;
}

static int commit(uint64_t seconds, const char *dev, uint64_t offset, unsigned int stream)
{
	uint64_t start = now_us(), end = start + seconds * 1000000u, bytes = 0;
	struct samples s = {0};
	const char *error = NULL;
	struct io_uring ring;
	void *buf = page_buffer(4096, 'j');
	int fd = open(dev, O_WRONLY | O_DIRECT), r = 0;

	if (fd < 0 || !buf || (r = io_uring_queue_init(4, &ring, 0)) < 0) {
		error = fd < 0 ? strerror(errno) : !buf ? "no memory" : strerror(-r);
		print_latencies("commit", &s, start, now_us(), 0, error);
		return 1;
	}
	for (uint64_t i = 0; now_us() < end; i++) {
		uint64_t t0 = now_us();
		struct io_uring_cqe *cqe;

		/* a journal record in a 1 MiB ring of them, as a log wraps */
		queue_write(&ring, fd, buf, 4096, offset + i % 256 * 4096, stream, i);
		r = io_uring_submit_and_wait(&ring, 1);
		if (r >= 0)
			r = io_uring_wait_cqe(&ring, &cqe);
		if (r >= 0) {
			r = cqe->res;
			io_uring_cqe_seen(&ring, cqe);
		}
		if (r != 4096 || fdatasync(fd) < 0) {
			error = r < 0 ? strerror(-r) : r != 4096 ? "short write" : strerror(errno);
			break;
		}
		if (sample(&s, now_us() - t0) < 0)
			break;
		bytes += 4096;
	}
	print_latencies("commit", &s, start, now_us(), bytes, error);
	io_uring_queue_exit(&ring);
	close(fd);
	free(buf);
	free(s.v);
	return error ? 1 : 0;
}

static int background(uint64_t seconds, const char *dev, uint64_t offset, uint64_t size, size_t bs, unsigned int qd,
		      unsigned int stream)
{
	uint64_t start = now_us(), end = start + seconds * 1000000u, bytes = 0, next = 0, ops = 0;
	const char *error = NULL;
	unsigned int inflight = 0;
	struct io_uring ring;
	void *buf = page_buffer(bs, 'b');
	int fd = open(dev, O_WRONLY | O_DIRECT), r = 0;

	if (fd < 0 || !buf || size < bs || (r = io_uring_queue_init(qd, &ring, 0)) < 0) {
		printf("load=background error=%s\n", fd < 0 ? strerror(errno) : !buf ? "no memory" : strerror(-r));
		return 1;
	}
	for (;;) {
		struct io_uring_cqe *cqe;

		while (!error && inflight < qd && now_us() < end) {
			queue_write(&ring, fd, buf, bs, offset + next, stream, bs);
			next = (next + bs) % (size / bs * bs);
			inflight++;
		}
		if (!inflight)
			break;
		r = io_uring_submit_and_wait(&ring, 1);
		if (r >= 0)
			r = io_uring_wait_cqe(&ring, &cqe);
		if (r < 0) {
			error = strerror(-r);
			break;
		}
		if (cqe->res != (int)bs && !error)
			error = cqe->res < 0 ? strerror(-cqe->res) : "short write";
		else if (cqe->res == (int)bs)
			bytes += bs, ops++;
		io_uring_cqe_seen(&ring, cqe);
		inflight--;
	}
	end = now_us();
	printf("load=background start_us=%" PRIu64 " end_us=%" PRIu64 " ops=%" PRIu64 " bytes=%" PRIu64
	       " bytes_per_s=%.0f%s%s\n", start, end, ops, bytes, (double)bytes / ((double)(end - start) / 1e6),
	       error ? " error=" : "", error ? error : "");
	io_uring_queue_exit(&ring);
	close(fd);
	free(buf);
	return error ? 1 : 0;
}

static uint64_t number(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		goto bad;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (!*end)
		return v;
bad:
	fprintf(stderr, "hint_load: %s: not a number\n", s);
	exit(2);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 4 && strcmp(argv[1], "seqread") == 0)
		return seqread(number(argv[2]), argv + 3, argc - 3);
	if (argc == 5 && strcmp(argv[1], "randread") == 0)
		return randread(number(argv[2]), argv[3], number(argv[4]));
	if (argc == 6 && strcmp(argv[1], "commit") == 0)
		return commit(number(argv[2]), argv[3], number(argv[4]), (unsigned int)number(argv[5]));
	if (argc == 9 && strcmp(argv[1], "background") == 0)
		return background(number(argv[2]), argv[3], number(argv[4]), number(argv[5]), number(argv[6]),
				  (unsigned int)number(argv[7]), (unsigned int)number(argv[8]));
	if (argc == 2 && strcmp(argv[1], "now") == 0) {
		printf("%" PRIu64 "\n", now_us()); /* a moment of a script, on the loads' clock */
		return 0;
	}
	if (argc >= 5 && strcmp(argv[1], "copy") == 0)
		return copy(number(argv[2]), argv[3], argv + 4, argc - 4);
	fprintf(stderr, "usage: hint_load now\n"
			"       hint_load seqread SECONDS FILE...\n"
			"       hint_load copy SECONDS DIR FILE...\n"
			"       hint_load randread SECONDS FILE BS\n"
			"       hint_load commit SECONDS DEV OFFSET STREAM\n"
			"       hint_load background SECONDS DEV OFFSET SIZE BS QD STREAM\n");
	return 2;
}
