/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloud-target's PDU and command parser (target/conn.c and the handlers
 * behind it) fed what a hostile host could send. A fixed admin connection
 * first makes controller 1 (ICReq, Connect, CC.EN, 4 I/O queues); then the
 * input goes to a second connection:
 *   byte 0: bit 0 512-byte blocks (else 4096), bit 1 a volatile write cache,
 *           bit 2 the connection starts as I/O queue 1 of controller 1 (else
 *           from nothing: the input's own ICReq), bit 3 that queue has no SQ
 *           flow control (C2HData carries SUCCESS), bit 4 FDP with 4
 *           placement handles (its logs, feature, I/O Management, DTYPE 2),
 *           bit 5 R2Ts of at most 8 KiB (a write's data asked for in
 *           several, as many outstanding as the input's own ICReq's MAXR2T
 *           allows), bit 6 DH-HMAC-CHAP required of that connection (a
 *           fixed host and controller secret: the input's Authentication
 *           Send and Receive messages, hostile, reach auth.c), bit 7 data
 *           buffers of 8 KiB a connection and 16 KiB in all (commands wait,
 *           held, and go as buffers come back; conn_tick runs after every
 *           piece);
 *   byte 1: the size of the pieces the rest arrives in (0: all at once);
 *   the rest: the bytes the host sends.
 * Every PDU the target sends back is checked for its own framing (length as
 * the header says), and the namespace is a 256 KiB memfd; with the write
 * cache on, writes go through the power model's cache (never cut here), and
 * every write in flight must have left the power model's list when its
 * connection closed, and every data buffer must be given back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "nvme_tcp.h"
#include "power.h"
#include "target.h"
#include "write_log.h"

#define NS_BYTES (256 * 1024)
#define NQN "nqn.2026-12.org.liblcloud:fuzz"

static struct target t;

/* The target's PDUs must be whole and say their own length. */
static int check_send(void *ctx, const struct iovec *iov, int iovcnt)
{
	size_t total = 0;
	const uint8_t *h = iov[0].iov_base;

	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (iov[0].iov_len < TCP_CH_LEN || get32(h + 4) != total || h[2] > total || h[2] < TCP_CH_LEN)
		abort();
	return 0;
}

static void feed_or_die(struct conn *c, const uint8_t *b, size_t len)
{
	if (conn_feed(c, b, len) < 0)
		abort(); /* the fixed set-up is well formed: a refusal is a bug */
}

static void icreq(struct conn *c)
{
	uint8_t b[TCP_ICREQ_LEN] = {TCP_ICREQ, 0, TCP_ICREQ_LEN, 0, TCP_ICREQ_LEN};

	feed_or_die(c, b, sizeof(b));
}

static void capsule(uint8_t *pdu, uint8_t opc, uint8_t fctype, uint16_t cid, uint32_t inline_len)
{
	memset(pdu, 0, TCP_CAPSULE_CMD_HLEN);
	pdu[0] = TCP_CAPSULE_CMD;
	pdu[2] = TCP_CAPSULE_CMD_HLEN;
	pdu[3] = inline_len ? TCP_CAPSULE_CMD_HLEN : 0;
	put32(pdu + 4, TCP_CAPSULE_CMD_HLEN + inline_len);
	pdu[8 + SQE_OPC] = opc;
	pdu[8 + SQE_FLAGS] = 0x40;
	put16(pdu + 8 + SQE_CID, cid);
	pdu[8 + 4] = fctype;
	put32(pdu + 8 + SQE_SGL_LEN, inline_len);
	pdu[8 + SQE_SGL_TYPE] = inline_len ? SGL_INCAPSULE : SGL_TRANSPORT;
}

static void fabrics_connect(struct conn *c, uint16_t qid, uint16_t cntlid, bool no_sqflow)
{
	uint8_t pdu[TCP_CAPSULE_CMD_HLEN + CONNECT_DATA_LEN];
	uint8_t *sqe = pdu + 8, *d = pdu + TCP_CAPSULE_CMD_HLEN;

	capsule(pdu, NVME_FABRICS, FCTYPE_CONNECT, 1, CONNECT_DATA_LEN);
	put16(sqe + CONNECT_QID, qid);
	put16(sqe + CONNECT_SQSIZE, 31);
	sqe[CONNECT_CATTR] = no_sqflow ? CONNECT_CATTR_NO_SQFLOW : 0;
	memset(d, 0, CONNECT_DATA_LEN);
	memset(d, 0x11, 16);
	put16(d + 16, cntlid);
	memcpy(d + 256, NQN, sizeof(NQN));
	memcpy(d + 512, "nqn.fuzz-host", 14);
	feed_or_die(c, pdu, sizeof(pdu));
}

static void admin_setup(struct conn *c)
{
	uint8_t pdu[TCP_CAPSULE_CMD_HLEN];

	icreq(c);
	fabrics_connect(c, 0, 0xffff, false);
	capsule(pdu, NVME_FABRICS, FCTYPE_PROPERTY_SET, 2, 0);
	put32(pdu + 8 + PROP_OFFSET, PROP_CC);
	put32(pdu + 8 + PROP_VALUE, 0x460001);
	feed_or_die(c, pdu, sizeof(pdu));
	capsule(pdu, 0x09, 0, 3, 0); /* Set Features: Number of Queues, 4 */
	pdu[8 + SQE_CDW10] = 0x07;
	put32(pdu + 8 + SQE_CDW11, 3 | 3 << 16);
	feed_or_die(c, pdu, sizeof(pdu));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ns_fd = -1;
	struct conn_io io = {check_send, NULL, NULL, NULL}; /* no shutdown or wake: no other thread */
	struct conn admin, c;
	size_t piece;

	if (size < 2)
		return 0;
	if (ns_fd < 0) {
		ns_fd = memfd_create("fuzz-namespace", MFD_CLOEXEC);
		if (ns_fd < 0 || ftruncate(ns_fd, NS_BYTES) < 0)
			abort();
		pthread_mutex_init(&t.lock, NULL);
		pthread_mutex_init(&t.cache_lock, NULL);
		pthread_mutex_init(&t.wlog_lock, NULL); /* no write log, no trace: wlog_active and trace stay off */
		t.cfg.cache_bytes = 1 << 20;
		t.quiet = true;
		snprintf(t.cfg.nqn, sizeof(t.cfg.nqn), "%s", NQN);
		snprintf(t.cfg.serial, sizeof(t.cfg.serial), "fuzz");
		snprintf(t.cfg.model, sizeof(t.cfg.model), "fuzz");
		t.cfg.mdts = 5;
		/* DH-HMAC-CHAP secrets, used when byte 0 bit 6 asks: "DHHC-1:01:" and "DHHC-1:00:" keys */
		memset(t.cfg.host_key.key, 0x42, 32);
		t.cfg.host_key.len = 32;
		t.cfg.host_key.hash = 1;
		memset(t.cfg.ctrl_key.key, 0x43, 48);
		t.cfg.ctrl_key.len = 48;
		t.cfg.ctrl_key.hash = 0;
		t.cfg.nawupf = t.cfg.nawun = 16384;
		t.cfg.nabspf = t.cfg.nabsn = 32768;
		t.n_ns = 1;
		t.ns[0].fd = ns_fd;
	}
	t.cfg.lba_size = data[0] & 1 ? 512 : 4096;
	t.cfg.vwc = data[0] & 2;
	t.cfg.fdp_handles = data[0] & 16 ? 4 : 0;
	t.cfg.max_r2t_bytes = data[0] & 32 ? 8192 : 0;
	t.cfg.data_buffer = data[0] & 128 ? 16384 : 0;
	t.cfg.conn_data_buffer = data[0] & 128 ? 8192 : 0;
	t.ns[0].blocks = NS_BYTES / t.cfg.lba_size;
	t.next_cntlid = 1;
	piece = data[1] ? data[1] : size;
	data += 2;
	size -= 2;

	if (conn_init(&admin, &t, &io, 1) < 0)
		return 0;
	admin_setup(&admin);
	/* the admin queue is set up without authentication; the input's connection must authenticate */
	t.cfg.host_key_set = t.cfg.ctrl_key_set = data[-2] & 64;
	if (conn_init(&c, &t, &io, 2) == 0) {
		int wait_ms;

		if (data[-2] & 4) {
			icreq(&c);
			fabrics_connect(&c, 1, 1, data[-2] & 8);
		}
		for (size_t off = 0; off < size; off += piece) {
			if (conn_feed(&c, data + off, size - off < piece ? size - off : piece) < 0)
				break;
			if (conn_tick(&c, trace_now_us(), &wait_ms) < 0)
				break;
		}
		conn_destroy(&c);
	}
	conn_destroy(&admin);
	t.cfg.host_key_set = t.cfg.ctrl_key_set = false;
	cache_flush(&t); /* the next input starts with an empty cache */
	if (t.ctrls)
		abort(); /* every controller goes with its last connection */
	if (t.inflight_head || t.inflight_tail)
		abort(); /* an aborted write never stays in flight */
	if (t.buffered)
		abort(); /* every data buffer is given back with its command */
	return 0;
}
