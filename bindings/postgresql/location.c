/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where this server writes its pages, and through which I/O path. Read from
 * the data directory itself (pg_tblspc holds one link per tablespace, which
 * is also what pg_tablespace_location() reads), so that the postmaster's
 * check can run before any database is open.
 */
#include "lcloud_pg.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "catalog/pg_tablespace_d.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/guc.h"

const char *
lcloud_location_kind_name(LcloudLocationKind kind)
{
	switch (kind)
	{
		case LCLOUD_LOC_DATA_DIRECTORY:
			return "data_directory";
		case LCLOUD_LOC_TABLESPACE:
			return "tablespace";
		case LCLOUD_LOC_WAL:
			return "wal";
	}
	return "unknown";
}

#if PG_VERSION_NUM < 160000
static bool
setting_is(const char *name, const char *value)
{
	const char *v = GetConfigOption(name, true, false);

	return v && pg_strcasecmp(v, value) == 0;
}
#endif

/*
 * PostgreSQL writes relation pages through the page cache, unless
 * debug_io_direct (16+) includes "data": then with O_DIRECT. Read from
 * io_direct_flags, what the server parsed the setting into and opens its
 * files by, not from the setting's text: a list whose items may be quoted
 * ('"data", wal') and spelled in any case. PostgreSQL 15 has no such setting.
 */
enum lcloud_io_path
lcloud_server_data_io_path(void)
{
#if PG_VERSION_NUM >= 160000
	return (io_direct_flags & IO_DIRECT_DATA) ? LCLOUD_PATH_PLAIN_DIRECT : LCLOUD_PATH_BUFFERED;
#else
	return LCLOUD_PATH_BUFFERED;
#endif
}

/*
 * WAL: 16+ opens it with O_DIRECT when debug_io_direct includes "wal"
 * (even with fsync off; "wal_init" alone only makes new segments that way).
 * Up to 15, XLOG's get_sync_bit() adds O_DIRECT by itself when
 * wal_sync_method is open_sync or open_datasync, fsync is on and the WAL is
 * not needed for archiving or replication (wal_level=minimal). Both leave
 * O_DIRECT out for the walreceiver, which writes a standby's WAL (unaligned,
 * and read back at once by the startup process): while the server is in
 * recovery, no WAL is written any other way.
 */
enum lcloud_io_path
lcloud_server_wal_io_path(void)
{
	if (RecoveryInProgress())
		return LCLOUD_PATH_BUFFERED;
#if PG_VERSION_NUM >= 160000
	return (io_direct_flags & IO_DIRECT_WAL) ? LCLOUD_PATH_PLAIN_DIRECT : LCLOUD_PATH_BUFFERED;
#else
	if ((setting_is("wal_sync_method", "open_sync") || setting_is("wal_sync_method", "open_datasync")) &&
		setting_is("fsync", "on") && setting_is("wal_level", "minimal"))
		return LCLOUD_PATH_PLAIN_DIRECT;
	return LCLOUD_PATH_BUFFERED;
#endif
}

static LcloudLocation *
new_location(LcloudLocationKind kind, Oid tablespace, char *path, uint32 size, enum lcloud_io_path io_path)
{
	LcloudLocation *l = palloc0(sizeof(LcloudLocation));

	l->kind = kind;
	l->tablespace = tablespace;
	l->path = path;
	l->size = size;
	l->io_path = io_path;
	return l;
}

static int
compare_oids(const void *a, const void *b)
{
	Oid			x = *(const Oid *) a,
				y = *(const Oid *) b;

	return x < y ? -1 : x > y;
}

/* The user tablespaces' links in pg_tblspc, by OID; an unreadable directory gives none. */
static List *
user_tablespaces(enum lcloud_io_path data_path)
{
	char		dir[MAXPGPATH];
	DIR		   *d;
	struct dirent *e;
	Oid		   *oids = NULL;
	int			n = 0,
				cap = 0;
	List	   *out = NIL;

	snprintf(dir, sizeof(dir), "%s/pg_tblspc", DataDir);
	d = opendir(dir);
	if (!d)
		return NIL;
	while ((e = readdir(d)) != NULL)
	{
		char	   *end;
		unsigned long oid = strtoul(e->d_name, &end, 10);

		if (!e->d_name[0] || *end || oid == 0 || oid > PG_UINT32_MAX)
			continue;
		if (n == cap)
		{
			cap = cap ? cap * 2 : 8;
			oids = oids ? repalloc(oids, cap * sizeof(Oid)) : palloc(cap * sizeof(Oid));
		}
		oids[n++] = (Oid) oid;
	}
	closedir(d);
	if (n)
		qsort(oids, n, sizeof(Oid), compare_oids);
	for (int i = 0; i < n; i++)
	{
		char		link[MAXPGPATH],
					target[MAXPGPATH];
		ssize_t		len;

		snprintf(link, sizeof(link), "%s/%u", dir, oids[i]);
		len = readlink(link, target, sizeof(target) - 1);
		if (len >= 0 && len < (ssize_t) sizeof(target) - 1)
			target[len] = '\0';
		else
		{
			/*
			 * An in-place tablespace, an unreadable link, or a target that
			 * may not fit (readlink() cuts it silently): the link itself,
			 * which the kernel follows whole.
			 */
			strlcpy(target, link, sizeof(target));
		}
		out = lappend(out, new_location(LCLOUD_LOC_TABLESPACE, oids[i], pstrdup(target), BLCKSZ, data_path));
	}
	if (oids)
		pfree(oids);
	return out;
}

/*
 * The data directory, pg_default (base), pg_global (global), every user
 * tablespace and pg_wal, each with the page size and path PostgreSQL writes
 * there with.
 */
List *
lcloud_server_locations(void)
{
	enum lcloud_io_path data_path = lcloud_server_data_io_path();
	List	   *out = NIL;

	/* pg_control and the SLRUs (pg_xact, ...) go through the page cache even with debug_io_direct=data */
	out = lappend(out, new_location(LCLOUD_LOC_DATA_DIRECTORY, InvalidOid, pstrdup(DataDir), BLCKSZ,
									LCLOUD_PATH_BUFFERED));
	out = lappend(out, new_location(LCLOUD_LOC_TABLESPACE, DEFAULTTABLESPACE_OID,
									psprintf("%s/base", DataDir), BLCKSZ, data_path));
	((LcloudLocation *) llast(out))->name = "pg_default";
	out = lappend(out, new_location(LCLOUD_LOC_TABLESPACE, GLOBALTABLESPACE_OID,
									psprintf("%s/global", DataDir), BLCKSZ, data_path));
	((LcloudLocation *) llast(out))->name = "pg_global";
	out = list_concat(out, user_tablespaces(data_path));
	out = lappend(out, new_location(LCLOUD_LOC_WAL, InvalidOid, psprintf("%s/" XLOGDIR, DataDir),
									XLOG_BLCKSZ, lcloud_server_wal_io_path()));
	return out;
}
