/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The synchronous backend: preadv2()/pwritev2() at submit time, where
 * io_uring is not available. Prepared I/Os wait in order in its own list;
 * submit does them all and keeps their completions until they are reaped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "queue_backend.h"

struct sync_state {
	int fd;
	uint32_t depth;
	struct queue_op *queued; /* prepared, not submitted, in order */
	uint32_t *queued_slots;
	uint32_t n_queued;
	struct lcloud_completion *done; /* completed, not yet reaped */
	uint32_t n_done;
};

static void sync_free(void *priv)
{
	struct sync_state *s = priv;

	if (!s)
		return;
	free(s->queued);
	free(s->queued_slots);
	free(s->done);
}

static int sync_open(const struct queue_backend_target *t, void *state, struct queue_error *e)
{
	struct sync_state *s = state;

	(void)e;
	s->fd = t->fd;
	s->depth = t->depth;
	s->queued = calloc(t->depth, sizeof(*s->queued));
	s->queued_slots = calloc(t->depth, sizeof(*s->queued_slots));
	s->done = calloc(t->depth, sizeof(*s->done));
	if (!s->queued || !s->queued_slots || !s->done) {
		sync_free(s);
		return -ENOMEM;
	}
	return 0;
}

static int sync_prep(void *priv, uint32_t slot, const struct queue_op *op, const struct hint_map *m,
		     struct queue_error *e)
{
	struct sync_state *s = priv;

	(void)m; /* its rw_flags are in OP's already; nothing else reaches pwritev2() */
	if (s->n_done + s->n_queued >= s->depth)
		return queue_error_set(e, -EAGAIN, "%u completions wait to be reaped; reap them first", s->n_done);
	s->queued_slots[s->n_queued] = slot;
	s->queued[s->n_queued++] = *op;
	return 0;
}

static int sync_submit(void *priv, struct queue_slots *done, struct queue_error *e)
{
	struct sync_state *s = priv;
	uint32_t n = s->n_queued;

	(void)e; /* a failed read or write is its completion's result */
	for (uint32_t i = 0; i < n; i++) {
		const struct queue_op *op = &s->queued[i];
		struct iovec iov = { .iov_base = op->buf, .iov_len = op->len };
		struct lcloud_completion *c = &s->done[s->n_done++];
		ssize_t r;

		r = op->write ? pwritev2(s->fd, &iov, 1, (off_t)op->offset, op->rw_flags)
			      : preadv2(s->fd, &iov, 1, (off_t)op->offset, op->rw_flags);
		memset(c, 0, sizeof(*c));
		c->user_data = op->user_data;
		c->result = r < 0 ? -errno : (int32_t)r;
		done->slot[done->n++] = s->queued_slots[i];
	}
	s->n_queued = 0;
	return (int)n;
}

static int sync_reap(void *priv, struct lcloud_completion *out, uint32_t max, uint32_t min, struct queue_slots *done,
		     struct queue_error *e)
{
	struct sync_state *s = priv;
	uint32_t n = s->n_done < max ? s->n_done : max;

	(void)min; /* what submit did is all there is: nothing to wait for */
	(void)done;
	(void)e;
	memcpy(out, s->done, n * sizeof(*out));
	memmove(s->done, s->done + n, (s->n_done - n) * sizeof(*out));
	s->n_done -= n;
	return (int)n;
}

static void sync_pending(const void *priv, uint32_t *ret_queued, uint32_t *ret_to_reap)
{
	const struct sync_state *s = priv;

	*ret_queued = s->n_queued;
	*ret_to_reap = s->n_done;
}

const struct queue_backend_ops queue_backend_sync = {
	.name = "sync",
	.id = LCLOUD_BACKEND_SYNC,
	.atomic_path = LCLOUD_PATH_RWF_ATOMIC,
	/* the slot is held from prep to submit, so that a full queue is refused before the hint is applied */
	.caps = QUEUE_CAP_RWF_ATOMIC | QUEUE_CAP_KERNEL_HINTS | QUEUE_CAP_SLOTS,
	.state_size = sizeof(struct sync_state),
	.open = sync_open,
	.prep = sync_prep,
	.submit = sync_submit,
	.reap = sync_reap,
	.register_buffers = NULL, /* plain buffers: nothing to gain */
	.pending = sync_pending,
	.free = sync_free,
};
