/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A write class's place on an FDP device (hint_placement.h): the device's
 * stated use of each reclaim unit handle first, its number only when the
 * device states none. Journal writes go to the journal handle whatever its
 * number; a class without a handle of its own is dropped, never put on
 * another class's handle, for a device that separates classes by handle
 * may also serve them differently (a journal handle before a background one).
 */
#include <string.h>

#include "hint_placement.h"
#include "nvme_lcloud_ext.h"
#include "report.h"

/* "0,1,2" into VALUES (at most PLACEMENT_MAX); how many were read before anything that is not a number. */
static unsigned int read_list(const char *s, uint16_t *values)
{
	unsigned int n = 0;

	while (s && *s && n < PLACEMENT_MAX) {
		unsigned long v = 0;
		const char *start = s;

		while (*s >= '0' && *s <= '9' && v <= 0xffff)
			v = v * 10 + (unsigned long)(*s++ - '0');
		if (s == start || v > 0xffff || (*s && *s != ','))
			break;
		values[n++] = (uint16_t)v;
		if (*s == ',')
			s++;
	}
	return n;
}

/* "0:journal 1:data 2:metadata" (the lcloud_ext_placement fact) into USE by handle; false when malformed. */
static bool read_uses(const char *s, struct hint_placement *pl)
{
	unsigned int n = 0;

	while (*s && n < PLACEMENT_MAX) {
		size_t len;
		int use;

		/* the fact lists handles 0, 1, 2.. in order, each as "H:use" */
		if (*s < '0' || *s > '9')
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
		if (*s++ != ':')
			return false;
		len = strcspn(s, " ");
		use = nvme_lcloud_ext_use_from_name(s, len);
		/* a use this version does not know ("reserved") is no class's */
		pl->use[n++] = use > 0 && use <= LCLOUD_CLASS_BACKGROUND ? (uint8_t)use : 0;
		s += len;
		while (*s == ' ')
			s++;
	}
	pl->n_uses = n;
	return n > 0;
}

void hint_placement_read(const struct lcloud_probe *p, struct hint_placement *ret)
{
	memset(ret, 0, sizeof(*ret));
	for (unsigned int i = 0; i < p->n_layers; i++) {
		const struct lcloud_layer *l = &p->layers[i];
		const char *s = NULL;
		bool fdp = false;
		uint16_t handles[PLACEMENT_MAX];

		if (l->kind != LCLOUD_LAYER_NVME)
			continue;
		/* facts absent or unread are not used: no uses stated, no identifiers */
		if (layer_get_string(l, FACT_LCLOUD_EXT_PLACEMENT, &s) > 0 && s)
			ret->uses_stated = read_uses(s, ret);
		if (layer_get_bool(l, FACT_FDP_ENABLED, &fdp) <= 0 || !fdp)
			return;
		s = NULL;
		if (layer_get_string(l, FACT_FDP_PLACEMENT_IDS, &s) > 0)
			ret->n_pids = read_list(s, ret->pids);
		s = NULL;
		/* the handles count only when they pair with every identifier the queue uses */
		if (ret->n_pids && layer_get_string(l, FACT_FDP_PLACEMENT_HANDLES, &s) > 0 &&
		    read_list(s, handles) >= ret->n_pids) {
			memcpy(ret->handles, handles, sizeof(handles));
			ret->handles_known = true;
		}
		return;
	}
}

/* Of the first N identifiers, the one that reaches HANDLE; -1 none. */
static int index_of_handle(const struct hint_placement *pl, unsigned int n, unsigned int handle)
{
	for (unsigned int k = 0; k < n; k++)
		if (pl->handles[k] == handle)
			return (int)k;
	return -1;
}

void hint_placement_choose(const struct hint_placement *pl, unsigned int n_usable, unsigned int write_class,
			   uint32_t group, struct placement_choice *ret)
{
	unsigned int candidates[PLACEMENT_MAX], n = 0, want = write_class, reachable = 0;
	int index[PLACEMENT_MAX];

	memset(ret, 0, sizeof(*ret));
	ret->index = ret->handle = -1;
	if (!write_class && !group) {
		ret->basis = LCLOUD_PLACEMENT_NOT_ASKED;
		return;
	}
	if (!n_usable) {
		ret->basis = LCLOUD_PLACEMENT_NO_PLACEMENT;
		return;
	}
	if (!pl->uses_stated) {
		/* by number: data the first, metadata the second...; a group keeps its blocks together */
		unsigned int key = group ? group : write_class;

		ret->basis = LCLOUD_PLACEMENT_BY_NUMBER;
		ret->index = (int)((key - 1) % n_usable);
		if (pl->handles_known && (unsigned int)ret->index < pl->n_pids)
			ret->handle = pl->handles[ret->index];
		return;
	}
	/* the class's own handles (a group without a class: the handles with no stated use) */
	for (unsigned int h = 0; h < pl->n_uses; h++)
		if (pl->use[h] == want)
			candidates[n++] = h;
	ret->use = want;
	if (!n) {
		ret->basis = LCLOUD_PLACEMENT_NO_HANDLE;
		return;
	}
	/* those this path reaches: an identifier among the usable ones leads to it */
	for (unsigned int i = 0; i < n; i++) {
		int k = pl->handles_known ? index_of_handle(pl, n_usable < pl->n_pids ? n_usable : pl->n_pids,
							     candidates[i]) : -1;

		if (k >= 0) {
			candidates[reachable] = candidates[i];
			index[reachable++] = k;
		}
	}
	if (!reachable) {
		ret->basis = LCLOUD_PLACEMENT_UNMAPPED;
		ret->handle = (int)candidates[0];
		return;
	}
	{
		unsigned int pick = group ? (group - 1) % reachable : 0;

		ret->basis = LCLOUD_PLACEMENT_BY_USE;
		ret->index = index[pick];
		ret->handle = (int)candidates[pick];
	}
}
