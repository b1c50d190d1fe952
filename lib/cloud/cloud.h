/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_CLOUD_H
#define LCLOUD_CLOUD_H

#include <stdbool.h>

#include "nvme_identify.h"
#include "report.h"

/*
 * Recognises a cloud provider's NVMe device from its identity and, where the
 * provider documents a write-atomicity promise in vendor fields, adds a CLOUD
 * layer under layer INDEX with the promise, its conditions and its source.
 */
int cloud_nvme_probe(struct lcloud_probe *p, int index, const struct nvme_identity *id);

/* A provider's documented promise, as the facts every cloud layer carries. */
struct cloud_promise {
	uint64_t untorn_max, granularity, boundary; /* bytes */
	/*
	 * true: a write is covered when aligned to its own size (AWS);
	 * false: when it stays inside one BOUNDARY-aligned block (Google's physical block).
	 */
	bool aligned_to_size;
	const char *conditions, *source_title, *evidence;
};
int cloud_add_promise(struct lcloud_layer *l, const struct cloud_promise *pr);

/* A CLOUD layer under PARENT naming the provider and product, with where each was read. Returns its index. */
int cloud_layer_new(struct lcloud_probe *p, int parent, const char *provider, const char *provider_src,
		    const char *product, const char *product_src);

/* The same for a SCSI disk: SCSI layer SCSI, describing disk layer DISK. */
int cloud_scsi_probe(struct lcloud_probe *p, int scsi, int disk);

#endif
