/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsing a dm-log-writes / blklogwrites log (format in writelog.h) into an
 * index of entries. Every size read from the file is checked before it is
 * used: a log is evidence from a crash, and a damaged one must give an error
 * that says where, never a wild read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "le.h"
#include "writelog.h"
#include "lab_error.h"

#define SECTOR_SIZE_MIN 512u   /* the smallest logical block a device has */
#define SECTOR_SIZE_MAX (1u << 24) /* QEMU's limit */

struct writelog {
	int fd;                 /* -1 for a buffer */
	const uint8_t *mem;
	uint64_t size;
	uint32_t sector_size;
	uint64_t super_entries;
	uint64_t end;           /* byte after the last parsed entry */
	struct writelog_entry *entries;
	uint64_t n, cap;
};


static int read_at(const struct writelog *log, uint64_t pos, void *buf, uint64_t len)
{
	if (pos > log->size || len > log->size - pos)
		return -ERANGE;
	if (log->mem) {
		memcpy(buf, log->mem + pos, len);
		return 0;
	}
	while (len) {
		ssize_t n = pread(log->fd, buf, len > (1u << 30) ? (1u << 30) : len, (off_t)pos);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* the file shrank under us */
		buf = (uint8_t *)buf + n;
		pos += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

static int push(struct writelog *log, const struct writelog_entry *e)
{
	if (log->n == log->cap) {
		uint64_t cap = log->cap ? log->cap * 2 : 256;
		struct writelog_entry *n = realloc(log->entries, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		log->entries = n;
		log->cap = cap;
	}
	log->entries[log->n++] = *e;
	return 0;
}

/*
 * Parse the entry whose header sits at POS. Returns 0 and the entry, or a
 * negative errno with a message (the caller decides whether that ends the
 * log or is an error).
 */
static int parse_entry(struct writelog *log, uint64_t index, uint64_t pos, struct writelog_entry *e, char *err,
		       size_t err_size)
{
	const uint64_t ss = log->sector_size;
	uint8_t *sector;
	uint64_t data_sectors;
	int r;

	memset(e, 0, sizeof(*e));
	if (pos > log->size || ss > log->size - pos)
		return lab_fail(err, err_size, -EBADMSG, "entry %" PRIu64 ": its header at byte %" PRIu64 " lies past the "
			    "end of the log (%" PRIu64 " bytes): the log is truncated or nr_entries is wrong", index, pos,
			    log->size);
	sector = malloc(ss);
	if (!sector)
		return -ENOMEM;
	r = read_at(log, pos, sector, ss);
	if (r < 0) {
		free(sector);
		return lab_fail(err, err_size, r, "entry %" PRIu64 ": cannot read its header at byte %" PRIu64 ": %s", index,
			    pos, strerror(-r));
	}
	e->index = index;
	e->sector = get_le64(sector);
	e->nr_sectors = get_le64(sector + 8);
	e->flags = get_le64(sector + 16);
	e->data_len = get_le64(sector + 24);
	e->header_pos = pos;
	e->data_pos = pos + ss;
	if (e->flags & ~(uint64_t)WRITELOG_KNOWN_FLAGS) {
		free(sector);
		return lab_fail(err, err_size, -EBADMSG, "entry %" PRIu64 " at byte %" PRIu64 ": unknown flags 0x%" PRIx64
			    " (known: FLUSH 1, FUA 2, DISCARD 4, MARK 8, METADATA 16)", index, pos, e->flags);
	}
	if (e->sector > UINT64_MAX / ss || e->nr_sectors > UINT64_MAX / ss ||
	    e->sector * ss > UINT64_MAX - e->nr_sectors * ss) {
		free(sector);
		return lab_fail(err, err_size, -EBADMSG, "entry %" PRIu64 " at byte %" PRIu64 ": sector %" PRIu64 " + %"
			    PRIu64 " sectors of %" PRIu64 " bytes does not fit in 64 bits", index, pos, e->sector,
			    e->nr_sectors, ss);
	}
	if (e->flags & WRITELOG_MARK) {
		if (e->data_len > ss - WRITELOG_ENTRY_SIZE || e->nr_sectors) {
			free(sector);
			return lab_fail(err, err_size, -EBADMSG, "entry %" PRIu64 " at byte %" PRIu64 ": a MARK with %" PRIu64
				    " bytes of text and %" PRIu64 " sectors (a mark's text fits in its entry sector "
				    "and it has no sectors)", index, pos, e->data_len, e->nr_sectors);
		}
		e->mark = strndup((const char *)sector + WRITELOG_ENTRY_SIZE, e->data_len);
		free(sector);
		if (!e->mark)
			return -ENOMEM;
		return 0;
	}
	free(sector);
	if (e->data_len && e->data_len != e->nr_sectors * ss)
		return lab_fail(err, err_size, -EBADMSG, "entry %" PRIu64 " at byte %" PRIu64 ": data_len %" PRIu64 " on an "
			    "entry that is not a MARK, and not the %" PRIu64 " bytes its sectors hold", index, pos,
			    e->data_len, e->nr_sectors * ss);
	data_sectors = e->flags & WRITELOG_DISCARD ? 0 : e->nr_sectors;
	e->data_bytes = data_sectors * ss;
	if (e->data_bytes > log->size - e->data_pos)
		return lab_fail(err, err_size, -EBADMSG, "entry %" PRIu64 " at byte %" PRIu64 ": its %" PRIu64 " bytes of "
			    "data run past the end of the log (%" PRIu64 " bytes): the log is truncated", index, pos,
			    e->data_bytes, log->size);
	return 0;
}

/* Could the sector at POS be the start of an entry the super block does not count yet? */
static bool plausible_tail(const struct writelog_entry *e)
{
	/* an all-zero header is unwritten space, not a zero-length write */
	return e->sector || e->nr_sectors || e->flags || e->data_len;
}

static int parse(struct writelog *log, uint32_t flags, char *err, size_t err_size)
{
	uint8_t super[WRITELOG_SUPER_SIZE];
	uint64_t magic, version, pos;
	int r;

	if (log->size < WRITELOG_SUPER_SIZE)
		return lab_fail(err, err_size, -EBADMSG, "the file has %" PRIu64 " bytes, fewer than a write log's %u-byte "
			    "super block", log->size, WRITELOG_SUPER_SIZE);
	r = read_at(log, 0, super, sizeof(super));
	if (r < 0)
		return lab_fail(err, err_size, r, "cannot read the super block: %s", strerror(-r));
	magic = get_le64(super);
	version = get_le64(super + 8);
	log->super_entries = get_le64(super + 16);
	log->sector_size = get_le32(super + 24);
	if (magic != WRITELOG_MAGIC)
		return lab_fail(err, err_size, -EBADMSG, "not a write log: magic 0x%" PRIx64 ", expected 0x%llx "
			    "(dm-log-writes / QEMU blklogwrites)", magic, WRITELOG_MAGIC);
	if (version != WRITELOG_VERSION)
		return lab_fail(err, err_size, -EPROTONOSUPPORT, "write log version %" PRIu64 "; this reader knows "
			    "version %u", version, WRITELOG_VERSION);
	if (log->sector_size < SECTOR_SIZE_MIN || log->sector_size > SECTOR_SIZE_MAX ||
	    (log->sector_size & (log->sector_size - 1)))
		return lab_fail(err, err_size, -EBADMSG, "log sector size %u is not a power of two from %u to %u",
			    log->sector_size, SECTOR_SIZE_MIN, SECTOR_SIZE_MAX);
	pos = log->sector_size;
	for (uint64_t i = 0; i < log->super_entries; i++) {
		struct writelog_entry e;

		r = parse_entry(log, i, pos, &e, err, err_size);
		if (r < 0)
			return r;
		r = push(log, &e);
		if (r < 0) {
			free(e.mark);
			return r;
		}
		pos = e.data_pos + e.data_bytes;
	}
	while ((flags & WRITELOG_SCAN_TAIL) && pos < log->size) {
		struct writelog_entry e;

		if (parse_entry(log, log->n, pos, &e, NULL, 0) < 0 || !plausible_tail(&e)) {
			free(e.mark);
			break;
		}
		r = push(log, &e);
		if (r < 0) {
			free(e.mark);
			return r;
		}
		pos = e.data_pos + e.data_bytes;
	}
	log->end = pos;
	return 0;
}

static int open_common(struct writelog *log, uint32_t flags, struct writelog **ret_log, char *err, size_t err_size)
{
	int r;

	if (err && err_size)
		err[0] = '\0';
	r = parse(log, flags, err, err_size);
	if (r < 0) {
		writelog_free(log);
		return r;
	}
	*ret_log = log;
	return 0;
}

int writelog_open_fd(int fd, uint32_t flags, struct writelog **ret_log, char *err, size_t err_size)
{
	struct writelog *log;
	struct stat st;

	if (fd < 0 || !ret_log)
		return -EINVAL;
	if (fstat(fd, &st) < 0)
		return lab_fail(err, err_size, -errno, "cannot stat the log: %s", strerror(errno));
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return lab_fail(err, err_size, -EBADMSG, "a write log is a regular file or a block device (dm-log-writes "
			    "logs to one)");
	log = calloc(1, sizeof(*log));
	if (!log)
		return -ENOMEM;
	log->fd = fd;
	if (S_ISBLK(st.st_mode)) {
		off_t end = lseek(fd, 0, SEEK_END);

		if (end < 0) {
			free(log);
			return lab_fail(err, err_size, -errno, "cannot size the log device: %s", strerror(errno));
		}
		log->size = (uint64_t)end;
	} else {
		log->size = (uint64_t)st.st_size;
	}
	return open_common(log, flags, ret_log, err, err_size);
}

int writelog_open_buffer(const void *buf, uint64_t len, uint32_t flags, struct writelog **ret_log, char *err,
			 size_t err_size)
{
	struct writelog *log;

	if ((!buf && len) || !ret_log)
		return -EINVAL;
	log = calloc(1, sizeof(*log));
	if (!log)
		return -ENOMEM;
	log->fd = -1;
	log->mem = buf ? buf : (const uint8_t *)"";
	log->size = len;
	return open_common(log, flags, ret_log, err, err_size);
}

void writelog_free(struct writelog *log)
{
	if (!log)
		return;
	for (uint64_t i = 0; i < log->n; i++)
		free(log->entries[i].mark);
	free(log->entries);
	free(log);
}

uint32_t writelog_sector_size(const struct writelog *log)
{
	return log->sector_size;
}

uint64_t writelog_entry_count(const struct writelog *log)
{
	return log->n;
}

uint64_t writelog_super_entries(const struct writelog *log)
{
	return log->super_entries;
}

uint64_t writelog_trailing_bytes(const struct writelog *log)
{
	return log->size - log->end;
}

const struct writelog_entry *writelog_entry(const struct writelog *log, uint64_t index)
{
	return index < log->n ? &log->entries[index] : NULL;
}

int writelog_read_data(const struct writelog *log, const struct writelog_entry *e, uint64_t offset, void *buf,
		       uint64_t len)
{
	if (offset > e->data_bytes || len > e->data_bytes - offset)
		return -ERANGE;
	return read_at(log, e->data_pos + offset, buf, len);
}

int writelog_entry_writes(const struct writelog_entry *e)
{
	return e->data_bytes > 0;
}

uint64_t writelog_entry_image_bytes(const struct writelog *log, const struct writelog_entry *e)
{
	/* parse_entry() checked that sector + nr_sectors fits in 64 bits of bytes */
	if (e->flags & WRITELOG_MARK)
		return 0;
	return e->flags & WRITELOG_DISCARD ? e->nr_sectors * log->sector_size : e->data_bytes;
}

const char *writelog_entry_kind(const struct writelog_entry *e)
{
	if (e->flags & WRITELOG_MARK)
		return "mark";
	if (e->flags & WRITELOG_DISCARD)
		return "discard";
	if (!e->data_bytes)
		return e->flags & WRITELOG_FLUSH ? "flush" : "empty";
	switch (e->flags & (WRITELOG_FLUSH | WRITELOG_FUA)) {
	case WRITELOG_FLUSH:
		return "flush+write";
	case WRITELOG_FUA:
		return "write+fua";
	case WRITELOG_FLUSH | WRITELOG_FUA:
		return "flush+write+fua";
	default:
		return "write";
	}
}
