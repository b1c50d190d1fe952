/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Walking a probe's stack of layers: the first layer of a kind, the layer
 * directly below another, and the way down from a partition to the device
 * it sits on. Every family that reads the stack (probe, verdict, queue)
 * walks it through these, so that they all walk it the same way.
 */
#ifndef LCLOUD_STACK_WALK_H
#define LCLOUD_STACK_WALK_H

#include <stdint.h>

#include "report.h"

/* For a KIND argument below: a layer of any kind. */
#define STACK_ANY_KIND ((enum lcloud_layer_kind)0)

/* The first layer of KIND, the target's side first, or NULL. */
const struct lcloud_layer *stack_first_layer(const struct lcloud_probe *p, enum lcloud_layer_kind kind);
/* The first layer of KIND directly below layer PARENT, or NULL. */
const struct lcloud_layer *stack_child_layer(const struct lcloud_probe *p, int parent, enum lcloud_layer_kind kind);
/*
 * From layer INDEX down through the partitions on the way (none when INDEX
 * is no partition) to the device they sit on: its index, or -1 when a
 * partition's device is not of KIND or not in the stack. *RET_START (when
 * not NULL) gets the partitions' starts added up in bytes, a start not read
 * adding nothing; *RET_UNREAD (when not NULL) the partition whose start was
 * not read, else NULL: a caller that places writes says "unknown" for it.
 */
int stack_below_partitions(const struct lcloud_probe *p, int index, enum lcloud_layer_kind kind, uint64_t *ret_start,
			   const struct lcloud_layer **ret_unread);

#endif
