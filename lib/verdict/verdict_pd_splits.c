/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plain_direct's split rule: the block layer splits a write at
 * max_sectors_kb, at chunk edges (chunk_sectors, md chunks), at dm segment
 * edges, and when its buffer needs more segments than the queue takes; a
 * write that leaves as two commands is not untorn whatever the disk promises.
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
	const uint64_t page = p->page_size;
	int r;

	for (unsigned int i = 0; i < p->n_layers && limit > 512; i++) {
		const struct lcloud_layer *l = &p->layers[i];
		const struct lcloud_fact *segs = fact(l, FACT_MAX_SEGMENTS), *seg_size = fact(l, FACT_MAX_SEGMENT_SIZE);
		const struct lcloud_fact *vbm = fact(l, FACT_VIRT_BOUNDARY_MASK);
		/* the kernel's default buffer alignment is 512 bytes (mask 511); not read, the page bounds it below */
		uint64_t dma_mask = 511, buf_align, per_page, cap;

		(void)layer_get_u64(l, FACT_DMA_ALIGNMENT, &dma_mask);
		buf_align = dma_mask + 1;

		if (!layer_kind_is_whole_device(l->kind))
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


/* dm-crypt's default write split in Linux 7.3 (DM_CRYPT_DEFAULT_MAX_WRITE_SIZE), and its bio's page limit */
#define DM_CRYPT_DEFAULT_MAX_WRITE 131072
#define BIO_MAX_VECS 256

/*
 * dm splits a write where its targets do (Linux 7.3): dm-stripe at its chunk
 * edges (dm_set_target_max_io_len, counted from the segment's start), and
 * dm-crypt above max_write_size (0: 128 KiB), at most BIO_MAX_VECS pages
 * (get_max_request_sectors; rounded down to its sector, which a power of two
 * up to it keeps). Lowers ST's limit with a reason; a max_write_size not read
 * leaves sizes above the crypt sector unknown.
 */
static int dm_target_splits(const struct lcloud_probe *p, const struct lcloud_layer *l, struct lcloud_verdict *v,
			    struct pd_state *st)
{
	int r;

	for (unsigned int s = 0; s < l->n_dm_segments; s++) {
		const struct layer_dm_segment *seg = &l->dm_segments[s];
		uint64_t cap = UINT64_MAX, param = 0;

		if (seg->stripes) {
			r = reason(v, "dm:table", "%s: dm-striped sends a write inside one %" PRIu64 "-byte chunk whole to "
				   "one of its %u members, at that member's offset plus whole chunks (Linux 7.3, "
				   "dm-stripe.c: stripe_map)", l->name, seg->chunk * 512, seg->stripes);
			if (r < 0)
				return r;
			cap = pow2_dividing(seg->chunk * 512);
			st->natural = true;
			if (cap < st->limit) {
				st->limit = cap;
				st->definite = min_u64(st->definite, cap);
				r = reason(v, "dm:table", "%s: dm-striped splits writes at its %" PRIu64 "-byte chunk edges, "
					   "and each chunk goes to one member: a write larger than %" PRIu64 " bytes reaches "
					   "two of them", l->name, seg->chunk * 512, cap);
				if (r < 0)
					return r;
			}
		}
		if (!seg->crypt)
			continue;
		r = reason(v, "dm:table", "%s: dm-crypt encrypts a write into one write of the same size at its offset "
			   "on %u:%u, in %" PRIu64 "-byte sectors (Linux 7.3, dm-crypt.c: one clone per write, "
			   "crypt_alloc_buffer)", l->name, seg->major, seg->minor, seg->crypt_sector);
		if (r < 0)
			return r;
		if (layer_get_bytes(l, FACT_DM_CRYPT_MAX_WRITE_SIZE, &param) <= 0) {
			const struct lcloud_fact *f = layer_fact(l, FACT_DM_CRYPT_MAX_WRITE_SIZE);

			if (st->limit > seg->crypt_sector) {
				st->limit = seg->crypt_sector;
				r = unknown(v, "sysfs:module/dm_crypt/parameters/max_write_size", "%s: dm-crypt's "
					    "max_write_size could not be read (%s), so above which size it splits a write "
					    "is unknown", l->name, f && f->reason ? f->reason : "not read");
				if (r < 0)
					return r;
			}
			continue;
		}
		cap = param ? param : DM_CRYPT_DEFAULT_MAX_WRITE;
		cap = pow2_floor(min_u64(cap, BIO_MAX_VECS * p->page_size));
		if (cap < st->limit) {
			st->limit = cap;
			st->definite = min_u64(st->definite, cap);
			r = reason(v, "sysfs:module/dm_crypt/parameters/max_write_size", "%s: dm-crypt splits writes above "
				   "%" PRIu64 " bytes (max_write_size %" PRIu64 "%s, at most %d pages), each part its own "
				   "encrypted write", l->name, cap, param, param ? "" : ": its default, 128 KiB",
				   BIO_MAX_VECS);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/*
 * The block layer splits writes larger than max_sectors_kb, and writes that
 * cross a chunk (chunk_sectors, md chunks) or a dm segment's edge: only
 * naturally aligned writes no larger than the chunk, and whose chunk edges
 * fall on multiples of their size in the target, stay whole; and a write
 * needing more segments than the queue takes is split too (segment_limit).
 */
int pd_splits(const struct lcloud_probe *p, struct lcloud_verdict *v, struct pd_state *st)
{
	int r;

	for (unsigned int i = 0; i < p->n_layers && st->limit; i++) {
		const struct lcloud_layer *l = &p->layers[i];
		uint64_t max_bytes = 0, chunk = 0, md_chunk = 0;
		/* a split st->limit not read: none of these, and "unknown" above one page just below */
		enum fact_id missing = !fact(l, FACT_MAX_SECTORS_KB) ? FACT_MAX_SECTORS_KB
				       : !fact(l, FACT_CHUNK_SECTORS) ? FACT_CHUNK_SECTORS
				       : l->kind == LCLOUD_LAYER_MD && !fact(l, FACT_MD_CHUNK_SIZE) ? FACT_MD_CHUNK_SIZE
												     : FACT__COUNT;

		if (!layer_kind_is_block_device(l->kind))
			continue;
		(void)layer_get_bytes(l, FACT_MAX_SECTORS_KB, &max_bytes);
		(void)layer_get_bytes(l, FACT_CHUNK_SECTORS, &chunk);
		if (l->kind == LCLOUD_LAYER_MD)
			(void)layer_get_bytes(l, FACT_MD_CHUNK_SIZE, &md_chunk);
		/* a queue (not a partition's) whose split limits are missing, as in a capture that missed them */
		if (layer_kind_is_whole_device(l->kind) && missing != FACT__COUNT) {
			const uint64_t page = p->page_size;
			const char *attr = missing == FACT_MD_CHUNK_SIZE ? "md/chunk_size" : fact_def(missing)->name;

			if (st->limit > page) {
				st->limit = page;
				r = unknown(v, fact_def(missing)->source,
					    "%s: %s%s could not be read, so whether the block layer splits writes of "
					    "more than one memory page (%" PRIu64 " bytes) is unknown", l->name,
					    missing == FACT_MD_CHUNK_SIZE ? "" : "queue/", attr, page);
				if (r < 0)
					return r;
			}
		}
		if (max_bytes && max_bytes < st->limit) {
			st->limit = pow2_floor(max_bytes);
			st->definite = min_u64(st->definite, st->limit);
			r = reason(v, "sysfs:queue/max_sectors_kb", "%s splits writes above %" PRIu64 " KiB", l->name,
				   max_bytes / 1024);
			if (r < 0)
				return r;
		}
		if (md_chunk > chunk)
			chunk = md_chunk;
		if (chunk) {
			uint64_t cap = min_u64(pow2_dividing(chunk), pd_fits_from((int64_t)st->top_start, 0, 0));

			st->natural = true;
			if (cap < st->limit) {
				st->limit = cap;
				st->definite = min_u64(st->definite, cap);
				r = reason(v, md_chunk ? "sysfs:md/chunk_size" : "sysfs:queue/chunk_sectors",
					   "%s splits writes at its %" PRIu64 "-byte chunk edges", l->name, chunk);
				if (r < 0)
					return r;
			}
		}
		if (l->kind == LCLOUD_LAYER_DM) {
			r = dm_target_splits(p, l, v, st);
			if (r < 0)
				return r;
			/* each segment's start in the dm device is an edge too */
			for (unsigned int s = 0; s < l->n_dm_segments; s++) {
				uint64_t ts = l->dm_segments[s].start, cap;

				if (!ts)
					continue;
				st->natural = true;
				/* modulo 2^64 keeps every power of two that divides the difference */
				cap = pow2_dividing((uint64_t)ts * 512 - st->top_start);
				if (cap < st->limit) {
					st->limit = cap;
					st->definite = min_u64(st->definite, cap);
					r = reason(v, "dm:table", "%s: a segment starts at byte %" PRIu64 ", and writes across "
						   "it are split", l->name, ts * 512);
					if (r < 0)
						return r;
				}
			}
		}
	}

	if (st->limit && st->limit != UINT64_MAX) {
		bool unread = false;
		int64_t seg = segment_limit(p, st->limit, v, &unread);

		if (seg < 0)
			return (int)seg;
		/* a cap the segment rules set themselves, not one they passed through */
		if (!unread && (uint64_t)seg < st->limit)
			st->definite = min_u64(st->definite, (uint64_t)seg);
		st->limit = (uint64_t)seg;
	}

	return 0;
}
