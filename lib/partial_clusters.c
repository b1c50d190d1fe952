/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ext4 with bigalloc allocates in clusters but maps a file in blocks: a
 * cluster whose blocks are in different states (written, unwritten, not
 * mapped at all, as after a write of one block or a punched hole) takes a
 * direct write over it as one write per state, several device commands. The
 * file's extent map (FIEMAP) shows such clusters: an extent that starts or
 * ends inside a cluster.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "filesystem.h"

#define EXTENTS_PER_CALL 256

/* Counts extent edges inside a cluster of CLUSTER bytes in file FD; -errno. */
static int count_partial(int fd, uint64_t cluster, uint64_t *ret)
{
	size_t size = sizeof(struct fiemap) + EXTENTS_PER_CALL * sizeof(struct fiemap_extent);
	struct fiemap *fm = calloc(1, size);
	uint64_t start = 0, n = 0;
	bool last = false;

	if (!fm)
		return -ENOMEM;
	while (!last) {
		memset(fm, 0, size);
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_extent_count = EXTENTS_PER_CALL;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
			int r = -errno;

			free(fm);
			return r;
		}
		if (fm->fm_mapped_extents == 0)
			break;
		for (unsigned int i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];

			if (e->fe_logical % cluster || (e->fe_logical + e->fe_length) % cluster)
				n++;
			if (e->fe_flags & FIEMAP_EXTENT_LAST)
				last = true;
			start = e->fe_logical + e->fe_length;
		}
	}
	free(fm);
	*ret = n;
	return 0;
}

int add_partial_clusters(struct lcloud_layer *l, int fd, uint64_t cluster)
{
	static const char src[] = "ioctl:FS_IOC_FIEMAP";
	char link[64], why[300];
	uint64_t n = 0;
	int rfd, r;

	/* FIEMAP wants an open file; an O_PATH descriptor is opened again */
	r = count_partial(fd, cluster, &n);
	if (r == -EBADF) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		rfd = open(link, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		r = rfd < 0 ? -errno : count_partial(rfd, cluster, &n);
		if (rfd >= 0)
			close(rfd);
	}
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		snprintf(why, sizeof(why), "the file's extent map could not be read (%s), so whether a write over "
			 "one of its clusters reaches the device whole is unknown; run as a user who may read the "
			 "file", strerror(-r));
		return layer_add_missing(l, "partial_clusters", LCLOUD_FACT_U64, LCLOUD_UNIT_NONE,
					 (r == -EACCES || r == -EPERM) && geteuid() != 0 ? LCLOUD_FACT_NEEDS_ROOT
											  : LCLOUD_FACT_UNREADABLE,
					 src, why);
	}
	return layer_add_u64(l, "partial_clusters", LCLOUD_UNIT_NONE, n, src);
}
