/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The normal probe output: a heading for the target, then one block per layer, then notes. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "color.h"
#include "escape.h"
#include "print.h"
#include "cli_facts.h"

static void print_layer_heading(FILE *out, const struct lcloud_probe *p, unsigned int i)
{
	const struct lcloud_layer *l = lcloud_probe_get_layer(p, i);
	enum lcloud_layer_kind kind = lcloud_layer_get_kind(l);
	int parent = lcloud_layer_get_parent(l);

	if (kind == LCLOUD_LAYER_FILESYSTEM) {
		const char *mp = cli_fact_string(l, FACT_MOUNT_POINT);
		const char *src = cli_fact_string(l, FACT_MOUNT_SOURCE);

		fputs("filesystem ", out);
		fputs_escaped(lcloud_layer_get_name(l), out);
		if (mp) {
			fputs(" mounted at ", out);
			fputs_escaped(mp, out);
		}
		if (src) {
			fputs(" from ", out);
			fputs_escaped(src, out);
		}
	} else {
		fprintf(out, "%s ", lcloud_layer_kind_to_string(kind));
		fputs_escaped(lcloud_layer_get_name(l), out);
		/* device and provider layers describe the disk above them; the others sit below it */
		if (parent >= 0) {
			fprintf(out, " (%s ", kind == LCLOUD_LAYER_NVME || kind == LCLOUD_LAYER_SCSI ||
							 kind == LCLOUD_LAYER_CLOUD ? "about" : "below");
			fputs_escaped(lcloud_layer_get_name(lcloud_probe_get_layer(p, (unsigned int)parent)), out);
			fputc(')', out);
		}
	}
	fputc('\n', out);
}

void print_probe_normal(FILE *out, const struct lcloud_probe *p, const struct global_opts *opts)
{
	bool bytes = opts->bytes;
	unsigned int n_layers = lcloud_probe_get_layer_count(p);
	unsigned int n_notes = lcloud_probe_get_note_count(p);
	const char *resolved = lcloud_probe_get_resolved_path(p);

	fputs_escaped(lcloud_probe_get_path(p), out);
	fprintf(out, ": %s", lcloud_target_type_to_string(lcloud_probe_get_target_type(p)));
	if (resolved && strcmp(resolved, lcloud_probe_get_path(p)) != 0) {
		fputs(" (", out);
		fputs_escaped(resolved, out);
		fputc(')', out);
	}
	fputc('\n', out);

	for (unsigned int i = 0; i < n_layers; i++) {
		const struct lcloud_layer *l = lcloud_probe_get_layer(p, i);
		unsigned int n_facts = lcloud_layer_get_fact_count(l);
		size_t width = 0;

		for (unsigned int j = 0; j < n_facts; j++) {
			size_t w = strlen(lcloud_fact_get_name(lcloud_layer_get_fact(l, j)));

			if (w > width)
				width = w;
		}
		fputc('\n', out);
		print_layer_heading(out, p, i);
		for (unsigned int j = 0; j < n_facts; j++) {
			const struct lcloud_fact *f = lcloud_layer_get_fact(l, j);
			char value[4 * 4096 + 64]; /* a PATH_MAX mount point, every byte escaped */

			if (lcloud_layer_get_kind(l) == LCLOUD_LAYER_NVME && nvme_field_print(out, f, (int)width, opts->human))
				continue;
			fprintf(out, "  %-*s  %s\n", (int)width, lcloud_fact_get_name(f),
				format_fact_value(f, bytes, value, sizeof(value)));
		}
	}
	fputs("\nverdict: largest untorn write per I/O path\n", out);
	for (int path = LCLOUD_PATH_RWF_ATOMIC; path <= LCLOUD_PATH_BUFFERED; path++) {
		const struct lcloud_verdict *v = lcloud_probe_get_verdict(p, (enum lcloud_io_path)path);
		uint64_t max = lcloud_verdict_get_max_untorn_bytes(v);
		char size[32];

		if (max && bytes)
			snprintf(size, sizeof(size), "%" PRIu64, max);
		else if (max)
			format_size(max, size, sizeof(size));
		enum color_role role = max ? COLOR_GOOD : lcloud_verdict_get_unknown_reason(v) ? COLOR_UNKNOWN : COLOR_BAD;

		fprintf(out, "  %-13s %s%s%s", lcloud_io_path_to_string((enum lcloud_io_path)path), color_start(opts, role),
			max ? size : lcloud_verdict_get_unknown_reason(v) ? "unknown" : "none", color_end(opts));
		if (max && lcloud_verdict_get_boundary(v))
			fprintf(out, ", not crossing %" PRIu64 "-byte boundaries", lcloud_verdict_get_boundary(v));
		{
			uint64_t above, below;
			char a[32], b[32];

			/* the sizes merges take out: name both ends, in the units the sizes use */
			if (max && lcloud_verdict_get_merge_gap(v, &above, &below) > 0) {
				if (bytes) {
					snprintf(a, sizeof(a), "%" PRIu64, above);
					snprintf(b, sizeof(b), "%" PRIu64, below);
				} else {
					format_size(above, a, sizeof(a));
					format_size(below, b, sizeof(b));
				}
				fprintf(out, "; not between %s and %s (merged writes)", a, b);
			}
		}
		if (max && lcloud_verdict_get_unknown_reason(v))
			fputs("; larger: unknown", out);
		if (max && path == LCLOUD_PATH_RWF_ATOMIC) {
			uint64_t hw = lcloud_verdict_get_hardware_max_bytes(v);

			if (!hw)
				fputs(" (in software)", out);
			else if (hw < max)
				fprintf(out, " (by the device up to %s, in software above)",
					bytes ? (snprintf(size, sizeof(size), "%" PRIu64, hw), size) : format_size(hw, size, sizeof(size)));
		}
		fputc('\n', out);
		for (unsigned int i = 0; i < lcloud_verdict_get_reason_count(v); i++) {
			fputs("      - ", out);
			fputs_escaped(lcloud_verdict_get_reason(v, i), out);
			fputs(" [", out);
			fputs_escaped(lcloud_verdict_get_reason_evidence(v, i), out);
			fputs("]\n", out);
		}
	}
	if (n_notes) {
		fputs("\nnotes\n", out);
		for (unsigned int i = 0; i < n_notes; i++) {
			const struct lcloud_note *note = lcloud_probe_get_note(p, i);

			enum lcloud_note_severity sev = lcloud_note_get_severity(note);

			if (sev == LCLOUD_NOTE_INFO)
				fprintf(out, "  %s: ", lcloud_note_severity_to_string(sev));
			else
				fprintf(out, "  %s%s%s: ", color_start(opts, sev == LCLOUD_NOTE_ERROR ? COLOR_BAD : COLOR_UNKNOWN),
					lcloud_note_severity_to_string(sev), color_end(opts));
			fputs_escaped(lcloud_note_get_message(note), out);
			fputc('\n', out);
		}
	}
	/* a loop device's backing file, probed as a target of its own: the verdict above rests on it */
	for (unsigned int i = 0; i < n_layers; i++) {
		const struct lcloud_probe *backing = lcloud_layer_get_backing_probe(lcloud_probe_get_layer(p, i));

		if (!backing)
			continue;
		fputs("\nbacking file of ", out);
		fputs_escaped(lcloud_layer_get_name(lcloud_probe_get_layer(p, i)), out);
		fputs(": ", out);
		print_probe_normal(out, backing, opts);
	}
}
