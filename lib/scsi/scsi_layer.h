/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_SCSI_LAYER_H
#define LCLOUD_SCSI_LAYER_H

#include "ctx.h"
#include "report.h"

/* Adds a SCSI layer (INQUIRY, VPD, READ CAPACITY, hints, cloud promise) under every SCSI disk layer. */
int scsi_probe_layers(const struct lcloud_ctx *ctx, struct lcloud_probe *p);

#endif
