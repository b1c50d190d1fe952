/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The active swap areas, read once for those who must not write over them
 * (the write guard) and those who say who holds a device (holders.c). The
 * kernel writes a path with space, tab, newline and backslash as octal
 * escapes (seq_file's mangling), which are undone here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swaps.h"

/* The first field of a /proc/swaps line, unescaped in place; *IS_FILE from the second (Type). */
static char *first_field(char *line, bool *is_file)
{
	char *in = line, *out = line, *type;
	size_t end = strcspn(line, " \t\n");

	type = line + end + strspn(line + end, " \t");
	*is_file = !strncmp(type, "file", 4);
	line[end] = '\0';
	while (*in) {
		if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' && in[3] >= '0' &&
		    in[3] <= '7') {
			*out++ = (char)((in[1] - '0') << 6 | (in[2] - '0') << 3 | (in[3] - '0'));
			in += 4;
		} else {
			*out++ = *in++;
		}
	}
	*out = '\0';
	return line;
}

int swaps_foreach(swaps_cb cb, void *data)
{
	char *line = NULL;
	size_t cap = 0;
	int r = 0;
	FILE *f = fopen("/proc/swaps", "re");

	if (!f)
		return -errno;
	while (!r && getline(&line, &cap, f) >= 0) {
		bool is_file;
		const char *path = first_field(line, &is_file);

		/* not the heading */
		if (path[0] == '/')
			r = cb(path, is_file, data);
	}
	free(line);
	fclose(f);
	return r;
}
