/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel interfaces newer than the system headers (Debian 12 ships Linux 6.1
 * uapi). Each value is the kernel's own; features are detected at run time
 * from the kernel's answers, never from its version number.
 */
#ifndef LCLOUD_COMPAT_H
#define LCLOUD_COMPAT_H

#include <stdint.h>

/* statx masks and attributes */
#ifndef STATX_DIOALIGN
#define STATX_DIOALIGN 0x00002000U /* 6.1 */
#endif
#ifndef STATX_WRITE_ATOMIC
#define STATX_WRITE_ATOMIC 0x00010000U /* 6.11 */
#endif
#ifndef STATX_DIO_READ_ALIGN
#define STATX_DIO_READ_ALIGN 0x00020000U /* 6.14 */
#endif
#ifndef STATX_ATTR_WRITE_ATOMIC
#define STATX_ATTR_WRITE_ATOMIC 0x00400000 /* 6.11 */
#endif

/* pwritev2() flag: untorn write or error (6.11) */
#ifndef RWF_ATOMIC
#define RWF_ATOMIC 0x00000040
#endif

/*
 * struct statx as of Linux 6.16 (unit_max_opt). Same 256-byte size as the
 * 6.1 header's; the kernel fills only what it knows and says so in stx_mask.
 */
struct lcloud_statx_timestamp {
	int64_t tv_sec;
	uint32_t tv_nsec;
	int32_t reserved;
};

struct lcloud_statx {
	uint32_t stx_mask;
	uint32_t stx_blksize;
	uint64_t stx_attributes;
	uint32_t stx_nlink;
	uint32_t stx_uid;
	uint32_t stx_gid;
	uint16_t stx_mode;
	uint16_t spare0;
	uint64_t stx_ino;
	uint64_t stx_size;
	uint64_t stx_blocks;
	uint64_t stx_attributes_mask;
	struct lcloud_statx_timestamp stx_atime, stx_btime, stx_ctime, stx_mtime;
	uint32_t stx_rdev_major;
	uint32_t stx_rdev_minor;
	uint32_t stx_dev_major;
	uint32_t stx_dev_minor;
	uint64_t stx_mnt_id;
	uint32_t stx_dio_mem_align;      /* 0x98 */
	uint32_t stx_dio_offset_align;   /* 0x9c */
	uint64_t stx_subvol;             /* 0xa0 */
	uint32_t stx_atomic_write_unit_min;     /* 0xa8 */
	uint32_t stx_atomic_write_unit_max;     /* 0xac */
	uint32_t stx_atomic_write_segments_max; /* 0xb0 */
	uint32_t stx_dio_read_offset_align;     /* 0xb4 */
	uint32_t stx_atomic_write_unit_max_opt; /* 0xb8 */
	uint32_t spare2;
	uint64_t spare3[8];
};

_Static_assert(sizeof(struct lcloud_statx) == 256, "struct statx is 256 bytes");
_Static_assert(__builtin_offsetof(struct lcloud_statx, stx_atomic_write_unit_min) == 0xa8,
	       "statx atomic fields at 0xa8");
_Static_assert(__builtin_offsetof(struct lcloud_statx, stx_atomic_write_unit_max_opt) == 0xb8,
	       "statx unit_max_opt at 0xb8");

int lcloud_sys_statx(int dirfd, const char *path, int flags, unsigned int mask,
		     struct lcloud_statx *ret);

#endif
