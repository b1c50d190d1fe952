/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A liblcloud probe run in a forked child (../common/bounded_probe.c, which
 * the MariaDB plugin shares), waited for on the backend's latch and the
 * reply's pipe for at most lcloud.probe_timeout: statement_timeout, a query
 * cancel and a shutdown request all end the wait, while the child, asleep
 * on a frozen file system, is left behind with SIGKILL pending.
 */
#include "lcloud_pg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>

#include "miscadmin.h"
#include "postmaster/interrupt.h"
#include "storage/latch.h"
#include "storage/pg_shmem.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

/* A reply larger than this is not one of ours. */
#define MAX_REPLY_BYTES (1024 * 1024)

int			lcloud_probe_timeout_ms = LCLOUD_DEFAULT_PROBE_TIMEOUT_MS;

/*
 * In the child: leave the System V segment that tells a starting postmaster
 * whether processes of an old server are still alive, so that a child stuck
 * on a frozen file system does not keep a restarted server from starting.
 */
static void
leave_shared_memory(void)
{
	if (UsedShmemSegAddr != NULL)
		(void) shmdt(UsedShmemSegAddr);
}

/* "10 s", or "1500 ms" when not whole seconds. */
char *
lcloud_probe_timeout_text(void)
{
	if (lcloud_probe_timeout_ms % 1000 == 0)
		return psprintf("%d s", lcloud_probe_timeout_ms / 1000);
	return psprintf("%d ms", lcloud_probe_timeout_ms);
}

/*
 * Reads the reply until the child closes the pipe, the timeout passes, or
 * the process is asked to stop. A query cancel, statement_timeout or
 * termination of a backend raises its ERROR or FATAL in
 * CHECK_FOR_INTERRUPTS(); a worker's shutdown request returns STOPPED.
 */
static LcloudProbeOutcome
wait_for_reply(struct bounded_child *child, struct bounded_reply *reply)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), lcloud_probe_timeout_ms);

	for (;;)
	{
		int			r = bounded_read(child, reply, MAX_REPLY_BYTES);
		long		left;

		if (r > 0)
			return LCLOUD_PROBE_DONE;
		if (r < 0)
			return LCLOUD_PROBE_FAILED;
		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);
		if (left <= 0)
			return LCLOUD_PROBE_TIMED_OUT;
		if (WaitLatchOrSocket(MyLatch, WL_LATCH_SET | WL_SOCKET_READABLE | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							  child->fd, left, PG_WAIT_EXTENSION) & WL_LATCH_SET)
		{
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			if (ShutdownRequestPending)
				return LCLOUD_PROBE_STOPPED;
		}
	}
}

LcloudProbeOutcome
lcloud_run_bounded(bounded_job job, const void *arg, struct bounded_reply *reply, char **why)
{
	struct bounded_child child;
	LcloudProbeOutcome outcome;
	int			r;

	*why = NULL;
	r = bounded_start(job, arg, leave_shared_memory, &child);
	if (r == -EBUSY)
	{
		*why = psprintf("%d earlier probes of this server process still wait for their file systems",
						BOUNDED_MAX_ABANDONED);
		return LCLOUD_PROBE_FAILED;
	}
	if (r < 0)
	{
		*why = psprintf("could not start the probe process: %s", strerror(-r));
		return LCLOUD_PROBE_FAILED;
	}
	PG_TRY();
	{
		outcome = wait_for_reply(&child, reply);
	}
	PG_CATCH();
	{
		/* cancelled or timed out by the statement: leave the child behind */
		bounded_end(&child, true);
		PG_RE_THROW();
	}
	PG_END_TRY();
	bounded_end(&child, outcome != LCLOUD_PROBE_DONE);
	if (outcome == LCLOUD_PROBE_TIMED_OUT)
		*why = psprintf("the file system did not answer within %s", lcloud_probe_timeout_text());
	else if (outcome == LCLOUD_PROBE_STOPPED)
		*why = pstrdup("the check was stopped: the server is shutting down");
	else if (outcome == LCLOUD_PROBE_FAILED)
		*why = pstrdup("the probe process sent no usable answer");
	return outcome;
}
