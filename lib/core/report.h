/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The probe report: layers of facts and notes, built by the probes, read through the getters. */
#ifndef LCLOUD_REPORT_H
#define LCLOUD_REPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "facts.h"
#include "lcloud/lcloud.h"
#include "notes.h"

struct lcloud_fact {
	enum fact_id id;
	char *name; /* the catalogue's, or a family member's own (dm_target_0) */
	enum lcloud_fact_type type;
	enum lcloud_fact_unit unit;
	enum lcloud_fact_state state;
	uint64_t u64;
	char *string;
	char *source;
	char *reason;
};

/*
 * Structure behind families of facts, kept typed on the layer for the
 * readers; the public facts (dm_target_N, md_data_offset_MEMBER,
 * promise_alignment) are rendered from it when it is added.
 */
#define DM_STRIPES_MAX 16 /* members of a striped target liblcloud follows */

struct layer_dm_stripe {
	unsigned int major, minor;
	uint64_t offset; /* sectors: where this member's part of the target starts on it */
};

struct layer_dm_segment {     /* one device-mapper table line, as DM_TABLE_STATUS gives it */
	uint64_t start, length; /* sectors, in the dm device */
	char type[16];          /* "linear", "striped", ... */
	char params[256];       /* as dmsetup table prints them, any key left out */
	bool linear;            /* a linear target whose params read "major:minor offset" */
	unsigned int major, minor;
	uint64_t offset;        /* sectors, on major:minor (linear and crypt) */
	/* striped, its table read whole: STRIPES members taking CHUNK sectors each in turn (0: not so) */
	unsigned int stripes;
	uint64_t chunk;         /* sectors */
	struct layer_dm_stripe stripe[DM_STRIPES_MAX];
	/* crypt, its table read whole: data on major:minor at offset, encrypted in CRYPT_SECTOR bytes */
	bool crypt;
	uint64_t crypt_sector;  /* its sector_size option, 512 without one */
	bool crypt_integrity;   /* authenticated encryption: tags written beside the data (integrity:) */
};

struct layer_md_member {
	char *name;           /* the member device, as in md/dev-NAME */
	uint64_t data_offset; /* bytes: where its data starts (md metadata sits before it) */
};

enum layer_promise_alignment {
	LAYER_PROMISE_NO_ALIGNMENT = 0,  /* no promise on this layer */
	LAYER_PROMISE_ALIGNED_TO_SIZE,   /* writes aligned to their own size (rendered "size") */
	LAYER_PROMISE_INSIDE_BOUNDARY,   /* writes inside one aligned boundary block ("boundary") */
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
	struct layer_dm_segment *dm_segments; /* the dm table, when it was read */
	unsigned int n_dm_segments;
	struct layer_md_member *md_members;
	unsigned int n_md_members;
	enum layer_promise_alignment promise_alignment; /* a cloud layer's promise */
	/*
	 * A loop device with direct I/O: the probe of its backing file or
	 * device, as a target of its own (NULL: not followed). Like the
	 * verdicts, the pipeline attaches and frees it (probe.c).
	 */
	struct lcloud_probe *backing;
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
	/* the memory page of the system that writes (a user buffer is contiguous per page); report_new() sets it */
	uint64_t page_size;
};

struct lcloud_probe *report_new(const char *path);
/* Frees the layers, facts and notes and P itself; not its verdicts (lcloud_probe_free frees both). */
void report_free(struct lcloud_probe *p);

/* Returns the new layer's index or -ENOMEM. */
int report_add_layer(struct lcloud_probe *p, enum lcloud_layer_kind kind, const char *name, int parent);
struct lcloud_layer *report_layer(struct lcloud_probe *p, int index);

/*
 * Facts by catalogue id: the name, type and unit come from facts.def;
 * SOURCE NULL means the catalogue's usual source.
 */
int layer_add_u64(struct lcloud_layer *l, enum fact_id id, uint64_t value, const char *source);
int layer_add_bool(struct lcloud_layer *l, enum fact_id id, int value, const char *source);
int layer_add_string(struct lcloud_layer *l, enum fact_id id, const char *value, const char *source);
/* A fact that could not be given a value, with the reason a person needs. */
int layer_add_missing(struct lcloud_layer *l, enum fact_id id, enum lcloud_fact_state state,
		      const char *source, const char *reason);
/* A dm table line (TYPE and PARAMS as the kernel gives them), and its fact dm_target_N. */
int layer_add_dm_segment(struct lcloud_layer *l, uint64_t start, uint64_t length, const char *type,
			 const char *params, const char *source);
/* Where md member MEMBER's data starts, in bytes, and its fact md_data_offset_MEMBER. */
int layer_add_md_member(struct lcloud_layer *l, const char *member, uint64_t data_offset, const char *source);
/* Member MEMBER of md layer L, or NULL when its offset was not read. */
const struct layer_md_member *layer_md_member(const struct lcloud_layer *l, const char *member);
/* A cloud promise's alignment, and its fact promise_alignment. */
int layer_set_promise_alignment(struct lcloud_layer *l, enum layer_promise_alignment alignment,
				const char *source);

/* The layer's fact ID in any state (the first of a family), or NULL. */
const struct lcloud_fact *layer_fact(const struct lcloud_layer *l, enum fact_id id);
/* The fact named NAME, found through the catalogue; for the public API, which names facts by string. */
const struct lcloud_fact *layer_fact_by_name(const struct lcloud_layer *l, const char *name);

/*
 * Typed getters, with no fallback: each caller decides what absence means.
 * They return 1 with *RET set when the fact is present; 0 when it is absent
 * (no such layer, not produced, or not provided by this kernel or device);
 * -ENODATA when it is there but unread (needs root, unreadable: see
 * layer_unread_reason()). *RET is left alone unless 1 is returned.
 * layer_get_bytes() converts from the catalogue's unit and is for facts that
 * have one; layer_get_u64() gives counts, masks and flags as they are.
 */
int layer_get_u64(const struct lcloud_layer *l, enum fact_id id, uint64_t *ret);
int layer_get_bytes(const struct lcloud_layer *l, enum fact_id id, uint64_t *ret);
int layer_get_bool(const struct lcloud_layer *l, enum fact_id id, bool *ret);
int layer_get_string(const struct lcloud_layer *l, enum fact_id id, const char **ret);
/*
 * A block device layer's number, from its "dev" fact (sysfs writes it as
 * MAJOR:MINOR): 1 with *RET set, 0 when absent or not of that form, as the
 * typed getters; parsed here once for every reader.
 */
int layer_get_devno(const struct lcloud_layer *l, dev_t *ret);
/* Why fact ID of L is unread, or NULL when it is not unread. */
const char *layer_unread_reason(const struct lcloud_layer *l, enum fact_id id);

/* A note with CODE's usual severity (notes.def) about LAYER (-1: the probe as a whole). */
__attribute__((format(printf, 4, 5)))
int report_note(struct lcloud_probe *p, enum note_code code, int layer, const char *fmt, ...);
/* The same with another severity, for the codes whose severity depends on what was found. */
__attribute__((format(printf, 5, 6)))
int report_note_as(struct lcloud_probe *p, enum note_code code, enum lcloud_note_severity severity,
		   int layer, const char *fmt, ...);

#endif
