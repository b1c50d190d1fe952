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
#include "power_fail.h"
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

const struct lcloud_fact *fact(const struct lcloud_layer *l, enum fact_id id)
{
	const struct lcloud_fact *f = l ? layer_fact(l, id) : NULL;

	return f && f->state == LCLOUD_FACT_PRESENT ? f : NULL;
}

const struct lcloud_fact *fact_unread(const struct lcloud_layer *l, enum fact_id id)
{
	const struct lcloud_fact *f = l ? layer_fact(l, id) : NULL;

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
	const struct lcloud_fact *f = fs ? fact(fs, FACT_STX_DIO_OFFSET_ALIGN) : NULL;

	return f && f->u64 == 0;
}

const char *fs_type(const struct lcloud_layer *fs)
{
	const char *type = NULL;

	return fs && layer_get_string(fs, FACT_FSTYPE, &type) > 0 && type ? type : "";
}

int followed_kernel(const struct lcloud_layer *l, const char **ret_release)
{
	const char *release = NULL;
	int k;

	if (layer_get_string(l, FACT_KERNEL_RELEASE, &release) <= 0 || !release) {
		const struct lcloud_fact *f = layer_fact(l, FACT_KERNEL_RELEASE);

		*ret_release = f && f->reason ? f->reason : "not read";
		return -ENODATA;
	}
	*ret_release = release;
	k = kernel_release_followed(release);
	return k < 0 ? -ENODATA : k;
}

int index_of(const struct lcloud_probe *p, const struct lcloud_layer *l)
{
	return l ? (int)(l - p->layers) : -1;
}

int top_block(const struct lcloud_probe *p)
{
	for (unsigned int i = 0; i < p->n_layers; i++)
		if (layer_kind_is_block_device(p->layers[i].kind))
			return (int)i;
	return -1;
}

/*
 * Linux cannot carry metadata interleaved in the data over PCIe: unless the
 * controller strips it (protection information), it sets the block device's
 * capacity to 0 and no block I/O reaches the namespace. Both facts must be
 * read: the format alone does not say what this kernel and transport did.
 */
const struct lcloud_layer *extended_lba_namespace(const struct lcloud_probe *p)
{
	int top = top_block(p);
	const struct lcloud_layer *nvme;
	uint64_t size, flbas, metadata;

	if (top < 0 || stack_first_layer(p, LCLOUD_LAYER_FILESYSTEM) || p->layers[top].kind != LCLOUD_LAYER_DISK)
		return NULL;
	nvme = stack_child_layer(p, top, LCLOUD_LAYER_NVME);
	if (!nvme || layer_get_bytes(&p->layers[top], FACT_SIZE, &size) <= 0 || size ||
	    layer_get_u64(nvme, FACT_FLBAS, &flbas) <= 0 || !(flbas & 0x10) ||
	    layer_get_bytes(nvme, FACT_LBA_METADATA_SIZE, &metadata) <= 0 || !metadata)
		return NULL;
	return nvme;
}

/* ---- device promises (passthrough and plain_direct) ---------------------- */

/* What the one power-fail model (power_fail.c) reads, from the typed facts of the disk's NVMe and cloud layers. */
static void promise_facts(const struct lcloud_layer *nvme, const struct lcloud_layer *cloud,
			  struct power_fail_facts *f)
{
	const struct lcloud_fact *pf = fact(nvme, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES);
	const struct lcloud_fact *every = fact(nvme, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES_EVERY_PATH);
	const struct lcloud_fact *every_unread = fact_unread(nvme, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES_EVERY_PATH);
	const struct lcloud_fact *cf = fact(cloud, FACT_PROMISE_UNTORN_MAX_BYTES);

	memset(f, 0, sizeof(*f));
	f->volatile_write_cache = f->write_back = -1;
	if (pf) {
		f->nvme_name = nvme->name;
		f->has_power_fail = true;
		f->power_fail_bytes = pf->u64;
		f->power_fail_source = pf->source;
		/* the sizes below come from the same Identify data as the promise itself */
		(void)layer_get_bytes(nvme, FACT_LBA_SIZE, &f->lba_size);
		(void)layer_get_bytes(nvme, FACT_ATOMIC_BOUNDARY_POWER_FAIL_BYTES, &f->boundary_bytes);
		(void)layer_get_bytes(nvme, FACT_ATOMIC_BOUNDARY_OFFSET_BYTES, &f->boundary_offset_bytes);
		/* absent: one path (the probe records only several); unread: maybe several */
		if (layer_get_u64(nvme, FACT_MULTIPATH_PATHS, &f->multipath_paths) < 0)
			f->multipath_unread = layer_unread_reason(nvme, FACT_MULTIPATH_PATHS);
		if (every) {
			f->has_every_path = true;
			f->every_path_bytes = every->u64;
			f->every_path_source = every->source;
		}
		f->every_path_unread = every_unread && every_unread->reason ? every_unread->reason : NULL;
	}
	/* the promise's facts are written together from liblcloud's own table: never unread */
	if (cloud && cf) {
		const struct lcloud_fact *product = fact(cloud, FACT_PRODUCT);

		f->cloud_name = cloud->name;
		f->product = product ? product->string : "";
		f->promise_bytes = cf->u64;
		f->promise_source = cf->source;
		(void)layer_get_bytes(cloud, FACT_PROMISE_UNTORN_GRANULARITY_BYTES, &f->promise_granularity_bytes);
		(void)layer_get_bytes(cloud, FACT_PROMISE_BOUNDARY_BYTES, &f->promise_boundary_bytes);
		f->promise_alignment = cloud->promise_alignment;
	}
}

void device_promise(const struct lcloud_probe *p, int disk, bool include_cloud, struct promise *pr)
{
	const struct lcloud_layer *nvme = stack_child_layer(p, disk, LCLOUD_LAYER_NVME);
	const struct lcloud_layer *scsi = stack_child_layer(p, disk, LCLOUD_LAYER_SCSI);
	const struct lcloud_layer *cloud = stack_child_layer(p, index_of(p, nvme ? nvme : scsi), LCLOUD_LAYER_CLOUD);
	struct power_fail_facts f;
	struct power_fail_model m;

	promise_facts(nvme, cloud, &f);
	power_fail_model(&f, include_cloud, &m);
	memset(pr, 0, sizeof(*pr));
	if (!f.has_power_fail && !m.from_cloud)
		return; /* nothing promised: no block either (the verdict's callers take the disk's own) */
	pr->bytes = m.bytes;
	pr->lba = m.lba;
	pr->natural = m.natural;
	pr->boundary = m.boundary;
	pr->boundary_offset = m.boundary_offset;
	pr->whole_block = m.whole_block;
	pr->evidence = m.evidence;
	snprintf(pr->what, sizeof(pr->what), "%s", m.what);
}

int leaf_disks(const struct lcloud_probe *p, int index, int *out, int max)
{
	bool has_children = false;
	int n = 0;

	for (unsigned int i = 0; i < p->n_layers; i++)
		if (p->layers[i].parent == index && layer_kind_is_block_device(p->layers[i].kind)) {
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

