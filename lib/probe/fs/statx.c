/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The file system layer as statx(2) reports it: atomic write units and direct I/O alignment. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat.h"
#include "statx.h"

int lcloud_sys_statx(int dirfd, const char *path, int flags, unsigned int mask,
		     struct lcloud_statx *ret)
{
	/* Direct syscall: glibc's struct statx predates the atomic fields. */
	memset(ret, 0, sizeof(*ret));
	if (syscall(SYS_statx, dirfd, path, flags, mask, ret) < 0)
		return -errno;
	return 0;
}

static int add_u32(struct lcloud_layer *l, const struct lcloud_statx *stx, unsigned int mask_bit,
		   enum fact_id id, uint32_t value, const char *why_missing)
{
	if (stx->stx_mask & mask_bit)
		return layer_add_u64(l, id, value, "statx");
	return layer_add_missing(l, id, LCLOUD_FACT_NOT_PROVIDED, "statx", why_missing);
}

int statx_fill_layer(struct lcloud_layer *l, const struct lcloud_statx *stx)
{
	static const char no_atomic[] =
		"not reported: statx left STATX_WRITE_ATOMIC unset (no atomic write support for this file "
		"or device, or a kernel before 6.11)";
	static const char no_dio[] =
		"not reported by this kernel or file system (statx STATX_DIOALIGN not filled)";
	static const char no_dio_read[] =
		"not reported by this kernel or file system (statx STATX_DIO_READ_ALIGN not filled)";
	int r = 0;

	r |= add_u32(l, stx, STATX_WRITE_ATOMIC, FACT_STX_ATOMIC_WRITE_UNIT_MIN,
		     stx->stx_atomic_write_unit_min, no_atomic);
	r |= add_u32(l, stx, STATX_WRITE_ATOMIC, FACT_STX_ATOMIC_WRITE_UNIT_MAX,
		     stx->stx_atomic_write_unit_max, no_atomic);
	r |= add_u32(l, stx, STATX_WRITE_ATOMIC, FACT_STX_ATOMIC_WRITE_SEGMENTS_MAX,
		     stx->stx_atomic_write_segments_max, no_atomic);
	/*
	 * unit_max_opt arrived in 6.16 without a mask bit of its own; before it
	 * the field is zero, which means "no better size than unit_max" anyway.
	 */
	r |= add_u32(l, stx, STATX_WRITE_ATOMIC, FACT_STX_ATOMIC_WRITE_UNIT_MAX_OPT,
		     stx->stx_atomic_write_unit_max_opt, no_atomic);
	if (stx->stx_attributes_mask & STATX_ATTR_WRITE_ATOMIC)
		r |= layer_add_bool(l, FACT_STX_ATTR_WRITE_ATOMIC,
				    !!(stx->stx_attributes & STATX_ATTR_WRITE_ATOMIC), "statx");
	else
		r |= layer_add_missing(l, FACT_STX_ATTR_WRITE_ATOMIC,
				       LCLOUD_FACT_NOT_PROVIDED, "statx",
				       "this kernel or file system does not report STATX_ATTR_WRITE_ATOMIC");
	r |= add_u32(l, stx, STATX_DIOALIGN, FACT_STX_DIO_MEM_ALIGN, stx->stx_dio_mem_align, no_dio);
	r |= add_u32(l, stx, STATX_DIOALIGN, FACT_STX_DIO_OFFSET_ALIGN, stx->stx_dio_offset_align, no_dio);
	r |= add_u32(l, stx, STATX_DIO_READ_ALIGN, FACT_STX_DIO_READ_OFFSET_ALIGN,
		     stx->stx_dio_read_offset_align, no_dio_read);
	return r ? -ENOMEM : 0;
}
