/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The device's power-fail model for 'lcloudctl replay', read from the JSON of
 * 'lcloudctl probe -o json' run on the logged device in the guest: a cloud
 * provider's documented promise first, then what the NVMe namespace or SCSI
 * disk says, then the kernel's logical block size and write cache of the
 * disk (or loop device) at the bottom of the stack.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "replay.h"

static bool fact_u64(json_object *facts, const char *name, uint64_t *ret)
{
	json_object *v;

	if (!json_object_object_get_ex(facts, name, &v) || !json_object_is_type(v, json_type_int))
		return false;
	*ret = (uint64_t)json_object_get_int64(v);
	return true;
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

int replay_model_from_probe(const char *path, struct replay_model *m, char *err, size_t err_size)
{
	json_object *doc = json_object_from_file(path), *probes, *probe, *layers;
	bool have_lba = false, have_atomic = false, have_boundary = false, have_cache = false;
	static const char *const order[] = { "cloud", "nvme", "scsi", "disk", "loop" };

	if (!doc) {
		snprintf(err, err_size, "%s: not JSON (%s)", path, json_util_get_last_err());
		return -EINVAL;
	}
	if (!json_object_object_get_ex(doc, "probes", &probes) || json_object_array_length(probes) != 1 ||
	    !(probe = json_object_array_get_idx(probes, 0)) || !json_object_object_get_ex(probe, "layers", &layers)) {
		snprintf(err, err_size, "%s: not the output of 'lcloudctl probe -o json' for one path", path);
		json_object_put(doc);
		return -EINVAL;
	}
	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++)
		for (size_t i = 0; i < json_object_array_length(layers); i++) {
			json_object *l = json_object_array_get_idx(layers, i), *kind, *name, *facts;
			const char *n;
			uint64_t v, off = 0;

			if (!json_object_object_get_ex(l, "layer", &kind) || strcmp(json_object_get_string(kind), order[o]) ||
			    !json_object_object_get_ex(l, "facts", &facts))
				continue;
			n = json_object_object_get_ex(l, "name", &name) ? json_object_get_string(name) : "?";
			if (!strcmp(order[o], "cloud")) {
				if (fact_u64(facts, "promise_untorn_max_bytes", &v) && v)
					take(&m->m.atomic_bytes, m->src_atomic, sizeof(m->src_atomic), &have_atomic, v, "cloud",
					     n, "promise_untorn_max_bytes");
				if (fact_u64(facts, "promise_boundary_bytes", &v) && v && !have_boundary) {
					take(&m->m.boundary, m->src_boundary, sizeof(m->src_boundary), &have_boundary, v,
					     "cloud", n, "promise_boundary_bytes");
					m->m.boundary_offset = 0;
				}
			} else if (!strcmp(order[o], "nvme")) {
				bool vwc;
				json_object *b;

				if (fact_u64(facts, "lba_size", &v) && v)
					take(&m->m.lba, m->src_lba, sizeof(m->src_lba), &have_lba, v, "nvme", n, "lba_size");
				if (fact_u64(facts, "atomic_write_power_fail_bytes", &v) && v)
					take(&m->m.atomic_bytes, m->src_atomic, sizeof(m->src_atomic), &have_atomic, v, "nvme",
					     n, "atomic_write_power_fail_bytes");
				if (fact_u64(facts, "atomic_boundary_power_fail_bytes", &v) && !have_boundary) {
					fact_u64(facts, "atomic_boundary_offset_bytes", &off);
					take(&m->m.boundary, m->src_boundary, sizeof(m->src_boundary), &have_boundary, v,
					     "nvme", n, "atomic_boundary_power_fail_bytes");
					m->m.boundary_offset = v ? off : 0;
				}
				if (json_object_object_get_ex(facts, "volatile_write_cache", &b) &&
				    json_object_is_type(b, json_type_boolean) && !have_cache) {
					vwc = json_object_get_boolean(b);
					m->m.volatile_cache = vwc;
					have_cache = true;
					snprintf(m->src_cache, sizeof(m->src_cache), "probe:nvme:%s:volatile_write_cache", n);
				}
			} else if (!strcmp(order[o], "scsi")) {
				if (fact_u64(facts, "logical_block_length", &v) && v)
					take(&m->m.lba, m->src_lba, sizeof(m->src_lba), &have_lba, v, "scsi", n,
					     "logical_block_length");
				/* WRITE ATOMIC(16) only; the log does not say which command a write was */
				if (fact_u64(facts, "max_atomic_transfer_bytes", &v) && v)
					take(&m->m.atomic_bytes, m->src_atomic, sizeof(m->src_atomic), &have_atomic, v, "scsi",
					     n, "max_atomic_transfer_bytes");
			} else {
				json_object *wc;

				if (fact_u64(facts, "logical_block_size", &v) && v)
					take(&m->m.lba, m->src_lba, sizeof(m->src_lba), &have_lba, v, order[o], n,
					     "logical_block_size");
				if (json_object_object_get_ex(facts, "write_cache", &wc) &&
				    json_object_is_type(wc, json_type_string) && !have_cache) {
					m->m.volatile_cache = !strcmp(json_object_get_string(wc), "write back");
					have_cache = true;
					snprintf(m->src_cache, sizeof(m->src_cache), "probe:%s:%s:write_cache", order[o], n);
				}
			}
		}
	json_object_put(doc);
	if (!have_lba && !have_atomic) {
		snprintf(err, err_size, "%s names no logical block size or atomic write size (no nvme, scsi, cloud or "
			 "disk layer with them)", path);
		return -EINVAL;
	}
	return 0;
}
