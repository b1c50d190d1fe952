/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the verdict's paths share: reading facts, walking layers, giving reasons. */
#ifndef LCLOUD_VERDICT_INTERNAL_H
#define LCLOUD_VERDICT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "layer_kind.h"
#include "report.h"
#include "stack_walk.h"
#include "verdict.h"

uint64_t pow2_floor(uint64_t v);
/* Largest power of two dividing V (V == 0: no limit). */
uint64_t pow2_dividing(uint64_t v);
uint64_t min_u64(uint64_t a, uint64_t b);

/* Adds a reason with the evidence it rests on. Returns 0 or -ENOMEM. */
__attribute__((format(printf, 3, 4)))
int reason(struct lcloud_verdict *v, const char *evidence, const char *fmt, ...);
/*
 * The evidence a larger size would rest on could not be read: sizes above
 * what is proved are unknown, not "no". The reason says what to do instead.
 */
__attribute__((format(printf, 3, 4)))
int unknown(struct lcloud_verdict *v, const char *evidence, const char *fmt, ...);

/* A PRESENT fact, or NULL. */
const struct lcloud_fact *fact(const struct lcloud_layer *l, enum fact_id id);
/* A fact that exists but could not be read (needs root, unreadable), or NULL. */
const struct lcloud_fact *fact_unread(const struct lcloud_layer *l, enum fact_id id);
int index_of(const struct lcloud_probe *p, const struct lcloud_layer *l);
/* The first block layer: the device the target is, or the file system sits on. */
int top_block(const struct lcloud_probe *p);
/*
 * The NVMe layer of a target whose namespace interleaves metadata with each
 * block (extended LBA, FLBAS bit 4) and whose block device Linux left at
 * capacity 0 for it; NULL for any other target.
 */
const struct lcloud_layer *extended_lba_namespace(const struct lcloud_probe *p);
/* Does the probe carry a note with CODE? */
bool has_note(const struct lcloud_probe *p, enum note_code code);
/*
 * Does statx say the file system layer FS's file takes no direct I/O
 * (STATX_DIOALIGN filled, offset alignment 0)? Its O_DIRECT writes then go
 * through the page cache.
 */
bool file_without_direct_io(const struct lcloud_layer *fs);
/*
 * The file system type of layer FS: its fstype fact, "" where its mount was
 * not found. Rules decide on this, never on the layer's name, which is for
 * a person.
 */
const char *fs_type(const struct lcloud_layer *fs);
/* Why, in the words of a reason: which file systems do that. */
#define NO_DIRECT_IO_WHY "statx says this file takes no direct I/O (stx_dio_offset_align 0: ext4 with " \
	"data=journal or a data-journalled file, inline data, or encryption without inline crypto)"


/*
 * Does layer L's kernel_release say the kernel runs the code those rules were
 * checked against (FOLLOWED_KERNEL_*, or later)? 1 yes, 0 an older one, -ENODATA
 * when the release was not read or not understood; *RET_RELEASE gets it, or
 * why it is missing.
 */
int followed_kernel(const struct lcloud_layer *l, const char **ret_release);

struct promise {
	uint64_t bytes; /* largest untorn write the device/provider promises */
	uint64_t lba;
	bool natural;   /* the start must be aligned to the write's size */
	uint64_t boundary, boundary_offset;
	uint64_t whole_block; /* each aligned block of this size a command covers stays whole (power_fail.h) */
	bool no_whole_lba;    /* a command the device tears keeps no size of write whole, not even LBA's */
	const char *evidence;
	char what[512];
};

/* What the device (NVMe identify) or the provider (cloud layer) promises for disk layer DISK. */
void device_promise(const struct lcloud_probe *p, int disk, bool include_cloud, struct promise *pr);
/*
 * The devices at the bottom of the stack under layer INDEX: disks, loop
 * devices, anything without slaves. Returns how many there are, which may
 * be more than MAX (only MAX are stored).
 */
int leaf_disks(const struct lcloud_probe *p, int index, int *out, int max);

int verdict_rwf_atomic(const struct lcloud_probe *p, struct lcloud_verdict *v);
int verdict_passthrough(const struct lcloud_probe *p, struct lcloud_verdict *v);
int verdict_plain_direct(const struct lcloud_probe *p, struct lcloud_verdict *v);

/* verdict_api.c: lcloud_probe_check@@LCLOUD_0.2, for lcloud_plan_page_writes (plan_page_writes.c) */
int lcloud_probe_check_v2(const struct lcloud_probe *p, enum lcloud_io_path path, uint64_t size,
			  enum lcloud_io_path *ret_path, char *why, size_t why_size);

#endif
