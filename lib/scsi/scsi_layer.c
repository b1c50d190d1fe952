/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The SCSI device layer: for each SCSI disk in the stack, what the disk says
 * in INQUIRY, its VPD pages, READ CAPACITY(16), the IO advice hints mode page
 * and GET STREAM STATUS, beside the kernel's view of the same disk.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scsi/sg_lib.h>

#include "cloud.h"
#include "scsi_layer.h"
#include "scsi_pages.h"
#include "scsi_transport.h"
#include "sysfs.h"
#include "util.h"

#define PAGE_MAX 4096

/* A SCSI disk has a scsi_disk entry under its device; sd names are the common case. */
static bool is_scsi_disk(const struct lcloud_ctx *ctx, const char *devdir, const char *name)
{
	return sysfs_attr_exists(ctx, devdir, "device/scsi_disk") > 0 ||
	       (has_prefix(name, "sd") && sysfs_attr_exists(ctx, devdir, "device/vpd_pg00") > 0);
}

static int command_failed(struct lcloud_probe *p, int index, const char *what, int r, bool quiet_unsupported)
{
	const char *name = report_layer(p, index)->name;

	if (r == -EACCES || r == -EPERM)
		return report_note(p, NOTE_NEEDS_ROOT, index,
				   "%s: %s needs SG_IO on /dev/%s (root); run as root to see it", name, what, name);
	if (r < 0)
		return report_note(p, NOTE_SCSI_COMMAND_FAILED, index, "%s: %s failed: %s", name,
				   what, strerror(-r));
	if ((r == SG_LIB_CAT_ILLEGAL_REQ || r == SG_LIB_CAT_INVALID_OP) && quiet_unsupported)
		return 0; /* an optional page the disk does not have */
	return report_note(p, NOTE_SCSI_COMMAND_REJECTED, index, "%s: %s: sense %s", name, what,
			   scsi_category_name(r));
}

static bool page_listed(const uint8_t *supported, size_t len, uint8_t page)
{
	if (len < 4)
		return true; /* no list: just ask */
	for (size_t i = 4; i < len && i < 4 + ((size_t)supported[2] << 8 | supported[3]); i++)
		if (supported[i] == page)
			return true;
	return false;
}

static int compare_kernel_view(struct lcloud_probe *p, int scsi, int disk)
{
	const struct lcloud_layer *s = report_layer(p, scsi), *d = report_layer(p, disk);
	const struct lcloud_fact *kf = layer_fact(d, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES);
	uint64_t dev_phys = 0, kern_phys = 0, dev_atomic = 0;
	int r = 0;

	/* a size absent or unread on either side: nothing to compare */
	(void)layer_get_bytes(s, FACT_PHYSICAL_BLOCK_BYTES, &dev_phys);
	(void)layer_get_bytes(d, FACT_PHYSICAL_BLOCK_SIZE, &kern_phys);
	(void)layer_get_bytes(s, FACT_MAX_ATOMIC_TRANSFER_BYTES, &dev_atomic);

	if (dev_phys && kern_phys && dev_phys != kern_phys)
		r = report_note_as(p, NOTE_SCSI_KERNEL_VIEW, LCLOUD_NOTE_WARNING, scsi,
				   "%s: READ CAPACITY(16) gives a %" PRIu64 "-byte physical block, the kernel "
				   "physical_block_size %" PRIu64, s->name, dev_phys, kern_phys);
	if (r < 0 || !layer_fact(s, FACT_MAX_ATOMIC_TRANSFER_BYTES) || !kf)
		return r;
	if (kf->state == LCLOUD_FACT_NOT_PROVIDED)
		return report_note(p, NOTE_SCSI_KERNEL_VIEW, scsi,
				   "%s: the disk states a maximum atomic transfer of %" PRIu64 " bytes; this kernel "
				   "has no atomic write limits (Linux 6.11+), so RWF_ATOMIC is not available",
				   s->name, dev_atomic);
	if (kf->state == LCLOUD_FACT_PRESENT)
		return report_note(p, NOTE_SCSI_KERNEL_VIEW, scsi,
				   "%s: the disk states a maximum atomic transfer of %" PRIu64 " bytes (0: none); the "
				   "kernel's atomic_write_unit_max_bytes is %" PRIu64, s->name, dev_atomic, kf->u64);
	return 0;
}

static int probe_disk(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int disk, const char *devdir)
{
	static const struct {
		uint8_t page;
		const char *what;
		int (*decode)(struct lcloud_probe *, int, const uint8_t *, size_t);
	} vpd[] = {
		{ 0x83, "Device Identification", scsi_decode_vpd_devid },
		{ 0xb0, "Block Limits", scsi_decode_block_limits },
		{ 0xb1, "Block Device Characteristics", scsi_decode_block_characteristics },
		{ 0xb7, "Block Limits Extension", scsi_decode_block_limits_ext },
	};
	uint8_t *buf = NULL, supported[260];
	size_t got = 0, supported_len = 0;
	uint64_t max_streams;
	struct scsi_conn conn;
	char name[64];
	int index, r;

	snprintf(name, sizeof(name), "%s", report_layer(p, disk)->name);
	r = scsi_connect(ctx, name, devdir, &conn);
	if (r < 0)
		return r;
	index = report_add_layer(p, LCLOUD_LAYER_SCSI, name, disk);
	if (index < 0) {
		scsi_disconnect(&conn);
		return index;
	}
	r = layer_add_string(report_layer(p, index), FACT_TRANSPORT, conn.source, "scsi");
	if (r >= 0 && (conn.sgio_error == -EACCES || conn.sgio_error == -EPERM))
		r = report_note(p, NOTE_NEEDS_ROOT, index,
				"%s: SG_IO needs read access to /dev/%s (root): INQUIRY and VPD pages come from "
				"the kernel's copies in sysfs; READ CAPACITY(16), the IO advice hints mode page "
				"and GET STREAM STATUS need root", name, name);
	buf = malloc(PAGE_MAX);
	if (!buf)
		r = -ENOMEM;
	if (r < 0)
		goto out;

	r = conn.ops->inquiry(conn.handle, false, 0, buf, 96, &got);
	r = r ? command_failed(p, index, "INQUIRY", r, false) : scsi_decode_inquiry(p, index, buf, got);
	if (r < 0)
		goto out;
	r = conn.ops->inquiry(conn.handle, true, 0x00, supported, sizeof(supported), &supported_len);
	if (r == 0)
		r = scsi_decode_vpd_supported(p, index, supported, supported_len);
	else {
		supported_len = 0;
		r = command_failed(p, index, "VPD page 0x00", r, false);
	}
	if (r < 0)
		goto out;
	for (size_t i = 0; i < ARRAY_SIZE(vpd); i++) {
		char what[64];

		/* Ask only for pages the disk lists: some disks misbehave on others. */
		if (!page_listed(supported, supported_len, vpd[i].page))
			continue;
		snprintf(what, sizeof(what), "VPD page 0x%02x (%s)", vpd[i].page, vpd[i].what);
		r = conn.ops->inquiry(conn.handle, true, vpd[i].page, buf, PAGE_MAX, &got);
		r = r ? command_failed(p, index, what, r, true) : vpd[i].decode(p, index, buf, got);
		if (r < 0)
			goto out;
	}
	r = conn.ops->read_capacity16(conn.handle, buf, 32, &got);
	r = r ? (r == -EACCES ? 0 : command_failed(p, index, "READ CAPACITY(16)", r, false))
	      : scsi_decode_read_capacity16(p, index, buf, got);
	if (r < 0)
		goto out;
	r = conn.ops->mode_sense10(conn.handle, 0x0a, 0x05, buf, PAGE_MAX, &got);
	r = r ? (r == -EACCES ? 0 : command_failed(p, index, "MODE SENSE (IO advice hints page)", r, true))
	      : scsi_decode_io_advice_hints(p, index, buf, got);
	if (r < 0)
		goto out;
	if (layer_get_u64(report_layer(p, index), FACT_MAX_STREAMS, &max_streams) > 0 && max_streams > 0) {
		r = conn.ops->get_stream_status(conn.handle, buf, PAGE_MAX, &got);
		r = r ? (r == -EACCES ? 0 : command_failed(p, index, "GET STREAM STATUS", r, true))
		      : scsi_decode_stream_status(p, index, buf, got);
		if (r < 0)
			goto out;
	}
	{
		/* READ CAPACITY's block length, else the kernel's */
		uint64_t lb = 0; /* unknown: no sizes are derived */

		if (layer_get_bytes(report_layer(p, index), FACT_LOGICAL_BLOCK_LENGTH, &lb) <= 0)
			(void)layer_get_bytes(report_layer(p, disk), FACT_LOGICAL_BLOCK_SIZE, &lb);

		r = scsi_derive_sizes(p, index, lb);
	}
	if (r >= 0)
		r = compare_kernel_view(p, index, disk);
	if (r >= 0)
		r = cloud_scsi_probe(p, index, disk);
out:
	free(buf);
	scsi_disconnect(&conn);
	return r;
}

int scsi_probe_layers(const struct lcloud_ctx *ctx, struct lcloud_probe *p)
{
	unsigned int n = p->n_layers;

	for (unsigned int i = 0; i < n; i++) {
		char devdir[SYSFS_PATH_MAX];
		int r;

		if (p->layers[i].kind != LCLOUD_LAYER_DISK)
			continue;
		if (sysfs_block_dir(ctx, p->layers[i].name, devdir, sizeof(devdir)) < 0 ||
		    !is_scsi_disk(ctx, devdir, p->layers[i].name))
			continue;
		r = probe_disk(ctx, p, (int)i, devdir);
		if (r < 0)
			return r;
	}
	return 0;
}
