/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guard's questions about other file systems, asked in a child with a
 * time bound (bounded_query.h). The child is a copy of this process made
 * by clone() without an exit signal, so a program using the library gets no
 * SIGCHLD and its waitpid(-1) never reaps it; it keeps nothing open but its
 * pipe and the devices it asks about (a child stuck in a dead file system
 * must not keep the caller's claims alive), dies with its parent, and only
 * makes system calls. Each answer is one write to the pipe, shorter than
 * PIPE_BUF, so the parent reads whole answers. A question not answered in
 * time is given up: the child is killed (a request still queued to a FUSE
 * server lets it die; one the server took may hold it until the server
 * answers or is aborted, and then it is left to finish on its own).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "bounded_query.h"

#ifndef __NR_close_range
#define __NR_close_range 436 /* Linux 5.9, the same number on every architecture */
#endif

struct bq_answer {
	uint32_t index;
	int32_t err;
	struct bq_stat st;
	struct bq_loop loop;
	uint32_t value_len;
	char value[BQ_VALUE_MAX];
};
_Static_assert(sizeof(struct bq_answer) <= 4096, "one answer is one atomic pipe write (PIPE_BUF)");

/* Insertion sort: the child calls nothing that may allocate. */
static void sort_fds(int *fds, unsigned int n)
{
	for (unsigned int i = 1; i < n; i++)
		for (unsigned int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int t = fds[j];

			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
}

/* In the child: everything closed but KEEP (sorted); close_range, or close() up to a limit on old kernels. */
static void close_all_but(const int *keep, unsigned int n)
{
	unsigned int lo = 0;

	for (unsigned int i = 0; i <= n; i++) {
		unsigned int hi = i < n ? (unsigned int)keep[i] : ~0u;

		if (hi > lo && syscall(__NR_close_range, lo, hi - 1, 0) < 0)
			for (unsigned int fd = lo; fd < hi && fd < 4096; fd++)
				close((int)fd);
		lo = hi + 1;
	}
}

static void answer(const struct bq_item *it, struct bq_answer *a)
{
	struct loop_info64 info;
	struct stat st;
	ssize_t len;

	switch (it->op) {
	case BQ_STAT:
		if (stat(it->path, &st) < 0) {
			a->err = -errno;
			return;
		}
		a->st = (struct bq_stat){ .dev = st.st_dev, .ino = st.st_ino, .rdev = st.st_rdev,
					  .size = (uint64_t)st.st_size, .mode = st.st_mode };
		return;
	case BQ_LOOP_STATUS:
		if (ioctl(it->fd, LOOP_GET_STATUS64, &info) < 0) {
			a->err = -errno;
			return;
		}
		a->loop = (struct bq_loop){ .dev = info.lo_device, .ino = info.lo_inode, .rdev = info.lo_rdevice,
					    .offset = info.lo_offset, .sizelimit = info.lo_sizelimit };
		return;
	case BQ_XATTR:
		len = lgetxattr(it->path, it->name, a->value, sizeof(a->value));
		if (len < 0) {
			a->err = -errno;
			return;
		}
		a->value_len = (uint32_t)len;
		return;
	}
	a->err = -EINVAL;
}

static __attribute__((noreturn)) void child(struct bq_item *items, unsigned int start, unsigned int n, int out)
{
	int keep[64];
	unsigned int n_keep = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	keep[n_keep++] = out;
	for (unsigned int i = start; i < n && n_keep < 64; i++)
		if (items[i].op == BQ_LOOP_STATUS && items[i].fd >= 0)
			keep[n_keep++] = items[i].fd;
	sort_fds(keep, n_keep);
	close_all_but(keep, n_keep);
	for (unsigned int i = start; i < n; i++) {
		struct bq_answer a;

		memset(&a, 0, sizeof(a));
		a.index = i;
		answer(&items[i], &a);
		if (write(out, &a, sizeof(a)) != (ssize_t)sizeof(a))
			_exit(1);
	}
	_exit(0);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Reaps PID. A child that gave every answer only exits: waited for. After a kill, a little only: a child
 * stuck in a file system is left to end on its own.
 */
static void reap(pid_t pid, bool killed)
{
	for (int i = 0; i < 50; i++) {
		pid_t r = waitpid(pid, NULL, __WALL | (killed ? WNOHANG : 0));

		if (r == pid || (r < 0 && errno != EINTR))
			return;
		if (r == 0)
			usleep(2000);
	}
}

/* One whole answer from FD within TIMEOUT_MS: 1, 0 on timeout, -EIO when the child ended without it. */
static int read_answer(int fd, struct bq_answer *a, int timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;
	size_t got = 0;

	while (got < sizeof(*a)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = end - now_ms();
		ssize_t n;
		int r;

		if (left <= 0)
			return 0;
		r = poll(&p, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -EIO;
		if (r == 0)
			return 0;
		n = read(fd, (char *)a + got, sizeof(*a) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		got += (size_t)n;
	}
	return 1;
}

int bq_run(struct bq_item *items, unsigned int n, int timeout_ms)
{
	unsigned int start = 0;

	for (unsigned int i = 0; i < n; i++)
		items[i].err = 0;
	while (start < n) {
		unsigned int next = start;
		bool killed = false;
		int fds[2];
		pid_t pid;

		if (pipe2(fds, O_CLOEXEC) < 0)
			goto failed;
		/* a copy of this process with no exit signal: no SIGCHLD, invisible to waitpid(-1) without __WALL */
		pid = (pid_t)syscall(SYS_clone, 0UL, NULL, NULL, NULL, 0UL);
		if (pid < 0) {
			close(fds[0]);
			close(fds[1]);
			goto failed;
		}
		if (pid == 0)
			child(items, start, n, fds[1]);
		close(fds[1]);
		while (next < n) {
			struct bq_answer a;
			int r = read_answer(fds[0], &a, timeout_ms);

			if (r <= 0 || a.index != next) {
				items[next].err = r == 0 ? -ETIMEDOUT : -EIO;
				kill(pid, SIGKILL);
				killed = true;
				next++;
				break;
			}
			items[next].err = a.err;
			items[next].st = a.st;
			items[next].loop = a.loop;
			items[next].value_len = a.value_len < BQ_VALUE_MAX ? a.value_len : BQ_VALUE_MAX;
			memcpy(items[next].value, a.value, items[next].value_len);
			next++;
		}
		close(fds[0]);
		reap(pid, killed);
		start = next;
	}
	return 0;
failed:
	{
		int err = -errno;

		for (unsigned int i = start; i < n; i++)
			items[i].err = err;
		return err;
	}
}
