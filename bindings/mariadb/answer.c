/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * liblcloud's answer for one path, page size and I/O path, asked in a
 * forked child process and waited for on a pipe for at most the plugin's
 * probe timeout (../common/bounded_probe.c, shared with the PostgreSQL
 * extension): a frozen file system puts the probe's O_TMPFILE open into
 * uninterruptible sleep until thaw, and the server must neither hang at
 * startup nor in the refresh thread.
 *
 * A memory file system (tmpfs, ramfs) has no device below it: liblcloud
 * says "no" there, true of its writes, but a power loss erases every file,
 * torn pages or not: what doublewrite protects against does not arise, so
 * the answer is "unknown", with what to do. Decided on the
 * file system's type fact, never on the wording of a reason.
 *
 * The probe runs as the server's user: evidence only a privileged reader
 * gets (the probe's "needs-root" note; NVMe Identify needs the namespace
 * open) leaves an "unknown" whose liblcloud reason says to run as root,
 * which a server cannot; the plugin adds what a DBA can do instead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounded_probe.h"
#include "lcloud_mariadb.h"

/* What the child sends: this, whole, or it is no answer. */
struct child_reply {
	int32_t probe_error;  /* -errno from lcloud_ctx_new() or lcloud_probe_path(); 0 */
	int32_t check_result; /* lcloud_probe_check()'s return */
	uint64_t max_untorn_bytes;
	int32_t has_verdict;
	int32_t in_memory;    /* the file system keeps its files in memory: no device below */
	int32_t needs_privilege; /* some evidence was not read for lack of privileges */
	char reason[1536];
	char filesystem[64];
	char mount_point[512];
	char device[512];
};

static void copy_string(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* The functions from here to probe_job_run() run in the child: liblcloud and libc only. */

/* File systems whose files live in memory, with no block device below (the kernel's type names). */
static bool is_memory_file_system(const char *fstype)
{
	static const char *const memory[] = { "tmpfs", "ramfs" };

	for (size_t i = 0; fstype && i < sizeof(memory) / sizeof(memory[0]); i++)
		if (strcmp(fstype, memory[i]) == 0)
			return true;
	return false;
}

static const struct lcloud_layer *filesystem_layer(const struct lcloud_probe *p)
{
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++)
		if (lcloud_layer_get_kind(lcloud_probe_get_layer(p, i)) == LCLOUD_LAYER_FILESYSTEM)
			return lcloud_probe_get_layer(p, i);
	return NULL;
}

static const char *string_fact(const struct lcloud_layer *l, const char *name)
{
	return l ? lcloud_fact_get_string(lcloud_layer_find_fact(l, name)) : NULL;
}

static void probe_in_child(const char *path, uint64_t size, enum lcloud_io_path io_path, struct child_reply *r)
{
	struct lcloud_ctx *ctx = NULL;
	struct lcloud_probe *p = NULL;
	const struct lcloud_verdict *v;
	const struct lcloud_layer *fs;
	int ret;

	/* no signatures: libblkid opens the block device, which the server's user may not */
	ret = lcloud_ctx_new(&ctx);
	if (ret >= 0)
		ret = lcloud_probe_path(ctx, path, LCLOUD_PROBE_NO_SIGNATURES, &p);
	if (ret < 0) {
		r->probe_error = ret;
		lcloud_ctx_free(ctx);
		return;
	}
	fs = filesystem_layer(p);
	copy_string(r->filesystem, sizeof(r->filesystem), string_fact(fs, "fstype"));
	copy_string(r->mount_point, sizeof(r->mount_point), string_fact(fs, "mount_point"));
	copy_string(r->device, sizeof(r->device), string_fact(fs, "mount_source"));
	r->in_memory = is_memory_file_system(string_fact(fs, "fstype"));
	for (unsigned int i = 0; i < lcloud_probe_get_note_count(p); i++)
		if (strcmp(lcloud_note_get_code(lcloud_probe_get_note(p, i)) ?: "", "needs-root") == 0)
			r->needs_privilege = 1;
	r->check_result = lcloud_probe_check(p, io_path, size, NULL, r->reason, sizeof(r->reason));
	v = lcloud_probe_get_verdict(p, io_path);
	if (v) {
		r->has_verdict = 1;
		r->max_untorn_bytes = lcloud_verdict_get_max_untorn_bytes(v);
	}
	lcloud_probe_free(p);
	lcloud_ctx_free(ctx);
}

/* The job the child runs (bounded_probe.h): liblcloud and libc only. */
struct probe_job {
	const char *path;
	uint64_t size;
	enum lcloud_io_path io_path;
};

static void probe_job_run(const void *arg, struct bounded_reply *out)
{
	static struct child_reply r; /* static: the child's stack is a thread's, of unknown size */
	const struct probe_job *job = arg;

	probe_in_child(job->path, job->size, job->io_path, &r);
	bounded_reply_put(out, &r, sizeof(r));
}

/* In the server again; md_answer_for() is called by one thread at a time (plugin.c). */

static const char *probe_error_hint(int err)
{
	switch (err) {
	case ENOENT:
		return "the path does not exist";
	case ENOTDIR:
		return "a component of the path is not a directory";
	case EACCES:
	case EPERM:
		return "the server's operating system user may not search a folder on the way";
	default:
		return NULL;
	}
}

void md_answer_for(const char *path, uint64_t size, enum lcloud_io_path io_path, int timeout_ms,
		   struct md_answer *ret)
{
	const struct probe_job job = { path, size, io_path };
	struct bounded_reply reply = { 0 };
	struct bounded_child child;
	struct child_reply r;
	int err;

	memset(ret, 0, sizeof(*ret));
	ret->answer = LCLOUD_ANSWER_UNKNOWN;
	err = bounded_start(probe_job_run, &job, NULL, &child);
	if (err == -EBUSY) {
		snprintf(ret->reason, sizeof(ret->reason), "could not probe %s: %d earlier probes still wait for "
			 "their file systems", path, BOUNDED_MAX_ABANDONED);
		return;
	}
	if (err < 0) {
		snprintf(ret->reason, sizeof(ret->reason), "could not probe %s: could not start the probe process: %s",
			 path, strerror(-err));
		return;
	}
	err = bounded_wait(&child, &reply, sizeof(r), timeout_ms);
	bounded_end(&child, err < 0);
	if (!err && reply.len != sizeof(r))
		err = -EPROTO;
	if (!err)
		memcpy(&r, reply.data, sizeof(r));
	free(reply.data);
	if (err == -ETIMEDOUT) {
		ret->timed_out = true;
		snprintf(ret->reason, sizeof(ret->reason), "could not probe %s: the file system did not answer "
			 "within %d ms", path, timeout_ms);
		return;
	}
	if (err < 0) {
		snprintf(ret->reason, sizeof(ret->reason), "could not probe %s: the probe process sent no usable "
			 "answer (%s)", path, strerror(-err));
		return;
	}
	copy_string(ret->filesystem, sizeof(ret->filesystem), r.filesystem);
	copy_string(ret->mount_point, sizeof(ret->mount_point), r.mount_point);
	copy_string(ret->device, sizeof(ret->device), r.device);
	r.reason[sizeof(r.reason) - 1] = 0;
	if (r.probe_error < 0) {
		const char *hint = probe_error_hint(-r.probe_error);

		snprintf(ret->reason, sizeof(ret->reason), "could not probe %s: %s%s%s", path, strerror(-r.probe_error),
			 hint ? ": " : "", hint ? hint : "");
		return;
	}
	if (r.check_result == -ERANGE) {
		snprintf(ret->reason, sizeof(ret->reason), "%llu-byte writes are larger than %s itself",
			 (unsigned long long)size, path);
		return;
	}
	if (r.check_result < 0) {
		snprintf(ret->reason, sizeof(ret->reason), "could not decide for %s: %s", path,
			 strerror(-r.check_result));
		return;
	}
	if (r.in_memory) {
		snprintf(ret->reason, sizeof(ret->reason), "%s is on %s, a file system that keeps its files in memory "
			 "with no device below: a power loss erases them all, torn pages or not; put InnoDB's files on a "
			 "file system over a block device to have their page writes checked (liblcloud: %.900s)",
			 path, r.filesystem, r.reason);
		return;
	}
	ret->answer = (enum lcloud_answer)r.check_result;
	copy_string(ret->reason, sizeof(ret->reason), r.reason);
	if (ret->answer == LCLOUD_ANSWER_UNKNOWN && r.needs_privilege) {
		size_t used = strlen(ret->reason);

		snprintf(ret->reason + used, sizeof(ret->reason) - used, "; the server's user may not read this "
			 "evidence: let it read the device (e.g. a udev rule GROUP=\"mysql\", MODE=\"0640\"; "
			 "lcloud-mariadb(7)), or run 'lcloudctl advise --db mariadb' as root");
	}
	if (r.has_verdict)
		ret->max_untorn_bytes = r.max_untorn_bytes;
}
