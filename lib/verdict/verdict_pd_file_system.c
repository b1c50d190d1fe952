/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plain_direct's file system rule: direct I/O must be direct (not through
 * the page cache), the data must be on the stack that was followed, and a
 * page must stay in one extent: one block or bigalloc cluster, and no edge
 * of the file's own extents inside it.
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
#include "verdict_plain_direct.h"

/* File systems that write a file's O_DIRECT data to the one device they are mounted from. */
static const char *const single_device_fs[] = { "xfs", "ext4", "ext3", "ext2" };

/*
 * Are the file's O_DIRECT writes direct, does the device stack below the
 * file system hold its data, and does the file system place that data
 * where the verdict can follow it?
 * Returns 1 when that decided the verdict (no or unknown, with a reason),
 * 0 to go on, -ENOMEM.
 */
int pd_data_placement(const struct lcloud_layer *fs, bool has_stack, struct lcloud_verdict *v)
{
	const struct lcloud_fact *f;
	bool realtime = false;
	int r;

	if ((f = fact_unread(fs, FACT_REALTIME))) {
		r = unknown(v, f->source, "%s", f->reason);
		return r < 0 ? r : 1;
	}
	if (layer_get_bool(fs, FACT_REALTIME, &realtime) > 0 && realtime && (f = fact_unread(fs, FACT_REALTIME_DEVICE))) {
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
		if (streq(fs_type(fs), single_device_fs[i]))
			return 0;
	if (streq(fs_type(fs), "btrfs")) {
		if ((f = fact(fs, FACT_BTRFS_DEVICES)) && f->u64 == 1)
			return 0;
		if (f)
			r = reason(v, f->source, "the btrfs file system spans %" PRIu64 " devices and may put the "
				   "file's data on any of them, while the device stack shown is only the one the mount "
				   "names: no promise is claimed for it", f->u64);
		else
			r = unknown(v, "sysfs:fs/btrfs/devices", "btrfs may spread a file's data over several devices, "
				    "and %s", fact_unread(fs, FACT_BTRFS_DEVICES) ? fact_unread(fs, FACT_BTRFS_DEVICES)->reason
									 : "which devices this one spans was not read");
		return r < 0 ? r : 1;
	}
	r = unknown(v, "mountinfo:fstype", "liblcloud does not know how %s places a file's O_DIRECT writes on its "
		    "device (it follows XFS, ext2/3/4 and single-device btrfs), so none is claimed untorn; "
		    "use the block device or one of those file systems",
		    fact(fs, FACT_FSTYPE) ? fs->name : "this file system (its mount was not found)");
	return r < 0 ? r : 1;
}

/*
 * A write smaller than the file's direct I/O alignment is not direct: XFS
 * takes it through the page cache (a file that shares or has shared blocks
 * with another, stx_dio_offset_align = its allocation unit), where
 * writeback may join it with its neighbours into a command larger than the
 * device's promise; elsewhere the kernel refuses it. Such sizes are none.
 */
int pd_direct_io_floor(const struct lcloud_layer *fs, uint64_t lba, struct lcloud_verdict *v)
{
	const struct lcloud_fact *f = fs ? fact(fs, FACT_STX_DIO_OFFSET_ALIGN) : NULL;

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

/* The file system must keep a page in one extent; a file's existing extents must not cut it. */
int pd_file_system(const struct lcloud_probe *p, const struct lcloud_layer *fs, struct lcloud_verdict *v,
		   struct pd_state *st)
{
	int r;

	if (fs && st->limit) {
		const char *what = fact(fs, FACT_CLUSTER_SIZE) ? "cluster size" : "block size";
		uint64_t unit = 0;

		/* the cluster when there is one, else the block */
		if (layer_get_bytes(fs, FACT_CLUSTER_SIZE, &unit) <= 0)
			(void)layer_get_bytes(fs, FACT_BLOCK_SIZE, &unit);
		/* neither read (statfs failed): a block is no smaller than 512 bytes, and no more is sure */
		if (!unit && st->limit > 512) {
			const char *why = layer_unread_reason(fs, FACT_BLOCK_SIZE);

			st->limit = 512;
			r = unknown(v, "statfs:f_bsize", "%s: its block size could not be read (%s), so whether it keeps "
				    "a write of more than 512 bytes in one extent is unknown", fs->name, why ? why : "not read");
			if (r < 0)
				return r;
		}

		if (fact_unread(fs, FACT_CLUSTER_SIZE) && unit && unit < st->limit) {
			r = unknown(v, "ext4:superblock:s_log_cluster_size", "%s: its cluster size (bigalloc) could not be "
				    "read (%s), so whether it keeps writes of more than its %" PRIu64 "-byte blocks in one "
				    "extent is unknown; run as root", fs->name, fact_unread(fs, FACT_CLUSTER_SIZE)->reason,
				    unit);
			if (r < 0)
				return r;
		}

		if (unit && unit < st->limit) {
			st->limit = pow2_floor(unit);
			if (!fact_unread(fs, FACT_CLUSTER_SIZE))
				st->definite = min_u64(st->definite, st->limit);
			r = reason(v, fact(fs, FACT_CLUSTER_SIZE) ? "ext4:superblock:s_log_cluster_size" : "statfs:f_bsize",
				   "%s allocates in %" PRIu64 "-byte units (%s): a larger write can span two extents and "
				   "reach the device as two writes; %s", fs->name, unit, what,
				   streq(fs_type(fs), "ext4") ? "ext4 with bigalloc (mkfs.ext4 -O bigalloc -C SIZE) allocates "
							       "larger clusters"
							     : "a file system with larger blocks keeps larger pages whole");
			if (r < 0)
				return r;
		}
		st->natural = true;
	}

	/*
	 * A file's existing extents: direct I/O maps a write one extent at a
	 * time, so a page across an edge between two (or an extent and a hole)
	 * st->leaves as two writes. ext4 bigalloc maps files in blocks inside its
	 * clusters: a cluster written in part has such an edge (a write log
	 * showed a 16 KiB write there reach the device as 4 KiB and 12 KiB).
	 */
	if (fs && st->limit && p->target_type == LCLOUD_TARGET_REGULAR) {
		uint64_t edges = 0, block = 0, worst = 0;

		/* edges unread are caught below; a block size not read caps nothing */
		(void)layer_get_bytes(fs, FACT_EXTENT_EDGE_ALIGNMENT, &edges);
		(void)layer_get_bytes(fs, FACT_BLOCK_SIZE, &block);
		(void)layer_get_bytes(fs, FACT_EXTENT_EDGE_WORST, &worst);

		if (fact_unread(fs, FACT_EXTENT_EDGE_ALIGNMENT) || !fact(fs, FACT_EXTENTS)) {
			/* extents are made of blocks: a write inside one block crosses no edge */
			st->limit = block && block < st->limit ? pow2_floor(block) : (block ? st->limit : 0);
			r = unknown(v, "ioctl:FS_IOC_FIEMAP", "this file's extent map could not be read (%s), so whether a "
				    "write larger than a %" PRIu64 "-byte block crosses from one extent into another is "
				    "unknown; run as a user who can read the file",
				    fact_unread(fs, FACT_EXTENT_EDGE_ALIGNMENT) ? fact_unread(fs, FACT_EXTENT_EDGE_ALIGNMENT)->reason
									     : "not read", block);
			if (r < 0)
				return r;
		} else if (edges && edges < st->limit) {
			st->limit = pow2_floor(edges);
			st->definite = min_u64(st->definite, st->limit);
			r = reason(v, "ioctl:FS_IOC_FIEMAP", "in this file two extents (or an extent and a hole) meet at "
				   "byte %" PRIu64 ", which is aligned to %" PRIu64 " bytes only: a larger write across it "
				   "is mapped in two pieces and reaches the device as two writes (a write of less than a "
				   "cluster, a punched hole or a sparse copy st->leaves such edges); writing the file again in "
				   "whole aligned pages (e.g. a copy with 'cp --sparse=never') removes them",
				   worst, edges);
			if (r < 0)
				return r;
		} else if (block && block < st->limit) {
			r = reason(v, "ioctl:FS_IOC_FIEMAP", "every extent of this file starts and ends on a %" PRIu64
				   "-byte edge; this rests on the file staying so: a write of less than a page into a "
				   "hole, a punched hole or a sparse copy makes later writes over that page reach the "
				   "device in pieces", st->limit);
			if (r < 0)
				return r;
		}
	}
	return 0;
}
