/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloud-target's shared shapes: the subsystem it serves (its configuration
 * and namespaces), the controllers hosts create with Fabrics Connect, one
 * connection's state, and the command each PDU carries. The connection code
 * (conn.c) owns the bytes; the command handlers (fabrics.c, admin.c, io.c)
 * see a parsed command with its data buffer and answer with a status, so no
 * handler ever reads a PDU.
 */
#ifndef LCLOUD_TARGET_TARGET_H
#define LCLOUD_TARGET_TARGET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "auth.h"
#include "backend.h"

#define TARGET_MAX_NAMESPACES 16
#define TARGET_QUEUE_ENTRIES 128      /* CAP.MQES + 1, the deepest queue a host may connect */
#define TARGET_ADMIN_INLINE 8192      /* in-capsule data on the admin queue (Linux sends up to 8 KiB) */
#define TARGET_IO_INLINE 8192         /* in-capsule data on I/O queues: IOCCSZ = (64 + this) / 16 */
#define TARGET_MAX_H2C_DATA 65536     /* ICResp MAXH2CDATA: the largest H2CData PDU a host may send */
#define TARGET_MAX_R2T_BYTES 131072   /* the default largest R2T: a larger write's data is asked for in pieces */
#define TARGET_R2T_OUTSTANDING 4      /* R2Ts in flight per command, if the host's MAXR2T allows as many */
#define TARGET_MAX_IO_QUEUES 64
#define TARGET_NQN_MAX 223
#define TARGET_FDP_MAX_HANDLES 16     /* the Linux cloud extension describes at most 16 */
#define TARGET_FDP_RU_BYTES (64u << 20) /* RUNS: each reclaim unit's nominal size */
#define TARGET_FDP_MAX_EVENTS 63      /* the FDP events log holds at most 63 */
#define TARGET_MAX_HOSTS 64           /* --allow-host NQNs */
/* Until a connection is established (Connect done, authenticated if asked) a PDU holds at most this:
 * a capsule with Connect's 1024 bytes or an authentication message in it. */
#define TARGET_HANDSHAKE_PDU (72 + 4096)

struct lcloud_queue;

struct target_namespace {
	struct lcloud_queue *queue; /* held for the target's life: its claims, and the watch on its storage */
	char path[4096];
	int fd;             /* the guarded descriptor, duplicated, for buffered I/O */
	pthread_mutex_t write_lock; /* held across each write to the medium (ns_guard.c) */
	bool write_protected; /* its storage gained a user: writes refused from then on; under write_lock */
	uint64_t blocks;    /* NSZE: the file's size in logical blocks */
	uint8_t nguid[16];
};

struct target_config {
	char nqn[TARGET_NQN_MAX + 1];
	char serial[21];
	char model[41];
	uint32_t lba_size;   /* 512 or 4096 */
	uint8_t mdts;        /* the largest transfer: 2^mdts * 4 KiB */
	bool vwc;            /* volatile write cache present (and enabled at start) */
	/* the atomic promise in bytes; 0 = not given */
	uint32_t nawun, nawupf, nabsn, nabspf, nabo;
	uint32_t awun, awupf; /* Identify Controller's, in bytes */
	/* the power-fail model (power.c) */
	uint64_t cache_bytes; /* the volatile cache's size: past it, the oldest write goes to the file */
	uint64_t seed;        /* decides each cached write's fate at a cut */
	uint64_t cut_after;   /* cut the power when I/O command N + 1 arrives; 0 never */
	bool liar;            /* advertise the promise, tear anyway */
	char report_path[4096];
	/* Flexible Data Placement (fdp.c): 0 off, else the placement handles offered */
	unsigned int fdp_handles;
	uint8_t placement_use[TARGET_FDP_MAX_HANDLES]; /* what each handle is for (nvme_lcloud_ext.h) */
	uint8_t namespace_use[TARGET_MAX_NAMESPACES];  /* what a namespace's writes without a handle are for */
	uint32_t max_r2t_bytes; /* the most one R2T asks for */
	/* bounds (server.c, conn.c): what any peer can make the target hold */
	unsigned int max_connections;   /* open connections; at the limit the oldest not yet established goes */
	uint32_t handshake_timeout_ms;  /* from accept to an established connection */
	uint32_t data_timeout_ms;       /* a PDU begun, or the data of an R2T sent, must arrive within it */
	uint64_t data_buffer;           /* bytes of command data buffered for all connections (0: no limit) */
	uint64_t conn_data_buffer;      /* ... for one connection (0: no limit) */
	uint64_t wlog_limit;            /* each write log's largest size in bytes; 0 none */
	/* who may connect (server.c, fabrics.c, auth.c) */
	char allowed_hosts[TARGET_MAX_HOSTS][TARGET_NQN_MAX + 1]; /* host NQNs; none given: any host */
	unsigned int n_allowed_hosts;
	bool host_key_set, ctrl_key_set; /* DH-HMAC-CHAP: every host authenticates; the controller too, if asked */
	struct dhchap_key host_key, ctrl_key;
	bool loopback;                  /* listening on loopback only: the peer socket's owner is checked */
	uid_t own_uid;                  /* besides root, the user who may connect on loopback without a secret */
	struct backend_config backend; /* the cloud back end (backend.c); off unless an option of it is given */
};

/* An FDP event as the events log (0x23) reports it. */
struct fdp_event {
	uint8_t type;
	uint16_t pid;
	uint32_t nsid;
	uint64_t timestamp_ms;
};

/* One namespace's write log (write_log.c): under wlog_lock. */
struct target_wlog {
	bool active;
	bool failing;        /* the last entry was refused: said once in the log until one goes in */
	int fd;
	char *path;
	uint64_t end, entries;
};

struct target {
	struct target_config cfg;
	struct target_namespace ns[TARGET_MAX_NAMESPACES];
	unsigned int n_ns;
	bool quiet;          /* no log lines (the fuzz harness) */
	pthread_mutex_t lock; /* guards the controller list and the counters below */
	struct controller *ctrls;
	uint16_t next_cntlid;
	uint64_t read_cmds, write_cmds, read_units, write_units; /* SMART counters */
	/* FDP counters and events, under lock too */
	uint64_t fdp_handle_bytes[TARGET_FDP_MAX_HANDLES]; /* bytes written through each handle */
	uint64_t fdp_ru_used[TARGET_FDP_MAX_HANDLES];      /* of them, in each handle's current reclaim unit */
	struct fdp_event fdp_events[TARGET_FDP_MAX_EVENTS]; /* a ring, the oldest overwritten */
	unsigned int fdp_event_next, fdp_event_count;
	/* the volatile cache, oldest first, and the power state: under cache_lock */
	pthread_mutex_t cache_lock;
	struct pending_write *cache_head, *cache_tail;
	uint64_t cache_held, cache_seq, commands;
	bool powered_off;
	/* the writes in flight, oldest first (power.c): under cache_lock too */
	struct command *inflight_head, *inflight_tail;
	uint64_t inflight_seq;
	/* each namespace's write log and the command trace (write_log.c): under wlog_lock */
	pthread_mutex_t wlog_lock;
	struct target_wlog wlog[TARGET_MAX_NAMESPACES];
	FILE *trace;
	uint64_t trace_seq, started_us;
	int report_fd;        /* --power-report's file, made at start (power_report.c); -1 none */
	uint64_t buffered;    /* bytes of command data all connections hold (atomic; conn.c) */
	uint64_t buffered_last; /* ... those of commands the scheduler serves last (atomic) */
	/* is namespace NS's storage still the target's own? 0, or < 0 to write protect it (ns_watch.c); NULL: yes */
	int (*storage_check)(struct target *t, unsigned int ns);
	struct backend *backend; /* the cloud back end, or NULL: commands run as they arrive */
};

/* One controller: made by an admin queue's Connect, joined by its I/O queues. */
struct controller {
	struct controller *next;
	struct target *t;
	unsigned int refs;   /* the admin connection and every I/O connection; under t->lock */
	uint16_t cntlid;
	char hostnqn[257];
	uint8_t hostid[16];
	uint32_t cc, csts;
	uint32_t kato_ms;    /* 0: no keep alive timer */
	uint64_t last_admin_us; /* when the admin queue last received a command (the keep alive timer) */
	bool failed;         /* the keep alive timer expired: its connections are closing */
	struct conn *conns;  /* its admin and I/O connections, by conn->ctrl_next */
	uint32_t aec;        /* asynchronous event configuration */
	uint16_t io_queues;  /* granted, zero-based, for submission and completion */
	bool write_cache;    /* volatile write cache enabled (Set Features 0x06) */
};

/* How a connection reaches its peer: the server's socket, or the fuzz harness's sink. */
struct conn_io {
	/* Sends every byte of IOV or fails with -errno. */
	int (*send)(void *ctx, const struct iovec *iov, int iovcnt);
	/* Ends the connection from another thread (the keep alive timer); NULL: it cannot be. */
	void (*shutdown)(void *ctx);
	/*
	 * Wakes the connection's reader from another thread (the back end gave buffers back while commands
	 * wait, held); NULL: the reader finds them at its next tick.
	 */
	void (*wake)(void *ctx);
	void *ctx;
};

enum cmd_dir { DIR_NONE, DIR_TO_CTRL, DIR_TO_HOST };

/* One command in flight on a connection. */
struct command {
	bool used;
	uint8_t sqe[64];
	uint16_t cid;
	enum cmd_dir dir;
	uint8_t *data;        /* DATA_LEN bytes: what the host sent, or what goes back */
	uint32_t data_len;
	uint32_t received;    /* H2CData bytes so far, in order (under cache_lock while in flight) */
	uint32_t requested;   /* bytes the R2Ts sent so far ask for */
	uint32_t result0, result1; /* completion dwords 0 and 1 */
	/* a write in flight (power.c): on t->inflight_* under cache_lock */
	bool inflight;
	struct command *inflight_prev, *inflight_next;
	uint64_t inflight_seq;
	unsigned int ns_index;
	uint64_t slba;
	uint32_t nlb;
	bool cut_pending;     /* the cut after N commands fell on it: the power goes once CUT_AT bytes arrived */
	uint32_t cut_at;
	/* its data buffer (conn.c): none until the budget allows it, and until then it waits, held */
	bool buffered;        /* DATA_LEN bytes of the budgets are its */
	bool buffered_last;   /* ... and of the share of the commands the scheduler serves last */
	bool held;            /* waiting for its data buffer: no R2T sent, not executed */
	uint8_t level;        /* the scheduler's level for it (scheduler.h): held commands go by it */
	uint64_t held_seq;    /* held commands go in the order they arrived within a level */
	uint64_t arrived_us;  /* its capsule's arrival: the scheduler's wait limit counts from it */
	uint64_t data_deadline_us; /* the R2Ts sent so far must be answered by then (0: none outstanding) */
	struct backend_item be; /* its place in the back end, while it is there */
};

struct conn {
	struct target *t;
	struct conn_io io;
	unsigned int id;          /* for log lines */
	bool ready;               /* ICReq seen */
	uint16_t qid;
	bool connected;           /* Fabrics Connect succeeded */
	bool sqflow_disabled;     /* the host asked for no SQ flow control: C2HData may carry SUCCESS */
	uint32_t maxr2t;          /* ICReq MAXR2T: R2Ts a command may have outstanding, zero-based */
	uint16_t sqsize;          /* zero-based */
	uint16_t sqhd;
	struct controller *ctrl;
	struct conn *ctrl_next;   /* in ctrl->conns, under t->lock */
	/* the PDU being received */
	uint8_t *rx;
	uint32_t rx_len, rx_need, rx_cap;
	uint64_t rx_started_us;   /* when its first byte came (the data timeout) */
	/* command slots: one until Connect, then the queue's entries */
	struct command *cmds;
	unsigned int n_cmds;
	uint64_t buffered;        /* bytes of data buffers its commands hold */
	uint64_t buffered_last;   /* ... those of commands the scheduler serves last */
	uint64_t held_seq;
	unsigned int held;        /* commands waiting for a buffer (atomic: the back end wakes the reader) */
	uint64_t started_us;      /* accepted (the handshake timeout) */
	/* who it is (fabrics.c, auth.c) */
	bool auth_required;       /* DH-HMAC-CHAP before any command but authentication */
	bool authenticated;
	bool established;         /* connected, and authenticated if asked: it may hold full buffers */
	bool close_after_reply;   /* the answer is sent, then the connection closes (c->reason says why) */
	struct auth_state auth;
	/* with a back end, commands complete on its thread: sends and the slots' state are shared with it */
	pthread_mutex_t send_lock;  /* one PDU at a time on the socket */
	pthread_mutex_t slot_lock;  /* cmds[].used, .cid and the data state of a slot's lookup; sqhd */
	char reason[160];         /* why the connection closes */
	char killed[160];         /* why another thread closed it (under t->lock); empty if none did */
};

/* conn.c */
int conn_init(struct conn *c, struct target *t, const struct conn_io *io, unsigned int id);
/* Feeds LEN received bytes. < 0: close the connection (c->reason says why). */
int conn_feed(struct conn *c, const uint8_t *data, size_t len);
/*
 * The connection's timers at NOW_US: the handshake, a PDU begun, the data
 * of R2Ts sent; and held commands, which go when the budgets allow. < 0:
 * close it (c->reason says why); else 0 and in *RET_WAIT_MS the
 * milliseconds until it is worth calling again (-1: no timer is running).
 */
int conn_tick(struct conn *c, uint64_t now_us, int *ret_wait_ms);
void conn_destroy(struct conn *c);
void conn_fail(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The status a handler returns (SCT << 8 | SC, SC_DNR added by the caller), or CMD_HELD or CMD_QUEUED. */
#define CMD_HELD 0x10000
#define CMD_QUEUED 0x20000 /* the back end has it and answers it with conn_complete() */
/* Answers a command the back end queued (STATUS < 0: the power is off, no answer) and frees its slot. */
void conn_complete(struct conn *c, struct command *cmd, int status);

/* fabrics.c: Connect, Property Get/Set, Authentication Send/Receive, the controller list */
int fabrics_execute(struct conn *c, struct command *cmd);
void controller_put(struct target *t, struct controller *ctrl);
/* The connection leaves its controller's list (before controller_put). */
void controller_detach(struct target *t, struct conn *c);
/*
 * The keep alive timer: fails every controller whose admin queue has had no
 * command for its KATO, closing its connections with a logged reason.
 * Returns the milliseconds until the next check is worth making.
 */
unsigned int controllers_check_keep_alive(struct target *t, uint64_t now_us);

/* admin.c */
int admin_execute(struct conn *c, struct command *cmd);
/* identify.c: fills BUF (4096 bytes) for Identify CNS; returns a status */
int identify_fill(const struct target *t, const struct controller *ctrl, uint8_t cns, uint32_t nsid, uint8_t *buf);

/* fdp.c: Flexible Data Placement, one endurance group (1), one configuration, one reclaim group */
#define FDP_ENDGID 1
/* Fills PAGE (CAP bytes, at least 4096) with FDP log LID for endurance group LSI; a status. */
int fdp_log_page(struct target *t, uint8_t lid, uint8_t lsp, uint16_t lsi, uint8_t *page, size_t cap,
		 size_t *ret_len);
int fdp_features(struct target *t, bool set, uint32_t cdw11, uint32_t cdw12, uint32_t *ret_result0);
int fdp_io_management(struct target *t, struct command *cmd);
/* A Write's directive is one this target takes (none, or data placement with FDP on): no side effects. */
bool fdp_directive_accepted(const struct target *t, const uint8_t *sqe);
/* Checks a Write's directive (CDW12 DTYPE, CDW13 DSPEC): a status, and the handle it is placed on. */
int fdp_write_placement(struct target *t, uint32_t nsid, const uint8_t *sqe, unsigned int *ret_handle);
void fdp_count_write(struct target *t, unsigned int handle, uint64_t bytes);

/* io.c */
/* An I/O command's capsule arrived, its data buffer set up: a write joins the writes in flight. */
void io_arrives(struct conn *c, struct command *cmd);
/* Runs CMD now, or hands it to the back end (CMD_QUEUED). */
int io_execute(struct conn *c, struct command *cmd);
/* Runs CMD on the backing file and traces it; BE is its place in the back end, or NULL. */
int io_run(struct conn *c, struct command *cmd, const struct backend_item *be);
/* The namespace NSID names, or NULL. */
struct target_namespace *target_namespace(struct target *t, uint32_t nsid);

/* log.c */
void tlog(const struct target *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The size of a command's data, by its opcode's transfer bits (and fctype for Fabrics). */
enum cmd_dir command_direction(const uint8_t *sqe);

#endif
