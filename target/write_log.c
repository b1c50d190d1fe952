/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the target received, for the crash lab. The write log is in the
 * dm-log-writes format lcloudctl replay reads (lib/lab/writelog.h): a super
 * block, then per write an entry sector and its data, with the log's sector
 * the namespace's logical block; Flush is a FLUSH entry, FUA a flag, and
 * Write Zeroes and Dataset Management deallocate are DISCARD entries of one
 * sector each, without data: the target makes both ranges read as zeros
 * (deallocate too, as Identify Namespace's DLFEAT says), so "these blocks
 * are zeros now" is exactly what either did, and replay writes zeros there.
 * A command's entries go in before it acts and before it is acknowledged,
 * all of them or none: a log that cannot take them (its size limit, a full
 * file system, a short or failed write) is put back as it was and the
 * command fails, so no acknowledged command is missing from the log. The
 * super block's count is kept current, so a cut leaves a whole log; a write
 * in flight at a cut is logged if the cut lands any of it. A log is one
 * device's, as dm-log-writes keeps it: each namespace has its own, named by
 * a pattern whose %n is the namespace ID, and holds the commands that
 * namespace received (a Flush of all namespaces is in every log).
 *
 * The trace is a line per I/O command with what a device could act on:
 * opcode, namespace, LBA range, FUA, Limited Retry, the DSM hint bits
 * (access frequency, latency, sequential, incompressible), the directive type
 * and specific (an FDP placement handle or a stream), and when it was
 * submitted and completed, in microseconds from the target's start, whose
 * CLOCK_MONOTONIC reading the second comment line gives; then what the
 * cloud back end (backend.c) made of it: its class, when it left the queue,
 * and the bytes it moved at the back end. With a back end, its counters
 * close the trace as '# backend' lines.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "nvme_tcp.h"
#include "target.h"
#include "write_log.h"

#define WLOG_MAGIC 0x6a736677736872ull
#define WLOG_SUPER_BYTES 28

static int create_new(const char *path)
{
	/* O_EXCL: never a device node, never a file someone else has */
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

/* Writes every byte of IOV at OFFSET, on through short writes. 0 or -errno. */
static int pwritev_all(int fd, struct iovec *iov, int n, uint64_t offset)
{
	while (n) {
		ssize_t w = pwritev(fd, iov, n, (off_t)offset);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		offset += (uint64_t)w;
		while (n && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov->iov_base = (uint8_t *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

static int put_super(struct target *t, struct target_wlog *log, uint64_t entries)
{
	uint8_t super[WLOG_SUPER_BYTES] = {0};
	struct iovec iov = {super, sizeof(super)};

	put64(super, WLOG_MAGIC);
	put64(super + 8, 1);
	put64(super + 16, entries);
	put32(super + 24, t->cfg.lba_size);
	return pwritev_all(log->fd, &iov, 1, 0);
}

int wlog_name(const char *pattern, unsigned int nsid, char *buf, size_t len)
{
	size_t used = 0;

	for (const char *p = pattern; *p; p++) {
		int n;

		if (*p != '%')
			n = snprintf(buf + used, len - used, "%c", *p);
		else if (p[1] == 'n')
			n = snprintf(buf + used, len - used, "%u", nsid), p++;
		else if (p[1] == '%')
			n = snprintf(buf + used, len - used, "%%"), p++;
		else
			return -EINVAL;
		if (n < 0 || (size_t)n >= len - used)
			return -ENAMETOOLONG;
		used += (size_t)n;
	}
	if (len)
		buf[used] = '\0';
	return used ? 0 : -EINVAL;
}

int wlog_open(struct target *t, unsigned int ns, const char *path)
{
	struct target_wlog *log = &t->wlog[ns];
	uint8_t *zero = calloc(1, t->cfg.lba_size);
	struct iovec iov = {zero, t->cfg.lba_size};
	int fd = -1, r;

	if (!zero || !(log->path = strdup(path))) {
		free(zero);
		return -ENOMEM;
	}
	fd = create_new(path);
	if (fd < 0) {
		r = -errno;
		goto fail;
	}
	log->fd = fd;
	/* sector 0 holds the super block, padded to a whole log sector */
	r = t->cfg.wlog_limit && t->cfg.wlog_limit < t->cfg.lba_size ? -EFBIG : pwritev_all(fd, &iov, 1, 0);
	if (r == 0)
		r = put_super(t, log, 0);
	if (r < 0) {
		close(fd);
		unlink(path); /* made here, an instant ago, and never written whole */
		goto fail;
	}
	free(zero);
	log->end = t->cfg.lba_size;
	log->active = true;
	return 0;
fail:
	free(zero);
	free(log->path);
	log->path = NULL;
	return r;
}

void wlog_close(struct target *t)
{
	for (unsigned int i = 0; i < TARGET_MAX_NAMESPACES; i++) {
		if (!t->wlog[i].active)
			continue;
		close(t->wlog[i].fd);
		free(t->wlog[i].path);
		t->wlog[i].path = NULL;
		t->wlog[i].active = false;
	}
}

/* The bytes one entry takes in the log: its sector and its data. */
static uint64_t entry_bytes(const struct target *t, const struct wlog_entry *e)
{
	bool has_data = !(e->flags & (WLOG_FLUSH | WLOG_DISCARD));

	return t->cfg.lba_size + (has_data ? (uint64_t)e->nlb * t->cfg.lba_size : 0);
}

/* Tells once why the log refuses, and again only after it took an entry since. Under wlog_lock. */
static void log_failure(struct target *t, unsigned int ns, int r, uint64_t want)
{
	struct target_wlog *log = &t->wlog[ns];

	if (log->failing)
		return;
	log->failing = true;
	if (r == -EFBIG)
		tlog(t, "write log %s: %llu more bytes would pass its limit of %llu (--write-log-limit): namespace %u's "
		     "writes, flushes, Write Zeroes and deallocations fail with Capacity Exceeded", log->path,
		     (unsigned long long)want, (unsigned long long)t->cfg.wlog_limit, ns + 1);
	else
		tlog(t, "write log %s: %s: namespace %u's writes, flushes, Write Zeroes and deallocations fail with %s "
		     "until the log takes entries again", log->path, strerror(-r), ns + 1,
		     wlog_status(r) == SC_CAPACITY_EXCEEDED ? "Capacity Exceeded" : "Write Fault");
}

/*
 * Appends N entries to LOG as one, or none of them: a failed write is cut
 * off again and the super block keeps the old count. Under wlog_lock.
 */
static int append_locked(struct target *t, unsigned int ns, const struct wlog_entry *e, unsigned int n)
{
	struct target_wlog *log = &t->wlog[ns];
	uint32_t lba = t->cfg.lba_size;
	uint64_t total = 0, at = log->end;
	uint8_t sector[4096]; /* one entry's header sector: the largest logical block */
	int r = 0;

	for (unsigned int i = 0; i < n; i++)
		total += entry_bytes(t, &e[i]);
	if (t->cfg.wlog_limit && (log->end > t->cfg.wlog_limit || total > t->cfg.wlog_limit - log->end)) {
		log_failure(t, ns, -EFBIG, total);
		return -EFBIG;
	}
	memset(sector, 0, sizeof(sector));
	for (unsigned int i = 0; i < n && r == 0; i++) {
		bool flush = e[i].flags & WLOG_FLUSH, has_data = !(e[i].flags & (WLOG_FLUSH | WLOG_DISCARD));
		struct iovec iov[2] = {{sector, lba}, {(void *)e[i].data, has_data ? (size_t)e[i].nlb * lba : 0}};

		put64(sector, flush ? 0 : e[i].slba);
		put64(sector + 8, flush ? 0 : e[i].nlb);
		put64(sector + 16, e[i].flags);
		put64(sector + 24, 0);
		r = pwritev_all(log->fd, iov, has_data ? 2 : 1, at);
		at += entry_bytes(t, &e[i]);
	}
	if (r == 0)
		r = put_super(t, log, log->entries + n);
	if (r < 0) {
		/* back to what it was: a short entry or a count past the entries would be a log that lies */
		if (ftruncate(log->fd, (off_t)log->end) < 0 || put_super(t, log, log->entries) < 0)
			tlog(t, "write log %s: cannot put it back as it was after a failed entry: %s", log->path,
			     strerror(errno));
		log_failure(t, ns, r, total);
		return r;
	}
	log->end = at;
	log->entries += n;
	log->failing = false;
	return 0;
}

int wlog_append(struct target *t, unsigned int ns, const struct wlog_entry *e, unsigned int n)
{
	int r;

	if (ns >= TARGET_MAX_NAMESPACES || !t->wlog[ns].active || n == 0)
		return 0;
	pthread_mutex_lock(&t->wlog_lock);
	r = append_locked(t, ns, e, n);
	pthread_mutex_unlock(&t->wlog_lock);
	return r;
}

int wlog_flush(struct target *t, uint32_t ns_mask)
{
	const struct wlog_entry flush = {.flags = WLOG_FLUSH};
	uint32_t done = 0;
	int r = 0;

	pthread_mutex_lock(&t->wlog_lock);
	for (unsigned int i = 0; i < TARGET_MAX_NAMESPACES && r == 0; i++) {
		if (!(ns_mask & 1u << i) || !t->wlog[i].active)
			continue;
		r = append_locked(t, i, &flush, 1);
		if (r == 0)
			done |= 1u << i;
	}
	/* one Flush is in every log it names or in none: the others' entries are taken back */
	for (unsigned int i = 0; r < 0 && i < TARGET_MAX_NAMESPACES; i++) {
		struct target_wlog *log = &t->wlog[i];

		if (!(done & 1u << i))
			continue;
		log->end -= t->cfg.lba_size;
		log->entries--;
		if (ftruncate(log->fd, (off_t)log->end) < 0 || put_super(t, log, log->entries) < 0)
			tlog(t, "write log %s: cannot take back a FLUSH entry: %s", log->path, strerror(errno));
	}
	pthread_mutex_unlock(&t->wlog_lock);
	return r;
}

int wlog_sync(struct target *t, uint32_t ns_mask)
{
	int r = 0;

	pthread_mutex_lock(&t->wlog_lock);
	for (unsigned int i = 0; i < TARGET_MAX_NAMESPACES; i++) {
		struct target_wlog *log = &t->wlog[i];
		int e;

		if (!(ns_mask & 1u << i) || !log->active)
			continue;
		e = put_super(t, log, log->entries);
		if (e == 0 && fdatasync(log->fd) < 0)
			e = -errno;
		if (e < 0) {
			tlog(t, "write log %s: %s: it may not hold its last entries on stable storage", log->path,
			     strerror(-e));
			r = e;
		}
	}
	pthread_mutex_unlock(&t->wlog_lock);
	return r;
}

int wlog_status(int r)
{
	/* a log with no room is a device with no capacity left: Linux tells its caller ENOSPC */
	return r == -EFBIG || r == -ENOSPC || r == -EDQUOT ? SC_CAPACITY_EXCEEDED : SC_WRITE_FAULT;
}

int trace_open(struct target *t, const char *path)
{
	int fd = create_new(path);

	if (fd < 0)
		return -errno;
	t->trace = fdopen(fd, "w");
	if (!t->trace) {
		close(fd);
		return -ENOMEM;
	}
	fprintf(t->trace, "# seq opcode nsid slba nlb fua lr dsm dtype dspec submitted_us completed_us status class "
		"dispatched_us backend_bytes backend_ops\n");
	/* the times' zero on CLOCK_MONOTONIC: a program on the same host can line its own events up with them */
	fprintf(t->trace, "# clock monotonic start_us %" PRIu64 "\n", t->started_us);
	fflush(t->trace);
	return 0;
}

uint64_t trace_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void trace_command(struct target *t, const uint8_t *sqe, uint64_t submitted_us, uint64_t completed_us, int status,
		   const char *extra)
{
	uint32_t cdw12 = get32(sqe + SQE_CDW12), cdw13 = get32(sqe + SQE_CDW13);
	uint8_t opc = sqe[SQE_OPC];
	bool rw = opc == 0x01 || opc == 0x02 || opc == 0x08;

	if (!t->trace)
		return;
	pthread_mutex_lock(&t->wlog_lock);
	fprintf(t->trace, "%" PRIu64 " 0x%02x %u %" PRIu64 " %u %u %u 0x%02x %u %u %" PRIu64 " %" PRIu64 " 0x%03x %s\n",
		++t->trace_seq, opc, get32(sqe + SQE_NSID), rw ? get64(sqe + SQE_CDW10) : 0,
		rw ? (cdw12 & 0xffff) + 1 : 0, rw ? cdw12 >> 30 & 1 : 0, rw ? cdw12 >> 31 : 0,
		rw ? cdw13 & 0xff : 0, rw ? cdw12 >> 20 & 0xf : 0, rw ? cdw13 >> 16 : 0,
		submitted_us - t->started_us, completed_us - t->started_us, status < 0 ? 0xfff : status & 0x7ff, extra);
	fflush(t->trace);
	pthread_mutex_unlock(&t->wlog_lock);
}
