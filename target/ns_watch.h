/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloud-target keeps the write guard's watch on every namespace's storage
 * for its whole life (lcloud_queue_check_storage(3)): before each write to
 * the medium (through ns_guard.h) and, from a thread of its own, every
 * NS_WATCH_INTERVAL_MS while idle, so that a program that opens a backing
 * file waits no longer than that (not the kernel's lease-break time) and a
 * loop device bound over a backing device is seen even when no host writes.
 */
#ifndef LCLOUD_TARGET_NS_WATCH_H
#define LCLOUD_TARGET_NS_WATCH_H

#define NS_WATCH_INTERVAL_MS 100

struct target;

/* Installs the check and starts the thread. 0 or -errno. */
int ns_watch_start(struct target *t);

#endif
