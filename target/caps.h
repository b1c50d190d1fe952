/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A cloud volume's caps (see caps.c): operations and bytes per second, as
 * providers publish them, metered by two leaky buckets.
 */
#ifndef LCLOUD_TARGET_CAPS_H
#define LCLOUD_TARGET_CAPS_H

#include <stdint.h>

#define CAPS_WINDOW_US 100000u /* a bucket admits while it holds at most 0.1 s of its rate, as QEMU's throttle does */

struct caps {
	double iops, bytes_per_s;   /* 0: no cap */
	uint32_t iops_size;         /* an I/O of up to this many bytes counts as one operation; 0: every I/O is one */
	double ops_level, bytes_level;
	uint64_t at_us;             /* when the levels were last drained */
};

void caps_init(struct caps *c, uint64_t iops, uint64_t bytes_per_s, uint32_t iops_size);
/* The operations an I/O of BYTES counts as: one per IOPS_SIZE bytes or part of it, at least one. */
uint64_t caps_ops(const struct caps *c, uint64_t bytes);
/* The first moment at or after NOW_US at which the caps admit another I/O. */
uint64_t caps_admit_at(struct caps *c, uint64_t now_us);
/* An I/O of OPS operations and BYTES bytes admitted at NOW_US: the buckets fill by it. */
void caps_charge(struct caps *c, uint64_t now_us, uint64_t ops, uint64_t bytes);

#endif
