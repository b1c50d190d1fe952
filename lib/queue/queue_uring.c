/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The io_uring backends, two tables sharing one ring's submit and reap, as
 * fio's io_uring and io_uring_cmd engines do. Passthrough: a ring with
 * 128-byte SQEs and 32-byte CQEs, IORING_OP_URING_CMD with NVME_URING_CMD_IO
 * and the NVMe command in the SQE (liburing 2.3 has no helper: the SQE is
 * zeroed and filled here); cqe->res is 0, a positive NVMe status, or -errno.
 * Kernel path: plain IORING_OP_READ/WRITE on the O_DIRECT descriptor,
 * RWF_ATOMIC in rw_flags, and the write stream (Linux 6.16) in the byte at
 * SQE offset 44; queue.c runs its unhinted I/O inline (queue_uring.h).
 */
#include <errno.h>
#include <linux/nvme_ioctl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "queue_uring.h"

#define NVME_CMD_WRITE 0x01
#define NVME_CMD_READ 0x02
#define SQE_WRITE_STREAM_OFFSET 44 /* __u8 write_stream, Linux 6.16 */

static void uring_free(void *priv)
{
	struct uring_state *u = priv;

	if (!u)
		return;
	io_uring_queue_exit(&u->ring);
	free(u->reg);
	free(u->slots);
}

static int uring_open_ring(const struct queue_backend_target *t, bool nvme, void *state, struct queue_error *e)
{
	struct io_uring_params params;
	struct uring_state *u = state;
	int r;

	u->nvme = nvme;
	u->fd = t->fd;
	u->depth = t->depth;
	u->nsid = t->nsid;
	u->lba = t->lba;
	u->dev_offset = t->dev_offset;
	if (nvme && !(u->slots = calloc(t->depth, sizeof(*u->slots))))
		return -ENOMEM;
	memset(&params, 0, sizeof(params));
	if (nvme)
		params.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	r = io_uring_queue_init_params(t->depth, &u->ring, &params);
	if (r < 0) {
		free(u->slots);
		u->slots = NULL;
		return queue_error_set(e, r, "io_uring setup failed: %s%s", strerror(-r),
				       r == -EPERM || r == -ENOSYS ? " (io_uring is disabled here: use the sync backend)"
								   : "");
	}
	/* the fast path takes SQEs as a ring without SQPOLL or 128-byte SQEs does */
	u->inline_ok = !(u->ring.flags & (IORING_SETUP_SQPOLL | IORING_SETUP_SQE128));
	if (u->inline_ok) {
		struct io_uring_sqe s;

		io_uring_prep_write(&s, u->fd, NULL, 0, 0);
		memcpy(&u->sqe_head_write, &s, sizeof(u->sqe_head_write));
		io_uring_prep_read(&s, u->fd, NULL, 0, 0);
		memcpy(&u->sqe_head_read, &s, sizeof(u->sqe_head_read));
	}
	return 0;
}

static int uring_open(const struct queue_backend_target *t, void *state, struct queue_error *e)
{
	return uring_open_ring(t, false, state, e);
}

static int uring_nvme_open(const struct queue_backend_target *t, void *state, struct queue_error *e)
{
	return uring_open_ring(t, true, state, e);
}

static int fixed_index(const struct uring_state *u, const void *buf, uint64_t len)
{
	for (uint32_t i = 0; i < u->n_reg; i++) {
		const char *base = u->reg[i].iov_base;

		if ((const char *)buf >= base && (const char *)buf + len <= base + u->reg[i].iov_len)
			return (int)i;
	}
	return -1;
}

/* Passthrough: the NVMe command in the SQE's second half; the slot remembers the length. */
static int uring_nvme_prep(void *priv, uint32_t slot, const struct queue_op *op, const struct hint_map *m,
			   struct queue_error *e)
{
	struct uring_state *u = priv;
	struct io_uring_sqe *sqe;
	struct nvme_uring_cmd *cmd;
	uint64_t slba = (u->dev_offset + op->offset) / u->lba;
	uint64_t nlb = op->len / u->lba - 1; /* 0's based */

	/* checked before taking an SQE: a taken SQE is submitted whether filled or not */
	if (nlb > 0xffff)
		return queue_error_set(e, -EINVAL, "%llu blocks is more than one NVMe command carries (65536)",
				       (unsigned long long)nlb + 1);
	sqe = io_uring_get_sqe(&u->ring);
	if (!sqe)
		return queue_error_set(e, -EAGAIN, "the submission queue is full; submit first");
	memset(sqe, 0, 2 * sizeof(*sqe)); /* SQE128: the command fills the second half */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = u->fd;
	sqe->cmd_op = NVME_URING_CMD_IO;
	cmd = (struct nvme_uring_cmd *)sqe->cmd;
	cmd->opcode = op->write ? NVME_CMD_WRITE : NVME_CMD_READ;
	cmd->nsid = u->nsid;
	cmd->addr = (uint64_t)(uintptr_t)op->buf;
	cmd->data_len = (uint32_t)op->len;
	cmd->cdw10 = (uint32_t)slba;
	cmd->cdw11 = (uint32_t)(slba >> 32);
	cmd->cdw12 = (uint32_t)nlb | m->cdw12;
	cmd->cdw13 = m->cdw13;
	u->slots[slot].user_data = op->user_data;
	u->slots[slot].len = op->len;
	io_uring_sqe_set_data64(sqe, slot);
	return 0;
}

/* The kernel path: a plain read or write; the SQE carries the caller's user data. */
static int uring_prep(void *priv, uint32_t slot, const struct queue_op *op, const struct hint_map *m,
		      struct queue_error *e)
{
	struct uring_state *u = priv;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	int idx = u->n_reg ? fixed_index(u, op->buf, op->len) : -1;

	(void)slot;
	if (!sqe)
		return queue_error_set(e, -EAGAIN, "the queue is full (%u I/Os); submit and reap first", u->depth);
	if (idx >= 0 && op->write)
		io_uring_prep_write_fixed(sqe, u->fd, op->buf, (unsigned int)op->len, op->offset, idx);
	else if (idx >= 0)
		io_uring_prep_read_fixed(sqe, u->fd, op->buf, (unsigned int)op->len, op->offset, idx);
	else if (op->write)
		io_uring_prep_write(sqe, u->fd, op->buf, (unsigned int)op->len, op->offset);
	else
		io_uring_prep_read(sqe, u->fd, op->buf, (unsigned int)op->len, op->offset);
	sqe->rw_flags = op->rw_flags;
	if (op->write && m->write_stream)
		((uint8_t *)sqe)[SQE_WRITE_STREAM_OFFSET] = m->write_stream;
	sqe->user_data = op->user_data;
	return 0;
}

static int uring_submit(void *priv, struct queue_slots *done, struct queue_error *e)
{
	struct uring_state *u = priv;
	int r = io_uring_submit(&u->ring);

	(void)done; /* a slot comes back with its completion */
	if (r < 0)
		return queue_error_set(e, r, "io_uring submit failed: %s", strerror(-r));
	return r;
}

/* Copies ready completions out, advancing the CQ ring once for the batch. */
static uint32_t drain(struct uring_state *u, struct lcloud_completion *out, uint32_t max, struct queue_slots *done)
{
	struct io_uring_cq *cq = &u->ring.cq;
	unsigned int head = *cq->khead, ready = io_uring_cq_ready(&u->ring);
	unsigned int shift = u->nvme; /* CQE32 */
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

			/* not ours (never happens unless the ring is shared), or more than the slots: no slot back */
			if (slot >= u->depth || done->n >= u->depth) {
				out[i].user_data = cqe->user_data;
				out[i].result = -EIO;
				continue;
			}
			out[i].user_data = u->slots[slot].user_data;
			if (cqe->res > 0) {
				/* passthrough: a positive result is the NVMe status */
				out[i].nvme_status = (uint16_t)(cqe->res & 0x7ff);
				out[i].result = -EIO;
			} else {
				out[i].result = cqe->res ? cqe->res : (int32_t)u->slots[slot].len;
			}
			done->slot[done->n++] = slot;
		}
	}
	if (n)
		io_uring_cq_advance(&u->ring, n);
	return n;
}

static int uring_reap(void *priv, struct lcloud_completion *out, uint32_t max, uint32_t min, struct queue_slots *done,
		      struct queue_error *e)
{
	struct uring_state *u = priv;
	uint32_t n = 0;

	for (;;) {
		if (io_uring_cq_ready(&u->ring))
			n += drain(u, out + n, max - n, done);
		if (n >= min || n == max)
			break;
		{
			struct io_uring_cqe *cqe;
			int r = io_uring_wait_cqe_nr(&u->ring, &cqe, min - n);

			if (r < 0)
				return n ? (int)n
					 : queue_error_set(e, r, "waiting for completions failed: %s", strerror(-r));
		}
	}
	return (int)n;
}

int uring_wait_ring(struct uring_state *u, unsigned int head, uint32_t min, struct queue_error *e)
{
	struct io_uring_cqe *cqe;
	/* the kernel counts from the ring's head, which has not moved: ask for MIN, not MIN - ready */
	int r = io_uring_wait_cqe_nr(&u->ring, &cqe, min);

	if (r < 0)
		return queue_error_set(e, r, "waiting for completions failed: %s", strerror(-r));
	return (int)(io_uring_smp_load_acquire(u->ring.cq.ktail) - head);
}

static int uring_register_buffers(void *priv, const struct iovec *iov, uint32_t n, struct queue_error *e)
{
	struct uring_state *u = priv;
	struct iovec *copy = calloc(n, sizeof(*copy));
	int r;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, iov, n * sizeof(*copy));
	r = io_uring_register_buffers(&u->ring, copy, n);
	if (r < 0) {
		free(copy);
		return queue_error_set(e, r, "registering %u buffers failed: %s", n, strerror(-r));
	}
	free(u->reg);
	u->reg = copy;
	u->n_reg = n;
	return 0;
}

static void uring_pending(const void *priv, uint32_t *ret_queued, uint32_t *ret_to_reap)
{
	const struct uring_state *u = priv;

	*ret_queued = u->ring.sq.sqe_tail - IO_URING_READ_ONCE(*u->ring.sq.khead);
	*ret_to_reap = 0; /* what the CQ ring holds counts as in flight until reaped */
}

const struct queue_backend_ops queue_backend_uring = {
	.name = "io_uring",
	.id = LCLOUD_BACKEND_IO_URING,
	.atomic_path = LCLOUD_PATH_RWF_ATOMIC,
	.caps = QUEUE_CAP_RWF_ATOMIC | QUEUE_CAP_KERNEL_HINTS | QUEUE_CAP_WRITE_STREAMS |
		QUEUE_CAP_REGISTERED_BUFFERS | QUEUE_CAP_ASYNC | QUEUE_CAP_INLINE_RING,
	.state_size = sizeof(struct uring_state),
	.open = uring_open,
	.prep = uring_prep,
	.submit = uring_submit,
	.reap = uring_reap,
	.register_buffers = uring_register_buffers,
	.pending = uring_pending,
	.free = uring_free,
};

/* Atomicity is the device's (NAWUPF): NVMe has no atomic bit, so the verdict's limits are enforced before submission. */
const struct queue_backend_ops queue_backend_uring_nvme = {
	.name = "passthrough",
	.id = LCLOUD_BACKEND_PASSTHROUGH,
	.atomic_path = LCLOUD_PATH_PASSTHROUGH,
	.caps = QUEUE_CAP_NVME_COMMAND | QUEUE_CAP_ONE_COMMAND | QUEUE_CAP_SLOTS | QUEUE_CAP_ASYNC,
	.state_size = sizeof(struct uring_state),
	.open = uring_nvme_open,
	.prep = uring_nvme_prep,
	.submit = uring_submit,
	.reap = uring_reap,
	.register_buffers = NULL, /* plain buffers: nothing to gain */
	.pending = uring_pending,
	.free = uring_free,
};
