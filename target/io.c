/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * NVM commands on a namespace's backing file: Read, Write (FUA honoured),
 * Flush, Write Zeroes and Dataset Management (deallocate punches a hole).
 * With a volatile write cache on, writes go to the cache (power.c) and
 * reads see it; anything that must be durable flushes it first.
 * Every field a host sent is checked (namespace, range, transfer length,
 * a Write's directive, every DSM range) before the first byte of the file is
 * touched, so a command that fails leaves the file as it was. With FDP on,
 * I/O Management Receive and Send answer for the placement handles (fdp.c)
 * and each Write is counted on its handle.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
#define SC_WRITE_FAULT 0x280
#define SC_READ_ERROR 0x281

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
		wlog_append(c->t, index, offset / c->t->cfg.lba_size, (uint32_t)(len / c->t->cfg.lba_size), cmd->data,
			    fua ? WLOG_FUA : 0);
	if (write && c->t->cfg.vwc) {
		if (!fua && write_cache_on(c)) {
			/* acknowledged now, on the medium when flushed, written back, or the power cut decides */
			if (cache_write(c->t, index, offset / c->t->cfg.lba_size, (uint32_t)(len / c->t->cfg.lba_size),
					cmd->data) < 0)
				return SC_WRITE_FAULT;
			count(c->t, true, len);
			fdp_count_write(c->t, handle, len);
			return SC_SUCCESS;
		}
		/* durable now: what the cache holds goes first, so no older write can land over this one */
		if (cache_flush(c->t) < 0)
			return SC_WRITE_FAULT;
	}
	while (done < len) {
		ssize_t n = write ? pwrite(ns->fd, cmd->data + done, len - done, (off_t)(offset + done))
				  : pread(ns->fd, cmd->data + done, len - done, (off_t)(offset + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (n == 0 && write))
			return write ? SC_WRITE_FAULT : SC_READ_ERROR;
		if (n == 0)
			break; /* past the file's end (it shrank): the buffer's zeros stand */
		done += (uint64_t)n;
	}
	if (!write && c->t->cfg.vwc)
		cache_overlay(c->t, index, offset / c->t->cfg.lba_size, (uint32_t)(len / c->t->cfg.lba_size), cmd->data);
	count(c->t, write, len);
	if (write)
		fdp_count_write(c->t, handle, len);
	return write ? settle(c, ns, fua) : SC_SUCCESS;
}

static int zero_range(const struct target_namespace *ns, uint64_t offset, uint64_t len)
{
	static const uint8_t zeros[65536];

	if (fallocate(ns->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)len) == 0)
		return 0;
	while (len) {
		size_t chunk = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);
		ssize_t n = pwrite(ns->fd, zeros, chunk, (off_t)offset);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		offset += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

static int write_zeroes(struct conn *c, struct target_namespace *ns, struct command *cmd)
{
	uint64_t offset, len;
	int status = lba_range(c->t, ns, cmd, &offset, &len);

	if (status)
		return status;
	wlog_append(c->t, (unsigned int)(ns - c->t->ns), offset / c->t->cfg.lba_size,
		    (uint32_t)(len / c->t->cfg.lba_size), NULL, get32(cmd->sqe + SQE_CDW12) & RW_FUA ? WLOG_FUA : 0);
	if (c->t->cfg.vwc && cache_flush(c->t) < 0)
		return SC_WRITE_FAULT;
	if (zero_range(ns, offset, len) < 0)
		return SC_WRITE_FAULT;
	return settle(c, ns, get32(cmd->sqe + SQE_CDW12) & RW_FUA);
}

static int dataset_management(struct conn *c, struct target_namespace *ns, struct command *cmd)
{
	uint32_t nr = (uint32_t)cmd->sqe[SQE_CDW10] + 1;
	uint32_t lba = c->t->cfg.lba_size;

	if (cmd->data_len < nr * 16)
		return SC_SGL_LENGTH_INVALID;
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t nlb = get32(cmd->data + 16 * i + 4);
		uint64_t slba = get64(cmd->data + 16 * i + 8);

		if (slba > ns->blocks || nlb > ns->blocks - slba)
			return SC_LBA_RANGE;
	}
	if (!(get32(cmd->sqe + SQE_CDW11) & DSM_DEALLOCATE))
		return SC_SUCCESS; /* access hints only: noted by nothing yet */
	if (c->t->cfg.vwc && cache_flush(c->t) < 0)
		return SC_WRITE_FAULT;
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t nlb = get32(cmd->data + 16 * i + 4);
		uint64_t slba = get64(cmd->data + 16 * i + 8);

		/* deallocation is advisory (DLFEAT says nothing of what reads return): a failed punch is no error */
		if (nlb)
			wlog_append(c->t, (unsigned int)(ns - c->t->ns), slba, (uint32_t)nlb, NULL, WLOG_DISCARD);
		if (nlb)
			(void)fallocate(ns->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(slba * lba),
					(off_t)(nlb * lba));
	}
	return SC_SUCCESS;
}

static int flush(struct conn *c, uint32_t nsid)
{
	struct target *t = c->t;

	if (nsid != 0xffffffff && !target_namespace(t, nsid))
		return SC_INVALID_NS;
	if (nsid == 0xffffffff || nsid == 1)
		wlog_append(t, 0, 0, 0, NULL, WLOG_FLUSH);
	if (t->cfg.vwc && cache_flush(t) < 0)
		return SC_WRITE_FAULT;
	if (nsid == 0xffffffff) {
		for (unsigned int i = 0; i < t->n_ns; i++)
			if (fdatasync(t->ns[i].fd) < 0)
				return SC_WRITE_FAULT;
		return SC_SUCCESS;
	}
	return fdatasync(target_namespace(t, nsid)->fd) < 0 ? SC_WRITE_FAULT : SC_SUCCESS;
}

static int execute_command(struct conn *c, struct command *cmd);

int io_execute(struct conn *c, struct command *cmd)
{
	uint64_t submitted;
	int status;

	if (!power_command_arrives(c->t)) {
		conn_fail(c, "the power is off");
		return -EIO;
	}
	submitted = c->t->trace ? trace_now_us() : 0;
	status = execute_command(c, cmd);
	if (c->t->trace)
		trace_command(c->t, cmd->sqe, submitted, trace_now_us(), status);
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
