/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_CTX_H
#define LCLOUD_CTX_H

#include <limits.h>
#include <stdbool.h>

#include "lcloud/lcloud.h"

struct lcloud_ctx {
	char *sysroot; /* "" for the live system */
	char error[8192]; /* why the last failing call that has no object of its own failed */
};

/* True when lookups go to a captured tree instead of the live system. */
bool ctx_has_sysroot(const struct lcloud_ctx *ctx);
/* BUF = sysroot + ABSPATH (ABSPATH starts with '/'). */
int ctx_path(const struct lcloud_ctx *ctx, const char *abspath, char *buf, size_t size);

#endif
