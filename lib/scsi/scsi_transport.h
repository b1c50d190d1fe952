/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The SCSI commands the probe needs, behind a small table: SG_IO through
 * libsgutils2, the raw pages the kernel exports in sysfs (no privileges
 * needed; INQUIRY and VPD only), and a replay of captured data.
 */
#ifndef LCLOUD_SCSI_TRANSPORT_H
#define LCLOUD_SCSI_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

/* Every op returns 0, a positive SG_LIB_CAT_* sense category, or -errno. */
struct scsi_transport {
	/* INQUIRY; EVPD with PAGE for a VPD page. *ret_len = bytes returned. */
	int (*inquiry)(void *handle, bool evpd, uint8_t page, uint8_t *buf, size_t len, size_t *ret_len);
	int (*read_capacity16)(void *handle, uint8_t *buf, size_t len, size_t *ret_len);
	int (*mode_sense10)(void *handle, uint8_t page, uint8_t subpage, uint8_t *buf, size_t len, size_t *ret_len);
	int (*get_stream_status)(void *handle, uint8_t *buf, size_t len, size_t *ret_len);
	void (*close)(void *handle);
};

struct scsi_conn {
	const struct scsi_transport *ops;
	void *handle;
	char source[16]; /* "sg_io", "sysfs" or "capture" */
	int sgio_error;  /* why SG_IO was not used (0 when it is) */
};

/*
 * Connects to disk NAME ("sda") whose sysfs folder is DEVDIR: SG_IO on
 * /dev/NAME; without the rights for it, the kernel's sysfs pages; under a
 * sysroot, SYSROOT/scsi-data/NAME when captured, else the tree's sysfs pages.
 */
int scsi_connect(const struct lcloud_ctx *ctx, const char *name, const char *devdir, struct scsi_conn *ret);
void scsi_disconnect(struct scsi_conn *conn);

const char *scsi_category_name(int category);

#endif
