/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Building the probe report. Allocation failures surface as -ENOMEM to the probe. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util.h"
#include "verdict.h"

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

static struct lcloud_fact *layer_push(struct lcloud_layer *l, const char *name, const char *source)
{
	struct lcloud_fact *facts = realloc(l->facts, (l->n_facts + 1) * sizeof(*facts));
	struct lcloud_fact *f;

	if (!facts)
		return NULL;
	l->facts = facts;
	f = &facts[l->n_facts];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	f->source = strdup(source ? source : "");
	if (!f->name || !f->source) {
		free(f->name);
		free(f->source);
		return NULL;
	}
	l->n_facts++;
	return f;
}

int layer_add_u64(struct lcloud_layer *l, const char *name, enum lcloud_fact_unit unit,
		  uint64_t value, const char *source)
{
	struct lcloud_fact *f = layer_push(l, name, source);

	if (!f)
		return -ENOMEM;
	f->type = LCLOUD_FACT_U64;
	f->unit = unit;
	f->u64 = value;
	return 0;
}

int layer_add_bool(struct lcloud_layer *l, const char *name, int value, const char *source)
{
	struct lcloud_fact *f = layer_push(l, name, source);

	if (!f)
		return -ENOMEM;
	f->type = LCLOUD_FACT_BOOL;
	f->u64 = !!value;
	return 0;
}

int layer_add_string(struct lcloud_layer *l, const char *name, const char *value, const char *source)
{
	struct lcloud_fact *f = layer_push(l, name, source);

	if (!f)
		return -ENOMEM;
	f->type = LCLOUD_FACT_STRING;
	f->string = strdup(value ? value : "");
	return f->string ? 0 : -ENOMEM;
}

int layer_add_missing(struct lcloud_layer *l, const char *name, enum lcloud_fact_type type,
		      enum lcloud_fact_unit unit, enum lcloud_fact_state state,
		      const char *source, const char *reason)
{
	struct lcloud_fact *f = layer_push(l, name, source);

	if (!f)
		return -ENOMEM;
	f->type = type;
	f->unit = unit;
	f->state = state;
	f->reason = strdup(reason ? reason : "");
	return f->reason ? 0 : -ENOMEM;
}

const struct lcloud_fact *layer_fact(const struct lcloud_layer *l, const char *name)
{
	for (unsigned int i = 0; i < l->n_facts; i++)
		if (streq(l->facts[i].name, name))
			return &l->facts[i];
	return NULL;
}

uint64_t layer_u64_or(const struct lcloud_layer *l, const char *name, uint64_t fallback)
{
	const struct lcloud_fact *f = layer_fact(l, name);

	if (!f || f->state != LCLOUD_FACT_PRESENT || f->type == LCLOUD_FACT_STRING)
		return fallback;
	return f->u64;
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

LCLOUD_EXPORT void lcloud_probe_free(struct lcloud_probe *p)
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
	}
	for (unsigned int i = 0; i < p->n_notes; i++)
		free(p->notes[i].message);
	verdict_free(p->verdicts);
	free(p->layers);
	free(p->notes);
	free(p->path);
	free(p->resolved_path);
	free(p);
}
