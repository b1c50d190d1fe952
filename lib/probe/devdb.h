/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_DEVDB_H
#define LCLOUD_DEVDB_H

#include "ctx.h"
#include "report.h"

/* Adds the udev database's identifiers (ID_SERIAL, ID_WWN, ID_PATH) to each disk layer. */
int devdb_add_identifiers(const struct lcloud_ctx *ctx, struct lcloud_probe *p);

#endif
