/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_SIGNATURE_H
#define LCLOUD_SIGNATURE_H

#include "ctx.h"
#include "report.h"

/*
 * Adds what libblkid finds on each block layer (file system, RAID member or
 * partition table signature). Opening the devices needs read access: without
 * it one needs-root note is added and the rest of the probe stands.
 */
int signature_probe_layers(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int target_fd);

#endif
