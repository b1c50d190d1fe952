/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A probe in a forked child, its reply on a pipe, and the children given up
 * on (bounded_probe.h says why a child): shared by the PostgreSQL extension
 * and the MariaDB plugin, built into each. The server process may have many
 * threads when it forks (mariadbd); the child runs only liblcloud and libc
 * (glibc's fork leaves malloc usable), and a child that stalls on a lock
 * another thread held at fork time is just a probe that did not answer in
 * time.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bounded_probe.h"

#ifndef SYS_close_range
#define SYS_close_range 436 /* Linux 5.9, the same number on every architecture */
#endif

/* The descriptor the child writes its reply to. */
#define REPLY_FD 3

/* Children given up on; each server process has its own list (one prober thread at a time uses it). */
static pid_t abandoned[BOUNDED_MAX_ABANDONED];
static int abandoned_count;

/* Reaps the children whose file system answered since; returns how many still wait. */
static int reap_abandoned(void)
{
	int kept = 0;

	for (int i = 0; i < abandoned_count; i++) {
		pid_t r = waitpid(abandoned[i], NULL, WNOHANG);

		if (r == 0 || (r < 0 && errno == EINTR))
			abandoned[kept++] = abandoned[i];
		/* otherwise reaped, or not ours to reap any more (ECHILD) */
	}
	abandoned_count = kept;
	return kept;
}

/* From here to run_child(): the child. */

void bounded_reply_put(struct bounded_reply *out, const void *data, size_t len)
{
	if (out->len + len > out->cap) {
		size_t cap = out->cap ? out->cap : 1024;
		char *more;

		while (cap < out->len + len)
			cap *= 2;
		more = realloc(out->data, cap);
		if (!more)
			_exit(3); /* the server sees a probe that ended without an answer */
		out->data = more;
		out->cap = cap;
	}
	memcpy(out->data + out->len, data, len);
	out->len += len;
}

static void exit_on_signal(int signo)
{
	_exit(2);
}

/* Everything the server's process had that the child must not keep or act on. */
static void become_plain_child(int reply_fd)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL }, quit = { .sa_handler = exit_on_signal };
	sigset_t none;
	int null_fd;

	/*
	 * The server's handlers act on its state (PostgreSQL's latch and shared
	 * memory); a postmaster signals the backend's whole process group at
	 * shutdown, this child included, which should then just end.
	 */
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			(void)sigaction(s, s == SIGQUIT ? &quit : &dfl, NULL);
	sigemptyset(&none);
	(void)pthread_sigmask(SIG_SETMASK, &none, NULL);

	/*
	 * Client sockets, the server's pipes, data files, the error log on
	 * standard error (PostgreSQL's logging collector lives until every
	 * writer is gone): none may stay open in a process that can outlive the
	 * server. liblcloud writes nothing there.
	 */
	if (reply_fd != REPLY_FD && dup2(reply_fd, REPLY_FD) < 0)
		_exit(4);
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

static _Noreturn void run_child(int reply_fd, bounded_job job, const void *arg, void (*child_setup)(void))
{
	struct bounded_reply out = { 0 };
	size_t done = 0;

	become_plain_child(reply_fd);
	if (child_setup)
		child_setup();
	job(arg, &out);
	while (done < out.len) {
		ssize_t n = write(REPLY_FD, out.data + done, out.len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(5);
		done += (size_t)n;
	}
	_exit(0);
}

/* In the server again. */

int bounded_start(bounded_job job, const void *arg, void (*child_setup)(void), struct bounded_child *ret)
{
	sigset_t all, old;
	int fds[2], err;
	pid_t pid;

	ret->pid = -1;
	ret->fd = -1;
	if (reap_abandoned() >= BOUNDED_MAX_ABANDONED)
		return -EBUSY;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	/* no server signal handler may run in the child before it has reset them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0)
		run_child(fds[1], job, arg, child_setup);
	err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return -err;
	}
	ret->pid = pid;
	ret->fd = fds[0];
	if (fcntl(ret->fd, F_SETFL, O_NONBLOCK) < 0) {
		err = errno;
		bounded_end(ret, true);
		return -err;
	}
	return 0;
}

int bounded_read(struct bounded_child *c, struct bounded_reply *reply, size_t max)
{
	char buf[8192];

	for (;;) {
		ssize_t n = read(c->fd, buf, sizeof(buf));

		if (n == 0)
			return 1;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		if ((size_t)n > max - reply->len)
			return -EMSGSIZE;
		if (reply->len + (size_t)n > reply->cap) {
			size_t cap = reply->cap ? reply->cap : sizeof(buf);
			char *more;

			while (cap < reply->len + (size_t)n)
				cap *= 2;
			more = realloc(reply->data, cap);
			if (!more)
				return -ENOMEM;
			reply->data = more;
			reply->cap = cap;
		}
		memcpy(reply->data + reply->len, buf, (size_t)n);
		reply->len += (size_t)n;
	}
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int bounded_wait(struct bounded_child *c, struct bounded_reply *reply, size_t max, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;

	for (;;) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		int64_t left;
		int r = bounded_read(c, reply, max);

		if (r != 0)
			return r > 0 ? 0 : r;
		left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
	}
}

void bounded_end(struct bounded_child *c, bool kill_it)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->pid <= 0)
		return;
	if (kill_it)
		(void)kill(c->pid, SIGKILL);
	if (waitpid(c->pid, NULL, WNOHANG) == 0 && abandoned_count < BOUNDED_MAX_ABANDONED)
		abandoned[abandoned_count++] = c->pid;
	/* else: reaped, or reparented to init when the server process exits, which reaps it */
	c->pid = -1;
}
