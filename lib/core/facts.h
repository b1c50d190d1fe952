/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fact catalogue (facts.def) as C: an id per fact, the table of their
 * names, types and units, and the look-up from a JSON name, which the
 * public API needs because it names facts by string.
 */
#ifndef LCLOUD_FACTS_H
#define LCLOUD_FACTS_H

#include <stdbool.h>

#include "lcloud/lcloud.h"

enum fact_use {
	FACT_USE_SHOWN,        /* reported; the verdicts do not read it */
	FACT_USE_VERDICT,      /* the verdicts read it */
	FACT_USE_VERDICT_ONLY, /* only the verdicts read it: skipped with LCLOUD_PROBE_NO_VERDICT */
};

enum fact_id {
#define FACT(id, name, type, unit, source, use) FACT_##id,
#include "facts.def"
#undef FACT
	FACT__COUNT
};

struct fact_def {
	const char *name; /* the JSON name; a family's stem ends in _N or _MEMBER */
	enum lcloud_fact_type type;
	enum lcloud_fact_unit unit;
	const char *source;
	enum fact_use use;
};

extern const struct fact_def fact_catalogue[FACT__COUNT];

static inline const struct fact_def *fact_def(enum fact_id id)
{
	return &fact_catalogue[id];
}

/* The id of the fact named NAME (a family's member too: dm_target_3), or -ENOENT. */
int fact_lookup(const char *name);

#endif
