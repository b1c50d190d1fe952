/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_GUARD_INTERNAL_H
#define LCLOUD_GUARD_INTERNAL_H

/*
 * What the guard's files share while one decision is made: the caller's
 * question (the context, the probe, how to decide) and the decision being
 * filled. Only lib/guard/ includes this; callers see guard.h.
 */
#include <stdbool.h>

#include "ctx.h"
#include "guard.h"

struct guard_run {
	const struct lcloud_ctx *ctx;
	const struct lcloud_probe *probe;
	uint32_t how;
	int fd;                    /* the caller's descriptor, -1 for a captured tree */
	struct guard_decision *d;
};

/* Sets D's refusal (ERR, KIND, the reason) and returns ERR, so that a refusal is one statement. */
__attribute__((format(printf, 4, 5)))
int guard_fail(struct guard_decision *d, int err, enum guard_refusal kind, const char *fmt, ...);

/* Keeps FD (an O_EXCL claim on DEV) in D; -ENOMEM closes it. */
int guard_claim_add(struct guard_decision *d, int fd, dev_t dev, bool may_share);
/* Does D already hold a claim on DEV (an earlier decision's, or this one's)? */
bool guard_claims_hold(const struct guard_decision *d, dev_t dev);

/*
 * shared_storage.c: refuses when another block device, a file-backed mount
 * or a swap file shares the target's storage and is in use; claims the free
 * sharers into R->d (unless GUARD_NO_CLAIMS). TARGET_NAME is for messages.
 */
int guard_shared_storage(struct guard_run *r, const char *target_name);

#endif
