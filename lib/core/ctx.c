/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The library context: where /sys, /proc and /dev are (a sysroot for captured trees). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "util.h"

LCLOUD_EXPORT const char *lcloud_version(void)
{
	return LCLOUD_VERSION;
}

LCLOUD_EXPORT int lcloud_ctx_new(struct lcloud_ctx **ret_ctx)
{
	struct lcloud_ctx *ctx;

	if (!ret_ctx)
		return -EINVAL;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->sysroot = strdup("");
	if (!ctx->sysroot) {
		free(ctx);
		return -ENOMEM;
	}
	*ret_ctx = ctx;
	return 0;
}

LCLOUD_EXPORT void lcloud_ctx_free(struct lcloud_ctx *ctx)
{
	if (!ctx)
		return;
	free(ctx->sysroot);
	free(ctx);
}

LCLOUD_EXPORT int lcloud_ctx_set_sysroot(struct lcloud_ctx *ctx, const char *sysroot)
{
	char *copy;
	size_t n;

	if (!ctx)
		return -EINVAL;
	if (sysroot && sysroot[0]) {
		/* Canonical (and absolute now, not relative to a later cwd), so that
		 * resolved sysfs links can be mapped back under it. */
		copy = realpath(sysroot, NULL);
		if (!copy)
			return -errno;
	} else {
		copy = strdup("");
		if (!copy)
			return -ENOMEM;
	}
	n = strlen(copy);
	while (n > 0 && copy[n - 1] == '/')
		copy[--n] = '\0'; /* "/" means the live system too */
	free(ctx->sysroot);
	ctx->sysroot = copy;
	return 0;
}

LCLOUD_EXPORT const char *lcloud_ctx_get_sysroot(const struct lcloud_ctx *ctx)
{
	return ctx ? ctx->sysroot : NULL;
}

bool ctx_has_sysroot(const struct lcloud_ctx *ctx)
{
	return ctx->sysroot[0] != '\0';
}

int ctx_path(const struct lcloud_ctx *ctx, const char *abspath, char *buf, size_t size)
{
	return path_printf(buf, size, "%s%s", ctx->sysroot, abspath);
}

LCLOUD_EXPORT const char *lcloud_ctx_get_error(const struct lcloud_ctx *ctx)
{
	return ctx ? ctx->error : "";
}
