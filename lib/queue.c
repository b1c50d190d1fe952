/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The I/O queue: open a target, choose a backend, refuse what would not be
 * what the caller asked for (an atomic write the verdict does not call
 * untorn, a misaligned direct I/O), map hints, and hand the I/O to the
 * backend. Offsets are the target's own; partitions are translated here.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat.h"
#include "ctx.h"
#include "nvme_transport.h"
#include "probe.h"
#include "queue.h"
#include "report.h"
#include "util.h"
#include "verdict.h"

#define QUEUE_DEPTH_MAX 4096

int queue_fail(struct lcloud_queue *q, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(q->error, sizeof(q->error), fmt, ap);
	va_end(ap);
	return err;
}

static const struct lcloud_layer *layer_of(const struct lcloud_probe *p, enum lcloud_layer_kind kind)
{
	for (unsigned int i = 0; i < p->n_layers; i++)
		if (p->layers[i].kind == kind)
			return &p->layers[i];
	return NULL;
}

int queue_passthrough_span(const struct lcloud_probe *p, const struct lcloud_layer **ret_nvme, uint64_t *ret_offset,
			   uint64_t *ret_size)
{
	uint64_t offset = 0, size = 0;
	bool unread = false, partition = false;

	*ret_nvme = NULL;
	if (layer_of(p, LCLOUD_LAYER_FILESYSTEM))
		return -ENODEV;
	for (unsigned int i = 0; i < p->n_layers; i++) {
		const struct lcloud_layer *l = &p->layers[i];

		if (l->kind == LCLOUD_LAYER_PARTITION) {
			uint64_t start;

			/* a start not read is no start of 0, a size not read no end: writes could leave the partition */
			if (layer_get_bytes(l, FACT_START_BYTES, &start) <= 0 ||
			    (!partition && layer_get_bytes(l, FACT_SIZE, &size) <= 0))
				unread = true;
			else
				offset += start;
			partition = true;
			continue;
		}
		if (l->kind != LCLOUD_LAYER_DISK)
			return -ENODEV;
		for (unsigned int k = 0; k < p->n_layers; k++)
			if (p->layers[k].kind == LCLOUD_LAYER_NVME && p->layers[k].parent == (int)i) {
				*ret_nvme = &p->layers[k];
				if (unread)
					return -ENODATA;
				*ret_offset = offset;
				*ret_size = size;
				return 0;
			}
		return -ENODEV;
	}
	return -ENODEV;
}

static int open_passthrough(const struct lcloud_ctx *ctx, struct lcloud_queue *q, const struct lcloud_layer *nvme,
			    int span, uint64_t offset)
{
	uint64_t metadata = 0, lba = 0, nsid;
	unsigned int c, n;
	int fd, r;

	if (sscanf(nvme->name, "nvme%un%u", &c, &n) != 2)
		return queue_fail(q, -ENODEV, "%s is not an NVMe namespace name", nvme->name);
	if (span == -ENODATA)
		return queue_fail(q, -ENODATA, "%s: where the partition starts on the namespace, or its size, could "
				  "not be read: passthrough cannot keep writes inside it", nvme->name);
	/* metadata and LBA size come from the same Identify: absent, the LBA size check below refuses */
	if (layer_get_bytes(nvme, FACT_LBA_METADATA_SIZE, &metadata) > 0 && metadata)
		return queue_fail(q, -EOPNOTSUPP, "%s is formatted with %" PRIu64 " metadata bytes per block, which "
				  "passthrough commands from liblcloud do not carry; use the block device", nvme->name,
				  metadata);
	if (layer_get_bytes(nvme, FACT_LBA_SIZE, &lba) <= 0 || !lba)
		return queue_fail(q, -ENODATA, "%s: the namespace's LBA size is unknown (Identify failed): "
				  "passthrough cannot address it", nvme->name);
	r = queue_open_generic_node(ctx, q, nvme, &fd);
	if (r < 0)
		return r;
	if (fd != q->fd) {
		/* the block device stays open, and claimed when writing, while the generic node does the I/O */
		q->hold_fd = q->fd;
		q->fd = fd;
	}
	/* the nsid the kernel gives, else the one in the namespace's name */
	q->nsid = layer_get_u64(nvme, FACT_NSID, &nsid) > 0 ? (uint32_t)nsid : n;
	q->lba = lba;
	q->dev_offset = offset;
	q->mem_align = 4; /* NVMe needs dword-aligned buffers */
	return 0;
}

/* The kernel path: the descriptor opened at the start, now with O_DIRECT. */
static int open_direct(struct lcloud_queue *q, const char *path)
{
	const struct lcloud_layer *fs = layer_of(q->probe, LCLOUD_LAYER_FILESYSTEM);
	int fl;

	if (q->probe->target_type == LCLOUD_TARGET_NVME_CHAR)
		return queue_fail(q, -EINVAL, "%s takes passthrough commands only: use the passthrough backend "
				  "or the block device", path);
	fl = fcntl(q->fd, F_GETFL);
	if (fl < 0 || fcntl(q->fd, F_SETFL, fl | O_DIRECT) < 0)
		return queue_fail(q, -errno, "%s: O_DIRECT refused: %s", path, strerror(errno));
	/* statx without STATX_DIOALIGN (or 0): the 512 bytes every O_DIRECT path takes */
	if (layer_get_bytes(fs ? fs : &q->probe->layers[0], FACT_STX_DIO_MEM_ALIGN, &q->mem_align) <= 0)
		q->mem_align = 512;
	if (layer_get_bytes(fs ? fs : &q->probe->layers[0], FACT_STX_DIO_OFFSET_ALIGN, &q->lba) <= 0)
		q->lba = 512;
	if (!q->lba)
		q->lba = 512;
	if (!q->mem_align)
		q->mem_align = 512;
	return 0;
}

LCLOUD_EXPORT int lcloud_queue_open(struct lcloud_ctx *ctx, const char *path, uint32_t depth,
				    enum lcloud_backend backend, uint32_t flags, struct lcloud_queue **ret_queue)
{
	const struct lcloud_layer *nvme;
	struct lcloud_queue *q;
	uint64_t offset = 0, span_size = 0;
	bool auto_chosen;
	int span, r;

	if (!ctx || !path || !ret_queue || !depth || depth > QUEUE_DEPTH_MAX || backend > LCLOUD_BACKEND_SYNC ||
	    (flags & ~(uint32_t)(LCLOUD_QUEUE_WRITE | LCLOUD_QUEUE_FORCE)))
		return -EINVAL;
	ctx->error[0] = '\0';
	if (ctx_has_sysroot(ctx)) {
		/* the probe would describe the captured tree and the I/O would go to the live device */
		snprintf(ctx->error, sizeof(ctx->error), "%s: a sysroot is for reading captured facts: the queue does "
			 "I/O on the live system, which %s does not describe; drop --sysroot (nothing was %s)", path,
			 ctx->sysroot, flags & LCLOUD_QUEUE_WRITE ? "written" : "read");
		return flags & LCLOUD_QUEUE_WRITE ? -EROFS : -EOPNOTSUPP;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->fd = -1;
	q->hold_fd = -1;
	q->depth = depth;
	q->file_lifetime = -1;
	q->writable = flags & LCLOUD_QUEUE_WRITE;
	r = queue_open_target(ctx, q, path);
	if (r < 0)
		goto fail;
	r = probe_io_target(ctx, q->fd, path, &q->probe);
	if (r < 0) {
		queue_fail(q, r, "%s: %s", path, strerror(-r));
		goto fail;
	}
	span = queue_passthrough_span(q->probe, &nvme, &offset, &span_size);
	if (q->writable && q->probe->target_type == LCLOUD_TARGET_NVME_CHAR) {
		/* nothing claims a generic node: claim its namespace's block device, as a block target is */
		r = queue_claim_namespace(ctx, q);
		if (r < 0)
			goto fail;
	}
	if (q->writable) {
		r = write_guard_check(ctx, q, flags & LCLOUD_QUEUE_FORCE);
		if (r < 0)
			goto fail;
	}
	auto_chosen = backend == LCLOUD_BACKEND_AUTO;
	if (backend == LCLOUD_BACKEND_AUTO)
		backend = nvme ? LCLOUD_BACKEND_PASSTHROUGH : LCLOUD_BACKEND_IO_URING;
	if (backend == LCLOUD_BACKEND_PASSTHROUGH && !nvme) {
		r = queue_fail(q, -ENODEV, "%s is not an NVMe namespace (or a partition of one) without a file "
			       "system, dm, md or loop layer: passthrough cannot reach it", path);
		goto fail;
	}
	q->backend = backend;
	r = backend == LCLOUD_BACKEND_PASSTHROUGH ? open_passthrough(ctx, q, nvme, span, offset)
							  : open_direct(q, path);
	if (r < 0 && auto_chosen && backend == LCLOUD_BACKEND_PASSTHROUGH &&
	    (r == -EACCES || r == -EPERM || r == -ENODATA) && q->probe->target_type != LCLOUD_TARGET_NVME_CHAR) {
		/* the generic node is not ours to use: the block device, opened already, still is */
		q->backend = backend = LCLOUD_BACKEND_IO_URING;
		r = open_direct(q, path);
	}
	if (r < 0)
		goto fail;
	q->error[0] = '\0';
	{
		const struct lcloud_layer *top = NULL;

		for (unsigned int i = 0; i < q->probe->n_layers && !top; i++)
			if (q->probe->layers[i].kind != LCLOUD_LAYER_FILESYSTEM)
				top = &q->probe->layers[i];
		/* 0, no bound checked here: a file, or a device whose size was not read (the kernel stops at its end) */
		q->dev_size = 0;
		if (!layer_of(q->probe, LCLOUD_LAYER_FILESYSTEM) && top)
			(void)layer_get_bytes(top, FACT_SIZE, &q->dev_size);
		/*
		 * A partition has no queue of its own: the transfer limit is its disk's.
		 * Not read, 0: no early refusal, and the kernel refuses a larger command itself.
		 */
		q->max_transfer = 0;
		(void)layer_get_bytes(layer_of(q->probe, LCLOUD_LAYER_DISK), FACT_MAX_HW_SECTORS_KB, &q->max_transfer);
		/* a partition's own size (passthrough must not run past it); a whole namespace's device says */
		if (backend == LCLOUD_BACKEND_PASSTHROUGH)
			q->dev_size = span_size;
	}
	q->atomic_verdict = lcloud_probe_get_verdict(q->probe, backend == LCLOUD_BACKEND_PASSTHROUGH
							      ? LCLOUD_PATH_PASSTHROUGH : LCLOUD_PATH_RWF_ATOMIC);
	hint_caps_read(q);
	if (backend == LCLOUD_BACKEND_IO_URING && is_power_of_2(q->lba) && is_power_of_2(q->mem_align) &&
	    !q->dev_size) {
		/* files: nothing but alignment to check per I/O when there is no hint */
		q->fast_read = true;
		q->fast_write = q->writable;
		q->fast_pos_mask = q->lba - 1;
		q->fast_mem_mask = q->mem_align - 1;
	}
	q->ops = calloc(depth, sizeof(*q->ops));
	q->free_slots = calloc(depth, sizeof(*q->free_slots));
	q->sync_queued = calloc(depth, sizeof(*q->sync_queued));
	q->done = calloc(depth, sizeof(*q->done));
	if (!q->ops || !q->free_slots || !q->sync_queued || !q->done) {
		r = -ENOMEM;
		goto fail;
	}
	for (uint32_t i = 0; i < depth; i++)
		q->free_slots[q->n_free++] = depth - 1 - i;
	if (backend != LCLOUD_BACKEND_SYNC) {
		r = uring_setup(q);
		/* io_uring switched off (kernel.io_uring_disabled, seccomp): the kernel path still works */
		if (r < 0 && auto_chosen && backend == LCLOUD_BACKEND_IO_URING &&
		    (r == -EPERM || r == -ENOSYS || r == -EACCES)) {
			q->backend = backend = LCLOUD_BACKEND_SYNC;
			q->fast_read = q->fast_write = false;
			q->error[0] = '\0';
			r = 0;
		}
		if (r < 0)
			goto fail;
	}
	*ret_queue = q;
	ctx->error[0] = '\0';
	return 0;
fail:
	/* the queue goes away: keep its reason where the caller can read it */
	snprintf(ctx->error, sizeof(ctx->error), "%s", q->error);
	lcloud_queue_free(q);
	return r;
}

LCLOUD_EXPORT void lcloud_queue_free(struct lcloud_queue *q)
{
	if (!q)
		return;
	if (q->ring_ok)
		io_uring_queue_exit(&q->ring);
	if (q->fd >= 0)
		close(q->fd);
	if (q->hold_fd >= 0)
		close(q->hold_fd);
	for (unsigned int i = 0; i < q->n_claims; i++)
		close(q->claims[i]);
	free(q->claims);
	lcloud_probe_free(q->probe);
	free(q->ops);
	free(q->free_slots);
	free(q->sync_queued);
	free(q->done);
	free(q->reg);
	free(q);
}

LCLOUD_EXPORT enum lcloud_backend lcloud_queue_get_backend(const struct lcloud_queue *q)
{
	return q ? q->backend : LCLOUD_BACKEND_AUTO;
}

LCLOUD_EXPORT const char *lcloud_backend_to_string(enum lcloud_backend b)
{
	switch (b) {
	case LCLOUD_BACKEND_AUTO:
		return "auto";
	case LCLOUD_BACKEND_PASSTHROUGH:
		return "passthrough";
	case LCLOUD_BACKEND_IO_URING:
		return "io_uring";
	case LCLOUD_BACKEND_SYNC:
		return "sync";
	}
	return "unknown";
}

LCLOUD_EXPORT const struct lcloud_probe *lcloud_queue_get_probe(const struct lcloud_queue *q)
{
	return q ? q->probe : NULL;
}

LCLOUD_EXPORT const char *lcloud_queue_get_error(const struct lcloud_queue *q)
{
	return q ? q->error : "";
}

LCLOUD_EXPORT int lcloud_queue_get_fd(const struct lcloud_queue *q)
{
	/* passthrough writes through /dev/ngXnY; the block device claimed beside it is what flushes and reopens */
	return !q ? -EBADF : q->hold_fd >= 0 ? q->hold_fd : q->fd;
}

/* Shape checks every direct I/O needs, and the atomic promise for flagged writes. */
static int validate(struct lcloud_queue *q, bool write, const void *buf, uint64_t len, uint64_t offset,
		    const struct lcloud_hint *h)
{
	char why[400];
	int r;

	if (!len || len > QUEUE_IO_MAX)
		return queue_fail(q, -EINVAL, "length %" PRIu64 " is out of range (1 to %llu bytes, 2 GiB less 4 KiB: "
				  "the most one read or write carries in Linux)", len, QUEUE_IO_MAX);
	if (write && !q->writable)
		return queue_fail(q, -EBADF, "the queue was opened for reading only");
	if (offset % q->lba || len % q->lba)
		return queue_fail(q, -EINVAL, "offset %" PRIu64 " and length %" PRIu64 " must be multiples of %" PRIu64
				  " for direct I/O here", offset, len, q->lba);
	if ((uintptr_t)buf % q->mem_align)
		return queue_fail(q, -EINVAL, "the buffer at %p is not aligned to %" PRIu64 " bytes, as direct I/O "
				  "here needs", buf, q->mem_align);
	/* never offset + len: it can wrap */
	if (q->dev_size && offset >= q->dev_size)
		return queue_fail(q, -ENOSPC, "offset %" PRIu64 " is past the end of the device (%" PRIu64 " bytes)",
				  offset, q->dev_size);
	if (q->dev_size && len > q->dev_size - offset)
		return queue_fail(q, -ENOSPC, "%" PRIu64 " bytes at offset %" PRIu64 " run past the end of the device "
				  "(%" PRIu64 " bytes: %" PRIu64 " are left there)", len, offset, q->dev_size,
				  q->dev_size - offset);
	if (q->backend == LCLOUD_BACKEND_PASSTHROUGH && q->max_transfer && len > q->max_transfer)
		return queue_fail(q, -EINVAL, "%" PRIu64 " bytes is more than one command may carry here (%" PRIu64
				  " bytes, MDTS)", len, q->max_transfer);
	if (!write || !h || !(h->flags & LCLOUD_IO_ATOMIC))
		return 0;
	if (!q->atomic_verdict || !q->atomic_verdict->max_untorn)
		return queue_fail(q, -EOPNOTSUPP, "atomic write refused: %s", q->atomic_verdict &&
				  q->atomic_verdict->n_reasons ? q->atomic_verdict->reasons[0].text
							       : "no atomic writes on this path");
	r = lcloud_verdict_allows(q->atomic_verdict, offset, len, why, sizeof(why));
	if (r != 1)
		return queue_fail(q, -EINVAL, "atomic write refused before submission: %s", why);
	return 0;
}

static int prep(struct lcloud_queue *q, bool write, void *buf, uint64_t len, uint64_t offset,
		const struct lcloud_hint *h, uint64_t user_data)
{
	struct lcloud_hint none = { 0 };
	struct hint_map m;
	int r, rw_flags;

	if (!q || !buf)
		return -EINVAL;
	q->error[0] = '\0';
	if (!h)
		h = &none;
	r = validate(q, write, buf, len, offset, h);
	if (r < 0)
		return r;
	if (q->backend != LCLOUD_BACKEND_IO_URING && !q->n_free)
		return queue_fail(q, -EAGAIN, "the queue is full (%u I/Os); submit and reap first", q->depth);
	hint_map(q, h, write, &m);
	rw_flags = m.rw_flags;
	if (write && (h->flags & LCLOUD_IO_ATOMIC) && q->backend != LCLOUD_BACKEND_PASSTHROUGH)
		rw_flags |= RWF_ATOMIC;
	if (write && m.lifetime >= 0 && m.lifetime != q->file_lifetime) {
		uint64_t hint = (uint64_t)m.lifetime;

		/* a file's lifetime hint is per inode: set it when it changes */
		if (fcntl(q->fd, F_SET_RW_HINT, &hint) == 0)
			q->file_lifetime = m.lifetime;
	}
	if (q->backend == LCLOUD_BACKEND_IO_URING) {
		/* no slot: the SQE carries the user data and the CQE the byte count */
		struct queue_op op = { write, buf, len, offset, rw_flags, user_data };

		return uring_prep_kernel(q, &op, &m);
	}
	{
		uint32_t slot = q->free_slots[--q->n_free];
		struct queue_op *op = &q->ops[slot];

		op->write = write;
		op->buf = buf;
		op->len = len;
		op->offset = offset;
		op->rw_flags = rw_flags;
		op->user_data = user_data;
		r = q->backend == LCLOUD_BACKEND_SYNC ? sync_prep(q, slot) : uring_prep(q, slot, &m);
		if (r < 0)
			queue_release_slot(q, slot);
		return r;
	}
}

void queue_release_slot(struct lcloud_queue *q, uint32_t slot)
{
	q->free_slots[q->n_free++] = slot;
}

/*
 * The hot path: an unhinted, aligned I/O to a file on the io_uring backend
 * needs nothing but the alignment test and an SQE. Anything else, and every
 * error (for its message), takes prep(). fast_read and fast_write are off
 * while buffers are registered (an I/O may then use a fixed buffer).
 */
static inline bool fast_ok(const struct lcloud_queue *q, const void *buf, uint64_t len, uint64_t offset)
{
	return len - 1 < QUEUE_IO_MAX && !((offset | len) & q->fast_pos_mask) && !((uintptr_t)buf & q->fast_mem_mask);
}

/*
 * io_uring_get_sqe() and io_uring_prep_rw() for a ring set up without SQPOLL
 * or SQE128 (uring_setup() turns the fast path off otherwise): the SQE's
 * first 8 bytes come ready from open, the rest is the I/O's or zero. False
 * when the submission queue is full.
 */
static inline bool fast_sqe(struct lcloud_queue *q, uint64_t sqe_head, const void *buf, uint64_t len,
			    uint64_t offset, uint64_t user_data)
{
	struct io_uring_sq *sq = &q->ring.sq;
	const unsigned int tail = sq->sqe_tail;
	struct io_uring_sqe *sqe;

	if (tail - IO_URING_READ_ONCE(*sq->khead) >= sq->ring_entries)
		return false;
	sqe = &sq->sqes[tail & sq->ring_mask];
	memcpy(sqe, &sqe_head, sizeof(sqe_head));
	sqe->off = offset;
	sqe->addr = (uint64_t)(uintptr_t)buf;
	sqe->len = (uint32_t)len;
	sqe->rw_flags = 0;
	sqe->user_data = user_data;
	/* buf_index, personality, file_index, addr3 and the padding */
	memset((char *)sqe + offsetof(struct io_uring_sqe, buf_index), 0,
	       sizeof(*sqe) - offsetof(struct io_uring_sqe, buf_index));
	sq->sqe_tail = tail + 1;
	return true;
}

/* Out of line, with the exported functions' arguments in their order: the fast path ends in a jump here. */
static __attribute__((noinline)) int prep_write_slow(struct lcloud_queue *q, const void *buf, uint64_t len,
						     uint64_t offset, const struct lcloud_hint *hint, uint64_t user_data)
{
	/* the buffer is only read; the backends take one pointer type for both directions */
	return prep(q, true, (void *)buf, len, offset, hint, user_data);
}

static __attribute__((noinline)) int prep_read_slow(struct lcloud_queue *q, void *buf, uint64_t len, uint64_t offset,
						    const struct lcloud_hint *hint, uint64_t user_data)
{
	return prep(q, false, buf, len, offset, hint, user_data);
}

LCLOUD_EXPORT int lcloud_queue_prep_write(struct lcloud_queue *q, const void *buf, uint64_t len, uint64_t offset,
					  const struct lcloud_hint *hint, uint64_t user_data)
{
	if (q && q->fast_write && !hint && fast_ok(q, buf, len, offset)) {
		if (fast_sqe(q, q->sqe_head_write, buf, len, offset, user_data))
			return 0;
		return prep_write_slow(q, buf, len, offset, NULL, user_data); /* for the message */
	}
	return prep_write_slow(q, buf, len, offset, hint, user_data);
}

LCLOUD_EXPORT int lcloud_queue_prep_read(struct lcloud_queue *q, void *buf, uint64_t len, uint64_t offset,
					 const struct lcloud_hint *hint, uint64_t user_data)
{
	if (q && q->fast_read && !hint && fast_ok(q, buf, len, offset)) {
		if (fast_sqe(q, q->sqe_head_read, buf, len, offset, user_data))
			return 0;
		return prep_read_slow(q, buf, len, offset, NULL, user_data); /* for the message */
	}
	return prep_read_slow(q, buf, len, offset, hint, user_data);
}

static __attribute__((noinline, cold)) int submit_slow(struct lcloud_queue *q, int r)
{
	if (!q)
		return -EINVAL;
	if (q->backend == LCLOUD_BACKEND_SYNC)
		return sync_submit(q);
	return queue_fail(q, r, "io_uring submit failed: %s", strerror(-r));
}

LCLOUD_EXPORT int lcloud_queue_submit(struct lcloud_queue *q)
{
	if (__builtin_expect(q && q->backend != LCLOUD_BACKEND_SYNC, 1)) {
		int r = io_uring_submit(&q->ring);

		if (__builtin_expect(r >= 0, 1)) {
			q->inflight += (uint32_t)r;
			return r;
		}
		return submit_slow(q, r);
	}
	return submit_slow(q, 0);
}

/* Waits until the CQ ring holds at least MIN completions past HEAD; returns how many it holds. */
static __attribute__((noinline)) int wait_kernel(struct lcloud_queue *q, unsigned int head, unsigned int ready,
						 uint32_t min)
{
	struct io_uring_cqe *cqe;
	/* the kernel counts from the ring's head, which has not moved: ask for MIN, not MIN - READY */
	int r = io_uring_wait_cqe_nr(&q->ring, &cqe, min);

	(void)ready;
	if (r < 0)
		return queue_fail(q, r, "waiting for completions failed: %s", strerror(-r));
	return (int)(io_uring_smp_load_acquire(q->ring.cq.ktail) - head);
}

/* A completion is a CQE with its last 4 bytes (flags there, nvme_status and reserved here) zeroed. */
_Static_assert(sizeof(struct lcloud_completion) == sizeof(struct io_uring_cqe) &&
		       offsetof(struct lcloud_completion, user_data) == offsetof(struct io_uring_cqe, user_data) &&
		       offsetof(struct lcloud_completion, result) == offsetof(struct io_uring_cqe, res) &&
		       offsetof(struct lcloud_completion, nvme_status) == offsetof(struct io_uring_cqe, flags),
	       "struct lcloud_completion no longer matches struct io_uring_cqe");

static inline void copy_cqes(struct lcloud_completion *restrict out, const struct io_uring_cqe *restrict cqe,
			     uint32_t n)
{
#pragma GCC unroll 2
	for (uint32_t i = 0; i < n; i++) {
		memcpy(&out[i], &cqe[i], sizeof(out[i]));
		out[i].nvme_status = 0;
		out[i].reserved = 0;
	}
}

/*
 * The kernel path's completions, straight off the CQ ring: what is there,
 * waiting only when fewer than MIN are, then one head update for the batch.
 */
static inline int reap_kernel(struct lcloud_queue *q, struct lcloud_completion *out, uint32_t max, uint32_t min)
{
	struct io_uring_cq *cq = &q->ring.cq;
	const unsigned int head = *cq->khead, mask = cq->ring_mask;
	unsigned int ready = io_uring_smp_load_acquire(cq->ktail) - head, at;
	uint32_t n, first;

	if (ready < min) {
		int r = wait_kernel(q, head, ready, min);

		if (r < 0)
			return r;
		ready = (unsigned int)r;
	}
	n = ready < max ? ready : max;
	/* up to the ring's end, then from its start: no mask per entry */
	at = head & mask;
	first = n < mask + 1 - at ? n : mask + 1 - at;
	copy_cqes(out, cq->cqes + at, first);
	if (__builtin_expect(n > first, 0))
		copy_cqes(out + first, cq->cqes, n - first);
	io_uring_smp_store_release(cq->khead, head + n);
	q->inflight -= n;
	return (int)n;
}

static __attribute__((noinline, cold)) int reap_slow(struct lcloud_queue *q, struct lcloud_completion *out,
						     uint32_t max, uint32_t min)
{
	if (!q || !out || !max || min > max)
		return -EINVAL;
	return q->backend == LCLOUD_BACKEND_SYNC ? sync_reap(q, out, max) : uring_reap(q, out, max, min);
}

LCLOUD_EXPORT int lcloud_queue_reap(struct lcloud_queue *q, struct lcloud_completion *out, uint32_t max, uint32_t min)
{
	if (__builtin_expect(q && out && max && min <= max && q->backend == LCLOUD_BACKEND_IO_URING, 1))
		return reap_kernel(q, out, max, min);
	return reap_slow(q, out, max, min);
}

LCLOUD_EXPORT int lcloud_queue_submit_and_reap(struct lcloud_queue *q, struct lcloud_completion *out, uint32_t max,
					       uint32_t min)
{
	if (!q || !out || !max || min > max)
		return -EINVAL;
	if (__builtin_expect(q->backend == LCLOUD_BACKEND_IO_URING, 1)) {
		/* one io_uring_enter() submits and waits until the ring holds MIN (counted from its head) */
		int r = io_uring_submit_and_wait(&q->ring, min);

		if (__builtin_expect(r < 0, 0))
			return queue_fail(q, r, "io_uring submit failed: %s", strerror(-r));
		q->inflight += (uint32_t)r;
		return reap_kernel(q, out, max, 0);
	}
	{
		int r = lcloud_queue_submit(q);

		return r < 0 ? r : lcloud_queue_reap(q, out, max, min);
	}
}

/* I/Os prepared and not yet taken by the kernel (or, sync backend, not yet done). */
static uint32_t queued(const struct lcloud_queue *q)
{
	if (q->backend == LCLOUD_BACKEND_SYNC)
		return q->queued;
	return q->ring.sq.sqe_tail - IO_URING_READ_ONCE(*q->ring.sq.khead);
}

static int64_t one(struct lcloud_queue *q, bool write, void *buf, uint64_t len, uint64_t offset,
		   const struct lcloud_hint *h, uint16_t *ret_status)
{
	struct lcloud_completion c;
	int r;

	if (!q)
		return -EINVAL;
	/* the one completion reaped here must be this I/O's */
	if (queued(q) || q->inflight || q->n_done)
		return queue_fail(q, -EBUSY, "the queue has I/Os of its own in progress (%u queued, %u in flight, "
				  "%u to reap): reap them first, or use a queue of its own", queued(q), q->inflight,
				  q->n_done);

	r = prep(q, write, buf, len, offset, h, 0);
	if (r < 0)
		return r;
	r = lcloud_queue_submit(q);
	if (r < 0)
		return r;
	r = lcloud_queue_reap(q, &c, 1, 1);
	if (r < 0)
		return r;
	if (ret_status)
		*ret_status = c.nvme_status;
	if (c.nvme_status)
		return queue_fail(q, -EIO, "the device returned NVMe status 0x%x: %s", c.nvme_status,
				  lcloud_nvme_status_to_string(c.nvme_status));
	if (c.result < 0) {
		if (c.result == -EOPNOTSUPP && write && h && (h->flags & LCLOUD_IO_ATOMIC))
			return queue_fail(q, c.result, "the kernel refused the atomic write (EOPNOTSUPP): this file "
					  "or device cannot write atomically here");
		return queue_fail(q, c.result, "%s failed: %s", write ? "write" : "read", strerror(-c.result));
	}
	return c.result;
}

LCLOUD_EXPORT int64_t lcloud_queue_write(struct lcloud_queue *q, const void *buf, uint64_t len, uint64_t offset,
					 const struct lcloud_hint *hint, uint16_t *ret_nvme_status)
{
	return one(q, true, (void *)buf, len, offset, hint, ret_nvme_status);
}

LCLOUD_EXPORT int64_t lcloud_queue_read(struct lcloud_queue *q, void *buf, uint64_t len, uint64_t offset,
					const struct lcloud_hint *hint, uint16_t *ret_nvme_status)
{
	return one(q, false, buf, len, offset, hint, ret_nvme_status);
}

LCLOUD_EXPORT int lcloud_queue_register_buffers(struct lcloud_queue *q, void *const *bufs, const uint64_t *lens,
						uint32_t n)
{
	struct iovec *iov;
	int r;

	if (!q || !bufs || !lens || !n)
		return -EINVAL;
	if (q->backend != LCLOUD_BACKEND_IO_URING)
		return 0; /* the sync and passthrough backends use plain buffers: nothing to gain */
	iov = calloc(n, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = lens[i];
	}
	r = io_uring_register_buffers(&q->ring, iov, n);
	if (r < 0) {
		free(iov);
		return queue_fail(q, r, "registering %u buffers failed: %s", n, strerror(-r));
	}
	free(q->reg);
	q->reg = iov;
	q->n_reg = n;
	/* an I/O in a registered buffer goes as a fixed one: prep() looks for it */
	q->fast_read = q->fast_write = false;
	return 0;
}

LCLOUD_EXPORT const char *lcloud_nvme_status_to_string(uint16_t status)
{
	return nvme_status_name(status);
}
