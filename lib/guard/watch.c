/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The watch on a writer's storage (watch.h): one non-blocking look per call,
 * no thread and no signal of its own. A lease is asked with F_GETLEASE,
 * which during a break already reports the type the opener needs (F_RDLCK
 * for a reader, F_UNLCK for a writer or a truncate) and after a timed-out
 * break reports F_UNLCK. Uevents come from the kernel's netlink group 1,
 * whose sender is the kernel (port 0); any message for the block subsystem,
 * or an overrun of the socket (ENOBUFS: messages lost), means the devices
 * changed. The mount table's poll() reports POLLPRI once per change.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "watch.h"

/* init_net's fixed inode number in nsfs (Linux 6.18: NET_NS_INIT_INO, include/uapi/linux/nsfs.h) */
#ifndef PROC_NET_INIT_INO
#define PROC_NET_INIT_INO 0xEFFFFFF9U
#endif
#define UEVENT_BUFFER 8192
#define UEVENT_DRAIN_MAX 256 /* messages read per look; the rest is read at the next one */

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool uevent_is_block(const char *buf, size_t len)
{
	size_t i = 0;

	/* the header "ACTION@DEVPATH" first, then NUL-terminated KEY=VALUE pairs; the last may lack its NUL */
	while (i < len) {
		const char *s = buf + i;
		const char *nul = memchr(s, '\0', len - i);
		size_t n = nul ? (size_t)(nul - s) : len - i;

		if (n == strlen("SUBSYSTEM=block") && !memcmp(s, "SUBSYSTEM=block", n))
			return true;
		i += n + 1;
	}
	return false;
}

/*
 * Do block uevents reach this process? The kernel sends them to the first network namespace only
 * (lib/kobject_uevent.c); that one's inode is fixed since 6.18, and before that PID 1's says where it is.
 */
static bool in_first_net_namespace(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/net", &self) < 0)
		return false;
	if (self.st_ino == PROC_NET_INIT_INO)
		return true;
	return stat("/proc/1/ns/net", &init) == 0 && init.st_ino == self.st_ino && init.st_dev == self.st_dev;
}

static int open_uevents(void)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

int storage_watch_start(struct storage_watch *w, int lease_fd, bool devices)
{
	w->lease_fd = lease_fd;
	w->uevent_fd = w->mounts_fd = -1;
	w->by_timer = false;
	if (!devices)
		return 0;
	w->uevent_fd = open_uevents();
	if (w->uevent_fd < 0) {
		if (w->uevent_fd == -EMFILE || w->uevent_fd == -ENFILE || w->uevent_fd == -ENOMEM ||
		    w->uevent_fd == -ENOBUFS)
			return w->uevent_fd;
		w->uevent_fd = -1; /* netlink refused (a seccomp filter, a sandbox): check on a timer instead */
	}
	w->by_timer = w->uevent_fd < 0 || !in_first_net_namespace();
	w->next_timer = now_seconds() + WATCH_RECHECK_SECONDS;
	w->mounts_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (w->mounts_fd < 0)
		w->by_timer = true;
	return 0;
}

void storage_watch_recheck_every_second(struct storage_watch *w)
{
	w->by_timer = true;
	w->next_timer = now_seconds() + WATCH_RECHECK_SECONDS;
}

/* Reads what the uevent socket holds: true when a block device changed or messages were lost. */
static bool drain_uevents(int fd)
{
	char buf[UEVENT_BUFFER];
	bool changed = false;

	for (int i = 0; i < UEVENT_DRAIN_MAX; i++) {
		struct sockaddr_nl from;
		socklen_t from_len = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &from_len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return changed || errno == ENOBUFS; /* EAGAIN: drained; ENOBUFS: some were lost */
		}
		if (from_len == sizeof(from) && from.nl_pid == 0 && uevent_is_block(buf, (size_t)n))
			changed = true;
	}
	return true; /* more than one look's worth: something is going on */
}

enum watch_event storage_watch_poll(struct storage_watch *w)
{
	struct pollfd fds[2];
	nfds_t n = 0;
	bool changed = false;

	if (w->lease_fd >= 0) {
		int type = fcntl(w->lease_fd, F_GETLEASE);

		if (type == F_RDLCK)
			return WATCH_LEASE_BROKEN_READ;
		if (type != F_WRLCK)
			return WATCH_LEASE_BROKEN_WRITE;
	}
	if (w->uevent_fd >= 0)
		fds[n++] = (struct pollfd){ .fd = w->uevent_fd, .events = POLLIN };
	if (w->mounts_fd >= 0)
		fds[n++] = (struct pollfd){ .fd = w->mounts_fd, .events = POLLPRI };
	if (n && poll(fds, n, 0) > 0) {
		for (nfds_t i = 0; i < n; i++) {
			if (fds[i].fd == w->uevent_fd && (fds[i].revents & (POLLIN | POLLERR)))
				changed |= drain_uevents(w->uevent_fd);
			else if (fds[i].fd == w->mounts_fd && (fds[i].revents & (POLLPRI | POLLERR)))
				changed = true;
		}
	}
	if (w->by_timer && now_seconds() >= w->next_timer) {
		w->next_timer = now_seconds() + WATCH_RECHECK_SECONDS;
		changed = true;
	}
	return changed ? WATCH_DEVICES_CHANGED : WATCH_QUIET;
}

void storage_watch_release(struct storage_watch *w)
{
	if (w->lease_fd >= 0)
		fcntl(w->lease_fd, F_SETLEASE, F_UNLCK);
	w->lease_fd = -1;
}

void storage_watch_free(struct storage_watch *w)
{
	storage_watch_release(w);
	if (w->uevent_fd >= 0)
		close(w->uevent_fd);
	if (w->mounts_fd >= 0)
		close(w->mounts_fd);
	w->uevent_fd = w->mounts_fd = -1;
}
