/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plain_direct's placement rule: every disk a write may reach must promise
 * to keep it whole, and the target must land on each disk where the promise
 * holds: partition starts, md member data offsets and dm linear offsets move
 * the write, the promise's alignment and boundary must still be met; then
 * the merge rule (verdict_pd_merges.c) on each disk.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "report.h"
#include "util.h"
#include "verdict_internal.h"
#include "verdict_plain_direct.h"

/* Did the probe read the dm device's table? */
static bool has_dm_table(const struct lcloud_layer *l)
{
	return l->n_dm_segments > 0;
}

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

/* Why a dm target of DM's table is not followed, for the reason: a sentence's end. */
static const char *unfollowed_why(const struct layer_dm_segment *seg)
{
	if (seg->crypt && seg->crypt_integrity)
		return "dm-crypt with authenticated encryption (integrity:) writes tags beside the data through "
		       "dm-integrity, which liblcloud does not follow";
	if (streq(seg->type, "striped") || streq(seg->type, "crypt"))
		return "liblcloud could not read its table line whole (more than 16 stripes, an option it does not "
		       "know, or a line too long to keep)";
	/* thin, mirror, snapshot, cache...: data moves, is remapped or is written more than once */
	return "liblcloud follows only linear, striped and crypt targets";
}

/*
 * How a dm sector maps onto the device DEVNO below dm layer DM, for every
 * segment on it: a dm sector s in a segment starting at ts lands at
 * s - ts + offset, for a linear or crypt target, and for a striped one at the
 * member's offset plus whole chunks (the chunk edges are the split rule's).
 * Striped and crypt targets are followed as Linux 7.3's code runs them
 * (dm-stripe.c maps a write inside a chunk to one member; dm-crypt.c
 * submits it as one encrypted clone): the kernel must be that or later.
 * *CRYPT_SECTOR is raised to the largest crypt sector on the way. Returns
 * 1 with the shifts, 0 when decided (no or unknown, with a reason), -ENOMEM.
 */
static int dm_shifts(const struct lcloud_layer *dm, const dev_t *devno, const struct lcloud_layer *leaf,
		     int64_t *shifts, int *ret_n, uint64_t *crypt_sector, struct lcloud_verdict *v)
{
	bool needs_kernel = false;
	int n = 0, r;

	for (unsigned int s = 0; s < dm->n_dm_segments && devno; s++) {
		const struct layer_dm_segment *seg = &dm->dm_segments[s];
		uint64_t ts = seg->start, offsets[DM_STRIPES_MAX];
		int n_offsets = 0;

		if (seg->linear || (seg->crypt && !seg->crypt_integrity)) {
			if (makedev(seg->major, seg->minor) == *devno)
				offsets[n_offsets++] = seg->offset;
		} else if (seg->stripes) {
			for (unsigned int k = 0; k < seg->stripes; k++)
				if (makedev(seg->stripe[k].major, seg->stripe[k].minor) == *devno)
					offsets[n_offsets++] = seg->stripe[k].offset;
		} else {
			r = reason(v, "dm:table", "%s maps its data through a %s target, and %s: where writes land on %s, "
				   "and whether they reach it whole, is not known, so no promise is claimed", dm->name,
				   seg->type, unfollowed_why(seg), leaf->name);
			return r < 0 ? r : 0;
		}
		if (n_offsets && !seg->linear)
			needs_kernel = true;
		if (n_offsets && seg->crypt && seg->crypt_sector > *crypt_sector)
			*crypt_sector = seg->crypt_sector;
		for (int k = 0; k < n_offsets; k++) {
			if (n == STARTS_MAX) {
				r = reason(v, "dm:table", "%s: its device-mapper table is too fragmented, so liblcloud does "
					   "not follow where writes land on %s", dm->name, leaf->name);
				return r < 0 ? r : 0;
			}
			if (offsets[k] > (uint64_t)PLACEMENT_MAX / 512 || ts > (uint64_t)PLACEMENT_MAX / 512) {
				r = unknown(v, "stack", "%s: the offsets of the layers above it add up to more than 1 EiB, "
					    "which no device holds, so where writes land on it is unknown", leaf->name);
				return r < 0 ? r : 0;
			}
			shifts[n++] = (int64_t)offsets[k] * 512 - (int64_t)ts * 512;
		}
	}
	if (n == 0 && !has_dm_table(dm)) {
		r = unknown(v, "dm:table", "%s: its device-mapper table could not be read (it needs root), so where "
			    "writes land on %s is unknown; run as root", dm->name, leaf->name);
		return r < 0 ? r : 0;
	}
	if (n == 0) {
		r = reason(v, "dm:table", "%s: no segment of its device-mapper table is on %s, so liblcloud does not "
			   "follow where writes land there", dm->name, leaf->name);
		return r < 0 ? r : 0;
	}
	if (needs_kernel) {
		const char *release;
		int k = followed_kernel(dm, &release);

		if (k < 0) {
			r = unknown(v, "proc:sys/kernel/osrelease", "%s: which kernel runs its striped or crypt target "
				    "could not be told (kernel_release: %s), and liblcloud follows them only as Linux "
				    "%d.%d and later run them", dm->name, release, FOLLOWED_KERNEL_MAJOR,
				    FOLLOWED_KERNEL_MINOR);
			return r < 0 ? r : 0;
		}
		if (!k) {
			r = reason(v, "proc:sys/kernel/osrelease", "%s: Linux %s runs its striped or crypt target, and "
				   "liblcloud follows them only as Linux %d.%d and later run them (whose code it was "
				   "checked against), so no promise is claimed", dm->name, release,
				   FOLLOWED_KERNEL_MAJOR, FOLLOWED_KERNEL_MINOR);
			return r < 0 ? r : 0;
		}
	}
	*ret_n = n;
	return 1;
}

/*
 * Where byte 0 of layer TOP may land on disk layer LEAF: walk up from the
 * disk adding partition starts, md member data offsets and dm offsets
 * (dm_shifts). A dm device with several segments on one disk gives several
 * candidates. *CRYPT_SECTOR gets the largest dm-crypt sector on the way (0:
 * none). Returns how many (>= 1), 0 when unknown (with a reason), or
 * -ENOMEM. Starts are signed: a dm segment may shift backwards.
 */
static int target_starts_on_disk(const struct lcloud_probe *p, int top, int leaf, int64_t *starts,
				 uint64_t *crypt_sector, struct lcloud_verdict *v)
{
	int n = 1, r;

	/* a loop device at the bottom writes to its backing file from its offset on */
	starts[0] = 0;
	if (p->layers[leaf].kind == LCLOUD_LAYER_LOOP) {
		uint64_t offset = 0;

		if (layer_get_bytes(&p->layers[leaf], FACT_LOOP_OFFSET, &offset) < 0) {
			r = unknown(v, "sysfs:loop/offset", "%s: where in its backing file it starts (loop/offset) could "
				    "not be read", p->layers[leaf].name);
			return r < 0 ? r : 0;
		}
		if (offset > (uint64_t)PLACEMENT_MAX)
			goto out_of_range;
		starts[0] = (int64_t)offset;
	}
	*crypt_sector = 0;
	for (int i = leaf; i != top && p->layers[i].parent >= 0; i = p->layers[i].parent) {
		const struct lcloud_layer *up = &p->layers[p->layers[i].parent];
		dev_t devno;
		bool has_devno = layer_get_devno(&p->layers[i], &devno) > 0;
		int64_t shifts[STARTS_MAX];
		int n_shifts = 0;

		if (up->kind == LCLOUD_LAYER_PARTITION) {
			uint64_t start;

			if (layer_get_bytes(up, FACT_START_BYTES, &start) <= 0) {
				r = unknown(v, "sysfs:start", "%s: where the partition starts could not be read, so where "
					    "writes land on %s is unknown", up->name, p->layers[leaf].name);
				return r < 0 ? r : 0;
			}

			for (int k = 0; k < n; k++)
				if (start > (uint64_t)PLACEMENT_MAX || !add_placement(&starts[k], (int64_t)start))
					goto out_of_range;
			continue;
		}
		if (up->kind == LCLOUD_LAYER_MD) {
			const struct layer_md_member *member = layer_md_member(up, p->layers[i].name);

			if (!member) {
				r = unknown(v, "sysfs:md/dev-*/offset", "%s: where member %s's data starts could not be "
					    "read, so where writes land on it is unknown", up->name, p->layers[i].name);
				return r < 0 ? r : 0;
			}
			for (int k = 0; k < n; k++)
				if (member->data_offset > (uint64_t)PLACEMENT_MAX ||
				    !add_placement(&starts[k], (int64_t)member->data_offset))
					goto out_of_range;
			continue;
		}
		if (up->kind != LCLOUD_LAYER_DM)
			continue;
		r = dm_shifts(up, has_devno ? &devno : NULL, &p->layers[leaf], shifts, &n_shifts, crypt_sector, v);
		if (r <= 0)
			return r;
		if (n * n_shifts > STARTS_MAX) {
			r = reason(v, "dm:table", "%s: its device-mapper table is too fragmented, so liblcloud does not "
				   "follow where writes land on %s", up->name, p->layers[leaf].name);
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
	r = unknown(v, "stack", "%s: the offsets of the layers above it add up to more than 1 EiB, which no "
		    "device holds, so where writes land on it is unknown", p->layers[leaf].name);
	return r < 0 ? r : 0;
}

/* Largest power of two dividing X - OFFSET modulo B (B 0: X itself); UINT64_MAX for 0. */
uint64_t pd_fits_from(int64_t x, uint64_t offset, uint64_t b)
{
	int64_t d = x - (int64_t)offset;

	if (b)
		d = ((d % (int64_t)b) + (int64_t)b) % (int64_t)b;
	return pow2_dividing((uint64_t)d);
}

/* A SCSI cloud disk whose provider's promise was not given: the probe's cloud-* notes say why. */
static bool cloud_without_promise(const struct lcloud_probe *p, int disk)
{
	const struct lcloud_layer *scsi = stack_child_layer(p, disk, LCLOUD_LAYER_SCSI);
	const struct lcloud_layer *cloud = scsi ? stack_child_layer(p, index_of(p, scsi), LCLOUD_LAYER_CLOUD) : NULL;

	return cloud && !fact(cloud, FACT_PROMISE_UNTORN_MAX_BYTES);
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
		fits = pd_fits_from(starts[s], pr->boundary_offset, pr->boundary);
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

/* Every disk a write may reach must promise it; the smallest promise counts, where the target lands on it. */
int pd_devices(const struct lcloud_probe *p, struct lcloud_verdict *v, struct pd_state *st)
{
	int r;

	for (int k = 0; k < st->n_leaves; k++) {
		const struct lcloud_layer *d = &p->layers[st->leaves[k]];
		int64_t starts[STARTS_MAX];
		struct promise pr;
		uint64_t ok, crypt_sector, backing_sizes = UINT64_MAX;
		int n_starts;

		if (d->kind == LCLOUD_LAYER_LOOP) {
			/* a loop device: what its backing file keeps whole, where it writes to it directly */
			uint64_t definite;
			int why;

			r = pd_loop_promise(p, st->leaves[k], v, &pr, &backing_sizes, &definite, &why);
			if (r < 0)
				return r;
			if (why >= 0 && st->merge_reason < 0)
				st->merge_reason = why;
			st->definite = min_u64(st->definite, r == PD_LOOP_NONE ? 0 : definite);
			if (r != PD_LOOP_PROMISE) {
				st->limit = 0;
				continue;
			}
		} else {
			device_promise(p, st->leaves[k], true, &pr);
		}
		if (!pr.bytes) {
			bool unread = stack_child_layer(p, st->leaves[k], LCLOUD_LAYER_NVME) != NULL;

			st->limit = 0;
			if (!unread)
				st->definite = 0;
			r = unread ? unknown(v, "nvme", "%s: the namespace's Identify data could not be read (%s), so "
					     "its power-fail atomic size is unknown; %s", d->name,
					     has_note(p, NOTE_NVME_NOT_CAPTURED) ? "the captured tree has none"
									         : "see the notes; NVMe admin commands need root",
					     has_note(p, NOTE_NVME_NOT_CAPTURED) ? "capture it too, or run on the live system "
										   "as root" : "run as root")
				   : cloud_without_promise(p, st->leaves[k])
				   ? reason(v, "device", "%s promises no untorn writes: it states no power-fail atomic "
					    "size, and its cloud provider's documented promise does not apply to this "
					    "disk (the cloud-* notes of 'lcloudctl probe' say why)", d->name)
				   : reason(v, "device", "%s promises no untorn writes: it states no power-fail atomic "
					    "size and is no cloud disk with a documented promise", d->name);
			if (r < 0)
				return r;
			continue;
		}
		r = reason(v, pr.evidence, "%s", pr.what);
		if (r < 0)
			return r;
		n_starts = target_starts_on_disk(p, st->top, st->leaves[k], starts, &crypt_sector, v);
		if (n_starts < 0)
			return n_starts;
		if (n_starts == 0) {
			st->limit = 0;
			continue;
		}
		r = leaf_limit(p, st->leaves[k], &pr, starts, n_starts, v, &ok);
		if (r < 0)
			return r;
		if (pr.natural) {
			/* the provider's promise wants alignment; the device's own may hold where it does not */
			struct promise own;
			uint64_t ok_own = 0;

			device_promise(p, st->leaves[k], false, &own);
			if (own.bytes && (r = leaf_limit(p, st->leaves[k], &own, starts, n_starts, v, &ok_own)) < 0)
				return r;
			if (ok_own > ok) {
				ok = ok_own;
				pr = own;
			}
		}
		{
			uint64_t sizes, floor = pr.lba ? pr.lba : 512;
			int why;

			/*
			 * A command the device tears keeps each logical block whole; a dm-crypt sector across two
			 * of them, torn, decrypts as garbage: no write smaller than the command is whole there.
			 */
			if (crypt_sector > floor || pr.no_whole_lba)
				floor = 0;
			r = pd_merges(p, st->leaves[k], &pr, floor, v, &ok, &sizes, &why);
			if (r < 0)
				return r;
			st->sizes &= sizes & backing_sizes;
			if (why >= 0 && st->merge_reason < 0)
				st->merge_reason = why;
		}
		st->align = pr.lba > st->align ? pr.lba : st->align;
		/* dm-crypt takes writes in whole sectors of its own */
		st->align = crypt_sector > st->align ? crypt_sector : st->align;
		st->limit = min_u64(st->limit, ok);
		st->definite = min_u64(st->definite, ok);
		st->natural = st->natural || pr.natural;
		if (pr.boundary) {
			/* one disk, one start: the st->boundary can be given in the target's terms */
			if (st->n_leaves == 1 && n_starts == 1) {
				st->boundary = pr.boundary;
				st->boundary_offset = (uint64_t)((((int64_t)pr.boundary_offset - starts[0]) % (int64_t)pr.boundary +
							     (int64_t)pr.boundary) % (int64_t)pr.boundary);
			} else {
				st->natural = true; /* the caps above keep aligned writes inside every st->boundary */
			}
		}
	}

	return 0;
}
