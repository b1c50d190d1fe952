/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What an I/O backend of the queue is: one table of operations and the
 * capabilities it has, as flags, in the shape of fio's struct ioengine_ops.
 * queue.c chooses a table at open and from then on asks the flags, never
 * which backend it is: a new backend (SG_IO WRITE ATOMIC, libaio) decides
 * each capability in its table. Each backend keeps its state in a struct of
 * its own, STATE_SIZE bytes that queue.c provides zeroed (in the queue itself
 * for the inline ring, so that the fast path reaches it at a fixed offset);
 * errors come back as -errno with their sentence in the struct queue_error
 * the caller passes. Backends never call queue.c: the slots queue.c hands
 * out come back in a struct queue_slots.
 */
#ifndef LCLOUD_QUEUE_BACKEND_H
#define LCLOUD_QUEUE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "lcloud/lcloud.h"
#include "queue_error.h"

/* One read or write as the caller asked for it, offsets in the target. */
struct queue_op {
	bool write;
	void *buf;
	uint64_t len, offset;
	int rw_flags;
	uint64_t user_data;
};

/* A hint, mapped onto this queue's target (hint_map.c). */
struct hint_map {
	uint32_t cdw12;   /* DTYPE (23:20), FUA (30) */
	uint32_t cdw13;   /* DSM (7:0), DSPEC (31:16) */
	int rw_flags;     /* RWF_DSYNC for FUA on the kernel path */
	uint8_t write_stream;
	int lifetime;     /* fcntl F_SET_RW_HINT value, -1 none */
};

/* What a backend is opened on, worked out by queue.c from the probe. */
struct queue_backend_target {
	int fd;              /* the data descriptor: O_DIRECT file/device, or /dev/ngXnY */
	uint32_t depth;      /* I/Os in flight at most; slots are 0 .. depth - 1 */
	uint32_t nsid;       /* passthrough: the namespace, its block size and the partition's start */
	uint64_t lba;
	uint64_t dev_offset;
};

/* Slots a backend is done with, for queue.c to take back (room for the queue's depth). */
struct queue_slots {
	uint32_t *slot;
	uint32_t n;
};

enum queue_backend_cap {
	/* an atomic write is RWF_ATOMIC in rw_flags (the kernel checks its shape too) */
	QUEUE_CAP_RWF_ATOMIC = 1u << 0,
	/* the backend builds the NVMe command: DSM bits, FDP placement and FUA go in it (hint_map.c) */
	QUEUE_CAP_NVME_COMMAND = 1u << 1,
	/* one I/O is one device command: the disk's transfer limit (MDTS) holds per I/O */
	QUEUE_CAP_ONE_COMMAND = 1u << 2,
	/* FUA as RWF_DSYNC, and a regular file's lifetime by fcntl(F_SET_RW_HINT) */
	QUEUE_CAP_KERNEL_HINTS = 1u << 3,
	/* io_uring write streams (Linux 6.16) reach the device */
	QUEUE_CAP_WRITE_STREAMS = 1u << 4,
	/* register_buffers() is worth calling (fixed buffers) */
	QUEUE_CAP_REGISTERED_BUFFERS = 1u << 5,
	/* each I/O takes one of queue.c's slots at prep; the backend hands it back (struct queue_slots) */
	QUEUE_CAP_SLOTS = 1u << 6,
	/* completions arrive after submit returns: what submit took is in flight until reaped */
	QUEUE_CAP_ASYNC = 1u << 7,
	/* STATE is a struct uring_state, kept in the queue, on which queue.c may run the inline fast path (queue_uring.h) */
	QUEUE_CAP_INLINE_RING = 1u << 8,
};

struct queue_backend_ops {
	const char *name;
	enum lcloud_backend id;
	/* the path whose verdict says which atomic writes are untorn through this backend */
	enum lcloud_io_path atomic_path;
	uint32_t caps; /* enum queue_backend_cap */
	size_t state_size;
	/* fills STATE (zeroed); on failure it holds nothing to free */
	int (*open)(const struct queue_backend_target *t, void *state, struct queue_error *e);
	/* SLOT is queue.c's when QUEUE_CAP_SLOTS, else UINT32_MAX; a failed prep queues nothing */
	int (*prep)(void *state, uint32_t slot, const struct queue_op *op, const struct hint_map *m,
		    struct queue_error *e);
	/* how many I/Os it handed to the device (or did); slots it is done with in DONE */
	int (*submit)(void *state, struct queue_slots *done, struct queue_error *e);
	/* at most MAX completions, waiting for MIN; their slots in DONE */
	int (*reap)(void *state, struct lcloud_completion *out, uint32_t max, uint32_t min, struct queue_slots *done,
		    struct queue_error *e);
	/* NULL without QUEUE_CAP_REGISTERED_BUFFERS; IOV is copied */
	int (*register_buffers)(void *state, const struct iovec *iov, uint32_t n, struct queue_error *e);
	/* prepared and not yet submitted; completed and not yet reaped */
	void (*pending)(const void *state, uint32_t *ret_queued, uint32_t *ret_to_reap);
	/* releases what open took, not STATE's memory */
	void (*free)(void *state);
};

/* queue_uring.c: io_uring on a file or block device; io_uring NVMe passthrough (/dev/ngXnY) */
extern const struct queue_backend_ops queue_backend_uring;
extern const struct queue_backend_ops queue_backend_uring_nvme;
/* queue_sync.c: preadv2()/pwritev2() at submit time */
extern const struct queue_backend_ops queue_backend_sync;

#endif
