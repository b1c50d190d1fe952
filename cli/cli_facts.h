/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A probe's facts for lcloudctl, named by catalogue id (lib/facts.def)
 * rather than by string, so that a misspelt fact does not compile; read
 * through the public API, which takes the catalogue's name. And the one
 * search for a layer of a kind that lcloudctl's commands share.
 */
#ifndef LCLOUDCTL_CLI_FACTS_H
#define LCLOUDCTL_CLI_FACTS_H

#include <stdint.h>

#include "facts.h"
#include "lcloud/lcloud.h"

/* Fact ID of L in any state, or NULL (no layer, or no such fact). */
const struct lcloud_fact *cli_fact(const struct lcloud_layer *l, enum fact_id id);
/* As the library's typed getters: 1 present (*RET set), 0 absent or not provided, -ENODATA unread. */
int cli_fact_u64(const struct lcloud_layer *l, enum fact_id id, uint64_t *ret);
/* The present string fact ID of L, or NULL. */
const char *cli_fact_string(const struct lcloud_layer *l, enum fact_id id);

/* The first layer of KIND, the target's side first, or NULL: the library's stack_first_layer() over the public API. */
const struct lcloud_layer *cli_first_layer(const struct lcloud_probe *p, enum lcloud_layer_kind kind);
/*
 * The index of the layer the target's partitions sit on (the target's own,
 * 0, when it is no partition), or -1: the library's stack_below_partitions().
 */
int cli_below_partitions(const struct lcloud_probe *p);

#endif
