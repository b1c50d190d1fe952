/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sizes as people type them: 16384, 16K, 16KiB, 1M. Binary units, as lsblk and fio read them. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "args.h"

int parse_size(const char *s, uint64_t *ret)
{
	static const struct {
		const char *suffix;
		unsigned int shift;
	} units[] = { { "", 0 },    { "b", 0 },  { "k", 10 },  { "kib", 10 }, { "m", 20 },
		      { "mib", 20 }, { "g", 30 }, { "gib", 30 },
		      { "t", 40 },   { "tib", 40 } };
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcasecmp(end, units[i].suffix) == 0) {
			if (units[i].shift && v > (UINT64_MAX >> units[i].shift))
				return -ERANGE;
			*ret = (uint64_t)v << units[i].shift;
			return 0;
		}
	return -EINVAL;
}
