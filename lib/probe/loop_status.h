/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a loop device is bound to, by the kernel's own record (LOOP_GET_STATUS64). */
#ifndef LCLOUD_LOOP_STATUS_H
#define LCLOUD_LOOP_STATUS_H

#include "ctx.h"
#include "report.h"

/*
 * Adds loop_backing_dev and loop_backing_inode to loop layer L (its dev
 * fact read already), or why they are missing: the device node must be
 * opened, which needs root or the disk group.
 */
int loop_status_add(const struct lcloud_ctx *ctx, struct lcloud_layer *l);

#endif
