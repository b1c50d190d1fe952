/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The lcloud PostgreSQL extension: liblcloud's verdict for the places this
 * server writes its pages, on the I/O path it writes them with.
 */
#ifndef LCLOUD_PG_H
#define LCLOUD_PG_H

#include "postgres.h"

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"

#include <lcloud/lcloud.h>

#include "bounded_probe.h"

/* What a location holds; only data pages are protected by full_page_writes. */
typedef enum LcloudLocationKind
{
	LCLOUD_LOC_DATA_DIRECTORY,	/* the data directory itself (control file, SLRUs) */
	LCLOUD_LOC_TABLESPACE,		/* relation data pages */
	LCLOUD_LOC_WAL				/* pg_wal */
} LcloudLocationKind;

typedef struct LcloudLocation
{
	LcloudLocationKind kind;
	Oid			tablespace;		/* InvalidOid unless a tablespace */
	char	   *name;			/* the tablespace's name; NULL until read from the catalog */
	char	   *path;
	uint32		size;			/* the page size written there */
	enum lcloud_io_path io_path;	/* how this server writes there */
} LcloudLocation;

/* One answer, ready for a result row or a log message. */
typedef struct LcloudAnswer
{
	enum lcloud_io_path io_path;	/* the path that decided */
	enum lcloud_answer answer;
	bool		probed;			/* false: the path could not be probed at all */
	bool		timed_out;		/* the file system did not answer within lcloud.probe_timeout */
	bool		stopped;		/* a worker was asked to stop while waiting */
	uint64		max_untorn_bytes;
	char	   *reason;			/* one line, either way */
	List	   *evidence;		/* char *: what the verdict rests on */
	char	   *filesystem;		/* NULL when unknown */
	char	   *mount_point;
	char	   *device;
} LcloudAnswer;

/* probe_wait.c: liblcloud in a child process (bounded_probe.h), waited for with a timeout */
#define LCLOUD_DEFAULT_PROBE_TIMEOUT_MS 10000
extern int	lcloud_probe_timeout_ms;	/* lcloud.probe_timeout */

typedef enum LcloudProbeOutcome
{
	LCLOUD_PROBE_DONE,			/* the child replied and exited */
	LCLOUD_PROBE_TIMED_OUT,		/* no reply within lcloud.probe_timeout */
	LCLOUD_PROBE_STOPPED,		/* a worker's shutdown request ended the wait */
	LCLOUD_PROBE_FAILED			/* no child, or no usable reply */
} LcloudProbeOutcome;

/*
 * Runs JOB (liblcloud and libc only, never a PostgreSQL function) in a
 * child; its reply lands in REPLY (malloc'd: the caller frees reply->data,
 * also after an ERROR).
 */
extern LcloudProbeOutcome lcloud_run_bounded(bounded_job job, const void *arg, struct bounded_reply *reply,
											 char **why);
extern char *lcloud_probe_timeout_text(void);

/* location.c */
extern const char *lcloud_location_kind_name(LcloudLocationKind kind);
extern enum lcloud_io_path lcloud_server_data_io_path(void);
extern enum lcloud_io_path lcloud_server_wal_io_path(void);
extern List *lcloud_server_locations(void);

/* tablespace_names.c: user tablespaces' names, read by a short-lived connected worker */
extern void lcloud_name_tablespaces(List *locations);

/* answer.c */
extern void lcloud_answer_for(const char *path, uint32 size, enum lcloud_io_path io_path,
							  LcloudAnswer *ret);
extern char *lcloud_what_would_make_it_safe(const char *path, uint32 size,
											enum lcloud_io_path server_path);

#endif							/* LCLOUD_PG_H */
