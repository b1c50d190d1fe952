/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plain_direct's placement rule: every disk a write may reach must promise
 * to keep it whole, and the target must land on each disk where the promise
 * holds: partition starts, md member data offsets and dm linear offsets move
 * the write, the promise's alignment and boundary must still be met, and
 * merges must not join writes across them.
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
		dev_t devno;
		bool has_devno = layer_get_devno(&p->layers[i], &devno) > 0;
		int64_t shifts[STARTS_MAX];
		char unfollowed[16] = "";
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
		for (unsigned int s = 0; s < up->n_dm_segments && has_devno; s++) {
			const struct layer_dm_segment *seg = &up->dm_segments[s];
			uint64_t ts = seg->start, off = seg->offset;

			if (!seg->linear) {
				n_shifts = -1; /* a target type whose placement is not a plain shift */
				snprintf(unfollowed, sizeof(unfollowed), "%s", seg->type);
				break;
			}
			if (makedev(seg->major, seg->minor) != devno)
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
		if (n_shifts == 0 && !has_dm_table(up)) {
			r = unknown(v, "dm:table", "%s: its device-mapper table could not be read (it needs root), so "
				    "where writes land on %s is unknown; run as root", up->name, p->layers[leaf].name);
			return r < 0 ? r : 0;
		}
		if (n_shifts < 0 && unfollowed[0]) {
			/* crypt, thin, striped, mirror...: data moves, is remapped or is written more than once */
			r = reason(v, "dm:table", "%s maps its data through a %s target, and liblcloud follows only "
				   "linear ones: where writes land on %s, and whether they reach it whole, is not known, "
				   "so no promise is claimed", up->name, unfollowed, p->layers[leaf].name);
			return r < 0 ? r : 0;
		}
		if (n_shifts <= 0 || n * n_shifts > STARTS_MAX) {
			r = reason(v, "dm:table", "%s: its device-mapper table is not linear or is too fragmented, so "
				   "liblcloud does not follow where writes land on %s", up->name, p->layers[leaf].name);
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

/*
 * The block layer merges writes in flight together that are neighbours on
 * the disk into one request of up to max_sectors_kb, unless queue/nomerges
 * is 2. A device keeps a command whole only up to its promise and inside
 * its atomic boundaries: a merged command larger than the promise, or one
 * that crosses a boundary (two writes on either side of it, however small
 * the command), holds each logical block whole, nothing more, whichever
 * writes it carries. Caps *OK at the logical block when merges can build
 * such a command.
 */
static int merge_limit(const struct lcloud_probe *p, int leaf, const struct promise *pr, struct lcloud_verdict *v,
		       uint64_t *ok)
{
	const struct lcloud_layer *d = &p->layers[leaf];
	const struct lcloud_fact *nomerges = fact(d, FACT_NOMERGES);
	uint64_t max_bytes = 0, lba = pr->lba ? pr->lba : 512;
	/* commands no larger than the promise are whole, unless one can cross a boundary; unread: not known small */
	bool small = layer_get_bytes(d, FACT_MAX_SECTORS_KB, &max_bytes) > 0 && max_bytes && max_bytes <= pr->bytes;

	if (*ok <= lba || (small && !pr->boundary))
		return 0;
	if (nomerges && nomerges->u64 == 2)
		return reason(v, "sysfs:queue/nomerges", "%s merges no writes (queue/nomerges 2), so each write "
			      "reaches the device as its own command; this rests on that setting, which the kernel "
			      "resets when the disk appears again (a udev rule setting ATTR{queue/nomerges}=\"2\" "
			      "keeps it)", d->name);
	*ok = lba;
	if (!nomerges)
		return reason(v, "sysfs:queue/nomerges", "%s: queue/nomerges could not be read, so whether the block "
			      "layer merges neighbouring writes into one command larger than the %" PRIu64 " bytes the "
			      "device keeps whole is unknown: only each %" PRIu64 "-byte block is sure to be untorn",
			      d->name, pr->bytes, lba);
	if (pr->boundary) {
		char larger[96] = "";

		if (!small)
			snprintf(larger, sizeof(larger), ", more than the %" PRIu64 " bytes the device keeps whole,", pr->bytes);
		return reason(v, "sysfs:queue/nomerges", "%s merges neighbouring writes in flight together into one "
			      "command of up to %" PRIu64 " KiB (queue/nomerges %" PRIu64 ", max_sectors_kb %" PRIu64 ")%s "
			      "and two writes on either side of one of the device's %" PRIu64 "-byte atomic boundaries "
			      "make a command that crosses it: such a command is untorn only per %" PRIu64 "-byte block; "
			      "echo 2 > /sys/block/%s/queue/nomerges keeps each write its own command, and a udev rule "
			      "keeps that across reboots", d->name, max_bytes / 1024, nomerges->u64, max_bytes / 1024,
			      larger, pr->boundary, lba, d->name);
	}
	return reason(v, "sysfs:queue/nomerges", "%s merges neighbouring writes in flight together into one command "
		      "of up to %" PRIu64 " KiB (queue/nomerges %" PRIu64 ", max_sectors_kb %" PRIu64 "), more than the "
		      "%" PRIu64 " bytes the device keeps whole: such a command is untorn only per %" PRIu64 "-byte "
		      "block; echo 2 > /sys/block/%s/queue/nomerges (or a max_sectors_kb of at most %" PRIu64 ") keeps "
		      "each write its own command, and a udev rule keeps that across reboots", d->name, max_bytes / 1024,
		      nomerges->u64, max_bytes / 1024, pr->bytes, lba, d->name, pr->bytes / 1024);
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
		uint64_t ok;
		int n_starts;

		device_promise(p, st->leaves[k], true, &pr);
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
					    "size and is no cloud disk with a documented promise%s", d->name,
					    d->kind == LCLOUD_LAYER_LOOP ? " (a loop device passes writes on to a file)" : "");
			if (r < 0)
				return r;
			continue;
		}
		r = reason(v, pr.evidence, "%s", pr.what);
		if (r < 0)
			return r;
		n_starts = target_starts_on_disk(p, st->top, st->leaves[k], starts, v);
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
		r = merge_limit(p, st->leaves[k], &pr, v, &ok);
		if (r < 0)
			return r;
		st->align = pr.lba > st->align ? pr.lba : st->align;
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
