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
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* struct io_uring_sqe's write_stream (Linux 6.16): a byte at 44, newer than the system's header */
#define SQE_WRITE_STREAM_AT 44

/* One IORING_OP_WRITE of BUF on FD with write stream STREAM; the completion's result. */
static ssize_t uring_write_stream(int fd, const void *buf, size_t size, off_t offset, unsigned int stream)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	uint8_t *sq, *cq;
	unsigned int *sq_tail, *sq_array, *cq_head;
	ssize_t res;
	int ring;

	memset(&p, 0, sizeof(p));
	ring = (int)syscall(__NR_io_uring_setup, 1, &p);
	if (ring < 0)
		return -errno;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned int), PROT_READ | PROT_WRITE, MAP_SHARED,
		  ring, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe), PROT_READ | PROT_WRITE,
		  MAP_SHARED, ring, IORING_OFF_CQ_RING);
	sqe = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED, ring,
		   IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqe == MAP_FAILED)
		return -ENOMEM;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_WRITE;
	sqe->fd = fd;
	sqe->addr = (uint64_t)(uintptr_t)buf;
	sqe->len = (uint32_t)size;
	sqe->off = (uint64_t)offset;
	((uint8_t *)sqe)[SQE_WRITE_STREAM_AT] = (uint8_t)stream;
	sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	sq_array = (unsigned int *)(sq + p.sq_off.array);
	sq_array[0] = 0;
	__atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -errno;
	cq_head = (unsigned int *)(cq + p.cq_off.head);
	cqe = (struct io_uring_cqe *)(cq + p.cq_off.cqes) + (*cq_head & *(unsigned int *)(cq + p.cq_off.ring_mask));
	res = cqe->res;
	close(ring);
	return res;
}

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
