/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The running kernel's release, for the rules that follow code checked against one. */
#ifndef LCLOUD_KERNEL_RELEASE_H
#define LCLOUD_KERNEL_RELEASE_H

#include "ctx.h"
#include "report.h"

/* Adds fact kernel_release to L (proc/sys/kernel/osrelease, under the sysroot), or why it is missing. */
int kernel_release_add(const struct lcloud_ctx *ctx, struct lcloud_layer *l);

#endif
