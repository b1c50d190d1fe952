/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_LAB_CRC32C_H
#define LCLOUD_LAB_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC32C (Castagnoli, as iSCSI, ext4 and NVMe use it); crc32c(0, "123456789", 9) == 0xe3069283. */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

#endif
