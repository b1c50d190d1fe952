/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Encoding torture run records and reading a record file back (format in torture_record.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "le.h"
#include "torture_page.h"
#include "torture_record.h"
#include "lab_error.h"

#define CRC_OFFSET 60u
#define PAGES_MAX (1ull << 32) /* far above any run; torture verify also holds the pages to the target's size */

void torture_record_encode(void *buf, const struct torture_record *rec)
{
	uint8_t *b = buf;

	memset(b, 0, TORTURE_RECORD_SIZE);
	put_le32(b, TORTURE_RECORD_MAGIC);
	b[4] = rec->kind;
	b[5] = TORTURE_RECORD_VERSION;
	put_le16(b + 6, rec->path);
	put_le64(b + 8, rec->run_id);
	put_le64(b + 16, rec->page);
	put_le64(b + 24, rec->generation);
	put_le64(b + 32, rec->page_size);
	put_le64(b + 40, rec->pages);
	put_le64(b + 48, rec->offset);
	put_le32(b + 56, rec->seed);
	put_le32(b + CRC_OFFSET, crc32c(0, b, TORTURE_RECORD_SIZE));
}

int torture_record_decode(const void *buf, struct torture_record *ret)
{
	uint8_t copy[TORTURE_RECORD_SIZE];
	uint32_t crc;

	memcpy(copy, buf, sizeof(copy));
	crc = get_le32(copy + CRC_OFFSET);
	put_le32(copy + CRC_OFFSET, 0);
	if (get_le32(copy) != TORTURE_RECORD_MAGIC || copy[5] != TORTURE_RECORD_VERSION ||
	    crc32c(0, copy, sizeof(copy)) != crc || copy[4] < TORTURE_RECORD_START || copy[4] > TORTURE_RECORD_END)
		return -EBADMSG;
	ret->kind = copy[4];
	ret->path = get_le16(copy + 6);
	ret->run_id = get_le64(copy + 8);
	ret->page = get_le64(copy + 16);
	ret->generation = get_le64(copy + 24);
	ret->page_size = get_le64(copy + 32);
	ret->pages = get_le64(copy + 40);
	ret->offset = get_le64(copy + 48);
	ret->seed = get_le32(copy + 56);
	return 0;
}


static bool same_run(const struct torture_record *a, const struct torture_record *b)
{
	return a->run_id == b->run_id && a->page_size == b->page_size && a->pages == b->pages &&
	       a->offset == b->offset;
}

/* One whole record at the reader's position: 0 on, -EBADMSG (with ERR) for a file that is not evidence. */
static int step(struct torture_history *h, const uint8_t *buf, const char *path, char *err, size_t err_size)
{
	struct torture_record rec;
	uint64_t at = h->read_bytes;

	if (torture_record_decode(buf, &rec) < 0) {
		/* a torn or garbled record: it and everything after it are not evidence */
		h->torn = true;
		return 0;
	}
	h->read_bytes += TORTURE_RECORD_SIZE;
	if (!h->have) {
		if (!torture_page_size_valid(rec.page_size) || !rec.pages || rec.pages > PAGES_MAX)
			return lab_fail(err, err_size, -EBADMSG, "record %s: page size %" PRIu64 " and %" PRIu64
					" pages are not a torture run's geometry", path, rec.page_size, rec.pages);
		h->geometry = rec;
		h->have = true;
	} else if (!same_run(&h->geometry, &rec)) {
		return lab_fail(err, err_size, -EBADMSG, "record %s holds two runs (0x%016" PRIx64 " and 0x%016" PRIx64
				") at byte %" PRIu64 ": give each run a record file of its own", path, h->geometry.run_id,
				rec.run_id, at);
	}
	switch (rec.kind) {
	case TORTURE_RECORD_START:
		h->started = true;
		break;
	case TORTURE_RECORD_FILLED:
		h->filled = true;
		break;
	case TORTURE_RECORD_ACK:
		if (rec.page >= h->geometry.pages)
			return lab_fail(err, err_size, -EBADMSG, "record %s: page %" PRIu64 " at byte %" PRIu64 " is outside "
					"the run's %" PRIu64 " pages", path, rec.page, at, h->geometry.pages);
		h->acks++;
		if (rec.generation == TORTURE_NO_GENERATION)
			break; /* names no generation: nothing acknowledged */
		if (h->n_acked == h->cap_acked) {
			uint64_t ncap = h->cap_acked ? h->cap_acked * 2 : 64;
			struct torture_ack *n = realloc(h->acked, ncap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			h->acked = n;
			h->cap_acked = ncap;
		}
		/* kept in file order for now; sorted and merged once the file is read */
		h->acked[h->n_acked++] = (struct torture_ack){ rec.page, rec.generation };
		break;
	case TORTURE_RECORD_END:
		h->ended = true;
		break;
	}
	return 0;
}

static int by_page_then_generation(const void *a, const void *b)
{
	const struct torture_ack *x = a, *y = b;

	if (x->page != y->page)
		return x->page < y->page ? -1 : 1;
	return x->generation < y->generation ? -1 : x->generation > y->generation;
}

/* One entry per page, its highest generation: an older one recorded later never lowers it. */
static int finish(struct torture_history *h, const char *path, char *err, size_t err_size)
{
	uint64_t n = 0;

	if (!h->have)
		return lab_fail(err, err_size, -EBADMSG, "record %s holds no valid record (%" PRIu64 " bytes): not a "
				"torture record, or the run died before its first one", path, h->ignored_bytes);
	if (h->n_acked)
		qsort(h->acked, h->n_acked, sizeof(*h->acked), by_page_then_generation);
	for (uint64_t i = 0; i < h->n_acked; i++) {
		if (n && h->acked[n - 1].page == h->acked[i].page)
			n--;
		h->acked[n++] = h->acked[i];
	}
	h->n_acked = n;
	return 0;
}

int torture_history_parse(const void *data, uint64_t size, const char *name, struct torture_history *ret, char *err,
			  size_t err_size)
{
	struct torture_history h = { 0 };
	int r = 0;

	if (err_size)
		err[0] = '\0';
	while (!h.torn && h.read_bytes < size) {
		if (size - h.read_bytes < TORTURE_RECORD_SIZE) {
			h.torn = true;
			break;
		}
		r = step(&h, (const uint8_t *)data + h.read_bytes, name, err, err_size);
		if (r < 0)
			goto out;
	}
	h.ignored_bytes = size - h.read_bytes;
	r = finish(&h, name, err, err_size);
out:
	if (r < 0) {
		torture_history_release(&h);
		return r;
	}
	*ret = h;
	return 0;
}

int torture_history_read(const char *path, struct torture_history *ret, char *err, size_t err_size)
{
	struct torture_history h = { 0 };
	uint8_t buf[TORTURE_RECORD_SIZE];
	FILE *f;
	int r = 0;

	if (err_size)
		err[0] = '\0';
	f = fopen(path, "rbe");
	if (!f)
		return lab_fail(err, err_size, -errno, "cannot open the record %s: %s", path, strerror(errno));
	while (!h.torn) {
		size_t n = fread(buf, 1, sizeof(buf), f);

		if (n == 0)
			break;
		if (n < sizeof(buf)) {
			h.torn = true;
			break;
		}
		r = step(&h, buf, path, err, err_size);
		if (r < 0)
			goto out;
	}
	if (ferror(f)) {
		r = lab_fail(err, err_size, -EIO, "reading the record %s failed", path);
		goto out;
	}
	if (h.torn) {
		fseeko(f, 0, SEEK_END);
		h.ignored_bytes = (uint64_t)ftello(f) - h.read_bytes;
	}
	r = finish(&h, path, err, err_size);
out:
	fclose(f);
	if (r < 0) {
		torture_history_release(&h);
		return r;
	}
	*ret = h;
	return 0;
}

uint64_t torture_history_last_ack(const struct torture_history *h, uint64_t page)
{
	uint64_t lo = 0, hi = h->n_acked;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (h->acked[mid].page == page)
			return h->acked[mid].generation;
		if (h->acked[mid].page < page)
			lo = mid + 1;
		else
			hi = mid;
	}
	return h->filled ? 0 : TORTURE_NO_GENERATION;
}

void torture_history_release(struct torture_history *h)
{
	if (!h)
		return;
	free(h->acked);
	h->acked = NULL;
	h->n_acked = h->cap_acked = 0;
}
