/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program outside the tree: built only with `pkg-config --cflags --libs
 * lcloud` against an installed liblcloud, it prints a file's atomic write
 * limits as "name value" lines ("-" when the kernel does not report one).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <lcloud/lcloud.h>

int main(int argc, char **argv)
{
	static const char *const names[] = {
		"stx_atomic_write_unit_min", "stx_atomic_write_unit_max", "stx_atomic_write_segments_max",
	};
	struct lcloud_ctx *ctx = NULL;
	struct lcloud_probe *probe = NULL;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE\n", argv[0]);
		return 2;
	}
	r = lcloud_ctx_new(&ctx);
	if (r < 0)
		goto fail;
	r = lcloud_probe_path(ctx, argv[1], 0, &probe);
	if (r < 0)
		goto fail;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t v;

		r = lcloud_probe_get_u64(probe, LCLOUD_LAYER_FILESYSTEM, names[i], &v);
		if (r == 0)
			printf("%s %" PRIu64 "\n", names[i], v);
		else if (r == -ENODATA)
			printf("%s -\n", names[i]);
		else
			goto fail;
	}
	lcloud_probe_free(probe);
	lcloud_ctx_free(ctx);
	return 0;
fail:
	fprintf(stderr, "%s: %s: %s\n", argv[0], argv[1], strerror(-r));
	lcloud_probe_free(probe);
	lcloud_ctx_free(ctx);
	return 1;
}
