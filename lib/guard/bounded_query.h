/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_BOUNDED_QUERY_H
#define LCLOUD_BOUNDED_QUERY_H

/*
 * Questions that touch another file system, asked with a time bound. The
 * guard asks about storage the write does not touch: a loop device's
 * binding (LOOP_GET_STATUS64 stats the backing file), a swap file, a mount's
 * source, an overlay's layer file. On a FUSE server that stopped answering,
 * or an NFS share out of reach, each of those blocks, and a write to an
 * unrelated file would hang with it. So they are asked in a child process,
 * and what it has not answered within the bound is answered -ETIMEDOUT.
 */
#include <stddef.h>
#include <stdint.h>

/* How long one question may take; a file system that does not answer in this time counts as unresolved. */
#define BOUNDED_QUERY_TIMEOUT_MS 2000

enum bq_op {
	BQ_STAT = 1,        /* stat(PATH), following symbolic links */
	BQ_LOOP_STATUS = 2, /* LOOP_GET_STATUS64 on the open loop device FD */
	BQ_XATTR = 3,       /* lgetxattr(PATH, NAME) */
};

struct bq_stat {
	uint64_t dev, ino, rdev, size;
	uint32_t mode;
};

struct bq_loop {
	uint64_t dev, ino; /* the backing file's device and inode (as its file system's getattr says) */
	uint64_t rdev;     /* the backing inode's rdev: non-zero for a block device */
	uint64_t offset, sizelimit;
};

#define BQ_VALUE_MAX 512

struct bq_item {
	/* the question */
	enum bq_op op;
	const char *path;
	const char *name;
	int fd;
	/* the answer: ERR is 0, -errno, or -ETIMEDOUT when it was not answered within the bound */
	int err;
	struct bq_stat st;
	struct bq_loop loop;
	char value[BQ_VALUE_MAX];
	size_t value_len;
};

/*
 * Answers ITEMS[0..N) in a child process, each within TIMEOUT_MS: one that
 * is not answered in time gets -ETIMEDOUT, the child is killed and a new
 * one goes on with the next. Returns 0 (each item carries its answer) or
 * -errno when no child could be started (then every item is -errno).
 */
int bq_run(struct bq_item *items, unsigned int n, int timeout_ms);

#endif
