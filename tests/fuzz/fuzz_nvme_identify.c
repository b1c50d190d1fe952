/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * NVMe Identify Controller and Identify Namespace decoding, vendor areas
 * included (the cloud providers' fields). Input: 2 bytes little-endian, the
 * controller data's length (at most 4096), then the controller data, then
 * the namespace data (at most 4096). Each buffer is copied to an allocation
 * of exactly its length, so a read past the length the decoder was given shows.
 * Calls nvme_identity_decode, nvme_identity_fill_layer and cloud_nvme_probe.
 */
#include <stdlib.h>
#include <string.h>

#include "cloud.h"
#include "fuzz_common.h"
#include "nvme_identify.h"
#include "report.h"

static uint8_t *copy_exact(const uint8_t *data, size_t len)
{
	uint8_t *b = malloc(len ? len : 1);

	if (b && len)
		memcpy(b, data, len);
	return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvme_identity id;
	struct lcloud_probe *p;
	size_t ctrl_len, ns_len;
	uint8_t *ctrl, *ns;
	int disk, index;

	if (size < 2)
		return 0;
	ctrl_len = (size_t)data[0] | (size_t)data[1] << 8;
	data += 2;
	size -= 2;
	if (ctrl_len > NVME_ID_SIZE_FULL)
		ctrl_len = NVME_ID_SIZE_FULL;
	if (ctrl_len > size)
		ctrl_len = size;
	ns_len = size - ctrl_len;
	if (ns_len > NVME_ID_SIZE_FULL)
		ns_len = NVME_ID_SIZE_FULL;
	ctrl = copy_exact(data, ctrl_len);
	ns = copy_exact(data + ctrl_len, ns_len);
	p = report_new("/dev/nvme0n1");
	if (!ctrl || !ns || !p)
		goto out;
	disk = report_add_layer(p, LCLOUD_LAYER_DISK, "nvme0n1", -1);
	index = disk < 0 ? disk : report_add_layer(p, LCLOUD_LAYER_NVME, "nvme0n1", disk);
	if (index < 0)
		goto out;
	/* A missing buffer is how the probe says a command failed. */
	nvme_identity_decode(&id, ctrl_len ? ctrl : NULL, ctrl_len, ns_len ? ns : NULL, ns_len);
	if (nvme_identity_fill_layer(p, index, &id) >= 0 && cloud_nvme_probe(p, index, &id) >= 0)
		fuzz_use_probe(p);
out:
	if (p)
		lcloud_probe_free(p);
	free(ctrl);
	free(ns);
	return 0;
}
