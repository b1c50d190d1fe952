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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *line, *save = NULL;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct overlay_layers l;
		volatile size_t sink = 0;

		if (overlay_options_parse(line, &l) != 0)
			continue;
		if (!l.n_lowers || l.n_lowers > OVERLAY_LAYERS_MAX || l.first_data_only == 0 ||
		    l.first_data_only > l.n_lowers)
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
	free(text);
	return 0;
}
