/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the held-file scan and the storage watch read from the kernel:
 * /proc/PID/fdinfo texts, /proc/PID/maps lines and uevent messages. Input:
 * byte 0 picks the reader (0 fdinfo, 1 maps, one line per line, 2 uevent),
 * the rest is its text, handed over with its exact length (no NUL added).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "held_file.h"
#include "watch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text;
	volatile uint64_t sink = 0;

	if (size < 1)
		return 0;
	text = (const char *)data + 1;
	size--;
	switch (data[0] % 3) {
	case 0: {
		uint64_t ino;

		if (held_parse_fdinfo_ino(text, size, &ino) == 0)
			sink = ino;
		break;
	}
	case 1:
		while (size) {
			const char *nl = memchr(text, '\n', size);
			size_t len = nl ? (size_t)(nl - text) : size;
			unsigned int maj, min;
			uint64_t ino;

			if (held_parse_maps_line(text, len, &maj, &min, &ino) == 0)
				sink += maj + min + ino;
			text += len + (nl ? 1 : 0);
			size -= len + (nl ? 1 : 0);
		}
		break;
	default:
		sink = uevent_is_block(text, size);
		break;
	}
	(void)sink;
	return 0;
}
