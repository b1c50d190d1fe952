/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The io_uring backends. Passthrough: a ring with 128-byte SQEs and 32-byte
 * CQEs, IORING_OP_URING_CMD with NVME_URING_CMD_IO and the NVMe command in
 * the SQE (liburing 2.3 has no helper: the SQE is zeroed and filled here);
 * cqe->res is 0, a positive NVMe status, or -errno. Kernel path: plain
 * IORING_OP_READ/WRITE on the O_DIRECT descriptor, RWF_ATOMIC in rw_flags,
 * and the write stream (Linux 6.16) in the byte at SQE offset 44.
 */
#include <errno.h>
#include <linux/nvme_ioctl.h>
#include <stddef.h>
#include <string.h>

#include "queue.h"

#define NVME_CMD_WRITE 0x01
#define NVME_CMD_READ 0x02
#define SQE_WRITE_STREAM_OFFSET 44 /* __u8 write_stream, Linux 6.16 */

int uring_setup(struct lcloud_queue *q)
{
	struct io_uring_params params;
	int r;

	memset(&params, 0, sizeof(params));
	if (q->backend == LCLOUD_BACKEND_PASSTHROUGH)
		params.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	r = io_uring_queue_init_params(q->depth, &q->ring, &params);
	if (r < 0)
		return queue_fail(q, r, "io_uring setup failed: %s%s", strerror(-r),
				  r == -EPERM || r == -ENOSYS ? " (io_uring is disabled here: use the sync backend)" : "");
	q->ring_ok = true;
	if (q->ring.flags & (IORING_SETUP_SQPOLL | IORING_SETUP_SQE128)) {
		/* the fast path takes SQEs as a ring without either does */
		q->fast_read = q->fast_write = false;
	} else {
		struct io_uring_sqe t;

		/* what every unhinted read or write SQE starts with, worked out once */
		io_uring_prep_write(&t, q->fd, NULL, 0, 0);
		memcpy(&q->sqe_head_write, &t, sizeof(q->sqe_head_write));
		io_uring_prep_read(&t, q->fd, NULL, 0, 0);
		memcpy(&q->sqe_head_read, &t, sizeof(q->sqe_head_read));
	}
	return 0;
}

static int fixed_index(const struct lcloud_queue *q, const void *buf, uint64_t len)
{
	for (uint32_t i = 0; i < q->n_reg; i++) {
		const char *base = q->reg[i].iov_base;

		if ((const char *)buf >= base && (const char *)buf + len <= base + q->reg[i].iov_len)
			return (int)i;
	}
	return -1;
}

/* Passthrough: the NVMe command in the SQE's second half; the slot remembers the length. */
int uring_prep(struct lcloud_queue *q, uint32_t slot, const struct hint_map *m)
{
	const struct queue_op *op = &q->ops[slot];
	struct io_uring_sqe *sqe;
	struct nvme_uring_cmd *cmd;
	uint64_t slba = (q->dev_offset + op->offset) / q->lba;
	uint64_t nlb = op->len / q->lba - 1; /* 0's based */

	/* checked before taking an SQE: a taken SQE is submitted whether filled or not */
	if (nlb > 0xffff)
		return queue_fail(q, -EINVAL, "%llu blocks is more than one NVMe command carries (65536)",
				  (unsigned long long)nlb + 1);
	sqe = io_uring_get_sqe(&q->ring);
	if (!sqe)
		return queue_fail(q, -EAGAIN, "the submission queue is full; submit first");
	memset(sqe, 0, 2 * sizeof(*sqe)); /* SQE128: the command fills the second half */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = q->fd;
	sqe->cmd_op = NVME_URING_CMD_IO;
	cmd = (struct nvme_uring_cmd *)sqe->cmd;
	cmd->opcode = op->write ? NVME_CMD_WRITE : NVME_CMD_READ;
	cmd->nsid = q->nsid;
	cmd->addr = (uint64_t)(uintptr_t)op->buf;
	cmd->data_len = (uint32_t)op->len;
	cmd->cdw10 = (uint32_t)slba;
	cmd->cdw11 = (uint32_t)(slba >> 32);
	cmd->cdw12 = (uint32_t)nlb | m->cdw12;
	cmd->cdw13 = m->cdw13;
	io_uring_sqe_set_data64(sqe, slot);
	return 0;
}

/* The kernel path: a plain read or write; the SQE carries the caller's user data. */
int uring_prep_kernel(struct lcloud_queue *q, const struct queue_op *op, const struct hint_map *m)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
	int idx = q->n_reg ? fixed_index(q, op->buf, op->len) : -1;

	if (!sqe)
		return queue_fail(q, -EAGAIN, "the queue is full (%u I/Os); submit and reap first", q->depth);
	if (idx >= 0 && op->write)
		io_uring_prep_write_fixed(sqe, q->fd, op->buf, (unsigned int)op->len, op->offset, idx);
	else if (idx >= 0)
		io_uring_prep_read_fixed(sqe, q->fd, op->buf, (unsigned int)op->len, op->offset, idx);
	else if (op->write)
		io_uring_prep_write(sqe, q->fd, op->buf, (unsigned int)op->len, op->offset);
	else
		io_uring_prep_read(sqe, q->fd, op->buf, (unsigned int)op->len, op->offset);
	sqe->rw_flags = op->rw_flags;
	if (op->write && m->write_stream)
		((uint8_t *)sqe)[SQE_WRITE_STREAM_OFFSET] = m->write_stream;
	sqe->user_data = op->user_data;
	return 0;
}

/* Copies ready completions out, advancing the CQ ring once for the batch. */
static uint32_t drain(struct lcloud_queue *q, struct lcloud_completion *out, uint32_t max)
{
	struct io_uring_cq *cq = &q->ring.cq;
	unsigned int head = *cq->khead, ready = io_uring_cq_ready(&q->ring);
	unsigned int shift = q->backend == LCLOUD_BACKEND_PASSTHROUGH; /* CQE32 */
	uint32_t n = ready < max ? ready : max;

	for (uint32_t i = 0; i < n; i++) {
		const struct io_uring_cqe *cqe = &cq->cqes[((head + i) & cq->ring_mask) << shift];

		out[i].reserved = 0;
		out[i].nvme_status = 0;
		if (!shift) {
			out[i].user_data = cqe->user_data;
			out[i].result = cqe->res;
		} else {
			uint32_t slot = (uint32_t)cqe->user_data;

			if (slot >= q->depth) { /* not ours: never happens unless the ring is shared */
				out[i].user_data = cqe->user_data;
				out[i].result = -EIO;
				continue;
			}
			out[i].user_data = q->ops[slot].user_data;
			if (cqe->res > 0) {
				/* passthrough: a positive result is the NVMe status */
				out[i].nvme_status = (uint16_t)(cqe->res & 0x7ff);
				out[i].result = -EIO;
			} else {
				out[i].result = cqe->res ? cqe->res : (int32_t)q->ops[slot].len;
			}
			queue_release_slot(q, slot);
		}
	}
	if (n)
		io_uring_cq_advance(&q->ring, n);
	return n;
}

int uring_reap(struct lcloud_queue *q, struct lcloud_completion *out, uint32_t max, uint32_t min)
{
	uint32_t n = 0;

	for (;;) {
		if (io_uring_cq_ready(&q->ring))
			n += drain(q, out + n, max - n);
		if (n >= min || n == max)
			break;
		{
			struct io_uring_cqe *cqe;
			int r = io_uring_wait_cqe_nr(&q->ring, &cqe, min - n);

			if (r < 0)
				return n ? (int)n : queue_fail(q, r, "waiting for completions failed: %s", strerror(-r));
		}
	}
	q->inflight -= n < q->inflight ? n : q->inflight;
	return (int)n;
}
