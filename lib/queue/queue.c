/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The I/O queue: open a target, choose a backend, refuse what would not be
 * what the caller asked for (an atomic write the verdict does not call
 * untorn, a misaligned direct I/O), map hints, and hand the I/O to the
 * backend through its table (queue_backend.h), asking its capability flags
 * rather than which backend it is. Offsets are the target's own; partitions
 * are translated here. The unhinted, aligned I/O of a ring that allows it
 * runs inline (queue_uring.h); slots are handed out and taken back here.
 * A writing queue asks its watch before each submission (queue_watch.c):
 * once its storage gained a user it submits nothing again.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include "queue_uring.h"
#include "report.h"
#include "stack_walk.h"
#include "util.h"

#define QUEUE_DEPTH_MAX 4096

int queue_passthrough_span(const struct lcloud_probe *p, const struct lcloud_layer **ret_nvme, uint64_t *ret_offset,
			   uint64_t *ret_size)
{
	const struct lcloud_layer *unread_start, *top;
	uint64_t offset, size = 0;
	int disk;

	*ret_nvme = NULL;
	if (!p->n_layers || stack_first_layer(p, LCLOUD_LAYER_FILESYSTEM))
		return -ENODEV;
	top = &p->layers[0];
	disk = stack_below_partitions(p, 0, LCLOUD_LAYER_DISK, &offset, &unread_start);
	if (disk < 0 || p->layers[disk].kind != LCLOUD_LAYER_DISK)
		return -ENODEV;
	*ret_nvme = stack_child_layer(p, disk, LCLOUD_LAYER_NVME);
	if (!*ret_nvme)
		return -ENODEV;
	/* a start not read is no start of 0, a size not read no end: writes could leave the partition */
	if (unread_start || (top->kind == LCLOUD_LAYER_PARTITION && layer_get_bytes(top, FACT_SIZE, &size) <= 0))
		return -ENODATA;
	*ret_offset = offset;
	*ret_size = size;
	return 0;
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
	const struct lcloud_layer *fs = stack_first_layer(q->probe, LCLOUD_LAYER_FILESYSTEM);
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

/* The table of a backend the caller may name (AUTO is resolved before). */
static const struct queue_backend_ops *backend_table(enum lcloud_backend backend)
{
	return backend == LCLOUD_BACKEND_PASSTHROUGH ? &queue_backend_uring_nvme
	       : backend == LCLOUD_BACKEND_SYNC     ? &queue_backend_sync
						    : &queue_backend_uring;
}

static void set_backend(struct lcloud_queue *q, const struct queue_backend_ops *ops)
{
	q->backend = ops;
	q->backend_caps = ops->caps;
}

/* Opens the chosen backend on the target worked out so far; the inline ring when it offers one. */
static int open_backend(struct lcloud_queue *q)
{
	const struct queue_backend_target t = {
		.fd = q->fd, .depth = q->depth, .nsid = q->nsid, .lba = q->lba, .dev_offset = q->dev_offset,
	};
	const bool inline_ring = q->backend_caps & QUEUE_CAP_INLINE_RING;
	void *state = inline_ring ? &q->inline_ring : calloc(1, q->backend->state_size);
	int r;

	if (!state)
		return -ENOMEM;
	r = q->backend->open(&t, state, &q->error);
	if (r < 0) {
		if (inline_ring)
			memset(state, 0, sizeof(q->inline_ring));
		else
			free(state);
		return r;
	}
	q->backend_state = state;
	q->ring = inline_ring ? &q->inline_ring : NULL;
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
	    (flags & ~(uint32_t)(LCLOUD_QUEUE_WRITE | LCLOUD_QUEUE_FORCE | LCLOUD_QUEUE_OWN_FILE)))
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
	q->watch = (struct storage_watch)STORAGE_WATCH_INIT;
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
		q->own_file = flags & LCLOUD_QUEUE_OWN_FILE;
		r = queue_guard(ctx, q, (flags & LCLOUD_QUEUE_FORCE ? GUARD_FORCE : 0) |
					(q->own_file ? 0 : GUARD_LAYER_HOLDERS));
		if (r < 0)
			goto fail;
		r = queue_watch_open(ctx, q, path, flags);
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
	set_backend(q, backend_table(backend));
	r = q->backend_caps & QUEUE_CAP_NVME_COMMAND ? open_passthrough(ctx, q, nvme, span, offset)
						     : open_direct(q, path);
	if (r < 0 && auto_chosen && (q->backend_caps & QUEUE_CAP_NVME_COMMAND) &&
	    (r == -EACCES || r == -EPERM || r == -ENODATA) && q->probe->target_type != LCLOUD_TARGET_NVME_CHAR) {
		/* the generic node is not ours to use: the block device, opened already, still is */
		set_backend(q, &queue_backend_uring);
		r = open_direct(q, path);
	}
	if (r < 0)
		goto fail;
	q->error.text[0] = '\0';
	{
		const struct lcloud_layer *top = NULL;

		for (unsigned int i = 0; i < q->probe->n_layers && !top; i++)
			if (q->probe->layers[i].kind != LCLOUD_LAYER_FILESYSTEM)
				top = &q->probe->layers[i];
		/* 0, no bound checked here: a file, or a device whose size was not read (the kernel stops at its end) */
		q->dev_size = 0;
		if (!stack_first_layer(q->probe, LCLOUD_LAYER_FILESYSTEM) && top)
			(void)layer_get_bytes(top, FACT_SIZE, &q->dev_size);
		/*
		 * A partition has no queue of its own: the transfer limit is its disk's.
		 * Not read, 0: no early refusal, and the kernel refuses a larger command itself.
		 */
		q->max_transfer = 0;
		(void)layer_get_bytes(stack_first_layer(q->probe, LCLOUD_LAYER_DISK), FACT_MAX_HW_SECTORS_KB, &q->max_transfer);
		/* a partition's own size (passthrough must not run past it); a whole namespace's device says */
		if (q->backend_caps & QUEUE_CAP_NVME_COMMAND)
			q->dev_size = span_size;
	}
	q->atomic_verdict = lcloud_probe_get_verdict(q->probe, q->backend->atomic_path);
	hint_caps_read(q);
	q->free_slots = calloc(depth, sizeof(*q->free_slots));
	q->slots_back.slot = calloc(depth, sizeof(*q->slots_back.slot));
	if (!q->free_slots || !q->slots_back.slot) {
		r = -ENOMEM;
		goto fail;
	}
	for (uint32_t i = 0; i < depth; i++)
		q->free_slots[q->n_free++] = depth - 1 - i;
	r = open_backend(q);
	/* io_uring switched off (kernel.io_uring_disabled, seccomp): the kernel path still works */
	if (r < 0 && auto_chosen && q->backend == &queue_backend_uring && (r == -EPERM || r == -ENOSYS || r == -EACCES)) {
		set_backend(q, &queue_backend_sync);
		q->error.text[0] = '\0';
		r = open_backend(q);
	}
	if (r < 0)
		goto fail;
	if (q->ring && q->ring->inline_ok && is_power_of_2(q->lba) && is_power_of_2(q->mem_align) && !q->dev_size) {
		/* files: nothing but alignment to check per I/O when there is no hint */
		q->fast_read = true;
		q->fast_write = q->writable;
		q->fast_pos_mask = q->lba - 1;
		q->fast_mem_mask = q->mem_align - 1;
	}
	*ret_queue = q;
	ctx->error[0] = '\0';
	return 0;
fail:
	/* the queue goes away: keep its reason where the caller can read it */
	snprintf(ctx->error, sizeof(ctx->error), "%s", q->error.text);
	lcloud_queue_free(q);
	return r;
}

LCLOUD_EXPORT void lcloud_queue_free(struct lcloud_queue *q)
{
	if (!q)
		return;
	if (q->backend_state) {
		q->backend->free(q->backend_state);
		if (q->backend_state != &q->inline_ring)
			free(q->backend_state);
	}
	queue_watch_free(q); /* the lease goes before the descriptor that holds it */
	if (q->fd >= 0)
		close(q->fd);
	if (q->hold_fd >= 0)
		close(q->hold_fd);
	guard_decision_release(q->guard);
	free(q->guard);
	lcloud_probe_free(q->probe);
	free(q->free_slots);
	free(q->slots_back.slot);
	free(q);
}

LCLOUD_EXPORT enum lcloud_backend lcloud_queue_get_backend(const struct lcloud_queue *q)
{
	return q ? q->backend->id : LCLOUD_BACKEND_AUTO;
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
	return q ? q->error.text : "";
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
	if ((q->backend_caps & QUEUE_CAP_ONE_COMMAND) && q->max_transfer && len > q->max_transfer)
		return queue_fail(q, -EINVAL, "%" PRIu64 " bytes is more than one command may carry here (%" PRIu64
				  " bytes, MDTS)", len, q->max_transfer);
	if (!write || !h || !(h->flags & LCLOUD_IO_ATOMIC))
		return 0;
	if (!lcloud_verdict_get_max_untorn_bytes(q->atomic_verdict))
		return queue_fail(q, -EOPNOTSUPP, "atomic write refused: %s",
				  lcloud_verdict_get_reason_count(q->atomic_verdict)
					  ? lcloud_verdict_get_reason(q->atomic_verdict, 0)
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
	q->error.text[0] = '\0';
	if (q->stopped)
		return queue_watch_check(q);
	if (!h)
		h = &none;
	r = validate(q, write, buf, len, offset, h);
	if (r < 0)
		return r;
	if ((q->backend_caps & QUEUE_CAP_SLOTS) && !q->n_free)
		return queue_fail(q, -EAGAIN, "the queue is full (%u I/Os); submit and reap first", q->depth);
	hint_map(q, h, write, &m);
	rw_flags = m.rw_flags;
	if (write && (h->flags & LCLOUD_IO_ATOMIC) && (q->backend_caps & QUEUE_CAP_RWF_ATOMIC))
		rw_flags |= RWF_ATOMIC;
	if (write && m.lifetime >= 0 && m.lifetime != q->file_lifetime) {
		uint64_t hint = (uint64_t)m.lifetime;

		/* a file's lifetime hint is per inode: set it when it changes */
		if (fcntl(q->fd, F_SET_RW_HINT, &hint) == 0)
			q->file_lifetime = m.lifetime;
	}
	{
		const struct queue_op op = { write, buf, len, offset, rw_flags, user_data };
		/* without slots the backend carries the user data itself (an SQE's, and the CQE's byte count) */
		uint32_t slot = q->backend_caps & QUEUE_CAP_SLOTS ? q->free_slots[--q->n_free] : UINT32_MAX;

		r = q->backend->prep(q->backend_state, slot, &op, &m, &q->error);
		if (r < 0 && slot != UINT32_MAX)
			q->free_slots[q->n_free++] = slot;
		return r;
	}
}

/* Takes back the slots the backend is done with. */
static void take_slots_back(struct lcloud_queue *q)
{
	for (uint32_t i = 0; i < q->slots_back.n; i++)
		q->free_slots[q->n_free++] = q->slots_back.slot[i];
	q->slots_back.n = 0;
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
		if (uring_fast_sqe(&q->inline_ring, q->inline_ring.sqe_head_write, buf, len, offset, user_data))
			return 0;
		return prep_write_slow(q, buf, len, offset, NULL, user_data); /* for the message */
	}
	return prep_write_slow(q, buf, len, offset, hint, user_data);
}

LCLOUD_EXPORT int lcloud_queue_prep_read(struct lcloud_queue *q, void *buf, uint64_t len, uint64_t offset,
					 const struct lcloud_hint *hint, uint64_t user_data)
{
	if (q && q->fast_read && !hint && fast_ok(q, buf, len, offset)) {
		if (uring_fast_sqe(&q->inline_ring, q->inline_ring.sqe_head_read, buf, len, offset, user_data))
			return 0;
		return prep_read_slow(q, buf, len, offset, NULL, user_data); /* for the message */
	}
	return prep_read_slow(q, buf, len, offset, hint, user_data);
}

static __attribute__((noinline, cold)) int submit_slow(struct lcloud_queue *q, int r)
{
	if (!q)
		return -EINVAL;
	if (!q->ring) {
		/* the watch first: a stopped queue submits nothing (queue_watch.c) */
		if (q->watching && (r = queue_watch_check(q)) < 0)
			return r;
		r = q->backend->submit(q->backend_state, &q->slots_back, &q->error);
		take_slots_back(q);
		if (r < 0)
			return r;
		if (q->backend_caps & QUEUE_CAP_ASYNC)
			q->inflight += (uint32_t)r;
		return r;
	}
	return queue_fail(q, r, "io_uring submit failed: %s", strerror(-r));
}

LCLOUD_EXPORT int lcloud_queue_submit(struct lcloud_queue *q)
{
	if (__builtin_expect(q && q->ring, 1)) {
		int r;

		if (q->watching && (r = queue_watch_check(q)) < 0)
			return r;
		r = io_uring_submit(&q->inline_ring.ring);

		if (__builtin_expect(r >= 0, 1)) {
			q->inflight += (uint32_t)r;
			return r;
		}
		return submit_slow(q, r);
	}
	return submit_slow(q, 0);
}

static __attribute__((noinline, cold)) int reap_slow(struct lcloud_queue *q, struct lcloud_completion *out,
						     uint32_t max, uint32_t min)
{
	int r;

	if (!q || !out || !max || min > max)
		return -EINVAL;
	r = q->backend->reap(q->backend_state, out, max, min, &q->slots_back, &q->error);
	take_slots_back(q);
	if (r > 0)
		q->inflight -= (uint32_t)r < q->inflight ? (uint32_t)r : q->inflight;
	if (q->stopped)
		queue_watch_drained(q);
	return r;
}

/* The inline ring's completions; the in-flight count follows. */
static inline int reap_ring(struct lcloud_queue *q, struct lcloud_completion *out, uint32_t max, uint32_t min)
{
	int r = uring_fast_reap(&q->inline_ring, out, max, min, &q->error);

	if (__builtin_expect(r > 0, 1))
		q->inflight -= (uint32_t)r;
	if (__builtin_expect(q->stopped, 0))
		queue_watch_drained(q); /* the last write of a stopped queue is done: its new user may proceed */
	return r;
}

LCLOUD_EXPORT int lcloud_queue_reap(struct lcloud_queue *q, struct lcloud_completion *out, uint32_t max, uint32_t min)
{
	if (__builtin_expect(q && out && max && min <= max && q->ring, 1))
		return reap_ring(q, out, max, min);
	return reap_slow(q, out, max, min);
}

LCLOUD_EXPORT int lcloud_queue_submit_and_reap(struct lcloud_queue *q, struct lcloud_completion *out, uint32_t max,
					       uint32_t min)
{
	if (!q || !out || !max || min > max)
		return -EINVAL;
	if (__builtin_expect(q->ring != NULL, 1)) {
		/* one io_uring_enter() submits and waits until the ring holds MIN (counted from its head) */
		int r;

		if (q->watching && (r = queue_watch_check(q)) < 0)
			return r;
		r = io_uring_submit_and_wait(&q->inline_ring.ring, min);

		if (__builtin_expect(r < 0, 0))
			return queue_fail(q, r, "io_uring submit failed: %s", strerror(-r));
		q->inflight += (uint32_t)r;
		return reap_ring(q, out, max, 0);
	}
	{
		int r = lcloud_queue_submit(q);

		return r < 0 ? r : lcloud_queue_reap(q, out, max, min);
	}
}

static int64_t one(struct lcloud_queue *q, bool write, void *buf, uint64_t len, uint64_t offset,
		   const struct lcloud_hint *h, uint16_t *ret_status)
{
	struct lcloud_completion c;
	uint32_t queued, to_reap;
	int r;

	if (!q)
		return -EINVAL;
	/* the one completion reaped here must be this I/O's */
	q->backend->pending(q->backend_state, &queued, &to_reap);
	if (queued || q->inflight || to_reap)
		return queue_fail(q, -EBUSY, "the queue has I/Os of its own in progress (%u queued, %u in flight, "
				  "%u to reap): reap them first, or use a queue of its own", queued, q->inflight,
				  to_reap);

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
	if (!(q->backend_caps & QUEUE_CAP_REGISTERED_BUFFERS))
		return 0; /* a backend that uses plain buffers: nothing to gain */
	iov = calloc(n, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = lens[i];
	}
	r = q->backend->register_buffers(q->backend_state, iov, n, &q->error);
	free(iov);
	if (r < 0)
		return r;
	/* an I/O in a registered buffer goes as a fixed one: prep() looks for it */
	q->fast_read = q->fast_write = false;
	return 0;
}

LCLOUD_EXPORT const char *lcloud_nvme_status_to_string(uint16_t status)
{
	return nvme_status_name(status);
}
