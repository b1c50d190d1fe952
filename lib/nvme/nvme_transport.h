/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The NVMe commands the probe needs, behind a small table: the live one goes
 * through libnvme's ioctls, the replay one answers from captured data files,
 * so the decoding is tested on data from real and crafted devices alike.
 */
#ifndef LCLOUD_NVME_TRANSPORT_H
#define LCLOUD_NVME_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

#define NVME_ID_SIZE 4096

/* Every op returns 0, a positive NVMe status (SCT << 8 | SC), or -errno. */
struct nvme_transport {
	/* CNS 01h (controller) or 00h (namespace NSID); *ret_len = bytes returned. */
	int (*identify)(void *handle, uint8_t cns, uint32_t nsid, void *buf, size_t len, size_t *ret_len);
	int (*get_log)(void *handle, uint8_t lid, uint16_t lsi, void *buf, size_t len);
	int (*get_feature)(void *handle, uint8_t fid, uint32_t cdw11, uint32_t *result);
	int (*directive_recv)(void *handle, uint32_t nsid, uint8_t dtype, uint8_t doper, void *buf, size_t len);
	/* I/O Management Receive, management operation 1: reclaim unit handle status. */
	int (*ruh_status)(void *handle, uint32_t nsid, void *buf, size_t len);
	void (*close)(void *handle);
};

struct nvme_conn {
	const struct nvme_transport *ops;
	void *handle;
	uint32_t nsid;
	char source[16]; /* "ioctl" or "capture" */
};

/*
 * Connects to namespace NAME ("nvme0n1"): under a sysroot, to its capture in
 * SYSROOT/nvme-data/NAME (-ENOENT when there is none); else to /dev/NAME.
 */
int nvme_connect(const struct lcloud_ctx *ctx, const char *name, struct nvme_conn *ret);
/* Connects to controller NAME ("nvme0"), for Identify Controller: SYSROOT/nvme-data/NAME, or /dev/NAME. */
int nvme_connect_controller(const struct lcloud_ctx *ctx, const char *name, struct nvme_conn *ret);
void nvme_disconnect(struct nvme_conn *conn);

/* A readable name for an NVMe status ("Invalid Field in Command"). */
const char *nvme_status_name(int status);

#endif
