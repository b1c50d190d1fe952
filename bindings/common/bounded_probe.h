/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A liblcloud probe in a forked child, waited for with a bound: the one
 * piece the PostgreSQL extension and the MariaDB plugin share (each builds
 * this folder's bounded_probe.c into its module). A frozen file system
 * (fsfreeze) puts the probe's O_TMPFILE open, or any other write it needs,
 * into uninterruptible sleep until thaw; a thread in that sleep can neither
 * be ended nor let the server exit, a child can be left behind. The server
 * process waits on the pipe (its own way: PostgreSQL on its latch, MariaDB
 * with bounded_wait()) and gives up at its timeout.
 *
 * libc only: no server header, so that both builds take it as it is. The
 * functions are hidden in the module that links them.
 */
#ifndef LCLOUD_BOUNDED_PROBE_H
#define LCLOUD_BOUNDED_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define BOUNDED_HIDDEN __attribute__((visibility("hidden")))

/* Children left waiting for a file system; beyond this many, no new probe starts (-EBUSY). */
#define BOUNDED_MAX_ABANDONED 16

/* The child's reply, in malloc'd memory (the child may not use a server's allocator). */
struct bounded_reply {
	char *data;
	size_t len;
	size_t cap;
};

/*
 * What the child runs: liblcloud and libc only, never a server function (an
 * error raised there would continue the server's work in a copy of it).
 * It writes its reply with bounded_reply_put().
 */
typedef void (*bounded_job)(const void *arg, struct bounded_reply *out);

/* In the child: appends to the reply; a failed allocation ends the child without one. */
BOUNDED_HIDDEN void bounded_reply_put(struct bounded_reply *out, const void *data, size_t len);

struct bounded_child {
	pid_t pid;
	int fd; /* the pipe's end to read the reply from; non-blocking */
};

/*
 * Forks the child that runs JOB(ARG): every signal handler back to its
 * default (SIGQUIT ends it at once), every descriptor but the reply's
 * closed, then CHILD_SETUP (NULL: nothing more), the job, the reply written
 * and _exit(). 0 and *RET, or -errno: -EBUSY when BOUNDED_MAX_ABANDONED
 * earlier children still wait for their file systems.
 */
BOUNDED_HIDDEN int bounded_start(bounded_job job, const void *arg, void (*child_setup)(void),
				 struct bounded_child *ret);

/*
 * Reads what the pipe holds into REPLY, at most MAX bytes in all: 1 when
 * the child closed it (the reply is whole), 0 when more may come,
 * -EMSGSIZE past MAX, another -errno on failure.
 */
BOUNDED_HIDDEN int bounded_read(struct bounded_child *c, struct bounded_reply *reply, size_t max);

/*
 * Waits with poll() until the reply is whole (0), TIMEOUT_MS passed
 * (-ETIMEDOUT) or reading failed (-errno), for a server with no wait of its
 * own to use.
 */
BOUNDED_HIDDEN int bounded_wait(struct bounded_child *c, struct bounded_reply *reply, size_t max, int timeout_ms);

/*
 * Done with the child: the pipe closed; with KILL (no whole reply) it is
 * sent SIGKILL, which takes effect when its file system answers. Reaped now
 * if it has ended, else by a later bounded_start() (or by init after the
 * server).
 */
BOUNDED_HIDDEN void bounded_end(struct bounded_child *c, bool kill);

#endif /* LCLOUD_BOUNDED_PROBE_H */
