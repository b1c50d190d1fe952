/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * liblcloud's answer for one path, page size and I/O path, asked in a
 * forked child process and waited for on a pipe for at most the plugin's
 * probe timeout, as the PostgreSQL extension does (its bounded_probe.c):
 * a frozen file system puts the probe's O_TMPFILE open into uninterruptible
 * sleep until thaw, and the server must neither hang at startup nor in the
 * refresh thread. A child and not a thread: a thread in that sleep cannot be
 * ended and would hold the server's exit. A child left waiting is sent
 * SIGKILL, which takes effect when the file system answers.
 *
 * mariadbd has many threads when the child is forked; the child only runs
 * liblcloud (glibc's fork leaves malloc usable) and never a server
 * function, and a child that stalls on a lock another thread held at fork
 * time is just a probe that did not answer in time: "unknown".
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
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lcloud_mariadb.h"

#ifndef SYS_close_range
#define SYS_close_range 436 /* Linux 5.9, the same number on every architecture */
#endif

/* The fd the reply is written to in the child. */
#define REPLY_FD 3

/*
 * What the child sends: one write of this fixed size, below PIPE_BUF, so it
 * arrives whole or not at all.
 */
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
_Static_assert(sizeof(struct child_reply) <= 4096, "one pipe write must carry the whole reply");

static void copy_string(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* The functions from here to run_child() run in the child: liblcloud and libc only. */

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

/* Nothing of the server's may stay with a child that can outlive it: descriptors, handlers, mask. */
static void become_plain_child(int reply_fd)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int null_fd;

	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			(void)sigaction(s, &dfl, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	if (reply_fd != REPLY_FD && dup2(reply_fd, REPLY_FD) < 0)
		_exit(4);
	/* the server's error log is on standard error: liblcloud writes nothing there */
	null_fd = open("/dev/null", O_RDWR);
	for (int fd = 0; fd <= 2; fd++)
		if (null_fd < 0 || dup2(null_fd, fd) < 0)
			(void)close(fd);
	if (syscall(SYS_close_range, REPLY_FD + 1, ~0U, 0) < 0) {
		long max = sysconf(_SC_OPEN_MAX);

		for (long fd = REPLY_FD + 1; fd < (max > 0 ? max : 65536); fd++)
			(void)close((int)fd);
	}
}

static _Noreturn void run_child(int reply_fd, const char *path, uint64_t size, enum lcloud_io_path io_path)
{
	static struct child_reply r; /* static: the child's stack is a thread's, of unknown size */
	size_t done = 0;

	become_plain_child(reply_fd);
	probe_in_child(path, size, io_path, &r);
	while (done < sizeof(r)) {
		ssize_t n = write(REPLY_FD, (const char *)&r + done, sizeof(r) - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(5);
		done += (size_t)n;
	}
	_exit(0);
}

/* In the server again; md_answer_for() is called by one thread at a time (plugin.c). */

/* Children left waiting for a file system; beyond this many, no new probe starts. */
#define MAX_ABANDONED 16
static pid_t abandoned[MAX_ABANDONED];
static int abandoned_count;

/* Reaps the children whose file system answered since; returns how many still wait. */
static int reap_abandoned(void)
{
	int kept = 0;

	for (int i = 0; i < abandoned_count; i++) {
		pid_t r = waitpid(abandoned[i], NULL, WNOHANG);

		if (r == 0 || (r < 0 && errno == EINTR))
			abandoned[kept++] = abandoned[i];
	}
	abandoned_count = kept;
	return kept;
}

/* Killed, it dies when its system call returns, and is reaped then (or by init after the server). */
static void abandon(pid_t pid)
{
	if (waitpid(pid, NULL, WNOHANG) != 0)
		return;
	if (abandoned_count < MAX_ABANDONED)
		abandoned[abandoned_count++] = pid;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 0 with the whole reply, -ETIMEDOUT, or another -errno. */
static int read_reply(int fd, struct child_reply *r, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	size_t got = 0;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - now_ms();
		ssize_t n;
		int ready;

		if (left <= 0)
			return -ETIMEDOUT;
		ready = poll(&pfd, 1, (int)left);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0)
			return -errno;
		if (ready == 0)
			return -ETIMEDOUT;
		n = read(fd, (char *)r + got, sizeof(*r) - got);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return got == sizeof(*r) ? 0 : -EPROTO;
		got += (size_t)n;
		if (got == sizeof(*r))
			return 0;
	}
}

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
	struct child_reply r;
	sigset_t all, old;
	int fds[2], err;
	pid_t pid;

	memset(ret, 0, sizeof(*ret));
	memset(&r, 0, sizeof(r));
	ret->answer = LCLOUD_ANSWER_UNKNOWN;
	if (reap_abandoned() >= MAX_ABANDONED) {
		snprintf(ret->reason, sizeof(ret->reason), "could not probe %s: %d earlier probes still wait for "
			 "their file systems", path, MAX_ABANDONED);
		return;
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		snprintf(ret->reason, sizeof(ret->reason), "could not probe %s: no pipe: %s", path, strerror(errno));
		return;
	}
	/* no server signal handler may run in the child before it has reset them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0)
		run_child(fds[1], path, size, io_path);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(fds[1]);
	if (pid < 0) {
		snprintf(ret->reason, sizeof(ret->reason), "could not probe %s: could not start the probe process: %s",
			 path, strerror(errno));
		close(fds[0]);
		return;
	}
	err = read_reply(fds[0], &r, timeout_ms);
	close(fds[0]);
	if (err < 0) {
		(void)kill(pid, SIGKILL);
		abandon(pid);
	} else {
		/* the reply is whole: the child is exiting */
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
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
