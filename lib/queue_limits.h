/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_QUEUE_LIMITS_H
#define LCLOUD_QUEUE_LIMITS_H

#include "ctx.h"
#include "report.h"

/* Adds the kernel's queue limits of the block device at sysfs DEVDIR to L. */
int queue_limits_fill_layer(const struct lcloud_ctx *ctx, const char *devdir, struct lcloud_layer *l);

#endif
