/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the target received, for the crash lab. The write log is in the
 * dm-log-writes format lcloudctl replay reads (lib/lab/writelog.h): a super
 * block, then per write an entry sector and its data, with the log's sector
 * the namespace's logical block; Flush is a FLUSH entry, FUA a flag, Dataset
 * Management deallocate a DISCARD, Write Zeroes a write of zeros. A write's
 * entry goes in as it is applied (power.c), before it is acknowledged, and
 * the super block's count is kept current, so a cut leaves a whole log; a
 * write in flight at a cut is logged if the cut lands any of it. A log is one
 * device's, as dm-log-writes keeps it: each namespace has its own, named by
 * a pattern whose %n is the namespace ID, and holds the commands that
 * namespace received (a Flush of all namespaces is in every log).
 *
 * The trace is a line per I/O command with what a device could act on:
 * opcode, namespace, LBA range, FUA, Limited Retry, the DSM hint bits
 * (access frequency, latency, sequential, incompressible), the directive type
 * and specific (an FDP placement handle or a stream), and when it was
 * submitted and completed; then what the cloud back end (backend.c) made of
 * it: its class, when it left the queue, and the bytes it moved at the back
 * end. With a back end, its counters close the trace as '# backend' lines.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvme_tcp.h"
#include "target.h"
#include "write_log.h"

#define WLOG_MAGIC 0x6a736677736872ull

static int create_new(const char *path)
{
	/* O_EXCL: never a device node, never a file someone else has */
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

static void put_super(struct target *t, struct target_wlog *log)
{
	uint8_t super[28] = {0};

	put64(super, WLOG_MAGIC);
	put64(super + 8, 1);
	put64(super + 16, log->entries);
	put32(super + 24, t->cfg.lba_size);
	if (pwrite(log->fd, super, sizeof(super), 0) != (ssize_t)sizeof(super))
		tlog(t, "write log: the super block: %s", strerror(errno));
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
	int fd = create_new(path);

	if (fd < 0 || !zero) {
		int r = fd < 0 ? -errno : -ENOMEM;

		if (fd >= 0)
			close(fd);
		free(zero);
		return r;
	}
	log->fd = fd;
	log->active = true;
	/* sector 0 holds the super block, padded to a whole log sector */
	if (pwrite(fd, zero, t->cfg.lba_size, 0) != (ssize_t)t->cfg.lba_size) {
		free(zero);
		return -errno;
	}
	free(zero);
	log->end = t->cfg.lba_size;
	put_super(t, log);
	return 0;
}

void wlog_close(struct target *t)
{
	for (unsigned int i = 0; i < TARGET_MAX_NAMESPACES; i++) {
		if (!t->wlog[i].active)
			continue;
		close(t->wlog[i].fd);
		t->wlog[i].active = false;
	}
}

void wlog_append(struct target *t, unsigned int ns, uint64_t slba, uint32_t nlb, const uint8_t *data,
		 uint32_t flags)
{
	uint32_t lba = t->cfg.lba_size;
	bool has_data = !(flags & (WLOG_FLUSH | WLOG_DISCARD));
	uint64_t data_len = has_data ? (uint64_t)nlb * lba : 0;
	struct target_wlog *log = ns < TARGET_MAX_NAMESPACES ? &t->wlog[ns] : NULL;
	uint8_t *entry;

	if (!log || !log->active)
		return;
	entry = calloc(1, lba + data_len);
	if (!entry) {
		tlog(t, "write log: out of memory: an entry is missing");
		return;
	}
	put64(entry, flags & WLOG_FLUSH ? 0 : slba);
	put64(entry + 8, flags & WLOG_FLUSH ? 0 : nlb);
	put64(entry + 16, flags);
	put64(entry + 24, 0);
	if (has_data && data)
		memcpy(entry + lba, data, data_len);
	pthread_mutex_lock(&t->wlog_lock);
	if (pwrite(log->fd, entry, lba + data_len, (off_t)log->end) == (ssize_t)(lba + data_len)) {
		log->end += lba + data_len;
		log->entries++;
		put_super(t, log);
	} else {
		tlog(t, "write log: %s: an entry is missing", strerror(errno));
	}
	pthread_mutex_unlock(&t->wlog_lock);
	free(entry);
}

void wlog_sync(struct target *t)
{
	pthread_mutex_lock(&t->wlog_lock);
	for (unsigned int i = 0; i < TARGET_MAX_NAMESPACES; i++) {
		if (!t->wlog[i].active)
			continue;
		put_super(t, &t->wlog[i]);
		fdatasync(t->wlog[i].fd);
	}
	pthread_mutex_unlock(&t->wlog_lock);
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
	/* times are from here: a program of the same machine finds its own moments in the trace */
	fprintf(t->trace, "# started_us %" PRIu64 " (CLOCK_MONOTONIC)\n", t->started_us);
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
