/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The verdict: for each I/O path, the largest power-of-two write that is
 * untorn on power loss, what alignment and boundary it needs, and why, with
 * the evidence each reason rests on. It reads only the finished layers.
 *
 * One file per path (verdict_rwf_atomic.c, verdict_passthrough.c,
 * verdict_plain_direct.c); what they share is in verdict_facts.c. A path
 * whose evidence could not be read says "unknown" above what is proved,
 * never "no".
 *
 *  rwf_atomic    the kernel's guarantee: statx of the file, or the device's
 *                atomic write queue limits; untorn or an error.
 *  passthrough   NVMe commands liblcloud sends itself, within the namespace's
 *                power-fail atomic size and boundaries, which it enforces.
 *  plain_direct  aligned O_DIRECT writes: untorn only where the device or the
 *                provider promises it, the stack does not shift the write off
 *                the promise's alignment, the block layer does not split it
 *                and the file system keeps it in one extent. The kernel itself
 *                promises nothing here.
 *  buffered      page-cache writes: never guaranteed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "report.h"
#include "util.h"
#include "verdict_internal.h"

#define REFORMAT_HINT "An LBA format without metadata, or with separate metadata (nvme format --lbaf=N --mset=0, " \
	"which erases the namespace), makes it usable"

static int verdict_buffered(struct lcloud_verdict *v)
{
	return reason(v, "kernel", "buffered writes go through the page cache: writeback may split a page into "
		      "several device writes, and Linux offers RWF_ATOMIC only with O_DIRECT, so no buffered "
		      "write is guaranteed untorn");
}

void verdict_free(struct lcloud_verdict *v)
{
	if (!v)
		return;
	for (int i = 0; i < VERDICT_PATHS; i++) {
		for (unsigned int k = 0; k < v[i].n_reasons; k++) {
			free(v[i].reasons[k].text);
			free(v[i].reasons[k].evidence);
		}
		free(v[i].reasons);
	}
	free(v);
}

/*
 * The kernel checks RWF_ATOMIC writes against boundaries that start at 0; an
 * NVMe namespace may start them at NABO. Naturally aligned writes are safe
 * only up to the largest power of two dividing that offset.
 */
static int cap_for_shifted_boundary(const struct lcloud_probe *p, struct lcloud_verdict *v)
{
	for (unsigned int i = 0; i < p->n_layers && v->max_untorn; i++) {
		const struct lcloud_layer *l = &p->layers[i];
		uint64_t off = 0, b = 0;

		/* no offset or no boundary read: nothing shifted to cap (device_promise() holds the boundary) */
		(void)layer_get_bytes(l, FACT_ATOMIC_BOUNDARY_OFFSET_BYTES, &off);
		(void)layer_get_bytes(l, FACT_ATOMIC_BOUNDARY_POWER_FAIL_BYTES, &b);

		if (l->kind != LCLOUD_LAYER_NVME || !off || !b || pow2_dividing(off) >= v->max_untorn)
			continue;
		v->max_untorn = pow2_dividing(off);
		return reason(v, "nvme:id-ns:nabo", "%s starts its %" PRIu64 "-byte atomic boundaries at byte %" PRIu64
			      " (NABO), while the kernel checks boundaries from 0: only writes up to %" PRIu64 " bytes "
			      "stay inside one", l->name, b, off, v->max_untorn);
	}
	return 0;
}

/*
 * A namespace with its metadata interleaved in every block, which Linux left
 * at capacity 0: no path writes it. Each path's reason starts with what
 * stops that path and goes on to why the others fail too.
 */
static int verdict_extended_lba(const struct lcloud_layer *nvme, struct lcloud_verdict *v)
{
	uint64_t metadata = 0, lba = 0;
	char format[256];
	int r = 0;

	/* both were read: extended_lba_namespace() needs the one, and Identify gives them together */
	(void)layer_get_bytes(nvme, FACT_LBA_METADATA_SIZE, &metadata);
	(void)layer_get_bytes(nvme, FACT_LBA_SIZE, &lba);
	snprintf(format, sizeof(format), "its LBA format interleaves %" PRIu64 " metadata bytes with every %" PRIu64
		 "-byte block (extended LBA format, FLBAS bit 4)", metadata, lba);
	for (int i = 0; i < VERDICT_PATHS && r >= 0; i++) {
		if (v[i].path == LCLOUD_PATH_PASSTHROUGH)
			r = reason(&v[i], "nvme:id-ns:flbas", "a passthrough write to %s would need the metadata inside "
				   "every buffer, which liblcloud does not build: %s, and Linux refuses block I/O on it "
				   "(capacity 0) for the other paths: no path writes it. " REFORMAT_HINT, nvme->name,
				   format);
		else
			r = reason(&v[i], "nvme:id-ns:flbas", "Linux refuses block I/O on %s (capacity 0), so no %s write "
				   "reaches it: %s, which the block layer does not carry here; passthrough would need the "
				   "metadata inside every buffer, which liblcloud does not build: no path writes it. "
				   REFORMAT_HINT, nvme->name, lcloud_io_path_to_string(v[i].path), format);
	}
	return r;
}

int verdict_compute(struct lcloud_probe *p)
{
	const struct lcloud_layer *extended = extended_lba_namespace(p);
	struct lcloud_verdict *v = calloc(VERDICT_PATHS, sizeof(*v));
	int r;

	if (!v)
		return -ENOMEM;
	for (int i = 0; i < VERDICT_PATHS; i++) {
		v[i].path = (enum lcloud_io_path)(i + 1);
		v[i].no_above = UINT64_MAX;
	}
	if (extended) {
		r = verdict_extended_lba(extended, v);
	} else {
		r = verdict_rwf_atomic(p, &v[0]);
		if (r >= 0)
			r = cap_for_shifted_boundary(p, &v[0]);
		v[0].hw_max = min_u64(v[0].hw_max, v[0].max_untorn);
		if (r >= 0)
			r = verdict_passthrough(p, &v[1]);
		if (r >= 0)
			r = verdict_plain_direct(p, &v[2]);
		if (r >= 0)
			r = verdict_buffered(&v[3]);
	}
	if (r < 0) {
		verdict_free(v);
		return r;
	}
	verdict_free(p->verdicts);
	p->verdicts = v;
	return 0;
}
