/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reader for device write logs in the dm-log-writes format, as the kernel's
 * dm-log-writes target and QEMU's blklogwrites block driver write them.
 * Little-endian throughout:
 *
 *   log sector 0: super {u64 magic 0x6a736677736872, u64 version 1, u64 nr_entries, u32 sector_size}
 *   then, per entry, from log sector 1 on:
 *     one log sector:   {u64 sector, u64 nr_sectors, u64 flags, u64 data_len} [mark text] zero padding
 *     nr_sectors log sectors of written data (none for DISCARD; MARK entries carry no sectors)
 *
 * sector and nr_sectors count log sectors of the logged device. data_len is 0
 * for writes (QEMU always writes 0); for a MARK it is the length of the mark
 * text that follows the 32-byte header inside the entry's sector. The kernel
 * once logged DAX writes with data_len == nr_sectors * sector_size and the
 * data in the following sectors; that is accepted too. A FLUSH entry from
 * QEMU has no sectors; the kernel may log a FLUSH that carries data.
 *
 * QEMU updates nr_entries in the super block only on a FLUSH and every
 * log-super-update-interval entries (4096 by default), so a log whose guest
 * died may hold more entries than its super block says: WRITELOG_SCAN_TAIL
 * reads on while further entries parse.
 */
#ifndef LCLOUD_LAB_WRITELOG_H
#define LCLOUD_LAB_WRITELOG_H

#include <stddef.h>
#include <stdint.h>

#define WRITELOG_MAGIC 0x6a736677736872ull
#define WRITELOG_VERSION 1u
#define WRITELOG_SUPER_SIZE 28u
#define WRITELOG_ENTRY_SIZE 32u

enum writelog_entry_flags {
	WRITELOG_FLUSH = 1u << 0,    /* a cache flush (REQ_PREFLUSH) */
	WRITELOG_FUA = 1u << 1,      /* forced unit access: durable on completion (kernel logs only) */
	WRITELOG_DISCARD = 1u << 2,  /* a discard: no data follows; a crash image reads zeros there */
	WRITELOG_MARK = 1u << 3,     /* a user mark: text in the entry sector, no data */
	WRITELOG_METADATA = 1u << 4, /* REQ_META (kernel logs only): informational */
};
#define WRITELOG_KNOWN_FLAGS 0x1fu

enum writelog_open_flags {
	/* Read entries past the super block's nr_entries while they parse (see above). */
	WRITELOG_SCAN_TAIL = 1u << 0,
};

struct writelog_entry {
	uint64_t index;      /* position in the log, from 0 */
	uint64_t sector;     /* first log sector of the device written */
	uint64_t nr_sectors; /* log sectors written (or discarded) */
	uint64_t flags;      /* enum writelog_entry_flags */
	uint64_t data_len;   /* as logged (see above) */
	uint64_t header_pos; /* byte offset of the entry's header in the log */
	uint64_t data_pos;   /* byte offset of its data in the log */
	uint64_t data_bytes; /* bytes of data at data_pos (0 for flushes, discards, marks) */
	char *mark;          /* MARK text, NUL-terminated; NULL otherwise */
};

struct writelog;

/*
 * Parse the log in FD (a file or a block device, kept open by the caller
 * while the log is used; a device's space after the last entry holds
 * whatever was there before, so do not scan its tail) or in
 * BUF (LEN bytes, kept alive by the caller). Returns 0, or -EBADMSG for a file
 * that is not a well-formed log, -EPROTONOSUPPORT for another format version,
 * -ENOMEM, or an I/O error; ERR (may be NULL) then gets a sentence saying what
 * is wrong and where.
 */
int writelog_open_fd(int fd, uint32_t flags, struct writelog **ret_log, char *err, size_t err_size);
int writelog_open_buffer(const void *buf, uint64_t len, uint32_t flags, struct writelog **ret_log, char *err,
			 size_t err_size);
void writelog_free(struct writelog *log);

uint32_t writelog_sector_size(const struct writelog *log);
/* Entries parsed (with WRITELOG_SCAN_TAIL, perhaps more than the super block's count). */
uint64_t writelog_entry_count(const struct writelog *log);
/* What the super block says. */
uint64_t writelog_super_entries(const struct writelog *log);
/* Bytes after the last parsed entry (a stale super block, or garbage). */
uint64_t writelog_trailing_bytes(const struct writelog *log);
/* Borrowed; NULL past the end. */
const struct writelog_entry *writelog_entry(const struct writelog *log, uint64_t index);
/* Reads LEN bytes of ENTRY's data from byte OFFSET of that data. -ERANGE outside it. */
int writelog_read_data(const struct writelog *log, const struct writelog_entry *entry, uint64_t offset, void *buf,
		       uint64_t len);
/* "write", "flush", "write+fua", "discard", "mark", ... for a person. */
const char *writelog_entry_kind(const struct writelog_entry *entry);
/* Does ENTRY write data to the device (a write, or a flush or FUA carrying data)? */
int writelog_entry_writes(const struct writelog_entry *entry);
/*
 * The bytes ENTRY changes on a disk image from its first sector: its data,
 * or a DISCARD's whole range, which a crash image holds as zeros (see
 * crash_image.h); 0 for flushes and marks.
 */
uint64_t writelog_entry_image_bytes(const struct writelog *log, const struct writelog_entry *entry);

#endif
