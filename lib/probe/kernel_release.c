/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The running kernel's release (/proc/sys/kernel/osrelease, the same text as
 * uname -r), read through the sysroot so that a captured tree can carry its
 * own. The verdict follows dm-striped, dm-crypt and loop devices only as far
 * as the kernel code it was checked against does (Linux 7.3); it needs the
 * release to know which code runs. Missing (a tree without it) is absent,
 * and the verdict says "unknown" for what rests on it.
 */
#include <errno.h>
#include <string.h>

#include "kernel_release.h"
#include "sysfs.h"

int kernel_release_add(const struct lcloud_ctx *ctx, struct lcloud_layer *l)
{
	char release[128];
	int r = sysfs_read_attr(ctx, "/proc/sys/kernel", "osrelease", release, sizeof(release));

	if (r == -ENOENT)
		return layer_add_missing(l, FACT_KERNEL_RELEASE, LCLOUD_FACT_NOT_PROVIDED, "proc:sys/kernel/osrelease",
					 "the kernel's release is not in this tree (proc/sys/kernel/osrelease)");
	if (r < 0)
		return layer_add_missing(l, FACT_KERNEL_RELEASE, LCLOUD_FACT_UNREADABLE, "proc:sys/kernel/osrelease",
					 strerror(-r));
	return layer_add_string(l, FACT_KERNEL_RELEASE, release, "proc:sys/kernel/osrelease");
}
