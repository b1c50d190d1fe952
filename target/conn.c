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
 *
 * What a peer can make it hold is bounded. Until the connection is
 * established (Connect done, and authenticated when a secret is set) it has
 * one command slot and PDUs of at most TARGET_HANDSHAKE_PDU bytes, and must
 * get there within --handshake-timeout; any command but authentication gets
 * Authentication Required meanwhile. A command's data buffer (a write's
 * R2T data, a read's) comes out of two budgets, the connection's and all
 * connections' (--connection-data-buffer, --data-buffer): a command that
 * does not fit waits, held, with no R2T sent (the transport lets the target
 * ask for data when it chooses), and goes when buffers are given back, in
 * the back end's scheduler's order (retry_held); a connection with nothing
 * buffered may always take one command's, so a well-behaved host is never
 * starved by others' stalled writes. A PDU begun and the data an R2T asked
 * for must arrive within --data-timeout (conn_tick).
 *
 * With a cloud back end (backend.c), I/O commands are answered from its
 * thread (conn_complete): each PDU is sent whole under the send lock, a
 * slot's state is read and changed under the slot lock, the budgets'
 * counts change atomically, and the back end wakes the reader (conn_io's
 * wake) when it gives back buffers that held commands wait for.
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

/* The largest PDU the connection takes now: ICReq first, small ones until it is established. */
static uint32_t stage_limit(const struct conn *c)
{
	return !c->ready ? TCP_ICREQ_LEN : !c->established ? TARGET_HANDSHAKE_PDU : rx_limit();
}

int conn_init(struct conn *c, struct target *t, const struct conn_io *io, unsigned int id)
{
	memset(c, 0, sizeof(*c));
	c->t = t;
	c->io = *io;
	c->id = id;
	c->started_us = trace_now_us();
	c->rx_cap = TCP_ICREQ_LEN;
	c->rx = malloc(c->rx_cap);
	pthread_mutex_init(&c->send_lock, NULL);
	pthread_mutex_init(&c->slot_lock, NULL);
	c->n_cmds = 1; /* Connect's, until the queue is established */
	c->cmds = calloc(1, sizeof(*c->cmds));
	if (!c->rx || !c->cmds) {
		free(c->rx);
		free(c->cmds);
		c->rx = NULL;
		c->cmds = NULL;
		return -ENOMEM;
	}
	return 0;
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

/* Why a command did not get its data buffer, or that it did. */
enum take {
	TAKE_OK,
	TAKE_NO_SHARE, /* the commands served last hold their half: the others may still go */
	TAKE_NO_ROOM,  /* the budget is full: every command waits */
};

/*
 * The scheduler's level for CMD (scheduler.h), so that commands waiting
 * for a buffer go in the order the back end would serve them; level 1 for
 * every command without the back end's hints, and on the admin queue.
 */
static uint8_t command_level(const struct conn *c, const struct command *cmd)
{
	const struct backend_config *be = &c->t->cfg.backend;

	if (!be->on || !be->hints || c->qid == 0 || cmd->sqe[SQE_OPC] == NVME_FABRICS)
		return 1;
	return (uint8_t)sched_level(backend_classify(c->t, cmd->sqe), be->hints);
}

/* Read-ahead and background commands (levels 2 and 3): the back end serves them after the others. */
static bool served_last(const struct command *cmd)
{
	return cmd->level >= 2;
}

/* Adds LEN to the shared *COUNT unless that passes LIMIT (0: none) and the taker is not EXEMPT. */
static bool count_take(uint64_t *count, uint64_t len, uint64_t limit, bool exempt)
{
	uint64_t now = __atomic_load_n(count, __ATOMIC_RELAXED);

	do {
		if (!exempt && limit && now + len > limit)
			return false;
	} while (!__atomic_compare_exchange_n(count, &now, now + len, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

/*
 * CMD's DATA_LEN bytes of data buffer from the connection's budget and
 * everyone's. A connection that holds none may always take one command's:
 * it cannot be starved by the buffers others hold. The commands the
 * scheduler serves last may hold at most half of each budget (but one of
 * them always may go), so that while they wait their turn at the back end
 * the commands served first still find buffers: otherwise a backup's large
 * writes, waiting behind a database's, would hold every buffer and keep the
 * database's next commands from ever reaching the scheduler.
 */
static enum take budget_take(struct conn *c, struct command *cmd)
{
	const struct target_config *cfg = &c->t->cfg;
	uint64_t len = cmd->data_len;
	/* only this connection's reader takes; the back end's thread may give back meanwhile */
	uint64_t mine = __atomic_load_n(&c->buffered, __ATOMIC_RELAXED);
	uint64_t mine_last = __atomic_load_n(&c->buffered_last, __ATOMIC_RELAXED);
	bool last = served_last(cmd);

	if (mine && cfg->conn_data_buffer && mine + len > cfg->conn_data_buffer)
		return TAKE_NO_ROOM;
	if (last && mine_last && cfg->conn_data_buffer && mine_last + len > cfg->conn_data_buffer / 2)
		return TAKE_NO_SHARE;
	if (last && !count_take(&c->t->buffered_last, len, cfg->data_buffer / 2, !mine_last))
		return TAKE_NO_SHARE;
	if (!count_take(&c->t->buffered, len, cfg->data_buffer, !mine)) {
		if (last)
			__atomic_sub_fetch(&c->t->buffered_last, len, __ATOMIC_RELAXED);
		return TAKE_NO_ROOM;
	}
	__atomic_add_fetch(&c->buffered, len, __ATOMIC_RELAXED);
	if (last)
		__atomic_add_fetch(&c->buffered_last, len, __ATOMIC_RELAXED);
	cmd->buffered = true;
	cmd->buffered_last = last;
	return TAKE_OK;
}

/* CMD's bytes given back to the budgets; its data itself is the caller's to free. */
static void budget_give(struct conn *c, const struct command *cmd)
{
	if (!cmd->buffered)
		return;
	__atomic_sub_fetch(&c->buffered, (uint64_t)cmd->data_len, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&c->t->buffered, (uint64_t)cmd->data_len, __ATOMIC_RELAXED);
	if (cmd->buffered_last) {
		__atomic_sub_fetch(&c->buffered_last, (uint64_t)cmd->data_len, __ATOMIC_RELAXED);
		__atomic_sub_fetch(&c->t->buffered_last, (uint64_t)cmd->data_len, __ATOMIC_RELAXED);
	}
}

/* CMD's data buffer freed and its bytes given back to the budgets. */
static void drop_data(struct conn *c, struct command *cmd)
{
	budget_give(c, cmd);
	cmd->buffered = false;
	cmd->buffered_last = false;
	free(cmd->data);
	cmd->data = NULL;
}

/*
 * Frees CMD's slot, and its command ID with it. RET_COPY (if given) keeps the command, and its bytes
 * stay counted until the caller gives them back (budget_give) once the answer is sent. Returns its data
 * to free.
 */
static uint8_t *slot_free(struct conn *c, struct command *cmd, struct command *ret_copy)
{
	uint8_t *data;

	/* a write still in flight when its connection goes is aborted: it never reaches the medium */
	power_inflight_remove(c->t, cmd);
	pthread_mutex_lock(&c->slot_lock);
	if (ret_copy)
		*ret_copy = *cmd;
	else
		budget_give(c, cmd);
	if (cmd->held)
		__atomic_sub_fetch(&c->held, 1, __ATOMIC_SEQ_CST);
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
	for (unsigned int i = 0; c->cmds && i < c->n_cmds; i++)
		command_release(c, &c->cmds[i]);
	free(c->cmds);
	c->cmds = NULL;
	c->n_cmds = 0;
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
	/* its bytes back to the budgets only now; then a reader whose commands wait for them starts them */
	budget_give(c, &done);
	/* pairs with start_data(): either the reader sees these bytes or this thread sees its held command */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (done.buffered && __atomic_load_n(&c->held, __ATOMIC_RELAXED) && c->io.wake)
		c->io.wake(c->io.ctx);
}

/*
 * Connected, and authenticated if asked: the queue gets its entries and
 * buffers for whole PDUs. Called between commands, when no slot is in use
 * (until then the connection had the one Connect or authentication used).
 */
static int become_established(struct conn *c)
{
	struct command *cmds;
	uint8_t *rx;

	if (!c->connected || (c->auth_required && !c->authenticated))
		return 0;
	c->established = true;
	if (c->n_cmds == c->sqsize + 1u)
		return 0;
	cmds = calloc(c->sqsize + 1u, sizeof(*cmds));
	rx = cmds ? realloc(c->rx, rx_limit()) : NULL;
	if (!rx) {
		free(cmds);
		conn_fail(c, "out of memory for the queue's %u entries", c->sqsize + 1u);
		return -ENOMEM;
	}
	c->rx = rx;
	c->rx_cap = rx_limit();
	free(c->cmds);
	c->cmds = cmds;
	c->n_cmds = c->sqsize + 1u;
	return 0;
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
		drop_data(c, cmd);
		cmd->data_len = 0;
		return 0;
	}
	r = answer(c, cmd, status, true);
	command_release(c, cmd);
	if (r < 0)
		return -EIO;
	if (c->close_after_reply)
		return -ECONNREFUSED; /* the answer said why (authentication failed); c->reason too */
	return become_established(c);
}

/* A command refused before its handler: the response carries STATUS. */
static int refuse(struct conn *c, struct command *cmd, uint16_t status)
{
	int r = send_response(c, cmd, status | SC_DNR, true);

	command_release(c, cmd);
	return r < 0 ? -EIO : 0;
}

static int send_r2ts(struct conn *c, struct command *cmd);

/* CMD waits for its data buffer, in line with the others that wait (retry_held). */
static void hold(struct conn *c, struct command *cmd)
{
	cmd->held = true;
	cmd->level = command_level(c, cmd);
	cmd->held_seq = ++c->held_seq;
	/* counted before the budgets are looked at: a back end that gives back meanwhile wakes the reader */
	__atomic_add_fetch(&c->held, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * Held CMD's data buffer, when the budgets give it: then a read-like command
 * executes and a write's R2Ts go. Otherwise it waits, held, and
 * retry_held() starts it when buffers are given back; *RET_TAKE says which.
 */
static int start_data(struct conn *c, struct command *cmd, enum take *ret_take)
{
	*ret_take = budget_take(c, cmd);
	if (*ret_take != TAKE_OK)
		return 0;
	cmd->held = false;
	__atomic_sub_fetch(&c->held, 1, __ATOMIC_SEQ_CST);
	cmd->data = cmd->dir == DIR_TO_HOST ? calloc(1, cmd->data_len ? cmd->data_len : 1) : malloc(cmd->data_len);
	if (!cmd->data)
		return refuse(c, cmd, SC_INTERNAL);
	return cmd->dir == DIR_TO_HOST ? execute(c, cmd) : send_r2ts(c, cmd);
}

/* Does held command A go before held command B? */
static bool held_before(const struct command *a, const struct command *b, uint64_t now, uint64_t max_wait)
{
	bool a_over = max_wait && now - a->arrived_us > max_wait, b_over = max_wait && now - b->arrived_us > max_wait;

	if (a_over != b_over)
		return a_over;
	if (!a_over && a->level != b->level)
		return a->level < b->level;
	return a->held_seq < b->held_seq;
}

/*
 * Starts held commands while the budgets give them buffers, in the order
 * the back end's scheduler would serve them: one held past its wait limit
 * first, then by level, each level oldest first; hint-blind, oldest first.
 * A command that finds no room stops the rest (a large one is not passed by
 * small ones for ever); one of those served last that finds their share
 * full stops only the others served last.
 */
static int retry_held(struct conn *c)
{
	uint64_t now = trace_now_us(), max_wait = c->t->cfg.backend.max_wait_us;
	bool share_full = false;

	if (!__atomic_load_n(&c->held, __ATOMIC_RELAXED))
		return 0;
	for (;;) {
		struct command *next = NULL;
		enum take take;
		int r;

		for (unsigned int i = 0; i < c->n_cmds; i++) {
			struct command *cmd = &c->cmds[i];

			if (cmd->used && cmd->held && !(share_full && served_last(cmd)) &&
			    (!next || held_before(cmd, next, now, max_wait)))
				next = cmd;
		}
		if (!next)
			return 0;
		r = start_data(c, next, &take);
		if (r < 0)
			return r;
		if (take == TAKE_NO_ROOM)
			return 0;
		if (take == TAKE_NO_SHARE)
			share_full = true;
	}
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
		if (!cmd->data_deadline_us)
			cmd->data_deadline_us = trace_now_us() + c->t->cfg.data_timeout_ms * 1000ull;
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

/* Is SQE one an unauthenticated queue may send: Authentication Send or Receive? */
static bool authentication_command(const uint8_t *sqe)
{
	return sqe[SQE_OPC] == NVME_FABRICS && (sqe[4] == FCTYPE_AUTH_SEND || sqe[4] == FCTYPE_AUTH_RECEIVE);
}

/* A command with no slot for it before the queue is established: answered, never kept. */
static int refuse_unkept(struct conn *c, uint16_t cid, uint16_t status)
{
	struct command tmp = {.cid = cid};

	return send_response(c, &tmp, status | SC_DNR, true) < 0 ? -EIO : 0;
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
	if (!c->established && command_direction(sqe) == DIR_TO_CTRL && get32(sqe + SQE_SGL_LEN) &&
	    sgl_type != SGL_INCAPSULE) {
		/* the handshake's data (Connect's, authentication's) comes in its capsule, as Linux sends it */
		conn_fail(c, "capsule: opcode 0x%02x asks for its data by R2T before the connection is established "
			  "(Connect and authentication carry theirs in the capsule)", sqe[SQE_OPC]);
		return -EPROTO;
	}
	pthread_mutex_lock(&c->slot_lock);
	for (unsigned int slot = 0; slot < c->n_cmds; slot++) {
		if (c->cmds[slot].used && c->cmds[slot].cid == cid) {
			pthread_mutex_unlock(&c->slot_lock);
			conn_fail(c, "capsule: command id %u is already in flight", cid);
			return -EPROTO;
		}
		if (!cmd && !c->cmds[slot].used)
			cmd = &c->cmds[slot];
	}
	if (c->connected)
		c->sqhd = (uint16_t)((c->sqhd + 1) % (c->sqsize + 1u));
	if (c->connected && !c->established) {
		/* a queue still authenticating does one command at a time, and only authentication */
		if (!authentication_command(sqe) || !cmd) {
			pthread_mutex_unlock(&c->slot_lock);
			return refuse_unkept(c, cid, SC_AUTH_REQUIRED);
		}
	} else if (!cmd || (c->connected && (unsigned int)(cmd - c->cmds) > c->sqsize)) {
		pthread_mutex_unlock(&c->slot_lock);
		conn_fail(c, "capsule: more commands in flight than the queue's %u entries", c->sqsize + 1u);
		return -EPROTO;
	}
	cmd->used = true;
	cmd->arrived_us = trace_now_us();
	memcpy(cmd->sqe, sqe, sizeof(cmd->sqe));
	cmd->cid = cid;
	cmd->dir = command_direction(sqe);
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
		if (io_command_arrives(c, cmd) < 0)
			return -EIO;
		hold(c, cmd);
		return retry_held(c); /* it executes once its buffer is there and no command before it waits */
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
		if (sgl_type == SGL_INCAPSULE || sgl_len == 0) {
			/* its data is here already, in the PDU: a copy for as long as it executes */
			cmd->data = malloc(sgl_len ? sgl_len : 1);
			if (!cmd->data)
				return refuse(c, cmd, SC_INTERNAL);
			memcpy(cmd->data, c->rx + TCP_CAPSULE_CMD_HLEN, inline_len);
			cmd->received = sgl_len;
			if (io_command_arrives(c, cmd) < 0)
				return -EIO;
			return execute(c, cmd);
		}
		if (io_command_arrives(c, cmd) < 0)
			return -EIO;
		hold(c, cmd);
		return retry_held(c); /* its R2Ts go once its buffer is there and no command before it waits */
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
	if (slot >= c->n_cmds || !c->cmds[slot].used || c->cmds[slot].cid != cccid || c->cmds[slot].dir != DIR_TO_CTRL ||
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
	if (cmd->received == cmd->data_len) {
		/* every byte is here: however long the back end keeps it queued, no data is late */
		cmd->data_deadline_us = 0;
		return execute(c, cmd);
	}
	if (!last)
		return 0;
	/* an R2T answered whole: the clock starts again for the next one outstanding, if any */
	cmd->data_deadline_us = cmd->received < cmd->requested ? trace_now_us() + c->t->cfg.data_timeout_ms * 1000ull : 0;
	return send_r2ts(c, cmd);
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
	if (plen > stage_limit(c)) {
		conn_fail(c, "a PDU of %u bytes before the connection is established (at most %u until %s)", plen,
			  stage_limit(c), !c->connected ? "Connect" : "it has authenticated");
		return -EPROTO;
	}
	if (plen > c->rx_cap) {
		/* ICReq done: room for the handshake's PDUs (whole ones come once it is established) */
		uint8_t *rx = realloc(c->rx, stage_limit(c));

		if (!rx) {
			conn_fail(c, "out of memory for a PDU of %u bytes", plen);
			return -ENOMEM;
		}
		c->rx = rx;
		c->rx_cap = stage_limit(c);
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
		if (c->rx_len == 0)
			c->rx_started_us = trace_now_us();
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
	/* what this connection just finished gave buffers back: its held commands may go */
	return retry_held(c);
}

static uint64_t earlier(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

int conn_tick(struct conn *c, uint64_t now_us, int *ret_wait_ms)
{
	const struct target_config *cfg = &c->t->cfg;
	uint64_t next = UINT64_MAX, data_us = cfg->data_timeout_ms * 1000ull;
	bool held = false;
	int r;

	*ret_wait_ms = -1;
	if (!c->established && cfg->handshake_timeout_ms) {
		uint64_t end = c->started_us + cfg->handshake_timeout_ms * 1000ull;

		if (now_us >= end) {
			conn_fail(c, "no %s within %u ms of connecting (--handshake-timeout)", !c->ready ? "ICReq"
				  : !c->connected ? "Fabrics Connect" : "authentication", cfg->handshake_timeout_ms);
			return -ETIMEDOUT;
		}
		next = end;
	}
	if (c->rx_len && data_us) {
		if (now_us >= c->rx_started_us + data_us) {
			conn_fail(c, "a PDU stopped arriving: %u of its %u bytes came in %u ms (--data-timeout)", c->rx_len,
				  c->rx_need ? c->rx_need : TCP_CH_LEN, cfg->data_timeout_ms);
			return -ETIMEDOUT;
		}
		next = earlier(next, c->rx_started_us + data_us);
	}
	for (unsigned int i = 0; i < c->n_cmds; i++) {
		const struct command *cmd = &c->cmds[i];

		held |= cmd->used && cmd->held;
		if (!cmd->used || !cmd->data_deadline_us || !data_us)
			continue;
		if (now_us >= cmd->data_deadline_us) {
			conn_fail(c, "command %u: the data its R2Ts asked for stopped arriving: %u of %u bytes, none for %u ms "
				  "(--data-timeout)", cmd->cid, cmd->received, cmd->data_len, cfg->data_timeout_ms);
			return -ETIMEDOUT;
		}
		next = earlier(next, cmd->data_deadline_us);
	}
	if (held) {
		/* buffers other connections give back are looked for now and then */
		r = retry_held(c);
		if (r < 0)
			return r;
		next = earlier(next, now_us + 20000);
	}
	if (next != UINT64_MAX)
		*ret_wait_ms = (int)((next - now_us + 999) / 1000);
	return 0;
}
