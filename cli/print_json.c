/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Typed JSON through json-c. Facts keep their kernel names (sysfs attribute
 * names, statx field names) as keys; a fact without a value is null, and the
 * reason is under "unavailable"; where each value came from is under "sources".
 */
#include <string.h>

#include "escape.h"
#include "print.h"

json_object *fact_to_json(const struct lcloud_fact *f)
{
	if (lcloud_fact_get_state(f) != LCLOUD_FACT_PRESENT)
		return NULL; /* json-c's null */
	switch (lcloud_fact_get_type(f)) {
	case LCLOUD_FACT_BOOL:
		return json_object_new_boolean(lcloud_fact_get_u64(f) != 0);
	case LCLOUD_FACT_STRING:
		return json_string_from_device(lcloud_fact_get_string(f));
	default:
		return json_object_new_uint64(lcloud_fact_get_u64(f));
	}
}

static json_object *layer_to_json(const struct lcloud_probe *p, unsigned int index)
{
	const struct lcloud_layer *l = lcloud_probe_get_layer(p, index);
	json_object *obj = json_object_new_object();
	json_object *facts = json_object_new_object();
	json_object *sources = json_object_new_object();
	json_object *unavailable = json_object_new_object();
	int parent = lcloud_layer_get_parent(l);

	json_object_object_add(obj, "layer", json_object_new_string(lcloud_layer_kind_to_string(lcloud_layer_get_kind(l))));
	json_object_object_add(obj, "name", json_object_new_string(lcloud_layer_get_name(l)));
	json_object_object_add(obj, "parent", parent >= 0 ? json_object_new_int(parent) : NULL);
	for (unsigned int j = 0; j < lcloud_layer_get_fact_count(l); j++) {
		const struct lcloud_fact *f = lcloud_layer_get_fact(l, j);
		const char *name = lcloud_fact_get_name(f);

		json_object_object_add(facts, name, fact_to_json(f));
		json_object_object_add(sources, name, json_object_new_string(lcloud_fact_get_source(f)));
		if (lcloud_fact_get_state(f) != LCLOUD_FACT_PRESENT) {
			static const char *const states[] = { "present", "not-provided", "needs-root", "unreadable" };
			json_object *why = json_object_new_object();

			json_object_object_add(why, "state", json_object_new_string(states[lcloud_fact_get_state(f)]));
			json_object_object_add(why, "reason", json_object_new_string(lcloud_fact_get_reason(f)));
			json_object_object_add(unavailable, name, why);
		}
	}
	json_object_object_add(obj, "facts", facts);
	json_object_object_add(obj, "sources", sources);
	json_object_object_add(obj, "unavailable", unavailable);
	/* a loop device's backing file, probed as a target of its own */
	if (lcloud_layer_get_backing_probe(l))
		json_object_object_add(obj, "backing_file", probe_to_json(lcloud_layer_get_backing_probe(l)));
	return obj;
}

static json_object *verdict_to_json(const struct lcloud_probe *p)
{
	json_object *obj = json_object_new_object();

	for (int path = LCLOUD_PATH_RWF_ATOMIC; path <= LCLOUD_PATH_BUFFERED; path++) {
		const struct lcloud_verdict *v = lcloud_probe_get_verdict(p, (enum lcloud_io_path)path);
		json_object *jv = json_object_new_object(), *reasons = json_object_new_array();
		uint64_t align = lcloud_verdict_get_alignment(v);

		json_object_object_add(jv, "max_untorn_bytes", json_object_new_uint64(lcloud_verdict_get_max_untorn_bytes(v)));
		json_object_object_add(jv, "min_untorn_bytes", json_object_new_uint64(lcloud_verdict_get_min_untorn_bytes(v)));
		const char *unknown = lcloud_verdict_get_unknown_reason(v);

		/* one type per key: alignment 0 with aligned_to_size true means a multiple of the write's own size */
		json_object_object_add(jv, "alignment", json_object_new_uint64(align));
		json_object_object_add(jv, "aligned_to_size", json_object_new_boolean(align == 0));
		/* sizes above max_untorn_bytes: "no", or "unknown" when evidence could not be read */
		json_object_object_add(jv, "above_max", json_object_new_string(unknown ? "unknown" : "no"));
		json_object_object_add(jv, "unknown_reason", json_object_new_string(unknown ? unknown : ""));
		/* rwf_atomic: up to here the device itself, above it the file system's software path */
		json_object_object_add(jv, "hardware_max_bytes",
				       json_object_new_uint64(lcloud_verdict_get_hardware_max_bytes(v)));
		json_object_object_add(jv, "boundary_bytes", json_object_new_uint64(lcloud_verdict_get_boundary(v)));
		json_object_object_add(jv, "boundary_offset_bytes", json_object_new_uint64(lcloud_verdict_get_boundary_offset(v)));
		{
			/* sizes above .._above and below .._below are "no" (merges); 0 and 0: no such sizes */
			uint64_t above = 0, below = 0;

			(void)lcloud_verdict_get_merge_gap(v, &above, &below);
			json_object_object_add(jv, "merge_gap_above_bytes", json_object_new_uint64(above));
			json_object_object_add(jv, "merge_gap_below_bytes", json_object_new_uint64(below));
		}
		for (unsigned int i = 0; i < lcloud_verdict_get_reason_count(v); i++) {
			json_object *r = json_object_new_object();

			json_object_object_add(r, "reason", json_string_from_device(lcloud_verdict_get_reason(v, i)));
			json_object_object_add(r, "evidence", json_object_new_string(lcloud_verdict_get_reason_evidence(v, i)));
			json_object_array_add(reasons, r);
		}
		json_object_object_add(jv, "reasons", reasons);
		json_object_object_add(obj, lcloud_io_path_to_string((enum lcloud_io_path)path), jv);
	}
	return obj;
}

json_object *probe_to_json(const struct lcloud_probe *p)
{
	json_object *obj = json_object_new_object();
	json_object *layers = json_object_new_array();
	json_object *notes = json_object_new_array();
	const char *resolved = lcloud_probe_get_resolved_path(p);

	json_object_object_add(obj, "path", json_string_from_device(lcloud_probe_get_path(p)));
	json_object_object_add(obj, "resolved_path", resolved ? json_string_from_device(resolved) : NULL);
	json_object_object_add(obj, "target", json_object_new_string(
		lcloud_target_type_to_string(lcloud_probe_get_target_type(p))));
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++)
		json_object_array_add(layers, layer_to_json(p, i));
	json_object_object_add(obj, "layers", layers);
	for (unsigned int i = 0; i < lcloud_probe_get_note_count(p); i++) {
		const struct lcloud_note *n = lcloud_probe_get_note(p, i);
		json_object *jn = json_object_new_object();
		int layer = lcloud_note_get_layer(n);

		json_object_object_add(jn, "severity",
				       json_object_new_string(lcloud_note_severity_to_string(lcloud_note_get_severity(n))));
		json_object_object_add(jn, "code", json_object_new_string(lcloud_note_get_code(n)));
		json_object_object_add(jn, "layer", layer >= 0 ? json_object_new_int(layer) : NULL);
		json_object_object_add(jn, "message", json_string_from_device(lcloud_note_get_message(n)));
		json_object_array_add(notes, jn);
	}
	json_object_object_add(obj, "notes", notes);
	json_object_object_add(obj, "verdict", verdict_to_json(p));
	return obj;
}

void print_json(FILE *out, json_object *obj)
{
	fputs_json(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							   JSON_C_TO_STRING_NOSLASHESCAPE),
		   out);
	fputc('\n', out);
}
