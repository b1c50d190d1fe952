/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_NVME_HINTS_H
#define LCLOUD_NVME_HINTS_H

#include "nvme_identify.h"
#include "nvme_transport.h"
#include "report.h"

/* Directives (Streams, Data Placement) and Flexible Data Placement, when the controller has them. */
int nvme_hints_probe(struct lcloud_probe *p, int index, struct nvme_conn *conn, const struct nvme_identity *id);

/* Decoders, exposed for the unit tests. LEN is what the buffer holds. */
struct fdp_config {
	bool valid;
	uint8_t fdpa;
	uint32_t nrg;
	uint16_t nruh;
	uint16_t maxpids;
	uint32_t nnss;
	uint64_t runs;
	uint8_t ruh_types[128]; /* 1 initially isolated, 2 persistently isolated */
};
/* Finds configuration INDEX in an FDP configurations log (0x20); -EBADMSG when malformed. */
int nvme_fdp_config_decode(const uint8_t *log, size_t len, unsigned int index, struct fdp_config *ret);
/*
 * Placement identifiers from a reclaim unit handle status buffer, and (RUHIDS
 * not NULL) the reclaim unit handle each reaches, in the buffer's order (the
 * order Linux numbers write streams in); returns their count or -EBADMSG.
 */
int nvme_ruh_status_decode(const uint8_t *buf, size_t len, uint16_t *pids, uint16_t *ruhids, int max);

#endif
