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

#include "queue_limits.h"
#include "sysfs.h"
#include "util.h"

struct queue_attr {
	const char *name;
	enum lcloud_fact_type type;
	enum lcloud_fact_unit unit;
	const char *since; /* the kernel that introduced it, for the reason text */
	bool verdict_only; /* read by the verdicts alone: skipped with LCLOUD_PROBE_NO_VERDICT */
};

static const struct queue_attr queue_attrs[] = {
	{ "logical_block_size", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, NULL, false },
	{ "physical_block_size", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, NULL, false },
	{ "minimum_io_size", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, NULL, false },
	{ "optimal_io_size", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, NULL, false },
	{ "max_sectors_kb", LCLOUD_FACT_U64, LCLOUD_UNIT_KIB, NULL, false },
	{ "max_hw_sectors_kb", LCLOUD_FACT_U64, LCLOUD_UNIT_KIB, NULL, false },
	/* dma_alignment is a mask (511 = 512-byte alignment), shown as the kernel gives it. */
	{ "dma_alignment", LCLOUD_FACT_U64, LCLOUD_UNIT_NONE, NULL, false },
	{ "write_cache", LCLOUD_FACT_STRING, LCLOUD_UNIT_NONE, NULL, false },
	{ "fua", LCLOUD_FACT_BOOL, LCLOUD_UNIT_NONE, "4.19", true },
	{ "rotational", LCLOUD_FACT_BOOL, LCLOUD_UNIT_NONE, NULL, false },
	{ "chunk_sectors", LCLOUD_FACT_U64, LCLOUD_UNIT_SECTORS, NULL, true },
	/* 2: the block layer merges no writes into one request; 0 and 1 merge neighbours */
	{ "nomerges", LCLOUD_FACT_U64, LCLOUD_UNIT_NONE, NULL, true },
	/* how the block layer splits a request: segments per request, their size, gaps between them */
	{ "max_segments", LCLOUD_FACT_U64, LCLOUD_UNIT_NONE, NULL, true },
	{ "max_segment_size", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, NULL, true },
	{ "virt_boundary_mask", LCLOUD_FACT_U64, LCLOUD_UNIT_NONE, "5.1", true },
	{ "atomic_write_unit_min_bytes", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, "6.11", false },
	{ "atomic_write_unit_max_bytes", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, "6.11", false },
	{ "atomic_write_max_bytes", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, "6.11", false },
	{ "atomic_write_boundary_bytes", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, "6.11", false },
	{ "max_write_streams", LCLOUD_FACT_U64, LCLOUD_UNIT_NONE, "6.16", false },
	{ "write_stream_granularity", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, "6.16", false },
};

static int add_missing(struct lcloud_layer *l, const struct queue_attr *a, const char *source, int err)
{
	char reason[160];

	if (err == -ENOENT) {
		if (a->since)
			snprintf(reason, sizeof(reason),
				 "not provided by this kernel (queue/%s appeared in Linux %s)", a->name, a->since);
		else
			snprintf(reason, sizeof(reason), "not provided by this kernel (no queue/%s)", a->name);
		return layer_add_missing(l, a->name, a->type, a->unit, LCLOUD_FACT_NOT_PROVIDED, source, reason);
	}
	if (err == -EACCES || err == -EPERM)
		return layer_add_missing(l, a->name, a->type, a->unit, LCLOUD_FACT_NEEDS_ROOT, source,
					 "reading it needs root");
	snprintf(reason, sizeof(reason), "could not read queue/%s: %s", a->name, strerror(-err));
	return layer_add_missing(l, a->name, a->type, a->unit, LCLOUD_FACT_UNREADABLE, source, reason);
}

/* QUEUE_FD: the open queue/ folder, or -errno when it could not be opened. */
static int add_attr(int queue_fd, struct lcloud_layer *l, const struct queue_attr *a)
{
	char source[96], buf[128];
	uint64_t v;
	int r;

	snprintf(source, sizeof(source), "sysfs:queue/%s", a->name);
	if (queue_fd < 0)
		return add_missing(l, a, source, queue_fd);
	if (a->type == LCLOUD_FACT_STRING) {
		r = sysfs_read_at(queue_fd, a->name, buf, sizeof(buf));
		return r < 0 ? add_missing(l, a, source, r) : layer_add_string(l, a->name, buf, source);
	}
	r = sysfs_read_u64_at(queue_fd, a->name, &v);
	if (r < 0)
		return add_missing(l, a, source, r);
	if (a->type == LCLOUD_FACT_BOOL)
		return layer_add_bool(l, a->name, v != 0, source);
	return layer_add_u64(l, a->name, a->unit, v, source);
}

int queue_limits_fill_layer(int devfd, struct lcloud_layer *l, bool verdict_facts)
{
	int queue_fd, r = 0;

	/* queue/ opened once: each attribute is then one lookup in it (as lsblk reads them) */
	queue_fd = openat(devfd, "queue", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (queue_fd < 0)
		queue_fd = -errno;
	for (size_t i = 0; i < ARRAY_SIZE(queue_attrs) && r >= 0; i++)
		if (verdict_facts || !queue_attrs[i].verdict_only)
			r = add_attr(queue_fd, l, &queue_attrs[i]);
	if (queue_fd >= 0)
		close(queue_fd);
	return r < 0 ? r : 0;
}
