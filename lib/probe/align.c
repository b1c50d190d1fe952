/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stack checks that users get wrong. A partition or dm target that starts off
 * the device's physical block makes every block written straddle two physical
 * blocks, and the kernel refuses atomic writes on a partition whose start is
 * not a multiple of the atomic write unit minimum and boundary
 * (bdev_can_atomic_write, include/linux/blkdev.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysmacros.h>

#include "align.h"
#include "stack_walk.h"
#include "util.h"

static int child_with_dev(const struct lcloud_probe *p, int index, unsigned int major, unsigned int minor)
{
	for (unsigned int i = 0; i < p->n_layers; i++) {
		dev_t devno;

		if (p->layers[i].parent == index && layer_get_devno(&p->layers[i], &devno) > 0 &&
		    devno == makedev(major, minor))
			return (int)i;
	}
	return -1;
}

/*
 * WHAT starts at OFFSET bytes on the device at layer DEV; note every
 * reference size the offset is not a multiple of.
 */
static int check_offset(struct lcloud_probe *p, int layer, const char *what, enum note_code code,
			uint64_t offset, int dev)
{
	const struct lcloud_layer *d = &p->layers[dev];
	uint64_t physical = 0, awu_max = 0, awu_min = 0, boundary = 0, kernel_align;
	bool flagged = false;
	int r;

	/* a size absent or unread is one this note cannot check against: it stays 0, unchecked */
	(void)layer_get_bytes(d, FACT_PHYSICAL_BLOCK_SIZE, &physical);
	(void)layer_get_bytes(d, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, &awu_max);
	(void)layer_get_bytes(d, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, &awu_min);
	(void)layer_get_bytes(d, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, &boundary);
	/* the kernel's own rule for partitions (bdev_can_atomic_write, include/linux/blkdev.h) */
	kernel_align = awu_min > boundary ? awu_min : boundary;

	if (physical && offset % physical) {
		r = report_note(p, code, layer,
				"%s starts at byte %" PRIu64 " of %s, not a multiple of its physical block "
				"size %" PRIu64 " (%" PRIu64 " bytes past a boundary): writes of a physical "
				"block or more straddle two physical blocks, which the device updates by "
				"read-modify-write and a power cut can tear; recreate it starting at a "
				"multiple of 1 MiB",
				what, offset, d->name, physical, offset % physical);
		if (r < 0)
			return r;
		flagged = true;
	}
	if (awu_min && kernel_align && offset % kernel_align) {
		/* the kernel's rule is for partitions; a dm target just lands off the grid */
		r = report_note(p, code, layer,
				"%s starts at byte %" PRIu64 " of %s, not a multiple of %" PRIu64 " (the larger of "
				"its atomic write unit minimum and boundary): %s; recreate it starting at a "
				"multiple of %" PRIu64,
				what, offset, d->name, kernel_align,
				code == NOTE_PARTITION_MISALIGNED ? "the kernel turns off atomic writes (RWF_ATOMIC) on it"
								   : "atomic writes through it land off the device's atomic grid",
				kernel_align);
		if (r < 0)
			return r;
		flagged = true;
	} else if (awu_max > awu_min && offset % awu_max) {
		r = report_note(p, code, layer,
				"%s starts at byte %" PRIu64 " of %s, not a multiple of its atomic write unit "
				"maximum %" PRIu64 ": a %" PRIu64 "-byte write aligned in it is not aligned on the "
				"device, which devices that need natural alignment (cloud torn-write "
				"prevention, SCSI atomic alignment) do not treat as atomic",
				what, offset, d->name, awu_max, awu_max);
		if (r < 0)
			return r;
		flagged = true;
	}
	if (!flagged && offset % ALIGN_PAGE_BYTES) {
		r = report_note(p, code, layer,
				"%s starts at byte %" PRIu64 " of %s, not a multiple of 4096 (%" PRIu64
				" bytes past): 4 KiB file system blocks and database pages on it straddle "
				"the device's 4 KiB units; recreate it starting at a multiple of 1 MiB",
				what, offset, d->name, offset % ALIGN_PAGE_BYTES);
		if (r < 0)
			return r;
	}
	return 0;
}

static int check_partition(struct lcloud_probe *p, int index)
{
	const struct lcloud_layer *l = &p->layers[index];
	const struct lcloud_fact *start = layer_fact(l, FACT_START_BYTES);
	uint64_t align_off = 0; /* absent or unread: nothing to report */
	char what[96];
	int disk = stack_below_partitions(p, index, STACK_ANY_KIND, NULL, NULL);
	int r;

	(void)layer_get_bytes(l, FACT_ALIGNMENT_OFFSET, &align_off);

	if (!start || start->state != LCLOUD_FACT_PRESENT || disk < 0)
		return 0;
	snprintf(what, sizeof(what), "partition %s", l->name);
	r = check_offset(p, index, what, NOTE_PARTITION_MISALIGNED, start->u64, disk);
	if (r < 0 || !align_off)
		return r;
	return report_note(p, NOTE_PARTITION_MISALIGNED, index,
			   "the kernel reports alignment_offset %" PRIu64 " for partition %s: its start "
			   "is off the device's natural alignment", align_off, l->name);
}

/* dm "linear" segments: "<start> <length> linear <major>:<minor> <offset>". */
static int check_dm(struct lcloud_probe *p, int index)
{
	const struct lcloud_layer *l = &p->layers[index];

	for (unsigned int i = 0; i < l->n_dm_segments; i++) {
		const struct layer_dm_segment *seg = &l->dm_segments[i];
		char what[160];
		uint64_t byte, part_start;
		int dev, r;

		if (!seg->linear)
			continue;
		dev = child_with_dev(p, index, seg->major, seg->minor);
		if (dev < 0)
			continue;
		/*
		 * A target on a partition lands at the partition's start plus its offset on the disk;
		 * a start unknown adds 0: checked as if at the disk's start, as before.
		 */
		dev = stack_below_partitions(p, dev, STACK_ANY_KIND, &part_start, NULL);
		byte = seg->offset * 512 + part_start;
		if (dev < 0)
			continue;
		snprintf(what, sizeof(what), "dm target %u of %s (its sector %" PRIu64 ", via %u:%u + %" PRIu64 " sectors)",
			 i, l->name, seg->start, seg->major, seg->minor, seg->offset);
		r = check_offset(p, index, what, NOTE_DM_TARGET_MISALIGNED, byte, dev);
		if (r < 0)
			return r;
	}
	return 0;
}

static int check_loop(struct lcloud_probe *p, int index)
{
	const struct lcloud_layer *l = &p->layers[index];
	uint64_t offset = 0;

	/* absent or unread: no offset to check */
	(void)layer_get_bytes(l, FACT_LOOP_OFFSET, &offset);
	if (offset % ALIGN_PAGE_BYTES == 0)
		return 0;
	return report_note(p, NOTE_LOOP_OFFSET_MISALIGNED, index,
			   "loop device %s maps its backing file from byte %" PRIu64 ", not a multiple "
			   "of 4096: its blocks straddle the backing file's pages", l->name, offset);
}

int align_check_stack(struct lcloud_probe *p)
{
	for (unsigned int i = 0; i < p->n_layers; i++) {
		int r = 0;

		switch (p->layers[i].kind) {
		case LCLOUD_LAYER_PARTITION:
			r = check_partition(p, (int)i);
			break;
		case LCLOUD_LAYER_DM:
			r = check_dm(p, (int)i);
			break;
		case LCLOUD_LAYER_LOOP:
			r = check_loop(p, (int)i);
			break;
		default:
			break;
		}
		if (r < 0)
			return r;
	}
	return 0;
}
