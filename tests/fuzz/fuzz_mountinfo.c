/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc/self/mountinfo lines. Input: text; each line is handed to
 * mountinfo_parse_line, what it returns is read back in full, and freed
 * (mountinfo_entry_free).
 */
#include <string.h>

#include "filesystem.h"
#include "fuzz_common.h"

static void one_line(const char *line)
{
	struct mountinfo_entry e;
	volatile size_t sink = 0;

	if (mountinfo_parse_line(line, &e) == 0) {
		sink = strlen(e.root) + strlen(e.mount_point) + strlen(e.fstype) + strlen(e.source) +
		       strlen(e.options) + e.major + e.minor + (size_t)e.mount_id;
		mountinfo_entry_free(&e);
	}
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_for_each_line(data, size, one_line);
	return 0;
}
