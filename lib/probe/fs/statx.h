/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_STATX_H
#define LCLOUD_STATX_H

#include "compat.h"
#include "report.h"

#define STATX_PROBE_MASK (STATX_WRITE_ATOMIC | STATX_DIOALIGN | STATX_DIO_READ_ALIGN)

/* Adds the statx facts (stx_* names) to L. */
int statx_fill_layer(struct lcloud_layer *l, const struct lcloud_statx *stx);

#endif
