/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A cloud volume's caps as two leaky buckets, one for operations and one for
 * bytes, drained at the published rates (AWS gp3: 3,000 IOPS and 125 MiB/s
 * with an I/O of up to 256 KiB counted as one operation; Google Hyperdisk
 * Balanced: 3,000 IOPS and 140 MiB/s). An I/O is admitted while each bucket
 * holds at most 0.1 s of its rate and then adds its cost, however large, so
 * a steady load runs at the cap and a burst after an idle spell is at most
 * 0.1 s of it: QEMU's throttle (util/throttle.c) does the same without an
 * explicit burst, which keeps the figures of lcloud-target's models and of
 * QEMU's (tests/vm/lcvm model=) comparable. Operations are counted whole, as
 * AWS counts them ("a larger I/O counts as several"), where QEMU counts
 * fractions. Pure arithmetic on the times it is given: no clock, no lock.
 */
#include "caps.h"

void caps_init(struct caps *c, uint64_t iops, uint64_t bytes_per_s, uint32_t iops_size)
{
	*c = (struct caps){.iops = (double)iops, .bytes_per_s = (double)bytes_per_s, .iops_size = iops_size};
}

uint64_t caps_ops(const struct caps *c, uint64_t bytes)
{
	if (!c->iops_size || bytes <= c->iops_size)
		return 1;
	return (bytes + c->iops_size - 1) / c->iops_size;
}

static void drain(struct caps *c, uint64_t now_us)
{
	double seconds;

	if (now_us <= c->at_us)
		return;
	seconds = (double)(now_us - c->at_us) / 1e6;
	c->ops_level -= c->iops * seconds;
	c->bytes_level -= c->bytes_per_s * seconds;
	if (c->ops_level < 0)
		c->ops_level = 0;
	if (c->bytes_level < 0)
		c->bytes_level = 0;
	c->at_us = now_us;
}

/* How long until LEVEL has drained to the bucket's admitting size, at RATE. */
static uint64_t wait_us(double level, double rate)
{
	double over;

	if (rate <= 0)
		return 0;
	over = level - rate * CAPS_WINDOW_US / 1e6;
	return over > 0 ? (uint64_t)(over / rate * 1e6 + 0.999) : 0;
}

uint64_t caps_admit_at(struct caps *c, uint64_t now_us)
{
	uint64_t ops_wait, bytes_wait;

	drain(c, now_us);
	ops_wait = wait_us(c->ops_level, c->iops);
	bytes_wait = wait_us(c->bytes_level, c->bytes_per_s);
	return now_us + (ops_wait > bytes_wait ? ops_wait : bytes_wait);
}

void caps_charge(struct caps *c, uint64_t now_us, uint64_t ops, uint64_t bytes)
{
	drain(c, now_us);
	if (c->iops > 0)
		c->ops_level += (double)ops;
	if (c->bytes_per_s > 0)
		c->bytes_level += (double)bytes;
}
