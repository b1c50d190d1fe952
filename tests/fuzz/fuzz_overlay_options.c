/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An overlay mount's super options as mountinfo shows them (after its
 * octal escapes). Input: text, one options field per line; each is handed
 * to overlay_options_parse, every layer it returns is read back in full and
 * checked (no layer is empty, the data-only layers start inside the list),
 * and freed (overlay_layers_free).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "overlay_options.h"

static void one_line(const char *line)
{
	struct overlay_layers l;
	volatile size_t sink = 0;

	if (overlay_options_parse(line, &l) != 0)
		return;
	if (!l.n_lowers || l.n_lowers > OVERLAY_LAYERS_MAX || l.first_data_only == 0 || l.first_data_only > l.n_lowers)
		abort();
	for (unsigned int i = 0; i < l.n_lowers; i++) {
		if (!l.lowers[i][0])
			abort();
		sink += strlen(l.lowers[i]);
	}
	if (l.upper)
		sink += strlen(l.upper);
	(void)sink;
	overlay_layers_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_for_each_line(data, size, one_line);
	return 0;
}
