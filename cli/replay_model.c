/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The device's power-fail model for 'lcloudctl replay', read from the JSON of
 * 'lcloudctl probe --format json' run on the logged device in the guest: a cloud
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

#include "json_read.h"
#include "power_fail.h"
#include "replay.h"

/* A fact's value: 1 present, 0 absent or null (the probe could not read it), -EBADMSG another type. */
static int fact_u64(struct json_in *in, json_object *facts, const char *name, uint64_t *ret)
{
	return json_get_u64(in, facts, name, true, ret);
}

/* The layer layer_of() found last: where fact_source() reads. */
static json_object *last_layer;

/* The source the probe gave fact NAME of the last layer found ("sources" beside "facts"); NULL when none. */
static int fact_source(struct json_in *in, const char *name, const char **ret)
{
	json_object *sources;
	int r;

	*ret = NULL;
	if (!last_layer || (r = json_get_object(in, last_layer, "sources", true, &sources)) <= 0)
		return last_layer ? r : 0;
	return json_get_string(in, sources, name, true, ret);
}

/* The first layer of KIND: its index, name and facts; 0 when there is none. */
static int layer_of(struct json_in *in, json_object *layers, const char *kind, size_t *ret_i, const char **ret_name,
		    json_object **ret_facts)
{
	last_layer = NULL;
	for (size_t i = 0; i < json_object_array_length(layers); i++) {
		json_object *l = json_object_array_get_idx(layers, i);
		const char *k;

		json_in_at(in, "probes[0].layers", i);
		json_get_string(in, l, "layer", false, &k);
		if (strcmp(k, kind) || json_get_object(in, l, "facts", true, ret_facts) <= 0)
			continue;
		*ret_name = "?";
		json_get_string(in, l, "name", true, ret_name);
		*ret_i = i;
		last_layer = l;
		snprintf(in->where, sizeof(in->where), "probes[0].layers[%zu].facts", i);
		return 1;
	}
	return 0;
}

/* A string fact; NULL when absent or null. */
static int fact_string(struct json_in *in, json_object *facts, const char *name, const char **ret)
{
	*ret = NULL;
	return json_get_string(in, facts, name, true, ret);
}

/* The facts the power-fail model reads, from the NVMe, SCSI, cloud, disk and loop layers of the probe. */
static int facts_from_layers(struct json_in *in, json_object *layers, struct power_fail_facts *f,
			     struct replay_model *m)
{
	json_object *facts;
	const char *name, *s;
	uint64_t v;
	size_t i;
	bool b;
	int r;

	f->volatile_write_cache = f->write_back = -1;
	if (layer_of(in, layers, "nvme", &i, &name, &facts)) {
		f->nvme_name = name;
		if ((r = fact_u64(in, facts, "lba_size", &f->lba_size)) < 0 ||
		    (r = fact_u64(in, facts, "atomic_write_power_fail_bytes", &f->power_fail_bytes)) < 0)
			return r;
		f->has_power_fail = r > 0;
		/* the source tells NAWUPF from the controller's AWUPF, which only the every-path reading bounds */
		if ((r = fact_source(in, "atomic_write_power_fail_bytes", &f->power_fail_source)) < 0)
			return r;
		if ((r = fact_u64(in, facts, "atomic_boundary_power_fail_bytes", &f->boundary_bytes)) < 0 ||
		    (r = fact_u64(in, facts, "atomic_boundary_offset_bytes", &f->boundary_offset_bytes)) < 0 ||
		    (r = fact_u64(in, facts, "multipath_paths", &f->multipath_paths)) < 0 ||
		    (r = fact_u64(in, facts, "atomic_write_power_fail_bytes_every_path", &f->every_path_bytes)) < 0)
			return r;
		f->has_every_path = r > 0;
		if ((r = fact_source(in, "atomic_write_power_fail_bytes_every_path", &f->every_path_source)) < 0)
			return r;
		if ((r = json_get_bool(in, facts, "volatile_write_cache", true, &b)) < 0)
			return r;
		if (r) {
			f->volatile_write_cache = b;
			snprintf(m->src_cache, sizeof(m->src_cache), "probe:nvme:%s:volatile_write_cache", name);
		}
		if (f->lba_size)
			snprintf(m->src_lba, sizeof(m->src_lba), "probe:nvme:%s:lba_size", name);
	}
	if (layer_of(in, layers, "scsi", &i, &name, &facts)) {
		if ((r = fact_u64(in, facts, "logical_block_length", &v)) < 0 ||
		    (r = fact_u64(in, facts, "max_atomic_transfer_bytes", &f->scsi_write_atomic_bytes)) < 0)
			return r;
		if (!f->lba_size && v) {
			f->lba_size = v;
			snprintf(m->src_lba, sizeof(m->src_lba), "probe:scsi:%s:logical_block_length", name);
		}
	}
	if (layer_of(in, layers, "cloud", &i, &name, &facts)) {
		f->cloud_name = name;
		if ((r = fact_u64(in, facts, "promise_untorn_max_bytes", &f->promise_bytes)) < 0 ||
		    (r = fact_u64(in, facts, "promise_untorn_granularity_bytes", &f->promise_granularity_bytes)) < 0 ||
		    (r = fact_u64(in, facts, "promise_boundary_bytes", &f->promise_boundary_bytes)) < 0 ||
		    (r = fact_string(in, facts, "promise_alignment", &s)) < 0 ||
		    (r = fact_string(in, facts, "product", &f->product)) < 0)
			return r;
		if (s && power_fail_alignment_from_name(s, &f->promise_alignment) < 0)
			return json_in_fail(in, "the fact promise_alignment is \"%s\", neither \"size\" nor \"boundary\"",
					    s);
		if ((r = fact_source(in, "promise_untorn_max_bytes", &f->promise_source)) < 0)
			return r;
		if (!f->promise_source)
			f->promise_source = "cloud";
	}
	for (const char *const *k = (const char *const[]){ "disk", "loop", NULL }; *k; k++) {
		if (!layer_of(in, layers, *k, &i, &name, &facts))
			continue;
		if ((r = fact_u64(in, facts, "logical_block_size", &v)) < 0 ||
		    (r = fact_string(in, facts, "write_cache", &s)) < 0)
			return r;
		if (!f->logical_block_size && v) {
			f->logical_block_size = v;
			if (!m->src_lba[0])
				snprintf(m->src_lba, sizeof(m->src_lba), "probe:%s:%s:logical_block_size", *k, name);
		}
		if (s && f->write_back < 0) {
			f->write_back = !strcmp(s, "write back");
			if (!m->src_cache[0])
				snprintf(m->src_cache, sizeof(m->src_cache), "probe:%s:%s:write_cache", *k, name);
		}
	}
	return 0;
}

/*
 * The oracle's model from the one power-fail model (power_fail.c), the verdict's own: the device's logical
 * block, the unit every plain write is kept whole up to, its alignment and boundary, and the block a
 * provider keeps whole in any command. A SCSI disk's atomic
 * limits are WRITE ATOMIC(16)'s only, and the log does not say which command a write was: none counts.
 */
static int model_from_doc(struct json_in *in, json_object *doc, struct replay_model *m)
{
	json_object *probes, *probe, *layers;
	struct power_fail_facts f = { 0 };
	struct power_fail_model pf;
	int r;

	if (!json_object_is_type(doc, json_type_object))
		return json_in_fail(in, "not the output of 'lcloudctl probe --format json' (not a JSON object)");
	if ((r = json_get_array(in, doc, "probes", false, &probes)) < 0)
		return r;
	if (json_object_array_length(probes) != 1)
		return json_in_fail(in, "\"probes\" holds %zu probes: give the output of 'lcloudctl probe --format json' for one "
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
	if ((r = facts_from_layers(in, layers, &f, m)) < 0)
		return r;
	in->where[0] = '\0';
	power_fail_model(&f, true, &pf);
	m->m.lba = f.lba_size ? f.lba_size : f.logical_block_size;
	if (!m->m.lba && !pf.bytes)
		return json_in_fail(in, "names no logical block size or atomic write size (no nvme, scsi, cloud or disk "
				    "layer with them)");
	if (!m->m.lba)
		m->m.lba = pf.lba;
	if (pf.bytes > m->m.lba) {
		m->m.atomic_bytes = pf.bytes;
		m->m.natural = pf.natural;
		m->m.boundary = pf.boundary;
		m->m.boundary_offset = pf.boundary_offset;
		if (pf.from_cloud)
			snprintf(m->src_atomic, sizeof(m->src_atomic), "probe:cloud:%s:promise_untorn_max_bytes (%s)",
				 f.cloud_name, pf.evidence);
		else
			snprintf(m->src_atomic, sizeof(m->src_atomic), "probe:nvme:%s:atomic_write_power_fail_bytes (%s)",
				 f.nvme_name, pf.evidence ? pf.evidence : "source not given");
		/* a promise per physical block: each whole block of a command that breaks it is still kept */
		m->m.whole_block = pf.whole_block;
		if (pf.boundary && pf.from_cloud)
			snprintf(m->src_boundary, sizeof(m->src_boundary), "probe:cloud:%s:promise_boundary_bytes",
				 f.cloud_name);
		else if (pf.boundary)
			snprintf(m->src_boundary, sizeof(m->src_boundary), "probe:nvme:%s:atomic_boundary_power_fail_bytes",
				 f.nvme_name);
	} else if (pf.boundary && f.has_power_fail) {
		/* one block kept whole, a boundary still stated: the oracle checks it as the verdict does */
		m->m.boundary = pf.boundary;
		m->m.boundary_offset = pf.boundary_offset;
		snprintf(m->src_boundary, sizeof(m->src_boundary), "probe:nvme:%s:atomic_boundary_power_fail_bytes",
			 f.nvme_name);
	}
	if (pf.volatile_cache >= 0)
		m->m.volatile_cache = pf.volatile_cache;
	else
		m->src_cache[0] = '\0';
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
