/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One io_uring write with a write stream (uring_write_stream.h): the ring is
 * set up, used once and closed, with the raw system calls.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uring_write_stream.h"

/* struct io_uring_sqe's write_stream (Linux 6.16): a byte at 44, newer than the system's header */
#define SQE_WRITE_STREAM_AT 44

ssize_t uring_write_stream(int fd, const void *buf, size_t size, off_t offset, unsigned int stream)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	uint8_t *sq, *cq;
	unsigned int *sq_tail, *sq_array, *cq_head;
	size_t sq_len, cq_len, sqe_len;
	ssize_t res;
	int ring;

	memset(&p, 0, sizeof(p));
	ring = (int)syscall(__NR_io_uring_setup, 1, &p);
	if (ring < 0)
		return -errno;
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	sqe_len = p.sq_entries * sizeof(struct io_uring_sqe);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQ_RING);
	cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_CQ_RING);
	sqe = mmap(NULL, sqe_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqe == MAP_FAILED) {
		res = -ENOMEM;
		goto done;
	}
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
	if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
		res = -errno;
		goto done;
	}
	cq_head = (unsigned int *)(cq + p.cq_off.head);
	cqe = (struct io_uring_cqe *)(cq + p.cq_off.cqes) + (*cq_head & *(unsigned int *)(cq + p.cq_off.ring_mask));
	res = cqe->res;
done:
	if (sq != MAP_FAILED)
		munmap(sq, sq_len);
	if (cq != MAP_FAILED)
		munmap(cq, cq_len);
	if (sqe != MAP_FAILED)
		munmap(sqe, sqe_len);
	close(ring);
	return res;
}
