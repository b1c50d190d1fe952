/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The back end's scheduler (see scheduler.c): each command's class, the
 * level the hints give it, and the order the queue serves them in.
 */
#ifndef LCLOUD_TARGET_SCHEDULER_H
#define LCLOUD_TARGET_SCHEDULER_H

#include <stdbool.h>
#include <stdint.h>

/* What a command is, as the scheduler and the counters see it. */
enum sched_class {
	CLASS_READ,             /* a read without the read-ahead hint: a reader waits for it */
	CLASS_READ_AHEAD,       /* a read with Limited Retry or DSM access frequency "prefetch" */
	CLASS_WRITE,            /* a write of data, metadata, or no stated use */
	CLASS_WRITE_JOURNAL,    /* a write on a journal placement handle or namespace */
	CLASS_WRITE_BACKGROUND, /* a write on a background placement handle or namespace */
	CLASS_WRITE_FUA,        /* a write with FUA of another use */
	CLASS_FLUSH,
	CLASS_OTHER,            /* Write Zeroes, Dataset Management, I/O Management, ... */
	CLASS_COUNT
};

/* The hints the scheduler acts on (--hints). */
#define SCHED_HINT_READ_AHEAD 0x1u /* (a) read-ahead reads wait behind reads a reader waits for */
#define SCHED_HINT_PLACEMENT 0x2u  /* (b) journal writes, FUA and Flush first; background writes last */

/* The placement uses of the Linux cloud extension (nvme_lcloud_ext.h), as the class needs them. */
#define SCHED_USE_JOURNAL 3
#define SCHED_USE_BACKGROUND 4

#define SCHED_LEVELS 4

struct sched_entry {
	struct sched_entry *prev, *next;
	uint64_t arrived_us;
	uint8_t level;
};

struct scheduler {
	struct sched_entry *head[SCHED_LEVELS], *tail[SCHED_LEVELS];
	unsigned int count;
	uint64_t max_wait_us; /* a command waiting longer goes before its level's turn; 0: never */
	bool aged_last;       /* the last command served had waited too long: the next goes by level */
};

const char *sched_class_name(enum sched_class cls);
/* A command's class from its opcode, FUA and read-ahead bits, and for a write its placement use. */
enum sched_class sched_classify(uint8_t opcode, bool fua, bool read_ahead, unsigned int use);
/* The level (0 first) of a class when the scheduler acts on HINTS. */
unsigned int sched_level(enum sched_class cls, unsigned int hints);
void sched_init(struct scheduler *s, uint64_t max_wait_us);
/* Queues E at its level (set by the caller), among them in the order of E->arrived_us. */
void sched_push(struct scheduler *s, struct sched_entry *e);
/*
 * The command to serve at NOW_US: the first of the first level, except that every other command served
 * is the oldest over the wait limit, if one is; NULL when none waits.
 */
struct sched_entry *sched_pop(struct scheduler *s, uint64_t now_us);
/* Takes E out of the queue (its connection closed). */
void sched_remove(struct scheduler *s, struct sched_entry *e);

#endif
