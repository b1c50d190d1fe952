/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The target's record of what it received (see write_log.c): a write log in
 * the dm-log-writes format per namespace, and a trace of every I/O command
 * with the hints it carried.
 */
#ifndef LCLOUD_TARGET_WRITE_LOG_H
#define LCLOUD_TARGET_WRITE_LOG_H

#include <stddef.h>
#include <stdint.h>

struct target;

#define WLOG_FLUSH 0x1u
#define WLOG_FUA 0x2u
#define WLOG_DISCARD 0x4u /* also Write Zeroes: the range reads as zeros, which replay writes */

/* One entry: NLB blocks at SLBA and their DATA; a FLUSH or DISCARD has no data. */
struct wlog_entry {
	uint64_t slba;
	uint32_t nlb;
	uint32_t flags;
	const uint8_t *data;
};

/* PATTERN with %n the namespace ID NSID (%% a %) in BUF. 0, -EINVAL for another %, or -ENAMETOOLONG. */
int wlog_name(const char *pattern, unsigned int nsid, char *buf, size_t len);
/* Creates PATH (a new file) as namespace index NS's log and writes an empty log's super block. 0 or -errno. */
int wlog_open(struct target *t, unsigned int ns, const char *path);
/* Closes every log. */
void wlog_close(struct target *t);
/*
 * N entries of one command in namespace index NS's log (nothing without a
 * log): all of them, or none and a negative errno: -EFBIG past
 * --write-log-limit, -ENOSPC or -EDQUOT with no room on its file system,
 * another -errno for another failure. The command must then fail with
 * wlog_status(), so nothing acknowledged is missing from the log.
 */
int wlog_append(struct target *t, unsigned int ns, const struct wlog_entry *e, unsigned int n);
/* A FLUSH entry in the log of every namespace index in NS_MASK: all of them or none. 0 or -errno as above. */
int wlog_flush(struct target *t, uint32_t ns_mask);
/* The logs of NS_MASK with their count current and on stable storage. 0, or the last -errno (logged). */
int wlog_sync(struct target *t, uint32_t ns_mask);
/* The NVMe status of a command whose entry could not be logged: Capacity Exceeded for no room, else Write Fault. */
int wlog_status(int r);

/* Creates PATH (a new file) for the trace. 0 or -errno. */
int trace_open(struct target *t, const char *path);
/*
 * One I/O command's line: its fields and hints, submission and completion in µs since the target started,
 * then EXTRA (the back end's columns: class, dispatched_us, backend_bytes, backend_ops).
 */
void trace_command(struct target *t, const uint8_t *sqe, uint64_t submitted_us, uint64_t completed_us, int status,
		   const char *extra);
uint64_t trace_now_us(void);

#endif
