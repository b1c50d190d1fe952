/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Flexible Data Placement (NVMe TP4146), as much of it as a Linux host
 * uses to turn io_uring write streams into placement handles: CTRATT bit 19
 * and ENDGID (identify.c) lead the host to Get Features 0x1D, the FDP
 * configurations log (0x20) and I/O Management Receive's reclaim unit handle
 * status; each write stream is then a Write with DTYPE 2 and the handle in
 * DSPEC. One endurance group (1) with one configuration, fixed at start: one
 * reclaim group, N reclaim unit handles (placement handle i is handle i, in
 * every namespace), each reclaim unit TARGET_FDP_RU_BYTES. The file behind
 * a namespace is one file whatever the handle: placement changes what the
 * target counts (bytes per handle, the statistics log, RUAMW), never where
 * data lands, so the power-fail model and the write log see no difference.
 * A Write whose handle is past N is placed on handle 0 and noted as an
 * Invalid Placement Identifier event, as the specification has it for an
 * invalid placement identifier (it is not an error).
 */
#include <string.h>
#include <time.h>

#include "nvme_tcp.h"
#include "target.h"

enum {
	LOG_FDP_CONFIGS = 0x20,
	LOG_FDP_RUH_USAGE = 0x21,
	LOG_FDP_STATS = 0x22,
	LOG_FDP_EVENTS = 0x23,
};

#define DTYPE_DATA_PLACEMENT 2
#define FDP_EVENT_INVALID_PID 0x03
#define FDP_EVENT_PIV 0x01   /* the event's placement identifier holds */
#define FDP_EVENT_NSIDV 0x02 /* its namespace holds */
#define IO_MGMT_RECV 0x12
#define IO_MGMT_RUH_STATUS 0x01 /* I/O Management Receive's Management Operation */
#define IO_MGMT_RUH_UPDATE 0x01 /* I/O Management Send's */
#define SC_FEATURE_NOT_CHANGEABLE 0x10e

/* A 128-bit little-endian counter, as the statistics log keeps them; the target's fit in 64 bits. */
static void put128(uint8_t *p, uint64_t v)
{
	put64(p, v);
	put64(p + 8, 0);
}

/* The configurations log: a 16-byte header, one 64-byte descriptor and its handles' 4-byte descriptors. */
static size_t configs_page(const struct target *t, uint8_t *page)
{
	unsigned int n = t->cfg.fdp_handles;
	size_t desc_len = 64 + 4 * n, len = 16 + desc_len;
	uint8_t *d = page + 16;

	put16(page + 0, 0);               /* NUMFDPC: one configuration, zero-based */
	put32(page + 4, (uint32_t)len);   /* SZE */
	put16(d + 0, (uint16_t)desc_len); /* DSZE */
	d[2] = 1u << 7 | (t->cfg.vwc ? 1u << 4 : 0); /* FDPA: valid, FDP volatile write cache; RGIF 0 */
	put32(d + 4, 1);                  /* NRG: one reclaim group */
	put16(d + 8, (uint16_t)n);        /* NRUH */
	put16(d + 10, (uint16_t)(n - 1)); /* MAXPIDS, zero-based */
	put32(d + 12, TARGET_MAX_NAMESPACES); /* NNSS */
	put64(d + 16, TARGET_FDP_RU_BYTES);   /* RUNS */
	put32(d + 24, 0);                 /* ERUTL: no time limit */
	for (unsigned int i = 0; i < n; i++)
		d[64 + 4 * i] = 1;        /* RUHT: initially isolated */
	return len;
}

/* The events log: a 64-byte header, then the host events (LSP bit 0 set), oldest first; no controller events. */
static size_t events_page(const struct target *t, bool host_events, uint8_t *page)
{
	unsigned int n = host_events ? t->fdp_event_count : 0;
	unsigned int first = (t->fdp_event_next + TARGET_FDP_MAX_EVENTS - t->fdp_event_count) % TARGET_FDP_MAX_EVENTS;

	put32(page, n);
	for (unsigned int i = 0; i < n; i++) {
		const struct fdp_event *e = &t->fdp_events[(first + i) % TARGET_FDP_MAX_EVENTS];
		uint8_t *r = page + 64 + 64 * i;

		r[0] = e->type;
		r[1] = FDP_EVENT_PIV | FDP_EVENT_NSIDV;
		put16(r + 2, e->pid);
		put32(r + 4, (uint32_t)e->timestamp_ms); /* 48 bits of milliseconds */
		put16(r + 8, (uint16_t)(e->timestamp_ms >> 32));
		put32(r + 12, e->nsid);
		/* RGID 0, RUHID 0: where the write was placed */
	}
	return 64 + 64 * (size_t)TARGET_FDP_MAX_EVENTS;
}

int fdp_log_page(struct target *t, uint8_t lid, uint8_t lsp, uint16_t lsi, uint8_t *page, size_t cap, size_t *ret_len)
{
	unsigned int n = t->cfg.fdp_handles;
	size_t len;

	if (!n)
		return SC_INVALID_LOG_PAGE;
	if (lsi != FDP_ENDGID)
		return SC_INVALID_FIELD; /* the only endurance group */
	if (cap < 64 + 64 * (size_t)TARGET_FDP_MAX_EVENTS || cap < 16 + 64 + 4 * (size_t)TARGET_FDP_MAX_HANDLES)
		return SC_INTERNAL;
	memset(page, 0, cap);
	pthread_mutex_lock(&t->lock);
	switch (lid) {
	case LOG_FDP_CONFIGS:
		len = configs_page(t, page);
		break;
	case LOG_FDP_RUH_USAGE:
		put16(page, (uint16_t)n);
		for (unsigned int i = 0; i < n; i++)
			page[8 + 8 * i] = 1; /* RUHA: host specified, by every namespace's handle list */
		len = 8 + 8 * (size_t)n;
		break;
	case LOG_FDP_STATS: {
		uint64_t bytes = 0;

		for (unsigned int i = 0; i < n; i++)
			bytes += t->fdp_handle_bytes[i];
		put128(page + 0, bytes);  /* HBMW: host bytes written (no metadata here) */
		put128(page + 16, bytes); /* MBMW: the media is the file, written once */
		put128(page + 32, 0);     /* MBE: nothing erased */
		len = 64;
		break;
	}
	case LOG_FDP_EVENTS:
		len = events_page(t, lsp & 1, page);
		break;
	default:
		pthread_mutex_unlock(&t->lock);
		return SC_INVALID_LOG_PAGE;
	}
	pthread_mutex_unlock(&t->lock);
	*ret_len = len;
	return SC_SUCCESS;
}

int fdp_features(struct target *t, bool set, uint32_t cdw11, uint32_t cdw12, uint32_t *ret_result0)
{
	if (!t->cfg.fdp_handles || (cdw11 & 0xffff) != FDP_ENDGID)
		return SC_INVALID_FIELD;
	/* enabled, configuration 0, for the target's life: a Set may only say so again */
	if (set && (cdw12 & 0xff01) != 1)
		return SC_FEATURE_NOT_CHANGEABLE;
	*ret_result0 = 1; /* FDPE, FDPCIDX 0 */
	return SC_SUCCESS;
}

/* Reclaim unit available media writes of HANDLE, in logical blocks: what is left of its current unit. */
static uint64_t ru_available_blocks(const struct target *t, unsigned int handle)
{
	return (TARGET_FDP_RU_BYTES - t->fdp_ru_used[handle]) / t->cfg.lba_size;
}

static int ruh_status(struct target *t, struct command *cmd)
{
	uint8_t page[16 + 32 * TARGET_FDP_MAX_HANDLES] = {0};
	unsigned int n = t->cfg.fdp_handles;
	size_t len = 16 + 32 * (size_t)n;

	put16(page + 14, (uint16_t)n); /* NRUHSD */
	pthread_mutex_lock(&t->lock);
	for (unsigned int i = 0; i < n; i++) {
		uint8_t *d = page + 16 + 32 * i;

		put16(d + 0, (uint16_t)i); /* PID: reclaim group 0, placement handle i */
		put16(d + 2, (uint16_t)i); /* RUHID */
		put32(d + 4, 0);           /* EARUTR: no time limit */
		put64(d + 8, ru_available_blocks(t, i));
	}
	pthread_mutex_unlock(&t->lock);
	memcpy(cmd->data, page, cmd->data_len < len ? cmd->data_len : len);
	return SC_SUCCESS;
}

/* Reclaim Unit Handle Update: each listed handle starts a new reclaim unit. */
static int ruh_update(struct target *t, struct command *cmd)
{
	uint32_t count = (get32(cmd->sqe + SQE_CDW10) >> 16) + 1; /* MOS: zero-based */

	if ((uint64_t)count * 2 > cmd->data_len)
		return SC_SGL_LENGTH_INVALID;
	for (uint32_t i = 0; i < count; i++)
		if (get16(cmd->data + 2 * i) >= t->cfg.fdp_handles)
			return SC_INVALID_FIELD;
	pthread_mutex_lock(&t->lock);
	for (uint32_t i = 0; i < count; i++)
		t->fdp_ru_used[get16(cmd->data + 2 * i)] = 0;
	pthread_mutex_unlock(&t->lock);
	return SC_SUCCESS;
}

int fdp_io_management(struct target *t, struct command *cmd)
{
	uint32_t cdw10 = get32(cmd->sqe + SQE_CDW10);
	uint32_t numd = get32(cmd->sqe + SQE_CDW11) + 1;
	bool receive = cmd->sqe[SQE_OPC] == IO_MGMT_RECV;

	if (!t->cfg.fdp_handles)
		return SC_INVALID_OPCODE; /* the command set offers them with FDP only */
	if (receive) {
		if ((cdw10 & 0xff) != IO_MGMT_RUH_STATUS)
			return SC_INVALID_FIELD;
		if ((uint64_t)numd * 4 != cmd->data_len)
			return SC_SGL_LENGTH_INVALID;
		return ruh_status(t, cmd);
	}
	if ((cdw10 & 0xff) != IO_MGMT_RUH_UPDATE)
		return SC_INVALID_FIELD;
	return ruh_update(t, cmd);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

bool fdp_directive_accepted(const struct target *t, const uint8_t *sqe)
{
	unsigned int dtype = get32(sqe + SQE_CDW12) >> 20 & 0xf;

	/* no directive (the controller's choice, handle 0), or data placement with FDP on */
	return dtype == 0 || (dtype == DTYPE_DATA_PLACEMENT && t->cfg.fdp_handles);
}

int fdp_write_placement(struct target *t, uint32_t nsid, const uint8_t *sqe, unsigned int *ret_handle)
{
	unsigned int dtype = get32(sqe + SQE_CDW12) >> 20 & 0xf;
	uint16_t pid = get16(sqe + SQE_CDW13 + 2);

	*ret_handle = 0;
	if (!fdp_directive_accepted(t, sqe))
		return SC_INVALID_FIELD; /* a directive this target does not offer, or FDP off */
	if (dtype == 0)
		return SC_SUCCESS;
	if (pid < t->cfg.fdp_handles) {
		*ret_handle = pid;
		return SC_SUCCESS;
	}
	/* not an error: placed on handle 0, and the host can read why in the events log */
	pthread_mutex_lock(&t->lock);
	t->fdp_events[t->fdp_event_next] = (struct fdp_event){FDP_EVENT_INVALID_PID, pid, nsid, now_ms()};
	t->fdp_event_next = (t->fdp_event_next + 1) % TARGET_FDP_MAX_EVENTS;
	if (t->fdp_event_count < TARGET_FDP_MAX_EVENTS)
		t->fdp_event_count++;
	pthread_mutex_unlock(&t->lock);
	return SC_SUCCESS;
}

void fdp_count_write(struct target *t, unsigned int handle, uint64_t bytes)
{
	if (!t->cfg.fdp_handles || handle >= t->cfg.fdp_handles)
		return;
	pthread_mutex_lock(&t->lock);
	t->fdp_handle_bytes[handle] += bytes;
	/* a full unit is followed by a new one, as a device moves on to a fresh reclaim unit */
	t->fdp_ru_used[handle] = (t->fdp_ru_used[handle] + bytes) % TARGET_FDP_RU_BYTES;
	pthread_mutex_unlock(&t->lock);
}
