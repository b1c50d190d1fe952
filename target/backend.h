/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cloud back end behind lcloud-target's namespaces (see backend.c):
 * its configuration, a command's place in it, and what the connection and
 * command code call.
 */
#ifndef LCLOUD_TARGET_BACKEND_H
#define LCLOUD_TARGET_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "scheduler.h"

#define BACKEND_MAX_HELD 1024 /* commands queued or in service at once: past it a connection waits */
#define BACKEND_MODEL_MAX 24

struct conn;
struct command;
struct target;

struct backend_config {
	bool on;                    /* any of the below given: commands go through the back end */
	char model[BACKEND_MODEL_MAX]; /* the published model the caps came from, "" none */
	double scale;               /* the factor the caps were multiplied by */
	uint64_t iops, bytes_per_s; /* 0: no cap */
	uint32_t iops_size;         /* an I/O up to this counts as one operation */
	uint64_t latency_us;        /* each command's time at the back end */
	uint64_t read_ahead_bytes;  /* the device's own read-ahead window at most; 0 none */
	uint64_t read_ahead_cache;  /* its cache, in bytes */
	unsigned int hints;         /* SCHED_HINT_*: the hints the device acts on */
	uint64_t max_wait_us;       /* the scheduler's wait limit */
};

enum backend_state { BACKEND_IDLE, BACKEND_QUEUED, BACKEND_IN_SERVICE, BACKEND_EXECUTING };

/* A command's place in the back end (in struct command): from its submission to its completion. */
struct backend_item {
	struct sched_entry entry;
	struct backend_item *service_next;
	struct conn *conn;
	uint64_t arrived_us, dispatched_us, ready_us;
	uint64_t backend_bytes;     /* moved to or from the back end for it, the read-ahead it set off included */
	uint32_t backend_ops;       /* the operations the caps counted for it */
	uint8_t cls;                /* enum sched_class */
	uint8_t state;              /* enum backend_state */
};

/* A published model's caps: "gp3", "hyperdisk-balanced", "ops-bound", "bw-bound". 0 or -ENOENT. */
int backend_model(const char *name, uint64_t *ret_iops, uint64_t *ret_bytes_per_s, uint32_t *ret_iops_size);
/* The back end of T's namespaces (T's configuration on, namespaces opened), with its thread. 0 or -errno. */
int backend_start(struct target *t);
/* Queues CMD of connection C; the back end completes it later (conn_complete). Returns CMD_QUEUED. */
int backend_submit(struct target *t, struct conn *c, struct command *cmd);
/* Takes every command of C out of the back end; waits while one of them is being completed. */
void backend_cancel(struct target *t, struct conn *c);
/* The class of the I/O command SQE, from its opcode, its hint bits and its placement use. */
enum sched_class backend_classify(const struct target *t, const uint8_t *sqe);
/* Its configuration and counters, as lines in the log and, with --trace, as '# backend' lines there. */
void backend_report(struct target *t);

#endif
