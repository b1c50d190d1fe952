/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_NVME_LAYER_H
#define LCLOUD_NVME_LAYER_H

#include "ctx.h"
#include "report.h"

/* Adds an NVME layer (identify, hints, cloud promise) under every NVMe namespace disk layer. */
int nvme_probe_layers(const struct lcloud_ctx *ctx, struct lcloud_probe *p);

#endif
