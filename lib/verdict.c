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
	if (fs && top >= 0) {
		/* a partition has no queue of its own: the disk below it has the hardware limits */
		int dev = top;

		while (dev >= 0 && p->layers[dev].kind == LCLOUD_LAYER_PARTITION)
			dev = index_of(p, child_of_kind(p, dev, LCLOUD_LAYER_DISK));
		if (dev >= 0 && fact(&p->layers[dev], "atomic_write_unit_max_bytes") &&
		    !num(&p->layers[dev], "atomic_write_unit_max_bytes", 0))
			return reason(v, "sysfs:queue/atomic_write_unit_max_bytes", "%s has no hardware atomic writes "
				      "(atomic_write_unit_max_bytes 0): %s provides them in software",
				      p->layers[dev].name, fs->name);
	}
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

/*
 * The devices at the bottom of the stack under layer INDEX: disks, loop
 * devices, anything without slaves. Returns how many there are, which may
 * be more than MAX (only MAX are stored).
 */
static int leaf_disks(const struct lcloud_probe *p, int index, int *out, int max)
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
	if (num(child_of_kind(p, disk, LCLOUD_LAYER_NVME), "lba_metadata_size", 0))
		return reason(v, "nvme:id-ns:lbaf", "the namespace's LBA format carries metadata, which liblcloud's "
			      "passthrough commands do not transfer");
	/* a write larger than the boundary always crosses one */
	v->max_untorn = pow2_floor(pr.boundary ? min_u64(pr.bytes, pr.boundary) : pr.bytes);
	v->alignment = pr.natural ? 0 : pr.lba;
	v->boundary = pr.boundary;
	/* The boundary falls at device offset NABO + k*B; in the partition that is shifted by its start. */
	v->boundary_offset = pr.boundary ? (pr.boundary_offset + pr.boundary - start % pr.boundary) % pr.boundary : 0;
	reason(v, pr.evidence, "%s; liblcloud refuses larger passthrough writes, which the device would "
	       "accept silently non-atomic", pr.what);
	if (pr.natural && start && pow2_dividing(start) < v->max_untorn) {
		/* the promise wants alignment on the device; aligned in the partition is not that */
		uint64_t fits = pow2_dividing(start);
		struct promise own;

		v->max_untorn = fits < pr.lba ? 0 : fits;
		reason(v, "stack", "the partition starts at byte %" PRIu64 ", a multiple of only %" PRIu64 ": writes "
		       "aligned in it are aligned on the device only up to that size", start, fits);
		/* the device's own promise needs no such alignment: keep it if it gives more */
		device_promise(p, disk, false, &own);
		if (own.bytes && pow2_floor(own.boundary ? min_u64(own.bytes, own.boundary) : own.bytes) > v->max_untorn) {
			v->max_untorn = pow2_floor(own.boundary ? min_u64(own.bytes, own.boundary) : own.bytes);
			v->alignment = own.lba;
			v->boundary = own.boundary;
			v->boundary_offset = own.boundary ? (own.boundary_offset + own.boundary - start % own.boundary) %
								    own.boundary
							  : 0;
			pr = own;
			reason(v, own.evidence, "%s, which holds here", own.what);
		}
	}
	if (pr.boundary)
		reason(v, "nvme:id-ns:nabspf", "writes must not cross a %" PRIu64 "-byte boundary at offset %" PRIu64
		       " + k * %" PRIu64 " of the target", pr.boundary, v->boundary_offset, pr.boundary);
	return 0;
}

/* ---- plain_direct -------------------------------------------------------- */

#define STARTS_MAX 16
/* Past 1 EiB no block device holds data: a placement beyond it is bad data, and unknown. */
#define PLACEMENT_MAX ((int64_t)1 << 60)

/* *X += Y, false (and *X unchanged) when the result leaves +-PLACEMENT_MAX. */
static bool add_placement(int64_t *x, int64_t y)
{
	int64_t sum;

	if (__builtin_add_overflow(*x, y, &sum) || sum > PLACEMENT_MAX || sum < -PLACEMENT_MAX)
		return false;
	*x = sum;
	return true;
}

/*
 * Where byte 0 of layer TOP may land on disk layer LEAF: walk up from the
 * disk adding partition starts, md member data offsets and dm linear
 * offsets. A dm device with several linear segments on one disk gives
 * several candidates. Returns how many (>= 1), 0 when unknown (with a
 * reason), or -ENOMEM. Starts are signed: a dm segment may shift backwards.
 */
static int target_starts_on_disk(const struct lcloud_probe *p, int top, int leaf, int64_t *starts,
				 struct lcloud_verdict *v)
{
	int n = 1, r;

	starts[0] = 0;
	for (int i = leaf; i != top && p->layers[i].parent >= 0; i = p->layers[i].parent) {
		const struct lcloud_layer *up = &p->layers[p->layers[i].parent];
		const struct lcloud_fact *dev = layer_fact(&p->layers[i], "dev");
		int64_t shifts[STARTS_MAX];
		int n_shifts = 0;

		if (up->kind == LCLOUD_LAYER_PARTITION) {
			uint64_t start = num(up, "start_bytes", 0);

			for (int k = 0; k < n; k++)
				if (start > (uint64_t)PLACEMENT_MAX || !add_placement(&starts[k], (int64_t)start))
					goto out_of_range;
			continue;
		}
		if (up->kind == LCLOUD_LAYER_MD) {
			char name[96];
			const struct lcloud_fact *off;

			snprintf(name, sizeof(name), "md_data_offset_%s", p->layers[i].name);
			off = fact(up, name);
			if (!off) {
				r = reason(v, "sysfs:md/dev-*/offset", "%s: where member %s's data starts is unknown, so where "
					   "writes land on it is too", up->name, p->layers[i].name);
				return r < 0 ? r : 0;
			}
			for (int k = 0; k < n; k++)
				if (off->u64 > (uint64_t)PLACEMENT_MAX || !add_placement(&starts[k], (int64_t)off->u64))
					goto out_of_range;
			continue;
		}
		if (up->kind != LCLOUD_LAYER_DM)
			continue;
		for (unsigned int f = 0; f < up->n_facts && dev && dev->string; f++) {
			unsigned long long ts, tl, off;
			unsigned int ma, mi;
			char type[16], want[32];

			if (!has_prefix(up->facts[f].name, "dm_target_") || !up->facts[f].string)
				continue;
			if (sscanf(up->facts[f].string, "%llu %llu %15s %u:%u %llu", &ts, &tl, type, &ma, &mi, &off) != 6 ||
			    !streq(type, "linear")) {
				n_shifts = -1; /* a target type whose placement is not a plain shift */
				break;
			}
			snprintf(want, sizeof(want), "%u:%u", ma, mi);
			if (!streq(dev->string, want))
				continue;
			if (n_shifts == STARTS_MAX) {
				n_shifts = -1;
				break;
			}
			if (off > (uint64_t)PLACEMENT_MAX / 512 || ts > (uint64_t)PLACEMENT_MAX / 512)
				goto out_of_range;
			/* a dm sector s in this segment is sector s - ts + off below */
			shifts[n_shifts++] = (int64_t)off * 512 - (int64_t)ts * 512;
		}
		if (n_shifts <= 0 || n * n_shifts > STARTS_MAX) {
			r = reason(v, "dm:table", "%s: its device-mapper table could not be read (needs root), is not "
				   "linear or is too fragmented, so where writes land on %s is unknown", up->name,
				   p->layers[leaf].name);
			return r < 0 ? r : 0;
		}
		{
			int64_t prev[STARTS_MAX];
			int m = 0;

			memcpy(prev, starts, (size_t)n * sizeof(*starts));
			for (int k = 0; k < n; k++)
				for (int s = 0; s < n_shifts; s++) {
					starts[m] = prev[k];
					if (!add_placement(&starts[m++], shifts[s]))
						goto out_of_range;
				}
			n = m;
		}
	}
	return n;

out_of_range:
	r = reason(v, "stack", "%s: the offsets of the layers above it add up to more than 1 EiB, which no "
		   "device holds, so where writes land on it is unknown", p->layers[leaf].name);
	return r < 0 ? r : 0;
}

/* Largest power of two dividing X - OFFSET modulo B (B 0: X itself); UINT64_MAX for 0. */
static uint64_t fits_from(int64_t x, uint64_t offset, uint64_t b)
{
	int64_t d = x - (int64_t)offset;

	if (b)
		d = ((d % (int64_t)b) + (int64_t)b) % (int64_t)b;
	return pow2_dividing((uint64_t)d);
}

/* Parity RAID updates data and parity in separate writes: a crash can leave a stripe torn. */
static bool parity_raid(const struct lcloud_layer *l)
{
	const struct lcloud_fact *level = fact(l, "md_level");

	return level && level->string &&
	       (streq(level->string, "raid4") || streq(level->string, "raid5") || streq(level->string, "raid6"));
}

/*
 * The largest write promise PR keeps whole on disk LEAF, given where the
 * target may start on it (STARTS): the start must keep writes aligned in the
 * target aligned as the promise needs, and inside its boundaries.
 */
static int leaf_limit(const struct lcloud_probe *p, int leaf, const struct promise *pr, const int64_t *starts,
		      int n_starts, struct lcloud_verdict *v, uint64_t *ret)
{
	const struct lcloud_layer *d = &p->layers[leaf];
	uint64_t ok = pr->boundary ? min_u64(pr->bytes, pr->boundary) : pr->bytes;
	int r;

	for (int s = 0; s < n_starts; s++) {
		uint64_t fits;

		if (!pr->natural && !pr->boundary) {
			if ((uint64_t)starts[s] % (pr->lba ? pr->lba : 512)) {
				ok = 0;
				r = reason(v, "stack", "the target starts at byte %" PRId64 " of %s, off its %" PRIu64
					   "-byte blocks", starts[s], d->name, pr->lba);
				if (r < 0)
					return r;
			}
			continue;
		}
		/* A write aligned in the target stays aligned on the disk only up to the start's alignment. */
		fits = fits_from(starts[s], pr->boundary_offset, pr->boundary);
		if (fits >= ok)
			continue;
		ok = fits < pr->lba ? 0 : fits;
		if (pr->boundary)
			r = reason(v, "stack", "the target starts at byte %" PRId64 " of %s, whose %" PRIu64 "-byte "
				   "atomic boundaries fall at %" PRIu64 " + k * %" PRIu64 ": writes of more than %" PRIu64
				   " bytes aligned in the target can cross one", starts[s], d->name, pr->boundary,
				   pr->boundary_offset, pr->boundary, fits);
		else
			r = reason(v, "stack", "the target starts at byte %" PRId64 " of %s, a multiple of only "
				   "%" PRIu64 ": writes of more than %" PRIu64 " bytes aligned in the target are not "
				   "aligned on the device, as the promise needs", starts[s], d->name, fits, fits);
		if (r < 0)
			return r;
	}
	*ret = ok;
	return 0;
}

static int verdict_plain_direct(const struct lcloud_probe *p, struct lcloud_verdict *v)
{
	const struct lcloud_layer *fs = first_of(p, LCLOUD_LAYER_FILESYSTEM);
	int top = top_block(p), leaves[16], n_leaves;
	uint64_t limit = UINT64_MAX, boundary = 0, boundary_offset = 0, align = 512, top_start = 0;
	bool natural = false;
	int r;

	if (p->target_type == LCLOUD_TARGET_NVME_CHAR)
		return reason(v, "target:nvme-generic", "O_DIRECT needs a file or the block device: the NVMe generic "
			      "node takes passthrough commands only");
	if (top < 0)
		return reason(v, "stack", "no block device below the target: nothing promises untorn writes");
	n_leaves = leaf_disks(p, top, leaves, (int)ARRAY_SIZE(leaves));
	if (n_leaves == 0)
		return reason(v, "stack", "the device stack below the target could not be followed to a disk");
	if (n_leaves > (int)ARRAY_SIZE(leaves))
		return reason(v, "stack", "the stack ends in %d devices, more than liblcloud follows (%zu): no "
			      "promise is claimed for it", n_leaves, ARRAY_SIZE(leaves));
	for (unsigned int i = 0; i < p->n_layers; i++)
		if (p->layers[i].kind == LCLOUD_LAYER_MD && parity_raid(&p->layers[i]))
			return reason(v, "sysfs:md/level", "%s is %s: a partial-stripe write updates data and parity "
				      "separately, so a crash can leave it torn whatever the disks promise",
				      p->layers[i].name, fact(&p->layers[i], "md_level")->string);
	/* where the target starts on the device directly below its partitions (for chunk edges) */
	for (int i = top; i >= 0 && p->layers[i].kind == LCLOUD_LAYER_PARTITION;
	     i = index_of(p, child_of_kind(p, i, LCLOUD_LAYER_DISK)))
		top_start += num(&p->layers[i], "start_bytes", 0);

	/* Every disk a write may reach must promise it; the smallest promise counts. */
	for (int k = 0; k < n_leaves; k++) {
		const struct lcloud_layer *d = &p->layers[leaves[k]];
		int64_t starts[STARTS_MAX];
		struct promise pr;
		uint64_t ok;
		int n_starts;

		device_promise(p, leaves[k], true, &pr);
		if (!pr.bytes) {
			bool unread = child_of_kind(p, leaves[k], LCLOUD_LAYER_NVME) != NULL;

			limit = 0;
			r = unread ? reason(v, "nvme", "%s: the namespace's Identify data could not be read (see the "
					    "notes), so its power-fail atomic size is unknown", d->name)
				   : reason(v, "device", "%s promises no untorn writes: it states no power-fail atomic "
					    "size and is no cloud disk with a documented promise%s", d->name,
					    d->kind == LCLOUD_LAYER_LOOP ? " (a loop device passes writes on to a file)" : "");
			if (r < 0)
				return r;
			continue;
		}
		r = reason(v, pr.evidence, "%s", pr.what);
		if (r < 0)
			return r;
		n_starts = target_starts_on_disk(p, top, leaves[k], starts, v);
		if (n_starts < 0)
			return n_starts;
		if (n_starts == 0) {
			limit = 0;
			continue;
		}
		r = leaf_limit(p, leaves[k], &pr, starts, n_starts, v, &ok);
		if (r < 0)
			return r;
		if (pr.natural) {
			/* the provider's promise wants alignment; the device's own may hold where it does not */
			struct promise own;
			uint64_t ok_own = 0;

			device_promise(p, leaves[k], false, &own);
			if (own.bytes && (r = leaf_limit(p, leaves[k], &own, starts, n_starts, v, &ok_own)) < 0)
				return r;
			if (ok_own > ok) {
				ok = ok_own;
				pr = own;
			}
		}
		align = pr.lba > align ? pr.lba : align;
		limit = min_u64(limit, ok);
		natural = natural || pr.natural;
		if (pr.boundary) {
			/* one disk, one start: the boundary can be given in the target's terms */
			if (n_leaves == 1 && n_starts == 1) {
				boundary = pr.boundary;
				boundary_offset = (uint64_t)((((int64_t)pr.boundary_offset - starts[0]) % (int64_t)pr.boundary +
							     (int64_t)pr.boundary) % (int64_t)pr.boundary);
			} else {
				natural = true; /* the caps above keep aligned writes inside every boundary */
			}
		}
	}

	/*
	 * The block layer splits writes larger than max_sectors_kb, and writes that
	 * cross a chunk (chunk_sectors, md chunks) or a dm segment's edge: only
	 * naturally aligned writes no larger than the chunk, and whose chunk edges
	 * fall on multiples of their size in the target, stay whole.
	 */
	for (unsigned int i = 0; i < p->n_layers && limit; i++) {
		const struct lcloud_layer *l = &p->layers[i];
		uint64_t max_kb = num(l, "max_sectors_kb", 0), chunk = num(l, "chunk_sectors", 0) * 512;
		uint64_t md_chunk = l->kind == LCLOUD_LAYER_MD ? num(l, "md_chunk_size", 0) : 0;

		if (!is_stack_layer(l->kind))
			continue;
		if (max_kb && max_kb * 1024 < limit) {
			limit = pow2_floor(max_kb * 1024);
			r = reason(v, "sysfs:queue/max_sectors_kb", "%s splits writes above %" PRIu64 " KiB", l->name, max_kb);
			if (r < 0)
				return r;
		}
		if (md_chunk > chunk)
			chunk = md_chunk;
		if (chunk) {
			uint64_t cap = min_u64(pow2_dividing(chunk), fits_from((int64_t)top_start, 0, 0));

			natural = true;
			if (cap < limit) {
				limit = cap;
				r = reason(v, md_chunk ? "sysfs:md/chunk_size" : "sysfs:queue/chunk_sectors",
					   "%s splits writes at its %" PRIu64 "-byte chunk edges", l->name, chunk);
				if (r < 0)
					return r;
			}
		}
		if (l->kind == LCLOUD_LAYER_DM) {
			/* each segment's start in the dm device is an edge too */
			for (unsigned int f = 0; f < l->n_facts; f++) {
				unsigned long long ts;
				uint64_t cap;

				if (!has_prefix(l->facts[f].name, "dm_target_") || !l->facts[f].string ||
				    sscanf(l->facts[f].string, "%llu", &ts) != 1 || !ts)
					continue;
				natural = true;
				/* modulo 2^64 keeps every power of two that divides the difference */
				cap = pow2_dividing((uint64_t)ts * 512 - top_start);
				if (cap < limit) {
					limit = cap;
					r = reason(v, "dm:table", "%s: a segment starts at byte %llu, and writes across it "
						   "are split", l->name, ts * 512);
					if (r < 0)
						return r;
				}
			}
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
	v->alignment = natural ? 0 : align;
	v->boundary = natural ? 0 : boundary;
	v->boundary_offset = natural ? 0 : boundary_offset;
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
