/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Materialising a crash image from a base image and a prefix of a write log (see crash_image.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crash_image.h"
#include "lab_error.h"

#define CHUNK (1u << 20)


static int write_all(int fd, const uint8_t *buf, uint64_t len, uint64_t offset)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)offset);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (uint64_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

/* copy_file_range() shares extents where the file system can (XFS reflink): images are cheap. */
static int copy_base(int in, int out, uint64_t size, uint8_t *buf)
{
	uint64_t done = 0;

	while (done < size) {
		loff_t a = (loff_t)done, b = (loff_t)done;
		ssize_t n = copy_file_range(in, &a, out, &b, size - done, 0);

		if (n <= 0)
			break;
		done += (uint64_t)n;
	}
	while (done < size) {
		ssize_t n = pread(in, buf, size - done < CHUNK ? size - done : CHUNK, (off_t)done);
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		r = write_all(out, buf, (uint64_t)n, done);
		if (r < 0)
			return r;
		done += (uint64_t)n;
	}
	return 0;
}

static int apply(const struct writelog *log, const struct writelog_entry *e, uint64_t bytes, int fd, uint64_t size,
		 uint8_t *buf, char *err, size_t err_size)
{
	uint64_t dev = e->sector * writelog_sector_size(log);
	bool zeros = e->flags & WRITELOG_DISCARD;

	if (dev > size || bytes > size - dev)
		return lab_fail(err, err_size, -ENOSPC, "entry %" PRIu64 " writes [%" PRIu64 ", %" PRIu64 ") past the end of "
			    "the base image (%" PRIu64 " bytes): is it the image of this disk?", e->index, dev, dev + bytes,
			    size);
	/* a discarded range: zeros, by the file system where it can (no bytes written), else written */
	if (zeros && fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t)dev, (off_t)bytes) == 0)
		return 0;
	if (zeros)
		memset(buf, 0, bytes < CHUNK ? bytes : CHUNK);
	for (uint64_t off = 0; off < bytes; off += CHUNK) {
		uint64_t len = bytes - off < CHUNK ? bytes - off : CHUNK;
		int r = zeros ? 0 : writelog_read_data(log, e, off, buf, len);

		if (r < 0)
			return lab_fail(err, err_size, r, "entry %" PRIu64 ": cannot read its data: %s", e->index, strerror(-r));
		r = write_all(fd, buf, len, dev + off);
		if (r < 0)
			return lab_fail(err, err_size, r, "writing entry %" PRIu64 " to the image: %s", e->index, strerror(-r));
	}
	return 0;
}

uint64_t crash_image_base_size(int fd, const struct stat *st)
{
	off_t end;

	if (!S_ISBLK(st->st_mode))
		return (uint64_t)st->st_size;
	end = lseek(fd, 0, SEEK_END);
	return end < 0 ? 0 : (uint64_t)end;
}

int crash_image_make(const struct writelog *log, const char *base, const char *out, uint64_t cut,
		     uint64_t tear_bytes, char *err, size_t err_size)
{
	uint64_t n = writelog_entry_count(log), size;
	const struct writelog_entry *torn = cut < n ? writelog_entry(log, cut) : NULL;
	int in = -1, fd = -1, r;
	uint8_t *buf = NULL;
	struct stat st;

	if (cut > n)
		return lab_fail(err, err_size, -EINVAL, "cut %" PRIu64 " is past the log's %" PRIu64 " entries", cut, n);
	if (tear_bytes && (!torn || tear_bytes >= torn->data_bytes))
		return lab_fail(err, err_size, -EINVAL, "entry %" PRIu64 " %s: %" PRIu64 " bytes of it cannot be torn off",
			    cut, torn ? "is shorter" : "does not exist", tear_bytes);
	in = open(base, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) < 0) {
		r = lab_fail(err, err_size, -errno, "cannot read the base image %s: %s", base, strerror(errno));
		goto out;
	}
	size = crash_image_base_size(in, &st);
	fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = lab_fail(err, err_size, -errno, "cannot create the image %s: %s", out, strerror(errno));
		goto out;
	}
	buf = malloc(CHUNK);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	r = copy_base(in, fd, size, buf);
	if (r < 0) {
		lab_fail(err, err_size, r, "copying %s to %s: %s", base, out, strerror(-r));
		goto out;
	}
	for (uint64_t i = 0; i < cut; i++) {
		const struct writelog_entry *e = writelog_entry(log, i);
		uint64_t bytes = writelog_entry_image_bytes(log, e);

		if (!bytes)
			continue;
		r = apply(log, e, bytes, fd, size, buf, err, err_size);
		if (r < 0)
			goto out;
	}
	if (tear_bytes) {
		r = apply(log, torn, tear_bytes, fd, size, buf, err, err_size);
		if (r < 0)
			goto out;
	}
	if (fsync(fd) < 0)
		r = lab_fail(err, err_size, -errno, "syncing %s: %s", out, strerror(errno));
out:
	free(buf);
	if (in >= 0)
		close(in);
	if (fd >= 0)
		close(fd);
	return r;
}
