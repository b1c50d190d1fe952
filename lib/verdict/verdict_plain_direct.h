/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_VERDICT_PLAIN_DIRECT_H
#define LCLOUD_VERDICT_PLAIN_DIRECT_H

/*
 * plain_direct, rule by rule: verdict_plain_direct.c runs the stages over one
 * state, each stage in a file of its own: where the target lands on each
 * disk and what the disk promises there (verdict_pd_placement.c), which
 * writes the block layer may merge into a command the disk does not keep
 * whole (verdict_pd_merges.c), where it splits a write (verdict_pd_splits.c),
 * and what the file system does with it (verdict_pd_file_system.c). A stage
 * only lowers LIMIT or takes sizes out of SIZES, and says why in the
 * verdict's reasons.
 */
#include <stdbool.h>
#include <stdint.h>

#include "report.h"
#include "verdict_internal.h"

#define STARTS_MAX 16 /* where a target may land on one disk: a dm device with several linear segments */

struct pd_state {
	int top;                 /* the target's top block layer */
	int leaves[16], n_leaves; /* the disks at the bottom of the stack */
	uint64_t top_start;      /* where the target starts below its partitions, for chunk edges */
	uint64_t limit;          /* the largest untorn write so far (UINT64_MAX: nothing capped it yet) */
	uint64_t definite;       /* the smallest limit that rests on what was read: above it "no", not unknown */
	uint64_t align;          /* writes aligned to this (the promise's block) */
	bool natural;            /* ... or aligned to their own size */
	uint64_t boundary, boundary_offset; /* one disk, one start: the promise's boundary in the target's terms */
	/*
	 * The sizes merges leave untorn, a mask: bit k for 2^k bytes
	 * (UINT64_MAX: merges took none out). Some sizes between one block and
	 * LIMIT may be missing: the verdict's merge gap.
	 */
	uint64_t sizes;
	int merge_reason;        /* the reason that took sizes out (-1: none) */
};

int pd_devices(const struct lcloud_probe *p, struct lcloud_verdict *v, struct pd_state *st);
/*
 * The merge rule on leaf LEAF under promise PR, for writes of up to *OK
 * (what the placement allows): lowers *OK to the largest size merges leave
 * untorn and sets *SIZES to the mask of them; FLOOR is the block a merged
 * command still keeps whole; *RET_REASON the index of the reason that took
 * sizes out, or -1. Returns 0 or -ENOMEM.
 */
int pd_merges(const struct lcloud_probe *p, int leaf, const struct promise *pr, uint64_t floor,
	      struct lcloud_verdict *v, uint64_t *ok, uint64_t *sizes, int *ret_reason);
/* The mask of power-of-two sizes up to X bytes (bit k for 2^k). */
uint64_t pd_sizes_up_to(uint64_t x);

/* What pd_loop_promise() found. */
enum pd_loop {
	PD_LOOP_PROMISE = 1, /* *PR and *SIZES say what the backing file keeps whole */
	PD_LOOP_NONE = 0,    /* nothing: said why */
	PD_LOOP_UNKNOWN = 2, /* nothing known: said why (unknown) */
};
/*
 * A loop device LEAF at the bottom of the stack: with direct I/O, the
 * promise its backing file gives to plain O_DIRECT writes (the backing
 * probe's own plain_direct verdict), the sizes it keeps whole (*SIZES) and
 * above which its sizes are "no" whatever is unknown (*DEFINITE), and the
 * reason that took sizes out there (*GAP_REASON, -1: none). Returns enum
 * pd_loop, or -ENOMEM.
 */
int pd_loop_promise(const struct lcloud_probe *p, int leaf, struct lcloud_verdict *v, struct promise *pr,
		    uint64_t *sizes, uint64_t *definite, int *gap_reason);
int pd_splits(const struct lcloud_probe *p, struct lcloud_verdict *v, struct pd_state *st);
int pd_file_system(const struct lcloud_probe *p, const struct lcloud_layer *fs, struct lcloud_verdict *v,
		   struct pd_state *st);

/* The largest power of two B that a write aligned in the target to B, starting X bytes in, keeps aligned. */
uint64_t pd_fits_from(int64_t x, uint64_t offset, uint64_t b);
/* Whether the file system's O_DIRECT writes are direct and where its data lies (1: decided, 0: go on). */
int pd_data_placement(const struct lcloud_layer *fs, bool has_stack, struct lcloud_verdict *v);
/* The smallest write direct I/O takes here, as the verdict's minimum. */
int pd_direct_io_floor(const struct lcloud_layer *fs, uint64_t lba, struct lcloud_verdict *v);

#endif
