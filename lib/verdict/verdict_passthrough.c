/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * passthrough: NVMe commands liblcloud sends itself through io_uring, within
 * the namespace's power-fail atomic size and boundaries, which it enforces
 * because NVMe has no atomic flag.
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

/* ---- passthrough ---------------------------------------------------------- */

/*
 * A passthrough write is one command, and the kernel refuses a command
 * larger than the namespace's transfer limit (max_hw_sectors_kb, from MDTS)
 * rather than split it: a promise above that limit holds for no write.
 * A limit not read is no absence of a limit: above one logical block
 * (LBA), which every command can carry, the answer is then unknown.
 */
static int cap_at_transfer_limit(const struct lcloud_layer *disk, uint64_t lba, struct lcloud_verdict *v)
{
	uint64_t max_bytes;
	int r = layer_get_bytes(disk, FACT_MAX_HW_SECTORS_KB, &max_bytes);

	if (r <= 0) {
		const char *why = r < 0 ? layer_unread_reason(disk, FACT_MAX_HW_SECTORS_KB) : "not provided";

		if (v->max_untorn <= lba)
			return 0;
		v->max_untorn = lba;
		return unknown(v, "sysfs:queue/max_hw_sectors_kb", "%s: its transfer limit (queue/max_hw_sectors_kb) "
			       "could not be read (%s), so whether the kernel takes a passthrough write of more than "
			       "one %" PRIu64 "-byte block is unknown", disk->name, why ? why : "unreadable", lba);
	}
	/* 0: the kernel states no limit, and refuses what it must */
	if (!max_bytes || max_bytes >= v->max_untorn)
		return 0;
	v->max_untorn = pow2_floor(max_bytes);
	return reason(v, "sysfs:queue/max_hw_sectors_kb", "%s takes commands of at most %" PRIu64 " KiB "
		      "(max_hw_sectors_kb, from the controller's MDTS): the kernel refuses a larger passthrough "
		      "write, so no larger one is untorn", disk->name, max_bytes / 1024);
}

int verdict_passthrough(const struct lcloud_probe *p, struct lcloud_verdict *v)
{
	const struct lcloud_layer *unread_start = NULL;
	int top = top_block(p), disk = -1;
	uint64_t start = 0, metadata = 0;
	struct promise pr;

	if (top < 0 || stack_first_layer(p, LCLOUD_LAYER_FILESYSTEM))
		return reason(v, "target:file", "passthrough writes address the namespace's blocks; a file's blocks "
			      "are placed by its file system: use rwf_atomic or plain_direct for files");
	/* a start unread: said "unknown" below, before any placement rests on it */
	disk = stack_below_partitions(p, top, LCLOUD_LAYER_DISK, &start, &unread_start);
	if (disk >= 0 && p->layers[disk].kind != LCLOUD_LAYER_DISK)
		disk = -1;
	if (disk < 0)
		return reason(v, "stack", "passthrough needs an NVMe namespace directly below the target, and %s is "
			      "a %s: NVMe commands cannot go through it", p->layers[top].name,
			      lcloud_layer_kind_to_string(p->layers[top].kind));
	if (!stack_child_layer(p, disk, LCLOUD_LAYER_NVME))
		return reason(v, "stack", "%s is not an NVMe namespace: passthrough sends NVMe commands, which "
			      "only an NVMe namespace (/dev/nvmeXnY, /dev/ngXnY) takes", p->layers[disk].name);
	if (unread_start)
		return unknown(v, "sysfs:start", "%s: where the partition starts could not be read, so where its "
			       "writes fall against the namespace's atomic boundaries is unknown", unread_start->name);
	device_promise(p, disk, true, &pr);
	if (!pr.bytes)
		return unknown(v, "nvme", "the namespace's Identify data could not be read (%s): without its "
			       "power-fail atomic size no passthrough write is known to be untorn; %s",
			       has_note(p, NOTE_NVME_NOT_CAPTURED) ? "the captured tree has none"
								   : "see the notes; NVMe admin commands need root",
			       has_note(p, NOTE_NVME_NOT_CAPTURED) ? "capture it too, or run on the live system as root"
								   : "run as root");
	/* read with the power-fail size: present whenever a promise is */
	if (layer_get_bytes(stack_child_layer(p, disk, LCLOUD_LAYER_NVME), FACT_LBA_METADATA_SIZE, &metadata) > 0 && metadata)
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
	return cap_at_transfer_limit(&p->layers[disk], pr.lba, v);
}

