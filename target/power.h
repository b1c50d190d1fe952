/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The volatile write cache and the power cut (see power.c).
 */
#ifndef LCLOUD_TARGET_POWER_H
#define LCLOUD_TARGET_POWER_H

#include <stdbool.h>
#include <stdint.h>

struct target;
struct target_namespace;

/* A write the cache holds: acknowledged, not yet on the backing file. */
struct pending_write {
	struct pending_write *next;
	uint64_t seq;       /* the order writes were acknowledged in */
	unsigned int ns;    /* index into target->ns */
	uint64_t slba;
	uint32_t nlb;
	uint8_t *data;
};

/* Holds a copy of DATA in the cache; destages the oldest when the cache is full. 0 or -errno. */
int cache_write(struct target *t, unsigned int ns, uint64_t slba, uint32_t nlb, const uint8_t *data);
/* Lays the cache's writes over BUF, which holds NLB blocks at SLBA read from the file. */
void cache_overlay(struct target *t, unsigned int ns, uint64_t slba, uint32_t nlb, uint8_t *buf);
/* Writes every cached write to its file, in order, and syncs the files. 0 or -errno. */
int cache_flush(struct target *t);
/* The cache, by bytes held (for tests and the report). */
uint64_t cache_bytes(struct target *t);

/*
 * Counts one I/O command; false when the power is off or the cut after N
 * commands falls on this one (it is then in flight, never completed).
 */
bool power_command_arrives(struct target *t);
/* Cuts the power: decides each cached write's fate, writes the report, and ends the process. */
void power_cut(struct target *t, const char *why) __attribute__((noreturn));

#endif
