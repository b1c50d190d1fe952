/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_ATOMIC_CONFIRM_H
#define LCLOUD_ATOMIC_CONFIRM_H

#include "report.h"

/*
 * Confirms the statx atomic write limits of file system layer FS_INDEX with
 * live RWF_ATOMIC writes to an O_TMPFILE file in directory DIRFD (O_PATH is
 * enough), and records what the kernel said as facts of that layer:
 * live_rwf_atomic_max_bytes, and live_rwf_atomic_refused or
 * live_rwf_atomic_unenforced where it disagreed with statx. Returns 0 or -ENOMEM.
 */
int atomic_confirm(struct lcloud_probe *p, int fs_index, int dirfd);

#endif
