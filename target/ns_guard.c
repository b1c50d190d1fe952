/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The namespaces' write gate (ns_guard.h). The check runs under the
 * namespace's own lock, which the watch's thread takes too: a write is
 * either done before the storage is let go or refused after, never both.
 * Lock order: cache_lock, then a namespace's write lock, then wlog_lock.
 */
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ns_guard.h"
#include "target.h"

int ns_write_begin(struct target *t, unsigned int ns)
{
	struct target_namespace *n = &t->ns[ns];

	pthread_mutex_lock(&n->write_lock);
	if (!n->write_protected && t->storage_check && t->storage_check(t, ns) < 0)
		n->write_protected = true;
	if (n->write_protected) {
		pthread_mutex_unlock(&n->write_lock);
		return -EROFS;
	}
	return 0;
}

void ns_write_end(struct target *t, unsigned int ns)
{
	pthread_mutex_unlock(&t->ns[ns].write_lock);
}

bool ns_write_protected(struct target *t, unsigned int ns)
{
	struct target_namespace *n = &t->ns[ns];
	bool p;

	pthread_mutex_lock(&n->write_lock);
	p = n->write_protected;
	pthread_mutex_unlock(&n->write_lock);
	return p;
}

int ns_pwrite(struct target *t, unsigned int ns, const void *buf, uint64_t len, uint64_t offset)
{
	const uint8_t *p = buf;

	while (len) {
		struct iovec iov = { (void *)p, len };
		ssize_t n = pwritev2(t->ns[ns].fd, &iov, 1, (off_t)offset, t->cfg.vwc ? 0 : RWF_DSYNC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (uint64_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

int ns_settle(struct target *t, unsigned int ns)
{
	return !t->cfg.vwc && fdatasync(t->ns[ns].fd) < 0 ? -errno : 0;
}
