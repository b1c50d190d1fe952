/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The live confirmation of statx's atomic write limits: RWF_ATOMIC writes of
 * every power of two the file system claims, to a nameless O_TMPFILE file in
 * the same directory, and one write that RWF_ATOMIC must refuse. It catches a
 * file system whose statx promises more than its write path gives (overlayfs
 * forwards the limits of the file system below, and its own files fail
 * RWF_ATOMIC) without anyone having to name it. It never touches an existing
 * file's data, and the temporary file vanishes when closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "atomic_confirm.h"
#include "compat.h"
#include "util.h"

/* The largest size confirmed: 2 x this many bytes are written in all. */
#define CONFIRM_MAX_BYTES (8ull << 20)

static const char src[] = "live:pwritev2(RWF_ATOMIC)";

static const char *errno_name(int e)
{
	switch (e) {
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case EINVAL:
		return "EINVAL";
	case EIO:
		return "EIO";
	case ENOSPC:
		return "ENOSPC";
	default:
		return "errno";
	}
}

static int not_run(struct lcloud_layer *l, enum lcloud_fact_state state, const char *why)
{
	return layer_add_missing(l, FACT_LIVE_RWF_ATOMIC_MAX_BYTES, state, src, why);
}

/* One RWF_ATOMIC write; 0 when all of it was written, -errno, or the bytes a short write wrote. */
static int64_t atomic_write(int fd, void *buf, uint64_t size, uint64_t offset)
{
	struct iovec iov = { buf, size };
	ssize_t n = pwritev2(fd, &iov, 1, (off_t)offset, RWF_ATOMIC);

	if (n < 0)
		return -errno;
	return (uint64_t)n == size ? 0 : n;
}

/*
 * Errors that say nothing about atomic writes: the file system is full or
 * the caller's quota or file size limit is reached. The test could not be
 * done; it was not refused.
 */
static bool could_not_try(int e)
{
	return e == ENOSPC || e == EDQUOT || e == EFBIG;
}

/* The process's file size limit (ulimit -f): writes past it are cut short or killed by SIGXFSZ. */
static uint64_t file_size_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_FSIZE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return (uint64_t)rl.rlim_cur;
}

/* statx's size ID, or 0 (what statx itself gives for "no atomic writes") when it did not report it */
static uint64_t statx_bytes(const struct lcloud_layer *l, enum fact_id id)
{
	uint64_t v = 0;

	(void)layer_get_bytes(l, id, &v);
	return v;
}

int atomic_confirm(struct lcloud_probe *p, int fs_index, int dirfd)
{
	struct lcloud_layer *l = report_layer(p, fs_index);
	uint64_t umin = statx_bytes(l, FACT_STX_ATOMIC_WRITE_UNIT_MIN);
	uint64_t umax = statx_bytes(l, FACT_STX_ATOMIC_WRITE_UNIT_MAX);
	uint64_t align = statx_bytes(l, FACT_STX_DIO_MEM_ALIGN), top, confirmed = 0;
	dev_t devno;
	bool has_devno = layer_get_devno(l, &devno) > 0;
	char why[256];
	struct stat st;
	void *buf = NULL;
	bool has_atomic_attr = false; /* absent or unread: statx does not claim atomic writes */
	int fd, r = 0;

	(void)layer_get_bool(l, FACT_STX_ATTR_WRITE_ATOMIC, &has_atomic_attr);
	if (!umax || !has_atomic_attr)
		return 0; /* statx claims nothing: there is nothing to confirm */
	if (!is_power_of_2(umin))
		umin = 512;
	top = umax;
	while (top & (top - 1))
		top &= top - 1;
	if (top > CONFIRM_MAX_BYTES)
		top = CONFIRM_MAX_BYTES;
	if (top < umin)
		return not_run(l, LCLOUD_FACT_UNREADABLE, "statx's unit max is below its unit min: nothing to confirm");

	fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;
		/* root refused (an immutable directory, a security policy): another user would not help */
		bool denied = (e == EACCES || e == EPERM) && geteuid() != 0;

		snprintf(why, sizeof(why), "could not create a temporary file in the directory for a live RWF_ATOMIC "
			 "write (%s)%s", strerror(e), denied ? ": run as a user who may write there" : "");
		return not_run(l, denied ? LCLOUD_FACT_NEEDS_ROOT : LCLOUD_FACT_UNREADABLE, why);
	}
	/* a directory that is a mount point of another file system would test the wrong one */
	if (fstat(fd, &st) < 0 || !has_devno) {
		r = not_run(l, LCLOUD_FACT_UNREADABLE, "could not tell which file system the temporary file is on");
		goto out;
	}
	if (st.st_dev != devno) {
		r = not_run(l, LCLOUD_FACT_UNREADABLE, "the temporary file landed on another file system than "
			    "the target (a mount point or a bind mount): nothing was confirmed");
		goto out;
	}
	if (align < 4096)
		align = 4096;
	if (posix_memalign(&buf, align, top) != 0) {
		buf = NULL;
		r = -ENOMEM;
		goto out;
	}
	memset(buf, 0x5a, top);
	for (uint64_t size = umin; size <= top; size *= 2) {
		int64_t w;

		if (size > file_size_limit()) {
			snprintf(why, sizeof(why), "a %" PRIu64 "-byte write would pass this process's file size limit "
				 "(RLIMIT_FSIZE, ulimit -f: %" PRIu64 " bytes), %" PRIu64 " bytes were confirmed before: "
				 "nothing was refused; raise the limit to confirm more", size, file_size_limit(), confirmed);
			r = not_run(l, LCLOUD_FACT_UNREADABLE, why);
			goto out;
		}
		w = atomic_write(fd, buf, size, 0);
		if (w < 0 && could_not_try((int)-w)) {
			snprintf(why, sizeof(why), "a %" PRIu64 "-byte RWF_ATOMIC write could not be tried: %s, %" PRIu64
				 " bytes were confirmed before: nothing was refused; free space to confirm", size,
				 strerror((int)-w), confirmed);
			r = not_run(l, LCLOUD_FACT_UNREADABLE, why);
			goto out;
		}
		if (w < 0)
			snprintf(why, sizeof(why), "a %" PRIu64 "-byte RWF_ATOMIC write failed with %s (%s)", size,
				 errno_name((int)-w), strerror((int)-w));
		else if (w > 0)
			snprintf(why, sizeof(why), "a %" PRIu64 "-byte RWF_ATOMIC write was cut short after %" PRId64
				 " bytes", size, w);
		if (w != 0) {
			r = layer_add_string(l, FACT_LIVE_RWF_ATOMIC_REFUSED, why, src);
			break;
		}
		confirmed = size;
	}
	if (r >= 0)
		r = layer_add_u64(l, FACT_LIVE_RWF_ATOMIC_MAX_BYTES, confirmed, src);
	/* RWF_ATOMIC must refuse a write that is not aligned to its own size */
	if (r >= 0 && confirmed >= 2 * umin && 3 * umin <= file_size_limit() &&
	    atomic_write(fd, buf, 2 * umin, umin) == 0) {
		snprintf(why, sizeof(why), "a %" PRIu64 "-byte write at offset %" PRIu64 " succeeded", 2 * umin, umin);
		r = layer_add_string(l, FACT_LIVE_RWF_ATOMIC_UNENFORCED, why, src);
	}
out:
	free(buf);
	close(fd);
	return r;
}
