/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plain_direct: aligned O_DIRECT writes. The kernel promises nothing here:
 * untorn only where the device or the provider promises it, the stack does
 * not shift the write off the promise's alignment, the block layer does not
 * split it and the file system keeps it in one extent.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "util.h"
#include "verdict_internal.h"

/* ---- plain_direct -------------------------------------------------------- */

/* Did the probe read the dm device's table (dm_target_N facts)? */
static bool has_dm_table(const struct lcloud_layer *l)
{
	for (unsigned int f = 0; f < l->n_facts; f++)
		if (has_prefix(l->facts[f].name, "dm_target_") && l->facts[f].state == LCLOUD_FACT_PRESENT)
			return true;
	return false;
}

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
		char unfollowed[16] = "";
		int n_shifts = 0;

		if (up->kind == LCLOUD_LAYER_PARTITION) {
			if (!fact(up, "start_bytes")) {
				r = unknown(v, "sysfs:start", "%s: where the partition starts could not be read, so where "
					    "writes land on %s is unknown", up->name, p->layers[leaf].name);
				return r < 0 ? r : 0;
			}
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
				r = unknown(v, "sysfs:md/dev-*/offset", "%s: where member %s's data starts could not be "
					    "read, so where writes land on it is unknown", up->name, p->layers[i].name);
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
				if (sscanf(up->facts[f].string, "%*s %*s %15s", unfollowed) != 1)
					unfollowed[0] = '\0';
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
static uint64_t fits_from(int64_t x, uint64_t offset, uint64_t b)
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
	const struct lcloud_fact *nomerges = fact(d, "nomerges");
	uint64_t max_kb = num(d, "max_sectors_kb", 0), lba = pr->lba ? pr->lba : 512;
	/* commands no larger than the promise are whole, unless one can cross a boundary */
	bool small = max_kb && max_kb * 1024 <= pr->bytes;

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
			      "keeps that across reboots", d->name, max_kb, nomerges->u64, max_kb, larger, pr->boundary,
			      lba, d->name);
	}
	return reason(v, "sysfs:queue/nomerges", "%s merges neighbouring writes in flight together into one command "
		      "of up to %" PRIu64 " KiB (queue/nomerges %" PRIu64 ", max_sectors_kb %" PRIu64 "), more than the "
		      "%" PRIu64 " bytes the device keeps whole: such a command is untorn only per %" PRIu64 "-byte "
		      "block; echo 2 > /sys/block/%s/queue/nomerges (or a max_sectors_kb of at most %" PRIu64 ") keeps "
		      "each write its own command, and a udev rule keeps that across reboots", d->name, max_kb, nomerges->u64, max_kb, pr->bytes, lba, d->name,
		      pr->bytes / 1024);
}

/* A SCSI cloud disk whose provider's promise was not given: the probe's cloud-* notes say why. */
static bool cloud_without_promise(const struct lcloud_probe *p, int disk)
{
	const struct lcloud_layer *scsi = child_of_kind(p, disk, LCLOUD_LAYER_SCSI);
	const struct lcloud_layer *cloud = scsi ? child_of_kind(p, index_of(p, scsi), LCLOUD_LAYER_CLOUD) : NULL;

	return cloud && !fact(cloud, "promise_untorn_max_bytes");
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

/*
 * The block layer also splits a write whose buffer needs more segments than
 * queue/max_segments, a segment larger than queue/max_segment_size, or a gap
 * that breaks queue/virt_boundary_mask. A user buffer is contiguous only per
 * memory page, and O_DIRECT accepts a buffer that starts at any multiple of
 * dma_alignment + 1: a write of N bytes (N a multiple of the page) may touch
 * N / page size + 1 pages, and one larger than that alignment but smaller
 * than a page may touch two. Returns the largest write every layer keeps in
 * one request whatever buffer the kernel accepts (0 with an "unknown" reason
 * when a limit could not be read), or -ENOMEM.
 */
static int64_t segment_limit(const struct lcloud_probe *p, uint64_t limit, struct lcloud_verdict *v,
			     bool *ret_unread)
{
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	int r;

	for (unsigned int i = 0; i < p->n_layers && limit > 512; i++) {
		const struct lcloud_layer *l = &p->layers[i];
		const struct lcloud_fact *segs = fact(l, "max_segments"), *seg_size = fact(l, "max_segment_size");
		const struct lcloud_fact *vbm = fact(l, "virt_boundary_mask");
		/* the kernel's default buffer alignment is 512 bytes (mask 511) */
		uint64_t buf_align = num(l, "dma_alignment", 511) + 1;
		uint64_t per_page, cap;

		if (l->kind != LCLOUD_LAYER_DISK && l->kind != LCLOUD_LAYER_LOOP && l->kind != LCLOUD_LAYER_DM &&
		    l->kind != LCLOUD_LAYER_MD)
			continue;
		if (!segs || !seg_size || !vbm || !segs->u64 || !seg_size->u64) {
			const char *name = !segs ? "max_segments" : !seg_size ? "max_segment_size" : "virt_boundary_mask";

			if (limit <= page)
				continue;
			r = unknown(v, "sysfs:queue/max_segments", "%s: queue/%s could not be read, so whether the block "
				    "layer splits writes of more than one memory page (%" PRIu64 " bytes) is unknown",
				    l->name, name, page);
			*ret_unread = true;
			return r < 0 ? r : (int64_t)page;
		}
		if (!is_power_of_2(buf_align) || buf_align > page)
			buf_align = page;
		if (vbm->u64 && vbm->u64 + 1 > page) {
			/* every gap between two pages of the buffer breaks the boundary */
			cap = buf_align;
			if (cap >= limit)
				continue;
			r = reason(v, "sysfs:queue/virt_boundary_mask", "%s: virt_boundary_mask %#" PRIx64 " is wider "
				   "than a memory page, so the block layer splits a write at every gap between the "
				   "buffer's pages; O_DIRECT buffers need only be aligned to %" PRIu64 " bytes "
				   "(dma_alignment), so writes of more than %" PRIu64 " bytes can reach the device as "
				   "several requests", l->name, vbm->u64, buf_align, cap);
		} else {
			per_page = seg_size->u64 >= page ? 1 : (page + seg_size->u64 - 1) / seg_size->u64;
			for (cap = pow2_floor(limit); cap > buf_align; cap /= 2) {
				/* a page-aligned buffer touches only the pages it fills */
				uint64_t pages = buf_align >= page ? cap / page : cap < page ? 2 : cap / page + 1;

				if (pages * per_page <= segs->u64)
					break;
			}
			if (cap <= buf_align && per_page > segs->u64)
				cap = pow2_floor(segs->u64 * seg_size->u64);
			if (cap >= limit)
				continue;
			r = reason(v, "sysfs:queue/max_segments", "%s takes at most %" PRIu64 " segments of at most %" PRIu64
				   " bytes per request (max_segments, max_segment_size); a buffer is contiguous only per "
				   "%" PRIu64 "-byte memory page and O_DIRECT buffers need only be aligned to %" PRIu64
				   " bytes (dma_alignment), so a write may touch one page more than it fills: writes of "
				   "more than %" PRIu64 " bytes can be split into several requests", l->name, segs->u64,
				   seg_size->u64, page, buf_align, cap);
		}
		if (r < 0)
			return r;
		if (cap < limit)
			limit = cap;
	}
	return (int64_t)limit;
}

/* File systems that write a file's O_DIRECT data to the one device they are mounted from. */
static const char *const single_device_fs[] = { "xfs", "ext4", "ext3", "ext2" };

/*
 * Are the file's O_DIRECT writes direct, does the device stack below the
 * file system hold its data, and does the file system place that data
 * where the verdict can follow it?
 * Returns 1 when that decided the verdict (no or unknown, with a reason),
 * 0 to go on, -ENOMEM.
 */
static int data_placement(const struct lcloud_layer *fs, bool has_stack, struct lcloud_verdict *v)
{
	const struct lcloud_fact *f;
	int r;

	if ((f = fact_unread(fs, "realtime"))) {
		r = unknown(v, f->source, "%s", f->reason);
		return r < 0 ? r : 1;
	}
	if (num(fs, "realtime", 0) && (f = fact_unread(fs, "realtime_device"))) {
		r = unknown(v, f->source, "the file is an XFS realtime file, whose data is on the realtime device, but %s",
			    f->reason);
		return r < 0 ? r : 1;
	}
	if (file_without_direct_io(fs)) {
		r = reason(v, "statx:stx_dio_offset_align", NO_DIRECT_IO_WHY ": the kernel takes O_DIRECT writes "
			   "into the page cache instead, and a buffered write reaches the device in pieces (through "
			   "ext4's journal, block by block), so none is claimed untorn");
		return r < 0 ? r : 1;
	}
	if (!has_stack)
		return 0; /* no block device: the caller says so */
	for (size_t i = 0; i < ARRAY_SIZE(single_device_fs); i++)
		if (streq(fs->name, single_device_fs[i]))
			return 0;
	if (streq(fs->name, "btrfs")) {
		if ((f = fact(fs, "btrfs_devices")) && f->u64 == 1)
			return 0;
		if (f)
			r = reason(v, f->source, "the btrfs file system spans %" PRIu64 " devices and may put the "
				   "file's data on any of them, while the device stack shown is only the one the mount "
				   "names: no promise is claimed for it", f->u64);
		else
			r = unknown(v, "sysfs:fs/btrfs/devices", "btrfs may spread a file's data over several devices, "
				    "and %s", fact_unread(fs, "btrfs_devices") ? fact_unread(fs, "btrfs_devices")->reason
									 : "which devices this one spans was not read");
		return r < 0 ? r : 1;
	}
	r = unknown(v, "mountinfo:fstype", "liblcloud does not know how %s places a file's O_DIRECT writes on its "
		    "device (it follows XFS, ext2/3/4 and single-device btrfs), so none is claimed untorn; "
		    "use the block device or one of those file systems",
		    fact(fs, "fstype") ? fs->name : "this file system (its mount was not found)");
	return r < 0 ? r : 1;
}

/*
 * A write smaller than the file's direct I/O alignment is not direct: XFS
 * takes it through the page cache (a file that shares or has shared blocks
 * with another, stx_dio_offset_align = its allocation unit), where
 * writeback may join it with its neighbours into a command larger than the
 * device's promise; elsewhere the kernel refuses it. Such sizes are none.
 */
static int direct_io_floor(const struct lcloud_layer *fs, uint64_t lba, struct lcloud_verdict *v)
{
	const struct lcloud_fact *f = fs ? fact(fs, "stx_dio_offset_align") : NULL;

	if (!f || f->u64 <= lba || !v->max_untorn)
		return 0;
	v->min_untorn = f->u64;
	if (f->u64 > v->max_untorn)
		v->max_untorn = 0;
	return reason(v, "statx:stx_dio_offset_align", "%s takes O_DIRECT writes to this file only in units of "
		      "%" PRIu64 " bytes (stx_dio_offset_align; XFS, for a file that shares or has shared blocks, "
		      "its allocation unit): a smaller write goes through the page cache, whose writeback may join "
		      "it with its neighbours into one command larger than the device keeps whole", fs->name,
		      f->u64);
}

int verdict_plain_direct(const struct lcloud_probe *p, struct lcloud_verdict *v)
{
	const struct lcloud_layer *fs = first_of(p, LCLOUD_LAYER_FILESYSTEM);
	int top = top_block(p), leaves[16], n_leaves;
	uint64_t limit = UINT64_MAX, boundary = 0, boundary_offset = 0, align = 512, top_start = 0;
	/* the smallest limit that rests on what was read: above it, "no" whatever else is unknown */
	uint64_t definite = UINT64_MAX;
	bool natural = false;
	int r;

	if (p->target_type == LCLOUD_TARGET_NVME_CHAR)
		return reason(v, "target:nvme-generic", "O_DIRECT needs a file or the block device: the NVMe generic "
			      "node takes passthrough commands only");
	if (fs) {
		r = data_placement(fs, top >= 0, v);
		if (r != 0)
			return r < 0 ? r : 0;
	}
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
			if (!unread)
				definite = 0;
			r = unread ? unknown(v, "nvme", "%s: the namespace's Identify data could not be read (%s), so "
					     "its power-fail atomic size is unknown; %s", d->name,
					     has_note(p, NOTE_NVME_NOT_CAPTURED) ? "the captured tree has none"
									         : "see the notes; NVMe admin commands need root",
					     has_note(p, NOTE_NVME_NOT_CAPTURED) ? "capture it too, or run on the live system "
										   "as root" : "run as root")
				   : cloud_without_promise(p, leaves[k])
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
		r = merge_limit(p, leaves[k], &pr, v, &ok);
		if (r < 0)
			return r;
		align = pr.lba > align ? pr.lba : align;
		limit = min_u64(limit, ok);
		definite = min_u64(definite, ok);
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
		/* a queue (not a partition's) whose split limits are missing, as in a capture that missed them */
		if ((l->kind == LCLOUD_LAYER_DISK || l->kind == LCLOUD_LAYER_LOOP || l->kind == LCLOUD_LAYER_DM ||
		     l->kind == LCLOUD_LAYER_MD) && (!fact(l, "max_sectors_kb") || !fact(l, "chunk_sectors"))) {
			const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

			if (limit > page) {
				limit = page;
				r = unknown(v, !fact(l, "max_sectors_kb") ? "sysfs:queue/max_sectors_kb"
									: "sysfs:queue/chunk_sectors",
					    "%s: queue/%s could not be read, so whether the block layer splits writes of "
					    "more than one memory page (%" PRIu64 " bytes) is unknown", l->name,
					    !fact(l, "max_sectors_kb") ? "max_sectors_kb" : "chunk_sectors", page);
				if (r < 0)
					return r;
			}
		}
		if (max_kb && max_kb * 1024 < limit) {
			limit = pow2_floor(max_kb * 1024);
			definite = min_u64(definite, limit);
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
				definite = min_u64(definite, cap);
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
					definite = min_u64(definite, cap);
					r = reason(v, "dm:table", "%s: a segment starts at byte %llu, and writes across it "
						   "are split", l->name, ts * 512);
					if (r < 0)
						return r;
				}
			}
		}
	}

	if (limit && limit != UINT64_MAX) {
		bool unread = false;
		int64_t seg = segment_limit(p, limit, v, &unread);

		if (seg < 0)
			return (int)seg;
		/* a cap the segment rules set themselves, not one they passed through */
		if (!unread && (uint64_t)seg < limit)
			definite = min_u64(definite, (uint64_t)seg);
		limit = (uint64_t)seg;
	}

	/* The file system must keep a page in one extent: one block, or one bigalloc cluster. */
	if (fs && limit) {
		uint64_t unit = num(fs, "cluster_size", num(fs, "block_size", 0));
		const char *what = fact(fs, "cluster_size") ? "cluster size" : "block size";

		if (fact_unread(fs, "cluster_size") && unit && unit < limit) {
			r = unknown(v, "ext4:superblock:s_log_cluster_size", "%s: its cluster size (bigalloc) could not be "
				    "read (%s), so whether it keeps writes of more than its %" PRIu64 "-byte blocks in one "
				    "extent is unknown; run as root", fs->name, fact_unread(fs, "cluster_size")->reason,
				    unit);
			if (r < 0)
				return r;
		}

		if (unit && unit < limit) {
			limit = pow2_floor(unit);
			if (!fact_unread(fs, "cluster_size"))
				definite = min_u64(definite, limit);
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

	/*
	 * A file's existing extents: direct I/O maps a write one extent at a
	 * time, so a page across an edge between two (or an extent and a hole)
	 * leaves as two writes. ext4 bigalloc maps files in blocks inside its
	 * clusters: a cluster written in part has such an edge (a write log
	 * showed a 16 KiB write there reach the device as 4 KiB and 12 KiB).
	 */
	if (fs && limit && p->target_type == LCLOUD_TARGET_REGULAR) {
		uint64_t edges = num(fs, "extent_edge_alignment", 0), block = num(fs, "block_size", 0);

		if (fact_unread(fs, "extent_edge_alignment") || !fact(fs, "extents")) {
			/* extents are made of blocks: a write inside one block crosses no edge */
			limit = block && block < limit ? pow2_floor(block) : (block ? limit : 0);
			r = unknown(v, "ioctl:FS_IOC_FIEMAP", "this file's extent map could not be read (%s), so whether a "
				    "write larger than a %" PRIu64 "-byte block crosses from one extent into another is "
				    "unknown; run as a user who can read the file",
				    fact_unread(fs, "extent_edge_alignment") ? fact_unread(fs, "extent_edge_alignment")->reason
									     : "not read", block);
			if (r < 0)
				return r;
		} else if (edges && edges < limit) {
			limit = pow2_floor(edges);
			definite = min_u64(definite, limit);
			r = reason(v, "ioctl:FS_IOC_FIEMAP", "in this file two extents (or an extent and a hole) meet at "
				   "byte %" PRIu64 ", which is aligned to %" PRIu64 " bytes only: a larger write across it "
				   "is mapped in two pieces and reaches the device as two writes (a write of less than a "
				   "cluster, a punched hole or a sparse copy leaves such edges); writing the file again in "
				   "whole aligned pages (e.g. a copy with 'cp --sparse=never') removes them",
				   num(fs, "extent_edge_worst", 0), edges);
			if (r < 0)
				return r;
		} else if (block && block < limit) {
			r = reason(v, "ioctl:FS_IOC_FIEMAP", "every extent of this file starts and ends on a %" PRIu64
				   "-byte edge; this rests on the file staying so: a write of less than a page into a "
				   "hole, a punched hole or a sparse copy makes later writes over that page reach the "
				   "device in pieces", limit);
			if (r < 0)
				return r;
		}
	}
	v->max_untorn = limit == UINT64_MAX ? 0 : pow2_floor(limit);
	r = direct_io_floor(fs, align, v);
	if (r < 0)
		return r;
	v->no_above = definite;
	v->alignment = natural ? 0 : align;
	v->boundary = natural ? 0 : boundary;
	v->boundary_offset = natural ? 0 : boundary_offset;
	if (v->max_untorn)
		return reason(v, "kernel", "the kernel makes no promise for plain O_DIRECT writes: this rests on the "
			      "device or provider promise and on nothing in the stack splitting, merging or moving "
			      "the write");
	return 0;
}


