/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_BLOCK_LIMITS_H
#define LCLOUD_BLOCK_LIMITS_H

#include <stdbool.h>

#include "ctx.h"
#include "report.h"

/*
 * Adds the kernel's queue limits of the block device whose sysfs folder is
 * open as DEVFD to L; those only the verdicts read only when VERDICT_FACTS.
 */
int block_limits_fill_layer(int devfd, struct lcloud_layer *l, bool verdict_facts);

#endif
