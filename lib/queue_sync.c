/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The synchronous backend: preadv2()/pwritev2() at submit time, where io_uring is not available. */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "queue.h"

int sync_prep(struct lcloud_queue *q, uint32_t slot)
{
	if (q->n_done + q->n_sync_queued >= q->depth)
		return queue_fail(q, -EAGAIN, "%u completions wait to be reaped; reap them first", q->n_done);
	q->sync_queued[q->n_sync_queued++] = slot;
	q->queued++;
	return 0;
}

int sync_submit(struct lcloud_queue *q)
{
	uint32_t n = q->n_sync_queued;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t slot = q->sync_queued[i];
		const struct queue_op *op = &q->ops[slot];
		struct iovec iov = { .iov_base = op->buf, .iov_len = op->len };
		struct lcloud_completion *c = &q->done[q->n_done++];
		ssize_t r;

		r = op->write ? pwritev2(q->fd, &iov, 1, (off_t)op->offset, op->rw_flags)
			      : preadv2(q->fd, &iov, 1, (off_t)op->offset, op->rw_flags);
		memset(c, 0, sizeof(*c));
		c->user_data = op->user_data;
		c->result = r < 0 ? -errno : (int32_t)r;
		queue_release_slot(q, slot);
	}
	q->n_sync_queued = 0;
	q->queued = 0;
	return (int)n;
}

int sync_reap(struct lcloud_queue *q, struct lcloud_completion *out, uint32_t max)
{
	uint32_t n = q->n_done < max ? q->n_done : max;

	memcpy(out, q->done, n * sizeof(*out));
	memmove(q->done, q->done + n, (q->n_done - n) * sizeof(*out));
	q->n_done -= n;
	return (int)n;
}
