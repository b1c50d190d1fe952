/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A writing queue keeps watching its storage for as long as it lives. At
 * open, after the write guard: a regular file that a loop device maps is
 * refused (the guard claimed the loop; its backing file is in use however
 * idle the loop is), and one that another program holds is refused unless
 * the caller says the file is its own (LCLOUD_QUEUE_OWN_FILE: a storage
 * engine's data file, which its own processes share); otherwise the queue
 * keeps the write lease it asked with (held_file.c); an overlay file's lease
 * is the overlay inode's, so its devices and mounts are watched too, and the
 * guard asks /proc about its layer files once a second. Before each submission
 * it looks at the watch (watch.c): a broken lease, or a block device or
 * mount that changed and makes the guard's storage check fail or find a new
 * sharer, stops the queue. A stopped queue submits nothing again (-EBUSY,
 * with the reason), and once what was in flight is reaped it lets go of its
 * lease and claims, so the new user proceeds only after the last write.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "held_file.h"
#include "layer_kind.h"
#include "queue.h"
#include "report.h"
#include "sysfs.h"
#include "util.h"

/* The kernel's name of block device DEV ("loop7"), or its numbers. */
static void device_name(const struct lcloud_ctx *ctx, dev_t dev, char *buf, size_t size)
{
	char dir[SYSFS_PATH_MAX];

	if (sysfs_dev_dir(ctx, "block", major(dev), minor(dev), dir, sizeof(dir)) == 0)
		snprintf(buf, size, "/dev/%s", path_basename(dir));
	else
		snprintf(buf, size, "block device %u:%u", major(dev), minor(dev));
}

/*
 * How many devices the write guard claimed for the queue because they share its storage (not those claimed
 * only because whether they do could not be told: a loop over a stalled server's file, a chain too deep).
 */
static unsigned int n_claims(const struct lcloud_queue *q)
{
	unsigned int n = 0;

	for (unsigned int i = 0; q->guard && i < q->guard->claims.n; i++)
		n += !q->guard->claims.may_share[i];
	return n;
}

/* The name of the first device claimed because it shares the storage, from claim FROM on. */
static void claim_name(const struct lcloud_ctx *ctx, const struct lcloud_queue *q, unsigned int from, char *buf,
		       size_t size)
{
	for (unsigned int i = from; i < q->guard->claims.n; i++)
		if (!q->guard->claims.may_share[i]) {
			device_name(ctx, q->guard->claims.devs[i], buf, size);
			return;
		}
	snprintf(buf, size, "a device");
}

/*
 * The claimed loop device right over the queue's file (its loop/backing_file is the file), which a chain
 * of loops over that one may precede among the claims; else the first claimed device.
 */
static void direct_loop_name(const struct lcloud_ctx *ctx, const struct lcloud_queue *q, char *buf, size_t size)
{
	char dir[SYSFS_PATH_MAX], backing[SYSFS_PATH_MAX];
	struct stat file, st;

	if (fstat(q->fd, &file) == 0)
		for (unsigned int i = 0; i < q->guard->claims.n; i++) {
			dev_t dev = q->guard->claims.devs[i];

			if (q->guard->claims.may_share[i] ||
			    sysfs_dev_dir(ctx, "block", major(dev), minor(dev), dir, sizeof(dir)) < 0 ||
			    sysfs_read_attr(ctx, dir, "loop/backing_file", backing, sizeof(backing)) <= 0)
				continue;
			backing[strcspn(backing, "\n")] = '\0';
			if (stat(backing, &st) == 0 && st.st_dev == file.st_dev && st.st_ino == file.st_ino) {
				snprintf(buf, size, "/dev/%s", path_basename(dir));
				return;
			}
		}
	claim_name(ctx, q, 0, buf, size);
}

/* Is FD a file on overlayfs, whose write lease is the overlay inode's and not its layer file's? */
static bool on_overlay(int fd)
{
	struct statfs sfs;

	return fstatfs(fd, &sfs) == 0 && sfs.f_type == OVERLAYFS_SUPER_MAGIC;
}

/* The target as the write guard names it: the path of a file, /dev/NAME of a device. */
static char *target_name(const struct lcloud_queue *q, const char *path)
{
	char buf[300];

	if (S_ISREG(q->target_mode))
		return strdup(path);
	for (unsigned int i = 0; i < q->probe->n_layers; i++)
		if (layer_kind_is_block_device(q->probe->layers[i].kind)) {
			snprintf(buf, sizeof(buf), "/dev/%s", q->probe->layers[i].name);
			return strdup(buf);
		}
	return strdup(path);
}

/* Lets go of what kept the storage from its new user: the lease and the claims on devices that share it. */
static void release(struct lcloud_queue *q)
{
	storage_watch_release(&q->watch);
	guard_decision_release(q->guard);
}

__attribute__((format(printf, 2, 3))) static int stop(struct lcloud_queue *q, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(q->error.text, sizeof(q->error.text), fmt, ap);
	va_end(ap);
	q->stopped = true;
	q->fast_read = q->fast_write = false; /* every I/O takes prep(), which refuses it */
	free(q->stop_reason);
	q->stop_reason = strdup(q->error.text);
	if (!q->inflight)
		release(q);
	return -EBUSY;
}

int queue_watch_open(struct lcloud_ctx *ctx, struct lcloud_queue *q, const char *path, uint32_t flags)
{
	bool regular = S_ISREG(q->target_mode), leased = false, layered;
	char loop[300];
	int r;

	if (!q->writable)
		return 0;
	q->watch_name = target_name(q, path);
	if (!q->watch_name)
		return -ENOMEM;
	if (regular && n_claims(q)) {
		direct_loop_name(ctx, q, loop, sizeof(loop));
		return queue_fail(q, -EBUSY, "%s is the backing file of %s%s: the loop device keeps it open, and a "
				  "write here goes under whatever reads or mounts that device; --force does not override "
				  "this, nor does LCLOUD_QUEUE_OWN_FILE: detach it first (losetup -d)", q->watch_name, loop,
				  n_claims(q) > 1 ? " and other loop devices" : "");
	}
	if (regular && !(flags & LCLOUD_QUEUE_OWN_FILE)) {
		r = held_file_check(q->fd, q->watch_name, true,
				    "stop it first (a program that writes its own data file says so to the library: "
				    "LCLOUD_QUEUE_OWN_FILE)", q->error.text, sizeof(q->error.text));
		if (r < 0)
			return r;
		leased = r == HELD_FREE_LEASED;
	}
	/*
	 * What a lease cannot see is watched through the devices and mounts, and checked again by the guard. On
	 * overlayfs the lease is the overlay inode's: a loop device or a mount over the layer file underneath,
	 * or a program that opens it by its own name, does not break it; so the devices and mounts are watched
	 * too, and the guard looks again once a second for a program that holds the layer file.
	 */
	layered = regular && on_overlay(q->fd);
	if ((!leased || layered) && lcloud_ctx_new(&q->watch_ctx) < 0)
		return -ENOMEM;
	r = storage_watch_start(&q->watch, leased ? q->fd : -1, !leased || layered);
	if (r < 0)
		return queue_fail(q, r, "%s: cannot watch its storage for new users: %s", q->watch_name, strerror(-r));
	if (layered && !q->own_file)
		storage_watch_recheck_every_second(&q->watch);
	q->watching = true;
	return 0;
}

/* The write guard's storage check again: a refusal, or a sharer it had not claimed, stops the queue. */
static int recheck(struct lcloud_queue *q)
{
	unsigned int before = n_claims(q), first_new = q->guard ? q->guard->claims.n : 0;
	char name[300];
	int r;

	q->error.text[0] = '\0';
	/* only who uses the storage: what it holds is the queue's own writing by now */
	r = queue_guard(q->watch_ctx, q, GUARD_USE_ONLY | (q->own_file ? 0 : GUARD_LAYER_HOLDERS));
	if (r < 0) {
		char *why = strdup(q->error.text);

		r = stop(q, "%s gained a user after the queue's check, so the queue stopped writing: %s", q->watch_name,
			 why ? why : strerror(-r));
		free(why);
		return r;
	}
	if (n_claims(q) > before) {
		claim_name(q->watch_ctx, q, first_new, name, sizeof(name));
		return stop(q, "%s gained a user after the queue's check, so the queue stopped writing: %s was set up "
			    "over the same storage%s while the queue was open; nothing more is written through it",
			    q->watch_name, name, n_claims(q) > before + 1 ? " (and other devices)" : "");
	}
	return 0;
}

int queue_watch_check(struct lcloud_queue *q)
{
	if (q->stopped) {
		snprintf(q->error.text, sizeof(q->error.text), "%s", q->stop_reason ? q->stop_reason : "stopped");
		return -EBUSY;
	}
	switch (storage_watch_poll(&q->watch)) {
	case WATCH_QUIET:
		return 0;
	case WATCH_LEASE_BROKEN_READ:
	case WATCH_LEASE_BROKEN_WRITE:
		/* the opener is not in /proc yet: its open() waits for the lease */
		return stop(q, "%s gained a user after the queue's check, so the queue stopped writing: another program "
			    "opened it (the write lease the queue held broke), and it proceeds once the writes in flight "
			    "are done; nothing more is written through this queue", q->watch_name);
	case WATCH_DEVICES_CHANGED:
		return recheck(q);
	}
	return 0;
}

void queue_watch_drained(struct lcloud_queue *q)
{
	if (q->stopped && !q->inflight)
		release(q);
}

void queue_watch_free(struct lcloud_queue *q)
{
	storage_watch_free(&q->watch);
	lcloud_ctx_free(q->watch_ctx);
	q->watch_ctx = NULL;
	free(q->stop_reason);
	free(q->watch_name);
	q->stop_reason = q->watch_name = NULL;
}

LCLOUD_EXPORT int lcloud_queue_check_storage(struct lcloud_queue *q)
{
	int r;

	if (!q)
		return -EINVAL;
	if (!q->watching)
		return 0;
	r = queue_watch_check(q);
	queue_watch_drained(q);
	return r;
}
