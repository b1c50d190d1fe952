/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plain_direct: aligned O_DIRECT writes. The kernel promises nothing here:
 * untorn only where the device or the provider promises it, the stack does
 * not shift the write off the promise's alignment, the block layer does not
 * split it and the file system keeps it in one extent. This file runs the
 * stages (verdict_plain_direct.h says which file holds which rule).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "util.h"
#include "verdict_internal.h"
#include "verdict_plain_direct.h"

/* Parity RAID updates data and parity in separate writes: a crash can leave a stripe torn. */
static bool parity_raid(const struct lcloud_layer *l)
{
	const struct lcloud_fact *level = fact(l, FACT_MD_LEVEL);

	return level && level->string &&
	       (streq(level->string, "raid4") || streq(level->string, "raid5") || streq(level->string, "raid6"));
}

/*
 * The largest untorn size from LIMIT and the sizes merges left: every size up
 * to a block, and above it only the one write the block layer never merges
 * (the verdict's merge gap between them).
 */
static void untorn_sizes(const struct pd_state *st, struct lcloud_verdict *v)
{
	uint64_t sizes = st->limit == UINT64_MAX ? 0 : st->sizes & pd_sizes_up_to(st->limit);
	uint64_t run = 0, top = sizes ? pow2_floor(sizes) : 0;

	/* the sizes from 512 bytes up that merges left in one run */
	for (uint64_t s = 512; s && (sizes & s); s <<= 1)
		run = s;
	v->max_untorn = top;
	if (top == run || !top)
		return;
	if ((sizes & ~pd_sizes_up_to(run)) != top) {
		v->max_untorn = run; /* more than one size above the run: not a shape merges make; keep the run */
		return;
	}
	v->merge_gap_above = run;
	v->merge_gap_below = top;
	v->merge_gap_reason = st->merge_reason >= 0 ? (unsigned int)st->merge_reason : 0;
}

int verdict_plain_direct(const struct lcloud_probe *p, struct lcloud_verdict *v)
{
	const struct lcloud_layer *fs = stack_first_layer(p, LCLOUD_LAYER_FILESYSTEM);
	struct pd_state st = { .top = top_block(p), .limit = UINT64_MAX, .definite = UINT64_MAX, .align = 512,
			       .sizes = UINT64_MAX, .merge_reason = -1 };
	int r;

	if (p->target_type == LCLOUD_TARGET_NVME_CHAR)
		return reason(v, "target:nvme-generic", "O_DIRECT needs a file or the block device: the NVMe generic "
			      "node takes passthrough commands only");
	if (fs) {
		r = pd_data_placement(fs, st.top >= 0, v);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	if (st.top < 0)
		return reason(v, "stack", "no block device below the target: nothing promises untorn writes");
	st.n_leaves = leaf_disks(p, st.top, st.leaves, (int)ARRAY_SIZE(st.leaves));
	if (st.n_leaves == 0)
		return reason(v, "stack", "the device stack below the target could not be followed to a disk");
	if (st.n_leaves > (int)ARRAY_SIZE(st.leaves))
		return reason(v, "stack", "the stack ends in %d devices, more than liblcloud follows (%zu): no "
			      "promise is claimed for it", st.n_leaves, ARRAY_SIZE(st.leaves));
	for (unsigned int i = 0; i < p->n_layers; i++)
		if (p->layers[i].kind == LCLOUD_LAYER_MD && parity_raid(&p->layers[i]))
			return reason(v, "sysfs:md/level", "%s is %s: a partial-stripe write updates data and parity "
				      "separately, so a crash can leave it torn whatever the disks promise",
				      p->layers[i].name, fact(&p->layers[i], FACT_MD_LEVEL)->string);
	/* where the target starts on the device directly below its partitions (for chunk edges) */
	{
		uint64_t start;

		/* a start unread adds 0: chunk edges are checked from 0; the placement check says "unknown" for it */
		(void)stack_below_partitions(p, st.top, LCLOUD_LAYER_DISK, &start, NULL);
		st.top_start += start;
	}

	r = pd_devices(p, v, &st);
	if (r < 0)
		return r;
	r = pd_splits(p, v, &st);
	if (r < 0)
		return r;
	if (fs && st.limit) {
		r = pd_file_system(p, fs, v, &st);
		if (r < 0)
			return r;
	}
	untorn_sizes(&st, v);
	r = pd_direct_io_floor(fs, st.align, v);
	if (r < 0)
		return r;
	if (!v->max_untorn || v->min_untorn >= v->merge_gap_below)
		v->merge_gap_above = v->merge_gap_below = 0; /* nothing untorn, or no size of the gap writable */
	v->no_above = st.definite;
	v->alignment = st.natural ? 0 : st.align;
	v->boundary = st.natural ? 0 : st.boundary;
	v->boundary_offset = st.natural ? 0 : st.boundary_offset;
	if (v->max_untorn)
		return reason(v, "kernel", "the kernel makes no promise for plain O_DIRECT writes: this rests on the "
			      "device or provider promise and on nothing in the stack splitting, merging or moving "
			      "the write");
	return 0;
}


