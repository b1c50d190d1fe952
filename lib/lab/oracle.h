/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The log oracle: which page writes in a device's write log could a power
 * cut tear? Every 512-byte block of every logged write that carries a torture
 * stamp (torture_page.h) is attributed to (run, page, generation, block);
 * the blocks of one (run, page, generation) make a page write, and the
 * commands that carried them decide, under the device's power-fail model:
 *
 *  - split:     the page arrived in more than one command: a cut between
 *               them leaves part of it old;
 *  - over-unit: one command larger than the power-fail atomic unit carried
 *               more than one logical block of the page;
 *  - boundary:  one command crossing an atomic boundary (offset + k * size)
 *               carried more than one logical block of the page.
 *
 * A command that breaks the atomic unit or a boundary promises nothing
 * beyond each logical block, so the cut points considered are logical block
 * boundaries; under a promise per aligned physical block (whole_block), not
 * those inside a block the command covers entirely. A page that spans one
 * logical block only, or lies inside one such covered block, cannot tear in
 * one command. With a volatile write cache, a page write not followed by a FLUSH
 * (and not carried by FUA commands only) is "not durable": it may be lost,
 * which is not a tear.
 *
 * The same page, generation and block logged twice (a journal copy, a
 * rewrite, the other half of a mirror) starts a second copy, judged on its
 * own.
 *
 * Several logs, one per device of a stack (md raid0 over two namespaces, a
 * striped dm device), are read as one: a page whose blocks went to two
 * devices arrived in two commands, which is a split. The logs are read one
 * after the other; order between devices is not known.
 *
 * The rules speak of the device's blocks. A file system that writes a page
 * somewhere new and then points the file at it (XFS's copy-on-write atomic
 * writes, a log-structured layout) keeps the old page whole until that
 * switch, whatever the device does to the new blocks; such page writes are
 * marked "relocated" (the previous generation of the page was logged at
 * another device offset), and only an image, mounted, shows what the file
 * holds.
 */
#ifndef LCLOUD_LAB_ORACLE_H
#define LCLOUD_LAB_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "writelog.h"

struct oracle_model {
	uint64_t lba;             /* logical block size: the unit a device never tears */
	uint64_t atomic_bytes;    /* power-fail atomic write size (>= lba) */
	uint64_t boundary;        /* atomic boundary size in bytes; 0: none */
	uint64_t boundary_offset; /* where the boundaries start, in bytes */
	bool volatile_cache;      /* completed writes are durable only after a FLUSH (or with FUA) */
	bool natural;             /* a command is atomic only when aligned to its own (power-of-two) size */
	/*
	 * A command that is not atomic still writes each aligned block of this
	 * size that it covers entirely as a whole (a provider's promise per
	 * physical block); 0: only each logical block.
	 */
	uint64_t whole_block;
};

enum oracle_rule {
	ORACLE_SPLIT = 1u << 0,
	ORACLE_OVER_UNIT = 1u << 1,
	ORACLE_BOUNDARY = 1u << 2,
	ORACLE_MISALIGNED = 1u << 3, /* within the unit, but not aligned to its own size as the promise asks */
};

enum oracle_verdict {
	ORACLE_ATOMIC = 0,     /* every cut leaves the page all old or all new */
	ORACLE_TEARABLE = 1,   /* some cut leaves it part old, part new (RULES say why) */
	ORACLE_INCOMPLETE = 2, /* not all of its blocks are in the log */
};

/* Blocks of a page write carried by one command, in a run of neighbouring device blocks. */
struct oracle_part {
	uint32_t log;         /* which log (device), from 0 */
	uint64_t entry;       /* log entry index */
	uint64_t dev_offset;  /* bytes on the device of the part's first block */
	uint32_t first_block; /* index in the page */
	uint32_t blocks;
};

struct oracle_page_write {
	uint64_t run_id, page, generation;
	uint32_t page_size, copy, blocks_seen;
	/*
	 * A bit per block of the page, only once it came in more than a few
	 * parts (before that the parts say which blocks came): a log of one
	 * block per page write costs a part, not a page's worth of flags.
	 */
	uint8_t *seen;
	struct oracle_part *parts;
	uint32_t n_parts, cap_parts;
	uint32_t first_log, last_log;     /* the logs of the first and the last part */
	uint64_t first_entry, last_entry; /* entries of the first and the last part, in those logs */
	bool across_logs;                 /* parts on more than one device */
	enum oracle_verdict verdict;
	uint32_t rules;       /* enum oracle_rule */
	bool durable;         /* always true without a volatile cache */
	/*
	 * A cut that tears it (ORACLE_TEARABLE): in log CUT_LOG, apply the entries
	 * before CUT_ENTRY, then CUT_BYTES of that one; the other logs whole.
	 */
	uint32_t cut_log;
	uint64_t cut_entry, cut_bytes;
	uint32_t rule_log;    /* the command an over-unit or boundary rule is about */
	uint64_t rule_entry;
	/* device offset of the page's block 0 (as if contiguous) in its first log, and of its previous generation */
	uint64_t device_offset, previous_offset; /* previous_offset UINT64_MAX: none in the logs */
	uint32_t previous_log;
};

struct oracle_result {
	struct oracle_page_write *writes; /* in the order their first block appeared */
	uint64_t n_writes;
	uint64_t atomic, tearable, incomplete, not_durable;
	uint64_t write_entries, flush_entries, fua_entries, discard_entries, mark_entries, bytes_written;
	uint64_t stamped_blocks, other_blocks;
};

/* Is a command of LEN bytes at OFFSET power-fail atomic under M? */
bool oracle_command_atomic(const struct oracle_model *m, uint64_t offset, uint64_t len);
/* The first atomic boundary after OFFSET under M; UINT64_MAX when there is none. */
uint64_t oracle_boundary_after(const struct oracle_model *m, uint64_t offset);
/* Checks M (sizes, powers of two where needed); -EINVAL with ERR. */
int oracle_model_check(const struct oracle_model *m, char *err, size_t err_size);
/* Judges the page writes in the N_LOGS logs LOGS (one per device) under M. */
int oracle_run(const struct writelog *const *logs, uint32_t n_logs, const struct oracle_model *m,
	       struct oracle_result *ret, char *err, size_t err_size);
void oracle_result_release(struct oracle_result *r);

#endif
