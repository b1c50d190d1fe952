/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_NVME_IDENTIFY_H
#define LCLOUD_NVME_IDENTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"

#define NVME_ID_SIZE_FULL 4096

/* What Identify Controller and Identify Namespace say, decoded for the other probes. */
struct nvme_identity {
	const uint8_t *ctrl; /* NULL when not read */
	size_t ctrl_len;
	const uint8_t *ns;
	size_t ns_len;
	uint16_t vid;
	char mn[41], sn[21], fr[9];
	uint32_t ctratt;
	uint16_t oacs, oncs;
	uint16_t awun, awupf, acwu;
	uint8_t nsfeat, flbas, nlbaf;
	uint16_t nawun, nawupf, nacwu, nabsn, nabo, nabspf, noiob, npwg, npwa, npdg, npda, nows;
	uint16_t endgid;
	uint64_t lba_size; /* 0 when the current LBA format could not be read */
	uint16_t lba_metadata; /* MS: metadata bytes per LBA in the current format */
	bool have_ctrl_atomics, have_ns_fields;
};

/* Little-endian reads that refuse to go past LEN: 0 for what is not there. */
uint16_t nvme_le16(const uint8_t *buf, size_t len, size_t off);
uint32_t nvme_le32(const uint8_t *buf, size_t len, size_t off);
uint64_t nvme_le64(const uint8_t *buf, size_t len, size_t off);

/* Decodes the buffers (either may be NULL); notes truncation. */
void nvme_identity_decode(struct nvme_identity *id, const uint8_t *ctrl, size_t ctrl_len,
			  const uint8_t *ns, size_t ns_len);

/* Raw fields under nvme-cli's JSON names, then the derived sizes in bytes. */
int nvme_identity_fill_layer(struct lcloud_probe *p, int index, const struct nvme_identity *id);

#endif
