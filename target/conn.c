/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One NVMe/TCP connection, fed the bytes its socket received: the PDU
 * framing (ICReq first, then command capsules and H2CData), the data each
 * command carries (in the capsule, or asked for with R2Ts of at most
 * --max-r2t-bytes each, as many outstanding as the host's MAXR2T and ours
 * allow, answered in order), and the answers (C2HData, CapsuleResp). Everything a peer controls is checked here before
 * a handler sees the command: a PDU that breaks the transport's rules makes
 * conn_feed() fail with a reason and the caller closes the connection, so no
 * handler runs, and nothing reaches a backing file, on a malformed PDU.
 * With a cloud back end (backend.c), I/O commands are answered from its
 * thread (conn_complete): each PDU is sent whole under the send lock, and a
 * slot's state is read and changed under the slot lock.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvme_tcp.h"
#include "power.h"
#include "target.h"
#include "write_log.h"

static uint32_t max_transfer(const struct target *t)
{
	return 4096u << t->cfg.mdts;
}

/* The largest PDU a peer may send: an H2CData PDU or a capsule with in-capsule data. */
static uint32_t rx_limit(void)
{
	uint32_t capsule = TCP_CAPSULE_CMD_HLEN + TARGET_IO_INLINE;
	uint32_t data = TCP_DATA_HLEN + TARGET_MAX_H2C_DATA;

	return capsule > data ? capsule : data;
}

void conn_fail(struct conn *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
	va_end(ap);
}

int conn_init(struct conn *c, struct target *t, const struct conn_io *io, unsigned int id)
{
	memset(c, 0, sizeof(*c));
	c->t = t;
	c->io = *io;
	c->id = id;
	c->rx_cap = rx_limit();
	c->rx = malloc(c->rx_cap);
	pthread_mutex_init(&c->send_lock, NULL);
	pthread_mutex_init(&c->slot_lock, NULL);
	return c->rx ? 0 : -ENOMEM;
}

/* The most one R2T asks for. */
static uint32_t r2t_bytes(const struct target *t)
{
	return t->cfg.max_r2t_bytes ? t->cfg.max_r2t_bytes : TARGET_MAX_R2T_BYTES;
}

/* A transfer tag names the command's slot (7 bits) and which of its R2Ts it answers (9 bits). */
#define TTAG_SLOT_BITS 7
#define TTAG_INDEX_MASK 0x1ffu
_Static_assert(TARGET_QUEUE_ENTRIES <= 1u << TTAG_SLOT_BITS, "a slot fits its transfer tag bits");

/* Frees CMD's slot, and its command ID with it; RET_COPY (if given) keeps the command. Returns its data to free. */
static uint8_t *slot_free(struct conn *c, struct command *cmd, struct command *ret_copy)
{
	uint8_t *data;

	/* a write still in flight when its connection goes is aborted: it never reaches the medium */
	power_inflight_remove(c->t, cmd);
	pthread_mutex_lock(&c->slot_lock);
	if (ret_copy)
		*ret_copy = *cmd;
	data = cmd->data;
	memset(cmd, 0, sizeof(*cmd));
	pthread_mutex_unlock(&c->slot_lock);
	return data;
}

static void command_release(struct conn *c, struct command *cmd)
{
	free(slot_free(c, cmd, NULL));
}

void conn_destroy(struct conn *c)
{
	if (!c)
		return;
	/* the back end lets go of this connection's commands first: nothing answers them after this */
	backend_cancel(c->t, c);
	for (unsigned int i = 0; i < TARGET_QUEUE_ENTRIES; i++)
		command_release(c, &c->cmds[i]);
	free(c->rx);
	c->rx = NULL;
	if (c->ctrl) {
		controller_detach(c->t, c);
		controller_put(c->t, c->ctrl);
	}
	c->ctrl = NULL;
	pthread_mutex_destroy(&c->send_lock);
	pthread_mutex_destroy(&c->slot_lock);
}

/* One PDU. RECORD: a failure is the connection's reason (its own thread), else the reader finds out. */
static int send_bytes(struct conn *c, const struct iovec *iov, int n, bool record)
{
	int r;

	pthread_mutex_lock(&c->send_lock);
	r = c->io.send(c->io.ctx, iov, n);
	pthread_mutex_unlock(&c->send_lock);
	if (r < 0 && record)
		conn_fail(c, "send failed: %s", strerror(-r));
	return r;
}

static void common_header(uint8_t *h, uint8_t type, uint8_t flags, uint8_t hlen, uint8_t pdo, uint32_t plen)
{
	h[0] = type;
	h[1] = flags;
	h[2] = hlen;
	h[3] = pdo;
	put32(h + 4, plen);
}

static int send_response(struct conn *c, const struct command *cmd, uint16_t status, bool record)
{
	uint8_t pdu[TCP_CAPSULE_RESP_LEN] = {0};
	uint8_t *cqe = pdu + TCP_CH_LEN;
	struct iovec iov = {pdu, sizeof(pdu)};
	uint16_t sqhd;

	pthread_mutex_lock(&c->slot_lock);
	sqhd = c->sqhd;
	pthread_mutex_unlock(&c->slot_lock);
	common_header(pdu, TCP_CAPSULE_RESP, 0, TCP_CAPSULE_RESP_LEN, 0, TCP_CAPSULE_RESP_LEN);
	put32(cqe + 0, cmd->result0);
	put32(cqe + 4, cmd->result1);
	put16(cqe + 8, sqhd);
	put16(cqe + 10, c->qid);
	put16(cqe + 12, cmd->cid);
	put16(cqe + 14, (uint16_t)(status << 1)); /* phase 0: fabrics have no phase */
	return send_bytes(c, &iov, 1, record);
}

/* The data of a completed read-like command, then (unless SUCCESS said it) its response. */
static int send_data(struct conn *c, const struct command *cmd, bool record)
{
	uint32_t done = 0;

	while (done < cmd->data_len) {
		uint32_t chunk = cmd->data_len - done;
		uint8_t hdr[TCP_DATA_HLEN] = {0};
		uint8_t flags = 0;
		struct iovec iov[2];

		if (chunk > TARGET_MAX_H2C_DATA)
			chunk = TARGET_MAX_H2C_DATA;
		if (done + chunk == cmd->data_len) {
			flags |= TCP_F_DATA_LAST;
			if (c->sqflow_disabled)
				flags |= TCP_F_DATA_SUCCESS;
		}
		common_header(hdr, TCP_C2H_DATA, flags, TCP_DATA_HLEN, TCP_DATA_HLEN, TCP_DATA_HLEN + chunk);
		put16(hdr + DATA_CCCID, cmd->cid);
		put32(hdr + DATA_OFFSET, done);
		put32(hdr + DATA_LENGTH, chunk);
		iov[0] = (struct iovec){hdr, sizeof(hdr)};
		iov[1] = (struct iovec){cmd->data + done, chunk};
		if (send_bytes(c, iov, 2, record) < 0)
			return -EIO;
		done += chunk;
	}
	return c->sqflow_disabled ? 0 : send_response(c, cmd, SC_SUCCESS, record);
}

/* A completed command's answer: its data, or its status (with Do Not Retry when it failed). */
static int answer(struct conn *c, const struct command *cmd, int status, bool record)
{
	if (status == SC_SUCCESS && cmd->dir == DIR_TO_HOST && cmd->data_len)
		return send_data(c, cmd, record);
	return send_response(c, cmd, (uint16_t)(status ? status | SC_DNR : 0), record);
}

void conn_complete(struct conn *c, struct command *cmd, int status)
{
	struct command done;

	if (status < 0)
		return; /* the power is off: the cut decides it and no answer ever comes */
	/*
	 * The slot is free before the answer goes: the host may send a command with the same ID as soon as
	 * it has the answer, and the reader must not find this one still in flight. The copy answers.
	 */
	done.data = slot_free(c, cmd, &done);
	/* a send that fails leaves the host waiting: end the connection, whose reader then says why */
	if (answer(c, &done, status, false) < 0 && c->io.shutdown)
		c->io.shutdown(c->io.ctx);
	free(done.data);
}

static int execute(struct conn *c, struct command *cmd)
{
	int status, r;

	if (cmd->sqe[SQE_OPC] == NVME_FABRICS)
		status = fabrics_execute(c, cmd);
	else if (c->qid == 0)
		status = admin_execute(c, cmd);
	else
		status = io_execute(c, cmd);
	if (status < 0)
		return status; /* the handler closed the connection (c->reason) */
	if (status == CMD_QUEUED)
		return 0; /* the back end answers it and frees its slot */
	if (status == CMD_HELD) {
		/* answered later, or never (an Asynchronous Event Request): keep its slot */
		free(cmd->data);
		cmd->data = NULL;
		cmd->data_len = 0;
		return 0;
	}
	r = answer(c, cmd, status, true);
	command_release(c, cmd);
	return r < 0 ? -EIO : 0;
}

/* A command refused before its handler: the response carries STATUS. */
static int refuse(struct conn *c, struct command *cmd, uint16_t status)
{
	int r = send_response(c, cmd, status | SC_DNR, true);

	command_release(c, cmd);
	return r < 0 ? -EIO : 0;
}

enum cmd_dir command_direction(const uint8_t *sqe)
{
	uint8_t bits = sqe[SQE_OPC] == NVME_FABRICS ? sqe[4] : sqe[SQE_OPC];

	switch (bits & 3) {
	case 1:
		return DIR_TO_CTRL;
	case 2:
		return DIR_TO_HOST;
	default:
		return DIR_NONE; /* 3, bidirectional, is refused as an invalid opcode by the handlers */
	}
}

/* The end of R2T number INDEX of CMD: each asks for r2t_bytes() but the last. */
static uint32_t r2t_end(const struct conn *c, const struct command *cmd, uint32_t index)
{
	uint64_t end = (uint64_t)(index + 1) * r2t_bytes(c->t);

	return end < cmd->data_len ? (uint32_t)end : cmd->data_len;
}

/* Sends the next R2Ts of CMD, in order, while fewer than the host's MAXR2T + 1 (and ours) are outstanding. */
static int send_r2ts(struct conn *c, struct command *cmd)
{
	uint32_t limit = c->maxr2t < TARGET_R2T_OUTSTANDING - 1 ? c->maxr2t + 1 : TARGET_R2T_OUTSTANDING;
	uint32_t chunk = r2t_bytes(c->t);
	unsigned int slot = (unsigned int)(cmd - c->cmds);

	while (cmd->requested < cmd->data_len &&
	       (cmd->requested + chunk - 1) / chunk - cmd->received / chunk < limit) {
		uint8_t pdu[TCP_DATA_HLEN] = {0};
		struct iovec iov = {pdu, sizeof(pdu)};
		uint32_t index = cmd->requested / chunk, end = r2t_end(c, cmd, index);

		common_header(pdu, TCP_R2T, 0, TCP_DATA_HLEN, 0, TCP_DATA_HLEN);
		put16(pdu + DATA_CCCID, cmd->cid);
		put16(pdu + DATA_TTAG, (uint16_t)(slot | (index & TTAG_INDEX_MASK) << TTAG_SLOT_BITS));
		put32(pdu + DATA_OFFSET, cmd->requested);
		put32(pdu + DATA_LENGTH, end - cmd->requested);
		if (send_bytes(c, &iov, 1, true) < 0)
			return -EIO;
		cmd->requested = end;
	}
	return 0;
}

/* An I/O command has arrived with its data buffer set up: a write is in flight, and the power may go. */
static int io_command_arrives(struct conn *c, struct command *cmd)
{
	if (c->qid == 0 || cmd->sqe[SQE_OPC] == NVME_FABRICS)
		return 0;
	io_arrives(c, cmd);
	if (power_command_arrives(c->t, cmd) < 0) {
		conn_fail(c, "the power is off");
		return -EIO;
	}
	return 0;
}

static int handle_capsule(struct conn *c)
{
	uint32_t plen = get32(c->rx + 4), pdo = c->rx[3], inline_len, sgl_len, inline_max;
	const uint8_t *sqe = c->rx + TCP_CH_LEN;
	uint8_t sgl_type = sqe[SQE_SGL_TYPE];
	uint16_t cid = get16(sqe + SQE_CID);
	struct command *cmd = NULL;

	if (plen == TCP_CAPSULE_CMD_HLEN && pdo == 0) {
		inline_len = 0;
	} else if (pdo == TCP_CAPSULE_CMD_HLEN) {
		inline_len = plen - pdo;
	} else {
		conn_fail(c, "capsule: data offset %u with length %u (no digests, no padding: 0 or 72)", pdo, plen);
		return -EPROTO;
	}
	if (!c->connected && !(sqe[SQE_OPC] == NVME_FABRICS && sqe[4] == FCTYPE_CONNECT)) {
		conn_fail(c, "capsule: opcode 0x%02x before Fabrics Connect", sqe[SQE_OPC]);
		return -EPROTO;
	}
	pthread_mutex_lock(&c->slot_lock);
	for (unsigned int slot = 0; slot < TARGET_QUEUE_ENTRIES; slot++) {
		if (c->cmds[slot].used && c->cmds[slot].cid == cid) {
			pthread_mutex_unlock(&c->slot_lock);
			conn_fail(c, "capsule: command id %u is already in flight", cid);
			return -EPROTO;
		}
		if (!cmd && !c->cmds[slot].used)
			cmd = &c->cmds[slot];
	}
	if (!cmd || (c->connected && (unsigned int)(cmd - c->cmds) > c->sqsize)) {
		pthread_mutex_unlock(&c->slot_lock);
		conn_fail(c, "capsule: more commands in flight than the queue's %u entries", c->sqsize + 1u);
		return -EPROTO;
	}
	cmd->used = true;
	memcpy(cmd->sqe, sqe, sizeof(cmd->sqe));
	cmd->cid = cid;
	cmd->dir = command_direction(sqe);
	if (c->connected)
		c->sqhd = (uint16_t)((c->sqhd + 1) % (c->sqsize + 1u));
	pthread_mutex_unlock(&c->slot_lock);
	if (c->connected && c->qid == 0) {
		/* any command on the admin queue restarts the keep alive timer */
		pthread_mutex_lock(&c->t->lock);
		c->ctrl->last_admin_us = trace_now_us();
		pthread_mutex_unlock(&c->t->lock);
	}

	/* PRPs mean nothing over a fabric, and fused commands are not offered */
	if ((sqe[SQE_FLAGS] & SQE_PSDT_MASK) == 0 || (sqe[SQE_FLAGS] & 0x03))
		return refuse(c, cmd, SC_INVALID_FIELD);

	sgl_len = get32(sqe + SQE_SGL_LEN);
	inline_max = c->qid ? TARGET_IO_INLINE : TARGET_ADMIN_INLINE;
	switch (cmd->dir) {
	case DIR_NONE:
		if (inline_len) {
			conn_fail(c, "capsule: %u bytes of data with a command that takes none (opcode 0x%02x)",
				  inline_len, sqe[SQE_OPC]);
			return -EPROTO;
		}
		if (io_command_arrives(c, cmd) < 0)
			return -EIO;
		return execute(c, cmd);
	case DIR_TO_HOST:
		if (inline_len || sgl_type != SGL_TRANSPORT) {
			conn_fail(c, "capsule: a read's data descriptor is type 0x%02x with %u bytes in the capsule",
				  sgl_type, inline_len);
			return -EPROTO;
		}
		if (sgl_len > max_transfer(c->t))
			return refuse(c, cmd, SC_SGL_LENGTH_INVALID);
		cmd->data_len = sgl_len;
		cmd->data = calloc(1, sgl_len ? sgl_len : 1);
		if (!cmd->data)
			return refuse(c, cmd, SC_INTERNAL);
		if (io_command_arrives(c, cmd) < 0)
			return -EIO;
		return execute(c, cmd);
	case DIR_TO_CTRL:
		if (sgl_type == SGL_INCAPSULE) {
			if (get64(sqe + SQE_SGL_ADDR) != 0 || sgl_len != inline_len || inline_len > inline_max) {
				conn_fail(c, "capsule: in-capsule descriptor offset %llu length %u, %u bytes in the capsule "
					  "(at most %u)", (unsigned long long)get64(sqe + SQE_SGL_ADDR), sgl_len,
					  inline_len, inline_max);
				return -EPROTO;
			}
		} else if (sgl_type == SGL_TRANSPORT) {
			if (inline_len) {
				conn_fail(c, "capsule: %u bytes in the capsule with a transport data descriptor",
					  inline_len);
				return -EPROTO;
			}
			if (sgl_len > max_transfer(c->t))
				return refuse(c, cmd, SC_SGL_LENGTH_INVALID);
		} else {
			conn_fail(c, "capsule: data descriptor type 0x%02x", sgl_type);
			return -EPROTO;
		}
		cmd->data_len = sgl_len;
		cmd->data = malloc(sgl_len ? sgl_len : 1);
		if (!cmd->data)
			return refuse(c, cmd, SC_INTERNAL);
		if (sgl_type == SGL_INCAPSULE || sgl_len == 0) {
			memcpy(cmd->data, c->rx + TCP_CAPSULE_CMD_HLEN, inline_len);
			cmd->received = sgl_len;
			if (io_command_arrives(c, cmd) < 0)
				return -EIO;
			return execute(c, cmd);
		}
		if (io_command_arrives(c, cmd) < 0)
			return -EIO;
		return send_r2ts(c, cmd);
	}
	return -EPROTO;
}

static int handle_h2c_data(struct conn *c)
{
	uint32_t plen = get32(c->rx + 4), pdo = c->rx[3];
	uint16_t cccid = get16(c->rx + DATA_CCCID), ttag = get16(c->rx + DATA_TTAG);
	uint32_t offset = get32(c->rx + DATA_OFFSET), len = get32(c->rx + DATA_LENGTH);
	unsigned int slot = ttag & ((1u << TTAG_SLOT_BITS) - 1);
	bool last = c->rx[1] & TCP_F_DATA_LAST;
	uint32_t index, end;
	struct command *cmd;

	if (pdo != TCP_DATA_HLEN || plen - pdo != len || len == 0) {
		conn_fail(c, "H2CData: data offset %u, length %u in a PDU of %u bytes", pdo, len, plen);
		return -EPROTO;
	}
	/* a slot the back end holds has all its data: it fails this, and nothing else changes it meanwhile */
	pthread_mutex_lock(&c->slot_lock);
	if (!c->cmds[slot].used || c->cmds[slot].cid != cccid || c->cmds[slot].dir != DIR_TO_CTRL ||
	    c->cmds[slot].received >= c->cmds[slot].requested) {
		pthread_mutex_unlock(&c->slot_lock);
		conn_fail(c, "H2CData: transfer tag %u, command id %u: no R2T is waiting for it", ttag, cccid);
		return -EPROTO;
	}
	pthread_mutex_unlock(&c->slot_lock);
	cmd = &c->cmds[slot];
	/* in order: the data answers the oldest outstanding R2T, from where its data stopped */
	index = cmd->received / r2t_bytes(c->t);
	end = r2t_end(c, cmd, index);
	if (ttag >> TTAG_SLOT_BITS != (index & TTAG_INDEX_MASK)) {
		conn_fail(c, "H2CData: transfer tag 0x%04x of command %u, expected 0x%04x (R2T %u, bytes %u..%u)", ttag,
			  cccid, slot | (index & TTAG_INDEX_MASK) << TTAG_SLOT_BITS, index, cmd->received, end);
		return -EPROTO;
	}
	if (offset != cmd->received || len > end - cmd->received) {
		conn_fail(c, "H2CData: bytes %u..%u of command %u, expected from %u to at most %u (R2T %u)", offset,
			  offset + len, cccid, cmd->received, end, index);
		return -EPROTO;
	}
	if (last != (cmd->received + len == end)) {
		conn_fail(c, "H2CData: LAST_PDU %s at byte %u, R2T %u ends at %u", last ? "set" : "missing",
			  cmd->received + len, index, end);
		return -EPROTO;
	}
	power_data_arrives(c->t, cmd, c->rx + TCP_DATA_HLEN, len);
	if (cmd->received == cmd->data_len)
		return execute(c, cmd);
	return last ? send_r2ts(c, cmd) : 0;
}

static int handle_icreq(struct conn *c)
{
	uint8_t pdu[TCP_ICREQ_LEN] = {0};
	struct iovec iov = {pdu, sizeof(pdu)};

	if (get16(c->rx + ICREQ_PFV) != 0) {
		conn_fail(c, "ICReq: PDU format version %u (only 0, NVMe/TCP 1.0)", get16(c->rx + ICREQ_PFV));
		return -EPROTO;
	}
	if (c->rx[ICREQ_DGST] != 0) {
		/* refused rather than answered without: the host would fail on the mismatch anyway */
		conn_fail(c, "ICReq: the host asks for %s%s digests, which this target does not offer",
			  c->rx[ICREQ_DGST] & 1 ? "header" : "", c->rx[ICREQ_DGST] & 2 ? " data" : "");
		return -EPROTO;
	}
	if (c->rx[ICREQ_HPDA] != 0) {
		conn_fail(c, "ICReq: host data alignment %u dwords (only 0 is offered)", c->rx[ICREQ_HPDA] + 1u);
		return -EPROTO;
	}
	c->maxr2t = get32(c->rx + ICREQ_MAXR2T);
	common_header(pdu, TCP_ICRESP, 0, TCP_ICREQ_LEN, 0, TCP_ICREQ_LEN);
	pdu[ICRESP_CPDA] = 0;
	pdu[ICRESP_DGST] = 0;
	put32(pdu + ICRESP_MAXDATA, TARGET_MAX_H2C_DATA);
	c->ready = true;
	return send_bytes(c, &iov, 1, true) < 0 ? -EIO : 0;
}

/* The common header is in: is this PDU one a host may send now, of a length it may have? */
static int check_header(struct conn *c)
{
	uint8_t type = c->rx[0], flags = c->rx[1], hlen = c->rx[2];
	uint32_t plen = get32(c->rx + 4);

	if (!c->ready && type != TCP_ICREQ) {
		conn_fail(c, "PDU type 0x%02x before ICReq", type);
		return -EPROTO;
	}
	switch (type) {
	case TCP_ICREQ:
		if (c->ready || flags || hlen != TCP_ICREQ_LEN || plen != TCP_ICREQ_LEN) {
			conn_fail(c, "ICReq: %s, flags 0x%02x, header %u, length %u", c->ready ? "a second one" : "first",
				  flags, hlen, plen);
			return -EPROTO;
		}
		break;
	case TCP_CAPSULE_CMD:
		if (flags || hlen != TCP_CAPSULE_CMD_HLEN || plen < TCP_CAPSULE_CMD_HLEN ||
		    plen > TCP_CAPSULE_CMD_HLEN + (c->qid ? TARGET_IO_INLINE : TARGET_ADMIN_INLINE)) {
			conn_fail(c, "capsule: flags 0x%02x, header %u, length %u", flags, hlen, plen);
			return -EPROTO;
		}
		break;
	case TCP_H2C_DATA:
		if ((flags & ~TCP_F_DATA_LAST) || hlen != TCP_DATA_HLEN || plen <= TCP_DATA_HLEN ||
		    plen > TCP_DATA_HLEN + TARGET_MAX_H2C_DATA) {
			conn_fail(c, "H2CData: flags 0x%02x, header %u, length %u (at most %u of data)", flags, hlen, plen,
				  TARGET_MAX_H2C_DATA);
			return -EPROTO;
		}
		break;
	case TCP_H2C_TERM:
		if (hlen != TCP_TERM_HLEN || plen < TCP_TERM_HLEN || plen > TCP_TERM_HLEN + 152) {
			conn_fail(c, "H2CTermReq: header %u, length %u", hlen, plen);
			return -EPROTO;
		}
		break;
	default:
		conn_fail(c, "PDU type 0x%02x is not one a host sends", type);
		return -EPROTO;
	}
	c->rx_need = plen;
	return 0;
}

static int handle_pdu(struct conn *c)
{
	switch (c->rx[0]) {
	case TCP_ICREQ:
		return handle_icreq(c);
	case TCP_CAPSULE_CMD:
		return handle_capsule(c);
	case TCP_H2C_DATA:
		return handle_h2c_data(c);
	case TCP_H2C_TERM:
		conn_fail(c, "the host ended the connection (H2CTermReq, error 0x%04x)", get16(c->rx + 8));
		return -ECONNRESET;
	}
	return -EPROTO;
}

int conn_feed(struct conn *c, const uint8_t *data, size_t len)
{
	while (len) {
		uint32_t need = c->rx_len < TCP_CH_LEN ? TCP_CH_LEN : c->rx_need;
		uint32_t take = need - c->rx_len;
		int r;

		if (take > len)
			take = (uint32_t)len;
		memcpy(c->rx + c->rx_len, data, take);
		c->rx_len += take;
		data += take;
		len -= take;
		if (c->rx_len == TCP_CH_LEN && !c->rx_need) {
			r = check_header(c);
			if (r < 0)
				return r;
		}
		if (c->rx_need && c->rx_len == c->rx_need) {
			r = handle_pdu(c);
			c->rx_len = 0;
			c->rx_need = 0;
			if (r < 0)
				return r;
		}
	}
	return 0;
}
