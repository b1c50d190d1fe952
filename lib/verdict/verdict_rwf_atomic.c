/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rwf_atomic: O_DIRECT + pwritev2(RWF_ATOMIC). The kernel guarantees these
 * writes untorn or fails them; the verdict says which sizes it accepts here.
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

/* ---- rwf_atomic ------------------------------------------------------------ */

/*
 * A block device without a statx reading (a captured tree): the kernel's
 * queue limits of its disk, and its rule for partitions: atomic writes only
 * where the start is a multiple of max(unit min, boundary).
 */
static int rwf_atomic_from_queue(const struct lcloud_probe *p, int top, struct lcloud_verdict *v)
{
	const struct lcloud_layer *unread_start;
	uint64_t start;
	/* a start unread: said "unknown" below, before the kernel's rule rests on it */
	int disk = stack_below_partitions(p, top, LCLOUD_LAYER_DISK, &start, &unread_start);

	if (disk < 0)
		return reason(v, "stack", "the disk below the partition was not found");
	{
		const struct lcloud_layer *d = &p->layers[disk];
		const struct lcloud_fact *umax = fact(d, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES);
		uint64_t umin = 0, boundary = 0, need;
		/* the unit min and boundary come with the unit max (Linux 6.11); one missing is no "none" */
		bool limits_read = layer_get_bytes(d, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, &umin) > 0 &&
				   layer_get_bytes(d, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, &boundary) > 0;

		need = umin > boundary ? umin : boundary;

		if (!umax)
			return reason(v, "sysfs:queue/atomic_write_unit_max_bytes", "%s: this kernel provides no atomic "
				      "write limits (Linux 6.11+ does): RWF_ATOMIC is not available", d->name);
		if (!umax->u64)
			return reason(v, "sysfs:queue/atomic_write_unit_max_bytes", "%s: the kernel reports no atomic "
				      "writes for this device (atomic_write_unit_max_bytes 0)", d->name);
		if (!limits_read)
			return unknown(v, "sysfs:queue/atomic_write_boundary_bytes", "%s: the kernel's atomic unit min or "
				       "boundary (queue/atomic_write_unit_min_bytes, atomic_write_boundary_bytes) could "
				       "not be read, so which RWF_ATOMIC writes it accepts whole is unknown", d->name);
		if (unread_start)
			return unknown(v, "sysfs:start", "%s: where the partition starts could not be read, so whether "
				       "the kernel accepts RWF_ATOMIC on it (a start that is a multiple of the atomic "
				       "unit) is unknown", unread_start->name);
		if (start && need && start % need)
			return reason(v, "sysfs:start", "the partition starts at byte %" PRIu64 ", not a multiple of "
				      "%" PRIu64 ": the kernel refuses RWF_ATOMIC on it", start, need);
		v->max_untorn = pow2_floor(umax->u64);
		v->hw_max = v->max_untorn; /* a block device's RWF_ATOMIC is the device's own */
		v->min_untorn = umin;
		v->boundary = boundary;
		v->boundary_offset = boundary ? (boundary - start % boundary) % boundary : 0;
		return reason(v, "sysfs:queue/atomic_write_unit_max_bytes", "%s: the kernel accepts RWF_ATOMIC writes "
			      "of %" PRIu64 " to %" PRIu64 " bytes, naturally aligned%s, untorn or failing", d->name,
			      umin, umax->u64, boundary ? ", not crossing its atomic write boundary" : "");
	}
}

/*
 * statx of a device node has no boundary field, but the kernel refuses an
 * RWF_ATOMIC write that crosses its disk's atomic_write_boundary_bytes: show
 * that boundary, counted from the partition's start, as the queue path does.
 */
static void device_boundary(const struct lcloud_probe *p, int top, struct lcloud_verdict *v)
{
	uint64_t start = 0, boundary = 0;
	const struct lcloud_layer *unread_start;
	int disk = stack_below_partitions(p, top, LCLOUD_LAYER_DISK, &start, &unread_start);

	if (disk < 0 || unread_start ||
	    layer_get_bytes(&p->layers[disk], FACT_ATOMIC_WRITE_BOUNDARY_BYTES, &boundary) <= 0 || !boundary)
		return;
	v->boundary = boundary;
	v->boundary_offset = (boundary - start % boundary) % boundary;
}

/*
 * File systems whose files report the atomic limits of the file system below
 * them through statx, while their own files do not accept RWF_ATOMIC.
 */
static const char *const stacking_fs[] = { "overlay", "ecryptfs", "shiftfs" };
/* File systems whose statx atomic limits the kernel honours (Linux 6.11+). */
static const char *const atomic_fs[] = { "xfs", "ext4" };

static bool in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (streq(name, list[i]))
			return true;
	return false;
}

/*
 * What a live RWF_ATOMIC write to a temporary file beside the target said
 * (LCLOUD_PROBE_CONFIRM_ATOMIC). The kernel's answer wins over statx.
 * Returns 1 when it decided the verdict, 0 when statx stands, -ENOMEM.
 */
static int apply_live_confirmation(const struct lcloud_layer *fs, struct lcloud_verdict *v, bool *confirmed)
{
	const struct lcloud_fact *refused = fact(fs, FACT_LIVE_RWF_ATOMIC_REFUSED);
	const struct lcloud_fact *unchecked = fact(fs, FACT_LIVE_RWF_ATOMIC_UNENFORCED);
	const struct lcloud_fact *max = fact(fs, FACT_LIVE_RWF_ATOMIC_MAX_BYTES);
	bool capped;
	int r;

	*confirmed = false;
	if (refused) {
		v->max_untorn = max ? max->u64 : 0;
		if (!v->max_untorn)
			v->min_untorn = 0;
		r = reason(v, "live:pwritev2(RWF_ATOMIC)", "a live RWF_ATOMIC write to a temporary file in the same "
			   "directory was refused: %s; the kernel's answer wins over statx, which promised more%s",
			   refused->string, v->max_untorn ? "" : ": RWF_ATOMIC does not work here");
		return r < 0 ? r : 1;
	}
	if (unchecked) {
		v->max_untorn = 0;
		v->min_untorn = 0;
		r = unknown(v, "live:pwritev2(RWF_ATOMIC)", "a live test write that RWF_ATOMIC must refuse was "
			    "accepted (%s): this kernel or file system does not enforce atomic writes here, so "
			    "none is known to be untorn", unchecked->string);
		return r < 0 ? r : 1;
	}
	if (max) {
		*confirmed = true;
		/* the largest size tried is capped; where statx alone is trusted it still decides above that */
		capped = max->u64 < v->max_untorn && in_list(fs_type(fs), atomic_fs, ARRAY_SIZE(atomic_fs));
		if (max->u64 < v->max_untorn && !capped) {
			v->max_untorn = max->u64;
			r = unknown(v, "live:pwritev2(RWF_ATOMIC)", "live RWF_ATOMIC writes were confirmed up to %" PRIu64
				    " bytes only; larger sizes were not tried", max->u64);
			if (r < 0)
				return r;
		}
		r = reason(v, "live:pwritev2(RWF_ATOMIC)", "confirmed: live RWF_ATOMIC writes of %" PRIu64 " to %" PRIu64
			   " bytes to a temporary file in the same directory succeeded, and a misaligned one was "
			   "refused%s", v->min_untorn, min_u64(v->max_untorn, max->u64),
			   capped ? "; larger sizes were not tried, and statx's limits stand above them on a file system "
				    "that honours them" : "");
		return r < 0 ? r : 0;
	}
	return 0;
}

/*
 * Which sizes the device writes atomically itself, and which the file
 * system does in software (XFS, Linux 6.16+: copy on write, much slower).
 * stx_atomic_write_unit_max_opt names the split where there is one; where
 * it is 0 the device's own limit tells all-hardware from all-software.
 * ext4 has no software path: what it accepts, the device does.
 */
static int classify_hardware(const struct lcloud_probe *p, const struct lcloud_layer *fs,
			     const struct lcloud_layer *src, int top, struct lcloud_verdict *v)
{
	uint64_t opt = 0, dev_max = 0, start = 0, umin = 0, boundary = 0;
	const struct lcloud_layer *disk = NULL, *unread_start = NULL;
	int dev = top;

	if (!v->max_untorn)
		return 0;
	/* 0 or not reported (before Linux 6.16): no size better than unit max */
	(void)layer_get_bytes(src, FACT_STX_ATOMIC_WRITE_UNIT_MAX_OPT, &opt);
	if (!fs) {
		v->hw_max = v->max_untorn; /* a block device's RWF_ATOMIC is the device's own */
		return 0;
	}
	dev = stack_below_partitions(p, dev, LCLOUD_LAYER_DISK, &start, &unread_start);
	if (dev >= 0)
		disk = &p->layers[dev];
	/* not read: 0, no hardware atomic writes known */
	(void)layer_get_bytes(disk, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, &dev_max);
	if (streq(fs_type(fs), "ext4")) {
		v->hw_max = v->max_untorn;
		return 0;
	}
	/*
	 * The kernel gives a partition the disk's atomic writes only where its start
	 * is a multiple of max(unit min, boundary) (block/, bdev_can_atomic_write);
	 * elsewhere XFS has no hardware path and does every one by copy on write.
	 */
	(void)layer_get_bytes(disk, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, &umin);
	(void)layer_get_bytes(disk, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, &boundary);
	if (dev_max && (unread_start || (start && start % (umin > boundary ? umin : boundary ? boundary : 1)))) {
		v->hw_max = 0;
		if (unread_start)
			return 0; /* not known to be hardware: no word on who writes it */
		return reason(v, "sysfs:start", "the partition starts at byte %" PRIu64 ", not a multiple of %" PRIu64
			      ": the kernel gives it none of %s's atomic writes, so %s does every RWF_ATOMIC write in "
			      "software (copy on write: untorn, but much slower)", start, umin > boundary ? umin : boundary,
			      disk->name, fs->name);
	}
	if (opt && opt < v->max_untorn) {
		v->hw_max = pow2_floor(opt);
		return reason(v, "statx:stx_atomic_write_unit_max_opt", "the device writes up to %" PRIu64 " bytes "
			      "atomically itself; larger RWF_ATOMIC writes take %s's software path (copy on write: "
			      "untorn too, but much slower)", opt, fs->name);
	}
	if (disk && fact(disk, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES) && !dev_max) {
		v->hw_max = 0;
		return reason(v, "sysfs:queue/atomic_write_unit_max_bytes", "%s has no hardware atomic writes "
			      "(atomic_write_unit_max_bytes 0): %s does every RWF_ATOMIC write in software (copy on "
			      "write: untorn, but much slower)", disk->name, fs->name);
	}
	if (dev_max) {
		v->hw_max = min_u64(v->max_untorn, pow2_floor(dev_max));
		if (v->hw_max < v->max_untorn)
			return reason(v, "sysfs:queue/atomic_write_unit_max_bytes", "%s writes up to %" PRIu64 " bytes "
				      "atomically itself; larger RWF_ATOMIC writes take %s's software path (copy on "
				      "write: untorn too, but much slower)", disk->name, v->hw_max, fs->name);
		return 0;
	}
	return 0; /* no device limits to tell by: hw_max stays 0, "not known to be hardware" */
}

int verdict_rwf_atomic(const struct lcloud_probe *p, struct lcloud_verdict *v)
{
	const struct lcloud_layer *fs = stack_first_layer(p, LCLOUD_LAYER_FILESYSTEM);
	int top = top_block(p);
	const struct lcloud_layer *src = fs ? fs : (top >= 0 ? &p->layers[top] : NULL);
	const struct lcloud_fact *attr, *umax;
	uint64_t unit_min, unit_max;
	bool confirmed = false;
	int r;

	if (p->target_type == LCLOUD_TARGET_NVME_CHAR)
		return reason(v, "target:nvme-generic", "RWF_ATOMIC needs a file or the block device: the NVMe generic "
			      "node takes passthrough commands only; use /dev/%s or the passthrough path",
			      top >= 0 ? p->layers[top].name : "nvmeXnY");
	if (fs && in_list(fs_type(fs), stacking_fs, ARRAY_SIZE(stacking_fs))) {
		/* the kernel's own word first, where a live write was tried */
		if (fact(fs, FACT_LIVE_RWF_ATOMIC_REFUSED)) {
			r = apply_live_confirmation(fs, v, &confirmed);
			v->max_untorn = 0;
			v->min_untorn = 0;
			if (r < 0)
				return r;
		}
		return reason(v, "mountinfo:fstype", "%s is a stacking file system: statx shows the atomic write limits "
			      "of the file system below it, but %s's own files do not accept RWF_ATOMIC (the kernel "
			      "fails such writes with EOPNOTSUPP); write to the file system below it directly", fs->name,
			      fs->name);
	}
	/*
	 * Linux 7.3 still reports atomic limits for such a file and accepts RWF_ATOMIC on
	 * it, but writes it through the page cache: ext4's journal logs it block by block.
	 */
	if (file_without_direct_io(fs))
		return reason(v, "statx:stx_dio_offset_align", NO_DIRECT_IO_WHY ", and RWF_ATOMIC writes are direct "
			      "writes: the kernel may still accept them, but writes them through the page cache (ext4's "
			      "journal logs them block by block), so none is claimed untorn whatever statx's atomic "
			      "limits say");
	/* ext4 has only the device's atomic writes: a device without them answers for the directory */
	if (fs && p->target_type == LCLOUD_TARGET_DIRECTORY && streq(fs_type(fs), "ext4") &&
	    (has_note(p, NOTE_NEEDS_WRITE_ACCESS) || has_note(p, NOTE_TMPFILE_REFUSED))) {
		int dev = stack_below_partitions(p, top, LCLOUD_LAYER_DISK, NULL, NULL);
		uint64_t dev_max;

		if (dev >= 0 && layer_get_bytes(&p->layers[dev], FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, &dev_max) > 0 &&
		    !dev_max)
			return reason(v, "sysfs:queue/atomic_write_unit_max_bytes", "%s has no hardware atomic writes "
				      "(atomic_write_unit_max_bytes 0), and ext4 has no others: RWF_ATOMIC does not work "
				      "on its files", p->layers[dev].name);
	}
	if (fs && p->target_type == LCLOUD_TARGET_DIRECTORY && has_note(p, NOTE_NEEDS_WRITE_ACCESS))
		return unknown(v, "statx", "could not create a temporary file in the directory, and file systems report "
			       "atomic write limits only for files: run as a user who may write there (e.g. with "
			       "sudo), or check a file in the directory instead");
	/* refused for another reason than permission: sudo would not help */
	if (fs && p->target_type == LCLOUD_TARGET_DIRECTORY && has_note(p, NOTE_TMPFILE_REFUSED))
		return unknown(v, "statx", "the file system refused a temporary file in the directory (read-only, full, "
			       "immutable, or without O_TMPFILE; the tmpfile-refused note of 'lcloudctl probe' names the "
			       "error), and file systems report atomic write limits only for files: check a file in the "
			       "directory instead");
	umax = fact(src, FACT_STX_ATOMIC_WRITE_UNIT_MAX);
	attr = fact(src, FACT_STX_ATTR_WRITE_ATOMIC);
	if (!fs && top >= 0 && !umax)
		return rwf_atomic_from_queue(p, top, v);
	if (!umax && src && fact_unread(src, FACT_STX_ATOMIC_WRITE_UNIT_MAX))
		return unknown(v, "statx", "statx's atomic write limits could not be read (%s)",
			       fact_unread(src, FACT_STX_ATOMIC_WRITE_UNIT_MAX)->reason);
	if (!umax && src && layer_fact(src, FACT_STX_ATOMIC_WRITE_UNIT_MAX))
		return reason(v, "statx", "the kernel reports no atomic write limits here (statx "
			      "STATX_WRITE_ATOMIC unset: no support for this %s, or a kernel before 6.11)",
			      fs ? "file" : "device");
	if (!umax)
		return reason(v, "statx", "no statx reading of atomic write limits for this target");
	/* reported with unit max (STATX_WRITE_ATOMIC): present whenever it is */
	unit_min = 0;
	(void)layer_get_bytes(src, FACT_STX_ATOMIC_WRITE_UNIT_MIN, &unit_min);
	unit_max = umax->u64;
	if (!unit_max || (attr && !attr->u64) || (fs && !attr))
		return reason(v, "statx", "statx: atomic writes are not supported for this %s (unit max %" PRIu64
			      "%s)", fs ? "file on this file system" : "device", unit_max,
			      fs && fs->name[0] ? "" : "");
	v->max_untorn = pow2_floor(unit_max);
	v->min_untorn = unit_min;
	v->alignment = 0;
	r = reason(v, "statx", "statx: RWF_ATOMIC writes of %" PRIu64 " to %" PRIu64 " bytes (powers of two, "
		   "naturally aligned, one segment) are untorn or fail: the kernel guarantees it", unit_min, unit_max);
	if (r < 0)
		return r;
	if (fs) {
		r = apply_live_confirmation(fs, v, &confirmed);
		if (r != 0)
			return r < 0 ? r : 0;
		if (!confirmed && !in_list(fs_type(fs), atomic_fs, ARRAY_SIZE(atomic_fs))) {
			const struct lcloud_fact *unrun = fact_unread(fs, FACT_LIVE_RWF_ATOMIC_MAX_BYTES);

			v->max_untorn = 0;
			v->min_untorn = 0;
			if (unrun)
				return unknown(v, "live:pwritev2(RWF_ATOMIC)", "%s is not a file system known to honour "
					       "its statx atomic write limits (XFS and ext4 are), and the live RWF_ATOMIC "
					       "write that would confirm them was not done: %s", fs->name, unrun->reason);
			return unknown(v, "mountinfo:fstype", "%s is not a file system known to honour its statx atomic "
				       "write limits (XFS and ext4 are): confirm them with a live write (lcloudctl check "
				       "does one by default; LCLOUD_PROBE_CONFIRM_ATOMIC in the library)", fs->name);
		}
	}
	if (!fs)
		device_boundary(p, top, v);
	return classify_hardware(p, fs, src, top, v);
}

