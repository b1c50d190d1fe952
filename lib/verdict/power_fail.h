/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_POWER_FAIL_H
#define LCLOUD_POWER_FAIL_H

/*
 * The one power-fail model: from what a device and its provider say, which
 * plain writes a power cut leaves whole. The verdict (device_promise) asks
 * it about a probed disk, `lcloudctl replay --model-from` about the probe
 * JSON of a logged device, so the crash lab proves the model the verdict
 * applies, not a second one. Pure: no I/O, no probe; lcloudctl compiles
 * this file in as the library does.
 */
#include <stdbool.h>
#include <stdint.h>

#include "report.h" /* enum layer_promise_alignment: the cloud layer's typed promise */

/* What the model reads: each field as the probe reports the fact of that name; 0/NULL/false when absent. */
struct power_fail_facts {
	/* the NVMe namespace (nvme layer) */
	const char *nvme_name;
	bool has_power_fail;             /* atomic_write_power_fail_bytes was read */
	uint64_t power_fail_bytes;       /* atomic_write_power_fail_bytes */
	const char *power_fail_source;   /* its source: nvme:id-ns:nawupf, nvme:id-ctrl:awupf */
	uint64_t lba_size;               /* lba_size (0: not read) */
	uint64_t boundary_bytes;         /* atomic_boundary_power_fail_bytes */
	uint64_t boundary_offset_bytes;  /* atomic_boundary_offset_bytes */
	uint64_t multipath_paths;        /* multipath_paths (0 or 1: one path) */
	const char *multipath_unread;    /* why multipath_paths could not be read (maybe several paths); NULL: read */
	bool has_every_path;             /* atomic_write_power_fail_bytes_every_path was read */
	uint64_t every_path_bytes;
	const char *every_path_source;
	const char *every_path_unread;   /* why it could not be read, when it could not */
	int volatile_write_cache;        /* volatile_write_cache: 1, 0, -1 not read */
	/* SCSI: WRITE ATOMIC(16) only, never a plain WRITE */
	uint64_t scsi_write_atomic_bytes; /* max_atomic_transfer_bytes */
	/* a cloud provider's documented promise (cloud layer) */
	const char *cloud_name, *product;
	uint64_t promise_bytes;          /* promise_untorn_max_bytes */
	uint64_t promise_granularity_bytes;
	uint64_t promise_boundary_bytes;
	enum layer_promise_alignment promise_alignment;
	const char *promise_source;
	/* the kernel's view of the disk */
	uint64_t logical_block_size;
	int write_back;                  /* write_cache "write back": 1, 0, -1 not read */
};

struct power_fail_model {
	uint64_t bytes;          /* plain writes up to this size land whole or not at all; 0: nothing promised */
	uint64_t lba;            /* the promise's block (granularity); the device's logical block without one */
	bool natural;            /* ... when aligned to their own size (else: inside one aligned block) */
	uint64_t boundary, boundary_offset; /* ... and not across a boundary at offset + k * boundary */
	/*
	 * A command that breaks the promise (larger than BYTES, across a
	 * boundary) still leaves each aligned block of this size that it covers
	 * whole, whole: a provider that keeps each physical block whole (Google);
	 * 0: only each logical block (LBA).
	 */
	uint64_t whole_block;
	int volatile_cache;      /* completed writes need a flush to survive: 1, 0, -1 unknown */
	uint64_t write_atomic_bytes; /* SCSI WRITE ATOMIC(16) only: no plain write is covered by it */
	bool from_cloud;         /* the provider's promise, not the device's own */
	const char *evidence;    /* the source of BYTES */
	char what[512];          /* the promise, for a person */
};

/*
 * The model of F. INCLUDE_CLOUD: a provider's promise counts (it binds the
 * provider, not the device's Identify data: the passthrough path, which
 * talks to the device, leaves it out).
 */
void power_fail_model(const struct power_fail_facts *f, bool include_cloud, struct power_fail_model *m);

/*
 * The fact promise_alignment as a probe's JSON writes it ("size",
 * "boundary") back into its type, for replay --model-from; -EINVAL for
 * any other word.
 */
int power_fail_alignment_from_name(const char *name, enum layer_promise_alignment *ret);

#endif
