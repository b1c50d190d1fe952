/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a write's class or group lands on an FDP device. Three readings of
 * the probe's NVMe layer decide it: what the device states each reclaim unit
 * handle is for (the Linux cloud extension, lcloud-extension(7)), the
 * placement identifiers the namespace may use in the reclaim unit handle
 * status's order (Linux's write stream N is the N-th: drivers/nvme/host/
 * core.c, nvme_setup_rw), and the handle each of them reaches. They are
 * read once at open; the choice is a pure function of them, so that a test
 * builds them by hand.
 */
#ifndef LCLOUD_QUEUE_HINT_PLACEMENT_H
#define LCLOUD_QUEUE_HINT_PLACEMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "lcloud/lcloud.h"

#define PLACEMENT_MAX 16 /* the extension describes at most 16 handles; the queue uses the first 16 identifiers */

struct hint_placement {
	bool uses_stated;               /* the device states its handles' uses */
	uint8_t use[PLACEMENT_MAX];     /* per reclaim unit handle: an enum lcloud_write_class, 0 unspecified */
	unsigned int n_uses;            /* the handles it describes */
	uint16_t pids[PLACEMENT_MAX];   /* the namespace's placement identifiers: write stream N is pids[N - 1] */
	uint16_t handles[PLACEMENT_MAX]; /* the reclaim unit handle each reaches, when handles_known */
	unsigned int n_pids;            /* 0: FDP off, or its identifiers unread */
	bool handles_known;
};

/* One write's place among the identifiers (or streams) a path can reach. */
struct placement_choice {
	enum lcloud_placement_basis basis;
	int index;        /* into pids: write stream index + 1; -1 none */
	int handle;       /* the reclaim unit handle; -1 not known */
	unsigned int use; /* what the device states the handle is for; 0 nothing */
};

/* Reads the placement facts of P's NVMe layer (none: all zero). */
void hint_placement_read(const struct lcloud_probe *p, struct hint_placement *ret);

/*
 * Chooses for a write of WRITE_CLASS and GROUP among the first N_USABLE
 * identifiers (the passthrough backend: all of them; the kernel path: as
 * many as it has write streams, whose identifiers may be unread). When the
 * device states uses, the class goes to a handle it states is for that
 * class (a group picks among several), and is dropped when it has none;
 * else the class or group picks by its number.
 */
void hint_placement_choose(const struct hint_placement *pl, unsigned int n_usable, unsigned int write_class,
			   uint32_t group, struct placement_choice *ret);

#endif
