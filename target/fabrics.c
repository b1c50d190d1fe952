/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fabrics commands: Connect (an admin queue makes a controller, an I/O queue
 * joins one), Property Get/Set, through which a fabrics host reads CAP, VS
 * and CSTS and writes CC, as a PCIe host would read registers, and
 * Authentication Send/Receive (auth.c). Connect is where a host is let in or
 * not: a host NQN off --allow-host's list is refused, on every queue, with
 * the status Linux's nvmet gives (Connect Invalid Host), and with a
 * DH-HMAC-CHAP secret every queue must authenticate before any other
 * command (Authentication Required until it has). The
 * controllers live in the target's list under its lock: a controller's admin
 * and I/O queues are separate connections, served by separate threads. The
 * keep alive timer is here too: a controller whose admin queue hears no
 * command for its KATO fails, and all its connections close (as Linux's
 * nvmet does in its keep alive work).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvme_tcp.h"
#include "power.h"
#include "target.h"
#include "write_log.h"

#define CC_EN 0x1u
#define CC_SHN_MASK (3u << 14)
#define CSTS_RDY 0x1u
#define CSTS_SHST_DONE (2u << 2)
#define NVME_VERSION 0x00010400u /* 1.4: Identify CNS 3 is offered, NVMe 2.0's command sets are not */

static uint64_t property_cap(void)
{
	uint64_t cap = TARGET_QUEUE_ENTRIES - 1; /* MQES, zero-based */

	cap |= 1ull << 16;  /* CQR: queues are contiguous */
	cap |= 15ull << 24; /* TO: 7.5 s to become ready (it is immediate) */
	cap |= 1ull << 37;  /* CSS: the NVM command set */
	return cap;
}

void controller_put(struct target *t, struct controller *ctrl)
{
	struct controller **p;

	pthread_mutex_lock(&t->lock);
	if (--ctrl->refs == 0) {
		for (p = &t->ctrls; *p; p = &(*p)->next) {
			if (*p == ctrl) {
				*p = ctrl->next;
				break;
			}
		}
		free(ctrl);
	}
	pthread_mutex_unlock(&t->lock);
}

void controller_detach(struct target *t, struct conn *c)
{
	pthread_mutex_lock(&t->lock);
	for (struct conn **p = &c->ctrl->conns; *p; p = &(*p)->ctrl_next) {
		if (*p == c) {
			*p = c->ctrl_next;
			break;
		}
	}
	c->ctrl_next = NULL;
	pthread_mutex_unlock(&t->lock);
}

unsigned int controllers_check_keep_alive(struct target *t, uint64_t now_us)
{
	unsigned int next_ms = 1000;

	pthread_mutex_lock(&t->lock);
	for (struct controller *ctrl = t->ctrls; ctrl; ctrl = ctrl->next) {
		uint64_t idle_ms = (now_us - ctrl->last_admin_us) / 1000;
		unsigned int n = 0;

		if (!ctrl->kato_ms || ctrl->failed)
			continue;
		if (idle_ms < ctrl->kato_ms) {
			/* checked again at a tenth of KATO: expiry is noticed within 1.1 x KATO (the spec allows 2 x) */
			unsigned int step = ctrl->kato_ms / 10 ? ctrl->kato_ms / 10 : 1;

			if (step < next_ms)
				next_ms = step;
			continue;
		}
		ctrl->failed = true;
		ctrl->csts |= 1u << 1; /* CSTS.CFS */
		for (struct conn *c = ctrl->conns; c; c = c->ctrl_next, n++) {
			snprintf(c->killed, sizeof(c->killed), "controller %u: keep alive timeout: no admin command for "
				 "%llu ms (KATO %u ms)", ctrl->cntlid, (unsigned long long)idle_ms, ctrl->kato_ms);
			if (c->io.shutdown)
				c->io.shutdown(c->io.ctx);
		}
		tlog(t, "controller %u: keep alive timeout (KATO %u ms, %llu ms without an admin command): it fails, "
		     "closing its %u connections", ctrl->cntlid, ctrl->kato_ms, (unsigned long long)idle_ms, n);
	}
	pthread_mutex_unlock(&t->lock);
	return next_ms;
}

/* Is HOSTNQN on --allow-host's list (or is there no list)? */
static bool host_allowed(const struct target *t, const char *hostnqn)
{
	for (unsigned int i = 0; i < t->cfg.n_allowed_hosts; i++)
		if (strcmp(t->cfg.allowed_hosts[i], hostnqn) == 0)
			return true;
	return t->cfg.n_allowed_hosts == 0;
}

/* Connect's errors name the bad field: IATTR 1 = in the data, 0 = in the command; IPO its byte. */
static int invalid_param(struct command *cmd, bool in_data, uint16_t offset)
{
	cmd->result0 = (uint32_t)offset | (in_data ? 1u << 16 : 0);
	return SC_CONNECT_INVALID_PARAM;
}

static int handle_connect(struct conn *c, struct command *cmd)
{
	struct target *t = c->t;
	uint16_t qid = get16(cmd->sqe + CONNECT_QID), sqsize = get16(cmd->sqe + CONNECT_SQSIZE);
	const uint8_t *d = cmd->data;
	char subnqn[257], hostnqn[257];
	struct controller *ctrl;
	uint16_t cntlid;

	if (c->connected)
		return SC_COMMAND_SEQUENCE; /* one Connect per queue */
	if (get16(cmd->sqe + CONNECT_RECFMT) != 0)
		return 0x180; /* Incompatible Format */
	if (cmd->data_len != CONNECT_DATA_LEN)
		return SC_SGL_LENGTH_INVALID;
	if (sqsize == 0 || sqsize >= TARGET_QUEUE_ENTRIES)
		return invalid_param(cmd, false, CONNECT_SQSIZE);
	memcpy(subnqn, d + 256, 256);
	subnqn[256] = '\0';
	memcpy(hostnqn, d + 512, 256);
	hostnqn[256] = '\0';
	if (strcmp(subnqn, t->cfg.nqn) != 0)
		return invalid_param(cmd, true, 256);
	if (!host_allowed(t, hostnqn)) {
		tlog(t, "conn %u: Connect refused: host %s is not on the --allow-host list", c->id, hostnqn);
		invalid_param(cmd, true, 512);
		return SC_CONNECT_INVALID_HOST;
	}
	cntlid = get16(d + 16);

	pthread_mutex_lock(&t->lock);
	if (qid == 0) {
		ctrl = calloc(1, sizeof(*ctrl));
		if (!ctrl) {
			pthread_mutex_unlock(&t->lock);
			return SC_INTERNAL;
		}
		ctrl->t = t;
		ctrl->refs = 1;
		ctrl->cntlid = t->next_cntlid;
		t->next_cntlid = t->next_cntlid >= 0xffef ? 1 : t->next_cntlid + 1; /* 0xfff0.. are reserved */
		memcpy(ctrl->hostnqn, hostnqn, sizeof(ctrl->hostnqn));
		memcpy(ctrl->hostid, d, 16);
		ctrl->kato_ms = get32(cmd->sqe + CONNECT_KATO);
		ctrl->last_admin_us = trace_now_us();
		ctrl->write_cache = t->cfg.vwc;
		ctrl->next = t->ctrls;
		t->ctrls = ctrl;
	} else {
		for (ctrl = t->ctrls; ctrl; ctrl = ctrl->next)
			if (ctrl->cntlid == cntlid && strcmp(ctrl->hostnqn, hostnqn) == 0 &&
			    memcmp(ctrl->hostid, d, 16) == 0)
				break;
		if (!ctrl) {
			pthread_mutex_unlock(&t->lock);
			return invalid_param(cmd, true, 16);
		}
		if (!(ctrl->csts & CSTS_RDY) || ctrl->failed || qid > ctrl->io_queues + 1u) {
			pthread_mutex_unlock(&t->lock);
			return invalid_param(cmd, false, CONNECT_QID);
		}
		ctrl->refs++;
	}
	c->ctrl_next = ctrl->conns;
	ctrl->conns = c;
	pthread_mutex_unlock(&t->lock);

	c->ctrl = ctrl;
	c->qid = qid;
	c->sqsize = sqsize;
	c->sqhd = 1; /* the Connect command itself was the first entry */
	c->sqflow_disabled = cmd->sqe[CONNECT_CATTR] & CONNECT_CATTR_NO_SQFLOW;
	c->connected = true;
	c->auth_required = t->cfg.host_key_set;
	c->established = !c->auth_required;
	/* ATR: the host must authenticate this queue before anything else */
	cmd->result0 = ctrl->cntlid | (c->auth_required ? CONNECT_AUTHREQ_ATR : 0);
	tlog(t, "conn %u: %s queue %u of controller %u, %u entries, host %s%s", c->id, qid ? "I/O" : "admin", qid,
	     ctrl->cntlid, sqsize + 1u, hostnqn, c->auth_required ? " (it must authenticate)" : "");
	return SC_SUCCESS;
}

static void set_cc(struct controller *ctrl, uint32_t cc)
{
	/* a shutdown notification asks for the cache on the medium before SHST says done */
	if ((cc & CC_SHN_MASK) && !(ctrl->cc & CC_SHN_MASK) && ctrl->t->cfg.vwc)
		cache_flush(ctrl->t);
	if (cc & CC_SHN_MASK)
		ctrl->csts |= CSTS_SHST_DONE;
	else
		ctrl->csts &= ~CSTS_SHST_DONE;
	if (cc & CC_EN)
		ctrl->csts |= CSTS_RDY;
	else
		ctrl->csts &= ~CSTS_RDY;
	ctrl->cc = cc;
}

static int property(struct conn *c, struct command *cmd, bool set)
{
	struct controller *ctrl = c->ctrl;
	uint32_t offset = get32(cmd->sqe + PROP_OFFSET);
	bool eight = (cmd->sqe[PROP_ATTRIB] & 7) == 1;
	uint64_t value = 0;

	if (c->qid != 0 || (cmd->sqe[PROP_ATTRIB] & 7) > 1)
		return SC_INVALID_FIELD;
	if (set) {
		if (offset != PROP_CC || eight)
			return SC_INVALID_FIELD;
		pthread_mutex_lock(&c->t->lock);
		set_cc(ctrl, (uint32_t)get64(cmd->sqe + PROP_VALUE));
		pthread_mutex_unlock(&c->t->lock);
		return SC_SUCCESS;
	}
	pthread_mutex_lock(&c->t->lock);
	switch (offset) {
	case PROP_CAP:
		value = property_cap();
		break;
	case PROP_VS:
		value = NVME_VERSION;
		break;
	case PROP_CC:
		value = ctrl->cc;
		break;
	case PROP_CSTS:
		value = ctrl->csts;
		break;
	default:
		pthread_mutex_unlock(&c->t->lock);
		return SC_INVALID_FIELD;
	}
	pthread_mutex_unlock(&c->t->lock);
	if ((offset == PROP_CAP) != eight)
		return SC_INVALID_FIELD; /* CAP is 8 bytes, the others 4 */
	cmd->result0 = (uint32_t)value;
	cmd->result1 = (uint32_t)(value >> 32);
	return SC_SUCCESS;
}

int fabrics_execute(struct conn *c, struct command *cmd)
{
	switch (cmd->sqe[4]) {
	case FCTYPE_CONNECT:
		return handle_connect(c, cmd);
	case FCTYPE_PROPERTY_GET:
		return property(c, cmd, false);
	case FCTYPE_PROPERTY_SET:
		return property(c, cmd, true);
	case FCTYPE_AUTH_SEND:
		return auth_send(c, cmd);
	case FCTYPE_AUTH_RECEIVE:
		return auth_receive(c, cmd);
	}
	return SC_INVALID_OPCODE;
}
