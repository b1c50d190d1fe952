/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lcloud_check(path, size, io_path) and lcloud_datadir(): the verdict as rows. */
#include "lcloud_pg.h"

#include "catalog/pg_type_d.h"
#include "commands/tablespace.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(lcloud_check);
PG_FUNCTION_INFO_V1(lcloud_datadir);

/* The columns both functions end with, after lcloud_datadir's (kind, tablespace). */
#define ANSWER_COLUMNS 10

static Datum
text_array(List *strings)
{
	Datum	   *elems;
	ListCell   *lc;
	int			n = 0;

	if (strings == NIL)
		return PointerGetDatum(construct_empty_array(TEXTOID));
	elems = palloc(sizeof(Datum) * list_length(strings));
	foreach(lc, strings)
		elems[n++] = CStringGetTextDatum((char *) lfirst(lc));
	return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
}

static Datum
text_or_null(const char *s, bool *isnull)
{
	*isnull = s == NULL;
	return s ? CStringGetTextDatum(s) : (Datum) 0;
}

/* path, size, io_path, answer, max_untorn_bytes, reason, evidence, filesystem, mount_point, device */
static void
answer_columns(const char *path, uint32 size, const LcloudAnswer *a, Datum *values, bool *nulls)
{
	values[0] = CStringGetTextDatum(path);
	values[1] = Int32GetDatum((int32) size);
	values[2] = CStringGetTextDatum(lcloud_io_path_to_string(a->io_path));
	values[3] = CStringGetTextDatum(lcloud_answer_to_string(a->answer));
	values[4] = Int64GetDatum((int64) a->max_untorn_bytes);
	nulls[4] = !a->probed;
	values[5] = text_or_null(a->reason, &nulls[5]);
	values[6] = text_array(a->evidence);
	values[7] = text_or_null(a->filesystem, &nulls[7]);
	values[8] = text_or_null(a->mount_point, &nulls[8]);
	values[9] = text_or_null(a->device, &nulls[9]);
}

/*
 * lcloud_check(path text, size int DEFAULT block_size, io_path text DEFAULT NULL):
 * one row. A NULL io_path means the path this server writes data pages with.
 * Bad arguments are errors; a path that cannot be probed is an unknown row.
 */
Datum
lcloud_check(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[ANSWER_COLUMNS];
	bool		nulls[ANSWER_COLUMNS] = {0};
	enum lcloud_io_path io_path = lcloud_server_data_io_path();
	LcloudAnswer a;
	char	   *path;
	int32		size = BLCKSZ;

	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						errmsg("lcloud_check: path must not be NULL")));
	path = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (!PG_ARGISNULL(1))
		size = PG_GETARG_INT32(1);
	if (size <= 0 || (size & (size - 1)) != 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("lcloud_check: size %d is not a power of two", size),
						errhint("Atomic writes are powers of two: 4096, 8192, 16384...")));
	if (!PG_ARGISNULL(2))
	{
		char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(2));

		if (lcloud_io_path_from_string(name, &io_path) < 0)
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("lcloud_check: unknown io_path \"%s\"", name),
							errhint("Use rwf_atomic, passthrough, plain_direct, buffered or best; NULL "
									"for the path this server writes data pages with.")));
	}

	InitMaterializedSRF(fcinfo, 0);
	lcloud_answer_for(path, (uint32) size, io_path, &a);
	answer_columns(path, (uint32) size, &a, values, nulls);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

static char *
tablespace_name(const LcloudLocation *l)
{
	char	   *name = l->name ? l->name : get_tablespace_name(l->tablespace);

	return name ? name : psprintf("%u", l->tablespace); /* dropped since pg_tblspc was read */
}

/*
 * lcloud_datadir(): one row per place this server writes pages: the data
 * directory, every tablespace, pg_wal; each on the path the server writes
 * it with. Never fails on a location: those that cannot be read are rows
 * with the unknown answer.
 */
Datum
lcloud_datadir(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ListCell   *lc;
	List	   *locations;

	InitMaterializedSRF(fcinfo, 0);
	locations = lcloud_server_locations();
	foreach(lc, locations)
	{
		LcloudLocation *l = lfirst(lc);
		Datum		values[2 + ANSWER_COLUMNS];
		bool		nulls[2 + ANSWER_COLUMNS] = {0};
		LcloudAnswer a;

		lcloud_answer_for(l->path, l->size, l->io_path, &a);
		values[0] = CStringGetTextDatum(lcloud_location_kind_name(l->kind));
		if (l->kind == LCLOUD_LOC_TABLESPACE)
			values[1] = CStringGetTextDatum(tablespace_name(l));
		else
			nulls[1] = true;
		answer_columns(l->path, l->size, &a, values + 2, nulls + 2);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
