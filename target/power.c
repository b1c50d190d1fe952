/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The power-fail model the target keeps. With a volatile write cache on, an
 * acknowledged write stays in memory until a Flush, a FUA write over it, or
 * the cache's own write-back puts it in the backing file (the medium). A
 * write is in flight from its capsule's arrival until it is applied (to the
 * cache or the file); its data arrives under the same lock the cut takes, and
 * it is applied at one moment, so a cut sees each write either in flight,
 * with the bytes that had arrived, or applied, never half applied. A power
 * cut (SIGUSR1, or after N commands) then decides, seeded and reproducibly,
 * what each cached write and each write in flight leaves on the medium as a
 * real device may: all of it, none of it, or some of its logical blocks (of
 * a write in flight, only blocks whose data had arrived). A write the promise
 * covers (within the power-fail atomic unit, crossing no power-fail
 * boundary) lands whole or not at all; flushed and FUA data always survive.
 * A write in flight is never completed. Without a cache, writes in flight
 * are all a cut can tear. In liar mode the promise is advertised and not
 * kept: covered writes tear like any other, the negative control of the
 * crash lab. Every decision is written to the report, one line per write.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns_guard.h"
#include "nvme_tcp.h"
#include "power.h"
#include "target.h"
#include "write_log.h"

/* splitmix64: one write's decisions from the seed and its sequence number, whatever the threads did */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* A cached write to the medium; dropped when its namespace is write protected (its storage has a new user). */
static int destage(struct target *t, const struct pending_write *w)
{
	uint32_t lba = t->cfg.lba_size;
	int r;

	if (ns_write_begin(t, w->ns) < 0)
		return 0; /* a Flush of that namespace fails: ns_refuses() */
	r = ns_pwrite(t, w->ns, w->data, (uint64_t)w->nlb * lba, w->slba * lba);
	ns_write_end(t, w->ns);
	return r;
}

/* Takes the oldest cached write off the list and writes it to the medium. Under cache_lock. */
static int destage_oldest(struct target *t)
{
	struct pending_write *w = t->cache_head;
	int r;

	if (!w)
		return 0;
	r = destage(t, w);
	t->cache_head = w->next;
	if (!t->cache_head)
		t->cache_tail = NULL;
	t->cache_held -= (uint64_t)w->nlb * t->cfg.lba_size;
	free(w->data);
	free(w);
	return r;
}

static struct pending_write *pending_new(struct target *t, unsigned int ns, uint64_t slba, uint32_t nlb,
					 const uint8_t *data)
{
	uint64_t len = (uint64_t)nlb * t->cfg.lba_size;
	struct pending_write *w = calloc(1, sizeof(*w));

	if (!w || !(w->data = malloc(len))) {
		free(w);
		return NULL;
	}
	memcpy(w->data, data, len);
	w->ns = ns;
	w->slba = slba;
	w->nlb = nlb;
	return w;
}

/* Appends W to the cache, writing back the oldest while it is full. Under cache_lock. */
static int cache_insert(struct target *t, struct pending_write *w)
{
	uint64_t len = (uint64_t)w->nlb * t->cfg.lba_size;
	int r = 0;

	while (t->cache_head && t->cache_held + len > t->cfg.cache_bytes && r == 0)
		r = destage_oldest(t);
	w->seq = ++t->cache_seq;
	if (t->cache_tail)
		t->cache_tail->next = w;
	else
		t->cache_head = w;
	t->cache_tail = w;
	t->cache_held += len;
	return r;
}

int cache_write(struct target *t, unsigned int ns, uint64_t slba, uint32_t nlb, const uint8_t *data)
{
	struct pending_write *w = pending_new(t, ns, slba, nlb, data);
	int r;

	if (!w)
		return -ENOMEM;
	pthread_mutex_lock(&t->cache_lock);
	r = cache_insert(t, w);
	pthread_mutex_unlock(&t->cache_lock);
	return r;
}

void cache_overlay(struct target *t, unsigned int ns, uint64_t slba, uint32_t nlb, uint8_t *buf)
{
	uint32_t lba = t->cfg.lba_size;

	pthread_mutex_lock(&t->cache_lock);
	for (const struct pending_write *w = t->cache_head; w; w = w->next) {
		uint64_t from = w->slba > slba ? w->slba : slba;
		uint64_t to = w->slba + w->nlb < slba + nlb ? w->slba + w->nlb : slba + nlb;

		if (w->ns != ns || from >= to)
			continue;
		memcpy(buf + (from - slba) * lba, w->data + (from - w->slba) * lba, (to - from) * lba);
	}
	pthread_mutex_unlock(&t->cache_lock);
}

int cache_flush(struct target *t)
{
	int r = 0;

	pthread_mutex_lock(&t->cache_lock);
	while (t->cache_head && r == 0)
		r = destage_oldest(t);
	for (unsigned int i = 0; i < t->n_ns && r == 0; i++)
		if (fdatasync(t->ns[i].fd) < 0)
			r = -errno;
	pthread_mutex_unlock(&t->cache_lock);
	return r;
}

uint64_t cache_bytes(struct target *t)
{
	uint64_t n;

	pthread_mutex_lock(&t->cache_lock);
	n = t->cache_held;
	pthread_mutex_unlock(&t->cache_lock);
	return n;
}

/* Does the promise cover this write: within the power-fail unit, across no power-fail boundary? */
static bool promised_whole(const struct target *t, uint64_t slba, uint32_t nlb)
{
	const struct target_config *cfg = &t->cfg;
	uint64_t offset = slba * cfg->lba_size, len = (uint64_t)nlb * cfg->lba_size;
	bool ns_fields = cfg->nawun || cfg->nawupf || cfg->nabsn || cfg->nabspf || cfg->nabo;
	uint64_t unit = ns_fields ? (cfg->nawupf ? cfg->nawupf : cfg->awupf) : cfg->awupf;

	if (nlb == 1)
		return true; /* a logical block is never torn: the model's grain */
	if (!unit)
		unit = cfg->lba_size;
	if (len > unit)
		return false;
	if (ns_fields && cfg->nabspf) {
		uint64_t first, last;

		if (offset < cfg->nabo)
			return offset + len <= cfg->nabo;
		first = (offset - cfg->nabo) / cfg->nabspf;
		last = (offset + len - 1 - cfg->nabo) / cfg->nabspf;
		return first == last;
	}
	return true;
}

/* Under cache_lock. */
static void inflight_unlink(struct target *t, struct command *cmd)
{
	if (!cmd->inflight)
		return;
	if (cmd->inflight_prev)
		cmd->inflight_prev->inflight_next = cmd->inflight_next;
	else
		t->inflight_head = cmd->inflight_next;
	if (cmd->inflight_next)
		cmd->inflight_next->inflight_prev = cmd->inflight_prev;
	else
		t->inflight_tail = cmd->inflight_prev;
	cmd->inflight = false;
	cmd->inflight_prev = cmd->inflight_next = NULL;
}

void power_inflight_add(struct target *t, struct command *cmd, unsigned int ns, uint64_t slba, uint32_t nlb)
{
	pthread_mutex_lock(&t->cache_lock);
	cmd->ns_index = ns;
	cmd->slba = slba;
	cmd->nlb = nlb;
	cmd->inflight_seq = ++t->inflight_seq;
	cmd->inflight = true;
	cmd->inflight_next = NULL;
	cmd->inflight_prev = t->inflight_tail;
	if (t->inflight_tail)
		t->inflight_tail->inflight_next = cmd;
	else
		t->inflight_head = cmd;
	t->inflight_tail = cmd;
	pthread_mutex_unlock(&t->cache_lock);
}

void power_inflight_remove(struct target *t, struct command *cmd)
{
	bool cut;

	if (!cmd || !cmd->inflight)
		return;
	pthread_mutex_lock(&t->cache_lock);
	inflight_unlink(t, cmd);
	cut = cmd->cut_pending && !t->powered_off;
	pthread_mutex_unlock(&t->cache_lock);
	/* the write the cut waits on is aborted (its connection closed): the power goes now, not never */
	if (cut)
		power_cut(t, "the command count was reached");
}

void power_data_arrives(struct target *t, struct command *cmd, const uint8_t *src, uint32_t len)
{
	bool cut;

	pthread_mutex_lock(&t->cache_lock);
	memcpy(cmd->data + cmd->received, src, len);
	cmd->received += len;
	cut = cmd->cut_pending && cmd->received >= cmd->cut_at && !t->powered_off;
	pthread_mutex_unlock(&t->cache_lock);
	if (cut)
		power_cut(t, "the command count was reached");
}

int power_apply_write(struct target *t, struct command *cmd, bool to_cache, uint32_t wlog_flags)
{
	uint32_t lba = t->cfg.lba_size;
	struct pending_write *w = NULL;
	int r;

	if (to_cache && !(w = pending_new(t, cmd->ns_index, cmd->slba, cmd->nlb, cmd->data)))
		return -ENOMEM;
	pthread_mutex_lock(&t->cache_lock);
	if (t->powered_off) {
		pthread_mutex_unlock(&t->cache_lock);
		free(w ? w->data : NULL);
		free(w);
		return -ESHUTDOWN;
	}
	/* a namespace whose storage gained a user takes no write, cached or not */
	if (ns_write_begin(t, cmd->ns_index) < 0) {
		inflight_unlink(t, cmd);
		pthread_mutex_unlock(&t->cache_lock);
		free(w ? w->data : NULL);
		free(w);
		return -EROFS;
	}
	if (to_cache)
		ns_write_end(t, cmd->ns_index); /* the cache's write-back passes the gate itself */
	/* logged as it is applied: the log's order is the medium's; a write the log cannot hold is not applied */
	r = wlog_append(t, cmd->ns_index, &(struct wlog_entry){cmd->slba, cmd->nlb, wlog_flags, cmd->data}, 1);
	if (r < 0) {
		if (!to_cache)
			ns_write_end(t, cmd->ns_index);
		inflight_unlink(t, cmd); /* it fails now: no later cut may land it */
		pthread_mutex_unlock(&t->cache_lock);
		free(w ? w->data : NULL);
		free(w);
		return r;
	}
	if (to_cache) {
		r = cache_insert(t, w);
	} else {
		r = ns_pwrite(t, cmd->ns_index, cmd->data, (uint64_t)cmd->nlb * lba, cmd->slba * lba);
		ns_write_end(t, cmd->ns_index);
	}
	inflight_unlink(t, cmd);
	pthread_mutex_unlock(&t->cache_lock);
	return r;
}

int power_command_arrives(struct target *t, struct command *cmd)
{
	bool on, falls = false, later = false;

	pthread_mutex_lock(&t->cache_lock);
	on = !t->powered_off;
	if (on && t->cfg.cut_after) {
		t->commands++;
		falls = t->commands == t->cfg.cut_after + 1;
		/* a later command on another queue, while the falling write's data still arrives: the power goes now */
		later = t->commands > t->cfg.cut_after + 1;
	}
	if (on && falls && cmd->inflight && cmd->received < cmd->data_len) {
		/* a seeded point in its data, in whole blocks: 0 cuts before any of it arrived */
		uint32_t blocks = cmd->data_len / t->cfg.lba_size;

		cmd->cut_at = (uint32_t)(mix(t->cfg.seed ^ 0x6375742d6166746full) % (blocks + 1u)) * t->cfg.lba_size;
		cmd->cut_pending = true;
		falls = cmd->cut_at <= cmd->received;
	}
	pthread_mutex_unlock(&t->cache_lock);
	if (!on)
		return -ESHUTDOWN;
	if (falls || later)
		power_cut(t, "the command count was reached");
	return 0;
}

/* One write's fate, decided from R, written to the medium, and the blocks it wrote listed in BLOCKS. */
enum outcome { WHOLE, LOST, TORN };

static enum outcome decide(struct target *t, uint64_t r, unsigned int ns, uint64_t slba, uint32_t nlb,
			   uint32_t arrived, const uint8_t *data, bool covered, char *blocks, size_t blocks_len)
{
	uint32_t lba = t->cfg.lba_size;
	bool keeps = covered && !(t->cfg.liar && nlb > 1);
	enum outcome choice;
	size_t used = 0;

	if (arrived == nlb)
		choice = (enum outcome)(r % (keeps ? 2 : 3));
	else if (keeps || arrived == 0)
		choice = LOST; /* whole needs data that never arrived */
	else
		choice = r % 2 ? TORN : LOST;
	if (choice != LOST && ns_write_begin(t, ns) < 0)
		return LOST; /* its storage has a new user: nothing reaches it */
	if (choice == WHOLE) {
		ns_pwrite(t, ns, data, (uint64_t)nlb * lba, slba * lba);
	} else if (choice == TORN) {
		/* each block on its own: at least one written and one not, so the tear is real */
		uint64_t bits = mix(r);
		uint32_t keep = (uint32_t)(bits % arrived), drop;

		if (arrived == nlb) {
			drop = (uint32_t)((bits >> 32) % (nlb - 1));
			if (drop >= keep)
				drop++;
		} else {
			drop = nlb; /* the blocks that never arrived are the ones not written */
		}
		for (uint32_t b = 0; b < arrived; b++) {
			if (b != keep && (b == drop || !(mix(bits + b) & 1)))
				continue;
			ns_pwrite(t, ns, data + (uint64_t)b * lba, lba, (slba + b) * lba);
			if (used < blocks_len - 12)
				used += (size_t)snprintf(blocks + used, blocks_len - used, "%s%u", used ? "," : "", b);
		}
	}
	if (choice != LOST)
		ns_write_end(t, ns);
	return choice;
}

static const char *const outcome_names[] = {"whole", "lost", "torn"};

void power_cut(struct target *t, const char *why)
{
	FILE *report = NULL;
	uint64_t n = 0, counts[3] = {0}, n_flight = 0, flight[3] = {0};
	uint32_t lba = t->cfg.lba_size;
	char tmp[sizeof(t->cfg.report_path) + 16];
	bool failed = false;

	pthread_mutex_lock(&t->cache_lock);
	t->powered_off = true;
	if (t->cfg.report_path[0]) {
		report = power_report_begin(t, tmp, sizeof(tmp));
		failed = !report;
	}
	if (report)
		fprintf(report, "# lcloud-target power cut: %s; seed %" PRIu64 "; %s; %" PRIu64 " commands\n"
			"# seq nsid slba nlb covered outcome blocks-written state blocks-arrived\n", why, t->cfg.seed,
			t->cfg.liar ? "liar (the promise is not kept)" : "the promise is kept", t->commands);
	/* the cache first, oldest first; then the writes in flight, which no acknowledged write can follow */
	for (struct pending_write *w = t->cache_head; w; w = w->next, n++) {
		char blocks[80] = "";
		bool covered = promised_whole(t, w->slba, w->nlb);
		enum outcome o = decide(t, mix(t->cfg.seed ^ mix(w->seq)), w->ns, w->slba, w->nlb, w->nlb, w->data,
					covered, blocks, sizeof(blocks));

		counts[o]++;
		if (report)
			fprintf(report, "%" PRIu64 " %u %" PRIu64 " %u %s %s %s acknowledged %u\n", w->seq, w->ns + 1,
				w->slba, w->nlb, covered ? "covered" : "uncovered", outcome_names[o],
				o == TORN ? blocks : "-", w->nlb);
	}
	for (struct command *cmd = t->inflight_head; cmd; cmd = cmd->inflight_next, n_flight++) {
		char blocks[80] = "";
		bool covered = promised_whole(t, cmd->slba, cmd->nlb);
		uint32_t arrived = cmd->received / lba;
		/* its buffer is there once data arrived (a write still waiting for one has none) */
		uint8_t *data = cmd->received ? cmd->data : NULL;
		/* a salt apart from the cache's sequence numbers: the two orders are separate */
		enum outcome o = decide(t, mix(t->cfg.seed ^ mix(cmd->inflight_seq ^ 0x696e2d666c696768ull)),
					cmd->ns_index, cmd->slba, cmd->nlb, arrived, data, covered, blocks, sizeof(blocks));

		flight[o]++;
		if (o != LOST) {
			/* what landed is in the log, as the commands applied before it are; blocks that never arrived are zeros */
			memset(data + cmd->received, 0, cmd->data_len - cmd->received);
			if (wlog_append(t, cmd->ns_index, &(struct wlog_entry){cmd->slba, cmd->nlb, 0, data}, 1) < 0)
				failed = true; /* logged: the log lacks what the cut landed */
		}
		if (report)
			fprintf(report, "%" PRIu64 " %u %" PRIu64 " %u %s %s %s in-flight %u\n", cmd->inflight_seq,
				cmd->ns_index + 1, cmd->slba, cmd->nlb, covered ? "covered" : "uncovered",
				outcome_names[o], o == TORN ? blocks : "-", arrived);
	}
	for (unsigned int i = 0; i < t->n_ns; i++) {
		if (fdatasync(t->ns[i].fd) < 0) {
			tlog(t, "namespace %u: syncing %s at the cut: %s", i + 1, t->ns[i].path, strerror(errno));
			failed = true;
		}
	}
	if (wlog_sync(t, ~0u) < 0)
		failed = true;
	if (t->trace && fflush(t->trace) != 0)
		failed = true;
	if (report) {
		fprintf(report, "# %" PRIu64 " cached writes: %" PRIu64 " whole, %" PRIu64 " lost, %" PRIu64 " torn\n", n,
			counts[WHOLE], counts[LOST], counts[TORN]);
		fprintf(report, "# %" PRIu64 " writes in flight: %" PRIu64 " whole, %" PRIu64 " lost, %" PRIu64 " torn\n",
			n_flight, flight[WHOLE], flight[LOST], flight[TORN]);
		if (power_report_commit(t, report, tmp, sizeof(tmp)) < 0)
			failed = true;
	}
	tlog(t, "power cut (%s): %" PRIu64 " cached writes, %" PRIu64 " whole, %" PRIu64 " lost, %" PRIu64 " torn; "
	     "%" PRIu64 " in flight, %" PRIu64 " whole, %" PRIu64 " lost, %" PRIu64 " torn%s",
	     why, n, counts[WHOLE], counts[LOST], counts[TORN], n_flight, flight[WHOLE], flight[LOST], flight[TORN],
	     failed ? "; what it left is not all recorded (see above): exit status 3" : "");
	/* the power is off: no connection gets another byte, as if the machine had stopped */
	_exit(failed ? 3 : 0);
}
