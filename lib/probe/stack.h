/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_STACK_H
#define LCLOUD_STACK_H

#include "ctx.h"
#include "report.h"

/*
 * Adds a layer for the block device at sysfs DEVDIR (canonical, /sys/devices/..., or its
 * /sys/class/block/NAME link)
 * under layer PARENT (-1 for none), then layers for every device below it:
 * partition -> disk, dm/md -> their slaves. Returns the new layer's index.
 */
int stack_resolve(const struct lcloud_ctx *ctx, struct lcloud_probe *p, const char *devdir, int parent);

#endif
