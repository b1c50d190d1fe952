/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Linux cloud extension: a signed, versioned block in the vendor
 * specific area of Identify Controller (bytes 3072-4095) in which a device
 * states which writes it keeps untorn and which hints it uses. The layout is
 * specified in man/lcloud-extension.7; lcloud-target fills it.
 */
#ifndef LCLOUD_NVME_LCLOUD_EXT_H
#define LCLOUD_NVME_LCLOUD_EXT_H

#include <stddef.h>
#include <stdint.h>

#define LCLOUD_EXT_OFFSET 3072          /* Identify Controller's vendor specific area */
#define LCLOUD_EXT_SIGNATURE "LNXCLOUD" /* 8 bytes, no NUL */
#define LCLOUD_EXT_VERSION 1
#define LCLOUD_EXT_V1_LENGTH 64         /* the bytes version 1 defines */

/* offsets from LCLOUD_EXT_OFFSET */
#define LCLOUD_EXT_VERSION_AT 8          /* u16 */
#define LCLOUD_EXT_LENGTH_AT 10          /* u16: the bytes defined by the device's version */
#define LCLOUD_EXT_FLAGS_AT 12           /* u32 */
#define LCLOUD_EXT_UNTORN_AT 16          /* u32: bytes */
#define LCLOUD_EXT_BOUNDARY_AT 20        /* u32: bytes, 0 none */
#define LCLOUD_EXT_BOUNDARY_OFFSET_AT 24 /* u32: bytes */
#define LCLOUD_EXT_HANDLES_AT 28         /* u16: placement handles described, at most 16 */
#define LCLOUD_EXT_HANDLE_USE_AT 32      /* u8[16]: what each handle is for */
#define LCLOUD_EXT_MAX_HANDLES 16

enum lcloud_ext_flags {
	LCLOUD_EXT_UNTORN = 1u << 0,            /* the untorn fields hold */
	LCLOUD_EXT_UNTORN_WITH_CACHE = 1u << 1, /* and hold with the volatile write cache on, unflushed */
	LCLOUD_EXT_READ_AHEAD_HINT = 1u << 2,   /* the device acts on a read-ahead read's hints (LR, DSM prefetch) */
	LCLOUD_EXT_PLACEMENT = 1u << 3,         /* the placement handle table holds */
};

enum lcloud_ext_handle_use {
	LCLOUD_EXT_USE_UNSPECIFIED = 0,
	LCLOUD_EXT_USE_DATA = 1,
	LCLOUD_EXT_USE_METADATA = 2,
	LCLOUD_EXT_USE_JOURNAL = 3,
	LCLOUD_EXT_USE_BACKGROUND = 4,
};

struct lcloud_layer;

/* A handle's use by the name the lcloud_ext_placement fact gives it ("journal", LEN bytes); -1 unknown. */
int nvme_lcloud_ext_use_from_name(const char *name, size_t len);

/*
 * Adds the extension's facts to L when CTRL (LEN bytes of Identify
 * Controller) carries it; nothing when it does not, or when its length says
 * less than version 1 defines. 0 or -errno.
 */
int nvme_lcloud_ext_fill_layer(struct lcloud_layer *l, const uint8_t *ctrl, size_t len);

#endif
