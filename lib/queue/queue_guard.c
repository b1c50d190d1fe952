/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The queue's one door to the write guard: at open, and again when its watch
 * (queue_watch.c) sees the devices or mounts change, the guard decides about
 * the queue's descriptor and the queue keeps the decision and its claims.
 * Apart from queue.c so that the open and the watch both call it without
 * calling each other.
 */
#include <errno.h>
#include <stdlib.h>

#include "guard.h"
#include "queue.h"

int queue_guard(struct lcloud_ctx *ctx, struct lcloud_queue *q, uint32_t how)
{
	int r;

	if (!q->guard && !(q->guard = calloc(1, sizeof(*q->guard))))
		return queue_fail(q, -ENOMEM, "out of memory for the write guard's decision");
	/* the descriptor that names the storage: a generic node's claimed block device, else the target */
	r = guard_decide(ctx, q->hold_fd >= 0 ? q->hold_fd : q->fd, q->probe, how, q->guard);
	if (r < 0)
		return queue_fail(q, r, "%s", q->guard->reason);
	return 0;
}
