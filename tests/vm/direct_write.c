/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * direct_write DEV SIZE OFFSET SHIFT [atomic|stream=N]: one O_DIRECT pwrite
 * of SIZE bytes at OFFSET from a buffer that starts SHIFT bytes past a
 * memory page, as a program is allowed to when SHIFT is a multiple of the
 * queue's dma_alignment + 1; with "atomic", pwritev2 with RWF_ATOMIC; with
 * "stream=N", an io_uring write with write stream N (sqe->write_stream,
 * Linux 6.16), which the NVMe driver sends as an FDP placement handle. The
 * tests' own writer, independent of liblcloud and of liburing: the ring is
 * set up with the raw system calls, so the guest needs no library.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "uring_write_stream.h"

int main(int argc, char **argv)
{
	size_t size, shift;
	off_t offset;
	char *buf;
	ssize_t n;
	int fd;

	if (argc != 5 && !(argc == 6 && (strcmp(argv[5], "atomic") == 0 || strncmp(argv[5], "stream=", 7) == 0))) {
		fprintf(stderr, "usage: direct_write DEV SIZE OFFSET SHIFT [atomic|stream=N]\n");
		return 2;
	}
	size = strtoul(argv[2], NULL, 0);
	offset = (off_t)strtoll(argv[3], NULL, 0);
	shift = strtoul(argv[4], NULL, 0);
	fd = open(argv[1], O_WRONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 || posix_memalign((void **)&buf, (size_t)sysconf(_SC_PAGESIZE), size + shift) != 0) {
		perror(argv[1]);
		return 1;
	}
	memset(buf, 0x5a, size + shift);
	if (argc == 6 && argv[5][0] == 's') {
		n = uring_write_stream(fd, buf + shift, size, offset, (unsigned int)strtoul(argv[5] + 7, NULL, 0));
		if (n < 0) {
			errno = (int)-n;
			n = -1;
		}
	} else if (argc == 6) {
		struct iovec iov = { buf + shift, size };

		n = pwritev2(fd, &iov, 1, offset, 0x40 /* RWF_ATOMIC, Linux 6.11 */);
	} else {
		n = pwrite(fd, buf + shift, size, offset);
	}
	if (n != (ssize_t)size) {
		fprintf(stderr, "%s: pwrite: %s\n", argv[1], n < 0 ? strerror(errno) : "short write");
		return 1;
	}
	close(fd);
	return 0;
}
