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

int uring_prep(struct lcloud_queue *q, uint32_t slot, const struct hint_map *m)
{
	const struct queue_op *op = &q->ops[slot];
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);

	if (!sqe)
		return queue_fail(q, -EAGAIN, "the submission queue is full; submit first");
	if (q->backend == LCLOUD_BACKEND_PASSTHROUGH) {
		struct nvme_uring_cmd *cmd;
		uint64_t slba = (q->dev_offset + op->offset) / q->lba;
		uint64_t nlb = op->len / q->lba - 1; /* 0's based */

		if (nlb > 0xffff)
			return queue_fail(q, -EINVAL, "%llu blocks is more than one NVMe command carries (65536)",
					  (unsigned long long)nlb + 1);
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
	} else {
		int idx = fixed_index(q, op->buf, op->len);

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
	}
	io_uring_sqe_set_data64(sqe, slot);
	q->queued++;
	return 0;
}

int uring_submit(struct lcloud_queue *q)
{
	int r = io_uring_submit(&q->ring);

	if (r < 0)
		return queue_fail(q, r, "io_uring submit failed: %s", strerror(-r));
	q->inflight += (uint32_t)r;
	q->queued -= (uint32_t)r < q->queued ? (uint32_t)r : q->queued;
	return r;
}

int uring_reap(struct lcloud_queue *q, struct lcloud_completion *out, uint32_t max, uint32_t min)
{
	uint32_t n = 0;

	while (n < max) {
		struct io_uring_cqe *cqe;
		int r;

		if (n < min)
			r = io_uring_wait_cqe(&q->ring, &cqe);
		else
			r = io_uring_peek_cqe(&q->ring, &cqe);
		if (r == -EAGAIN)
			break;
		if (r < 0)
			return n ? (int)n : queue_fail(q, r, "waiting for completions failed: %s", strerror(-r));
		{
			uint32_t slot = (uint32_t)io_uring_cqe_get_data64(cqe);

			memset(&out[n], 0, sizeof(out[n]));
			out[n].user_data = q->ops[slot].user_data;
			if (q->backend == LCLOUD_BACKEND_PASSTHROUGH && cqe->res > 0) {
				/* passthrough: a positive result is the NVMe status */
				out[n].nvme_status = (uint16_t)(cqe->res & 0x7ff);
				out[n].result = -EIO;
			} else if (q->backend == LCLOUD_BACKEND_PASSTHROUGH && cqe->res == 0) {
				out[n].result = (int32_t)q->ops[slot].len;
			} else {
				out[n].result = cqe->res;
			}
			io_uring_cqe_seen(&q->ring, cqe);
			queue_release_slot(q, slot);
		}
		if (q->inflight)
			q->inflight--;
		n++;
	}
	return (int)n;
}
