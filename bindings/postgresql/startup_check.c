/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loaded through shared_preload_libraries, the extension starts one
 * background worker that checks the page writes of every tablespace when
 * the server starts and again after each configuration reload: one line
 * per tablespace, a WARNING when full_page_writes is off where a page write
 * is not proved untorn, a LOG line saying where pages stand otherwise; the
 * details (storage, what would make the pages untorn) at DEBUG1.
 *
 * A worker, not the postmaster: PostgreSQL 15 has no hook after a reload,
 * and an assign hook on full_page_writes belongs to the core. The worker
 * gets SIGHUP like every other process, reads the configuration again, and
 * speaks only when full_page_writes, an I/O path or an answer changed.
 * Each probe waits at most lcloud.probe_timeout (probe_wait.c), and a
 * shutdown request ends the wait at once: a frozen file system gets a
 * WARNING, never a worker that holds the server's shutdown.
 */
#include "lcloud_pg.h"

#include <limits.h>

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

PG_MODULE_MAGIC;

void		_PG_init(void);
PGDLLEXPORT void lcloud_checker_main(Datum arg);

/* What the last messages were about; NULL before the first check. */
static char *last_signature;

/* The names come from pg_tablespace (tablespace_names.c); the OID when it could not be read. */
static char *
tablespace_label(const LcloudLocation *l)
{
	if (l->name)
		return psprintf("tablespace %s (%s)", l->name, l->path);
	return psprintf("the tablespace with OID %u (%s)", l->tablespace, l->path);
}

static char *
storage_label(const LcloudAnswer *a)
{
	if (!a->filesystem)
		return pstrdup("File system and device unknown");
	return psprintf("File system %s mounted at %s, device %s", a->filesystem,
					a->mount_point ? a->mount_point : "?", a->device ? a->device : "?");
}

/*
 * One line per tablespace at LOG or WARNING: where, the answer, the rule
 * that decided. The storage and what would make the pages untorn go to
 * DEBUG1 (and lcloud_datadir()): at every start and reload they were most
 * of the log's lines.
 */
static void
say(bool full_page_writes, const LcloudLocation *l, const LcloudAnswer *a)
{
	char	   *where = tablespace_label(l);
	char	   *storage = storage_label(a);
	const char *io = lcloud_io_path_to_string(a->io_path);
	char	   *safe;

	if (a->timed_out)
	{
		ereport(WARNING,
				(errmsg("lcloud: could not check %u-byte page writes to %s within %s: the file system did not "
						"answer; full_page_writes is %s", l->size, where, lcloud_probe_timeout_text(),
						full_page_writes ? "on" : "off")));
		ereport(DEBUG1,
				(errmsg("lcloud: details for %s", where),
				 errdetail("Until the file system answers, these page writes are not proved untorn."),
				 errhint("A frozen file system (fsfreeze) answers again once thawed: check again then with "
						 "SELECT * FROM lcloud_datadir() or a configuration reload. lcloud.probe_timeout sets "
						 "how long a check waits.")));
		return;
	}

	if (a->answer == LCLOUD_ANSWER_UNTORN)
	{
		ereport(LOG,
				(errmsg("lcloud: full_page_writes is %s; %u-byte page writes to %s are untorn on the %s path%s",
						full_page_writes ? "on" : "off", l->size, where, io,
						full_page_writes ? ", so full_page_writes could be turned off" : "")));
		ereport(DEBUG1,
				(errmsg("lcloud: details for %s", where),
				 errdetail("%s: %s.", storage, a->reason),
				 errhint("This holds while the storage stays as it is: check again with "
						 "SELECT * FROM lcloud_datadir() after moving files or changing the "
						 "file system or device.")));
		return;
	}
	if (!full_page_writes)
		ereport(WARNING,
				(errmsg("lcloud: full_page_writes is off, but %u-byte page writes to %s are not proved untorn "
						"(answer: %s): %s; turn full_page_writes on", l->size, where,
						lcloud_answer_to_string(a->answer), a->reason)));
	else
		ereport(LOG,
				(errmsg("lcloud: full_page_writes is on and needed: %u-byte page writes to %s are not "
						"proved untorn (answer: %s): %s", l->size, where, lcloud_answer_to_string(a->answer),
						a->reason)));
	/* more probes, each bounded: only when someone reads DEBUG1 */
	if (!message_level_is_interesting(DEBUG1))
		return;
	safe = lcloud_what_would_make_it_safe(l->path, l->size, l->io_path);
	if (ShutdownRequestPending)
		return;
	ereport(DEBUG1,
			(errmsg("lcloud: details for %s", where),
			 errdetail("%s; PostgreSQL writes these pages on the %s path: %s.", storage, io, a->reason),
			 errhint("%sWhat would make these page writes untorn: %s.",
					 full_page_writes ? "" : "Turn full_page_writes on: without it a page torn by a crash "
					 "cannot be repaired from the WAL. ", safe)));
}

/* Checks every place data pages live; speaks at startup and when something changed. */
static void
check_tablespaces(bool startup)
{
	MemoryContext cxt = AllocSetContextCreate(TopMemoryContext, "lcloud check", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	const char *fpw_setting = GetConfigOption("full_page_writes", false, false);
	bool		full_page_writes = !fpw_setting || strcmp(fpw_setting, "off") != 0;
	List	   *locations = lcloud_server_locations();
	List	   *answers = NIL;
	StringInfoData signature;
	ListCell   *lc,
			   *la;

	lcloud_name_tablespaces(locations);
	if (ShutdownRequestPending)
		goto out;
	initStringInfo(&signature);
	appendStringInfo(&signature, "full_page_writes=%d", full_page_writes);
	foreach(lc, locations)
	{
		LcloudLocation *l = lfirst(lc);
		LcloudAnswer *a = palloc(sizeof(LcloudAnswer));

		/* full_page_writes protects relation pages only: WAL pages carry their own CRC */
		if (l->kind == LCLOUD_LOC_TABLESPACE)
			lcloud_answer_for(l->path, l->size, l->io_path, a);
		else
			memset(a, 0, sizeof(*a));
		if (a->stopped || ShutdownRequestPending)
			goto out;			/* the server is shutting down: nothing to say */
		answers = lappend(answers, a);
		if (l->kind == LCLOUD_LOC_TABLESPACE)
			appendStringInfo(&signature, "\n%s %s %s %d %s", l->name ? l->name : "", l->path,
							 lcloud_io_path_to_string(a->io_path), (int) a->answer, a->reason ? a->reason : "");
	}
	if (startup || !last_signature || strcmp(last_signature, signature.data) != 0)
	{
		forboth(lc, locations, la, answers)
			if (((LcloudLocation *) lfirst(lc))->kind == LCLOUD_LOC_TABLESPACE)
				say(full_page_writes, lfirst(lc), lfirst(la));
		if (last_signature)
			pfree(last_signature);
		last_signature = MemoryContextStrdup(TopMemoryContext, signature.data);
	}
out:
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

void
lcloud_checker_main(Datum arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	check_tablespaces(true);
	for (;;)
	{
		/* before waiting: a check resets the latch, and a SIGHUP may have come during it */
		if (ShutdownRequestPending)
			break;
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			check_tablespaces(false);
			continue;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	proc_exit(0);
}

void
_PG_init(void)
{
	BackgroundWorker worker;

	DefineCustomIntVariable("lcloud.probe_timeout",
							"How long one probe waits for a file system before its answer is unknown.",
							"A frozen file system (fsfreeze) does not answer until it is thawed: "
							"lcloud_datadir(), lcloud_check() and the startup check give up on it after this "
							"long; statement_timeout and a query cancel end the wait too.",
							&lcloud_probe_timeout_ms, LCLOUD_DEFAULT_PROBE_TIMEOUT_MS, 1, INT_MAX,
							PGC_USERSET, GUC_UNIT_MS, NULL, NULL, NULL);
	MarkGUCPrefixReserved("lcloud");

	/* CREATE EXTENSION alone loads the library for its functions: no worker then */
	if (!process_shared_preload_libraries_in_progress)
		return;
	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = 60;	/* checked again after a crash restart */
	strlcpy(worker.bgw_library_name, "lcloud", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "lcloud_checker_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "lcloud page write check", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "lcloud page write check", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}
