/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_PROBE_H
#define LCLOUD_PROBE_H

#include "ctx.h"

/*
 * The probe of the queue's own descriptor FD (readable, not O_PATH), named
 * DISPLAY: what the write guard checks is what the queue writes to. The
 * target device's signatures are read through FD, not reopened by name.
 */
int probe_io_target(struct lcloud_ctx *ctx, int fd, const char *display, struct lcloud_probe **ret_probe);

#endif
