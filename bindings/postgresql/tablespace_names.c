/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Names for the startup check's user tablespaces. pg_tablespace is shared,
 * but a process bound to no database cannot open it (only a few shared
 * catalogs are built without one), and the check's worker must stay bound
 * to none: a lasting connection would block DROP DATABASE and CREATE
 * DATABASE ... TEMPLATE on that database. So each check starts a short-lived
 * worker that connects to the postgres database, reads the names of the OIDs
 * it is handed in a dynamic shared memory segment, and exits. It waits at
 * most lcloud.probe_timeout; without names (no such database, a server still
 * in recovery, no worker slot) the messages name tablespaces by OID, as
 * before.
 */
#include "lcloud_pg.h"

#include "access/xact.h"
#include "commands/tablespace.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

PGDLLEXPORT void lcloud_names_main(Datum arg);

typedef struct NamedOid
{
	Oid			oid;
	char		name[NAMEDATALEN];	/* empty: no such tablespace (dropped) */
} NamedOid;

typedef struct NameRequest
{
	int			count;
	bool		filled;			/* set last by the worker: the names are there */
	NamedOid	entries[FLEXIBLE_ARRAY_MEMBER];
} NameRequest;

/* The short-lived worker: connect, read the names, say they are there, exit. */
void
lcloud_names_main(Datum arg)
{
	dsm_segment *seg;
	NameRequest *req;

	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection("postgres", NULL, BGWORKER_BYPASS_ALLOWCONN);
	seg = dsm_attach(DatumGetUInt32(arg));
	if (!seg)
		proc_exit(0);			/* the check gave up waiting */
	req = dsm_segment_address(seg);
	StartTransactionCommand();
	for (int i = 0; i < req->count; i++)
	{
		char	   *name = get_tablespace_name(req->entries[i].oid);

		if (name)
			strlcpy(req->entries[i].name, name, NAMEDATALEN);
	}
	CommitTransactionCommand();
	pg_write_barrier();
	req->filled = true;
	dsm_detach(seg);
	proc_exit(0);
}

/* Waits for WORKER to end, at most lcloud.probe_timeout; false if it did not. */
static bool
wait_for_worker(BackgroundWorkerHandle *worker)
{
	TimestampTz end = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), lcloud_probe_timeout_ms);

	for (;;)
	{
		pid_t		pid;
		BgwHandleStatus status = GetBackgroundWorkerPid(worker, &pid);
		long		left;

		if (status == BGWH_STOPPED || status == BGWH_POSTMASTER_DIED)
			return status == BGWH_STOPPED;
		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), end);
		if (left <= 0 || ShutdownRequestPending)
			break;
		/* the postmaster sets the latch when the worker starts and stops (bgw_notify_pid) */
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, left, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	TerminateBackgroundWorker(worker);
	return false;
}

void
lcloud_name_tablespaces(List *locations)
{
	List	   *unnamed = NIL;
	ListCell   *lc;
	dsm_segment *seg;
	NameRequest *req;
	BackgroundWorker w;
	BackgroundWorkerHandle *worker;
	int			i = 0;

	foreach(lc, locations)
	{
		LcloudLocation *l = lfirst(lc);

		if (l->kind == LCLOUD_LOC_TABLESPACE && !l->name && OidIsValid(l->tablespace))
			unnamed = lappend(unnamed, l);
	}
	if (!unnamed)
		return;

	seg = dsm_create(offsetof(NameRequest, entries) + list_length(unnamed) * sizeof(NamedOid), 0);
	req = dsm_segment_address(seg);
	req->count = list_length(unnamed);
	req->filled = false;
	foreach(lc, unnamed)
	{
		req->entries[i].oid = ((LcloudLocation *) lfirst(lc))->tablespace;
		req->entries[i++].name[0] = '\0';
	}

	memset(&w, 0, sizeof(w));
	w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	w.bgw_start_time = BgWorkerStart_ConsistentState;
	w.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(w.bgw_library_name, "lcloud", BGW_MAXLEN);
	strlcpy(w.bgw_function_name, "lcloud_names_main", BGW_MAXLEN);
	strlcpy(w.bgw_name, "lcloud tablespace names", BGW_MAXLEN);
	strlcpy(w.bgw_type, "lcloud tablespace names", BGW_MAXLEN);
	w.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(seg));
	w.bgw_notify_pid = MyProcPid;

	if (RegisterDynamicBackgroundWorker(&w, &worker) && wait_for_worker(worker))
	{
		pg_read_barrier();
		i = 0;
		foreach(lc, unnamed)
		{
			if (req->filled && req->entries[i].name[0])
				((LcloudLocation *) lfirst(lc))->name = pstrdup(req->entries[i].name);
			i++;
		}
	}
	dsm_detach(seg);
}
