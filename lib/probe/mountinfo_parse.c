/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One /proc/self/mountinfo line (proc(5)) into its fields. Lines are split on
 * single spaces, so a long mount point or an empty source field is a field
 * like any other, and the octal escapes of space, tab, newline and backslash
 * are undone. Pure: lcloudctl compiles it too (one parser for both).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mountinfo.h"
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

static bool parse_u64(const char *s, uint64_t *ret)
{
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return false;
	errno = 0;
	*ret = strtoull(s, &end, 10);
	return !errno && !*end;
}

static bool parse_devnum(const char *s, unsigned int *major, unsigned int *minor)
{
	const char *colon = strchr(s, ':');
	char *end;
	unsigned long v;

	if (!colon || s[0] < '0' || s[0] > '9' || colon[1] < '0' || colon[1] > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end != colon || v > UINT32_MAX)
		return false;
	*major = (unsigned int)v;
	v = strtoul(colon + 1, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return false;
	*minor = (unsigned int)v;
	return true;
}

void mountinfo_entry_free(struct mountinfo_entry *e)
{
	if (!e)
		return;
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

int mountinfo_parse_line(const char *line, struct mountinfo_entry *ret)
{
	char **fields = NULL, *copy, *p;
	size_t n = 0, cap = 0;
	struct mountinfo_entry e;
	int sep = -1, r = -EINVAL;

	copy = strdup(line);
	if (!copy)
		return -ENOMEM;
	copy[strcspn(copy, "\n")] = '\0';
	/* id parent maj:min root mountpoint options [optional...] - fstype source superopts */
	for (p = copy;;) {
		char *space = strchr(p, ' ');

		if (n == cap) {
			char **grown = realloc(fields, (cap = cap ? cap * 2 : 16) * sizeof(*fields));

			if (!grown) {
				r = -ENOMEM;
				goto out;
			}
			fields = grown;
		}
		fields[n++] = p;
		if (!space)
			break;
		*space = '\0';
		p = space + 1;
	}
	for (size_t i = 6; i < n && sep < 0; i++)
		if (streq(fields[i], "-"))
			sep = (int)i;
	if (sep < 0 || (size_t)sep + 2 >= n)
		goto out;
	memset(&e, 0, sizeof(e));
	if (!parse_u64(fields[0], &e.mount_id) || !parse_u64(fields[1], &e.parent_id) ||
	    !parse_devnum(fields[2], &e.major, &e.minor) || !fields[4][0] || !fields[sep + 1][0])
		goto out;
	e.root = fields[3];
	e.mount_point = fields[4];
	e.options = fields[5];
	e.fstype = fields[sep + 1];
	e.source = fields[sep + 2]; /* may be empty */
	e.super_options = (size_t)sep + 3 < n ? fields[sep + 3] : fields[n - 1] + strlen(fields[n - 1]);
	unescape_octal(e.root);
	unescape_octal(e.mount_point);
	unescape_octal(e.options);
	unescape_octal(e.fstype);
	unescape_octal(e.source);
	unescape_octal(e.super_options);
	e.buf = copy;
	copy = NULL;
	*ret = e;
	r = 0;
out:
	free(fields);
	free(copy);
	return r;
}
