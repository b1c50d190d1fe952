/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The queue family's error: a -errno and a sentence for a person, written
 * into a buffer the caller owns. Its own file so that the backends, the
 * target opener and queue_guard() can fill it without calling back into
 * queue.c, which owns the buffer and shows it (lcloud_queue_get_error).
 */
#ifndef LCLOUD_QUEUE_ERROR_H
#define LCLOUD_QUEUE_ERROR_H

/* room for a mount point or two of PATH_MAX */
#define QUEUE_ERROR_MAX 8192

struct queue_error {
	char text[QUEUE_ERROR_MAX];
};

/* Formats the reason into E and returns ERR, so that a failure is one statement. */
__attribute__((format(printf, 3, 4)))
int queue_error_set(struct queue_error *e, int err, const char *fmt, ...);

#endif
