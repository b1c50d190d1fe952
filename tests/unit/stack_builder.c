/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hand-built typed stack of stack_builder.h: thin wrappers over the
 * report's own functions that assert each step, and the verdict read back
 * through the public getters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stack_builder.h"

struct lcloud_probe *sb_new(const char *path, enum lcloud_target_type type)
{
	struct lcloud_probe *p = report_new(path);

	assert_non_null(p);
	p->target_type = type;
	p->page_size = SB_PAGE_SIZE;
	return p;
}

int sb_layer(struct lcloud_probe *p, enum lcloud_layer_kind kind, const char *name, int parent)
{
	int index = report_add_layer(p, kind, name, parent);

	assert_true(index >= 0);
	return index;
}

void sb_u64(struct lcloud_probe *p, int layer, enum fact_id id, uint64_t value)
{
	assert_int_equal(layer_add_u64(report_layer(p, layer), id, value, NULL), 0);
}

void sb_u64_from(struct lcloud_probe *p, int layer, enum fact_id id, uint64_t value, const char *source)
{
	assert_int_equal(layer_add_u64(report_layer(p, layer), id, value, source), 0);
}

void sb_bool(struct lcloud_probe *p, int layer, enum fact_id id, bool value)
{
	assert_int_equal(layer_add_bool(report_layer(p, layer), id, value, NULL), 0);
}

void sb_string(struct lcloud_probe *p, int layer, enum fact_id id, const char *value)
{
	assert_int_equal(layer_add_string(report_layer(p, layer), id, value, NULL), 0);
}

void sb_unread(struct lcloud_probe *p, int layer, enum fact_id id, const char *reason)
{
	assert_int_equal(layer_add_missing(report_layer(p, layer), id, LCLOUD_FACT_NEEDS_ROOT, NULL, reason), 0);
}

/* The layer's fact ID as the report holds it, in any state, for changing a value the builder set. */
static struct lcloud_fact *fact_of(struct lcloud_probe *p, int layer, enum fact_id id)
{
	return (struct lcloud_fact *)layer_fact(report_layer(p, layer), id);
}

void sb_set_u64(struct lcloud_probe *p, int layer, enum fact_id id, uint64_t value)
{
	struct lcloud_fact *f = fact_of(p, layer, id);

	if (!f) {
		sb_u64(p, layer, id, value);
		return;
	}
	f->state = LCLOUD_FACT_PRESENT;
	f->u64 = value;
	free(f->reason);
	f->reason = NULL;
}

void sb_set_unread(struct lcloud_probe *p, int layer, enum fact_id id, const char *reason)
{
	struct lcloud_fact *f = fact_of(p, layer, id);

	if (!f) {
		sb_unread(p, layer, id, reason);
		return;
	}
	f->state = LCLOUD_FACT_NEEDS_ROOT;
	free(f->reason);
	f->reason = strdup(reason);
	assert_non_null(f->reason);
}

void sb_not_provided(struct lcloud_probe *p, int layer, enum fact_id id)
{
	assert_int_equal(layer_add_missing(report_layer(p, layer), id, LCLOUD_FACT_NOT_PROVIDED, NULL,
					   "not provided"), 0);
}

void sb_dm_segment(struct lcloud_probe *p, int layer, uint64_t start, uint64_t length, const char *type,
		   const char *params)
{
	assert_int_equal(layer_add_dm_segment(report_layer(p, layer), start, length, type, params, "dm:table"), 0);
}

void sb_md_member(struct lcloud_probe *p, int layer, const char *member, uint64_t data_offset)
{
	assert_int_equal(layer_add_md_member(report_layer(p, layer), member, data_offset, NULL), 0);
}

void sb_promise_alignment(struct lcloud_probe *p, int layer, enum layer_promise_alignment alignment)
{
	assert_int_equal(layer_set_promise_alignment(report_layer(p, layer), alignment, NULL), 0);
}

void sb_note(struct lcloud_probe *p, enum note_code code, int layer)
{
	assert_int_equal(report_note(p, code, layer, "a hand-built note"), 0);
}

void sb_backing(struct lcloud_probe *p, int layer, struct lcloud_probe *backing)
{
	sb_verdict(backing);
	p->layers[layer].backing = backing;
}

/* The queue limits of sb_queue(), in the catalogue's units. */
static const struct {
	enum fact_id id;
	uint64_t value;
} quiet_queue[] = {
	{ FACT_SIZE, 64ULL << 30 },
	{ FACT_MAX_SECTORS_KB, 1024 },
	{ FACT_MAX_HW_SECTORS_KB, 1024 },
	{ FACT_CHUNK_SECTORS, 0 },
	{ FACT_NOMERGES, 2 },
	{ FACT_MAX_SEGMENTS, 256 },
	{ FACT_MAX_SEGMENT_SIZE, MIB },
	{ FACT_VIRT_BOUNDARY_MASK, 0 },
	{ FACT_DMA_ALIGNMENT, 511 },
};

void sb_queue(struct lcloud_probe *p, int layer, const char *dev)
{
	sb_string(p, layer, FACT_DEV, dev);
	for (size_t i = 0; i < sizeof(quiet_queue) / sizeof(quiet_queue[0]); i++)
		sb_u64(p, layer, quiet_queue[i].id, quiet_queue[i].value);
}

int sb_disk(struct lcloud_probe *p, const char *name, const char *dev, int parent)
{
	int disk = sb_layer(p, LCLOUD_LAYER_DISK, name, parent);

	sb_queue(p, disk, dev);
	return disk;
}

int sb_partition(struct lcloud_probe *p, const char *name, uint64_t start, int parent)
{
	int part = sb_layer(p, LCLOUD_LAYER_PARTITION, name, parent);

	sb_u64(p, part, FACT_START_BYTES, start);
	return part;
}

int sb_nvme(struct lcloud_probe *p, int disk, const char *name, uint64_t lba_size, uint64_t power_fail,
	    const char *source)
{
	int nvme = sb_layer(p, LCLOUD_LAYER_NVME, name, disk);

	sb_u64(p, nvme, FACT_FLBAS, 0);
	sb_u64(p, nvme, FACT_LBA_SIZE, lba_size);
	sb_u64(p, nvme, FACT_LBA_METADATA_SIZE, 0);
	sb_u64_from(p, nvme, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES, power_fail, source);
	sb_u64(p, nvme, FACT_ATOMIC_BOUNDARY_POWER_FAIL_BYTES, 0);
	return nvme;
}

int sb_fs(struct lcloud_probe *p, const char *type, uint64_t block)
{
	int fs = sb_layer(p, LCLOUD_LAYER_FILESYSTEM, type, -1);

	sb_string(p, fs, FACT_FSTYPE, type);
	sb_u64(p, fs, FACT_BLOCK_SIZE, block);
	return fs;
}

void sb_statx_atomic(struct lcloud_probe *p, int layer, uint64_t unit_min, uint64_t unit_max)
{
	sb_u64(p, layer, FACT_STX_ATOMIC_WRITE_UNIT_MIN, unit_min);
	sb_u64(p, layer, FACT_STX_ATOMIC_WRITE_UNIT_MAX, unit_max);
	sb_bool(p, layer, FACT_STX_ATTR_WRITE_ATOMIC, true);
}

void sb_verdict(struct lcloud_probe *p)
{
	assert_int_equal(verdict_compute(p), 0);
}

const struct lcloud_verdict *sb_path(const struct lcloud_probe *p, enum lcloud_io_path path)
{
	const struct lcloud_verdict *v = lcloud_probe_get_verdict(p, path);

	assert_non_null(v);
	return v;
}

uint64_t sb_max(const struct lcloud_probe *p, enum lcloud_io_path path)
{
	return lcloud_verdict_get_max_untorn_bytes(sb_path(p, path));
}

int sb_check(const struct lcloud_probe *p, enum lcloud_io_path path, uint64_t size)
{
	char why[2048];
	int r = lcloud_probe_check(p, path, size, NULL, why, sizeof(why));

	assert_true(r >= 0);
	return r;
}

bool sb_reason_has(const struct lcloud_probe *p, enum lcloud_io_path path, const char *needle)
{
	const struct lcloud_verdict *v = sb_path(p, path);

	for (unsigned int i = 0; i < lcloud_verdict_get_reason_count(v); i++)
		if (strstr(lcloud_verdict_get_reason(v, i), needle) ||
		    strstr(lcloud_verdict_get_reason_evidence(v, i), needle))
			return true;
	sb_dump(p, path);
	return false;
}

bool sb_unknown_has(const struct lcloud_probe *p, enum lcloud_io_path path, const char *needle)
{
	const char *u = lcloud_verdict_get_unknown_reason(sb_path(p, path));

	if (u && strstr(u, needle))
		return true;
	sb_dump(p, path);
	return false;
}

void sb_dump(const struct lcloud_probe *p, enum lcloud_io_path path)
{
	const struct lcloud_verdict *v = sb_path(p, path);

	fprintf(stderr, "# %s: max %llu, min %llu, unknown: %s\n", lcloud_io_path_to_string(path),
		(unsigned long long)lcloud_verdict_get_max_untorn_bytes(v),
		(unsigned long long)lcloud_verdict_get_min_untorn_bytes(v),
		lcloud_verdict_get_unknown_reason(v) ? lcloud_verdict_get_unknown_reason(v) : "-");
	for (unsigned int i = 0; i < lcloud_verdict_get_reason_count(v); i++)
		fprintf(stderr, "#   [%s] %s\n", lcloud_verdict_get_reason_evidence(v, i), lcloud_verdict_get_reason(v, i));
}
