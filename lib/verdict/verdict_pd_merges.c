/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plain_direct's merge rule. The block layer merges writes in flight that
 * are neighbours on a disk into one request, unless the disk's
 * queue/nomerges is 2; it never grows a request past the disk's
 * max_sectors_kb, nor across one of its chunk_sectors edges (Linux 7.3,
 * block/blk-merge.c: ll_back_merge_fn, ll_front_merge_fn and
 * ll_merge_requests_fn refuse a merge whose request would exceed
 * blk_rq_get_max_sectors(), which for a plain write is max_sectors bounded
 * by the chunk edge). A device keeps a command whole only up to its
 * promise, inside its boundaries and, where the promise asks it, aligned to
 * the command's own size; a merged command that breaks any of these keeps
 * each logical block whole and nothing more (under a promise per physical
 * block, each whole block it covers). So merges leave untorn: writes of one
 * block; a write of exactly max_sectors_kb, which no merge can grow; one
 * whole block of a per-block promise; and every write the promise covers
 * when no merged command can break it. The sizes between are "no".
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
#include "verdict_plain_direct.h"

uint64_t pd_sizes_up_to(uint64_t x)
{
	/* bit k stands for 2^k bytes: the sizes up to 2^k are the k + 1 lowest bits */
	return x ? (pow2_floor(x) << 1) - 1 : 0;
}

/* What is wrong with a merged command under promise PR, for the reason. */
static void merge_hazard(const struct promise *pr, bool larger, bool crosses, char *buf, size_t size)
{
	int n = 0;

	buf[0] = '\0';
	if (larger)
		n += snprintf(buf + n, size - (size_t)n, ", more than the %" PRIu64 " bytes the device keeps whole,",
			      pr->bytes);
	if (crosses && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, " and two writes on either side of one of the device's "
			      "%" PRIu64 "-byte atomic boundaries make a command that crosses it,", pr->boundary);
	if (pr->natural && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " and the promise covers a command only when it is aligned to its "
			 "own size, which a merged one need not be,");
}

int pd_merges(const struct lcloud_probe *p, int leaf, const struct promise *pr, uint64_t floor,
	      struct lcloud_verdict *v, uint64_t *ok, uint64_t *sizes, int *ret_reason)
{
	const struct lcloud_layer *d = &p->layers[leaf];
	const struct lcloud_fact *nomerges = fact(d, FACT_NOMERGES);
	uint64_t cap = 0, chunk = 0, cap_point, block_point;
	/* unread: not known to be small */
	bool has_cap = layer_get_bytes(d, FACT_MAX_SECTORS_KB, &cap) > 0 && cap;
	/* a merge never crosses a chunk edge: boundaries that all fall on chunk edges stay uncrossed */
	bool chunks_keep = pr->boundary && layer_get_bytes(d, FACT_CHUNK_SECTORS, &chunk) > 0 && chunk &&
			   pr->boundary % chunk == 0 && pr->boundary_offset % chunk == 0;
	bool crosses = pr->boundary && !chunks_keep, larger = !has_cap || cap > pr->bytes;
	uint64_t lba = pr->lba ? pr->lba : 512;
	char hazard[400], per[160];
	int r;

	*ret_reason = -1;
	*sizes = pd_sizes_up_to(*ok);
	/* a floor below the block: a dm-crypt sector spans blocks, and a torn one decrypts as garbage */
	snprintf(per, sizeof(per), floor < lba ? "%" PRIu64 "-byte block, less than a dm-crypt sector above it, "
		 "which a tear inside garbles whole" : "%" PRIu64 "-byte block", lba);

	if (*ok <= floor)
		return 0;
	if (!larger && !crosses && !pr->natural) {
		if (!chunks_keep)
			return 0; /* no merged command is larger than the promise, and there is no boundary */
		return reason(v, "sysfs:queue/chunk_sectors", "%s: every one of the device's %" PRIu64 "-byte atomic "
			      "boundaries is an edge of its %" PRIu64 "-byte chunks (chunk_sectors), which the block "
			      "layer never merges across, and no merged command exceeds max_sectors_kb (%" PRIu64 " KiB), "
			      "within the %" PRIu64 " bytes the device keeps whole", d->name, pr->boundary, chunk,
			      cap / 1024, pr->bytes);
	}
	if (nomerges && nomerges->u64 == 2)
		return reason(v, "sysfs:queue/nomerges", "%s merges no writes (queue/nomerges 2), so each write "
			      "reaches the device as its own command; this rests on that setting, which the kernel "
			      "resets when the disk appears again (a udev rule setting ATTR{queue/nomerges}=\"2\" "
			      "keeps it)", d->name);
	if (!nomerges) {
		*ok = floor;
		*sizes = pd_sizes_up_to(floor);
		return reason(v, "sysfs:queue/nomerges", "%s: queue/nomerges could not be read, so whether the block "
			      "layer merges neighbouring writes into one command larger than the %" PRIu64 " bytes the "
			      "device keeps whole is unknown: only each %s is sure to be untorn", d->name, pr->bytes, per);
	}
	merge_hazard(pr, larger, crosses, hazard, sizeof(hazard));
	if (has_cap)
		r = reason(v, "sysfs:queue/nomerges", "%s merges neighbouring writes in flight together into one "
			   "command of up to %" PRIu64 " KiB (queue/nomerges %" PRIu64 ", max_sectors_kb %" PRIu64 ")%s "
			   "so such a command is untorn only per %s; echo 2 > /sys/block/%s/queue/nomerges keeps each "
			   "write its own command%s, and a udev rule keeps that across reboots",
			   d->name, cap / 1024, nomerges->u64, cap / 1024, hazard, per, d->name,
			   crosses || pr->natural ? "" : " (as does a max_sectors_kb no larger than the promise)");
	else
		r = reason(v, "sysfs:queue/nomerges", "%s merges neighbouring writes in flight together into one "
			   "command (queue/nomerges %" PRIu64 "), and how large one can grow (max_sectors_kb) could not "
			   "be read: such a command is untorn only per %s; echo 2 > /sys/block/%s/queue/nomerges keeps "
			   "each write its own command, and a udev rule keeps that across reboots",
			   d->name, nomerges->u64, per, d->name);
	if (r < 0)
		return r;
	*ret_reason = (int)v->n_reasons - 1;

	/* a write of max_sectors_kb itself: any merge would make a request larger than that, so none happens */
	cap_point = has_cap && is_power_of_2(cap) && cap > floor && cap <= *ok ? cap : 0;
	/* one whole aligned block of a promise per physical block: whole in whatever command carries it */
	block_point = pr->whole_block > floor && pr->whole_block <= *ok ? pr->whole_block : 0;
	*sizes = pd_sizes_up_to(floor) | cap_point | block_point;
	*ok = floor;
	if (cap_point) {
		*ok = cap_point;
		r = reason(v, "sysfs:queue/max_sectors_kb", "a %" PRIu64 "-byte write, max_sectors_kb itself, is never "
			   "merged on %s: Linux refuses every merge whose request would exceed max_sectors_kb (block/"
			   "blk-merge.c: ll_back_merge_fn, ll_front_merge_fn, ll_merge_requests_fn), so it reaches the "
			   "device as a command of its own, which the device keeps whole; a smaller write of more than "
			   "%" PRIu64 " bytes can be merged with a neighbour and is not untorn, and a larger one is split "
			   "at max_sectors_kb", cap, d->name, floor);
		if (r < 0)
			return r;
	}
	if (block_point) {
		*ok = block_point > *ok ? block_point : *ok;
		r = reason(v, pr->evidence, "a write of one whole aligned %" PRIu64 "-byte block stays whole on %s in "
			   "any command that carries it, merged or not: the promise is per aligned block, and such a "
			   "command is made of whole aligned blocks where it carries this write; a smaller write of "
			   "more than %" PRIu64 " bytes can share a block with a neighbour's part and is not untorn",
			   block_point, d->name, floor);
		if (r < 0)
			return r;
	}
	return 0;
}
