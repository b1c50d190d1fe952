/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The probe report: layers of facts and notes, built by the probes, read through the getters. */
#ifndef LCLOUD_REPORT_H
#define LCLOUD_REPORT_H

#include <stdarg.h>
#include <stdint.h>

#include "lcloud/lcloud.h"
#include "notes.h"

struct lcloud_fact {
	char *name;
	enum lcloud_fact_type type;
	enum lcloud_fact_unit unit;
	enum lcloud_fact_state state;
	uint64_t u64;
	char *string;
	char *source;
	char *reason;
};

struct lcloud_layer {
	enum lcloud_layer_kind kind;
	char *name;
	int parent;
	struct lcloud_fact *facts;
	unsigned int n_facts;
	/* a block device's on-disk signatures: what the write guard needs read before it writes */
	enum layer_signatures {
		LAYER_SIGNATURES_NOT_PROBED = 0, /* not a block device, or a captured tree */
		LAYER_SIGNATURES_READ = 1,
		LAYER_SIGNATURES_UNREAD = 2,     /* no access, libblkid failed, or the node was another device */
	} signatures;
};

struct lcloud_note {
	enum lcloud_note_severity severity;
	enum note_code code;
	int layer;
	char *message;
};

struct lcloud_verdict;

struct lcloud_probe {
	char *path;
	char *resolved_path;
	enum lcloud_target_type target_type;
	struct lcloud_layer *layers;
	unsigned int n_layers;
	struct lcloud_note *notes;
	unsigned int n_notes;
	struct lcloud_verdict *verdicts; /* one per path, LCLOUD_PATH_RWF_ATOMIC first; NULL until computed */
	uint32_t flags; /* enum lcloud_probe_flags the probe was asked with */
};

struct lcloud_probe *report_new(const char *path);

/* Returns the new layer's index or -ENOMEM. */
int report_add_layer(struct lcloud_probe *p, enum lcloud_layer_kind kind, const char *name, int parent);
struct lcloud_layer *report_layer(struct lcloud_probe *p, int index);

int layer_add_u64(struct lcloud_layer *l, const char *name, enum lcloud_fact_unit unit,
		  uint64_t value, const char *source);
int layer_add_bool(struct lcloud_layer *l, const char *name, int value, const char *source);
int layer_add_string(struct lcloud_layer *l, const char *name, const char *value, const char *source);
/* A fact that could not be given a value, with the reason a person needs. */
int layer_add_missing(struct lcloud_layer *l, const char *name, enum lcloud_fact_type type,
		      enum lcloud_fact_unit unit, enum lcloud_fact_state state,
		      const char *source, const char *reason);
const struct lcloud_fact *layer_fact(const struct lcloud_layer *l, const char *name);
/* The fact's value when it is a present number, else FALLBACK. */
uint64_t layer_u64_or(const struct lcloud_layer *l, const char *name, uint64_t fallback);

/* A note with CODE's usual severity (notes.def) about LAYER (-1: the probe as a whole). */
__attribute__((format(printf, 4, 5)))
int report_note(struct lcloud_probe *p, enum note_code code, int layer, const char *fmt, ...);
/* The same with another severity, for the codes whose severity depends on what was found. */
__attribute__((format(printf, 5, 6)))
int report_note_as(struct lcloud_probe *p, enum note_code code, enum lcloud_note_severity severity,
		   int layer, const char *fmt, ...);

#endif
