/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What an NVMe namespace offers for write hints: the Streams directive
 * (DTYPE 1) and Flexible Data Placement (DTYPE 2, FDP configurations log
 * 0x20, reclaim unit handle status). A command the caller may not send is
 * "needs root"; one the device rejects means it lacks the feature.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvme_hints.h"
#include "util.h"

#define DIRECTIVE_IDENTIFY 0
#define DIRECTIVE_STREAMS 1
#define DIRECTIVE_DATA_PLACEMENT 2
#define DOPER_RETURN_PARAMS 1
#define FEATURE_FDP 0x1d
#define LOG_FDP_CONFIGS 0x20

static bool bit(const uint8_t *b, unsigned int n)
{
	return (b[n / 8] >> (n % 8)) & 1;
}

/* Records why a command gave no data: privileges, or the device said no. */
static int command_failed(struct lcloud_probe *p, int index, const char *what, int r)
{
	const char *name = report_layer(p, index)->name;

	if (r == -EACCES || r == -EPERM)
		return report_note(p, NOTE_NEEDS_ROOT, index,
				   "%s: %s needs root (CAP_SYS_ADMIN); run as root to see it", name, what);
	if (r < 0)
		return report_note(p, NOTE_NVME_COMMAND_FAILED, index, "%s: %s failed: %s",
				   name, what, strerror(-r));
	return report_note(p, NOTE_NVME_COMMAND_REJECTED, index,
			   "%s: %s rejected by the device: %s (status 0x%x)", name, what, nvme_status_name(r), r);
}

int nvme_fdp_config_decode(const uint8_t *log, size_t len, unsigned int index, struct fdp_config *ret)
{
	uint16_t n;
	uint32_t size;
	size_t off = 16;

	memset(ret, 0, sizeof(*ret));
	if (len < 16)
		return -EBADMSG;
	n = nvme_le16(log, len, 0); /* 0's based */
	size = nvme_le32(log, len, 4);
	if (size < 16 || size > len)
		size = (uint32_t)len; /* a lying size field: trust only what we hold */
	if (index > n)
		return -ENOENT;
	for (unsigned int i = 0; i <= index; i++) {
		uint16_t dsze = nvme_le16(log, size, off);

		if (dsze < 64 || off + dsze > size)
			return -EBADMSG;
		if (i == index) {
			const uint8_t *d = log + off;

			ret->fdpa = d[2];
			ret->nrg = nvme_le32(d, dsze, 4);
			ret->nruh = nvme_le16(d, dsze, 8);
			ret->maxpids = nvme_le16(d, dsze, 10);
			ret->nnss = nvme_le32(d, dsze, 12);
			ret->runs = nvme_le64(d, dsze, 16);
			/* reclaim unit handle descriptors follow the 64-byte header, 4 bytes each */
			for (unsigned int h = 0; h < ret->nruh && h < ARRAY_SIZE(ret->ruh_types); h++)
				ret->ruh_types[h] = 64 + 4 * h < dsze ? d[64 + 4 * h] : 0;
			ret->valid = (ret->fdpa & 0x80) != 0; /* FDPA bit 7: configuration valid */
			return 0;
		}
		off += dsze;
	}
	return -EBADMSG;
}

int nvme_ruh_status_decode(const uint8_t *buf, size_t len, uint16_t *pids, uint16_t *ruhids, int max)
{
	uint16_t n;
	int out = 0;

	if (len < 16)
		return -EBADMSG;
	n = nvme_le16(buf, len, 14); /* NRUHSD at byte 14, descriptors of 32 bytes from 16 */
	for (unsigned int i = 0; i < n && out < max; i++) {
		size_t off = 16 + 32 * (size_t)i;

		if (off + 32 > len)
			return -EBADMSG;
		/* a descriptor: PID 1:0, RUHID 3:2, earliest reclaim unit time, RUAMW */
		if (ruhids)
			ruhids[out] = nvme_le16(buf, len, off + 2);
		pids[out++] = nvme_le16(buf, len, off);
	}
	return out;
}

static int probe_streams(struct lcloud_probe *p, int index, struct nvme_conn *conn, const struct nvme_identity *id)
{
	uint8_t buf[32];
	struct lcloud_layer *l;
	int r;

	r = conn->ops->directive_recv(conn->handle, conn->nsid, DIRECTIVE_STREAMS, DOPER_RETURN_PARAMS, buf, sizeof(buf));
	if (r != 0)
		return command_failed(p, index, "Directive Receive (Streams parameters)", r);
	l = report_layer(p, index);
	/* NVMe Base 2.0, Streams Return Parameters */
	r = layer_add_u64(l, FACT_STREAMS_MAX_LIMIT, nvme_le16(buf, 32, 0), "nvme:streams:msl");
	if (r >= 0)
		r = layer_add_u64(l, FACT_STREAMS_AVAILABLE, nvme_le16(buf, 32, 2), "nvme:streams:nssa");
	if (r >= 0)
		r = layer_add_u64(l, FACT_STREAMS_ALLOCATED, nvme_le16(buf, 32, 22), "nvme:streams:nsa");
	if (r >= 0 && id->lba_size) {
		uint64_t sws = nvme_le32(buf, 32, 16), sgs = nvme_le16(buf, 32, 20);

		r = layer_add_u64(l, FACT_STREAM_WRITE_SIZE_BYTES, sws * id->lba_size, "nvme:streams:sws");
		if (r >= 0)
			r = layer_add_u64(l, FACT_STREAM_GRANULARITY_BYTES, sgs * sws * id->lba_size,
					  "nvme:streams:sgs");
	}
	return r;
}

static int probe_fdp(struct lcloud_probe *p, int index, struct nvme_conn *conn, const struct nvme_identity *id)
{
	struct lcloud_layer *l;
	struct fdp_config cfg;
	uint32_t feature = 0;
	uint8_t *buf;
	unsigned int cfg_index;
	int r;

	r = conn->ops->get_feature(conn->handle, FEATURE_FDP, id->endgid, &feature);
	if (r != 0)
		return command_failed(p, index, "Get Features (Flexible Data Placement)", r);
	l = report_layer(p, index);
	cfg_index = (feature >> 8) & 0xff;
	r = layer_add_bool(l, FACT_FDP_ENABLED, feature & 1, "nvme:feature-0x1d:fdpe");
	if (r >= 0)
		r = layer_add_u64(l, FACT_FDP_CONFIG_INDEX, cfg_index, "nvme:feature-0x1d:fdpcidx");
	if (r < 0)
		return r;

	buf = calloc(1, 8192);
	if (!buf)
		return -ENOMEM;
	r = conn->ops->get_log(conn->handle, LOG_FDP_CONFIGS, id->endgid, buf, 8192);
	if (r != 0) {
		free(buf);
		return command_failed(p, index, "Get Log Page 0x20 (FDP configurations)", r);
	}
	r = nvme_fdp_config_decode(buf, 8192, cfg_index, &cfg);
	free(buf);
	if (r < 0)
		return report_note(p, NOTE_NVME_MALFORMED, index,
				   "%s: FDP configurations log is malformed (%s); FDP details not shown",
				   l->name, strerror(-r));
	l = report_layer(p, index);
	r = layer_add_u64(l, FACT_FDP_RECLAIM_GROUPS, cfg.nrg, "nvme:log-0x20:nrg");
	if (r >= 0)
		r = layer_add_u64(l, FACT_FDP_RECLAIM_UNIT_HANDLES, cfg.nruh, "nvme:log-0x20:nruh");
	if (r >= 0)
		r = layer_add_u64(l, FACT_FDP_MAX_PLACEMENT_IDS, cfg.maxpids + 1ull, "nvme:log-0x20:maxpids");
	if (r >= 0)
		r = layer_add_u64(l, FACT_FDP_RECLAIM_UNIT_BYTES, cfg.runs, "nvme:log-0x20:runs");
	if (r < 0 || !(feature & 1))
		return r;

	/* Placement identifiers this namespace may use: the reclaim unit handle status. */
	{
		uint8_t status[16 + 32 * 128];
		uint16_t pids[128], ruhids[128];
		char list[128 * 6 + 1] = "", handles[128 * 6 + 1] = "";
		int n;

		r = conn->ops->ruh_status(conn->handle, conn->nsid, status, sizeof(status));
		if (r != 0)
			return command_failed(p, index, "I/O Management Receive (reclaim unit handle status)", r);
		n = nvme_ruh_status_decode(status, sizeof(status), pids, ruhids, (int)ARRAY_SIZE(pids));
		if (n < 0)
			return report_note(p, NOTE_NVME_MALFORMED, index,
					   "reclaim unit handle status is malformed");
		for (int i = 0; i < n; i++) {
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%u", i ? "," : "", pids[i]);
			snprintf(handles + strlen(handles), sizeof(handles) - strlen(handles), "%s%u", i ? "," : "",
				 ruhids[i]);
		}
		l = report_layer(p, index);
		r = layer_add_u64(l, FACT_FDP_PLACEMENT_ID_COUNT, (uint64_t)n, "nvme:ruh-status:nruhsd");
		if (r >= 0)
			r = layer_add_string(l, FACT_FDP_PLACEMENT_IDS, list, "nvme:ruh-status:pid");
		if (r >= 0)
			r = layer_add_string(l, FACT_FDP_PLACEMENT_HANDLES, handles, "nvme:ruh-status:ruhid");
	}
	return r;
}

int nvme_hints_probe(struct lcloud_probe *p, int index, struct nvme_conn *conn, const struct nvme_identity *id)
{
	int r = 0;

	if (id->oacs & (1u << 5)) {
		uint8_t ident[4096];
		struct lcloud_layer *l;

		r = conn->ops->directive_recv(conn->handle, conn->nsid, DIRECTIVE_IDENTIFY, DOPER_RETURN_PARAMS,
					      ident, sizeof(ident));
		if (r != 0) {
			r = command_failed(p, index, "Directive Receive (Identify)", r);
		} else {
			/* bytes 0-31 supported, 32-63 enabled, 64-95 persistent; bit = directive type */
			l = report_layer(p, index);
			r = layer_add_bool(l, FACT_STREAMS_SUPPORTED, bit(ident, DIRECTIVE_STREAMS), "nvme:directive-identify");
			if (r >= 0)
				r = layer_add_bool(l, FACT_STREAMS_ENABLED, bit(ident + 32, DIRECTIVE_STREAMS),
						   "nvme:directive-identify");
			if (r >= 0)
				r = layer_add_bool(l, FACT_DATA_PLACEMENT_SUPPORTED, bit(ident, DIRECTIVE_DATA_PLACEMENT),
						   "nvme:directive-identify");
			if (r >= 0 && bit(ident + 32, DIRECTIVE_STREAMS))
				r = probe_streams(p, index, conn, id);
		}
		if (r < 0)
			return r;
	}
	if (id->ctratt & (1u << 19))
		r = probe_fdp(p, index, conn, id);
	return r;
}
