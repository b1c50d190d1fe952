/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether a write through a queue can land in a given file: a program that
 * writes one file from others (a crash image from a base image and a write
 * log) must not write over its own inputs, and names cannot tell. A loop
 * device over a loop device over the input, or a partition of one, reaches
 * the input's bytes under another name; the storage maps of the queue's
 * device and of the file say so whatever the path.
 */
#include <errno.h>
#include <sys/stat.h>

#include "queue.h"
#include "storage_map.h"
#include "util.h"

LCLOUD_EXPORT int lcloud_queue_reaches_file(struct lcloud_ctx *ctx, const struct lcloud_queue *q, int fd)
{
	struct storage_map target = { 0 }, file = { 0 };
	struct stat qst, fst;
	int qfd = lcloud_queue_get_fd(q), r;

	if (!ctx || qfd < 0 || fd < 0)
		return -EINVAL;
	if (fstat(qfd, &qst) < 0 || fstat(fd, &fst) < 0)
		return -errno;
	if (S_ISREG(qst.st_mode) && S_ISREG(fst.st_mode))
		return qst.st_dev == fst.st_dev && qst.st_ino == fst.st_ino;
	if (S_ISBLK(qst.st_mode))
		r = storage_map_blockdev(ctx, qst.st_rdev, 0, STORAGE_END, &target);
	else if (S_ISREG(qst.st_mode))
		r = storage_map_file(&target, qst.st_dev, qst.st_ino);
	else
		return -EBADFD;
	if (r >= 0) {
		if (S_ISBLK(fst.st_mode))
			r = storage_map_blockdev(ctx, fst.st_rdev, 0, STORAGE_END, &file);
		else if (S_ISREG(fst.st_mode))
			r = storage_map_file(&file, fst.st_dev, fst.st_ino);
		else
			r = -EBADFD;
	}
	/* a part not followed could be the file: not known to be apart */
	if (r >= 0)
		r = target.unresolved || file.unresolved ? -EACCES : storage_maps_overlap(&target, &file);
	storage_map_free(&target);
	storage_map_free(&file);
	return r;
}
