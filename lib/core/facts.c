/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fact catalogue's table, built from facts.def, and finding a fact by its JSON name. */
#include <errno.h>
#include <string.h>

#include "facts.h"
#include "util.h"

const struct fact_def fact_catalogue[FACT__COUNT] = {
#define FACT(id, name, type, unit, source, use) \
	[FACT_##id] = { name, LCLOUD_FACT_##type, LCLOUD_UNIT_##unit, source, FACT_USE_##use },
#include "facts.def"
#undef FACT
};

/* The stem of a family's name (dm_target_ for dm_target_N), or 0 when NAME is no family's. */
static size_t family_stem(const char *name)
{
	size_t n = strlen(name);

	if (n > 2 && streq(name + n - 2, "_N"))
		return n - 1;
	if (n > 7 && streq(name + n - 7, "_MEMBER"))
		return n - 6;
	return 0;
}

int fact_lookup(const char *name)
{
	for (int id = 0; id < FACT__COUNT; id++) {
		const char *known = fact_catalogue[id].name;
		size_t stem = family_stem(known);

		if (stem ? strncmp(name, known, stem) == 0 && name[stem] : streq(name, known))
			return id;
	}
	return -ENOENT;
}
