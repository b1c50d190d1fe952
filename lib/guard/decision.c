/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guard's decision as a value (guard.h): a refusal is an errno, a kind
 * and a sentence, written in one statement by whichever check refuses; the
 * claims are descriptors the caller keeps while it writes. Its own file so
 * that every check fills the decision without calling back into guard.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "guard_internal.h"

int guard_fail(struct guard_decision *d, int err, enum guard_refusal kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
	va_end(ap);
	d->error = err;
	d->refusal = kind;
	return err;
}

int guard_claim_add(struct guard_decision *d, int fd, dev_t dev, bool may_share)
{
	int *fds = realloc(d->claims.fds, (d->claims.n + 1) * sizeof(*fds));
	dev_t *devs = NULL;
	bool *may = NULL;

	if (fds)
		d->claims.fds = fds;
	devs = fds ? realloc(d->claims.devs, (d->claims.n + 1) * sizeof(*devs)) : NULL;
	if (devs)
		d->claims.devs = devs;
	may = devs ? realloc(d->claims.may_share, (d->claims.n + 1) * sizeof(*may)) : NULL;
	if (!may) {
		close(fd);
		return guard_fail(d, -ENOMEM, GUARD_UNKNOWN, "out of memory while claiming the devices that share "
				  "the target's storage");
	}
	d->claims.may_share = may;
	d->claims.fds[d->claims.n] = fd;
	d->claims.devs[d->claims.n] = dev;
	d->claims.may_share[d->claims.n++] = may_share;
	return 0;
}

bool guard_claims_hold(const struct guard_decision *d, dev_t dev)
{
	for (unsigned int i = 0; i < d->claims.n; i++)
		if (d->claims.devs[i] == dev)
			return true;
	return false;
}

void guard_decision_release(struct guard_decision *d)
{
	if (!d)
		return;
	for (unsigned int i = 0; i < d->claims.n; i++)
		close(d->claims.fds[i]);
	free(d->claims.fds);
	free(d->claims.devs);
	free(d->claims.may_share);
	d->claims = (struct guard_claims){ 0 };
	d->error = 0;
	d->refusal = GUARD_ALLOWED;
	d->reason[0] = '\0';
}

const char *guard_refusal_to_string(enum guard_refusal r)
{
	switch (r) {
	case GUARD_ALLOWED:
		return "allowed";
	case GUARD_MOUNTED:
		return "mounted";
	case GUARD_SWAP:
		return "swap";
	case GUARD_HELD:
		return "held";
	case GUARD_CONTENTS:
		return "contents";
	case GUARD_UNKNOWN:
		return "unknown";
	case GUARD_NO_DEVICE:
		return "no-device";
	}
	return "unknown";
}
