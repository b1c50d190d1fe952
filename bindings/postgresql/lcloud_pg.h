/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The lcloud PostgreSQL extension: liblcloud's verdict for the places this
 * server writes its pages, on the I/O path it writes them with.
 */
#ifndef LCLOUD_PG_H
#define LCLOUD_PG_H

#include "postgres.h"

#include "nodes/pg_list.h"

#include <lcloud/lcloud.h>

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
	uint64		max_untorn_bytes;
	char	   *reason;			/* one line, either way */
	List	   *evidence;		/* char *: what the verdict rests on */
	char	   *filesystem;		/* NULL when unknown */
	char	   *mount_point;
	char	   *device;
} LcloudAnswer;

/* location.c */
extern const char *lcloud_location_kind_name(LcloudLocationKind kind);
extern enum lcloud_io_path lcloud_server_data_io_path(void);
extern enum lcloud_io_path lcloud_server_wal_io_path(void);
extern List *lcloud_server_locations(void);

/* answer.c */
extern void lcloud_answer_for(const char *path, uint32 size, enum lcloud_io_path io_path,
							  LcloudAnswer *ret);
extern char *lcloud_what_would_make_it_safe(const char *path, uint32 size,
											enum lcloud_io_path server_path);

#endif							/* LCLOUD_PG_H */
