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
#define PAGES_MAX (1ull << 32) /* the per-page table must fit in memory */

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

int torture_history_read(const char *path, struct torture_history *ret, char *err, size_t err_size)
{
	struct torture_history h = { 0 };
	uint8_t buf[TORTURE_RECORD_SIZE];
	uint64_t pos = 0;
	bool have = false;
	FILE *f;
	int r = 0;

	f = fopen(path, "rbe");
	if (!f)
		return lab_fail(err, err_size, -errno, "cannot open the record %s: %s", path, strerror(errno));
	for (;;) {
		struct torture_record rec;
		size_t n = fread(buf, 1, sizeof(buf), f);

		if (n == 0)
			break;
		if (n < sizeof(buf) || torture_record_decode(buf, &rec) < 0) {
			/* a torn or garbled record: it and everything after it are not evidence */
			fseeko(f, 0, SEEK_END);
			h.ignored_bytes = (uint64_t)ftello(f) - pos;
			break;
		}
		pos += sizeof(buf);
		if (!have) {
			if (!torture_page_size_valid(rec.page_size) || !rec.pages || rec.pages > PAGES_MAX) {
				r = lab_fail(err, err_size, -EBADMSG, "record %s: page size %" PRIu64 " and %" PRIu64
					 " pages are not a torture run's geometry", path, rec.page_size, rec.pages);
				goto out;
			}
			h.geometry = rec;
			h.last_ack = malloc(rec.pages * sizeof(*h.last_ack));
			if (!h.last_ack) {
				r = -ENOMEM;
				goto out;
			}
			for (uint64_t i = 0; i < rec.pages; i++)
				h.last_ack[i] = TORTURE_NO_GENERATION;
			have = true;
		} else if (!same_run(&h.geometry, &rec)) {
			r = lab_fail(err, err_size, -EBADMSG, "record %s holds two runs (0x%016" PRIx64 " and 0x%016" PRIx64
				 ") at byte %" PRIu64 ": give each run a record file of its own", path,
				 h.geometry.run_id, rec.run_id, pos - sizeof(buf));
			goto out;
		}
		switch (rec.kind) {
		case TORTURE_RECORD_START:
			h.started = true;
			break;
		case TORTURE_RECORD_FILLED:
			h.filled = true;
			for (uint64_t i = 0; i < h.geometry.pages; i++)
				if (h.last_ack[i] == TORTURE_NO_GENERATION)
					h.last_ack[i] = 0;
			break;
		case TORTURE_RECORD_ACK:
			if (rec.page >= h.geometry.pages) {
				r = lab_fail(err, err_size, -EBADMSG, "record %s: page %" PRIu64 " at byte %" PRIu64 " is outside "
					 "the run's %" PRIu64 " pages", path, rec.page, pos - sizeof(buf), h.geometry.pages);
				goto out;
			}
			if (h.last_ack[rec.page] == TORTURE_NO_GENERATION || rec.generation > h.last_ack[rec.page])
				h.last_ack[rec.page] = rec.generation;
			h.acks++;
			break;
		case TORTURE_RECORD_END:
			h.ended = true;
			break;
		}
	}
	if (!have)
		r = lab_fail(err, err_size, -EBADMSG, "record %s holds no valid record (%" PRIu64 " bytes): not a torture "
			 "record, or the run died before its first one", path, h.ignored_bytes);
out:
	fclose(f);
	if (r < 0) {
		free(h.last_ack);
		return r;
	}
	*ret = h;
	return 0;
}

void torture_history_release(struct torture_history *h)
{
	if (!h)
		return;
	free(h->last_ack);
	h->last_ack = NULL;
}
