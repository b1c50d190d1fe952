/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The namespaces' watch (ns_watch.h): the library's queue of each
 * namespace says whether its storage is still the target's own; the first
 * time it is not, the namespace is write protected (ns_guard.c) and the
 * reason goes to the log once. The queue lets go of its lease and claims
 * then, since the check runs under the namespace's write lock with no write
 * of the target's in progress.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "lcloud/lcloud.h"
#include "ns_guard.h"
#include "ns_watch.h"
#include "target.h"

/* Under the namespace's write lock (ns_guard.c). */
static int check(struct target *t, unsigned int ns)
{
	struct target_namespace *n = &t->ns[ns];
	int r = lcloud_queue_check_storage(n->queue);

	if (r < 0)
		tlog(t, "namespace %u (%s): write protected from now on, reads go on: %s", ns + 1, n->path,
		     lcloud_queue_get_error(n->queue));
	return r;
}

static void *watch(void *arg)
{
	struct target *t = arg;
	const struct timespec interval = { 0, NS_WATCH_INTERVAL_MS * 1000000L };

	for (;;) {
		for (unsigned int i = 0; i < t->n_ns; i++)
			if (ns_write_begin(t, i) == 0)
				ns_write_end(t, i);
		nanosleep(&interval, NULL);
	}
	return NULL;
}

int ns_watch_start(struct target *t)
{
	pthread_t thread;
	int r;

	t->storage_check = check;
	r = pthread_create(&thread, NULL, watch, t);
	if (r)
		return -r;
	pthread_detach(thread);
	return 0;
}
