/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The io_uring backends' state, and the inline fast path queue.c runs on it
 * for unhinted, aligned I/O on a file or block device (QUEUE_CAP_INLINE_RING):
 * the SQE filled straight into the ring and the completions copied straight
 * off it, as a plain liburing loop inlines io_uring_get_sqe() and
 * io_uring_prep_write(). Only the waiting is out of line (queue_uring.c).
 */
#ifndef LCLOUD_QUEUE_URING_H
#define LCLOUD_QUEUE_URING_H

#include <liburing.h>
#include <stddef.h>
#include <string.h>

#include "queue_backend.h"

/* What a passthrough completion needs to become the caller's: its user data, and its length for a 0 result. */
struct uring_slot {
	uint64_t user_data;
	uint64_t len;
};

struct uring_state {
	struct io_uring ring;
	/* an unhinted read or write SQE's first 8 bytes (opcode, flags, ioprio, fd), worked out at open */
	uint64_t sqe_head_write, sqe_head_read;
	bool inline_ok; /* neither SQPOLL nor 128-byte SQEs: the fast path may take SQEs itself */
	bool nvme;      /* IORING_OP_URING_CMD with 128-byte SQEs and 32-byte CQEs */
	int fd;
	uint32_t depth, nsid;
	uint64_t lba, dev_offset;
	struct iovec *reg; /* registered buffers (copies of the caller's list) */
	uint32_t n_reg;
	struct uring_slot *slots; /* passthrough: one per slot of queue.c */
};

/*
 * io_uring_get_sqe() and io_uring_prep_rw() for a ring set up without SQPOLL
 * or SQE128: the SQE's first 8 bytes come ready from open, the rest is the
 * I/O's or zero. False when the submission queue is full.
 */
static inline bool uring_fast_sqe(struct uring_state *u, uint64_t sqe_head, const void *buf, uint64_t len,
				  uint64_t offset, uint64_t user_data)
{
	struct io_uring_sq *sq = &u->ring.sq;
	const unsigned int tail = sq->sqe_tail;
	struct io_uring_sqe *sqe;

	if (tail - IO_URING_READ_ONCE(*sq->khead) >= sq->ring_entries)
		return false;
	sqe = &sq->sqes[tail & sq->ring_mask];
	memcpy(sqe, &sqe_head, sizeof(sqe_head));
	sqe->off = offset;
	sqe->addr = (uint64_t)(uintptr_t)buf;
	sqe->len = (uint32_t)len;
	sqe->rw_flags = 0;
	sqe->user_data = user_data;
	/* buf_index, personality, file_index, addr3 and the padding */
	memset((char *)sqe + offsetof(struct io_uring_sqe, buf_index), 0,
	       sizeof(*sqe) - offsetof(struct io_uring_sqe, buf_index));
	sq->sqe_tail = tail + 1;
	return true;
}

/* queue_uring.c: waits until the CQ ring holds at least MIN completions past HEAD; returns how many it holds. */
int uring_wait_ring(struct uring_state *u, unsigned int head, uint32_t min, struct queue_error *e);

/* A completion is a CQE with its last 4 bytes (flags there, nvme_status and reserved here) zeroed. */
_Static_assert(sizeof(struct lcloud_completion) == sizeof(struct io_uring_cqe) &&
		       offsetof(struct lcloud_completion, user_data) == offsetof(struct io_uring_cqe, user_data) &&
		       offsetof(struct lcloud_completion, result) == offsetof(struct io_uring_cqe, res) &&
		       offsetof(struct lcloud_completion, nvme_status) == offsetof(struct io_uring_cqe, flags),
	       "struct lcloud_completion no longer matches struct io_uring_cqe");

static inline void uring_copy_cqes(struct lcloud_completion *restrict out, const struct io_uring_cqe *restrict cqe,
				   uint32_t n)
{
#pragma GCC unroll 2
	for (uint32_t i = 0; i < n; i++) {
		memcpy(&out[i], &cqe[i], sizeof(out[i]));
		out[i].nvme_status = 0;
		out[i].reserved = 0;
	}
}

/*
 * The kernel path's completions, straight off the CQ ring: what is there,
 * waiting only when fewer than MIN are, then one head update for the batch.
 */
static inline int uring_fast_reap(struct uring_state *u, struct lcloud_completion *out, uint32_t max, uint32_t min,
				  struct queue_error *e)
{
	struct io_uring_cq *cq = &u->ring.cq;
	const unsigned int head = *cq->khead, mask = cq->ring_mask;
	unsigned int ready = io_uring_smp_load_acquire(cq->ktail) - head, at;
	uint32_t n, first;

	if (ready < min) {
		int r = uring_wait_ring(u, head, min, e);

		if (r < 0)
			return r;
		ready = (unsigned int)r;
	}
	n = ready < max ? ready : max;
	/* up to the ring's end, then from its start: no mask per entry */
	at = head & mask;
	first = n < mask + 1 - at ? n : mask + 1 - at;
	uring_copy_cqes(out, cq->cqes + at, first);
	if (__builtin_expect(n > first, 0))
		uring_copy_cqes(out + first, cq->cqes, n - first);
	io_uring_smp_store_release(cq->khead, head + n);
	return (int)n;
}

#endif
