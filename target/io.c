/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * NVM commands on a namespace's backing file: Read, Write (FUA honoured),
 * Flush, Write Zeroes and Dataset Management (deallocate punches a hole).
 * With a volatile write cache on, writes go to the cache (power.c) and
 * reads see it; anything that must be durable flushes it first. A write is
 * in flight (power.c) from its capsule's arrival until it is applied, so a
 * power cut meanwhile decides what it leaves.
 * Every field a host sent is checked (namespace, range, transfer length,
 * a Write's directive, every DSM range) before the first byte of the file is
 * touched, so a command that fails leaves the file as it was. A command
 * the write log records is logged before it acts, and fails (Capacity
 * Exceeded when the log has no room) when it cannot be: nothing completes
 * that the log does not hold. Deallocated blocks read as zeros, as DLFEAT
 * says, so the log's DISCARD entry is what deallocate and Write Zeroes both
 * did. With FDP on, I/O Management Receive and Send answer for the
 * placement handles (fdp.c) and each Write is counted on its handle.
 * With a cloud back end (backend.c) a command waits there for its turn and
 * runs here when the back end completes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns_guard.h"
#include "nvme_tcp.h"
#include "power.h"
#include "target.h"
#include "write_log.h"

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif
#ifndef FALLOC_FL_ZERO_RANGE
#define FALLOC_FL_ZERO_RANGE 0x10
#endif

enum {
	IO_FLUSH = 0x00,
	IO_WRITE = 0x01,
	IO_READ = 0x02,
	IO_WRITE_ZEROES = 0x08,
	IO_DSM = 0x09,
	IO_MGMT_RECEIVE = 0x12,
	IO_MGMT_SEND = 0x1d,
};

#define RW_FUA (1u << 30)
#define DSM_DEALLOCATE (1u << 2)

struct target_namespace *target_namespace(struct target *t, uint32_t nsid)
{
	return nsid >= 1 && nsid <= t->n_ns ? &t->ns[nsid - 1] : NULL;
}

/* SLBA and NLB of a Read, Write or Write Zeroes, checked against the namespace. */
static int lba_range(const struct target *t, const struct target_namespace *ns, const struct command *cmd,
		     uint64_t *ret_offset, uint64_t *ret_len)
{
	uint64_t slba = get64(cmd->sqe + SQE_CDW10);
	uint64_t nlb = (uint64_t)get16(cmd->sqe + SQE_CDW12) + 1;

	if (slba > ns->blocks || nlb > ns->blocks - slba)
		return SC_LBA_RANGE;
	*ret_offset = slba * t->cfg.lba_size;
	*ret_len = nlb * t->cfg.lba_size;
	return SC_SUCCESS;
}

static bool write_cache_on(struct conn *c)
{
	bool on;

	pthread_mutex_lock(&c->t->lock);
	on = c->ctrl->write_cache;
	pthread_mutex_unlock(&c->t->lock);
	return on;
}

/* After a write: durable now if FUA asked or the cache is off (the file is O_DSYNC only without a cache). */
static int settle(struct conn *c, const struct target_namespace *ns, bool fua)
{
	if (!c->t->cfg.vwc)
		return SC_SUCCESS;
	if ((fua || !write_cache_on(c)) && fdatasync(ns->fd) < 0)
		return SC_WRITE_FAULT;
	return SC_SUCCESS;
}

static void count(struct target *t, bool write, uint64_t bytes)
{
	pthread_mutex_lock(&t->lock);
	if (write) {
		t->write_cmds++;
		t->write_units += bytes / 512;
	} else {
		t->read_cmds++;
		t->read_units += bytes / 512;
	}
	pthread_mutex_unlock(&t->lock);
}

/* The checks a write passes before it may be in flight; the same ones read_write() makes. */
static bool write_checks(const struct target *t, const struct target_namespace *ns, const struct command *cmd)
{
	uint64_t offset, len;

	return lba_range(t, ns, cmd, &offset, &len) == SC_SUCCESS && len == cmd->data_len &&
	       fdp_directive_accepted(t, cmd->sqe);
}

void io_arrives(struct conn *c, struct command *cmd)
{
	struct target_namespace *ns = target_namespace(c->t, get32(cmd->sqe + SQE_NSID));

	if (cmd->sqe[SQE_OPC] != IO_WRITE || !ns || !write_checks(c->t, ns, cmd))
		return; /* it fails its checks before it touches the medium: nothing for a cut to decide */
	power_inflight_add(c->t, cmd, (unsigned int)(ns - c->t->ns), get64(cmd->sqe + SQE_CDW10),
			   (uint32_t)get16(cmd->sqe + SQE_CDW12) + 1);
}

/* A write in flight applied: to the cache (acknowledged from it) or to the file, durable by O_DSYNC or FUA. */
static int apply_write(struct conn *c, struct target_namespace *ns, struct command *cmd, bool fua,
		       unsigned int handle)
{
	struct target *t = c->t;
	bool to_cache = t->cfg.vwc && !fua && write_cache_on(c);
	int r;

	if (!cmd->inflight) {
		/* io_arrives() makes the same checks, so this is a guard: in flight from now */
		power_inflight_add(t, cmd, (unsigned int)(ns - t->ns), get64(cmd->sqe + SQE_CDW10),
				   (uint32_t)get16(cmd->sqe + SQE_CDW12) + 1);
	}
	/* durable now: what the cache holds goes first, so no older write can land over this one */
	if (t->cfg.vwc && !to_cache && cache_flush(t) < 0)
		return SC_WRITE_FAULT;
	r = power_apply_write(t, cmd, to_cache, fua ? WLOG_FUA : 0);
	if (r == -ESHUTDOWN) {
		conn_fail(c, "the power is off");
		return r;
	}
	if (r == -EROFS)
		return SC_NS_WRITE_PROTECTED;
	if (r < 0)
		return wlog_status(r); /* the log had no room (nothing was written), or the medium failed */
	count(t, true, cmd->data_len);
	fdp_count_write(t, handle, cmd->data_len);
	return to_cache ? SC_SUCCESS : settle(c, ns, fua);
}

static int read_write(struct conn *c, struct target_namespace *ns, struct command *cmd, bool write)
{
	bool fua = get32(cmd->sqe + SQE_CDW12) & RW_FUA;
	uint64_t offset, len, done = 0;
	int status = lba_range(c->t, ns, cmd, &offset, &len);
	unsigned int index = (unsigned int)(ns - c->t->ns), handle = 0;

	if (status)
		return status;
	if (len != cmd->data_len)
		return SC_SGL_LENGTH_INVALID;
	if (write && (status = fdp_write_placement(c->t, get32(cmd->sqe + SQE_NSID), cmd->sqe, &handle)))
		return status;
	if (write)
		return apply_write(c, ns, cmd, fua, handle);
	while (done < len) {
		ssize_t n = pread(ns->fd, cmd->data + done, len - done, (off_t)(offset + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return SC_READ_ERROR;
		if (n == 0)
			break; /* past the file's end (it shrank): the buffer's zeros stand */
		done += (uint64_t)n;
	}
	if (c->t->cfg.vwc)
		cache_overlay(c->t, index, offset / c->t->cfg.lba_size, (uint32_t)(len / c->t->cfg.lba_size), cmd->data);
	count(c->t, false, len);
	return SC_SUCCESS;
}

/* Zeros over the range, through the namespace's write gate (ns_guard.h); -EROFS when it is write protected. */
static int zero_range(struct target *t, unsigned int index, uint64_t offset, uint64_t len)
{
	static const uint8_t zeros[65536];
	int r = ns_write_begin(t, index);

	if (r < 0)
		return r;
	if (fallocate(t->ns[index].fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)len) == 0)
		r = ns_settle(t, index);
	else
		while (len && r == 0) {
			uint64_t chunk = len < sizeof(zeros) ? len : sizeof(zeros);

			r = ns_pwrite(t, index, zeros, chunk, offset);
			offset += chunk;
			len -= chunk;
		}
	ns_write_end(t, index);
	return r;
}

static int write_zeroes(struct conn *c, struct target_namespace *ns, struct command *cmd)
{
	bool fua = get32(cmd->sqe + SQE_CDW12) & RW_FUA;
	uint64_t offset, len;
	int status = lba_range(c->t, ns, cmd, &offset, &len);
	struct wlog_entry e;

	if (status)
		return status;
	/* its storage gained a user after the start (ns_watch.c): reads go on, changes are refused */
	if (ns_write_protected(c->t, (unsigned int)(ns - c->t->ns)))
		return SC_NS_WRITE_PROTECTED;
	/* one sector however long the range: the range reads as zeros, which is what replay makes of it */
	e = (struct wlog_entry){offset / c->t->cfg.lba_size, (uint32_t)(len / c->t->cfg.lba_size),
				WLOG_DISCARD | (fua ? WLOG_FUA : 0), NULL};
	status = wlog_append(c->t, (unsigned int)(ns - c->t->ns), &e, 1);
	if (status < 0)
		return wlog_status(status);
	if (c->t->cfg.vwc && cache_flush(c->t) < 0)
		return SC_WRITE_FAULT;
	status = zero_range(c->t, (unsigned int)(ns - c->t->ns), offset, len);
	if (status < 0)
		return status == -EROFS ? SC_NS_WRITE_PROTECTED : SC_WRITE_FAULT;
	return settle(c, ns, fua);
}

static int dataset_management(struct conn *c, struct target_namespace *ns, struct command *cmd)
{
	uint32_t nr = (uint32_t)cmd->sqe[SQE_CDW10] + 1, n = 0;
	uint32_t lba = c->t->cfg.lba_size;
	struct wlog_entry ranges[256];
	int r;

	if (cmd->data_len < nr * 16)
		return SC_SGL_LENGTH_INVALID;
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t nlb = get32(cmd->data + 16 * i + 4);
		uint64_t slba = get64(cmd->data + 16 * i + 8);

		if (slba > ns->blocks || nlb > ns->blocks - slba)
			return SC_LBA_RANGE;
		if (nlb)
			ranges[n++] = (struct wlog_entry){slba, nlb, WLOG_DISCARD, NULL};
	}
	if (!(get32(cmd->sqe + SQE_CDW11) & DSM_DEALLOCATE))
		return SC_SUCCESS; /* access hints only: noted by nothing yet */
	if (ns_write_protected(c->t, (unsigned int)(ns - c->t->ns)))
		return SC_NS_WRITE_PROTECTED;
	r = wlog_append(c->t, (unsigned int)(ns - c->t->ns), ranges, n);
	if (r < 0)
		return wlog_status(r);
	if (c->t->cfg.vwc && cache_flush(c->t) < 0)
		return SC_WRITE_FAULT;
	for (uint32_t i = 0; i < n; i++) {
		off_t at = (off_t)(ranges[i].slba * lba), len = (off_t)((uint64_t)ranges[i].nlb * lba);

		/* zeros from now on, as DLFEAT says: a hole where the file system has them, written zeros elsewhere */
		if (ns_write_begin(c->t, (unsigned int)(ns - c->t->ns)) < 0)
			return SC_NS_WRITE_PROTECTED;
		r = fallocate(ns->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, at, len);
		ns_write_end(c->t, (unsigned int)(ns - c->t->ns));
		if (r < 0 && (r = zero_range(c->t, (unsigned int)(ns - c->t->ns), (uint64_t)at, (uint64_t)len)) < 0)
			return r == -EROFS ? SC_NS_WRITE_PROTECTED : SC_WRITE_FAULT;
	}
	return SC_SUCCESS;
}

static int flush(struct conn *c, uint32_t nsid)
{
	struct target *t = c->t;
	uint32_t mask;
	int r;

	if (nsid != 0xffffffff && !target_namespace(t, nsid))
		return SC_INVALID_NS;
	mask = nsid == 0xffffffff ? (uint32_t)((1ull << t->n_ns) - 1) : 1u << (nsid - 1);
	/* the cached writes of a namespace whose storage gained a user never reach it (power.c, destage) */
	for (unsigned int i = 0; i < t->n_ns; i++)
		if ((mask & 1u << i) && ns_write_protected(t, i))
			return SC_NS_WRITE_PROTECTED;
	/* each namespace's log has the flushes it received, logged first: a Flush the log lacks never completes */
	r = wlog_flush(t, mask);
	if (r < 0)
		return wlog_status(r);
	if (t->cfg.vwc && cache_flush(t) < 0)
		return SC_WRITE_FAULT;
	for (unsigned int i = 0; i < t->n_ns; i++)
		if ((mask & 1u << i) && fdatasync(t->ns[i].fd) < 0)
			return SC_WRITE_FAULT;
	/* and what the log says is as durable as the writes it describes */
	return wlog_sync(t, mask) < 0 ? SC_WRITE_FAULT : SC_SUCCESS;
}

static int execute_command(struct conn *c, struct command *cmd);

int io_execute(struct conn *c, struct command *cmd)
{
	if (c->t->backend)
		return backend_submit(c->t, c, cmd);
	return io_run(c, cmd, NULL);
}

/* The bytes a Read or Write moves to or from the medium. */
static uint64_t medium_bytes(const struct target *t, const uint8_t *sqe)
{
	uint8_t opc = sqe[SQE_OPC];

	return opc == IO_READ || opc == IO_WRITE ? ((uint64_t)get16(sqe + SQE_CDW12) + 1) * t->cfg.lba_size : 0;
}

int io_run(struct conn *c, struct command *cmd, const struct backend_item *be)
{
	uint64_t submitted = 0;
	char extra[96];
	int status;

	if (c->t->trace)
		submitted = be ? be->arrived_us : trace_now_us();
	status = execute_command(c, cmd);
	if (c->t->trace) {
		/* the class the back end sees, when it started the command, and what it moved at the back end */
		snprintf(extra, sizeof(extra), "%s %" PRIu64 " %" PRIu64 " %u",
			 sched_class_name(be ? (enum sched_class)be->cls : backend_classify(c->t, cmd->sqe)),
			 (be ? be->dispatched_us : submitted) - c->t->started_us,
			 be ? be->backend_bytes : medium_bytes(c->t, cmd->sqe),
			 be ? be->backend_ops : medium_bytes(c->t, cmd->sqe) ? 1u : 0u);
		trace_command(c->t, cmd->sqe, submitted, trace_now_us(), status, extra);
	}
	return status;
}

static int execute_command(struct conn *c, struct command *cmd)
{
	uint32_t nsid = get32(cmd->sqe + SQE_NSID);
	uint8_t opc = cmd->sqe[SQE_OPC];
	struct target_namespace *ns;

	if (opc == IO_FLUSH)
		return flush(c, nsid);
	if (opc != IO_WRITE && opc != IO_READ && opc != IO_WRITE_ZEROES && opc != IO_DSM && opc != IO_MGMT_RECEIVE &&
	    opc != IO_MGMT_SEND)
		return SC_INVALID_OPCODE;
	ns = target_namespace(c->t, nsid);
	if (!ns)
		return SC_INVALID_NS;
	if (opc == IO_MGMT_RECEIVE || opc == IO_MGMT_SEND)
		return fdp_io_management(c->t, cmd);
	switch (opc) {
	case IO_WRITE:
		return read_write(c, ns, cmd, true);
	case IO_READ:
		return read_write(c, ns, cmd, false);
	case IO_WRITE_ZEROES:
		return write_zeroes(c, ns, cmd);
	default:
		return dataset_management(c, ns, cmd);
	}
}
