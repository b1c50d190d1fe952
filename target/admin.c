/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Admin commands: Identify, Get Log Page (error and SMART; the firmware slot
 * and changed-namespace logs zeroed; FDP's four with FDP on, fdp.c), Get/Set
 * Features (number of queues, keep alive timer, volatile write cache,
 * asynchronous event configuration, FDP),
 * Keep Alive, and Asynchronous Event Request, held: this target raises no
 * events, and a held request is what a host expects. Anything else is an
 * Invalid Opcode.
 */
#include <string.h>

#include "nvme_tcp.h"
#include "power.h"
#include "target.h"
#include "write_log.h"

enum {
	ADMIN_GET_LOG_PAGE = 0x02,
	ADMIN_IDENTIFY = 0x06,
	ADMIN_SET_FEATURES = 0x09,
	ADMIN_GET_FEATURES = 0x0a,
	ADMIN_ASYNC_EVENT = 0x0c,
	ADMIN_KEEP_ALIVE = 0x18,
};

enum {
	FEAT_VOLATILE_WC = 0x06,
	FEAT_NUM_QUEUES = 0x07,
	FEAT_ASYNC_EVENT = 0x0b,
	FEAT_KATO = 0x0f,
	FEAT_FDP = 0x1d,
};

static int identify(struct conn *c, struct command *cmd)
{
	uint8_t buf[4096];
	int status = identify_fill(c->t, c->ctrl, cmd->sqe[SQE_CDW10], get32(cmd->sqe + SQE_NSID), buf);

	if (status == SC_SUCCESS)
		memcpy(cmd->data, buf, cmd->data_len < sizeof(buf) ? cmd->data_len : sizeof(buf));
	return status;
}

/* A 128-bit little-endian counter, as SMART keeps them; the target's fit in 64 bits. */
static void put128(uint8_t *p, uint64_t v)
{
	put64(p, v);
	put64(p + 8, 0);
}

static int get_log_page(struct conn *c, struct command *cmd)
{
	uint8_t lid = cmd->sqe[SQE_CDW10];
	uint8_t lsp = cmd->sqe[SQE_CDW10 + 1] & 0x7f;
	uint16_t lsi = get16(cmd->sqe + SQE_CDW11 + 2);
	uint32_t numd = (get16(cmd->sqe + SQE_CDW10 + 2) | (uint32_t)get16(cmd->sqe + SQE_CDW11) << 16) + 1;
	uint64_t offset = get64(cmd->sqe + SQE_CDW12);
	uint8_t page[4096] = {0};
	size_t page_len;
	struct target *t = c->t;
	int status;

	if ((uint64_t)numd * 4 != cmd->data_len)
		return SC_SGL_LENGTH_INVALID;
	switch (lid) {
	case 0x01: /* error information: no errors kept */
	case 0x03: /* firmware slot information */
	case 0x04: /* changed namespace list: namespaces never change */
		page_len = lid == 0x01 ? 64 : lid == 0x03 ? 512 : 4096;
		break;
	case 0x02: /* SMART / health, the whole subsystem */
		page[1] = (uint8_t)(300 & 0xff); /* composite temperature, K */
		page[2] = (uint8_t)(300 >> 8);
		page[3] = 100;                   /* available spare, % */
		page[4] = 10;                    /* its threshold */
		pthread_mutex_lock(&t->lock);
		put128(page + 32, (t->read_units + 999) / 1000);  /* data units read, 1000 x 512 bytes */
		put128(page + 48, (t->write_units + 999) / 1000); /* data units written */
		put128(page + 64, t->read_cmds);
		put128(page + 80, t->write_cmds);
		pthread_mutex_unlock(&t->lock);
		page_len = 512;
		break;
	case 0x20: /* FDP configurations, reclaim unit handle usage, statistics, events */
	case 0x21:
	case 0x22:
	case 0x23:
		status = fdp_log_page(t, lid, lsp, lsi, page, sizeof(page), &page_len);
		if (status)
			return status;
		break;
	default:
		return SC_INVALID_LOG_PAGE;
	}
	if (offset & 3 || offset > page_len)
		return SC_INVALID_FIELD;
	if ((lid == 0x02 || lid >= 0x20) && offset < page_len)
		memcpy(cmd->data, page + offset,
		       cmd->data_len < page_len - offset ? cmd->data_len : page_len - offset);
	return SC_SUCCESS; /* the rest of the buffer is already zero */
}

static int features(struct conn *c, struct command *cmd, bool set)
{
	struct controller *ctrl = c->ctrl;
	uint8_t fid = cmd->sqe[SQE_CDW10];
	uint8_t sel = (cmd->sqe[SQE_CDW10 + 1] >> 0) & 7;
	uint32_t dw11 = get32(cmd->sqe + SQE_CDW11);
	int status = SC_SUCCESS;

	if (!set && sel > 1)
		return SC_INVALID_FIELD; /* no saved values, no capabilities report */
	pthread_mutex_lock(&c->t->lock);
	switch (fid) {
	case FEAT_VOLATILE_WC:
		if (!c->t->cfg.vwc)
			status = SC_INVALID_FIELD;
		else if (set) {
			/* turning the cache off puts what it holds on the medium first */
			if (!(dw11 & 1) && cache_flush(c->t) < 0)
				status = SC_INTERNAL;
			else
				ctrl->write_cache = dw11 & 1;
		}
		else
			cmd->result0 = ctrl->write_cache;
		break;
	case FEAT_NUM_QUEUES:
		if (set) {
			uint16_t nsq = (uint16_t)dw11, ncq = (uint16_t)(dw11 >> 16);

			if (nsq == 0xffff || ncq == 0xffff) {
				status = SC_INVALID_FIELD;
				break;
			}
			/* both zero-based; one count for both, as each TCP queue is a pair */
			ctrl->io_queues = nsq < ncq ? nsq : ncq;
			if (ctrl->io_queues >= TARGET_MAX_IO_QUEUES)
				ctrl->io_queues = TARGET_MAX_IO_QUEUES - 1;
		}
		cmd->result0 = ctrl->io_queues | (uint32_t)ctrl->io_queues << 16;
		break;
	case FEAT_ASYNC_EVENT:
		if (set)
			ctrl->aec = dw11;
		cmd->result0 = ctrl->aec;
		break;
	case FEAT_KATO:
		if (set) {
			/* the new timeout counts from now */
			ctrl->kato_ms = dw11;
			ctrl->last_admin_us = trace_now_us();
		}
		cmd->result0 = ctrl->kato_ms;
		break;
	case FEAT_FDP:
		status = fdp_features(c->t, set, dw11, get32(cmd->sqe + SQE_CDW12), &cmd->result0);
		break;
	default:
		status = SC_INVALID_FIELD;
	}
	pthread_mutex_unlock(&c->t->lock);
	return status;
}

int admin_execute(struct conn *c, struct command *cmd)
{
	uint8_t opc = cmd->sqe[SQE_OPC];

	switch (opc) {
	case ADMIN_IDENTIFY:
		return cmd->data_len ? identify(c, cmd) : SC_SGL_LENGTH_INVALID;
	case ADMIN_GET_LOG_PAGE:
		return get_log_page(c, cmd);
	case ADMIN_SET_FEATURES:
		return features(c, cmd, true);
	case ADMIN_GET_FEATURES:
		return features(c, cmd, false);
	case ADMIN_KEEP_ALIVE:
		return SC_SUCCESS;
	case ADMIN_ASYNC_EVENT:
		return CMD_HELD;
	}
	return SC_INVALID_OPCODE;
}
