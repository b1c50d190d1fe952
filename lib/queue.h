/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_QUEUE_H
#define LCLOUD_QUEUE_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lcloud/lcloud.h"

#define QUEUE_FDP_PIDS_MAX 16
/* Linux's MAX_RW_COUNT (INT_MAX & PAGE_MASK): a longer read or write ends short. */
#define QUEUE_IO_MAX 0x7ffff000ULL

/* A queued I/O of the sync backend, or the bookkeeping of an io_uring one. */
struct queue_op {
	bool write;
	void *buf;
	uint64_t len, offset;
	int rw_flags;
	uint64_t user_data;
};

/* What hints can become on this target, read once at open. */
struct hint_caps {
	bool nvme;               /* passthrough: DSM bits, DTYPE/DSPEC, FUA */
	bool nvme_dsm;
	uint16_t fdp_pids[QUEUE_FDP_PIDS_MAX];
	unsigned int n_fdp_pids; /* FDP enabled when > 0 */
	uint32_t max_write_streams; /* io_uring write streams (6.16+) */
	bool regular_file;       /* fcntl lifetime hints */
};

/* A hint, mapped onto this queue's target. */
struct hint_map {
	uint32_t cdw12;   /* DTYPE (23:20), FUA (30) */
	uint32_t cdw13;   /* DSM (7:0), DSPEC (31:16) */
	int rw_flags;     /* RWF_DSYNC for FUA on the kernel path */
	uint8_t write_stream;
	int lifetime;     /* fcntl F_SET_RW_HINT value, -1 none */
};

struct lcloud_queue {
	struct lcloud_probe *probe;
	enum lcloud_backend backend;
	int fd;              /* the data fd: O_DIRECT file/device, or /dev/ngXnY */
	int hold_fd;         /* the target's block device, claimed (O_EXCL) while writing through /dev/ngXnY; -1 */
	int *claims;         /* devices that share the target's storage, claimed (O_EXCL) while the queue lives */
	unsigned int n_claims;
	dev_t target_rdev;   /* what the caller's path opened, checked by fstat */
	mode_t target_mode;
	bool writable;
	uint32_t nsid;
	uint64_t lba;        /* passthrough block size */
	uint64_t dev_offset; /* a partition's start on its namespace */
	uint64_t dev_size;   /* 0: unknown (files grow) */
	uint64_t mem_align, max_transfer;
	struct io_uring ring;
	bool ring_ok;
	uint32_t depth, inflight;
	uint32_t queued;     /* sync backend: prepared, not submitted (an io_uring ring counts its own) */
	struct queue_op *ops;  /* one slot per I/O in flight, any backend */
	uint32_t *free_slots;
	uint32_t n_free;
	uint32_t *sync_queued; /* sync backend: slots queued, in order */
	uint32_t n_sync_queued;
	struct lcloud_completion *done; /* sync backend: completed, not yet reaped */
	uint32_t n_done;
	struct iovec *reg;   /* registered buffers (copies of the caller's list) */
	uint32_t n_reg;
	struct hint_caps caps;
	/*
	 * fast path (io_uring kernel backend, no hint, no registered buffers):
	 * one mask test instead of validate(), and the SQE filled from what
	 * open worked out once
	 */
	bool fast_write, fast_read;
	uint64_t fast_pos_mask; /* offset and length alignment - 1 */
	uint64_t fast_mem_mask; /* buffer alignment - 1 */
	uint64_t sqe_head_write, sqe_head_read; /* an SQE's first 8 bytes: opcode, flags, ioprio, fd */
	int file_lifetime; /* last F_SET_RW_HINT applied */
	const struct lcloud_verdict *atomic_verdict;
	char error[8192]; /* room for a mount point or two of PATH_MAX */
};

__attribute__((format(printf, 3, 4)))
int queue_fail(struct lcloud_queue *q, int err, const char *fmt, ...);

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

/* queue.c: a slot goes back when its completion is reaped */
void queue_release_slot(struct lcloud_queue *q, uint32_t slot);

/* hint_map.c */
void hint_caps_read(struct lcloud_queue *q);
void hint_map(const struct lcloud_queue *q, const struct lcloud_hint *h, bool write, struct hint_map *ret);

/*
 * write_guard.c: 0 when writing to the target is safe, else -EBUSY or
 * -EACCES with the reason in q->error. FORCE skips what the data looks like
 * (signatures, partition tables), never who holds the device.
 */
int write_guard_check(struct lcloud_ctx *ctx, struct lcloud_queue *q, bool force);
/*
 * write_guard_shared.c: refuses (-EBUSY, -EACCES) when another block device
 * shares the target's storage and is mounted, swap, held or claimed; claims
 * the free ones into q->claims. TARGET_NAME is for messages.
 */
int write_guard_shared_storage(struct lcloud_ctx *ctx, struct lcloud_queue *q, const char *target_name);

/* queue_target.c: opens PATH once into q->fd (no O_DIRECT yet; O_EXCL for a block device written). */
int queue_open_target(const struct lcloud_ctx *ctx, struct lcloud_queue *q, const char *path);
/* Claims the generic node's namespace block device (O_EXCL) into q->hold_fd, checked against the probe. */
int queue_claim_namespace(const struct lcloud_ctx *ctx, struct lcloud_queue *q);
/* The namespace's generic node, checked in sysfs to be NVME's (q->fd itself when the target is one). */
int queue_open_generic_node(const struct lcloud_ctx *ctx, struct lcloud_queue *q, const struct lcloud_layer *nvme,
			    int *ret_fd);

/* queue_uring.c */
int uring_setup(struct lcloud_queue *q);
int uring_prep(struct lcloud_queue *q, uint32_t slot, const struct hint_map *m);
int uring_prep_kernel(struct lcloud_queue *q, const struct queue_op *op, const struct hint_map *m);
int uring_reap(struct lcloud_queue *q, struct lcloud_completion *out, uint32_t max, uint32_t min);

/* queue_sync.c */
int sync_prep(struct lcloud_queue *q, uint32_t slot);
int sync_submit(struct lcloud_queue *q);
int sync_reap(struct lcloud_queue *q, struct lcloud_completion *out, uint32_t max);

#endif
