/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stack's walks (stack_walk.h), once: the probe lists layers top first
 * and links each to the one above it (parent), so "below" is a search for
 * the layers whose parent is this one.
 */
#include "stack_walk.h"

const struct lcloud_layer *stack_first_layer(const struct lcloud_probe *p, enum lcloud_layer_kind kind)
{
	for (unsigned int i = 0; i < p->n_layers; i++)
		if (p->layers[i].kind == kind)
			return &p->layers[i];
	return NULL;
}

const struct lcloud_layer *stack_child_layer(const struct lcloud_probe *p, int parent, enum lcloud_layer_kind kind)
{
	for (unsigned int i = 0; i < p->n_layers; i++)
		if (p->layers[i].parent == parent && (kind == STACK_ANY_KIND || p->layers[i].kind == kind))
			return &p->layers[i];
	return NULL;
}

int stack_below_partitions(const struct lcloud_probe *p, int index, enum lcloud_layer_kind kind, uint64_t *ret_start,
			   const struct lcloud_layer **ret_unread)
{
	uint64_t start = 0;

	if (ret_unread)
		*ret_unread = NULL;
	while (index >= 0 && p->layers[index].kind == LCLOUD_LAYER_PARTITION) {
		const struct lcloud_layer *below = stack_child_layer(p, index, kind);
		uint64_t part_start;

		if (layer_get_bytes(&p->layers[index], FACT_START_BYTES, &part_start) > 0)
			start += part_start;
		else if (ret_unread)
			*ret_unread = &p->layers[index];
		index = below ? (int)(below - p->layers) : -1;
	}
	if (ret_start)
		*ret_start = start;
	return index;
}
