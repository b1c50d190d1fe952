/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel layer: what the block layer will do with an I/O to this device,
 * from /sys/block/X/queue. An attribute this kernel does not have is reported
 * as not provided, never as 0, because 0 is a meaningful value for most of them.
 */
#include <errno.h>
#include <stdio.h>

#include "queue_limits.h"
#include "sysfs.h"
#include "util.h"

struct queue_attr {
	const char *name;
	enum lcloud_fact_type type;
	enum lcloud_fact_unit unit;
	const char *since; /* the kernel that introduced it, for the reason text */
};

static const struct queue_attr queue_attrs[] = {
	{ "logical_block_size", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, NULL },
	{ "physical_block_size", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, NULL },
	{ "minimum_io_size", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, NULL },
	{ "optimal_io_size", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, NULL },
	{ "max_sectors_kb", LCLOUD_FACT_U64, LCLOUD_UNIT_KIB, NULL },
	{ "max_hw_sectors_kb", LCLOUD_FACT_U64, LCLOUD_UNIT_KIB, NULL },
	/* dma_alignment is a mask (511 = 512-byte alignment), shown as the kernel gives it. */
	{ "dma_alignment", LCLOUD_FACT_U64, LCLOUD_UNIT_NONE, NULL },
	{ "write_cache", LCLOUD_FACT_STRING, LCLOUD_UNIT_NONE, NULL },
	{ "fua", LCLOUD_FACT_BOOL, LCLOUD_UNIT_NONE, "4.19" },
	{ "rotational", LCLOUD_FACT_BOOL, LCLOUD_UNIT_NONE, NULL },
	{ "chunk_sectors", LCLOUD_FACT_U64, LCLOUD_UNIT_SECTORS, NULL },
	/* 2: the block layer merges no writes into one request; 0 and 1 merge neighbours */
	{ "nomerges", LCLOUD_FACT_U64, LCLOUD_UNIT_NONE, NULL },
	/* how the block layer splits a request: segments per request, their size, gaps between them */
	{ "max_segments", LCLOUD_FACT_U64, LCLOUD_UNIT_NONE, NULL },
	{ "max_segment_size", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, NULL },
	{ "virt_boundary_mask", LCLOUD_FACT_U64, LCLOUD_UNIT_NONE, "5.1" },
	{ "atomic_write_unit_min_bytes", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, "6.11" },
	{ "atomic_write_unit_max_bytes", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, "6.11" },
	{ "atomic_write_max_bytes", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, "6.11" },
	{ "atomic_write_boundary_bytes", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, "6.11" },
	{ "max_write_streams", LCLOUD_FACT_U64, LCLOUD_UNIT_NONE, "6.16" },
	{ "write_stream_granularity", LCLOUD_FACT_U64, LCLOUD_UNIT_BYTES, "6.16" },
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

static int add_attr(const struct lcloud_ctx *ctx, const char *queue_dir, struct lcloud_layer *l,
		    const struct queue_attr *a)
{
	char source[96], buf[128];
	uint64_t v;
	int r;

	snprintf(source, sizeof(source), "sysfs:queue/%s", a->name);
	if (a->type == LCLOUD_FACT_STRING) {
		r = sysfs_read_attr(ctx, queue_dir, a->name, buf, sizeof(buf));
		return r < 0 ? add_missing(l, a, source, r) : layer_add_string(l, a->name, buf, source);
	}
	r = sysfs_read_attr_u64(ctx, queue_dir, a->name, &v);
	if (r < 0)
		return add_missing(l, a, source, r);
	if (a->type == LCLOUD_FACT_BOOL)
		return layer_add_bool(l, a->name, v != 0, source);
	return layer_add_u64(l, a->name, a->unit, v, source);
}

int queue_limits_fill_layer(const struct lcloud_ctx *ctx, const char *devdir, struct lcloud_layer *l)
{
	char queue_dir[SYSFS_PATH_MAX];
	int r;

	r = path_printf(queue_dir, sizeof(queue_dir), "%s/queue", devdir);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(queue_attrs); i++) {
		r = add_attr(ctx, queue_dir, l, &queue_attrs[i]);
		if (r < 0)
			return r;
	}
	return 0;
}
