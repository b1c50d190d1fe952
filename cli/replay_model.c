/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The device's power-fail model for 'lcloudctl replay', read from the JSON of
 * 'lcloudctl probe -o json' run on the logged device in the guest: a cloud
 * provider's documented promise first, then what the NVMe namespace or SCSI
 * disk says, then the kernel's logical block size and write cache of the
 * disk (or loop device) at the bottom of the stack. The file is checked
 * with the typed accessors of json_read.h: a value of another type is an
 * error naming the file and the key (-EBADMSG), never a crash; no printing,
 * so the fuzz harness fuzz_probe_model calls replay_model_parse too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "json_read.h"
#include "replay.h"

/* A fact's value: 1 present, 0 absent or null (the probe could not read it), -EBADMSG another type. */
static int fact_u64(struct json_in *in, json_object *facts, const char *name, uint64_t *ret)
{
	return json_get_u64(in, facts, name, true, ret);
}

static void take(uint64_t *field, char *src, size_t src_size, bool *have, uint64_t v, const char *layer,
		 const char *name, const char *fact)
{
	if (*have)
		return;
	*field = v;
	*have = true;
	snprintf(src, src_size, "probe:%s:%s:%s", layer, name, fact);
}

static int model_from_doc(struct json_in *in, json_object *doc, struct replay_model *m)
{
	json_object *probes, *probe, *layers;
	bool have_lba = false, have_atomic = false, have_boundary = false, have_cache = false;
	static const char *const order[] = { "cloud", "nvme", "scsi", "disk", "loop" };
	int r;

	if (!json_object_is_type(doc, json_type_object))
		return json_in_fail(in, "not the output of 'lcloudctl probe -o json' (not a JSON object)");
	if ((r = json_get_array(in, doc, "probes", false, &probes)) < 0)
		return r;
	if (json_object_array_length(probes) != 1)
		return json_in_fail(in, "\"probes\" holds %zu probes: give the output of 'lcloudctl probe -o json' for one "
				    "path", json_object_array_length(probes));
	probe = json_object_array_get_idx(probes, 0);
	snprintf(in->where, sizeof(in->where), "probes[0]");
	if ((r = json_get_array(in, probe, "layers", false, &layers)) < 0)
		return r;
	/* every layer's shape first: the walk below then reads only what was checked */
	for (size_t i = 0; i < json_object_array_length(layers); i++) {
		json_object *l = json_object_array_get_idx(layers, i), *facts;
		const char *kind, *name;

		json_in_at(in, "probes[0].layers", i);
		if ((r = json_get_string(in, l, "layer", false, &kind)) < 0 ||
		    (r = json_get_string(in, l, "name", true, &name)) < 0 || (r = json_get_object(in, l, "facts", true, &facts)) < 0)
			return r;
	}
	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++)
		for (size_t i = 0; i < json_object_array_length(layers); i++) {
			json_object *l = json_object_array_get_idx(layers, i), *facts;
			const char *n = "?", *kind, *wc;
			uint64_t v, off = 0;
			bool vwc;

			json_in_at(in, "probes[0].layers", i);
			json_get_string(in, l, "layer", false, &kind);
			if (strcmp(kind, order[o]) || json_get_object(in, l, "facts", true, &facts) <= 0)
				continue;
			json_get_string(in, l, "name", true, &n);
			snprintf(in->where, sizeof(in->where), "probes[0].layers[%zu].facts", i);
			if (!strcmp(order[o], "cloud")) {
				if ((r = fact_u64(in, facts, "promise_untorn_max_bytes", &v)) < 0)
					return r;
				if (r && v)
					take(&m->m.atomic_bytes, m->src_atomic, sizeof(m->src_atomic), &have_atomic, v, "cloud",
					     n, "promise_untorn_max_bytes");
				if ((r = fact_u64(in, facts, "promise_boundary_bytes", &v)) < 0)
					return r;
				if (r && v && !have_boundary) {
					take(&m->m.boundary, m->src_boundary, sizeof(m->src_boundary), &have_boundary, v,
					     "cloud", n, "promise_boundary_bytes");
					m->m.boundary_offset = 0;
				}
			} else if (!strcmp(order[o], "nvme")) {
				if ((r = fact_u64(in, facts, "lba_size", &v)) < 0)
					return r;
				if (r && v)
					take(&m->m.lba, m->src_lba, sizeof(m->src_lba), &have_lba, v, "nvme", n, "lba_size");
				if ((r = fact_u64(in, facts, "atomic_write_power_fail_bytes", &v)) < 0)
					return r;
				if (r && v)
					take(&m->m.atomic_bytes, m->src_atomic, sizeof(m->src_atomic), &have_atomic, v, "nvme",
					     n, "atomic_write_power_fail_bytes");
				if ((r = fact_u64(in, facts, "atomic_boundary_power_fail_bytes", &v)) < 0)
					return r;
				if (r && !have_boundary) {
					if ((r = fact_u64(in, facts, "atomic_boundary_offset_bytes", &off)) < 0)
						return r;
					take(&m->m.boundary, m->src_boundary, sizeof(m->src_boundary), &have_boundary, v,
					     "nvme", n, "atomic_boundary_power_fail_bytes");
					m->m.boundary_offset = v ? off : 0;
				}
				if ((r = json_get_bool(in, facts, "volatile_write_cache", true, &vwc)) < 0)
					return r;
				if (r && !have_cache) {
					m->m.volatile_cache = vwc;
					have_cache = true;
					snprintf(m->src_cache, sizeof(m->src_cache), "probe:nvme:%s:volatile_write_cache", n);
				}
			} else if (!strcmp(order[o], "scsi")) {
				if ((r = fact_u64(in, facts, "logical_block_length", &v)) < 0)
					return r;
				if (r && v)
					take(&m->m.lba, m->src_lba, sizeof(m->src_lba), &have_lba, v, "scsi", n,
					     "logical_block_length");
				/* WRITE ATOMIC(16) only; the log does not say which command a write was */
				if ((r = fact_u64(in, facts, "max_atomic_transfer_bytes", &v)) < 0)
					return r;
				if (r && v)
					take(&m->m.atomic_bytes, m->src_atomic, sizeof(m->src_atomic), &have_atomic, v, "scsi",
					     n, "max_atomic_transfer_bytes");
			} else {
				if ((r = fact_u64(in, facts, "logical_block_size", &v)) < 0)
					return r;
				if (r && v)
					take(&m->m.lba, m->src_lba, sizeof(m->src_lba), &have_lba, v, order[o], n,
					     "logical_block_size");
				if ((r = json_get_string(in, facts, "write_cache", true, &wc)) < 0)
					return r;
				if (r && !have_cache) {
					m->m.volatile_cache = !strcmp(wc, "write back");
					have_cache = true;
					snprintf(m->src_cache, sizeof(m->src_cache), "probe:%s:%s:write_cache", order[o], n);
				}
			}
		}
	in->where[0] = '\0';
	if (!have_lba && !have_atomic)
		return json_in_fail(in, "names no logical block size or atomic write size (no nvme, scsi, cloud or disk "
				    "layer with them)");
	return 0;
}

int replay_model_parse(const char *name, const void *text, size_t size, struct replay_model *m, char *err,
		       size_t err_size)
{
	struct json_in in = { .file = name, .err = err, .err_size = err_size };
	json_object *doc;
	int r = json_in_parse(&in, text, size, &doc);

	if (r < 0)
		return r;
	r = model_from_doc(&in, doc, m);
	json_object_put(doc);
	return r;
}

int replay_model_from_probe(const char *path, struct replay_model *m, char *err, size_t err_size)
{
	struct json_in in = { .file = path, .err = err, .err_size = err_size };
	json_object *doc;
	int r;

	err[0] = '\0';
	r = json_in_read_file(&in, &doc);
	if (r < 0) {
		if (r != -EBADMSG)
			snprintf(err, err_size, "%s: %s", path, strerror(-r));
		return r;
	}
	r = model_from_doc(&in, doc, m);
	json_object_put(doc);
	return r;
}
