/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Facts by catalogue id, and layers by kind, over the public API; see cli_facts.h. */
#include <errno.h>
#include <stddef.h>

#include "cli_facts.h"

const struct lcloud_fact *cli_fact(const struct lcloud_layer *l, enum fact_id id)
{
	return l ? lcloud_layer_find_fact(l, fact_def(id)->name) : NULL;
}

int cli_fact_u64(const struct lcloud_layer *l, enum fact_id id, uint64_t *ret)
{
	const struct lcloud_fact *f = cli_fact(l, id);

	if (!f || lcloud_fact_get_state(f) == LCLOUD_FACT_NOT_PROVIDED)
		return 0;
	if (lcloud_fact_get_state(f) != LCLOUD_FACT_PRESENT)
		return -ENODATA;
	*ret = lcloud_fact_get_u64(f);
	return 1;
}

const char *cli_fact_string(const struct lcloud_layer *l, enum fact_id id)
{
	return lcloud_fact_get_string(cli_fact(l, id));
}

const struct lcloud_layer *cli_first_layer(const struct lcloud_probe *p, enum lcloud_layer_kind kind)
{
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++)
		if (lcloud_layer_get_kind(lcloud_probe_get_layer(p, i)) == kind)
			return lcloud_probe_get_layer(p, i);
	return NULL;
}

int cli_below_partitions(const struct lcloud_probe *p)
{
	unsigned int n = lcloud_probe_get_layer_count(p);
	int index = n ? 0 : -1;

	while (index >= 0 && lcloud_layer_get_kind(lcloud_probe_get_layer(p, (unsigned int)index)) ==
				     LCLOUD_LAYER_PARTITION) {
		int below = -1;

		for (unsigned int i = 0; i < n && below < 0; i++)
			if (lcloud_layer_get_parent(lcloud_probe_get_layer(p, i)) == index)
				below = (int)i;
		index = below;
	}
	return index;
}
