/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The verdict's public face: getters, the one-size check, and the storage engine's plan. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "compat.h"
#include "layer_kind.h"
#include "report.h"
#include "util.h"
#include "verdict.h"
#include "verdict_internal.h"


static const char *const path_names[] = { "best", "rwf_atomic", "passthrough", "plain_direct", "buffered" };

LCLOUD_EXPORT const char *lcloud_io_path_to_string(enum lcloud_io_path path)
{
	return (unsigned int)path < ARRAY_SIZE(path_names) ? path_names[path] : "unknown";
}

LCLOUD_EXPORT int lcloud_io_path_from_string(const char *name, enum lcloud_io_path *ret_path)
{
	if (!name || !ret_path)
		return -EINVAL;
	for (unsigned int i = 0; i < ARRAY_SIZE(path_names); i++)
		if (streq(name, path_names[i])) {
			*ret_path = (enum lcloud_io_path)i;
			return 0;
		}
	return -EINVAL;
}

LCLOUD_EXPORT const struct lcloud_verdict *lcloud_probe_get_verdict(const struct lcloud_probe *p,
								    enum lcloud_io_path path)
{
	if (!p || !p->verdicts || path < LCLOUD_PATH_RWF_ATOMIC || path > LCLOUD_PATH_BUFFERED)
		return NULL;
	return &p->verdicts[path - 1];
}

LCLOUD_EXPORT enum lcloud_io_path lcloud_verdict_get_path(const struct lcloud_verdict *v)
{
	return v ? v->path : LCLOUD_PATH_BEST;
}

LCLOUD_EXPORT uint64_t lcloud_verdict_get_max_untorn_bytes(const struct lcloud_verdict *v)
{
	return v ? v->max_untorn : 0;
}

LCLOUD_EXPORT uint64_t lcloud_verdict_get_min_untorn_bytes(const struct lcloud_verdict *v)
{
	return v ? v->min_untorn : 0;
}

LCLOUD_EXPORT uint64_t lcloud_verdict_get_alignment(const struct lcloud_verdict *v)
{
	return v ? v->alignment : 0;
}

LCLOUD_EXPORT uint64_t lcloud_verdict_get_boundary(const struct lcloud_verdict *v)
{
	return v ? v->boundary : 0;
}

LCLOUD_EXPORT uint64_t lcloud_verdict_get_boundary_offset(const struct lcloud_verdict *v)
{
	return v ? v->boundary_offset : 0;
}

LCLOUD_EXPORT unsigned int lcloud_verdict_get_reason_count(const struct lcloud_verdict *v)
{
	return v ? v->n_reasons : 0;
}

LCLOUD_EXPORT const char *lcloud_verdict_get_reason(const struct lcloud_verdict *v, unsigned int index)
{
	return v && index < v->n_reasons ? v->reasons[index].text : NULL;
}

LCLOUD_EXPORT const char *lcloud_verdict_get_reason_evidence(const struct lcloud_verdict *v, unsigned int index)
{
	return v && index < v->n_reasons ? v->reasons[index].evidence : NULL;
}

/* Is SIZE in the verdict's merge gap: larger than a block, smaller than a write the block layer never merges? */
static bool in_merge_gap(const struct lcloud_verdict *v, uint64_t size)
{
	return v->merge_gap_below && size > v->merge_gap_above && size < v->merge_gap_below;
}

LCLOUD_EXPORT int lcloud_verdict_get_merge_gap(const struct lcloud_verdict *v, uint64_t *ret_above,
					       uint64_t *ret_below)
{
	if (!v)
		return -EINVAL;
	if (!v->merge_gap_below)
		return 0;
	if (ret_above)
		*ret_above = v->merge_gap_above;
	if (ret_below)
		*ret_below = v->merge_gap_below;
	return 1;
}

LCLOUD_EXPORT int lcloud_verdict_allows(const struct lcloud_verdict *v, uint64_t offset, uint64_t size,
					char *why, size_t why_size)
{
	char dummy[8];

	if (!v)
		return -EINVAL;
	if (!why || !why_size) {
		why = dummy;
		why_size = sizeof(dummy);
	}
	if (!size) {
		snprintf(why, why_size, "an empty write");
		return 0;
	}
	if (size > v->max_untorn) {
		snprintf(why, why_size, "%" PRIu64 " bytes is more than the largest untorn write on %s, %" PRIu64 " bytes",
			 size, lcloud_io_path_to_string(v->path), v->max_untorn);
		return 0;
	}
	if (size < v->min_untorn) {
		snprintf(why, why_size, "%" PRIu64 " bytes is less than the smallest atomic write on %s, %" PRIu64 " bytes",
			 size, lcloud_io_path_to_string(v->path), v->min_untorn);
		return 0;
	}
	if (in_merge_gap(v, size)) {
		snprintf(why, why_size, "%" PRIu64 " bytes is more than %" PRIu64 " and less than %" PRIu64 " bytes: the "
			 "block layer may merge such a write with a neighbour into a command that is not kept whole",
			 size, v->merge_gap_above, v->merge_gap_below);
		return 0;
	}
	if (!v->alignment && (!is_power_of_2(size) || offset % size)) {
		snprintf(why, why_size, "a %" PRIu64 "-byte write at offset %" PRIu64 " is not naturally aligned: the "
			 "size must be a power of two and the offset a multiple of it", size, offset);
		return 0;
	}
	if (v->alignment && (offset % v->alignment || size % v->alignment)) {
		snprintf(why, why_size, "offset %" PRIu64 " and size %" PRIu64 " must be multiples of %" PRIu64,
			 offset, size, v->alignment);
		return 0;
	}
	if (v->boundary) {
		uint64_t shift = v->boundary - v->boundary_offset % v->boundary;
		uint64_t first = (offset + shift) / v->boundary, last = (offset + size - 1 + shift) / v->boundary;

		if (first != last) {
			snprintf(why, why_size, "the write [%" PRIu64 ", %" PRIu64 ") crosses the device's atomic boundary "
				 "at %" PRIu64 " (boundaries every %" PRIu64 " bytes from %" PRIu64 ")", offset, offset + size,
				 last * v->boundary - shift, v->boundary, v->boundary_offset);
			return 0;
		}
	}
	snprintf(why, why_size, "untorn on %s", lcloud_io_path_to_string(v->path));
	return 1;
}

/* An aligned SIZE-byte write: naturally aligned, so it stays inside a boundary only if SIZE divides its grid. */
static bool untorn(const struct lcloud_verdict *v, uint64_t size)
{
	if (v->max_untorn < size || size < v->min_untorn || in_merge_gap(v, size))
		return false;
	return !v->boundary || (v->boundary % size == 0 && v->boundary_offset % size == 0);
}

/* Untorn, not, or resting on evidence that could not be read (only sizes above what is proved). */
static enum lcloud_answer answer(const struct lcloud_verdict *v, uint64_t size)
{
	if (untorn(v, size))
		return LCLOUD_ANSWER_UNTORN;
	/* what could not be read leaves a size open only where nothing that was read closes it */
	return v->unknown && size > v->max_untorn && size <= v->no_above ? LCLOUD_ANSWER_UNKNOWN : LCLOUD_ANSWER_NO;
}

/* The reason that set the smallest size: the file's direct I/O alignment where it did, else the first. */
static const struct verdict_reason *floor_reason(const struct lcloud_verdict *v)
{
	for (unsigned int i = 0; i < v->n_reasons; i++)
		if (streq(v->reasons[i].evidence, "statx:stx_dio_offset_align"))
			return &v->reasons[i];
	return v->n_reasons ? &v->reasons[0] : NULL;
}

/*
 * The reason that limited the size: the last one, past the remarks that
 * limit nothing (the closing word on the kernel, the software path, the
 * missing hardware atomics, a confirmation).
 */
static const struct verdict_reason *limiting_reason(const struct lcloud_verdict *v)
{
	for (unsigned int i = v->n_reasons; i > 0; i--) {
		const char *e = v->reasons[i - 1].evidence;

		if (i == 1 || (!streq(e, "kernel") && !streq(e, "statx:stx_atomic_write_unit_max_opt") &&
			       !streq(e, "statx:stx_dio_offset_align") &&
			       !streq(e, "sysfs:queue/atomic_write_unit_max_bytes") &&
			       !has_prefix(v->reasons[i - 1].text, "confirmed:") &&
			       !strstr(v->reasons[i - 1].text, "this rests on")))
			return &v->reasons[i - 1];
	}
	return NULL;
}

static void describe(const struct lcloud_verdict *v, uint64_t size, enum lcloud_answer a, char *why,
		     size_t why_size)
{
	const char *name = lcloud_io_path_to_string(v->path);
	const char *first = v->n_reasons ? v->reasons[0].text : "no reason recorded";
	const char *evidence = v->n_reasons ? v->reasons[0].evidence : "-";

	if (!why || !why_size)
		return;
	if (a == LCLOUD_ANSWER_UNTORN) {
		snprintf(why, why_size, "untorn on %s: %" PRIu64 "-byte writes at offsets that are multiples of their "
			 "size%s; %s [%s]", name, size,
			 v->path != LCLOUD_PATH_RWF_ATOMIC ? ""
			 : size <= v->hw_max		   ? ", written atomically by the device"
							   : ", written atomically in software by the file system "
							     "(copy on write, slower)",
			 first, evidence);
		return;
	}
	if (a == LCLOUD_ANSWER_UNKNOWN) {
		const struct verdict_reason *u = &v->reasons[v->unknown_reason];

		if (v->max_untorn)
			snprintf(why, why_size, "unknown on %s: %" PRIu64 "-byte writes are proved untorn, larger ones "
				 "rest on evidence that could not be read: %s [%s]", name, v->max_untorn, u->text,
				 u->evidence);
		else
			snprintf(why, why_size, "unknown on %s: %s [%s]", name, u->text, u->evidence);
		return;
	}
	if (size < v->min_untorn)
		snprintf(why, why_size, "not untorn on %s: %" PRIu64 " bytes is below the smallest %s write, %" PRIu64
			 " bytes; %s [%s]", name, size, v->path == LCLOUD_PATH_RWF_ATOMIC ? "atomic" : "untorn",
			 v->min_untorn, floor_reason(v) ? floor_reason(v)->text : first,
			 floor_reason(v) ? floor_reason(v)->evidence : evidence);
	else if (in_merge_gap(v, size))
		snprintf(why, why_size, "not untorn on %s: %" PRIu64 " bytes is more than %" PRIu64 " and less than %" PRIu64
			 " bytes, so the block layer may merge such a write with a neighbour into one command the device "
			 "does not keep whole; %s [%s]", name, size, v->merge_gap_above, v->merge_gap_below,
			 v->reasons[v->merge_gap_reason].text, v->reasons[v->merge_gap_reason].evidence);
	else if (size <= v->max_untorn && v->boundary)
		snprintf(why, why_size, "not untorn on %s: aligned %" PRIu64 "-byte writes cross the device's %" PRIu64
			 "-byte atomic boundaries, which fall at %" PRIu64 " + k * %" PRIu64 " [%s]", name, size,
			 v->boundary, v->boundary_offset, v->boundary, evidence);
	else if (v->max_untorn)
		snprintf(why, why_size, "not untorn on %s: %" PRIu64 " bytes is more than the largest untorn write, %" PRIu64
			 " bytes; %s [%s]", name, size, v->max_untorn, limiting_reason(v)->text,
			 limiting_reason(v)->evidence);
	else
		snprintf(why, why_size, "not untorn on %s: %s [%s]", name,
			 v->n_reasons ? v->reasons[v->n_reasons - 1].text : first,
			 v->n_reasons ? v->reasons[v->n_reasons - 1].evidence : evidence);
}

LCLOUD_EXPORT enum lcloud_answer lcloud_verdict_check_size(const struct lcloud_verdict *v, uint64_t size)
{
	return v && is_power_of_2(size) ? answer(v, size) : LCLOUD_ANSWER_NO;
}

LCLOUD_EXPORT uint64_t lcloud_verdict_get_hardware_max_bytes(const struct lcloud_verdict *v)
{
	return v ? v->hw_max : 0;
}

LCLOUD_EXPORT const char *lcloud_verdict_get_unknown_reason(const struct lcloud_verdict *v)
{
	return v && v->unknown ? v->reasons[v->unknown_reason].text : NULL;
}

LCLOUD_EXPORT const char *lcloud_answer_to_string(enum lcloud_answer a)
{
	switch (a) {
	case LCLOUD_ANSWER_NO:
		return "no";
	case LCLOUD_ANSWER_UNTORN:
		return "untorn";
	case LCLOUD_ANSWER_UNKNOWN:
		return "unknown";
	}
	return "invalid";
}

/*
 * The size of what the target is: the top device (a file may grow, so only
 * devices limit). A namespace Linux left at capacity 0 for its interleaved
 * metadata has no size to exceed: the verdict says why nothing is untorn.
 */
static uint64_t target_size(const struct lcloud_probe *p)
{
	if (extended_lba_namespace(p))
		return UINT64_MAX;
	for (unsigned int i = 0; i < p->n_layers; i++) {
		if (p->layers[i].kind == LCLOUD_LAYER_FILESYSTEM)
			return UINT64_MAX;
		if (!layer_kind_describes_device(p->layers[i].kind)) {
			uint64_t size;

			/* a size absent or unread limits nothing the check can know about */
			return layer_get_bytes(&p->layers[i], FACT_SIZE, &size) > 0 ? size : UINT64_MAX;
		}
	}
	return UINT64_MAX;
}

/*
 * Since 0.2 the answer has three values. Programs built against 0.1 expect
 * 1 or 0 and may test "r > 0" or "r != 0": they keep lcloud_probe_check@LCLOUD_0.1,
 * which answers 0 ("not untorn") where the evidence could not be read.
 */
int lcloud_probe_check_v2(const struct lcloud_probe *p, enum lcloud_io_path path, uint64_t size,
			  enum lcloud_io_path *ret_path, char *why, size_t why_size);
int lcloud_probe_check_v1(const struct lcloud_probe *p, enum lcloud_io_path path, uint64_t size,
			  enum lcloud_io_path *ret_path, char *why, size_t why_size);
__asm__(".symver lcloud_probe_check_v1, lcloud_probe_check@LCLOUD_0.1");
__asm__(".symver lcloud_probe_check_v2, lcloud_probe_check@@LCLOUD_0.2");

LCLOUD_EXPORT int lcloud_probe_check_v2(const struct lcloud_probe *p, enum lcloud_io_path path, uint64_t size,
					enum lcloud_io_path *ret_path, char *why, size_t why_size)
{
	static const enum lcloud_io_path order[] = { LCLOUD_PATH_RWF_ATOMIC, LCLOUD_PATH_PASSTHROUGH,
						     LCLOUD_PATH_PLAIN_DIRECT };
	const struct lcloud_verdict *best = NULL, *undecided = NULL;

	if (!p || !p->verdicts || !is_power_of_2(size) || path > LCLOUD_PATH_BUFFERED)
		return -EINVAL;
	if (size > target_size(p))
		return -ERANGE;
	if (path != LCLOUD_PATH_BEST) {
		const struct lcloud_verdict *v = &p->verdicts[path - 1];
		enum lcloud_answer a = answer(v, size);

		describe(v, size, a, why, why_size);
		if (ret_path)
			*ret_path = path;
		return (int)a;
	}
	/* the kernel's guarantee first, then liblcloud's own enforcement, then a promise */
	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		const struct lcloud_verdict *v = &p->verdicts[order[i] - 1];
		enum lcloud_answer a = answer(v, size);

		if (a == LCLOUD_ANSWER_UNTORN) {
			describe(v, size, a, why, why_size);
			if (ret_path)
				*ret_path = v->path;
			return (int)a;
		}
		if (a == LCLOUD_ANSWER_UNKNOWN && !undecided)
			undecided = v;
		if (!best || v->max_untorn > best->max_untorn)
			best = v;
	}
	/* no path proves it; one that could not be decided makes the answer unknown, not no */
	if (undecided)
		best = undecided;
	describe(best, size, undecided ? LCLOUD_ANSWER_UNKNOWN : LCLOUD_ANSWER_NO, why, why_size);
	if (ret_path)
		*ret_path = best->path;
	return undecided ? LCLOUD_ANSWER_UNKNOWN : LCLOUD_ANSWER_NO;
}

LCLOUD_EXPORT int lcloud_probe_check_v1(const struct lcloud_probe *p, enum lcloud_io_path path, uint64_t size,
					enum lcloud_io_path *ret_path, char *why, size_t why_size)
{
	int r = lcloud_probe_check_v2(p, path, size, ret_path, why, why_size);

	return r == LCLOUD_ANSWER_UNKNOWN ? LCLOUD_ANSWER_NO : r;
}
