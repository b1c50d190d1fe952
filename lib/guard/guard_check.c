/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The write guard for a program that writes a file without a queue
 * (lcloud_guard_check(3)): is the storage of an open file or block device
 * in use, whatever name reaches it? A program that replaces a file by
 * renaming a new one over its name (lcloudctl's output files) writes
 * nothing into it, but the old inode loses that name: if it is a loop
 * device's backing file, a file-backed mount's source or a swap file, the
 * file system goes with it. The decision is the one lcloud_queue_open(3)
 * makes, on who uses the storage only, and it claims nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ctx.h"
#include "guard.h"
#include "holders.h"
#include "probe.h"
#include "report.h"
#include "sysfs.h"
#include "util.h"

/* A block device's own claim: the exclusive open lcloud_queue_open(3) makes, tried and let go. */
static int block_claim(struct lcloud_ctx *ctx, int fd, const char *name, const struct stat *st, int *ret_fd)
{
	char self[64], dir[SYSFS_PATH_MAX], who[4096] = "";

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	*ret_fd = open(self, O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (*ret_fd >= 0)
		return 0;
	if (errno != EBUSY) {
		snprintf(ctx->error, sizeof(ctx->error), "%s: cannot open it to check it: %s", name, strerror(errno));
		return errno == EACCES || errno == EPERM ? -EACCES : -errno;
	}
	if (sysfs_dev_dir(ctx, "block", major(st->st_rdev), minor(st->st_rdev), dir, sizeof(dir)) == 0)
		holders_describe(ctx, dir, who, sizeof(who));
	snprintf(ctx->error, sizeof(ctx->error), "%s is in use: the kernel refused to open it exclusively (%s)", name,
		 who[0] ? who : HOLDERS_INVISIBLE);
	return -EBUSY;
}

LCLOUD_EXPORT int lcloud_guard_check(struct lcloud_ctx *ctx, int fd, uint32_t flags)
{
	struct guard_decision *d = NULL;
	struct lcloud_probe *p = NULL;
	char self[64], name[4096];
	int probe_fd = -1, r;
	struct stat st;
	ssize_t n;

	if (!ctx || fd < 0 || flags)
		return -EINVAL;
	ctx->error[0] = '\0';
	if (ctx_has_sysroot(ctx)) {
		snprintf(ctx->error, sizeof(ctx->error), "a sysroot is for reading captured facts: the write guard "
			 "checks the live system, which %s does not describe", ctx->sysroot);
		return -EOPNOTSUPP;
	}
	if (fstat(fd, &st) < 0)
		return -errno;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = readlink(self, name, sizeof(name) - 1);
	name[n > 0 ? n : 0] = '\0';
	if (S_ISREG(st.st_mode)) {
		p = report_new(name);
		if (!p)
			return -ENOMEM;
		p->target_type = LCLOUD_TARGET_REGULAR;
	} else if (S_ISBLK(st.st_mode)) {
		r = block_claim(ctx, fd, name, &st, &probe_fd);
		if (r < 0)
			return r;
		r = probe_io_target(ctx, probe_fd, name, &p);
		if (r < 0) {
			close(probe_fd);
			snprintf(ctx->error, sizeof(ctx->error), "%s: %s", name, strerror(-r));
			return r;
		}
	} else {
		return -EBADFD;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		r = -ENOMEM;
		goto out;
	}
	r = guard_decide(ctx, fd, p, GUARD_USE_ONLY | GUARD_NO_CLAIMS, d);
	if (r < 0)
		snprintf(ctx->error, sizeof(ctx->error), "%s", d->reason);
	guard_decision_release(d);
out:
	free(d);
	lcloud_probe_free(p);
	if (probe_fd >= 0)
		close(probe_fd);
	return r;
}
