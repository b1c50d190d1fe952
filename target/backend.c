/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cloud back end: what a cloud volume does between a command's arrival
 * and its completion, every part a switch (lcloud-target(8), CLOUD BACK
 * END). The namespaces of one target are one volume's: they share its caps
 * and its scheduler, as namespaces share a device (and as the volumes of a
 * cloud VM share the instance's own limit); each namespace has its own
 * read-ahead streams and cache.
 *
 * A command goes to the scheduler's queue on arrival (backend_submit) and
 * the connection reads on. One thread serves the queue: when the caps
 * (caps.c) admit another I/O it takes the command the scheduler
 * (scheduler.c) puts first, charges the caps with what it costs the back
 * end, and holds it for the volume's latency; then it runs the command on
 * the backing file (io.c) and answers it (conn_complete). A read costs only
 * the blocks the device's read-ahead cache (readahead.c) does not hold, and
 * when the device may read ahead for it (always hint-blind; hint-aware only
 * for a read without the read-ahead hint) it may set off a fetch ahead,
 * charged to the caps as well. A read the cache holds whole completes when
 * the fetch that brought it in does. Flushes and other commands move no
 * data and cost no operation (QEMU's throttle does not count flushes
 * either), but they wait their turn and the latency.
 *
 * The power-fail model (power.c) is untouched by the order: a write is in
 * flight from its arrival until it is applied, which happens when the back
 * end completes it, at once before its answer; a cut meanwhile decides it
 * as any write in flight, and nothing is acknowledged before it is applied.
 * Memory is bounded: a command's place in the queue lives in its slot of
 * the connection (struct command), at most BACKEND_MAX_HELD commands are
 * queued or in service (a connection with one more waits before it reads
 * on), and the read-ahead cache is a fixed table.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend_stats.h"
#include "caps.h"
#include "nvme_tcp.h"
#include "readahead.h"
#include "target.h"
#include "write_log.h"

#define IO_FLUSH 0x00
#define IO_WRITE 0x01
#define IO_READ 0x02
#define IO_WRITE_ZEROES 0x08
#define IO_DSM 0x09
#define RW_FUA (1u << 30)
#define RW_LIMITED_RETRY (1u << 31)
#define DSM_FREQ_PREFETCH 0x7 /* access frequency 7: speculative read, what Linux sets for REQ_RAHEAD */
#define DSM_DEALLOCATE (1u << 2)

struct backend {
	struct target *t;
	const struct backend_config *cfg;
	pthread_mutex_t lock;
	pthread_cond_t wake;          /* the server thread: a command arrived */
	pthread_cond_t room;          /* a connection waiting for a place in the queue */
	pthread_cond_t idle;          /* a connection waiting for its command to be completed */
	struct scheduler sched;
	struct caps caps;
	struct readahead ra[TARGET_MAX_NAMESPACES];
	struct backend_item *service; /* dispatched, by the time they are ready */
	/* the connection of the command being completed: its slot is freed on the way, so it is kept here */
	struct conn *executing;
	unsigned int held;            /* queued, in service or executing */
	struct backend_stats stats;
};

static const struct {
	const char *name;
	uint64_t iops, bytes_per_s;
} models[] = {
	/* the same models as tests/vm/lcvm disk-model (QEMU's throttle), every one 256 KiB to the operation */
	{"gp3", 3000, 125ull << 20},                /* AWS EBS gp3 baseline */
	{"hyperdisk-balanced", 3000, 140ull << 20}, /* Google Cloud Hyperdisk Balanced baseline */
	{"ops-bound", 3000, 1000ull << 20},         /* gp3 at its highest throughput: only operations bind */
	{"bw-bound", 16000, 125ull << 20},          /* gp3 at its highest IOPS: only bytes bind */
};

int backend_model(const char *name, uint64_t *ret_iops, uint64_t *ret_bytes_per_s, uint32_t *ret_iops_size)
{
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		if (strcmp(name, models[i].name) == 0) {
			*ret_iops = models[i].iops;
			*ret_bytes_per_s = models[i].bytes_per_s;
			*ret_iops_size = 256u << 10;
			return 0;
		}
	}
	return -ENOENT;
}

static uint64_t now_us(void)
{
	return trace_now_us();
}

/* The use of a write: its placement handle's, else its namespace's, else handle 0's (FDP on). */
static unsigned int write_use(const struct target *t, const uint8_t *sqe)
{
	uint32_t nsid = get32(sqe + SQE_NSID);
	unsigned int dtype = get32(sqe + SQE_CDW12) >> 20 & 0xf, pid = get16(sqe + SQE_CDW13 + 2);

	if (t->cfg.fdp_handles && dtype == 2)
		return t->cfg.placement_use[pid < t->cfg.fdp_handles ? pid : 0];
	if (nsid >= 1 && nsid <= TARGET_MAX_NAMESPACES && t->cfg.namespace_use[nsid - 1])
		return t->cfg.namespace_use[nsid - 1];
	return t->cfg.fdp_handles ? t->cfg.placement_use[0] : 0;
}

enum sched_class backend_classify(const struct target *t, const uint8_t *sqe)
{
	uint32_t cdw12 = get32(sqe + SQE_CDW12), cdw13 = get32(sqe + SQE_CDW13);
	uint8_t opc = sqe[SQE_OPC];
	bool rw = opc == IO_READ || opc == IO_WRITE;
	bool read_ahead = rw && ((cdw12 & RW_LIMITED_RETRY) || (cdw13 & 0xf) == DSM_FREQ_PREFETCH);

	return sched_classify(opc, rw && (cdw12 & RW_FUA), read_ahead, opc == IO_WRITE ? write_use(t, sqe) : 0);
}

/* The namespace index and block range of a Read, Write or Write Zeroes, if within the namespace. */
static bool io_range(const struct target *t, const uint8_t *sqe, unsigned int *ret_ns, uint64_t *ret_slba,
		     uint32_t *ret_nlb)
{
	uint32_t nsid = get32(sqe + SQE_NSID);
	uint64_t slba = get64(sqe + SQE_CDW10);
	uint32_t nlb = (uint32_t)get16(sqe + SQE_CDW12) + 1;

	if (nsid < 1 || nsid > t->n_ns || slba > t->ns[nsid - 1].blocks || nlb > t->ns[nsid - 1].blocks - slba)
		return false;
	*ret_ns = nsid - 1;
	*ret_slba = slba;
	*ret_nlb = nlb;
	return true;
}

static void charge(struct backend *b, struct backend_item *it, uint64_t now, uint64_t bytes, bool write)
{
	uint64_t ops = caps_ops(&b->caps, bytes);

	caps_charge(&b->caps, now, ops, bytes);
	it->backend_bytes += bytes;
	it->backend_ops += (uint32_t)ops;
	if (write) {
		b->stats.backend_written_bytes += bytes;
		b->stats.backend_write_ops += ops;
	} else {
		b->stats.backend_read_bytes += bytes;
		b->stats.backend_read_ops += ops;
	}
}

/* A read at dispatch: the cache's part, the back end's part, and the fetch ahead it sets off. Under lock. */
static uint64_t dispatch_read(struct backend *b, struct backend_item *it, const uint8_t *sqe, uint64_t now)
{
	uint32_t lba = b->t->cfg.lba_size, nlb;
	uint64_t slba, fetch_slba = 0, fetch_nlb = 0, ready = now + b->cfg->latency_us;
	struct ra_lookup found;
	struct readahead *ra;
	unsigned int ns;

	if (!io_range(b->t, sqe, &ns, &slba, &nlb))
		return ready; /* it fails its checks when it runs: nothing moves */
	ra = &b->ra[ns];
	ra_lookup(ra, slba, nlb, &found);
	/* (a): hint-aware, a read Linux marked as read-ahead is Linux's own: the device adds none */
	if (!(b->cfg->hints & SCHED_HINT_READ_AHEAD) || it->cls != CLASS_READ_AHEAD)
		ra_detect(ra, slba, nlb, &fetch_slba, &fetch_nlb);
	b->stats.delivered_bytes += (uint64_t)nlb * lba;
	b->stats.read_ahead_hit_bytes += found.hit * lba;
	if (found.miss) {
		charge(b, it, now, found.miss * lba, false);
	} else {
		ready = found.ready_us > now ? found.ready_us : now; /* all in the cache: ready with its fetch */
	}
	if (found.hit && found.ready_us > ready)
		ready = found.ready_us;
	if (fetch_nlb) {
		charge(b, it, now, fetch_nlb * lba, false);
		b->stats.read_ahead_fetched_bytes += fetch_nlb * lba;
		ra_insert(ra, fetch_slba, fetch_nlb, now + b->cfg->latency_us);
	}
	return ready;
}

/* Blocks a Dataset Management deallocate gives up leave the read-ahead cache. Under lock. */
static void dispatch_deallocate(struct backend *b, const struct command *cmd)
{
	uint32_t nsid = get32(cmd->sqe + SQE_NSID), nr = (uint32_t)cmd->sqe[SQE_CDW10] + 1;

	if (nsid < 1 || nsid > b->t->n_ns || !(get32(cmd->sqe + SQE_CDW11) & DSM_DEALLOCATE) || !cmd->data)
		return;
	for (uint32_t i = 0; i < nr && (uint64_t)(i + 1) * 16 <= cmd->data_len; i++)
		ra_invalidate(&b->ra[nsid - 1], get64(cmd->data + 16 * i + 8), get32(cmd->data + 16 * i + 4));
}

/* The command the scheduler puts first goes into service. Under lock. */
static void dispatch(struct backend *b, uint64_t now)
{
	struct backend_item *it = (struct backend_item *)sched_pop(&b->sched, now), **pos;
	struct command *cmd = (struct command *)((char *)it - offsetof(struct command, be));
	uint32_t lba = b->t->cfg.lba_size, nlb;
	uint64_t slba, ready = now + b->cfg->latency_us;
	unsigned int ns;

	it->dispatched_us = now;
	switch (cmd->sqe[SQE_OPC]) {
	case IO_READ:
		ready = dispatch_read(b, it, cmd->sqe, now);
		break;
	case IO_WRITE:
		if (io_range(b->t, cmd->sqe, &ns, &slba, &nlb)) {
			charge(b, it, now, (uint64_t)nlb * lba, true);
			ra_invalidate(&b->ra[ns], slba, nlb);
		}
		break;
	case IO_WRITE_ZEROES:
		if (io_range(b->t, cmd->sqe, &ns, &slba, &nlb))
			ra_invalidate(&b->ra[ns], slba, nlb);
		break;
	case IO_DSM:
		dispatch_deallocate(b, cmd);
		break;
	}
	it->ready_us = ready;
	it->state = BACKEND_IN_SERVICE;
	for (pos = &b->service; *pos && (*pos)->ready_us <= ready; pos = &(*pos)->service_next)
		;
	it->service_next = *pos;
	*pos = it;
}

/* Runs and answers a command whose time has come. Without the lock: the file and the socket are slow. */
static void complete(struct backend *b, struct backend_item *it)
{
	struct command *cmd = (struct command *)((char *)it - offsetof(struct command, be));
	int status = io_run(it->conn, cmd, it);
	uint64_t done = now_us();

	pthread_mutex_lock(&b->lock);
	b->stats.commands[it->cls]++;
	hist_add(&b->stats.queued[it->cls], it->dispatched_us - it->arrived_us);
	hist_add(&b->stats.latency[it->cls], done - it->arrived_us);
	pthread_mutex_unlock(&b->lock);
	conn_complete(it->conn, cmd, status);
}

static void wait_until(struct backend *b, uint64_t when_us)
{
	struct timespec ts;

	if (when_us == UINT64_MAX) {
		pthread_cond_wait(&b->wake, &b->lock);
		return;
	}
	ts.tv_sec = (time_t)(when_us / 1000000u);
	ts.tv_nsec = (long)(when_us % 1000000u) * 1000;
	pthread_cond_timedwait(&b->wake, &b->lock, &ts);
}

static void *serve(void *arg)
{
	struct backend *b = arg;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		uint64_t now = now_us(), wake = b->service ? b->service->ready_us : UINT64_MAX;

		if (b->service && b->service->ready_us <= now) {
			struct backend_item *it = b->service;

			b->service = it->service_next;
			it->state = BACKEND_EXECUTING;
			b->executing = it->conn;
			pthread_mutex_unlock(&b->lock);
			complete(b, it);
			pthread_mutex_lock(&b->lock);
			b->executing = NULL;
			b->held--;
			pthread_cond_broadcast(&b->idle);
			pthread_cond_signal(&b->room);
			continue;
		}
		if (b->sched.count) {
			uint64_t admit = caps_admit_at(&b->caps, now);

			if (admit <= now) {
				dispatch(b, now);
				continue;
			}
			if (admit < wake)
				wake = admit;
		}
		wait_until(b, wake);
	}
	return NULL;
}

int backend_start(struct target *t)
{
	const struct backend_config *cfg = &t->cfg.backend;
	struct backend *b;
	pthread_condattr_t attr;
	pthread_t thread;

	if (!cfg->on)
		return 0;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->t = t;
	b->cfg = cfg;
	pthread_mutex_init(&b->lock, NULL);
	/* the times are trace_now_us()'s, CLOCK_MONOTONIC: the wait must count on the same clock */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&b->wake, &attr);
	pthread_condattr_destroy(&attr);
	pthread_cond_init(&b->room, NULL);
	pthread_cond_init(&b->idle, NULL);
	sched_init(&b->sched, cfg->max_wait_us);
	caps_init(&b->caps, cfg->iops, cfg->bytes_per_s, cfg->iops_size);
	for (unsigned int i = 0; i < t->n_ns; i++)
		ra_init(&b->ra[i], t->ns[i].blocks, t->cfg.lba_size, cfg->read_ahead_bytes, cfg->read_ahead_cache);
	t->backend = b;
	if (pthread_create(&thread, NULL, serve, b) != 0) {
		t->backend = NULL;
		free(b);
		return -EAGAIN;
	}
	pthread_detach(thread);
	return 0;
}

int backend_submit(struct target *t, struct conn *c, struct command *cmd)
{
	struct backend *b = t->backend;
	struct backend_item *it = &cmd->be;

	pthread_mutex_lock(&b->lock);
	while (b->held >= BACKEND_MAX_HELD)
		pthread_cond_wait(&b->room, &b->lock);
	*it = (struct backend_item){.conn = c, .arrived_us = now_us(), .state = BACKEND_QUEUED};
	it->cls = (uint8_t)backend_classify(t, cmd->sqe);
	/* the wait limit counts the time it waited for a data buffer too: the host's clock started then */
	it->entry.arrived_us = cmd->arrived_us && cmd->arrived_us < it->arrived_us ? cmd->arrived_us : it->arrived_us;
	it->entry.level = (uint8_t)sched_level((enum sched_class)it->cls, b->cfg->hints);
	sched_push(&b->sched, &it->entry);
	b->held++;
	pthread_cond_signal(&b->wake);
	pthread_mutex_unlock(&b->lock);
	return CMD_QUEUED;
}

void backend_cancel(struct target *t, struct conn *c)
{
	struct backend *b = t->backend;
	struct backend_item **pos;

	if (!b)
		return;
	pthread_mutex_lock(&b->lock);
	for (unsigned int l = 0; l < SCHED_LEVELS; l++) {
		struct sched_entry *e = b->sched.head[l];

		while (e) {
			struct sched_entry *next = e->next;

			if (((struct backend_item *)e)->conn == c) {
				sched_remove(&b->sched, e);
				((struct backend_item *)e)->state = BACKEND_IDLE;
				b->held--;
			}
			e = next;
		}
	}
	for (pos = &b->service; *pos;) {
		if ((*pos)->conn == c) {
			(*pos)->state = BACKEND_IDLE;
			*pos = (*pos)->service_next;
			b->held--;
		} else {
			pos = &(*pos)->service_next;
		}
	}
	while (b->executing == c)
		pthread_cond_wait(&b->idle, &b->lock);
	pthread_cond_broadcast(&b->room);
	pthread_mutex_unlock(&b->lock);
}

static void log_line(void *ctx, const char *text)
{
	tlog(ctx, "backend: %s", text);
}

static void trace_line(void *ctx, const char *text)
{
	fprintf(ctx, "# backend %s\n", text);
}

void backend_report(struct target *t)
{
	const struct backend_config *cfg = &t->cfg.backend;
	struct backend_stats *s;
	char config[512];

	if (!t->backend)
		return;
	s = malloc(sizeof(*s));
	if (!s)
		return;
	pthread_mutex_lock(&t->backend->lock);
	memcpy(s, &t->backend->stats, sizeof(*s));
	pthread_mutex_unlock(&t->backend->lock);
	snprintf(config, sizeof(config),
		 "config model=%s scale=%g iops=%" PRIu64 " bytes_per_s=%" PRIu64 " iops_size=%u latency_us=%" PRIu64
		 " read_ahead_bytes=%" PRIu64 " read_ahead_cache=%" PRIu64 " hints=%s max_wait_us=%" PRIu64,
		 cfg->model[0] ? cfg->model : "none", cfg->scale, cfg->iops, cfg->bytes_per_s, cfg->iops_size,
		 cfg->latency_us, cfg->read_ahead_bytes, cfg->read_ahead_cache,
		 cfg->hints == (SCHED_HINT_READ_AHEAD | SCHED_HINT_PLACEMENT) ? "use"
		 : cfg->hints == SCHED_HINT_READ_AHEAD ? "read-ahead"
		 : cfg->hints == SCHED_HINT_PLACEMENT ? "placement" : "ignore",
		 cfg->max_wait_us);
	log_line((void *)t, config);
	stats_lines(s, log_line, (void *)t);
	if (t->trace) {
		pthread_mutex_lock(&t->wlog_lock);
		trace_line(t->trace, config);
		stats_lines(s, trace_line, t->trace);
		fflush(t->trace);
		pthread_mutex_unlock(&t->wlog_lock);
	}
	free(s);
}
