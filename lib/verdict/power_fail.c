/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The power-fail model (power_fail.h): an NVMe namespace's power-fail atomic
 * size (NAWUPF, or the controller's AWUPF, the smallest of every controller
 * on a shared namespace) with its boundary, raised by a cloud provider's
 * documented promise where there is one, with its own alignment and
 * granularity; a promise per aligned physical block also keeps each whole
 * block of a larger or merged command whole. A SCSI disk's atomic limits
 * are WRITE ATOMIC(16)'s only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "power_fail.h"

static bool same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static uint64_t or_default(uint64_t v, uint64_t fallback)
{
	return v ? v : fallback;
}

/* AWUPF is each controller's own: on a namespace shared by several, the smallest holds on every path. */
static void every_path(const struct power_fail_facts *f, struct power_fail_model *m)
{
	if (!same(f->power_fail_source, "nvme:id-ctrl:awupf") || (!f->multipath_unread && f->multipath_paths <= 1) ||
	    m->bytes <= m->lba)
		return;
	if (f->has_every_path && f->every_path_bytes >= m->lba) {
		m->bytes = m->bytes < f->every_path_bytes ? m->bytes : f->every_path_bytes;
		snprintf(m->what, sizeof(m->what), "%s is shared by %" PRIu64 " controllers; the smallest AWUPF among "
			 "them (each read from its own device) promises power-fail atomic writes up to %" PRIu64 " bytes",
			 f->nvme_name, f->multipath_paths, m->bytes);
		m->evidence = f->every_path_source;
		return;
	}
	/* unread: one logical block (AWUPF 0) is the least any controller promises */
	if (f->multipath_unread)
		snprintf(m->what, sizeof(m->what), "how many controllers share %s could not be read (%s), and AWUPF is "
			 "each one's own (%" PRIu64 " bytes on the one that answered): only one %" PRIu64 "-byte block is "
			 "sure on every path", f->nvme_name, f->multipath_unread, m->bytes, m->lba);
	else
		snprintf(m->what, sizeof(m->what), "%s is shared by %" PRIu64 " controllers and AWUPF is each one's own "
			 "(%" PRIu64 " bytes on the one that answered; the others': %s): only one %" PRIu64 "-byte block "
			 "is sure on every path", f->nvme_name, f->multipath_paths, m->bytes,
			 f->every_path_unread ? f->every_path_unread : "not read", m->lba);
	m->bytes = m->lba;
	m->evidence = "sysfs:multipath";
}

void power_fail_model(const struct power_fail_facts *f, bool include_cloud, struct power_fail_model *m)
{
	memset(m, 0, sizeof(*m));
	m->volatile_cache = f->volatile_write_cache >= 0 ? f->volatile_write_cache : f->write_back;
	m->write_atomic_bytes = f->scsi_write_atomic_bytes;
	if (f->has_power_fail) {
		m->bytes = f->power_fail_bytes;
		m->lba = or_default(f->lba_size, 512);
		m->boundary = f->boundary_bytes;
		m->boundary_offset = m->boundary ? f->boundary_offset_bytes : 0;
		m->evidence = f->power_fail_source;
		snprintf(m->what, sizeof(m->what), "%s promises power-fail atomic writes up to %" PRIu64 " bytes",
			 f->nvme_name ? f->nvme_name : "the namespace", m->bytes);
		every_path(f, m);
	}
	if (include_cloud && f->promise_bytes > m->bytes) {
		m->bytes = f->promise_bytes;
		m->lba = or_default(f->promise_granularity_bytes, or_default(m->lba, 512));
		/* aligned to the write's own size (AWS), or inside one boundary block (Google) */
		m->natural = f->promise_alignment != LAYER_PROMISE_INSIDE_BOUNDARY;
		m->boundary = f->promise_boundary_bytes;
		m->boundary_offset = 0;
		/* Google's promise is the physical block's: whatever command carries a whole block, it lands whole */
		m->whole_block = m->natural ? 0 : f->promise_boundary_bytes;
		m->evidence = f->promise_source;
		m->from_cloud = true;
		snprintf(m->what, sizeof(m->what), "%s (%s) promises untorn writes up to %" PRIu64 " bytes, %s",
			 f->cloud_name ? f->cloud_name : "the provider", f->product ? f->product : "", m->bytes,
			 m->natural ? "aligned to their size" : "each inside one of its aligned blocks of that size");
	}
	if (!m->lba)
		m->lba = f->logical_block_size;
}

int power_fail_alignment_from_name(const char *name, enum layer_promise_alignment *ret)
{
	if (same(name, "size"))
		*ret = LAYER_PROMISE_ALIGNED_TO_SIZE;
	else if (same(name, "boundary"))
		*ret = LAYER_PROMISE_INSIDE_BOUNDARY;
	else
		return -EINVAL;
	return 0;
}
