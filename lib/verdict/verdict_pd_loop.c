/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plain_direct on a loop device. With direct I/O (loop/dio 1) each request
 * of the loop's queue reaches its backing file as one direct write at the
 * loop's offset (Linux 7.3, drivers/block/loop.c: lo_rw_aio hands the
 * request's pages to the file's write_iter with IOCB_DIRECT), so what holds
 * for an O_DIRECT write to that file holds for it: the file's extents, its
 * file system's blocks and the device's promise, which is the backing
 * probe's own plain_direct verdict. The loop's queue then merges and splits
 * as any disk's (verdict_pd_merges.c, verdict_pd_splits.c): a merged request
 * is a larger write to the file, which keeps a smaller one whole only where
 * it lies in one logical block of the device below. Without direct I/O the
 * writes go through the file's page cache, and writeback sends them to the
 * device in pieces: none is untorn.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "report.h"
#include "util.h"
#include "verdict_internal.h"
#include "verdict_plain_direct.h"

/* The smallest logical block of the devices at the bottom of the backing probe's stack; 0 when none was read. */
static uint64_t backing_block(const struct lcloud_probe *b)
{
	int leaves[16], top = top_block(b), n;
	uint64_t least = 0;

	if (top < 0)
		return 0;
	n = leaf_disks(b, top, leaves, (int)ARRAY_SIZE(leaves));
	for (int i = 0; i < n && i < (int)ARRAY_SIZE(leaves); i++) {
		const struct lcloud_layer *nvme = stack_child_layer(b, leaves[i], LCLOUD_LAYER_NVME);
		uint64_t lbs = 0;

		/* the kernel's view of the disk, else its namespace's format */
		if ((layer_get_bytes(&b->layers[leaves[i]], FACT_LOGICAL_BLOCK_SIZE, &lbs) <= 0 || !lbs) &&
		    (layer_get_bytes(nvme, FACT_LBA_SIZE, &lbs) <= 0 || !lbs))
			return 0;
		least = least && least < lbs ? least : lbs;
	}
	return least;
}

/* Why the loop's backing file was not followed, as the facts and notes of loop layer L say. */
static int not_followed(const struct lcloud_probe *p, const struct lcloud_layer *l, struct lcloud_verdict *v)
{
	const char *dev = NULL, *why = layer_unread_reason(l, FACT_LOOP_BACKING_DEV);
	const struct lcloud_fact *f = layer_fact(l, FACT_LOOP_BACKING_DEV);
	unsigned int maj, min;
	int r;

	if (why || (f && f->state != LCLOUD_FACT_PRESENT)) {
		r = unknown(v, "ioctl:LOOP_GET_STATUS64", "%s: what it is bound to could not be read (%s), so the file "
			    "its direct writes reach is unknown; run as root", l->name,
			    why ? why : f->reason ? f->reason : "not read");
		return r < 0 ? r : PD_LOOP_UNKNOWN;
	}
	if (layer_get_string(l, FACT_LOOP_BACKING_DEV, &dev) > 0 && dev && sscanf(dev, "%u:%u", &maj, &min) == 2 &&
	    maj == 0) {
		r = reason(v, "ioctl:LOOP_GET_STATUS64", "%s does direct I/O to a backing file on a file system with no "
			   "block device (device %s: tmpfs, NFS, FUSE...): nothing below it promises untorn writes",
			   l->name, dev);
		return r < 0 ? r : PD_LOOP_NONE;
	}
	r = unknown(v, "loop:backing_file", "%s: the backing file it does direct I/O to could not be probed as the "
		    "one it is bound to (%s)", l->name,
		    has_note(p, NOTE_LOOP_BACKING_NOT_FOLLOWED) ? "the loop-backing-not-followed note of 'lcloudctl "
								 "probe' says why" : "it was not followed");
	return r < 0 ? r : PD_LOOP_UNKNOWN;
}

int pd_loop_promise(const struct lcloud_probe *p, int leaf, struct lcloud_verdict *v, struct promise *pr,
		    uint64_t *sizes, uint64_t *definite, int *gap_reason)
{
	const struct lcloud_layer *l = &p->layers[leaf];
	const struct lcloud_verdict *bp;
	const char *release, *backing = NULL;
	uint64_t block, floor = 0;
	bool dio = false;
	int k, r;

	memset(pr, 0, sizeof(*pr));
	*sizes = 0;
	*definite = UINT64_MAX;
	*gap_reason = -1;
	if (!fact(l, FACT_LOOP_DIO)) {
		r = reason(v, "sysfs:loop/dio", "%s is a loop device whose loop/dio could not be read (kernels before 4.10 "
			   "have none), so whether it writes to its backing file directly is not known: none is claimed "
			   "untorn", l->name);
		return r < 0 ? r : PD_LOOP_NONE;
	}
	if (layer_get_bool(l, FACT_LOOP_DIO, &dio) <= 0 || !dio) {
		r = reason(v, "sysfs:loop/dio", "%s does buffered I/O to its backing file (loop/dio 0): its writes go "
			   "through the file's page cache, and writeback sends them to the device in pieces, so none is "
			   "untorn; losetup --direct-io=on makes it write directly", l->name);
		return r < 0 ? r : PD_LOOP_NONE;
	}
	k = followed_kernel(l, &release);
	if (k <= 0) {
		if (k < 0)
			r = unknown(v, "proc:sys/kernel/osrelease", "%s: which kernel runs it could not be told "
				    "(kernel_release: %s), and liblcloud follows a loop device's direct writes only as "
				    "Linux %d.%d and later make them", l->name, release, FOLLOWED_KERNEL_MAJOR,
				    FOLLOWED_KERNEL_MINOR);
		else
			r = reason(v, "proc:sys/kernel/osrelease", "%s: Linux %s runs it, and liblcloud follows a loop "
				   "device's direct writes only as Linux %d.%d and later make them (whose code it was "
				   "checked against), so no promise is claimed", l->name, release, FOLLOWED_KERNEL_MAJOR,
				   FOLLOWED_KERNEL_MINOR);
		return r < 0 ? r : k < 0 ? PD_LOOP_UNKNOWN : PD_LOOP_NONE;
	}
	if (!l->backing || !l->backing->verdicts)
		return not_followed(p, l, v);
	bp = &l->backing->verdicts[LCLOUD_PATH_PLAIN_DIRECT - 1];
	(void)layer_get_string(l, FACT_LOOP_BACKING_FILE, &backing);
	if (!backing)
		backing = l->backing->path;
	/* the backing file's own reasons are this verdict's evidence */
	if (bp->merge_gap_below)
		*gap_reason = (int)(v->n_reasons + bp->merge_gap_reason);
	for (unsigned int i = 0; i < bp->n_reasons; i++) {
		r = reason(v, bp->reasons[i].evidence, "backing file %s: %s", backing, bp->reasons[i].text);
		if (r < 0)
			return r;
	}
	if (bp->unknown) {
		r = unknown(v, bp->reasons[bp->unknown_reason].evidence, "backing file %s: %s", backing,
			    bp->reasons[bp->unknown_reason].text);
		if (r < 0)
			return r;
	}
	*definite = bp->no_above;
	if (!bp->max_untorn) {
		r = reason(v, "loop:backing_file", "%s writes directly to its backing file %s, where no plain O_DIRECT "
			   "write is untorn", l->name, backing);
		return r < 0 ? r : bp->unknown ? PD_LOOP_UNKNOWN : PD_LOOP_NONE;
	}
	for (uint64_t s = 512; s && s <= bp->max_untorn; s <<= 1)
		if (lcloud_verdict_check_size(bp, s) == LCLOUD_ANSWER_UNTORN)
			*sizes |= s;
	/* a merged request is a larger write to the file: a smaller one in it stays whole within one device block */
	block = backing_block(l->backing);
	for (uint64_t s = 512; s && s <= block && (*sizes & s); s <<= 1)
		floor = s;
	pr->bytes = bp->max_untorn;
	pr->natural = bp->alignment == 0;
	pr->lba = floor ? floor : bp->alignment ? bp->alignment : 512;
	pr->no_whole_lba = !floor;
	pr->boundary = bp->boundary;
	pr->boundary_offset = bp->boundary_offset;
	pr->evidence = "loop:backing_file";
	snprintf(pr->what, sizeof(pr->what), "%s writes each request directly to its backing file %s (loop/dio 1, "
		 "Linux %s: one direct write per request), where plain O_DIRECT writes are untorn up to %" PRIu64
		 " bytes%s", l->name, backing, release, bp->max_untorn,
		 bp->merge_gap_below ? ", not all sizes between (see the backing file's reasons)" : "");
	return PD_LOOP_PROMISE;
}
