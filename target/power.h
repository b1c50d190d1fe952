/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The volatile write cache, the writes in flight, and the power cut (see
 * power.c).
 */
#ifndef LCLOUD_TARGET_POWER_H
#define LCLOUD_TARGET_POWER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct target;
struct target_namespace;
struct command;

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
 * A write in flight: its capsule arrived, its data is arriving or complete,
 * and it is not yet applied (to the cache or the file). CMD must stay put
 * until power_inflight_remove() or power_apply_write().
 */
void power_inflight_add(struct target *t, struct command *cmd, unsigned int ns, uint64_t slba, uint32_t nlb);
/* Takes CMD off the list (its connection closed, or it failed its checks). NULL-safe, idempotent. */
void power_inflight_remove(struct target *t, struct command *cmd);
/* Copies LEN bytes of CMD's data to its buffer at cmd->received, as the cut sees it; may cut the power. */
void power_data_arrives(struct target *t, struct command *cmd, const uint8_t *src, uint32_t len);
/*
 * Applies a write in flight: to the cache (TO_CACHE) or the file, with its
 * write log entry (WLOG_FLAGS), and takes it off the list, at one moment a
 * cut cannot split. -ESHUTDOWN when the power is off (the write is the cut's
 * to decide, never completed); another -errno if the medium failed.
 */
int power_apply_write(struct target *t, struct command *cmd, bool to_cache, uint32_t wlog_flags);

/*
 * Counts one I/O command on its arrival (its capsule, before any R2T).
 * -ESHUTDOWN when the power is off. When the cut after N commands falls on it, the power
 * goes now, or, for a write whose data is still to come, once a seeded part
 * of that data has arrived: the write is then in flight and never completed.
 */
int power_command_arrives(struct target *t, struct command *cmd);
/*
 * power_report.c: the --power-report file. PREPARE checks the name and
 * makes the file at start (0, or -errno with ERR for a person); BEGIN gives
 * the stream to write at the cut (NULL, logged, if there is none; TMP holds
 * the temporary name, if any, for COMMIT); COMMIT syncs it and renames it
 * over the name (0, or -errno, logged; the name is then as it was).
 */
int power_report_prepare(struct target *t, char *err, size_t err_len);
FILE *power_report_begin(struct target *t, char *tmp, size_t tmp_len);
int power_report_commit(struct target *t, FILE *f, char *tmp, size_t tmp_len);

/*
 * Cuts the power: decides each cached write's and each write in flight's
 * fate, writes the report, and ends the process: exit status 0, or 3 when
 * the report, a write log or a namespace's file could not be written whole.
 */
void power_cut(struct target *t, const char *why) __attribute__((noreturn));

#endif
