/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The NVMe hint pages and logs: Directive Receive (Identify, Streams
 * parameters), the FDP feature, the FDP configurations log (0x20) and the
 * reclaim unit handle status. Input: an archive (fuzz_common.h) of 'f'
 * records named as in a captured nvme-data folder (id-ctrl.bin, id-ns.bin,
 * log-20.bin, feature-1d.bin, directive-0-1.bin, directive-1-1.bin,
 * ruh-status.bin, NAME.status), answered by an in-memory transport with the
 * replay transport's rules. Calls nvme_identity_decode, nvme_hints_probe,
 * nvme_fdp_config_decode and nvme_ruh_status_decode.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "nvme_hints.h"
#include "nvme_identify.h"
#include "nvme_transport.h"
#include "report.h"

#define STATUS_INVALID_FIELD 0x2 /* what a device without the command answers */

static int blob_read(void *handle, const char *name, void *buf, size_t len, size_t *ret_len)
{
	const struct fuzz_archive *a = handle;
	const struct fuzz_record *r;
	char status_name[64];

	snprintf(status_name, sizeof(status_name), "%s.status", name);
	r = fuzz_archive_find(a, 'f', status_name);
	if (r) {
		char text[16];
		size_t n = r->len < sizeof(text) - 1 ? r->len : sizeof(text) - 1;

		memcpy(text, r->data, n);
		text[n] = '\0';
		return (int)strtol(text, NULL, 0);
	}
	r = fuzz_archive_find(a, 'f', name);
	if (!r)
		return STATUS_INVALID_FIELD;
	memset(buf, 0, len);
	memcpy(buf, r->data, r->len < len ? r->len : len);
	if (ret_len)
		*ret_len = r->len < len ? r->len : len;
	return 0;
}

static int mem_identify(void *handle, uint8_t cns, uint32_t nsid, void *buf, size_t len, size_t *ret_len)
{
	(void)nsid;
	return blob_read(handle, cns == 0x01 ? "id-ctrl.bin" : "id-ns.bin", buf, len, ret_len);
}

static int mem_get_log(void *handle, uint8_t lid, uint16_t lsi, void *buf, size_t len)
{
	char name[32];

	(void)lsi;
	snprintf(name, sizeof(name), "log-%02x.bin", lid);
	return blob_read(handle, name, buf, len, NULL);
}

static int mem_get_feature(void *handle, uint8_t fid, uint32_t cdw11, uint32_t *result)
{
	uint8_t raw[4];
	char name[32];
	int r;

	(void)cdw11;
	snprintf(name, sizeof(name), "feature-%02x.bin", fid);
	r = blob_read(handle, name, raw, sizeof(raw), NULL);
	if (r == 0)
		*result = (uint32_t)raw[0] | (uint32_t)raw[1] << 8 | (uint32_t)raw[2] << 16 | (uint32_t)raw[3] << 24;
	return r;
}

static int mem_directive_recv(void *handle, uint32_t nsid, uint8_t dtype, uint8_t doper, void *buf, size_t len)
{
	char name[32];

	(void)nsid;
	snprintf(name, sizeof(name), "directive-%u-%u.bin", dtype, doper);
	return blob_read(handle, name, buf, len, NULL);
}

static int mem_ruh_status(void *handle, uint32_t nsid, void *buf, size_t len)
{
	(void)nsid;
	return blob_read(handle, "ruh-status.bin", buf, len, NULL);
}

static const struct nvme_transport mem_transport = {
	.identify = mem_identify,
	.get_log = mem_get_log,
	.get_feature = mem_get_feature,
	.directive_recv = mem_directive_recv,
	.ruh_status = mem_ruh_status,
};

/* The decoders alone, on allocations of exactly the record's length. */
static void decode_exact(const struct fuzz_archive *a)
{
	const struct fuzz_record *r;
	struct fdp_config cfg;
	uint16_t pids[128], ruhids[128];
	uint8_t *b;

	r = fuzz_archive_find(a, 'f', "log-20.bin");
	if (r && (b = malloc(r->len ? r->len : 1))) {
		memcpy(b, r->data, r->len);
		for (unsigned int i = 0; i < 4; i++)
			(void)nvme_fdp_config_decode(b, r->len, i, &cfg);
		free(b);
	}
	r = fuzz_archive_find(a, 'f', "ruh-status.bin");
	if (r && (b = malloc(r->len ? r->len : 1))) {
		memcpy(b, r->data, r->len);
		(void)nvme_ruh_status_decode(b, r->len, pids, ruhids, 128);
		(void)nvme_ruh_status_decode(b, r->len, pids, NULL, 1);
		free(b);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t ctrl[NVME_ID_SIZE], ns[NVME_ID_SIZE];
	struct nvme_conn conn = { .ops = &mem_transport, .nsid = 1, .source = "capture" };
	struct lcloud_probe *p = NULL;
	struct fuzz_archive a;
	struct nvme_identity id;
	size_t ctrl_len = 0, ns_len = 0;
	int disk, index;

	if (fuzz_archive_parse(&a, data, size) < 0)
		return 0;
	conn.handle = &a;
	decode_exact(&a);
	if (mem_identify(&a, 0x01, 0, ctrl, sizeof(ctrl), &ctrl_len) != 0)
		ctrl_len = 0;
	if (mem_identify(&a, 0x00, 1, ns, sizeof(ns), &ns_len) != 0)
		ns_len = 0;
	p = report_new("/dev/nvme0n1");
	if (!p)
		goto out;
	disk = report_add_layer(p, LCLOUD_LAYER_DISK, "nvme0n1", -1);
	index = disk < 0 ? disk : report_add_layer(p, LCLOUD_LAYER_NVME, "nvme0n1", disk);
	if (index < 0)
		goto out;
	nvme_identity_decode(&id, ctrl_len ? ctrl : NULL, ctrl_len, ns_len ? ns : NULL, ns_len);
	if (nvme_identity_fill_layer(p, index, &id) >= 0 && nvme_hints_probe(p, index, &conn, &id) >= 0)
		fuzz_use_probe(p);
out:
	if (p)
		lcloud_probe_free(p);
	fuzz_archive_free(&a);
	return 0;
}
