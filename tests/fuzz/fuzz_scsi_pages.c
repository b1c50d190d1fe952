/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The SCSI pages: standard INQUIRY, VPD 0x00, 0x83, 0xB0, 0xB1 and 0xB7,
 * READ CAPACITY(16), the IO advice hints mode page (0x0A/0x05) and GET
 * STREAM STATUS. Input: an archive (fuzz_common.h) of 'f' records named as
 * in a captured scsi-data folder (inquiry.bin, vpd-83.bin, readcap16.bin,
 * mode-0a-05.bin, stream-status.bin, ...). Each page is decoded, in the
 * probe's order, from an allocation of exactly its length. Calls the
 * scsi_decode_* functions, scsi_derive_sizes and cloud_scsi_probe.
 */
#include <stdlib.h>
#include <string.h>

#include "cloud.h"
#include "fuzz_common.h"
#include "report.h"
#include "scsi_pages.h"

static const struct {
	const char *name;
	int (*decode)(struct lcloud_probe *, int, const uint8_t *, size_t);
} pages[] = {
	{ "inquiry.bin", scsi_decode_inquiry },
	{ "vpd-00.bin", scsi_decode_vpd_supported },
	{ "vpd-83.bin", scsi_decode_vpd_devid },
	{ "vpd-b0.bin", scsi_decode_block_limits },
	{ "vpd-b1.bin", scsi_decode_block_characteristics },
	{ "vpd-b7.bin", scsi_decode_block_limits_ext },
	{ "readcap16.bin", scsi_decode_read_capacity16 },
	{ "mode-0a-05.bin", scsi_decode_io_advice_hints },
	{ "stream-status.bin", scsi_decode_stream_status },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lcloud_probe *p = NULL;
	struct fuzz_archive a;
	int disk, index, r = 0;

	if (fuzz_archive_parse(&a, data, size) < 0)
		return 0;
	p = report_new("/dev/sda");
	if (!p)
		goto out;
	disk = report_add_layer(p, LCLOUD_LAYER_DISK, "sda", -1);
	index = disk < 0 ? disk : report_add_layer(p, LCLOUD_LAYER_SCSI, "sda", disk);
	if (index < 0)
		goto out;
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]) && r >= 0; i++) {
		const struct fuzz_record *rec = fuzz_archive_find(&a, 'f', pages[i].name);
		uint8_t *b;

		if (!rec)
			continue;
		b = malloc(rec->len ? rec->len : 1);
		if (!b)
			goto out;
		memcpy(b, rec->data, rec->len);
		r = pages[i].decode(p, index, b, rec->len);
		free(b);
	}
	if (r >= 0) {
		uint64_t lbl = 512; /* READ CAPACITY's block length, as the live probe passes it; 512 when not decoded */

		if (layer_get_bytes(report_layer(p, index), FACT_LOGICAL_BLOCK_LENGTH, &lbl) <= 0)
			lbl = 512;
		r = scsi_derive_sizes(p, index, lbl);
	}
	if (r >= 0)
		r = cloud_scsi_probe(p, index, disk);
	if (r >= 0)
		fuzz_use_probe(p);
out:
	if (p)
		lcloud_probe_free(p);
	fuzz_archive_free(&a);
	return 0;
}
