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

static int map_fd(struct storage_env *env, int fd, const struct stat *st, struct storage_map *m)
{
	struct file_ids ids;
	char path[4096];
	int r;

	if (S_ISBLK(st->st_mode))
		return storage_map_blockdev(env, st->st_rdev, 0, STORAGE_END, m);
	if (!S_ISREG(st->st_mode))
		return -EBADFD;
	r = file_ids_of_fd(env, fd, path, sizeof(path), &ids);
	if (r >= 0)
		r = storage_map_file(m, &ids);
	file_ids_free(&ids);
	return r;
}

LCLOUD_EXPORT int lcloud_queue_reaches_file(struct lcloud_ctx *ctx, const struct lcloud_queue *q, int fd)
{
	struct storage_map target = { 0 }, file = { 0 };
	struct storage_env env;
	struct stat qst, fst;
	int qfd = lcloud_queue_get_fd(q), r;

	if (!ctx || qfd < 0 || fd < 0)
		return -EINVAL;
	if (fstat(qfd, &qst) < 0 || fstat(fd, &fst) < 0)
		return -errno;
	if (S_ISREG(qst.st_mode) && S_ISREG(fst.st_mode) && qst.st_dev == fst.st_dev && qst.st_ino == fst.st_ino)
		return 1;
	if ((!S_ISBLK(qst.st_mode) && !S_ISREG(qst.st_mode)) || (!S_ISBLK(fst.st_mode) && !S_ISREG(fst.st_mode)))
		return -EBADFD;
	r = storage_env_open(ctx, &env);
	if (r < 0)
		return r;
	r = map_fd(&env, qfd, &qst, &target);
	if (r >= 0)
		r = map_fd(&env, fd, &fst, &file);
	/* a part not followed could be the file: not known to be apart */
	if (r >= 0)
		r = target.unresolved || file.unresolved ? -EACCES : storage_maps_overlap(&target, &file);
	storage_map_free(&target);
	storage_map_free(&file);
	storage_env_close(&env);
	return r;
}
