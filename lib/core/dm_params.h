/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A device-mapper table line's parameters: the placement they describe, and their keys left out. */
#ifndef LCLOUD_DM_PARAMS_H
#define LCLOUD_DM_PARAMS_H

#include <stddef.h>

#include "report.h"

/*
 * Reads S's type and params into its linear, striped and crypt fields; a
 * line it does not understand whole leaves all of them unset (not followed).
 */
void dm_params_parse(struct layer_dm_segment *s);

/*
 * Leaves the keys out of a table line of TYPE, in place: crypt's key becomes
 * "-", dm-integrity's "name:algorithm:key" options keep "name:algorithm".
 * PARAMS holds SIZE bytes.
 */
void dm_params_redact(const char *type, char *params, size_t size);

#endif
