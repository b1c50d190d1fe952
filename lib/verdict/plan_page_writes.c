/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloud_plan_page_writes(): a storage engine's one call at start-up, over
 * the probe and the verdict both: how to open and write its pages so that
 * they are untorn, or why they cannot be. It sits above the two, so neither
 * calls back into the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "compat.h"
#include "report.h"
#include "util.h"
#include "verdict.h"
#include "verdict_internal.h"

/* struct lcloud_page_plan as liblcloud 0.1 defined it */
#define LCLOUD_PAGE_PLAN_SIZE_V1 (4 * 4 + 2 * 8 + 512)
_Static_assert(sizeof(struct lcloud_page_plan) == LCLOUD_PAGE_PLAN_SIZE_V1, "page plan v1 layout");

LCLOUD_EXPORT int lcloud_plan_page_writes(int fd, uint64_t page_size, struct lcloud_page_plan *ret_plan)
{
	struct lcloud_page_plan plan;
	struct lcloud_ctx *ctx = NULL;
	struct lcloud_probe *p = NULL;
	enum lcloud_io_path path = LCLOUD_PATH_BEST;
	int r;

	/* the first version's size is the least a caller can have; later ones only grow */
	if (!ret_plan || ret_plan->size < LCLOUD_PAGE_PLAN_SIZE_V1 || fd < 0 || !is_power_of_2(page_size))
		return -EINVAL;
	r = lcloud_ctx_new(&ctx);
	if (r < 0)
		return r;
	/* no signature reading: a data file's device is in use, and start-up must be quick */
	/*
	 * no live confirmation either: a storage engine's start-up must not write
	 * files nor wait on a frozen file system; statx is trusted only where the
	 * kernel honours it (XFS, ext4) and stacking file systems get no path
	 */
	r = lcloud_probe_fd(ctx, fd, LCLOUD_PROBE_NO_SIGNATURES, &p);
	if (r < 0)
		goto out;
	memset(&plan, 0, sizeof(plan));
	plan.size = sizeof(plan);
	r = lcloud_probe_check_v2(p, LCLOUD_PATH_BEST, page_size, &path, plan.reason, sizeof(plan.reason));
	if (r < 0)
		goto out;
	/* a plan is a yes or a no: what could not be decided is planned as not untorn, with its reason */
	if (r == LCLOUD_ANSWER_UNKNOWN)
		r = 0;
	if (r == 1) {
		const struct lcloud_verdict *v = lcloud_probe_get_verdict(p, path);

		plan.path = path;
		plan.open_flags = O_DIRECT;
		plan.rwf_flags = path == LCLOUD_PATH_RWF_ATOMIC ? RWF_ATOMIC : 0;
		plan.alignment = v->alignment ? v->alignment : page_size;
		plan.max_untorn_bytes = v->max_untorn;
	}
	{
		uint32_t caller_size = ret_plan->size;

		/* fill what the caller's structure has room for, and say how much that was */
		plan.size = caller_size < sizeof(plan) ? caller_size : (uint32_t)sizeof(plan);
		memcpy(ret_plan, &plan, plan.size);
	}
out:
	lcloud_probe_free(p);
	lcloud_ctx_free(ctx);
	return r;
}
