/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_WATCH_H
#define LCLOUD_WATCH_H

/*
 * Telling a long-running writer that its storage gained a user after the
 * write guard looked. A regular file that nobody else had open keeps a
 * write lease (held_file.c): anyone who opens it afterwards breaks the
 * lease, the kernel holds the opener (up to /proc/sys/fs/lease-break-time)
 * until the lease is let go, and F_GETLEASE says so at the next look. What
 * a lease cannot watch (a block device, a file the caller shares with its
 * own processes) is watched through the set of block devices and mounts:
 * the kernel's uevents for block devices (a loop device bound over the
 * storage, at any offset) and poll() on /proc/self/mountinfo (a mount in
 * this namespace), after which the caller runs the write guard's storage
 * check again. Where uevents may not arrive (a network namespace other than
 * the first: the kernel sends block uevents only there) the caller is told
 * to check again every WATCH_RECHECK_SECONDS instead. A file on overlayfs is
 * watched both ways and on that timer too: its lease is the overlay inode's,
 * which nothing that reaches the layer file underneath by its own name opens.
 * A look never waits.
 */
#include <stdbool.h>
#include <stddef.h>

#define WATCH_RECHECK_SECONDS 1

enum watch_event {
	WATCH_QUIET = 0,
	WATCH_LEASE_BROKEN_READ,  /* someone opens the file for reading: the opener waits for the lease */
	WATCH_LEASE_BROKEN_WRITE, /* for writing (or truncates it), or the lease is gone (the break timed out) */
	WATCH_DEVICES_CHANGED,    /* a block device or a mount changed: check the storage again */
};

struct storage_watch {
	int lease_fd;  /* a regular file's descriptor holding a write lease; -1 */
	int uevent_fd; /* kernel uevents (NETLINK_KOBJECT_UEVENT, group 1); -1 */
	int mounts_fd; /* /proc/self/mountinfo, whose poll() reports a changed mount table; -1 */
	bool by_timer; /* uevents may not reach this process: a check every WATCH_RECHECK_SECONDS */
	double next_timer;
};

/*
 * Starts watching: the lease on LEASE_FD (taken already; -1 for none), and
 * with DEVICES the block devices and mounts. 0, or -errno (memory, file
 * descriptors). Safe to free after a failure.
 */
int storage_watch_start(struct storage_watch *w, int lease_fd, bool devices);
/* A check again every WATCH_RECHECK_SECONDS as well: for users no lease, uevent or mount shows (an overlay's layer file opened by its own name). */
void storage_watch_recheck_every_second(struct storage_watch *w);
/* One look: what happened since the last one (devices and mounts are drained). */
enum watch_event storage_watch_poll(struct storage_watch *w);
/* Lets go of the lease, so that an opener held by it proceeds (the descriptor stays open). */
void storage_watch_release(struct storage_watch *w);
/* Closes what the watch opened (not the lease's descriptor, which is the caller's). */
void storage_watch_free(struct storage_watch *w);
/* A watch that was never started. */
#define STORAGE_WATCH_INIT { .lease_fd = -1, .uevent_fd = -1, .mounts_fd = -1 }

/* Is the uevent message BUF of LEN bytes ("ACTION@DEVPATH\0KEY=VALUE\0...") about a block device? */
bool uevent_is_block(const char *buf, size_t len);

#endif
