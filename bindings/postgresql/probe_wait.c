/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runs a liblcloud probe in a forked child process and waits for its reply
 * on a pipe, for at most lcloud.probe_timeout, while the server process
 * stays responsive: a frozen file system (fsfreeze) puts the probe's
 * O_TMPFILE open, or any other write it needs, into uninterruptible sleep
 * until thaw, and a process in that sleep can neither be cancelled nor
 * terminated. The child is the one that sleeps; the backend or worker waits
 * on its latch and the pipe, so statement_timeout, a query cancel and a
 * shutdown request all end the wait. An abandoned child is sent SIGKILL,
 * which takes effect when the file system answers, and is reaped later.
 *
 * A child and not a thread: a thread in uninterruptible sleep cannot be
 * ended either, and the backend could not exit while it runs; a forked
 * child can simply be left behind. The child calls no PostgreSQL function
 * (an ERROR there would continue the backend's work in a copy of it): it
 * runs the job, which uses liblcloud and malloc only, writes the reply and
 * calls _exit().
 */
#include "lcloud_pg.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "miscadmin.h"
#include "postmaster/interrupt.h"
#include "storage/latch.h"
#include "storage/pg_shmem.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#ifndef SYS_close_range
#define SYS_close_range 436		/* Linux 5.9, the same number on every architecture */
#endif

/* The fd the reply is written to in the child. */
#define REPLY_FD 3
/* A reply larger than this is not one of ours. */
#define MAX_REPLY_BYTES (1024 * 1024)
/* Children left waiting for a file system; beyond this many, no new probe starts. */
#define MAX_ABANDONED 16

int			lcloud_probe_timeout_ms = LCLOUD_DEFAULT_PROBE_TIMEOUT_MS;

static pid_t abandoned[MAX_ABANDONED];
static int	abandoned_count;

/* Reaps the children whose file system answered since; returns how many still wait. */
static int
reap_abandoned(void)
{
	int			kept = 0;

	for (int i = 0; i < abandoned_count; i++)
	{
		pid_t		r = waitpid(abandoned[i], NULL, WNOHANG);

		if (r == 0 || (r < 0 && errno == EINTR))
			abandoned[kept++] = abandoned[i];
		/* otherwise reaped, or not ours to reap any more (ECHILD) */
	}
	abandoned_count = kept;
	return kept;
}

/* The child is no longer waited for: it dies when its system call returns. */
static void
abandon(pid_t pid, bool kill_it)
{
	if (kill_it)
		(void) kill(pid, SIGKILL);
	if (waitpid(pid, NULL, WNOHANG) != 0)
		return;
	if (abandoned_count < MAX_ABANDONED)
		abandoned[abandoned_count++] = pid;
	/* else: reparented to init when this process exits, which reaps it */
}

/*
 * In the child: a reply buffer of its own (malloc, not palloc). A failed
 * allocation makes the child exit without a reply, which the server sees as
 * a probe that ended without an answer.
 */
void
lcloud_reply_put(LcloudReply *out, const void *data, size_t len)
{
	if (out->len + len > out->cap)
	{
		size_t		cap = out->cap ? out->cap : 1024;
		char	   *more;

		while (cap < out->len + len)
			cap *= 2;
		more = realloc(out->data, cap);
		if (!more)
			_exit(3);
		out->data = more;
		out->cap = cap;
	}
	memcpy(out->data + out->len, data, len);
	out->len += len;
}

static void
child_exit_on_signal(int signo)
{
	_exit(2);
}

/* Everything the backend's process had that the child must not keep or act on. */
static void
become_plain_child(int reply_fd)
{
	sigset_t	none;
	struct sigaction dfl = {.sa_handler = SIG_DFL},
				quit = {.sa_handler = child_exit_on_signal};
	int			null_fd;

	/*
	 * The server's signal handlers act on the backend's latch and state in
	 * shared memory; the postmaster signals the backend's whole process
	 * group at shutdown, this child included, which should then just end.
	 */
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			(void) sigaction(s, s == SIGQUIT ? &quit : &dfl, NULL);
	sigemptyset(&none);
	(void) sigprocmask(SIG_SETMASK, &none, NULL);

	/*
	 * The client's socket, the postmaster's pipes, relation files, the log
	 * pipe on standard error (whose reader, the logging collector, lives
	 * until every writer is gone): none of them may stay open in a process
	 * that can outlive the backend. liblcloud writes nothing there.
	 */
	if (reply_fd != REPLY_FD && dup2(reply_fd, REPLY_FD) < 0)
		_exit(4);
	null_fd = open("/dev/null", O_RDWR);
	for (int fd = 0; fd <= 2; fd++)
		if (null_fd < 0 || dup2(null_fd, fd) < 0)
			(void) close(fd);
	if (syscall(SYS_close_range, REPLY_FD + 1, ~0U, 0) < 0)
	{
		long		max = sysconf(_SC_OPEN_MAX);

		for (long fd = REPLY_FD + 1; fd < (max > 0 ? max : 65536); fd++)
			(void) close((int) fd);
	}

	/*
	 * Leave the System V segment that tells a starting postmaster whether
	 * processes of an old server are still alive: a child stuck on a frozen
	 * file system must not keep a restarted server from starting.
	 */
	if (UsedShmemSegAddr != NULL)
		(void) shmdt(UsedShmemSegAddr);
}

static void
write_reply_and_exit(const LcloudReply *out)
{
	size_t		done = 0;

	while (done < out->len)
	{
		ssize_t		n = write(REPLY_FD, out->data + done, out->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(5);
		done += (size_t) n;
	}
	_exit(0);
}

/* "10 s", or "1500 ms" when not whole seconds. */
char *
lcloud_probe_timeout_text(void)
{
	if (lcloud_probe_timeout_ms % 1000 == 0)
		return psprintf("%d s", lcloud_probe_timeout_ms / 1000);
	return psprintf("%d ms", lcloud_probe_timeout_ms);
}

/*
 * Reads the reply until the child closes the pipe, the timeout passes, or
 * the process is asked to stop. A query cancel, statement_timeout or
 * termination of a backend raises its ERROR or FATAL in
 * CHECK_FOR_INTERRUPTS(); a worker's shutdown request returns STOPPED.
 */
static LcloudProbeOutcome
wait_for_reply(int fd, StringInfo reply)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), lcloud_probe_timeout_ms);
	char		buf[8192];

	for (;;)
	{
		ssize_t		n = read(fd, buf, sizeof(buf));
		long		left;

		if (n > 0)
		{
			if (reply->len + n > MAX_REPLY_BYTES)
				return LCLOUD_PROBE_FAILED;
			appendBinaryStringInfo(reply, buf, (int) n);
			continue;
		}
		if (n == 0)
			return LCLOUD_PROBE_DONE;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return LCLOUD_PROBE_FAILED;

		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);
		if (left <= 0)
			return LCLOUD_PROBE_TIMED_OUT;
		if (WaitLatchOrSocket(MyLatch, WL_LATCH_SET | WL_SOCKET_READABLE | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							  fd, left, PG_WAIT_EXTENSION) & WL_LATCH_SET)
		{
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			if (ShutdownRequestPending)
				return LCLOUD_PROBE_STOPPED;
		}
	}
}

LcloudProbeOutcome
lcloud_run_bounded(LcloudChildJob job, const void *arg, StringInfo reply, char **why)
{
	int			fds[2];
	sigset_t	all,
				old;
	pid_t		pid;
	volatile int read_fd;
	LcloudProbeOutcome outcome;

	*why = NULL;
	if (reap_abandoned() >= MAX_ABANDONED)
	{
		*why = psprintf("%d earlier probes of this server process still wait for their file systems",
						MAX_ABANDONED);
		return LCLOUD_PROBE_FAILED;
	}
	if (pipe2(fds, O_CLOEXEC) < 0)
	{
		*why = psprintf("could not make a pipe for the probe: %s", strerror(errno));
		return LCLOUD_PROBE_FAILED;
	}

	/* No server signal handler may run in the child before it has its own. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0)
	{
		LcloudReply out = {0};

		become_plain_child(fds[1]);
		job(arg, &out);
		write_reply_and_exit(&out);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(fds[1]);
	if (pid < 0)
	{
		*why = psprintf("could not start the probe process: %s", strerror(errno));
		close(fds[0]);
		return LCLOUD_PROBE_FAILED;
	}
	read_fd = fds[0];
	if (fcntl(read_fd, F_SETFL, O_NONBLOCK) < 0)
	{
		*why = psprintf("could not wait for the probe process: %s", strerror(errno));
		close(read_fd);
		abandon(pid, true);
		return LCLOUD_PROBE_FAILED;
	}

	PG_TRY();
	{
		outcome = wait_for_reply(read_fd, reply);
	}
	PG_CATCH();
	{
		/* cancelled or timed out by the statement: leave the child behind */
		close(read_fd);
		abandon(pid, true);
		PG_RE_THROW();
	}
	PG_END_TRY();
	close(read_fd);
	abandon(pid, outcome != LCLOUD_PROBE_DONE);
	if (outcome == LCLOUD_PROBE_TIMED_OUT)
		*why = psprintf("the file system did not answer within %s", lcloud_probe_timeout_text());
	else if (outcome == LCLOUD_PROBE_STOPPED)
		*why = pstrdup("the check was stopped: the server is shutting down");
	else if (outcome == LCLOUD_PROBE_FAILED)
		*why = pstrdup("the probe process sent no usable answer");
	return outcome;
}
