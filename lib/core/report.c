/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Building the probe report. Allocation failures surface as -ENOMEM to the probe. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "report.h"
#include "dm_params.h"
#include "util.h"

struct lcloud_probe *report_new(const char *path)
{
	struct lcloud_probe *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->path = strdup(path ? path : "");
	if (!p->path) {
		free(p);
		return NULL;
	}
	/* read here, once, so the verdict reads only the report and a hand-built one can state another */
	p->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	return p;
}

int report_add_layer(struct lcloud_probe *p, enum lcloud_layer_kind kind, const char *name, int parent)
{
	struct lcloud_layer *layers = realloc(p->layers, (p->n_layers + 1) * sizeof(*layers));
	struct lcloud_layer *l;

	if (!layers)
		return -ENOMEM;
	p->layers = layers;
	l = &layers[p->n_layers];
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	l->parent = parent;
	l->name = strdup(name ? name : "");
	if (!l->name)
		return -ENOMEM;
	return (int)p->n_layers++;
}

struct lcloud_layer *report_layer(struct lcloud_probe *p, int index)
{
	if (index < 0 || (unsigned int)index >= p->n_layers)
		return NULL;
	return &p->layers[index];
}

static struct lcloud_fact *layer_push(struct lcloud_layer *l, enum fact_id id, const char *name,
				      const char *source)
{
	struct lcloud_fact *facts = realloc(l->facts, (l->n_facts + 1) * sizeof(*facts));
	struct lcloud_fact *f;

	if (!facts)
		return NULL;
	l->facts = facts;
	f = &facts[l->n_facts];
	memset(f, 0, sizeof(*f));
	f->id = id;
	f->type = fact_def(id)->type;
	f->unit = fact_def(id)->unit;
	f->name = strdup(name ? name : fact_def(id)->name);
	f->source = strdup(source ? source : fact_def(id)->source);
	if (!f->name || !f->source) {
		free(f->name);
		free(f->source);
		return NULL;
	}
	l->n_facts++;
	return f;
}

/* NAME: a family member's full name (dm_target_0), NULL for the catalogue's own. */
static int layer_add_u64_named(struct lcloud_layer *l, enum fact_id id, const char *name, uint64_t value,
			       const char *source)
{
	struct lcloud_fact *f = layer_push(l, id, name, source);

	if (!f)
		return -ENOMEM;
	f->u64 = f->type == LCLOUD_FACT_BOOL ? !!value : value;
	return 0;
}

int layer_add_u64(struct lcloud_layer *l, enum fact_id id, uint64_t value, const char *source)
{
	return layer_add_u64_named(l, id, NULL, value, source);
}

int layer_add_bool(struct lcloud_layer *l, enum fact_id id, int value, const char *source)
{
	return layer_add_u64_named(l, id, NULL, !!value, source);
}

static int layer_add_string_named(struct lcloud_layer *l, enum fact_id id, const char *name, const char *value,
				  const char *source)
{
	struct lcloud_fact *f = layer_push(l, id, name, source);

	if (!f)
		return -ENOMEM;
	f->string = strdup(value ? value : "");
	return f->string ? 0 : -ENOMEM;
}

int layer_add_string(struct lcloud_layer *l, enum fact_id id, const char *value, const char *source)
{
	return layer_add_string_named(l, id, NULL, value, source);
}

int layer_add_missing(struct lcloud_layer *l, enum fact_id id, enum lcloud_fact_state state,
		      const char *source, const char *reason)
{
	struct lcloud_fact *f = layer_push(l, id, NULL, source);

	if (!f)
		return -ENOMEM;
	f->state = state;
	f->reason = strdup(reason ? reason : "");
	return f->reason ? 0 : -ENOMEM;
}

int layer_add_dm_segment(struct lcloud_layer *l, uint64_t start, uint64_t length, const char *type,
			 const char *params, const char *source)
{
	struct layer_dm_segment *segs = realloc(l->dm_segments, (l->n_dm_segments + 1) * sizeof(*segs));
	struct layer_dm_segment *s;
	char name[48], value[320];
	int r;

	if (!segs)
		return -ENOMEM;
	l->dm_segments = segs;
	s = &segs[l->n_dm_segments];
	memset(s, 0, sizeof(*s));
	s->start = start;
	s->length = length;
	snprintf(s->type, sizeof(s->type), "%s", type);
	snprintf(s->params, sizeof(s->params), "%s", params);
	/* its placement, where the verdict follows it: linear, striped, crypt */
	dm_params_parse(s);
	snprintf(name, sizeof(name), "dm_target_%u", l->n_dm_segments);
	snprintf(value, sizeof(value), "%" PRIu64 " %" PRIu64 " %s %s", start, length, s->type, s->params);
	r = layer_add_string_named(l, FACT_DM_TARGET, name, value, source);
	if (r >= 0 && s->stripes) {
		snprintf(name, sizeof(name), "dm_stripes_%u", l->n_dm_segments);
		r = layer_add_u64_named(l, FACT_DM_STRIPES, name, s->stripes, source);
		snprintf(name, sizeof(name), "dm_stripe_chunk_bytes_%u", l->n_dm_segments);
		if (r >= 0)
			r = layer_add_u64_named(l, FACT_DM_STRIPE_CHUNK_BYTES, name, s->chunk * 512, source);
	}
	if (r >= 0 && s->crypt) {
		snprintf(name, sizeof(name), "dm_crypt_sector_bytes_%u", l->n_dm_segments);
		r = layer_add_u64_named(l, FACT_DM_CRYPT_SECTOR_BYTES, name, s->crypt_sector, source);
		snprintf(name, sizeof(name), "dm_crypt_integrity_%u", l->n_dm_segments);
		if (r >= 0)
			r = layer_add_u64_named(l, FACT_DM_CRYPT_INTEGRITY, name, s->crypt_integrity, source);
	}
	l->n_dm_segments++;
	return r;
}

int layer_add_md_member(struct lcloud_layer *l, const char *member, uint64_t data_offset, const char *source)
{
	struct layer_md_member *members = realloc(l->md_members, (l->n_md_members + 1) * sizeof(*members));
	char name[300];

	if (!members)
		return -ENOMEM;
	l->md_members = members;
	members[l->n_md_members].name = strdup(member);
	if (!members[l->n_md_members].name)
		return -ENOMEM;
	members[l->n_md_members].data_offset = data_offset;
	l->n_md_members++;
	snprintf(name, sizeof(name), "md_data_offset_%s", member);
	return layer_add_u64_named(l, FACT_MD_DATA_OFFSET, name, data_offset, source);
}

const struct layer_md_member *layer_md_member(const struct lcloud_layer *l, const char *member)
{
	for (unsigned int i = 0; l && i < l->n_md_members; i++)
		if (streq(l->md_members[i].name, member))
			return &l->md_members[i];
	return NULL;
}

int layer_set_promise_alignment(struct lcloud_layer *l, enum layer_promise_alignment alignment,
				const char *source)
{
	l->promise_alignment = alignment;
	return layer_add_string(l, FACT_PROMISE_ALIGNMENT,
				alignment == LAYER_PROMISE_ALIGNED_TO_SIZE ? "size" : "boundary", source);
}

const struct lcloud_fact *layer_fact(const struct lcloud_layer *l, enum fact_id id)
{
	for (unsigned int i = 0; l && i < l->n_facts; i++)
		if (l->facts[i].id == id)
			return &l->facts[i];
	return NULL;
}

const struct lcloud_fact *layer_fact_by_name(const struct lcloud_layer *l, const char *name)
{
	int id = fact_lookup(name);

	if (id < 0)
		return NULL;
	for (unsigned int i = 0; i < l->n_facts; i++)
		if (l->facts[i].id == (enum fact_id)id && streq(l->facts[i].name, name))
			return &l->facts[i];
	return NULL;
}

/* Fact ID of L when it holds a value of TYPE: 1 present, 0 absent, -ENODATA unread. */
static int layer_get(const struct lcloud_layer *l, enum fact_id id, enum lcloud_fact_type type,
		     const struct lcloud_fact **ret)
{
	const struct lcloud_fact *f = layer_fact(l, id);

	if (!f || f->state == LCLOUD_FACT_NOT_PROVIDED)
		return 0;
	if (f->state != LCLOUD_FACT_PRESENT)
		return -ENODATA;
	/* the catalogue fixes each fact's type: a mismatch is a caller's mistake */
	if ((type == LCLOUD_FACT_STRING) != (f->type == LCLOUD_FACT_STRING))
		return -EINVAL;
	*ret = f;
	return 1;
}

int layer_get_u64(const struct lcloud_layer *l, enum fact_id id, uint64_t *ret)
{
	const struct lcloud_fact *f;
	int r = layer_get(l, id, LCLOUD_FACT_U64, &f);

	if (r > 0)
		*ret = f->u64;
	return r;
}

int layer_get_bytes(const struct lcloud_layer *l, enum fact_id id, uint64_t *ret)
{
	const struct lcloud_fact *f;
	int r;

	if (fact_def(id)->unit == LCLOUD_UNIT_NONE)
		return -EINVAL;
	r = layer_get(l, id, LCLOUD_FACT_U64, &f);
	if (r <= 0)
		return r;
	switch (f->unit) {
	case LCLOUD_UNIT_KIB:
		*ret = f->u64 * 1024;
		break;
	case LCLOUD_UNIT_SECTORS:
		*ret = f->u64 * 512;
		break;
	default:
		*ret = f->u64;
		break;
	}
	return 1;
}

int layer_get_bool(const struct lcloud_layer *l, enum fact_id id, bool *ret)
{
	const struct lcloud_fact *f;
	int r = layer_get(l, id, LCLOUD_FACT_BOOL, &f);

	if (r > 0)
		*ret = f->u64 != 0;
	return r;
}

int layer_get_string(const struct lcloud_layer *l, enum fact_id id, const char **ret)
{
	const struct lcloud_fact *f;
	int r = layer_get(l, id, LCLOUD_FACT_STRING, &f);

	if (r > 0)
		*ret = f->string;
	return r;
}

int layer_get_devno(const struct lcloud_layer *l, dev_t *ret)
{
	unsigned int maj, min;
	const char *s;
	char end;
	int r = layer_get_string(l, FACT_DEV, &s);

	if (r <= 0)
		return r;
	if (sscanf(s, "%u:%u%c", &maj, &min, &end) != 2)
		return 0;
	*ret = makedev(maj, min);
	return 1;
}

const char *layer_unread_reason(const struct lcloud_layer *l, enum fact_id id)
{
	const struct lcloud_fact *f = layer_fact(l, id);

	return f && (f->state == LCLOUD_FACT_NEEDS_ROOT || f->state == LCLOUD_FACT_UNREADABLE) ? f->reason : NULL;
}

static int report_note_va(struct lcloud_probe *p, enum note_code code, enum lcloud_note_severity severity,
			  int layer, const char *fmt, va_list ap)
{
	struct lcloud_note *notes = realloc(p->notes, (p->n_notes + 1) * sizeof(*notes));
	struct lcloud_note *n;

	if (!notes)
		return -ENOMEM;
	p->notes = notes;
	n = &notes[p->n_notes];
	memset(n, 0, sizeof(*n));
	n->severity = severity;
	n->code = code;
	n->layer = layer;
	if (vasprintf(&n->message, fmt, ap) < 0)
		return -ENOMEM;
	p->n_notes++;
	return 0;
}

int report_note(struct lcloud_probe *p, enum note_code code, int layer, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = report_note_va(p, code, note_code_severity(code), layer, fmt, ap);
	va_end(ap);
	return r;
}

int report_note_as(struct lcloud_probe *p, enum note_code code, enum lcloud_note_severity severity,
		   int layer, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = report_note_va(p, code, severity, layer, fmt, ap);
	va_end(ap);
	return r;
}

/* The report's own parts: the verdicts and backing probes attached to it are the pipeline's to free (probe.c). */
void report_free(struct lcloud_probe *p)
{
	if (!p)
		return;
	for (unsigned int i = 0; i < p->n_layers; i++) {
		struct lcloud_layer *l = &p->layers[i];

		for (unsigned int j = 0; j < l->n_facts; j++) {
			free(l->facts[j].name);
			free(l->facts[j].string);
			free(l->facts[j].source);
			free(l->facts[j].reason);
		}
		free(l->facts);
		free(l->name);
		for (unsigned int j = 0; j < l->n_md_members; j++)
			free(l->md_members[j].name);
		free(l->md_members);
		free(l->dm_segments);
	}
	for (unsigned int i = 0; i < p->n_notes; i++)
		free(p->notes[i].message);
	free(p->layers);
	free(p->notes);
	free(p->path);
	free(p->resolved_path);
	free(p);
}
