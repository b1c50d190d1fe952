/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The verdict: for each I/O path, the largest power-of-two write that is
 * untorn on power loss, what alignment and boundary it needs, and why, with
 * the evidence each reason rests on. It reads only the finished layers.
 *
 *  rwf_atomic    the kernel's guarantee: statx of the file, or the device's
 *                atomic write queue limits; untorn or an error.
 *  passthrough   NVMe commands liblcloud sends itself, within the namespace's
 *                power-fail atomic size and boundaries, which it enforces.
 *  plain_direct  aligned O_DIRECT writes: untorn only where the device or the
 *                provider promises it, the stack does not shift the write off
 *                the promise's alignment, the block layer does not split it
 *                and the file system keeps it in one extent. The kernel itself
 *                promises nothing here.
 *  buffered      page-cache writes: never guaranteed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util.h"
#include "verdict.h"

static uint64_t pow2_floor(uint64_t v)
{
	while (v & (v - 1))
		v &= v - 1;
	return v;
}

/* Largest power of two dividing V (V == 0: no limit). */
static uint64_t pow2_dividing(uint64_t v)
{
	return v ? v & (~v + 1) : UINT64_MAX;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

__attribute__((format(printf, 3, 4)))
static int reason(struct lcloud_verdict *v, const char *evidence, const char *fmt, ...)
{
	struct verdict_reason *rs = realloc(v->reasons, (v->n_reasons + 1) * sizeof(*rs));
	va_list ap;
	char *text;
	int n;

	if (!rs)
		return -ENOMEM;
	v->reasons = rs;
	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
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

static const struct lcloud_fact *fact(const struct lcloud_layer *l, const char *name)
{
	const struct lcloud_fact *f = l ? layer_fact(l, name) : NULL;

	return f && f->state == LCLOUD_FACT_PRESENT ? f : NULL;
}

static uint64_t num(const struct lcloud_layer *l, const char *name, uint64_t fallback)
{
	const struct lcloud_fact *f = fact(l, name);

	return f && f->type != LCLOUD_FACT_STRING ? f->u64 : fallback;
}

static const struct lcloud_layer *first_of(const struct lcloud_probe *p, enum lcloud_layer_kind kind)
{
	for (unsigned int i = 0; i < p->n_layers; i++)
		if (p->layers[i].kind == kind)
			return &p->layers[i];
	return NULL;
}

static const struct lcloud_layer *child_of_kind(const struct lcloud_probe *p, int parent, enum lcloud_layer_kind kind)
{
	for (unsigned int i = 0; i < p->n_layers; i++)
		if (p->layers[i].parent == parent && p->layers[i].kind == kind)
			return &p->layers[i];
	return NULL;
}

static int index_of(const struct lcloud_probe *p, const struct lcloud_layer *l)
{
	return l ? (int)(l - p->layers) : -1;
}

/* The first block layer: the device the target is, or the file system sits on. */
static int top_block(const struct lcloud_probe *p)
{
	for (unsigned int i = 0; i < p->n_layers; i++)
		if (p->layers[i].kind != LCLOUD_LAYER_FILESYSTEM && p->layers[i].kind != LCLOUD_LAYER_NVME &&
		    p->layers[i].kind != LCLOUD_LAYER_SCSI && p->layers[i].kind != LCLOUD_LAYER_CLOUD)
			return (int)i;
	return -1;
}

static bool is_stack_layer(enum lcloud_layer_kind k)
{
	return k == LCLOUD_LAYER_PARTITION || k == LCLOUD_LAYER_DM || k == LCLOUD_LAYER_MD ||
	       k == LCLOUD_LAYER_LOOP || k == LCLOUD_LAYER_DISK;
}

/* ---- rwf_atomic ------------------------------------------------------------ */

/*
 * A block device without a statx reading (a captured tree): the kernel's
 * queue limits of its disk, and its rule for partitions: atomic writes only
 * where the start is a multiple of max(unit min, boundary).
 */
static int rwf_atomic_from_queue(const struct lcloud_probe *p, int top, struct lcloud_verdict *v)
{
	uint64_t start = 0;
	int disk = top;

	while (disk >= 0 && p->layers[disk].kind == LCLOUD_LAYER_PARTITION) {
		start += num(&p->layers[disk], "start_bytes", 0);
		disk = index_of(p, child_of_kind(p, disk, LCLOUD_LAYER_DISK));
	}
	if (disk < 0)
		return reason(v, "stack", "the disk below the partition was not found");
	{
		const struct lcloud_layer *d = &p->layers[disk];
		const struct lcloud_fact *umax = fact(d, "atomic_write_unit_max_bytes");
		uint64_t umin = num(d, "atomic_write_unit_min_bytes", 0), boundary = num(d, "atomic_write_boundary_bytes", 0);
		uint64_t need = umin > boundary ? umin : boundary;

		if (!umax)
			return reason(v, "sysfs:queue/atomic_write_unit_max_bytes", "%s: this kernel provides no atomic "
				      "write limits (Linux 6.11+ does): RWF_ATOMIC is not available", d->name);
		if (!umax->u64)
			return reason(v, "sysfs:queue/atomic_write_unit_max_bytes", "%s: the kernel reports no atomic "
				      "writes for this device (atomic_write_unit_max_bytes 0)", d->name);
		if (start && need && start % need)
			return reason(v, "sysfs:start", "the partition starts at byte %" PRIu64 ", not a multiple of "
				      "%" PRIu64 ": the kernel refuses RWF_ATOMIC on it", start, need);
		v->max_untorn = pow2_floor(umax->u64);
		v->min_untorn = umin;
		v->boundary = boundary;
		v->boundary_offset = boundary ? (boundary - start % boundary) % boundary : 0;
		return reason(v, "sysfs:queue/atomic_write_unit_max_bytes", "%s: the kernel accepts RWF_ATOMIC writes "
			      "of %" PRIu64 " to %" PRIu64 " bytes, naturally aligned%s, untorn or failing", d->name,
			      umin, umax->u64, boundary ? ", not crossing its atomic write boundary" : "");
	}
}

static int verdict_rwf_atomic(const struct lcloud_probe *p, struct lcloud_verdict *v)
{
	const struct lcloud_layer *fs = first_of(p, LCLOUD_LAYER_FILESYSTEM);
	int top = top_block(p);
	const struct lcloud_layer *src = fs ? fs : (top >= 0 ? &p->layers[top] : NULL);
	const struct lcloud_fact *attr, *umax;
	uint64_t unit_min, unit_max, opt;

	if (p->target_type == LCLOUD_TARGET_NVME_CHAR)
		return reason(v, "target:nvme-generic", "RWF_ATOMIC needs a file or the block device: the NVMe generic "
			      "node takes passthrough commands only; use /dev/%s or the passthrough path",
			      top >= 0 ? p->layers[top].name : "nvmeXnY");
	umax = fact(src, "stx_atomic_write_unit_max");
	attr = fact(src, "stx_attr_write_atomic");
	if (!fs && top >= 0 && !umax)
		return rwf_atomic_from_queue(p, top, v);
	if (!umax && src && layer_fact(src, "stx_atomic_write_unit_max"))
		return reason(v, "statx", "the kernel reports no atomic write limits here (statx "
			      "STATX_WRITE_ATOMIC unset: no support for this %s, or a kernel before 6.11)",
			      fs ? "file" : "device");
	if (!umax)
		return reason(v, "statx", "no statx reading of atomic write limits for this target");
	unit_min = num(src, "stx_atomic_write_unit_min", 0);
	unit_max = umax->u64;
	if (!unit_max || (attr && !attr->u64) || (fs && !attr))
		return reason(v, "statx", "statx: atomic writes are not supported for this %s (unit max %" PRIu64
			      "%s)", fs ? "file on this file system" : "device", unit_max,
			      fs && fs->name[0] ? "" : "");
	v->max_untorn = pow2_floor(unit_max);
	v->min_untorn = unit_min;
	v->alignment = 0;
	reason(v, "statx", "statx: RWF_ATOMIC writes of %" PRIu64 " to %" PRIu64 " bytes (powers of two, naturally "
	       "aligned, one segment) are untorn or fail: the kernel guarantees it", unit_min, unit_max);
	opt = num(src, "stx_atomic_write_unit_max_opt", 0);
	if (opt && opt < unit_max)
		reason(v, "statx:stx_atomic_write_unit_max_opt", "writes above %" PRIu64 " bytes take the file "
		       "system's slower software path (copy on write)", opt);
	if (fs && top >= 0 && !num(&p->layers[top], "atomic_write_unit_max_bytes", 0))
		return reason(v, "sysfs:queue/atomic_write_unit_max_bytes", "%s has no hardware atomic writes "
			      "(atomic_write_unit_max_bytes 0): %s provides them in software", p->layers[top].name,
			      fs->name);
	return 0;
}

/* ---- device promises (passthrough and plain_direct) ---------------------- */

struct promise {
	uint64_t bytes;          /* largest untorn write the device/provider promises */
	uint64_t lba;
	bool natural;            /* the start must be aligned to the write's size */
	uint64_t boundary, boundary_offset;
	const char *evidence;
	char what[160];
};

/* What the device (NVMe identify) or the provider (cloud layer) promises for disk layer DISK. */
static void device_promise(const struct lcloud_probe *p, int disk, bool include_cloud, struct promise *pr)
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
	}
	if (include_cloud && cloud && num(cloud, "promise_untorn_max_bytes", 0) > pr->bytes) {
		const struct lcloud_fact *cf = fact(cloud, "promise_untorn_max_bytes");

		pr->bytes = cf->u64;
		pr->lba = num(cloud, "promise_untorn_granularity_bytes", pr->lba ? pr->lba : 512);
		pr->natural = true;
		pr->boundary = num(cloud, "promise_boundary_bytes", 0);
		pr->boundary_offset = 0;
		pr->evidence = cf->source;
		snprintf(pr->what, sizeof(pr->what), "%s (%s) promises untorn writes up to %" PRIu64 " bytes, "
			 "aligned to their size", cloud->name, fact(cloud, "product") ? fact(cloud, "product")->string : "",
			 pr->bytes);
	}
}

/* The devices at the bottom of the stack under layer INDEX: disks, loop devices, anything without slaves. */
static int leaf_disks(const struct lcloud_probe *p, int index, int *out, int max)
{
	bool has_children = false;
	int n = 0;

	for (unsigned int i = 0; i < p->n_layers && n < max; i++)
		if (p->layers[i].parent == index && is_stack_layer(p->layers[i].kind)) {
			has_children = true;
			n += leaf_disks(p, (int)i, out + n, max - n);
		}
	if (!has_children && p->layers[index].kind != LCLOUD_LAYER_PARTITION && n < max)
		out[n++] = index;
	return n;
}

/* ---- passthrough ---------------------------------------------------------- */

static int verdict_passthrough(const struct lcloud_probe *p, struct lcloud_verdict *v)
{
	int top = top_block(p), disk = -1;
	uint64_t start = 0;
	struct promise pr;

	if (top < 0 || first_of(p, LCLOUD_LAYER_FILESYSTEM))
		return reason(v, "target:file", "passthrough writes address the namespace's blocks; a file's blocks "
			      "are placed by its file system: use rwf_atomic or plain_direct for files");
	for (int i = top; i >= 0 && i < (int)p->n_layers;) {
		const struct lcloud_layer *l = &p->layers[i];

		if (l->kind == LCLOUD_LAYER_PARTITION) {
			start += num(l, "start_bytes", 0);
			i = index_of(p, child_of_kind(p, i, LCLOUD_LAYER_DISK));
			continue;
		}
		if (l->kind == LCLOUD_LAYER_DISK)
			disk = i;
		break;
	}
	if (disk < 0 || !child_of_kind(p, disk, LCLOUD_LAYER_NVME))
		return reason(v, "stack", "passthrough needs an NVMe namespace directly below the target "
			      "(no dm, md or loop in between)");
	device_promise(p, disk, true, &pr);
	if (!pr.bytes)
		return reason(v, "nvme", "the namespace's Identify data could not be read (see the notes): "
			      "without its power-fail atomic size no passthrough write is known to be untorn");
	/* a write larger than the boundary always crosses one */
	v->max_untorn = pow2_floor(pr.boundary ? min_u64(pr.bytes, pr.boundary) : pr.bytes);
	v->alignment = pr.natural ? 0 : pr.lba;
	v->boundary = pr.boundary;
	/* The boundary falls at device offset NABO + k*B; in the partition that is shifted by its start. */
	v->boundary_offset = pr.boundary ? (pr.boundary_offset + pr.boundary - start % pr.boundary) % pr.boundary : 0;
	reason(v, pr.evidence, "%s; liblcloud refuses larger passthrough writes, which the device would "
	       "accept silently non-atomic", pr.what);
	if (pr.boundary)
		reason(v, "nvme:id-ns:nabspf", "writes must not cross a %" PRIu64 "-byte boundary at offset %" PRIu64
		       " + k * %" PRIu64 " of the target", pr.boundary, v->boundary_offset, pr.boundary);
	return 0;
}

/* ---- plain_direct -------------------------------------------------------- */

/*
 * Where byte 0 of layer TOP lands on disk layer LEAF: walk up from the disk,
 * adding partition starts and dm linear offsets. Returns 1 when known, 0 when
 * a dm table is missing (with a reason), -ENOMEM.
 */
static int target_start_on_disk(const struct lcloud_probe *p, int top, int leaf, uint64_t *ret,
				struct lcloud_verdict *v)
{
	uint64_t start = 0;

	for (int i = leaf; i != top && p->layers[i].parent >= 0; i = p->layers[i].parent) {
		const struct lcloud_layer *up = &p->layers[p->layers[i].parent];
		const struct lcloud_fact *dev = layer_fact(&p->layers[i], "dev");
		bool found = false;

		if (up->kind == LCLOUD_LAYER_PARTITION) {
			start += num(up, "start_bytes", 0);
			continue;
		}
		if (up->kind != LCLOUD_LAYER_DM)
			continue;
		for (unsigned int f = 0; f < up->n_facts && dev && dev->string; f++) {
			unsigned long long ts, tl, off;
			unsigned int ma, mi;
			char type[16], want[32];

			if (!has_prefix(up->facts[f].name, "dm_target_") || !up->facts[f].string ||
			    sscanf(up->facts[f].string, "%llu %llu %15s %u:%u %llu", &ts, &tl, type, &ma, &mi, &off) != 6 ||
			    !streq(type, "linear"))
				continue;
			snprintf(want, sizeof(want), "%u:%u", ma, mi);
			if (streq(dev->string, want)) {
				/* a dm sector s in this target is sector s - ts + off below */
				start += off * 512 - ts * 512;
				found = true;
				break;
			}
		}
		if (!found) {
			int r = reason(v, "dm:table", "%s: its device-mapper table could not be read (needs root) or is "
				       "not linear, so where writes land on %s is unknown", up->name, p->layers[leaf].name);

			return r < 0 ? r : 0;
		}
	}
	*ret = start;
	return 1;
}

static int verdict_plain_direct(const struct lcloud_probe *p, struct lcloud_verdict *v)
{
	const struct lcloud_layer *fs = first_of(p, LCLOUD_LAYER_FILESYSTEM);
	int top = top_block(p), leaves[16], n_leaves;
	uint64_t limit = UINT64_MAX, boundary = 0, boundary_offset = 0;
	bool natural = false;
	int r;

	if (top < 0)
		return reason(v, "stack", "no block device below the target: nothing promises untorn writes");
	n_leaves = leaf_disks(p, top, leaves, (int)ARRAY_SIZE(leaves));
	if (n_leaves == 0)
		return reason(v, "stack", "the device stack below the target could not be followed to a disk");

	/* Every disk a write may reach must promise it; the smallest promise counts. */
	for (int k = 0; k < n_leaves; k++) {
		struct promise pr;
		uint64_t start = 0, ok;

		device_promise(p, leaves[k], true, &pr);
		if (!pr.bytes) {
			const struct lcloud_layer *d = &p->layers[leaves[k]];

			limit = 0;
			r = reason(v, "device", "%s promises no untorn writes: it states no power-fail atomic size "
				   "and is no cloud disk with a documented promise%s", d->name,
				   d->kind == LCLOUD_LAYER_LOOP ? " (a loop device passes writes on to a file)" : "");
			if (r < 0)
				return r;
			continue;
		}
		r = reason(v, pr.evidence, "%s", pr.what);
		if (r < 0)
			return r;
		r = target_start_on_disk(p, top, leaves[k], &start, v);
		if (r < 0)
			return r;
		if (r == 0) {
			limit = 0;
			continue;
		}
		ok = pr.bytes;
		if (pr.natural || pr.boundary) {
			/* A write aligned in the target stays aligned on the disk only up to the start's alignment. */
			uint64_t shift = pr.boundary ? (start + pr.boundary - pr.boundary_offset % pr.boundary) % pr.boundary
						     : start;
			uint64_t fits = pow2_dividing(shift);

			if (fits < ok) {
				ok = fits < pr.lba ? 0 : fits;
				if (pr.boundary)
					r = reason(v, "stack", "the target starts at byte %" PRIu64 " of %s, whose %" PRIu64 "-byte "
						   "atomic boundaries fall at %" PRIu64 " + k * %" PRIu64 ": writes of more than %" PRIu64
						   " bytes aligned in the target can cross one", start, p->layers[leaves[k]].name,
						   pr.boundary, pr.boundary_offset, pr.boundary, fits);
				else
					r = reason(v, "stack", "the target starts at byte %" PRIu64 " of %s, a multiple of only "
						   "%" PRIu64 ": writes of more than %" PRIu64 " bytes aligned in the target are not "
						   "aligned on the device, as the promise needs", start, p->layers[leaves[k]].name,
						   fits, fits);
				if (r < 0)
					return r;
			}
			if (pr.boundary)
				ok = min_u64(ok, pr.boundary);
		} else if (start % (pr.lba ? pr.lba : 512)) {
			ok = 0;
			r = reason(v, "stack", "the target starts at byte %" PRIu64 " of %s, off its %" PRIu64
				   "-byte blocks", start, p->layers[leaves[k]].name, pr.lba);
			if (r < 0)
				return r;
		}
		limit = min_u64(limit, ok);
		natural = natural || pr.natural;
		if (pr.boundary) {
			boundary = pr.boundary;
			boundary_offset = (pr.boundary_offset + pr.boundary - start % pr.boundary) % pr.boundary;
		}
	}

	/* The block layer splits writes larger than max_sectors_kb, or crossing chunk_sectors. */
	for (unsigned int i = 0; i < p->n_layers && limit; i++) {
		const struct lcloud_layer *l = &p->layers[i];
		uint64_t max_kb = num(l, "max_sectors_kb", 0), chunk = num(l, "chunk_sectors", 0) * 512;
		uint64_t md_chunk = num(l, "md_chunk_size", 0);

		if (!is_stack_layer(l->kind))
			continue;
		if (max_kb && max_kb * 1024 < limit) {
			limit = pow2_floor(max_kb * 1024);
			r = reason(v, "sysfs:queue/max_sectors_kb", "%s splits writes above %" PRIu64 " KiB", l->name, max_kb);
			if (r < 0)
				return r;
		}
		if (chunk && chunk < limit) {
			limit = pow2_floor(chunk);
			natural = true;
			r = reason(v, "sysfs:queue/chunk_sectors", "%s splits writes at %" PRIu64 "-byte chunk boundaries",
				   l->name, chunk);
			if (r < 0)
				return r;
		}
		if (md_chunk && l->kind == LCLOUD_LAYER_MD && md_chunk < limit) {
			limit = pow2_floor(md_chunk);
			natural = true;
			r = reason(v, "sysfs:md/chunk_size", "%s (md) splits writes at its %" PRIu64 "-byte chunks",
				   l->name, md_chunk);
			if (r < 0)
				return r;
		}
	}

	/* The file system must keep a page in one extent: one block, or one bigalloc cluster. */
	if (fs && limit) {
		uint64_t unit = num(fs, "cluster_size", num(fs, "block_size", 0));
		const char *what = fact(fs, "cluster_size") ? "cluster size" : "block size";

		if (unit && unit < limit) {
			limit = pow2_floor(unit);
			r = reason(v, fact(fs, "cluster_size") ? "ext4:superblock:s_log_cluster_size" : "statfs:f_bsize",
				   "%s allocates in %" PRIu64 "-byte units (%s): a larger write can span two extents and "
				   "reach the device as two writes; %s", fs->name, unit, what,
				   streq(fs->name, "ext4") ? "ext4 with bigalloc (mkfs.ext4 -O bigalloc -C SIZE) allocates "
							       "larger clusters"
							     : "a file system with larger blocks keeps larger pages whole");
			if (r < 0)
				return r;
		}
		natural = true;
	}
	v->max_untorn = limit == UINT64_MAX ? 0 : pow2_floor(limit);
	v->alignment = natural ? 0 : 512;
	v->boundary = boundary;
	v->boundary_offset = boundary_offset;
	if (v->max_untorn)
		return reason(v, "kernel", "the kernel makes no promise for plain O_DIRECT writes: this rests on the "
			      "device or provider promise and on nothing in the stack splitting, merging or moving "
			      "the write");
	return 0;
}

static int verdict_buffered(struct lcloud_verdict *v)
{
	return reason(v, "kernel", "buffered writes go through the page cache: writeback may split a page into "
		      "several device writes, and Linux offers RWF_ATOMIC only with O_DIRECT, so no buffered "
		      "write is guaranteed untorn");
}

void verdict_free(struct lcloud_verdict *v)
{
	if (!v)
		return;
	for (int i = 0; i < VERDICT_PATHS; i++) {
		for (unsigned int k = 0; k < v[i].n_reasons; k++) {
			free(v[i].reasons[k].text);
			free(v[i].reasons[k].evidence);
		}
		free(v[i].reasons);
	}
	free(v);
}

/*
 * The kernel checks RWF_ATOMIC writes against boundaries that start at 0; an
 * NVMe namespace may start them at NABO. Naturally aligned writes are safe
 * only up to the largest power of two dividing that offset.
 */
static int cap_for_shifted_boundary(const struct lcloud_probe *p, struct lcloud_verdict *v)
{
	for (unsigned int i = 0; i < p->n_layers && v->max_untorn; i++) {
		const struct lcloud_layer *l = &p->layers[i];
		uint64_t off = num(l, "atomic_boundary_offset_bytes", 0), b = num(l, "atomic_boundary_power_fail_bytes", 0);

		if (l->kind != LCLOUD_LAYER_NVME || !off || !b || pow2_dividing(off) >= v->max_untorn)
			continue;
		v->max_untorn = pow2_dividing(off);
		return reason(v, "nvme:id-ns:nabo", "%s starts its %" PRIu64 "-byte atomic boundaries at byte %" PRIu64
			      " (NABO), while the kernel checks boundaries from 0: only writes up to %" PRIu64 " bytes "
			      "stay inside one", l->name, b, off, v->max_untorn);
	}
	return 0;
}

int verdict_compute(struct lcloud_probe *p)
{
	struct lcloud_verdict *v = calloc(VERDICT_PATHS, sizeof(*v));
	int r;

	if (!v)
		return -ENOMEM;
	for (int i = 0; i < VERDICT_PATHS; i++)
		v[i].path = (enum lcloud_io_path)(i + 1);
	r = verdict_rwf_atomic(p, &v[0]);
	if (r >= 0)
		r = cap_for_shifted_boundary(p, &v[0]);
	if (r >= 0)
		r = verdict_passthrough(p, &v[1]);
	if (r >= 0)
		r = verdict_plain_direct(p, &v[2]);
	if (r >= 0)
		r = verdict_buffered(&v[3]);
	if (r < 0) {
		verdict_free(v);
		return r;
	}
	verdict_free(p->verdicts);
	p->verdicts = v;
	return 0;
}
