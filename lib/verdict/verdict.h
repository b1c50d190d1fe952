/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_VERDICT_H
#define LCLOUD_VERDICT_H

#include <stdbool.h>
#include <stdint.h>

#include "lcloud/lcloud.h"

#define VERDICT_PATHS 4

struct verdict_reason {
	char *text;
	char *evidence;
};

struct lcloud_verdict {
	enum lcloud_io_path path;
	uint64_t max_untorn;
	uint64_t min_untorn;
	uint64_t alignment; /* 0: natural */
	uint64_t boundary;
	uint64_t boundary_offset;
	uint64_t hw_max; /* rwf_atomic: the largest size the device writes atomically itself */
	struct verdict_reason *reasons;
	unsigned int n_reasons;
	/* sizes above max_untorn rest on evidence that could not be read */
	bool unknown;
	unsigned int unknown_reason; /* index into reasons when unknown */
	/* sizes above this are "no" whatever could not be read: a limit that was read says so */
	uint64_t no_above;
	/*
	 * Sizes above merge_gap_above and below merge_gap_below are "no": the
	 * block layer may merge such a write with a neighbour into a command the
	 * device does not keep whole, while a write of merge_gap_below (the merge
	 * cap, or one whole block of a per-block promise) and one no larger than
	 * a block stay whole. Both 0: no such gap.
	 */
	uint64_t merge_gap_above, merge_gap_below;
	unsigned int merge_gap_reason; /* index into reasons: the rule that made the gap */
};

/* Joins the probe's layers into one verdict per path (stored in the probe). */
int verdict_compute(struct lcloud_probe *p);
void verdict_free(struct lcloud_verdict *v);

#endif
