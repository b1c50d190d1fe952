/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What replay says about a log: each page write's verdict, rules and the
 * reason for a person, the runs in the log, the model and where each of its
 * values came from, as text and as JSON. Used by cmd_replay.c (the analysis)
 * and replay_images.c (the crash images), neither of which it calls.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "replay.h"

static const char *verdict_word(enum oracle_verdict v)
{
	return v == ORACLE_ATOMIC ? "atomic" : v == ORACLE_TEARABLE ? "tearable" : "incomplete";
}

const char *replay_reasons(const struct writelog *const *logs, const struct oracle_model *m,
			   const struct oracle_page_write *w, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
#define ADD(...) (n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__))
	if (w->verdict == ORACLE_INCOMPLETE)
		ADD("only %u of its %u blocks are in the log", w->blocks_seen, w->page_size / 512);
	if (w->rules & ORACLE_SPLIT) {
		uint64_t prev = UINT64_MAX;
		uint32_t cmds = 0, prev_log = UINT32_MAX;

		for (uint32_t i = 0; i < w->n_parts; i++)
			if (w->parts[i].entry != prev || w->parts[i].log != prev_log) {
				cmds++;
				prev = w->parts[i].entry;
				prev_log = w->parts[i].log;
			}
		if (w->across_logs)
			ADD("%sarrived in %u commands to more than one device (logs %u to %u): a cut between them "
			    "leaves part of the page old", n ? "; " : "", cmds, w->first_log, w->last_log);
		else
			ADD("%sarrived in %u commands (entries %" PRIu64 " to %" PRIu64 "): a cut between them leaves "
			    "part of the page old", n ? "; " : "", cmds, w->first_entry, w->last_entry);
	}
	if (w->rules & (ORACLE_OVER_UNIT | ORACLE_BOUNDARY | ORACLE_MISALIGNED)) {
		const struct writelog_entry *e = writelog_entry(logs[w->rule_log], w->rule_entry);
		uint64_t cs = e->sector * writelog_sector_size(logs[w->rule_log]);

		if (e->data_bytes > m->atomic_bytes)
			ADD("%sentry %" PRIu64 ": a command of %" PRIu64 " bytes at %" PRIu64 " is larger than the atomic "
			    "unit (%" PRIu64 ") and carries more than one logical block of the page", n ? "; " : "",
			    e->index, e->data_bytes, cs, m->atomic_bytes);
		else if (w->rules & ORACLE_MISALIGNED)
			ADD("%sentry %" PRIu64 ": the command [%" PRIu64 ", %" PRIu64 ") is not aligned to its own size, "
			    "which the promise asks, and carries more than one logical block of the page", n ? "; " : "",
			    e->index, cs, cs + e->data_bytes);
		else
			ADD("%sentry %" PRIu64 ": the command [%" PRIu64 ", %" PRIu64 ") crosses the atomic boundary at "
			    "%" PRIu64 ", so no more than each logical block of it is atomic, and it carries more than "
			    "one of the page", n ? "; " : "", e->index, cs, cs + e->data_bytes,
			    oracle_boundary_after(m, cs));
	}
	if (!w->durable)
		ADD("%snot durable: no FLUSH after its last command (entry %" PRIu64 "), so a volatile cache may lose "
		    "it", n ? "; " : "", w->last_entry);
#undef ADD
	return buf;
}

static json_object *u64_json(uint64_t v)
{
	return json_object_new_int64((int64_t)v);
}

json_object *replay_page_write_json(const struct writelog *const *logs, const struct replay_model *rm,
				       const struct oracle_page_write *w)
{
	json_object *j = json_object_new_object(), *rules = json_object_new_array(), *cmds = json_object_new_array();
	char id[32], why[1024];

	snprintf(id, sizeof(id), "0x%016" PRIx64, w->run_id);
	json_object_object_add(j, "run_id", json_object_new_string(id));
	json_object_object_add(j, "page", u64_json(w->page));
	json_object_object_add(j, "generation", u64_json(w->generation));
	json_object_object_add(j, "copy", u64_json(w->copy));
	json_object_object_add(j, "page_size", u64_json(w->page_size));
	json_object_object_add(j, "verdict", json_object_new_string(verdict_word(w->verdict)));
	if (w->rules & ORACLE_SPLIT)
		json_object_array_add(rules, json_object_new_string("split"));
	if (w->rules & ORACLE_OVER_UNIT)
		json_object_array_add(rules, json_object_new_string("over-unit"));
	if (w->rules & ORACLE_BOUNDARY)
		json_object_array_add(rules, json_object_new_string("boundary"));
	if (w->rules & ORACLE_MISALIGNED)
		json_object_array_add(rules, json_object_new_string("misaligned"));
	json_object_object_add(j, "rules", rules);
	json_object_object_add(j, "reason", json_object_new_string(replay_reasons(logs, &rm->m, w, why, sizeof(why))));
	json_object_object_add(j, "durable", json_object_new_boolean(w->durable));
	json_object_object_add(j, "device_offset", u64_json(w->device_offset));
	json_object_object_add(j, "previous_device_offset",
			       w->previous_offset == UINT64_MAX ? NULL : u64_json(w->previous_offset));
	json_object_object_add(j, "relocated", w->previous_offset == UINT64_MAX
						? NULL : json_object_new_boolean(w->previous_offset != w->device_offset ||
										 w->previous_log != w->first_log));
	json_object_object_add(j, "across_devices", json_object_new_boolean(w->across_logs));
	for (uint32_t i = 0; i < w->n_parts; i++) {
		const struct oracle_part *p = &w->parts[i];
		const uint64_t ss = writelog_sector_size(logs[p->log]);
		const struct writelog_entry *e = writelog_entry(logs[p->log], p->entry);
		json_object *c = json_object_new_object();

		json_object_object_add(c, "log", u64_json(p->log));
		json_object_object_add(c, "entry", u64_json(p->entry));
		json_object_object_add(c, "kind", json_object_new_string(writelog_entry_kind(e)));
		json_object_object_add(c, "offset", u64_json(e->sector * ss));
		json_object_object_add(c, "length", u64_json(e->data_bytes));
		json_object_object_add(c, "atomic", json_object_new_boolean(oracle_command_atomic(&rm->m, e->sector * ss,
												   e->data_bytes)));
		json_object_object_add(c, "first_block", u64_json(p->first_block));
		json_object_object_add(c, "blocks", u64_json(p->blocks));
		json_object_object_add(c, "page_offset", u64_json(p->dev_offset));
		json_object_array_add(cmds, c);
	}
	json_object_object_add(j, "commands", cmds);
	if (w->verdict == ORACLE_TEARABLE) {
		json_object *cut = json_object_new_object();

		json_object_object_add(cut, "log", u64_json(w->cut_log));
		json_object_object_add(cut, "cut", u64_json(w->cut_entry));
		json_object_object_add(cut, "tear_blocks", u64_json(w->cut_bytes / rm->m.lba));
		json_object_object_add(cut, "tear_bytes", u64_json(w->cut_bytes));
		json_object_object_add(j, "tearing_cut", cut);
	} else {
		json_object_object_add(j, "tearing_cut", NULL);
	}
	return j;
}

void replay_print_page_write(const struct writelog *const *logs, uint32_t n_logs, const struct replay_model *rm,
			     const struct oracle_page_write *w)
{
	char why[1024];

	printf("run 0x%016" PRIx64 " page %" PRIu64 " generation %" PRIu64 "%s: %s", w->run_id, w->page, w->generation,
	       w->copy ? " (a further copy)" : "", verdict_word(w->verdict));
	if (w->verdict != ORACLE_ATOMIC || !w->durable)
		printf(": %s", replay_reasons(logs, &rm->m, w, why, sizeof(why)));
	printf("\n  commands:");
	for (uint32_t i = 0; i < w->n_parts; i++) {
		const struct oracle_part *p = &w->parts[i];
		const uint64_t ss = writelog_sector_size(logs[p->log]);
		const struct writelog_entry *e = writelog_entry(logs[p->log], p->entry);

		printf("%s", i ? ";" : "");
		if (n_logs > 1)
			printf(" log %u", p->log);
		printf(" entry %" PRIu64 " %s [%" PRIu64 ", %" PRIu64 ") blocks %u-%u", p->entry,
		       writelog_entry_kind(e), e->sector * ss, e->sector * ss + e->data_bytes, p->first_block,
		       p->first_block + p->blocks - 1);
	}
	putchar('\n');
	if (w->previous_offset != UINT64_MAX && w->previous_offset != w->device_offset && w->previous_log == w->first_log)
		printf("  relocated: the previous generation was written at %" PRIu64 ", this one at %" PRIu64
		       " (a file system that switches the file to the new blocks keeps the old page whole until then)\n",
		       w->previous_offset, w->device_offset);
	if (w->verdict == ORACLE_TEARABLE && n_logs > 1)
		printf("  shown by: log %u at --cut %" PRIu64 " --tear %" PRIu64 ", the other logs whole\n", w->cut_log,
		       w->cut_entry, w->cut_bytes / rm->m.lba);
	else if (w->verdict == ORACLE_TEARABLE)
		printf("  shown by: --cut %" PRIu64 " --tear %" PRIu64 "\n", w->cut_entry, w->cut_bytes / rm->m.lba);
}

json_object *replay_log_info_json(const char *path, const struct writelog *log)
{
	json_object *j = json_object_new_object();
	uint64_t writes = 0, flushes = 0, fua = 0, discards = 0, marks = 0, bytes = 0;

	for (uint64_t i = 0; i < writelog_entry_count(log); i++) {
		const struct writelog_entry *e = writelog_entry(log, i);

		writes += writelog_entry_writes(e) != 0;
		flushes += (e->flags & WRITELOG_FLUSH) != 0;
		fua += writelog_entry_writes(e) && (e->flags & WRITELOG_FUA);
		discards += (e->flags & WRITELOG_DISCARD) != 0;
		marks += (e->flags & WRITELOG_MARK) != 0;
		bytes += e->data_bytes;
	}
	json_object_object_add(j, "file", json_object_new_string(path));
	json_object_object_add(j, "sector_size", u64_json(writelog_sector_size(log)));
	json_object_object_add(j, "entries", u64_json(writelog_entry_count(log)));
	json_object_object_add(j, "super_entries", u64_json(writelog_super_entries(log)));
	json_object_object_add(j, "trailing_bytes", u64_json(writelog_trailing_bytes(log)));
	json_object_object_add(j, "writes", u64_json(writes));
	json_object_object_add(j, "flushes", u64_json(flushes));
	json_object_object_add(j, "fua_writes", u64_json(fua));
	json_object_object_add(j, "discards", u64_json(discards));
	json_object_object_add(j, "marks", u64_json(marks));
	json_object_object_add(j, "bytes_written", u64_json(bytes));
	return j;
}

json_object *replay_model_json(const struct replay_model *rm)
{
	json_object *j = json_object_new_object(), *src = json_object_new_object();

	json_object_object_add(j, "lba", u64_json(rm->m.lba));
	json_object_object_add(j, "atomic_bytes", u64_json(rm->m.atomic_bytes));
	json_object_object_add(j, "boundary", u64_json(rm->m.boundary));
	json_object_object_add(j, "boundary_offset", u64_json(rm->m.boundary_offset));
	json_object_object_add(j, "aligned_to_size", json_object_new_boolean(rm->m.natural));
	json_object_object_add(j, "whole_block", u64_json(rm->m.whole_block));
	json_object_object_add(j, "volatile_cache", json_object_new_boolean(rm->m.volatile_cache));
	json_object_object_add(src, "lba", json_object_new_string(rm->src_lba));
	json_object_object_add(src, "atomic_bytes", json_object_new_string(rm->src_atomic));
	json_object_object_add(src, "boundary", json_object_new_string(rm->src_boundary));
	json_object_object_add(src, "volatile_cache", json_object_new_string(rm->src_cache));
	json_object_object_add(j, "sources", src);
	return j;
}

void replay_print_model(const struct replay_model *rm)
{
	printf("model: logical block %" PRIu64 " (%s), atomic unit %" PRIu64 " (%s), ", rm->m.lba, tty_str(rm->src_lba),
	       rm->m.atomic_bytes, tty_str(rm->src_atomic));
	if (rm->m.boundary)
		printf("boundary %" PRIu64 " from %" PRIu64 " (%s), ", rm->m.boundary, rm->m.boundary_offset,
		       tty_str(rm->src_boundary));
	else
		printf("no boundary (%s), ", tty_str(rm->src_boundary));
	if (rm->m.natural)
		printf("only writes aligned to their own size (%s), ", tty_str(rm->src_atomic));
	if (rm->m.whole_block)
		printf("each whole %" PRIu64 "-byte block of any command kept whole (%s), ", rm->m.whole_block,
		       tty_str(rm->src_boundary));
	printf("%s (%s)\n", rm->m.volatile_cache ? "volatile write cache" : "no volatile write cache", tty_str(rm->src_cache));
}

bool replay_selected(const struct replay_opts *o, const struct oracle_page_write *w)
{
	return !o->have_run || w->run_id == o->run;
}

struct run_seen {
	uint64_t run_id, first; /* the run, and the index of its first page write */
};

static int by_run_then_first(const void *a, const void *b)
{
	const struct run_seen *x = a, *y = b;

	if (x->run_id != y->run_id)
		return x->run_id < y->run_id ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static int by_first(const void *a, const void *b)
{
	const struct run_seen *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* The runs of R in the order they first appear; sorted, so a log of many runs costs n log n, not n squared. */
json_object *replay_runs_json(const struct oracle_result *r)
{
	struct run_seen *seen = malloc((r->n_writes ? r->n_writes : 1) * sizeof(*seen));
	json_object *runs;
	uint64_t n = 0;

	if (!seen)
		return NULL;
	for (uint64_t i = 0; i < r->n_writes; i++)
		seen[i] = (struct run_seen){ r->writes[i].run_id, i };
	qsort(seen, r->n_writes, sizeof(*seen), by_run_then_first);
	for (uint64_t i = 0; i < r->n_writes; i++)
		if (!n || seen[n - 1].run_id != seen[i].run_id)
			seen[n++] = seen[i];
	qsort(seen, n, sizeof(*seen), by_first);
	runs = json_object_new_array();
	for (uint64_t i = 0; i < n; i++) {
		char id[32];

		snprintf(id, sizeof(id), "0x%016" PRIx64, seen[i].run_id);
		json_object_array_add(runs, json_object_new_string(id));
	}
	free(seen);
	return runs;
}
