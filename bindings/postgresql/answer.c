/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * liblcloud's answer for one path, page size and I/O path, in the server's
 * memory. Never raises an ERROR: what cannot be read becomes the unknown
 * answer with its reason, so that neither a query nor the startup check
 * fails on a missing path, a tmpfs tablespace or evidence that needs root.
 * The probe itself runs in a child process (probe_wait.c), which sends
 * the facts back through a pipe: a file system that does not answer (frozen)
 * makes the unknown answer after lcloud.probe_timeout, never a hung server.
 */
#include "lcloud_pg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Signatures (libblkid) open the block devices, which the server's user
 * may not. No live RWF_ATOMIC writes either: PostgreSQL does not issue
 * RWF_ATOMIC, and a query should not write test files into a tablespace.
 */
#define LCLOUD_PG_PROBE_FLAGS LCLOUD_PROBE_NO_SIGNATURES

/*
 * What a probe child sends back: this header, then string_count strings,
 * each a uint32 length (NO_STRING for none) and its bytes: the reason,
 * the file system, its mount point and device, then the verdict's
 * evidence, one per reason, as liblcloud gives them.
 */
typedef struct AnswerReplyHeader
{
	int32		probe_error;	/* -errno from lcloud_ctx_new() or lcloud_probe_path(); 0 */
	int32		check_result;	/* lcloud_probe_check()'s return */
	int32		decided;		/* the path that decided */
	int32		has_verdict;
	uint64		max_untorn_bytes;
	uint64		allocation_unit;	/* ALLOCATION_UNIT jobs only */
	uint32		string_count;
} AnswerReplyHeader;

#define NO_STRING UINT32_MAX
#define FIXED_STRINGS 4			/* reason, filesystem, mount_point, device */

typedef enum AnswerJobKind
{
	ANSWER_JOB_VERDICT,
	ANSWER_JOB_ALLOCATION_UNIT
} AnswerJobKind;

typedef struct AnswerJob
{
	AnswerJobKind kind;
	const char *path;
	uint32		size;
	enum lcloud_io_path io_path;
} AnswerJob;

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

/* The functions from here to answer_job() run in the probe child: liblcloud and libc only. */

static const char *
string_fact(const struct lcloud_layer *layer, const char *name)
{
	return lcloud_fact_get_string(lcloud_layer_find_fact(layer, name));
}

static const struct lcloud_layer *
filesystem_layer(const struct lcloud_probe *p)
{
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++)
	{
		const struct lcloud_layer *l = lcloud_probe_get_layer(p, i);

		if (lcloud_layer_get_kind(l) == LCLOUD_LAYER_FILESYSTEM)
			return l;
	}
	return NULL;
}

static void
put_string(struct bounded_reply *out, const char *s)
{
	uint32		len = s ? (uint32) strlen(s) : NO_STRING;

	bounded_reply_put(out, &len, sizeof(len));
	if (s)
		bounded_reply_put(out, s, len);
}

/*
 * Would the device under PATH's file system keep SIZE-byte O_DIRECT writes
 * whole, so that only the file system's allocation unit is in the way?
 * That unit, or 0.
 */
static uint64
allocation_unit_in_the_way(struct lcloud_ctx *ctx, struct lcloud_probe *p, uint32 size)
{
	const struct lcloud_layer *l = filesystem_layer(p);
	struct lcloud_probe *dev = NULL;
	const char *source = NULL;
	uint64		unit = 0;
	bool		keeps = false;

	if (l)
	{
		source = string_fact(l, "mount_source");
		unit = lcloud_fact_get_u64(lcloud_layer_find_fact(l, "cluster_size"));
		if (!unit)
			unit = lcloud_fact_get_u64(lcloud_layer_find_fact(l, "block_size"));
	}
	if (source && strncmp(source, "/dev/", 5) == 0 &&
		lcloud_probe_path(ctx, source, LCLOUD_PG_PROBE_FLAGS, &dev) == 0)
	{
		keeps = lcloud_probe_check(dev, LCLOUD_PATH_PLAIN_DIRECT, size, NULL, NULL, 0) == LCLOUD_ANSWER_UNTORN;
		lcloud_probe_free(dev);
	}
	return keeps && unit && unit < size ? unit : 0;
}

static void
answer_job(const void *arg, struct bounded_reply *out)
{
	const AnswerJob *job = arg;
	AnswerReplyHeader h = {0};
	struct lcloud_ctx *ctx = NULL;
	struct lcloud_probe *p = NULL;
	const struct lcloud_layer *fs = NULL;
	const struct lcloud_verdict *v = NULL;
	enum lcloud_io_path decided = job->io_path;
	char		why[1024] = "";
	int			r;

	r = lcloud_ctx_new(&ctx);
	if (r >= 0)
		r = lcloud_probe_path(ctx, job->path, LCLOUD_PG_PROBE_FLAGS, &p);
	if (r < 0)
		h.probe_error = r;
	else if (job->kind == ANSWER_JOB_ALLOCATION_UNIT)
		h.allocation_unit = allocation_unit_in_the_way(ctx, p, job->size);
	else
	{
		enum lcloud_io_path verdict_path;

		fs = filesystem_layer(p);
		h.check_result = lcloud_probe_check(p, job->io_path, job->size, &decided, why, sizeof(why));
		h.decided = decided;
		verdict_path = h.check_result >= 0 ? decided : job->io_path;
		if (verdict_path != LCLOUD_PATH_BEST)
			v = lcloud_probe_get_verdict(p, verdict_path);
		if (v)
		{
			h.has_verdict = 1;
			h.max_untorn_bytes = lcloud_verdict_get_max_untorn_bytes(v);
		}
	}
	h.string_count = FIXED_STRINGS + (v ? lcloud_verdict_get_reason_count(v) : 0);
	bounded_reply_put(out, &h, sizeof(h));
	put_string(out, why);
	put_string(out, fs ? string_fact(fs, "fstype") : NULL);
	put_string(out, fs ? string_fact(fs, "mount_point") : NULL);
	put_string(out, fs ? string_fact(fs, "mount_source") : NULL);
	for (unsigned int i = 0; v && i < lcloud_verdict_get_reason_count(v); i++)
		put_string(out, lcloud_verdict_get_reason_evidence(v, i));
	lcloud_probe_free(p);
	lcloud_ctx_free(ctx);
}

/* In the server again: the reply taken apart, every length checked. */
static bool
decode_reply(const struct bounded_reply *reply, AnswerReplyHeader *h, char ***strings)
{
	size_t		at = sizeof(*h);

	if (reply->len < sizeof(*h))
		return false;
	memcpy(h, reply->data, sizeof(*h));
	if (h->string_count < FIXED_STRINGS || h->string_count > reply->len)
		return false;
	*strings = palloc0(sizeof(char *) * h->string_count);
	for (uint32 i = 0; i < h->string_count; i++)
	{
		uint32		len;

		if (reply->len - at < sizeof(len))
			return false;
		memcpy(&len, reply->data + at, sizeof(len));
		at += sizeof(len);
		if (len == NO_STRING)
			continue;
		if (reply->len - at < len)
			return false;
		(*strings)[i] = pnstrdup(reply->data + at, len);
		at += len;
	}
	return at == reply->len;
}

/*
 * Runs JOB in a probe child within lcloud.probe_timeout. False, with *WHY,
 * when it gave no answer: timed out, stopped, or failed.
 */
static bool
run_answer_job(const AnswerJob *job, AnswerReplyHeader *h, char ***strings, LcloudProbeOutcome *outcome,
			   char **why)
{
	struct bounded_reply reply = {0};

	PG_TRY();
	{
		*outcome = lcloud_run_bounded(answer_job, job, &reply, why);
	}
	PG_CATCH();
	{
		free(reply.data);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (*outcome == LCLOUD_PROBE_DONE && !decode_reply(&reply, h, strings))
	{
		*outcome = LCLOUD_PROBE_FAILED;
		*why = pstrdup("the probe process ended without an answer");
	}
	free(reply.data);
	return *outcome == LCLOUD_PROBE_DONE;
}

void
lcloud_answer_for(const char *path, uint32 size, enum lcloud_io_path io_path, LcloudAnswer *ret)
{
	AnswerJob	job = {ANSWER_JOB_VERDICT, path, size, io_path};
	AnswerReplyHeader h;
	LcloudProbeOutcome outcome;
	char	  **strings;
	char	   *why;
	int			r;

	memset(ret, 0, sizeof(*ret));
	ret->io_path = io_path;
	ret->answer = LCLOUD_ANSWER_UNKNOWN;
	if (!run_answer_job(&job, &h, &strings, &outcome, &why))
	{
		ret->timed_out = outcome == LCLOUD_PROBE_TIMED_OUT;
		ret->stopped = outcome == LCLOUD_PROBE_STOPPED;
		ret->reason = psprintf("could not probe %s: %s", path, why);
		return;
	}
	if (h.probe_error < 0)
	{
		const char *hint = probe_error_hint(-h.probe_error);

		ret->reason = psprintf("could not probe %s: %s%s%s", path, strerror(-h.probe_error), hint ? ": " : "",
							   hint ? hint : "");
		return;
	}
	ret->probed = true;
	ret->filesystem = strings[1];
	ret->mount_point = strings[2];
	ret->device = strings[3];
	r = h.check_result;
	if (r == -ERANGE)
		ret->reason = psprintf("%u-byte writes are larger than %s itself", size, path);
	else if (r < 0)
		ret->reason = psprintf("could not decide for %s: %s", path, strerror(-r));
	else
	{
		ret->answer = (enum lcloud_answer) r;
		ret->io_path = (enum lcloud_io_path) h.decided;
		ret->reason = strings[0] ? strings[0] : pstrdup("");
	}
	if (ret->io_path == LCLOUD_PATH_BEST || !h.has_verdict)
		return;
	ret->max_untorn_bytes = h.max_untorn_bytes;
	for (uint32 i = FIXED_STRINGS; i < h.string_count; i++)
	{
		const char *e = strings[i];
		ListCell   *lc;
		bool		seen = false;

		if (!e || !*e)
			continue;
		foreach(lc, ret->evidence)
			if (strcmp((char *) lfirst(lc), e) == 0)
				seen = true;
		if (!seen)
			ret->evidence = lappend(ret->evidence, (char *) e);
	}
}

/* The allocation unit in the way of whole pages under PATH (see above), or 0, also when not told in time. */
static uint64
allocation_unit_under(const char *path, uint32 size)
{
	AnswerJob	job = {ANSWER_JOB_ALLOCATION_UNIT, path, size, LCLOUD_PATH_PLAIN_DIRECT};
	AnswerReplyHeader h;
	LcloudProbeOutcome outcome;
	char	  **strings;
	char	   *why;

	if (!run_answer_job(&job, &h, &strings, &outcome, &why) || h.probe_error < 0)
		return 0;
	return h.allocation_unit;
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
	if (direct.timed_out || direct.stopped)
		return out;				/* the same file system would not answer again */
	unit = allocation_unit_under(path, size);
	if (unit)
		out = psprintf("%s; the device keeps %u-byte writes whole, but %s allocates in %llu-byte units: a "
					   "file system that allocates whole pages fixes that, e.g. 'mkfs.ext4 -O bigalloc -C %u' "
					   "or 'mkfs.xfs -b size=%u'", out, size, direct.filesystem ? direct.filesystem : "the file system",
					   (unsigned long long) unit, size, size);
	return out;
}
