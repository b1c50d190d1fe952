/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The power-fail model the target keeps. With a volatile write cache on, an
 * acknowledged write stays in memory until a Flush, a FUA write over it, or
 * the cache's own write-back puts it in the backing file (the medium). A
 * power cut (SIGUSR1, or after N commands) then decides, seeded and
 * reproducibly, what each cached write leaves on the medium as a real device
 * may: all of it, none of it, or some of its logical blocks. A write the
 * promise covers (within the power-fail atomic unit, crossing no power-fail
 * boundary) lands whole or not at all; flushed and FUA data always survive.
 * In liar mode the promise is advertised and not kept: covered writes tear
 * like any other, the negative control of the crash lab. Every decision is
 * written to the report, one line per cached write.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static int write_all(int fd, const uint8_t *buf, uint64_t len, uint64_t offset)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)offset);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (uint64_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

static int destage(struct target *t, const struct pending_write *w)
{
	uint32_t lba = t->cfg.lba_size;

	return write_all(t->ns[w->ns].fd, w->data, (uint64_t)w->nlb * lba, w->slba * lba);
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

int cache_write(struct target *t, unsigned int ns, uint64_t slba, uint32_t nlb, const uint8_t *data)
{
	uint64_t len = (uint64_t)nlb * t->cfg.lba_size;
	struct pending_write *w = calloc(1, sizeof(*w));
	int r = 0;

	if (!w || !(w->data = malloc(len))) {
		free(w);
		return -ENOMEM;
	}
	memcpy(w->data, data, len);
	w->ns = ns;
	w->slba = slba;
	w->nlb = nlb;
	pthread_mutex_lock(&t->cache_lock);
	while (t->cache_head && t->cache_held + len > t->cfg.cache_bytes && r == 0)
		r = destage_oldest(t);
	w->seq = ++t->cache_seq;
	if (t->cache_tail)
		t->cache_tail->next = w;
	else
		t->cache_head = w;
	t->cache_tail = w;
	t->cache_held += len;
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
static bool promised_whole(const struct target *t, const struct pending_write *w)
{
	const struct target_config *cfg = &t->cfg;
	uint64_t offset = w->slba * cfg->lba_size, len = (uint64_t)w->nlb * cfg->lba_size;
	bool ns_fields = cfg->nawun || cfg->nawupf || cfg->nabsn || cfg->nabspf || cfg->nabo;
	uint64_t unit = ns_fields ? (cfg->nawupf ? cfg->nawupf : cfg->awupf) : cfg->awupf;

	if (w->nlb == 1)
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

bool power_command_arrives(struct target *t)
{
	bool on;

	pthread_mutex_lock(&t->cache_lock);
	on = !t->powered_off;
	if (on && t->cfg.cut_after) {
		t->commands++;
		if (t->commands > t->cfg.cut_after)
			on = false;
	}
	pthread_mutex_unlock(&t->cache_lock);
	if (!on && !t->powered_off)
		power_cut(t, "the command count was reached");
	return on;
}

void power_cut(struct target *t, const char *why)
{
	FILE *report = NULL;
	uint64_t n = 0, whole = 0, lost = 0, torn = 0;
	uint32_t lba = t->cfg.lba_size;

	pthread_mutex_lock(&t->cache_lock);
	t->powered_off = true;
	if (t->cfg.report_path[0]) {
		/* a new file only: O_EXCL never opens a device node or someone's file */
		int fd = open(t->cfg.report_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

		report = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!report)
			tlog(t, "power report %s: %s", t->cfg.report_path, strerror(errno));
	}
	if (report)
		fprintf(report, "# lcloud-target power cut: %s; seed %" PRIu64 "; %s; %" PRIu64 " commands\n"
			"# seq nsid slba nlb covered outcome blocks-written\n", why, t->cfg.seed,
			t->cfg.liar ? "liar (the promise is not kept)" : "the promise is kept", t->commands);
	for (struct pending_write *w = t->cache_head; w; w = w->next, n++) {
		uint64_t r = mix(t->cfg.seed ^ mix(w->seq));
		bool covered = promised_whole(t, w);
		bool keeps = covered && !(t->cfg.liar && w->nlb > 1);
		unsigned int choice = (unsigned int)(r % (keeps ? 2 : 3));
		const char *outcome = choice == 0 ? "whole" : choice == 1 ? "lost" : "torn";
		char blocks[80] = "";
		size_t used = 0;

		if (choice == 0) {
			destage(t, w);
			whole++;
		} else if (choice == 1) {
			lost++;
		} else {
			/* each block on its own: at least one written and one not, so the tear is real */
			uint64_t bits = mix(r), written = 0;
			uint32_t keep = (uint32_t)(bits % w->nlb), drop = (uint32_t)((bits >> 32) % (w->nlb - 1));

			if (drop >= keep)
				drop++;
			for (uint32_t b = 0; b < w->nlb; b++) {
				bool on = b == keep || (b != drop && (mix(bits + b) & 1));

				if (!on)
					continue;
				write_all(t->ns[w->ns].fd, w->data + (uint64_t)b * lba, lba, (w->slba + b) * lba);
				written++;
				if (used < sizeof(blocks) - 12)
					used += (size_t)snprintf(blocks + used, sizeof(blocks) - used, "%s%u", used ? "," : "", b);
			}
			torn++;
		}
		if (report)
			fprintf(report, "%" PRIu64 " %u %" PRIu64 " %u %s %s %s\n", w->seq, w->ns + 1, w->slba, w->nlb,
				covered ? "covered" : "uncovered", outcome, choice == 2 ? blocks : "-");
	}
	for (unsigned int i = 0; i < t->n_ns; i++)
		fdatasync(t->ns[i].fd);
	wlog_sync(t);
	if (t->trace)
		fflush(t->trace);
	if (report) {
		fprintf(report, "# %" PRIu64 " cached writes: %" PRIu64 " whole, %" PRIu64 " lost, %" PRIu64 " torn\n", n,
			whole, lost, torn);
		fclose(report);
	}
	tlog(t, "power cut (%s): %" PRIu64 " cached writes, %" PRIu64 " whole, %" PRIu64 " lost, %" PRIu64 " torn",
	     why, n, whole, lost, torn);
	/* the power is off: no connection gets another byte, as if the machine had stopped */
	_exit(0);
}
