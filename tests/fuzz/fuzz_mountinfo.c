/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc/self/mountinfo lines. Input: text; each line is handed to
 * mountinfo_parse_line, what it returns is read back in full, and freed
 * (mountinfo_entry_free).
 */
#include <stdlib.h>
#include <string.h>

#include "filesystem.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *line, *save = NULL;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct mountinfo_entry e;
		volatile size_t sink = 0;

		if (mountinfo_parse_line(line, &e) == 0) {
			sink = strlen(e.root) + strlen(e.mount_point) + strlen(e.fstype) + strlen(e.source) +
			       strlen(e.options) + e.major + e.minor + (size_t)e.mount_id;
			mountinfo_entry_free(&e);
		}
		(void)sink;
	}
	free(text);
	return 0;
}
