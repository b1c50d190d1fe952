/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading /proc/self/mountinfo (under the context's sysroot) line by line:
 * lines are read whole (getline) and parsed by mountinfo_parse.c; a line
 * that does not parse is counted for the caller to report.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "mountinfo.h"
#include "util.h"

int mountinfo_foreach(const struct lcloud_ctx *ctx, mountinfo_cb cb, void *data, struct mountinfo_bad *bad)
{
	char path[4200];
	char *line = NULL;
	size_t cap = 0;
	unsigned int lineno = 0;
	int r = 0;
	FILE *f;

	if (bad)
		memset(bad, 0, sizeof(*bad));
	r = ctx_path(ctx, "/proc/self/mountinfo", path, sizeof(path));
	if (r < 0)
		return r;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	r = 0;
	while (getline(&line, &cap, f) >= 0) {
		struct mountinfo_entry e;
		int pr;

		lineno++;
		pr = mountinfo_parse_line(line, &e);
		if (pr == -ENOMEM) {
			r = pr;
			break;
		}
		if (pr < 0) {
			if (bad && !bad->count++)
				bad->first_line = lineno;
			continue;
		}
		r = cb(&e, data);
		mountinfo_entry_free(&e); /* a callback that keeps the entry took its buffer */
		if (r)
			break;
	}
	if (!r && ferror(f))
		r = -EIO;
	free(line);
	fclose(f);
	return r < 0 ? r : 0;
}
