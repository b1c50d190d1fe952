/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hint_census LOG ACTION...: the hint census's hands in the guest. It runs
 * each Linux mechanism whose hints the census reads at the device (buffered
 * and direct reads, fadvise, readahead(2), RWF_DONTCACHE, RWF_ATOMIC,
 * O_DSYNC, fsync, F_SET_RW_HINT, io_uring write streams) on one descriptor,
 * in the order given, and appends to LOG what it did and when, on
 * CLOCK_MONOTONIC (the clock lcloud-target's trace states its zero on):
 *
 *   begin ROW T / end ROW T            a row's window (every command the
 *                                      device receives meanwhile is the row's)
 *   extent LOGICAL PHYSICAL LENGTH     where a file's bytes are on its device
 *   read OFF LEN T0 T1 RES             each read a reader waited in (bytes or -errno)
 *   write OFF LEN T0 T1 RES            each write
 *   act NAME ARGS... T0 T1 RES         every other action: 0 or -errno
 *
 * A failed action is logged with its errno and the rest go on: what the
 * kernel refuses is part of the census. Actions:
 *
 *   begin ROW | end ROW
 *   open PATH MODE        MODE: r, w, rw, joined by + with direct, dsync,
 *                         create (closes the descriptor before)
 *   setra SECTORS         BLKRASET on the block device (the read-ahead window)
 *   drop                  empty the page cache of the file or device
 *   fadvise ADVICE OFF LEN   willneed, sequential, random, dontneed, normal, noreuse
 *   readahead OFF LEN
 *   seqread OFF LEN IOSIZE [FLAGS]            FLAGS: dontcache (RWF_DONTCACHE)
 *   randread OFF LEN IOSIZE COUNT SEED [FLAGS]
 *   write OFF LEN IOSIZE [FLAGS]              FLAGS: dontcache, atomic, dsync, sync
 *   stream OFF LEN STREAM                     an io_uring write with a write stream
 *   rwhint HINT           fcntl F_SET_RW_HINT (0 none .. 5 extreme)
 *   fiemap                logs the file's extents: extent LOGICAL PHYSICAL LENGTH
 *                         (bytes), so that its reads can be found on the device
 *   fsync | fdatasync | syncfs | sync
 *   sleep MS
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "uring_write_stream.h"

/* newer than Debian 12's headers */
#ifndef RWF_ATOMIC
#define RWF_ATOMIC 0x00000040 /* Linux 6.11 */
#endif
#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080 /* Linux 6.14: uncached buffered I/O */
#endif
#ifndef F_SET_RW_HINT
#define F_SET_RW_HINT 1036 /* Linux 4.13: F_LINUX_SPECIFIC_BASE + 12 */
#endif
#ifndef POSIX_FADV_NOREUSE
#define POSIX_FADV_NOREUSE 5
#endif

#define IO_MAX (1u << 20)

static int log_fd = -1;
static int fd = -1;
static bool fd_is_bdev;
static char *buf;

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* One line per write(2) of the log, so that lines of concurrent programs never mix. */
static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(log_fd, line, (size_t)n) != n) {
		perror("hint_census: log");
		exit(1);
	}
}

static int parse_flags(const char *s, int *ret)
{
	*ret = 0;
	while (s && *s) {
		size_t n = strcspn(s, "+,");

		if (!strncmp(s, "dontcache", n) && n == 9)
			*ret |= RWF_DONTCACHE;
		else if (!strncmp(s, "atomic", n) && n == 6)
			*ret |= RWF_ATOMIC;
		else if (!strncmp(s, "dsync", n) && n == 5)
			*ret |= RWF_DSYNC;
		else if (!strncmp(s, "sync", n) && n == 4)
			*ret |= RWF_SYNC;
		else if (!(n == 4 && !strncmp(s, "none", 4)))
			return -1;
		s += n;
		if (*s)
			s++;
	}
	return 0;
}

static ssize_t one_io(bool is_write, uint64_t off, uint64_t len, int flags)
{
	struct iovec iov = { buf, (size_t)len };
	uint64_t t0 = now_us(), t1;
	ssize_t r = is_write ? pwritev2(fd, &iov, 1, (off_t)off, flags) : preadv2(fd, &iov, 1, (off_t)off, flags);
	int err = errno;

	t1 = now_us();
	log_line("%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %zd", is_write ? "write" : "read", off, len, t0, t1,
	     r < 0 ? (ssize_t)-err : r);
	errno = err;
	return r;
}

/* The result of an action: 0 or -errno. */
static int do_open(const char *path, const char *mode)
{
	int flags = 0;
	char m[64];
	struct stat st;

	if (fd >= 0)
		close(fd);
	fd = -1;
	snprintf(m, sizeof(m), "%s", mode);
	for (char *tok = strtok(m, "+"); tok; tok = strtok(NULL, "+")) {
		if (!strcmp(tok, "r"))
			flags |= O_RDONLY;
		else if (!strcmp(tok, "w"))
			flags |= O_WRONLY;
		else if (!strcmp(tok, "rw"))
			flags |= O_RDWR;
		else if (!strcmp(tok, "direct"))
			flags |= O_DIRECT;
		else if (!strcmp(tok, "dsync"))
			flags |= O_DSYNC;
		else if (!strcmp(tok, "create"))
			flags |= O_CREAT;
		else
			return -EINVAL;
	}
	fd = open(path, flags | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	fd_is_bdev = fstat(fd, &st) == 0 && S_ISBLK(st.st_mode);
	return 0;
}

static int do_drop(void)
{
	if (fd_is_bdev)
		return ioctl(fd, BLKFLSBUF, 0) < 0 ? -errno : 0;
	if (fdatasync(fd) < 0)
		return -errno;
	return -posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

static int advice_of(const char *s)
{
	static const struct {
		const char *name;
		int advice;
	} names[] = {
		{ "normal", POSIX_FADV_NORMAL },     { "random", POSIX_FADV_RANDOM },
		{ "sequential", POSIX_FADV_SEQUENTIAL }, { "willneed", POSIX_FADV_WILLNEED },
		{ "dontneed", POSIX_FADV_DONTNEED }, { "noreuse", POSIX_FADV_NOREUSE },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name))
			return names[i].advice;
	return -1;
}

/* Reads or writes LEN bytes from OFF in IOSIZE pieces: 0, or the first failure's -errno. */
static int sequential(bool is_write, uint64_t off, uint64_t len, uint64_t iosize, int flags)
{
	for (uint64_t done = 0; done < len; done += iosize)
		if (one_io(is_write, off + done, iosize, flags) < 0)
			return -errno;
	return 0;
}

static int random_reads(uint64_t off, uint64_t len, uint64_t iosize, uint64_t count, uint64_t seed, int flags)
{
	uint64_t x = seed | 1, slots = len / iosize;

	for (uint64_t i = 0; i < count && slots; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (one_io(false, off + (x % slots) * iosize, iosize, flags) < 0)
			return -errno;
	}
	return 0;
}

static int streams_write(uint64_t off, uint64_t len, unsigned int stream)
{
	uint64_t t0 = now_us();
	ssize_t r = uring_write_stream(fd, buf, (size_t)len, (off_t)off, stream);

	log_line("write %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %zd", off, len, t0, now_us(), r);
	return r < 0 ? (int)r : 0;
}

/* The open file's extents, as FS_IOC_FIEMAP reports them after a sync. */
static int log_extents(void)
{
	enum { N = 64 };
	struct {
		struct fiemap map;
		struct fiemap_extent extents[N];
	} f;
	uint64_t start = 0;

	for (;;) {
		memset(&f, 0, sizeof(f));
		f.map.fm_start = start;
		f.map.fm_length = ~0ULL - start;
		f.map.fm_flags = FIEMAP_FLAG_SYNC;
		f.map.fm_extent_count = N;
		if (ioctl(fd, FS_IOC_FIEMAP, &f.map) < 0)
			return -errno;
		for (unsigned int i = 0; i < f.map.fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &f.extents[i];

			log_line("extent %llu %llu %llu", (unsigned long long)e->fe_logical,
				 (unsigned long long)e->fe_physical, (unsigned long long)e->fe_length);
			start = e->fe_logical + e->fe_length;
			if (e->fe_flags & FIEMAP_EXTENT_LAST)
				return 0;
		}
		if (f.map.fm_mapped_extents < N)
			return 0;
	}
}

static uint64_t num(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'K':
		return v << 10;
	case 'M':
		return v << 20;
	case 'G':
		return v << 30;
	default:
		return v;
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: hint_census LOG ACTION... (the actions are listed at the top of hint_census.c)\n");
	exit(2);
}

/* Runs the action at ARGV[0]: how many arguments it took (0: not an action). */
static int run_action(int argc, char **argv)
{
	const char *a = argv[0];
	int need, r = 0, flags = 0;
	uint64_t t0 = now_us();

#define NEED(n)                \
	do {                   \
		need = (n);    \
		if (argc < need + 1) \
			usage(); \
	} while (0)
	if (!strcmp(a, "begin") || !strcmp(a, "end")) {
		NEED(1);
		log_line("%s %s %" PRIu64, a, argv[1], now_us());
		return 2;
	} else if (!strcmp(a, "open")) {
		NEED(2);
		r = do_open(argv[1], argv[2]);
	} else if (!strcmp(a, "setra")) {
		NEED(1);
		r = ioctl(fd, BLKRASET, (unsigned long)num(argv[1])) < 0 ? -errno : 0;
	} else if (!strcmp(a, "drop")) {
		NEED(0);
		r = do_drop();
	} else if (!strcmp(a, "fadvise")) {
		NEED(3);
		if (advice_of(argv[1]) < 0)
			usage();
		r = -posix_fadvise(fd, (off_t)num(argv[2]), (off_t)num(argv[3]), advice_of(argv[1]));
	} else if (!strcmp(a, "readahead")) {
		NEED(2);
		r = readahead(fd, (off64_t)num(argv[1]), (size_t)num(argv[2])) < 0 ? -errno : 0;
	} else if (!strcmp(a, "seqread") || !strcmp(a, "write")) {
		NEED(4);
		if (parse_flags(argv[4], &flags) < 0 || num(argv[3]) == 0 || num(argv[3]) > IO_MAX)
			usage();
		r = sequential(a[0] == 'w', num(argv[1]), num(argv[2]), num(argv[3]), flags);
	} else if (!strcmp(a, "randread")) {
		NEED(6);
		if (parse_flags(argv[6], &flags) < 0 || num(argv[3]) == 0 || num(argv[3]) > IO_MAX)
			usage();
		r = random_reads(num(argv[1]), num(argv[2]), num(argv[3]), num(argv[4]), num(argv[5]), flags);
	} else if (!strcmp(a, "stream")) {
		NEED(3);
		if (num(argv[2]) == 0 || num(argv[2]) > IO_MAX)
			usage();
		r = streams_write(num(argv[1]), num(argv[2]), (unsigned int)num(argv[3]));
	} else if (!strcmp(a, "rwhint")) {
		uint64_t hint;

		NEED(1);
		hint = num(argv[1]);
		r = fcntl(fd, F_SET_RW_HINT, &hint) < 0 ? -errno : 0;
	} else if (!strcmp(a, "fsync") || !strcmp(a, "fdatasync") || !strcmp(a, "syncfs") || !strcmp(a, "sync")) {
		NEED(0);
		if (a[0] == 'f')
			r = (a[1] == 's' ? fsync(fd) : fdatasync(fd)) < 0 ? -errno : 0;
		else if (a[4] == 'f')
			r = syncfs(fd) < 0 ? -errno : 0;
		else
			sync();
	} else if (!strcmp(a, "fiemap")) {
		NEED(0);
		r = log_extents();
	} else if (!strcmp(a, "sleep")) {
		NEED(1);
		usleep((useconds_t)(num(argv[1]) * 1000));
	} else {
		return 0;
	}
#undef NEED
	{
		char args[256] = "";
		size_t n = 0;

		for (int i = 1; i <= need && n < sizeof(args); i++)
			n += (size_t)snprintf(args + n, sizeof(args) - n, " %s", argv[i]);
		log_line("act %s%s %" PRIu64 " %" PRIu64 " %d", a, args, t0, now_us(), r);
	}
	return need + 1;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		usage();
	log_fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log_fd < 0) {
		perror(argv[1]);
		return 1;
	}
	if (posix_memalign((void **)&buf, 4096, IO_MAX) != 0)
		return 1;
	memset(buf, 0x5a, IO_MAX);
	for (int i = 2; i < argc;) {
		int used = run_action(argc - i, argv + i);

		if (!used) {
			fprintf(stderr, "hint_census: unknown action '%s'\n", argv[i]);
			usage();
		}
		i += used;
	}
	if (fd >= 0)
		close(fd);
	return 0;
}
