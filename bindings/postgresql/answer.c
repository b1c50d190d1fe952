/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * liblcloud's answer for one path, page size and I/O path, in the server's
 * memory. Never raises an ERROR: what cannot be read becomes the unknown
 * answer with its reason, so that neither a query nor the startup check
 * fails on a missing path, a tmpfs tablespace or evidence that needs root.
 */
#include "lcloud_pg.h"

#include <errno.h>
#include <string.h>

/*
 * Signatures (libblkid) open the block devices, which the server's user
 * may not. No live RWF_ATOMIC writes either: PostgreSQL does not issue
 * RWF_ATOMIC, and a query should not write test files into a tablespace.
 */
#define LCLOUD_PG_PROBE_FLAGS LCLOUD_PROBE_NO_SIGNATURES

static struct lcloud_ctx *process_ctx;

static int
get_ctx(struct lcloud_ctx **ret)
{
	int			r = 0;

	if (!process_ctx)
		r = lcloud_ctx_new(&process_ctx);
	*ret = process_ctx;
	return r;
}

static const char *
probe_error_hint(int err)
{
	switch (err)
	{
		case ENOENT:
			return "the path does not exist";
		case ENOTDIR:
			return "a component of the path is not a directory";
		case EACCES:
		case EPERM:
			return "the server's operating system user may not search a folder on the way";
		case EBADFD:
			return "a FIFO or socket has no storage; point the tablespace at a directory";
		case ENODEV:
			return "a device file other than an NVMe generic namespace has no file system to probe";
		default:
			return NULL;
	}
}

static const char *
string_fact(const struct lcloud_layer *layer, const char *name)
{
	return lcloud_fact_get_string(lcloud_layer_find_fact(layer, name));
}

static void
fill_filesystem(const struct lcloud_probe *p, LcloudAnswer *ret)
{
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++)
	{
		const struct lcloud_layer *l = lcloud_probe_get_layer(p, i);
		const char *s;

		if (lcloud_layer_get_kind(l) != LCLOUD_LAYER_FILESYSTEM)
			continue;
		if ((s = string_fact(l, "fstype")) != NULL)
			ret->filesystem = pstrdup(s);
		if ((s = string_fact(l, "mount_point")) != NULL)
			ret->mount_point = pstrdup(s);
		if ((s = string_fact(l, "mount_source")) != NULL)
			ret->device = pstrdup(s);
		return;
	}
}

static void
fill_verdict(const struct lcloud_probe *p, LcloudAnswer *ret)
{
	const struct lcloud_verdict *v = lcloud_probe_get_verdict(p, ret->io_path);

	if (!v)
		return;
	ret->max_untorn_bytes = lcloud_verdict_get_max_untorn_bytes(v);
	for (unsigned int i = 0; i < lcloud_verdict_get_reason_count(v); i++)
	{
		const char *e = lcloud_verdict_get_reason_evidence(v, i);
		ListCell   *lc;
		bool		seen = false;

		if (!e || !*e)
			continue;
		foreach(lc, ret->evidence)
			if (strcmp((char *) lfirst(lc), e) == 0)
				seen = true;
		if (!seen)
			ret->evidence = lappend(ret->evidence, pstrdup(e));
	}
}

void
lcloud_answer_for(const char *path, uint32 size, enum lcloud_io_path io_path, LcloudAnswer *ret)
{
	struct lcloud_ctx *ctx;
	struct lcloud_probe *p = NULL;
	enum lcloud_io_path decided = io_path;
	char		why[1024];
	int			r;

	memset(ret, 0, sizeof(*ret));
	ret->io_path = io_path;
	ret->answer = LCLOUD_ANSWER_UNKNOWN;
	r = get_ctx(&ctx);
	if (r >= 0)
		r = lcloud_probe_path(ctx, path, LCLOUD_PG_PROBE_FLAGS, &p);
	if (r < 0)
	{
		const char *hint = probe_error_hint(-r);

		ret->reason = psprintf("could not probe %s: %s%s%s", path, strerror(-r), hint ? ": " : "",
							   hint ? hint : "");
		return;
	}
	ret->probed = true;
	fill_filesystem(p, ret);
	why[0] = '\0';
	r = lcloud_probe_check(p, io_path, size, &decided, why, sizeof(why));
	if (r == -ERANGE)
		ret->reason = psprintf("%u-byte writes are larger than %s itself", size, path);
	else if (r < 0)
		ret->reason = psprintf("could not decide for %s: %s", path, strerror(-r));
	else
	{
		ret->answer = (enum lcloud_answer) r;
		ret->io_path = decided;
		ret->reason = pstrdup(why);
	}
	if (ret->io_path != LCLOUD_PATH_BEST)
		fill_verdict(p, ret);
	lcloud_probe_free(p);
}

/*
 * Would the device under PATH's file system keep SIZE-byte O_DIRECT writes
 * whole, so that only the file system's allocation unit is in the way?
 * Returns that unit, or 0.
 */
static uint64
allocation_unit_in_the_way(const char *path, uint32 size)
{
	struct lcloud_ctx *ctx;
	struct lcloud_probe *p = NULL,
			   *dev = NULL;
	const char *source = NULL;
	uint64		unit = 0;
	bool		keeps = false;

	if (get_ctx(&ctx) < 0 || lcloud_probe_path(ctx, path, LCLOUD_PG_PROBE_FLAGS, &p) < 0)
		return 0;
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++)
	{
		const struct lcloud_layer *l = lcloud_probe_get_layer(p, i);

		if (lcloud_layer_get_kind(l) != LCLOUD_LAYER_FILESYSTEM)
			continue;
		source = string_fact(l, "mount_source");
		unit = lcloud_fact_get_u64(lcloud_layer_find_fact(l, "cluster_size"));
		if (!unit)
			unit = lcloud_fact_get_u64(lcloud_layer_find_fact(l, "block_size"));
		break;
	}
	if (source && strncmp(source, "/dev/", 5) == 0 &&
		lcloud_probe_path(ctx, source, LCLOUD_PG_PROBE_FLAGS, &dev) == 0)
	{
		keeps = lcloud_probe_check(dev, LCLOUD_PATH_PLAIN_DIRECT, size, NULL, NULL, 0) == LCLOUD_ANSWER_UNTORN;
		lcloud_probe_free(dev);
	}
	lcloud_probe_free(p);
	return keeps && unit && unit < size ? unit : 0;
}

#if PG_VERSION_NUM >= 160000
#define DIRECT_DATA_SETTING "debug_io_direct=data, a developer option"
#else
#define DIRECT_DATA_SETTING "debug_io_direct=data, a developer option of PostgreSQL 16+; 15 writes data files through the page cache only"
#endif

/*
 * For a person: what would make SIZE-byte page writes under PATH untorn,
 * given that the server now writes them on SERVER_PATH.
 */
char *
lcloud_what_would_make_it_safe(const char *path, uint32 size, enum lcloud_io_path server_path)
{
	LcloudAnswer direct;
	uint64		unit;
	char	   *out;

	lcloud_answer_for(path, size, LCLOUD_PATH_PLAIN_DIRECT, &direct);
	if (server_path == LCLOUD_PATH_BUFFERED && direct.answer == LCLOUD_ANSWER_UNTORN)
		return psprintf("writing pages with O_DIRECT, " DIRECT_DATA_SETTING ", on this device, where "
						"they would be untorn: %s", direct.reason);
	if (direct.answer == LCLOUD_ANSWER_UNKNOWN)
		out = psprintf("whether %s keeps %u-byte O_DIRECT writes whole could not be told (%s)",
					   direct.device ? direct.device : path, size, direct.reason);
	else
		out = psprintf("a device that promises %u-byte untorn writes (an NVMe namespace's atomic write "
					   "unit, or a cloud disk with a documented promise) instead of %s, under a file system "
					   "that allocates whole pages, with pages written with O_DIRECT (%s); here %s",
					   size, direct.device ? direct.device : path,
					   server_path == LCLOUD_PATH_BUFFERED ? DIRECT_DATA_SETTING : "as now", direct.reason);
	unit = allocation_unit_in_the_way(path, size);
	if (unit)
		out = psprintf("%s; the device keeps %u-byte writes whole, but %s allocates in %llu-byte units: a "
					   "file system that allocates whole pages fixes that, e.g. 'mkfs.ext4 -O bigalloc -C %u' "
					   "or 'mkfs.xfs -b size=%u'", out, size, direct.filesystem ? direct.filesystem : "the file system",
					   (unsigned long long) unit, size, size);
	return out;
}
