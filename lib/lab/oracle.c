/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The log oracle (rules in oracle.h): stamps in, page writes and their verdicts out. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "lab_error.h"
#include "torture_page.h"

#define CHUNK (1u << 20)
/* parts searched for a block before a page write gets its bitmap (page size / 4096 bytes, 256 at most) */
#define SCAN_PARTS 8u


int oracle_model_check(const struct oracle_model *m, char *err, size_t err_size)
{
	if (!m->lba || (m->lba & (m->lba - 1)) || m->lba % 512)
		return lab_fail(err, err_size, -EINVAL, "logical block size %" PRIu64 " is not a power of two of at least 512",
			    m->lba);
	if (m->atomic_bytes < m->lba || m->atomic_bytes % m->lba)
		return lab_fail(err, err_size, -EINVAL, "atomic unit %" PRIu64 " is not a multiple of the logical block (%"
			    PRIu64 ")", m->atomic_bytes, m->lba);
	if (m->whole_block && (m->whole_block % m->lba || (m->whole_block & (m->whole_block - 1))))
		return lab_fail(err, err_size, -EINVAL, "whole block %" PRIu64 " is not a power of two of whole logical "
			    "blocks (%" PRIu64 ")", m->whole_block, m->lba);
	if (m->boundary && (m->boundary % m->lba || m->boundary_offset % m->lba))
		return lab_fail(err, err_size, -EINVAL, "boundary %" PRIu64 " at offset %" PRIu64 " is not in whole logical "
			    "blocks (%" PRIu64 ")", m->boundary, m->boundary_offset, m->lba);
	return 0;
}

uint64_t oracle_boundary_after(const struct oracle_model *m, uint64_t offset)
{
	uint64_t k;

	if (!m->boundary)
		return UINT64_MAX;
	if (offset < m->boundary_offset)
		return m->boundary_offset;
	k = (offset - m->boundary_offset) / m->boundary + 1;
	if (k > (UINT64_MAX - m->boundary_offset) / m->boundary)
		return UINT64_MAX;
	return m->boundary_offset + k * m->boundary;
}

static bool crosses_boundary(const struct oracle_model *m, uint64_t offset, uint64_t len)
{
	return oracle_boundary_after(m, offset) < offset + len;
}

/* Natural alignment (AWS's torn write prevention): a power-of-two size at an offset that is a multiple of it. */
static bool naturally_aligned(uint64_t offset, uint64_t len)
{
	return len && !(len & (len - 1)) && !(offset % len);
}

bool oracle_command_atomic(const struct oracle_model *m, uint64_t offset, uint64_t len)
{
	return len <= m->atomic_bytes && !crosses_boundary(m, offset, len) &&
	       (!m->natural || len <= m->lba || naturally_aligned(offset, len));
}

/* ---- page writes by (run, page, generation): an open-addressing table of the latest copy ---- */

struct table {
	uint64_t *slots; /* index + 1 into result->writes; 0 empty */
	uint64_t cap;
};

static uint64_t hash3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull ^ c;

	h ^= h >> 31;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 29);
}

static uint64_t *slot_for(struct table *t, const struct oracle_result *r, const struct torture_stamp *s)
{
	uint64_t i = hash3(s->run_id, s->page, s->generation) & (t->cap - 1);

	for (;; i = (i + 1) & (t->cap - 1)) {
		const struct oracle_page_write *w;

		if (!t->slots[i])
			return &t->slots[i];
		w = &r->writes[t->slots[i] - 1];
		if (w->run_id == s->run_id && w->page == s->page && w->generation == s->generation)
			return &t->slots[i];
	}
}

static int table_grow(struct table *t, const struct oracle_result *r)
{
	struct table n = { .cap = t->cap ? t->cap * 2 : 1024 };

	n.slots = calloc(n.cap, sizeof(*n.slots));
	if (!n.slots)
		return -ENOMEM;
	for (uint64_t i = 0; i < t->cap; i++)
		if (t->slots[i]) {
			const struct oracle_page_write *w = &r->writes[t->slots[i] - 1];
			struct torture_stamp s = { .run_id = w->run_id, .page = w->page, .generation = w->generation };

			*slot_for(&n, r, &s) = t->slots[i];
		}
	free(t->slots);
	*t = n;
	return 0;
}

static int new_write(struct oracle_result *r, uint64_t *cap, const struct torture_stamp *s, uint32_t copy,
		     uint32_t log, uint64_t entry)
{
	struct oracle_page_write *w;

	if (r->n_writes == *cap) {
		uint64_t ncap = *cap ? *cap * 2 : 256;
		struct oracle_page_write *n = realloc(r->writes, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->writes = n;
		*cap = ncap;
	}
	w = &r->writes[r->n_writes];
	memset(w, 0, sizeof(*w));
	w->run_id = s->run_id;
	w->page = s->page;
	w->generation = s->generation;
	w->page_size = s->page_size;
	w->copy = copy;
	w->first_log = log;
	w->first_entry = entry;
	r->n_writes++;
	return 0;
}

static bool block_seen(const struct oracle_page_write *w, uint32_t block)
{
	if (w->seen)
		return w->seen[block / 8] & (1u << (block % 8));
	for (uint32_t i = 0; i < w->n_parts; i++)
		if (block >= w->parts[i].first_block && block - w->parts[i].first_block < w->parts[i].blocks)
			return true;
	return false;
}

static int add_block(struct oracle_page_write *w, uint32_t log, uint64_t entry, uint64_t dev_offset, uint32_t block)
{
	struct oracle_part *last = w->n_parts ? &w->parts[w->n_parts - 1] : NULL;

	if (!w->seen && w->n_parts >= SCAN_PARTS) {
		/* many parts: the log paid at least SCAN_PARTS blocks for this page write, a bitmap is cheaper to search */
		w->seen = calloc((w->page_size / TORTURE_BLOCK_SIZE + 7) / 8, 1);
		if (!w->seen)
			return -ENOMEM;
		for (uint32_t i = 0; i < w->n_parts; i++)
			for (uint32_t b = 0; b < w->parts[i].blocks; b++)
				w->seen[(w->parts[i].first_block + b) / 8] |= 1u << ((w->parts[i].first_block + b) % 8);
	}
	if (w->seen)
		w->seen[block / 8] |= 1u << (block % 8);
	w->blocks_seen++;
	w->last_log = log;
	w->last_entry = entry;
	if (log != w->first_log)
		w->across_logs = true;
	if (last && last->log == log && last->entry == entry && last->first_block + last->blocks == block &&
	    last->dev_offset + (uint64_t)last->blocks * TORTURE_BLOCK_SIZE == dev_offset) {
		last->blocks++;
		return 0;
	}
	if (w->n_parts == w->cap_parts) {
		uint32_t ncap = w->cap_parts ? w->cap_parts * 2 : 1; /* most page writes come whole, in one part */
		struct oracle_part *n = realloc(w->parts, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		w->parts = n;
		w->cap_parts = ncap;
	}
	w->parts[w->n_parts++] = (struct oracle_part){ log, entry, dev_offset, block, 1 };
	return 0;
}

static int attribute(struct oracle_result *r, struct table *t, uint64_t *cap, const struct torture_stamp *s,
		     uint32_t log, uint64_t entry, uint64_t dev_offset)
{
	uint64_t *slot;
	int err;

	if ((r->n_writes + 1) * 2 > t->cap) {
		err = table_grow(t, r);
		if (err < 0)
			return err;
	}
	slot = slot_for(t, r, s);
	if (!*slot || block_seen(&r->writes[*slot - 1], s->block)) {
		/* first sight, or this block again: a new copy of the page write */
		uint32_t copy = *slot ? r->writes[*slot - 1].copy + 1 : 0;

		err = new_write(r, cap, s, copy, log, entry);
		if (err < 0)
			return err;
		*slot = r->n_writes;
	}
	return add_block(&r->writes[*slot - 1], log, entry, dev_offset, s->block);
}

/* ---- verdicts ---- */

static uint64_t round_down(uint64_t v, uint64_t a)
{
	return v / a * a;
}

/* Does command [CS, CE) cover the whole-block unit around byte C entirely, with C strictly inside it? */
static bool inside_covered_block(const struct oracle_model *m, uint64_t cs, uint64_t ce, uint64_t c)
{
	uint64_t b;

	if (!m->whole_block || c % m->whole_block == 0)
		return false;
	b = round_down(c, m->whole_block);
	return b >= cs && ce - b >= m->whole_block;
}

/*
 * A cut inside the page's bytes [PS, PE) of command [CS, CE): a logical block
 * boundary strictly inside, not inside a block the command writes whole
 * (whole_block): the last one up to the middle, else the first after it.
 * Returns false when there is none: the page's part lies within one logical
 * block, or within one such block.
 */
static bool cut_inside(const struct oracle_model *m, uint64_t cs, uint64_t ce, uint64_t ps, uint64_t pe,
		       uint64_t *ret_bytes)
{
	uint64_t mid = ps + (pe - ps) / 2, below = 0, above = 0;

	for (uint64_t c = round_down(ps, m->lba) + m->lba; c < pe; c += m->lba) {
		if (c <= cs || inside_covered_block(m, cs, ce, c))
			continue;
		if (c <= mid)
			below = c;
		else if (!above)
			above = c;
	}
	if (!below && !above)
		return false;
	*ret_bytes = (below ? below : above) - cs;
	return true;
}

static void judge(struct oracle_page_write *w, const struct writelog *const *logs, const struct oracle_model *m,
		  const uint64_t *last_flush)
{
	bool all_fua = true, have_cut = false, lost = false;

	w->verdict = ORACLE_ATOMIC;
	w->durable = true;
	if (w->blocks_seen < w->page_size / TORTURE_BLOCK_SIZE) {
		w->verdict = ORACLE_INCOMPLETE;
		return;
	}
	for (uint32_t i = 0; i < w->n_parts; i++) {
		const struct oracle_part *p = &w->parts[i];
		const struct writelog *log = logs[p->log];
		const struct writelog_entry *e = writelog_entry(log, p->entry);
		uint64_t cs = e->sector * writelog_sector_size(log), len = e->data_bytes;
		uint64_t ps = UINT64_MAX, pe = 0, cut;

		if (!(e->flags & WRITELOG_FUA)) {
			all_fua = false;
			/* durable once a later FLUSH on the same device went through */
			if (last_flush[p->log] == UINT64_MAX || last_flush[p->log] < p->entry)
				lost = true;
		}
		if (p->log != w->first_log || p->entry != w->first_entry)
			w->rules |= ORACLE_SPLIT;
		if (oracle_command_atomic(m, cs, len))
			continue;
		/* the page's bytes within this command */
		for (uint32_t k = 0; k < w->n_parts; k++)
			if (w->parts[k].log == p->log && w->parts[k].entry == p->entry) {
				uint64_t s = w->parts[k].dev_offset, en = s + (uint64_t)w->parts[k].blocks * TORTURE_BLOCK_SIZE;

				ps = s < ps ? s : ps;
				pe = en > pe ? en : pe;
			}
		if (!cut_inside(m, cs, cs + len, ps, pe, &cut))
			continue; /* one logical block of the page (or one block written whole): it cannot tear */
		w->rules |= len > m->atomic_bytes ? ORACLE_OVER_UNIT
			    : crosses_boundary(m, cs, len) ? ORACLE_BOUNDARY : ORACLE_MISALIGNED;
		if (!have_cut) {
			w->cut_log = w->rule_log = p->log;
			w->cut_entry = w->rule_entry = p->entry;
			w->cut_bytes = cut;
			have_cut = true;
		}
	}
	if (w->rules & ORACLE_SPLIT) {
		/* everything before the page's last command (on every other device: all), and none of it */
		w->cut_log = w->last_log;
		w->cut_entry = w->last_entry;
		w->cut_bytes = 0;
	}
	if (w->rules)
		w->verdict = ORACLE_TEARABLE;
	if (m->volatile_cache && !all_fua && lost)
		w->durable = false;
}

static const struct oracle_result *sort_result;

static int by_page_then_order(const void *a, const void *b)
{
	const struct oracle_page_write *x = &sort_result->writes[*(const uint64_t *)a];
	const struct oracle_page_write *y = &sort_result->writes[*(const uint64_t *)b];

	if (x->run_id != y->run_id)
		return x->run_id < y->run_id ? -1 : 1;
	if (x->page != y->page)
		return x->page < y->page ? -1 : 1;
	return *(const uint64_t *)a < *(const uint64_t *)b ? -1 : *(const uint64_t *)a > *(const uint64_t *)b;
}

/* Where each page write's previous generation (earlier in the log) was written: relocation evidence. */
static int link_previous(struct oracle_result *r)
{
	uint64_t *order = malloc((r->n_writes ? r->n_writes : 1) * sizeof(*order));

	if (!order)
		return -ENOMEM;
	for (uint64_t i = 0; i < r->n_writes; i++) {
		struct oracle_page_write *w = &r->writes[i];

		order[i] = i;
		w->device_offset = w->parts[0].dev_offset - (uint64_t)w->parts[0].first_block * TORTURE_BLOCK_SIZE;
		w->previous_offset = UINT64_MAX;
	}
	sort_result = r;
	qsort(order, r->n_writes, sizeof(*order), by_page_then_order);
	for (uint64_t i = 1; i < r->n_writes; i++) {
		struct oracle_page_write *w = &r->writes[order[i]];
		const struct oracle_page_write *prev = &r->writes[order[i - 1]];

		if (prev->run_id == w->run_id && prev->page == w->page) {
			w->previous_offset = prev->device_offset;
			w->previous_log = prev->first_log;
		}
	}
	free(order);
	return 0;
}

int oracle_run(const struct writelog *const *logs, uint32_t n_logs, const struct oracle_model *m,
	       struct oracle_result *ret, char *err, size_t err_size)
{
	struct oracle_result r = { 0 };
	struct table t = { 0 };
	uint64_t cap = 0, *last_flush;
	uint8_t *buf;
	int e = oracle_model_check(m, err, err_size);

	if (e < 0)
		return e;
	buf = malloc(CHUNK);
	last_flush = malloc((n_logs ? n_logs : 1) * sizeof(*last_flush));
	if (!buf || !last_flush) {
		e = -ENOMEM;
		goto out;
	}
	for (uint32_t l = 0; l < n_logs; l++) {
		const struct writelog *log = logs[l];

		last_flush[l] = UINT64_MAX;
		for (uint64_t i = 0; i < writelog_entry_count(log); i++) {
			const struct writelog_entry *en = writelog_entry(log, i);
			uint64_t dev = en->sector * writelog_sector_size(log);

			if (en->flags & WRITELOG_FLUSH) {
				r.flush_entries++;
				last_flush[l] = i;
			}
			if (en->flags & WRITELOG_DISCARD)
				r.discard_entries++;
			if (en->flags & WRITELOG_MARK)
				r.mark_entries++;
			if (!writelog_entry_writes(en))
				continue;
			r.write_entries++;
			r.fua_entries += (en->flags & WRITELOG_FUA) != 0;
			r.bytes_written += en->data_bytes;
			for (uint64_t off = 0; off < en->data_bytes; off += CHUNK) {
				uint64_t len = en->data_bytes - off < CHUNK ? en->data_bytes - off : CHUNK;

				e = writelog_read_data(log, en, off, buf, len);
				if (e < 0) {
					lab_fail(err, err_size, e, "log %u, entry %" PRIu64 ": cannot read its data: %s", l, i,
					     strerror(-e));
					goto out;
				}
				for (uint64_t b = 0; b + TORTURE_BLOCK_SIZE <= len; b += TORTURE_BLOCK_SIZE) {
					struct torture_stamp s;

					if (torture_block_decode(buf + b, &s) != TORTURE_BLOCK_STAMPED) {
						r.other_blocks++;
						continue;
					}
					r.stamped_blocks++;
					e = attribute(&r, &t, &cap, &s, l, i, dev + off + b);
					if (e < 0)
						goto out;
				}
			}
		}
	}
	e = link_previous(&r);
	if (e < 0)
		goto out;
	for (uint64_t i = 0; i < r.n_writes; i++) {
		struct oracle_page_write *w = &r.writes[i];

		judge(w, logs, m, last_flush);
		r.atomic += w->verdict == ORACLE_ATOMIC;
		r.tearable += w->verdict == ORACLE_TEARABLE;
		r.incomplete += w->verdict == ORACLE_INCOMPLETE;
		r.not_durable += !w->durable;
	}
	e = 0;
out:
	free(buf);
	free(last_flush);
	free(t.slots);
	if (e < 0) {
		oracle_result_release(&r);
		return e;
	}
	*ret = r;
	return 0;
}

void oracle_result_release(struct oracle_result *r)
{
	if (!r)
		return;
	for (uint64_t i = 0; i < r->n_writes; i++) {
		free(r->writes[i].seen);
		free(r->writes[i].parts);
	}
	free(r->writes);
	r->writes = NULL;
	r->n_writes = 0;
}
