/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_SCSI_PAGES_H
#define LCLOUD_SCSI_PAGES_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

/*
 * Page decoders: each checks the page's own header against the bytes it
 * holds, adds the fields it can read to layer INDEX, and notes a page whose
 * length field lies, that is short, or that is not the page asked for.
 * Return 0 (also for a bad page: the note says so) or -ENOMEM.
 */
int scsi_decode_inquiry(struct lcloud_probe *p, int index, const uint8_t *b, size_t len);
int scsi_decode_vpd_supported(struct lcloud_probe *p, int index, const uint8_t *b, size_t len);
int scsi_decode_vpd_devid(struct lcloud_probe *p, int index, const uint8_t *b, size_t len);
int scsi_decode_block_limits(struct lcloud_probe *p, int index, const uint8_t *b, size_t len);
int scsi_decode_block_characteristics(struct lcloud_probe *p, int index, const uint8_t *b, size_t len);
int scsi_decode_block_limits_ext(struct lcloud_probe *p, int index, const uint8_t *b, size_t len);
int scsi_decode_read_capacity16(struct lcloud_probe *p, int index, const uint8_t *b, size_t len);
int scsi_decode_io_advice_hints(struct lcloud_probe *p, int index, const uint8_t *b, size_t len);
int scsi_decode_stream_status(struct lcloud_probe *p, int index, const uint8_t *b, size_t len);

/* Derived sizes in bytes, from the raw fields already in the layer and the logical block size. */
int scsi_derive_sizes(struct lcloud_probe *p, int index, uint64_t logical_block);

#endif
