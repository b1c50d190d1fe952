/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel layer: what the block layer will do with an I/O to this device,
 * from /sys/block/X/queue. An attribute this kernel does not have is reported
 * as not provided, never as 0, because 0 is a meaningful value for most of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "block_limits.h"
#include "sysfs.h"
#include "util.h"

/* Which catalogue facts come from queue/ (the attribute is named as the fact), and since when. */
struct queue_attr {
	enum fact_id id;
	const char *since; /* the kernel that introduced it, for the reason text */
};

static const struct queue_attr queue_attrs[] = {
	{ FACT_LOGICAL_BLOCK_SIZE, NULL },
	{ FACT_PHYSICAL_BLOCK_SIZE, NULL },
	{ FACT_MINIMUM_IO_SIZE, NULL },
	{ FACT_OPTIMAL_IO_SIZE, NULL },
	{ FACT_MAX_SECTORS_KB, NULL },
	{ FACT_MAX_HW_SECTORS_KB, NULL },
	/* dma_alignment is a mask (511 = 512-byte alignment), shown as the kernel gives it. */
	{ FACT_DMA_ALIGNMENT, NULL },
	{ FACT_WRITE_CACHE, NULL },
	{ FACT_FUA, "4.19" },
	{ FACT_ROTATIONAL, NULL },
	{ FACT_CHUNK_SECTORS, NULL },
	/* 2: the block layer merges no writes into one request; 0 and 1 merge neighbours */
	{ FACT_NOMERGES, NULL },
	/* how the block layer splits a request: segments per request, their size, gaps between them */
	{ FACT_MAX_SEGMENTS, NULL },
	{ FACT_MAX_SEGMENT_SIZE, NULL },
	{ FACT_VIRT_BOUNDARY_MASK, "5.1" },
	{ FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, "6.11" },
	{ FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, "6.11" },
	{ FACT_ATOMIC_WRITE_MAX_BYTES, "6.11" },
	{ FACT_ATOMIC_WRITE_BOUNDARY_BYTES, "6.11" },
	{ FACT_MAX_WRITE_STREAMS, "6.16" },
	{ FACT_WRITE_STREAM_GRANULARITY, "6.16" },
};

static int add_missing(struct lcloud_layer *l, const struct queue_attr *a, const char *source, int err)
{
	const char *name = fact_def(a->id)->name;
	char reason[160];

	if (err == -ENOENT) {
		if (a->since)
			snprintf(reason, sizeof(reason),
				 "not provided by this kernel (queue/%s appeared in Linux %s)", name, a->since);
		else
			snprintf(reason, sizeof(reason), "not provided by this kernel (no queue/%s)", name);
		return layer_add_missing(l, a->id, LCLOUD_FACT_NOT_PROVIDED, source, reason);
	}
	if (err == -EACCES || err == -EPERM)
		return layer_add_missing(l, a->id, LCLOUD_FACT_NEEDS_ROOT, source,
					 "reading it needs root");
	snprintf(reason, sizeof(reason), "could not read queue/%s: %s", name, strerror(-err));
	return layer_add_missing(l, a->id, LCLOUD_FACT_UNREADABLE, source, reason);
}

/* QUEUE_FD: the open queue/ folder, or -errno when it could not be opened. */
static int add_attr(int queue_fd, struct lcloud_layer *l, const struct queue_attr *a)
{
	const struct fact_def *def = fact_def(a->id);
	const char *source = def->source; /* the catalogue's: sysfs:queue/NAME */
	char buf[128];
	uint64_t v;
	int r;

	if (queue_fd < 0)
		return add_missing(l, a, source, queue_fd);
	if (def->type == LCLOUD_FACT_STRING) {
		r = sysfs_read_at(queue_fd, def->name, buf, sizeof(buf));
		return r < 0 ? add_missing(l, a, source, r) : layer_add_string(l, a->id, buf, source);
	}
	r = sysfs_read_u64_at(queue_fd, def->name, &v);
	if (r < 0)
		return add_missing(l, a, source, r);
	if (def->type == LCLOUD_FACT_BOOL)
		return layer_add_bool(l, a->id, v != 0, source);
	return layer_add_u64(l, a->id, v, source);
}

int block_limits_fill_layer(int devfd, struct lcloud_layer *l, bool verdict_facts)
{
	int queue_fd, r = 0;

	/* queue/ opened once: each attribute is then one lookup in it (as lsblk reads them) */
	queue_fd = openat(devfd, "queue", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (queue_fd < 0)
		queue_fd = -errno;
	for (size_t i = 0; i < ARRAY_SIZE(queue_attrs) && r >= 0; i++)
		if (verdict_facts || fact_def(queue_attrs[i].id)->use != FACT_USE_VERDICT_ONLY)
			r = add_attr(queue_fd, l, &queue_attrs[i]);
	if (queue_fd >= 0)
		close(queue_fd);
	return r < 0 ? r : 0;
}
