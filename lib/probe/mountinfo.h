/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_MOUNTINFO_H
#define LCLOUD_MOUNTINFO_H

/*
 * /proc/self/mountinfo (proc(5)), parsed in one place: the library reads the
 * mount of a file and the write guard the mounted devices; lcloudctl's list
 * compiles the same parser (mountinfo_parse.c, which needs nothing else)
 * for its MOUNTPOINT and FSTYPE columns.
 */
#include <stdint.h>

struct lcloud_ctx;

/*
 * One /proc/self/mountinfo line. The strings point into BUF, which the entry
 * owns (mountinfo_entry_free); they have no length limit, and SOURCE may be "".
 */
struct mountinfo_entry {
	uint64_t mount_id, parent_id;
	unsigned int major, minor;
	char *root, *mount_point, *options, *fstype, *source, *super_options;
	char *buf;
};
/* Parses one line (escapes undone); -EINVAL when it is not a mountinfo line. Exposed for the tests. */
int mountinfo_parse_line(const char *line, struct mountinfo_entry *ret);
void mountinfo_entry_free(struct mountinfo_entry *e);

/* Lines of mountinfo that did not parse: how many, and the first one's number (from 1). */
struct mountinfo_bad {
	unsigned int count, first_line;
};
/*
 * Calls CB for every entry of the context's mountinfo, in order, until it
 * returns non-zero (a negative value is returned as the error). CB may keep
 * the entry by copying it and setting its BUF to NULL. Lines that do not
 * parse are skipped and counted in BAD (may be NULL).
 */
typedef int (*mountinfo_cb)(struct mountinfo_entry *e, void *data);
int mountinfo_foreach(const struct lcloud_ctx *ctx, mountinfo_cb cb, void *data, struct mountinfo_bad *bad);

#endif
