/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Parsing /proc/self/mountinfo (proc(5)): which mount and device a file lives on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filesystem.h"
#include "util.h"

/* Mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

static int copy_field(char *dst, size_t size, const char *src)
{
	if (strlen(src) >= size)
		return -ENAMETOOLONG;
	strcpy(dst, src);
	unescape_octal(dst);
	return 0;
}

int mountinfo_parse_line(const char *line, struct mountinfo_entry *ret)
{
	char *copy, *save = NULL, *tok;
	char *fields[16];
	int n = 0, sep = -1, r = -EINVAL;
	struct mountinfo_entry e;

	copy = strdup(line);
	if (!copy)
		return -ENOMEM;
	copy[strcspn(copy, "\n")] = '\0';
	for (tok = strtok_r(copy, " ", &save); tok && n < (int)ARRAY_SIZE(fields);
	     tok = strtok_r(NULL, " ", &save)) {
		if (streq(tok, "-") && sep < 0)
			sep = n;
		fields[n++] = tok;
	}
	/* id parent maj:min root mountpoint options [optional...] - fstype source superopts */
	if (n < 10 || sep < 6 || sep + 2 >= n)
		goto out;
	memset(&e, 0, sizeof(e));
	{
		char *end;

		e.mount_id = strtoull(fields[0], &end, 10);
		if (*end)
			goto out;
	}
	if (sscanf(fields[2], "%u:%u", &e.major, &e.minor) != 2)
		goto out;
	if (copy_field(e.root, sizeof(e.root), fields[3]) < 0 ||
	    copy_field(e.mount_point, sizeof(e.mount_point), fields[4]) < 0 ||
	    copy_field(e.options, sizeof(e.options), fields[5]) < 0 ||
	    copy_field(e.fstype, sizeof(e.fstype), fields[sep + 1]) < 0 ||
	    copy_field(e.source, sizeof(e.source), fields[sep + 2]) < 0)
		goto out;
	*ret = e;
	r = 0;
out:
	free(copy);
	return r;
}
