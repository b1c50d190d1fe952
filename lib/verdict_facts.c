/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every verdict path reads the finished layers with: facts by name,
 * the layers' relations, the reasons it gives, and what a device or its
 * provider promises.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util.h"
#include "verdict_internal.h"

uint64_t pow2_floor(uint64_t v)
{
	while (v & (v - 1))
		v &= v - 1;
	return v;
}

uint64_t pow2_dividing(uint64_t v)
{
	return v ? v & (~v + 1) : UINT64_MAX;
}

uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static int vreason(struct lcloud_verdict *v, const char *evidence, const char *fmt, va_list ap)
{
	struct verdict_reason *rs = realloc(v->reasons, (v->n_reasons + 1) * sizeof(*rs));
	char *text;

	if (!rs)
		return -ENOMEM;
	v->reasons = rs;
	if (vasprintf(&text, fmt, ap) < 0)
		return -ENOMEM;
	rs[v->n_reasons].text = text;
	rs[v->n_reasons].evidence = strdup(evidence);
	if (!rs[v->n_reasons].evidence) {
		free(text);
		return -ENOMEM;
	}
	v->n_reasons++;
	return 0;
}

int reason(struct lcloud_verdict *v, const char *evidence, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vreason(v, evidence, fmt, ap);
	va_end(ap);
	return r;
}

int unknown(struct lcloud_verdict *v, const char *evidence, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vreason(v, evidence, fmt, ap);
	va_end(ap);
	if (r < 0)
		return r;
	/* the first missing piece is the one to name: fixing it is the first step */
	if (!v->unknown) {
		v->unknown = true;
		v->unknown_reason = v->n_reasons - 1;
	}
	return 0;
}

const struct lcloud_fact *fact(const struct lcloud_layer *l, const char *name)
{
	const struct lcloud_fact *f = l ? layer_fact(l, name) : NULL;

	return f && f->state == LCLOUD_FACT_PRESENT ? f : NULL;
}

const struct lcloud_fact *fact_unread(const struct lcloud_layer *l, const char *name)
{
	const struct lcloud_fact *f = l ? layer_fact(l, name) : NULL;

	return f && (f->state == LCLOUD_FACT_NEEDS_ROOT || f->state == LCLOUD_FACT_UNREADABLE) ? f : NULL;
}

bool has_note(const struct lcloud_probe *p, enum note_code code)
{
	for (unsigned int i = 0; i < p->n_notes; i++)
		if (p->notes[i].code == code)
			return true;
	return false;
}

bool file_without_direct_io(const struct lcloud_layer *fs)
{
	const struct lcloud_fact *f = fs ? fact(fs, "stx_dio_offset_align") : NULL;

	return f && f->u64 == 0;
}

uint64_t num(const struct lcloud_layer *l, const char *name, uint64_t fallback)
{
	const struct lcloud_fact *f = fact(l, name);

	return f && f->type != LCLOUD_FACT_STRING ? f->u64 : fallback;
}

const struct lcloud_layer *first_of(const struct lcloud_probe *p, enum lcloud_layer_kind kind)
{
	for (unsigned int i = 0; i < p->n_layers; i++)
		if (p->layers[i].kind == kind)
			return &p->layers[i];
	return NULL;
}

const struct lcloud_layer *child_of_kind(const struct lcloud_probe *p, int parent, enum lcloud_layer_kind kind)
{
	for (unsigned int i = 0; i < p->n_layers; i++)
		if (p->layers[i].parent == parent && p->layers[i].kind == kind)
			return &p->layers[i];
	return NULL;
}

int index_of(const struct lcloud_probe *p, const struct lcloud_layer *l)
{
	return l ? (int)(l - p->layers) : -1;
}

int top_block(const struct lcloud_probe *p)
{
	for (unsigned int i = 0; i < p->n_layers; i++)
		if (p->layers[i].kind != LCLOUD_LAYER_FILESYSTEM && p->layers[i].kind != LCLOUD_LAYER_NVME &&
		    p->layers[i].kind != LCLOUD_LAYER_SCSI && p->layers[i].kind != LCLOUD_LAYER_CLOUD)
			return (int)i;
	return -1;
}

bool is_stack_layer(enum lcloud_layer_kind k)
{
	return k == LCLOUD_LAYER_PARTITION || k == LCLOUD_LAYER_DM || k == LCLOUD_LAYER_MD ||
	       k == LCLOUD_LAYER_LOOP || k == LCLOUD_LAYER_DISK;
}

/* ---- device promises (passthrough and plain_direct) ---------------------- */

void device_promise(const struct lcloud_probe *p, int disk, bool include_cloud, struct promise *pr)
{
	const struct lcloud_layer *nvme = child_of_kind(p, disk, LCLOUD_LAYER_NVME);
	const struct lcloud_layer *scsi = child_of_kind(p, disk, LCLOUD_LAYER_SCSI);
	const struct lcloud_layer *cloud = child_of_kind(p, index_of(p, nvme ? nvme : scsi), LCLOUD_LAYER_CLOUD);
	const struct lcloud_fact *pf = fact(nvme, "atomic_write_power_fail_bytes");

	memset(pr, 0, sizeof(*pr));
	if (pf) {
		pr->bytes = pf->u64;
		pr->lba = num(nvme, "lba_size", 512);
		pr->boundary = num(nvme, "atomic_boundary_power_fail_bytes", 0);
		pr->boundary_offset = pr->boundary ? num(nvme, "atomic_boundary_offset_bytes", 0) : 0;
		pr->evidence = pf->source;
		snprintf(pr->what, sizeof(pr->what), "%s promises power-fail atomic writes up to %" PRIu64 " bytes",
			 nvme->name, pr->bytes);
		/*
		 * AWUPF is each controller's own: on a namespace shared by several, Identify went
		 * through one of them while writes take any. The smallest AWUPF read from every
		 * controller holds on each path; unread, one logical block (AWUPF 0) is the least
		 * any controller promises.
		 */
		if (streq(pf->source, "nvme:id-ctrl:awupf") && num(nvme, "multipath_paths", 1) > 1 &&
		    pr->bytes > pr->lba) {
			const struct lcloud_fact *every = fact(nvme, "atomic_write_power_fail_bytes_every_path");
			const struct lcloud_fact *unread = fact_unread(nvme, "atomic_write_power_fail_bytes_every_path");

			if (every && every->u64 >= pr->lba) {
				pr->bytes = min_u64(pr->bytes, every->u64);
				snprintf(pr->what, sizeof(pr->what), "%s is shared by %" PRIu64 " controllers; the smallest "
					 "AWUPF among them (each read from its own device) promises power-fail atomic "
					 "writes up to %" PRIu64 " bytes", nvme->name, num(nvme, "multipath_paths", 1),
					 pr->bytes);
				pr->evidence = every->source;
			} else {
				snprintf(pr->what, sizeof(pr->what), "%s is shared by %" PRIu64 " controllers and AWUPF "
					 "is each one's own (%" PRIu64 " bytes on the one that answered; the others': "
					 "%s): only one %" PRIu64 "-byte block is sure on every path", nvme->name,
					 num(nvme, "multipath_paths", 1), pr->bytes,
					 unread && unread->reason ? unread->reason : "not read", pr->lba);
				pr->bytes = pr->lba;
				pr->evidence = "sysfs:multipath";
			}
		}
	}
	if (include_cloud && cloud && num(cloud, "promise_untorn_max_bytes", 0) > pr->bytes) {
		const struct lcloud_fact *cf = fact(cloud, "promise_untorn_max_bytes");

		pr->bytes = cf->u64;
		pr->lba = num(cloud, "promise_untorn_granularity_bytes", pr->lba ? pr->lba : 512);
		/* "size": aligned to the write's own size (AWS); "boundary": inside one boundary block (Google) */
		pr->natural = !streq(fact(cloud, "promise_alignment") ? fact(cloud, "promise_alignment")->string : NULL,
				     "boundary");
		pr->boundary = num(cloud, "promise_boundary_bytes", 0);
		pr->boundary_offset = 0;
		pr->evidence = cf->source;
		snprintf(pr->what, sizeof(pr->what), "%s (%s) promises untorn writes up to %" PRIu64 " bytes, %s",
			 cloud->name, fact(cloud, "product") ? fact(cloud, "product")->string : "", pr->bytes,
			 pr->natural ? "aligned to their size" : "each inside one of its aligned blocks of that size");
	}
}

int leaf_disks(const struct lcloud_probe *p, int index, int *out, int max)
{
	bool has_children = false;
	int n = 0;

	for (unsigned int i = 0; i < p->n_layers; i++)
		if (p->layers[i].parent == index && is_stack_layer(p->layers[i].kind)) {
			has_children = true;
			n += leaf_disks(p, (int)i, n < max ? out + n : out, n < max ? max - n : 0);
		}
	if (!has_children && p->layers[index].kind != LCLOUD_LAYER_PARTITION) {
		if (n < max)
			out[n] = index;
		n++;
	}
	return n;
}

