/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Public getters over the probe report. All accept NULL and return a neutral value. */
#include <errno.h>
#include <stddef.h>

#include "report.h"
#include "stack_walk.h"
#include "util.h"

LCLOUD_EXPORT const char *lcloud_probe_get_path(const struct lcloud_probe *p)
{
	return p ? p->path : NULL;
}

LCLOUD_EXPORT const char *lcloud_probe_get_resolved_path(const struct lcloud_probe *p)
{
	return p ? p->resolved_path : NULL;
}

LCLOUD_EXPORT enum lcloud_target_type lcloud_probe_get_target_type(const struct lcloud_probe *p)
{
	return p ? p->target_type : LCLOUD_TARGET_UNKNOWN;
}

LCLOUD_EXPORT const char *lcloud_target_type_to_string(enum lcloud_target_type type)
{
	switch (type) {
	case LCLOUD_TARGET_REGULAR:
		return "regular";
	case LCLOUD_TARGET_DIRECTORY:
		return "directory";
	case LCLOUD_TARGET_DISK:
		return "disk";
	case LCLOUD_TARGET_PARTITION:
		return "partition";
	case LCLOUD_TARGET_NVME_CHAR:
		return "nvme-generic";
	case LCLOUD_TARGET_UNKNOWN:
		break;
	}
	return "unknown";
}

LCLOUD_EXPORT unsigned int lcloud_probe_get_layer_count(const struct lcloud_probe *p)
{
	return p ? p->n_layers : 0;
}

LCLOUD_EXPORT const struct lcloud_layer *lcloud_probe_get_layer(const struct lcloud_probe *p,
								unsigned int index)
{
	return p && index < p->n_layers ? &p->layers[index] : NULL;
}

LCLOUD_EXPORT unsigned int lcloud_probe_get_note_count(const struct lcloud_probe *p)
{
	return p ? p->n_notes : 0;
}

LCLOUD_EXPORT const struct lcloud_note *lcloud_probe_get_note(const struct lcloud_probe *p,
							      unsigned int index)
{
	return p && index < p->n_notes ? &p->notes[index] : NULL;
}

LCLOUD_EXPORT int lcloud_probe_get_u64(const struct lcloud_probe *p, enum lcloud_layer_kind kind,
				       const char *name, uint64_t *ret_value)
{
	const struct lcloud_layer *l;
	const struct lcloud_fact *f;

	if (!p || !name || !ret_value)
		return -EINVAL;
	l = stack_first_layer(p, kind);
	f = l ? layer_fact_by_name(l, name) : NULL;
	if (!f)
		return -ENOENT;
	switch (f->state) {
	case LCLOUD_FACT_PRESENT:
		break;
	case LCLOUD_FACT_NOT_PROVIDED:
		return -ENODATA;
	case LCLOUD_FACT_NEEDS_ROOT:
		return -EACCES;
	default:
		return -EIO;
	}
	if (f->type == LCLOUD_FACT_STRING)
		return -EINVAL;
	*ret_value = f->u64;
	return 0;
}

LCLOUD_EXPORT enum lcloud_layer_kind lcloud_layer_get_kind(const struct lcloud_layer *l)
{
	return l ? l->kind : 0;
}

LCLOUD_EXPORT const char *lcloud_layer_kind_to_string(enum lcloud_layer_kind kind)
{
	switch (kind) {
	case LCLOUD_LAYER_FILESYSTEM:
		return "filesystem";
	case LCLOUD_LAYER_PARTITION:
		return "partition";
	case LCLOUD_LAYER_DM:
		return "dm";
	case LCLOUD_LAYER_MD:
		return "md";
	case LCLOUD_LAYER_LOOP:
		return "loop";
	case LCLOUD_LAYER_DISK:
		return "disk";
	case LCLOUD_LAYER_NVME:
		return "nvme";
	case LCLOUD_LAYER_CLOUD:
		return "cloud";
	case LCLOUD_LAYER_SCSI:
		return "scsi";
	}
	return "unknown";
}

LCLOUD_EXPORT const char *lcloud_layer_get_name(const struct lcloud_layer *l)
{
	return l ? l->name : NULL;
}

LCLOUD_EXPORT int lcloud_layer_get_parent(const struct lcloud_layer *l)
{
	return l ? l->parent : -1;
}

LCLOUD_EXPORT const struct lcloud_probe *lcloud_layer_get_backing_probe(const struct lcloud_layer *l)
{
	return l ? l->backing : NULL;
}

LCLOUD_EXPORT unsigned int lcloud_layer_get_fact_count(const struct lcloud_layer *l)
{
	return l ? l->n_facts : 0;
}

LCLOUD_EXPORT const struct lcloud_fact *lcloud_layer_get_fact(const struct lcloud_layer *l,
							      unsigned int index)
{
	return l && index < l->n_facts ? &l->facts[index] : NULL;
}

LCLOUD_EXPORT const struct lcloud_fact *lcloud_layer_find_fact(const struct lcloud_layer *l,
							       const char *name)
{
	return l && name ? layer_fact_by_name(l, name) : NULL;
}

LCLOUD_EXPORT const char *lcloud_fact_get_name(const struct lcloud_fact *f)
{
	return f ? f->name : NULL;
}

LCLOUD_EXPORT enum lcloud_fact_type lcloud_fact_get_type(const struct lcloud_fact *f)
{
	return f ? f->type : 0;
}

LCLOUD_EXPORT enum lcloud_fact_unit lcloud_fact_get_unit(const struct lcloud_fact *f)
{
	return f ? f->unit : LCLOUD_UNIT_NONE;
}

LCLOUD_EXPORT enum lcloud_fact_state lcloud_fact_get_state(const struct lcloud_fact *f)
{
	return f ? f->state : LCLOUD_FACT_UNREADABLE;
}

LCLOUD_EXPORT uint64_t lcloud_fact_get_u64(const struct lcloud_fact *f)
{
	if (!f || f->state != LCLOUD_FACT_PRESENT || f->type == LCLOUD_FACT_STRING)
		return 0;
	return f->u64;
}

LCLOUD_EXPORT const char *lcloud_fact_get_string(const struct lcloud_fact *f)
{
	if (!f || f->state != LCLOUD_FACT_PRESENT || f->type != LCLOUD_FACT_STRING)
		return NULL;
	return f->string;
}

LCLOUD_EXPORT const char *lcloud_fact_get_source(const struct lcloud_fact *f)
{
	return f ? f->source : NULL;
}

LCLOUD_EXPORT const char *lcloud_fact_get_reason(const struct lcloud_fact *f)
{
	return f && f->state != LCLOUD_FACT_PRESENT ? f->reason : NULL;
}

LCLOUD_EXPORT enum lcloud_note_severity lcloud_note_get_severity(const struct lcloud_note *n)
{
	return n ? n->severity : LCLOUD_NOTE_INFO;
}

LCLOUD_EXPORT const char *lcloud_note_severity_to_string(enum lcloud_note_severity s)
{
	switch (s) {
	case LCLOUD_NOTE_INFO:
		return "info";
	case LCLOUD_NOTE_WARNING:
		return "warning";
	case LCLOUD_NOTE_NEEDS_ROOT:
		return "needs-root";
	case LCLOUD_NOTE_ERROR:
		return "error";
	}
	return "unknown";
}

LCLOUD_EXPORT const char *lcloud_note_get_code(const struct lcloud_note *n)
{
	return n ? note_code_name(n->code) : NULL;
}

LCLOUD_EXPORT int lcloud_note_get_layer(const struct lcloud_note *n)
{
	return n ? n->layer : -1;
}

LCLOUD_EXPORT const char *lcloud_note_get_message(const struct lcloud_note *n)
{
	return n ? n->message : NULL;
}
