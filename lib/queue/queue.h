/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The queue's own state (struct lcloud_queue) and the open-time helpers
 * around it: the target opener, the write guard, the hint mapping. The I/O
 * itself is a backend's (queue_backend.h), which sees none of this.
 */
#ifndef LCLOUD_QUEUE_H
#define LCLOUD_QUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "guard.h"
#include "hint_placement.h"
#include "lcloud/lcloud.h"
#include "queue_backend.h"
#include "queue_error.h"
#include "queue_uring.h"
#include "watch.h"

/* Linux's MAX_RW_COUNT (INT_MAX & PAGE_MASK): a longer read or write ends short. */
#define QUEUE_IO_MAX 0x7ffff000ULL

/* What hints can become on this target, read once at open. */
struct hint_caps {
	bool nvme;               /* passthrough: DSM bits, DTYPE/DSPEC, FUA */
	bool nvme_dsm;
	struct hint_placement placement; /* FDP: the handles' uses, the identifiers and their handles */
	uint32_t max_write_streams; /* io_uring write streams (6.16+) this queue can send */
	uint32_t device_write_streams; /* the device's, whether or not this backend can send them */
	bool regular_file;       /* fcntl lifetime hints */
};

struct lcloud_queue {
	struct lcloud_probe *probe;
	const struct queue_backend_ops *backend; /* chosen at open; asked for its capabilities, never compared */
	void *backend_state;
	uint32_t backend_caps; /* its enum queue_backend_cap */
	int fd;              /* the data fd: O_DIRECT file/device, or /dev/ngXnY */
	int hold_fd;         /* the target's block device, claimed (O_EXCL) while writing through /dev/ngXnY; -1 */
	struct guard_decision *guard; /* the write guard's decision and its claims, kept while the queue lives; NULL read-only */
	dev_t target_rdev;   /* what the caller's path opened, checked by fstat */
	mode_t target_mode;
	bool writable;
	uint32_t nsid;
	uint64_t lba;        /* passthrough block size */
	uint64_t dev_offset; /* a partition's start on its namespace */
	uint64_t dev_size;   /* 0: unknown (files grow) */
	uint64_t mem_align, max_transfer;
	uint32_t depth, inflight;
	uint32_t *free_slots; /* QUEUE_CAP_SLOTS: one slot per I/O the backend holds */
	uint32_t n_free;
	struct queue_slots slots_back; /* room for the slots a backend hands back */
	struct hint_caps caps;
	/*
	 * fast path (QUEUE_CAP_INLINE_RING, no hint, no registered buffers):
	 * one mask test instead of validate(), and the SQE filled from what
	 * open worked out once (queue_uring.h)
	 */
	struct uring_state *ring; /* &inline_ring when the backend has QUEUE_CAP_INLINE_RING, else NULL */
	struct uring_state inline_ring; /* that backend's state, at a fixed offset for the fast path */
	bool fast_write, fast_read;
	bool watching; /* a writing queue: its watch is looked at before each submission (queue_watch.c) */
	bool stopped;  /* its storage gained a user: nothing more is submitted */
	bool own_file; /* LCLOUD_QUEUE_OWN_FILE: other programs' holds on the file (or its layer files) are the caller's */
	uint64_t fast_pos_mask; /* offset and length alignment - 1 */
	uint64_t fast_mem_mask; /* buffer alignment - 1 */
	int file_lifetime; /* last F_SET_RW_HINT applied */
	const struct lcloud_verdict *atomic_verdict;
	struct queue_error error;
	struct storage_watch watch;   /* the lease, or the devices and mounts (watch.h) */
	struct lcloud_ctx *watch_ctx; /* the guard's checks after open need a context of their own */
	char *watch_name;             /* the target as the guard names it */
	char *stop_reason;            /* why the queue stopped, kept apart from the last call's error */
};

/* Sets the queue's error and returns ERR (queue_error.c: nothing in the queue family calls back into queue.c). */
#define queue_fail(q, err, ...) queue_error_set(&(q)->error, (err), __VA_ARGS__)

/*
 * Where passthrough writes to P's target land: the NVMe namespace directly
 * under it (no file system, dm, md or loop) in *RET_NVME, the target's
 * byte offset on it, and its size (0: a whole namespace, which ends where
 * the device says). 0; -ENODEV without such a namespace; -ENODATA, with
 * *RET_NVME set, when a partition's start or size was not read, for then
 * writes could land before the partition or run past its end.
 */
int queue_passthrough_span(const struct lcloud_probe *p, const struct lcloud_layer **ret_nvme, uint64_t *ret_offset,
			   uint64_t *ret_size);

/* hint_map.c */
void hint_caps_read(struct lcloud_queue *q);
/* Where a write with H lands (lcloud_queue_get_placement() without its checks). */
void hint_place(const struct lcloud_queue *q, const struct lcloud_hint *h, struct lcloud_placement *ret);
void hint_map(const struct lcloud_queue *q, const struct lcloud_hint *h, bool write, struct hint_map *ret);

/*
 * Asks the write guard (guard.h) about the queue's target and keeps its
 * decision, claims included, in q->guard: 0, or the refusal's -errno with
 * its reason in q->error. HOW is guard_decide()'s; called again on an open
 * queue (GUARD_USE_ONLY) the claims taken before stay the queue's own.
 */
int queue_guard(struct lcloud_ctx *ctx, struct lcloud_queue *q, uint32_t how);

/*
 * queue_watch.c: after the write guard, refuses a regular file that a loop
 * device maps or (without LCLOUD_QUEUE_OWN_FILE) that another program has
 * open, and starts the watch. queue_watch_check() looks at it before a
 * submission: 0, or -EBUSY once the queue stopped (the reason in
 * q->error). queue_watch_drained() lets go of the lease and claims of a
 * stopped queue with nothing in flight.
 */
int queue_watch_open(struct lcloud_ctx *ctx, struct lcloud_queue *q, const char *path, uint32_t flags);
int queue_watch_check(struct lcloud_queue *q);
void queue_watch_drained(struct lcloud_queue *q);
void queue_watch_free(struct lcloud_queue *q);

/* queue_target.c: opens PATH once into q->fd (no O_DIRECT yet; O_EXCL for a block device written). */
int queue_open_target(const struct lcloud_ctx *ctx, struct lcloud_queue *q, const char *path);
/* Claims the generic node's namespace block device (O_EXCL) into q->hold_fd, checked against the probe. */
int queue_claim_namespace(const struct lcloud_ctx *ctx, struct lcloud_queue *q);
/* The namespace's generic node, checked in sysfs to be NVME's (q->fd itself when the target is one). */
int queue_open_generic_node(const struct lcloud_ctx *ctx, struct lcloud_queue *q, const struct lcloud_layer *nvme,
			    int *ret_fd);

#endif
