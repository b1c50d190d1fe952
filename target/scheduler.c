/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The back end's scheduler: the order in which commands waiting for the
 * caps are served. Hint-blind (no --hints) there is one level, first come
 * first served, as a device that cannot tell commands apart. With the
 * read-ahead hint, a read that Linux marked as read-ahead (Limited Retry,
 * or DSM access frequency 7, "speculative read") waits behind the reads a
 * reader waits for; with the placement hint, writes on a journal handle (or
 * namespace), FUA writes and Flushes go first and writes on a background
 * handle go last:
 *
 *   level 0  flush, write-journal, write-fua      (placement hint)
 *   level 1  read, write, other; everything hint-blind
 *   level 2  read-ahead                           (read-ahead hint)
 *   level 3  write-background                     (placement hint)
 *
 * Each level is first come first served, and no command waits for ever:
 * while commands have waited longer than the wait limit, every other command
 * served is the oldest of them, so a backlog of background writes gets at
 * least half of the volume and the levels above still go first in the rest
 * (as mq-deadline serves its starved writes in turns with its reads).
 * NVMe lets a controller complete commands in any order; a host that cares
 * about the order of two writes waits for the first before it sends the
 * second (Linux does), so reordering changes times, never data.
 */
#include <stddef.h>

#include "scheduler.h"

static const char *const class_names[CLASS_COUNT] = {
	[CLASS_READ] = "read",
	[CLASS_READ_AHEAD] = "read-ahead",
	[CLASS_WRITE] = "write",
	[CLASS_WRITE_JOURNAL] = "write-journal",
	[CLASS_WRITE_BACKGROUND] = "write-background",
	[CLASS_WRITE_FUA] = "write-fua",
	[CLASS_FLUSH] = "flush",
	[CLASS_OTHER] = "other",
};

const char *sched_class_name(enum sched_class cls)
{
	return cls < CLASS_COUNT ? class_names[cls] : "?";
}

enum sched_class sched_classify(uint8_t opcode, bool fua, bool read_ahead, unsigned int use)
{
	switch (opcode) {
	case 0x00:
		return CLASS_FLUSH;
	case 0x02:
		return read_ahead ? CLASS_READ_AHEAD : CLASS_READ;
	case 0x01:
		if (use == SCHED_USE_JOURNAL)
			return CLASS_WRITE_JOURNAL;
		if (fua)
			return CLASS_WRITE_FUA;
		return use == SCHED_USE_BACKGROUND ? CLASS_WRITE_BACKGROUND : CLASS_WRITE;
	default:
		return CLASS_OTHER;
	}
}

unsigned int sched_level(enum sched_class cls, unsigned int hints)
{
	if (hints & SCHED_HINT_PLACEMENT) {
		if (cls == CLASS_FLUSH || cls == CLASS_WRITE_JOURNAL || cls == CLASS_WRITE_FUA)
			return 0;
		if (cls == CLASS_WRITE_BACKGROUND)
			return 3;
	}
	if ((hints & SCHED_HINT_READ_AHEAD) && cls == CLASS_READ_AHEAD)
		return 2;
	return 1;
}

void sched_init(struct scheduler *s, uint64_t max_wait_us)
{
	*s = (struct scheduler){.max_wait_us = max_wait_us};
}

void sched_push(struct scheduler *s, struct sched_entry *e)
{
	unsigned int l = e->level < SCHED_LEVELS ? e->level : SCHED_LEVELS - 1;
	struct sched_entry *after = s->tail[l];

	/* in the order they arrived: one that waited for a data buffer may come after a later one */
	while (after && after->arrived_us > e->arrived_us)
		after = after->prev;
	e->level = (uint8_t)l;
	e->prev = after;
	e->next = after ? after->next : s->head[l];
	if (e->next)
		e->next->prev = e;
	else
		s->tail[l] = e;
	if (after)
		after->next = e;
	else
		s->head[l] = e;
	s->count++;
}

void sched_remove(struct scheduler *s, struct sched_entry *e)
{
	unsigned int l = e->level;

	if (e->prev)
		e->prev->next = e->next;
	else
		s->head[l] = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		s->tail[l] = e->prev;
	e->prev = e->next = NULL;
	s->count--;
}

struct sched_entry *sched_pop(struct scheduler *s, uint64_t now_us)
{
	struct sched_entry *oldest = NULL, *first = NULL;

	for (unsigned int l = 0; l < SCHED_LEVELS; l++) {
		struct sched_entry *h = s->head[l];

		if (!h)
			continue;
		if (!first)
			first = h;
		if (!oldest || h->arrived_us < oldest->arrived_us)
			oldest = h;
	}
	if (!first)
		return NULL;
	if (!s->aged_last && s->max_wait_us && now_us > oldest->arrived_us &&
	    now_us - oldest->arrived_us > s->max_wait_us) {
		first = oldest;
		s->aged_last = true;
	} else {
		s->aged_last = false;
	}
	sched_remove(s, first);
	return first;
}
