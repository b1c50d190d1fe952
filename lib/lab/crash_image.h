/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Crash images: the disk as a power cut at one moment of a write log would
 * have left it. The base image (the disk before the logged run) is copied,
 * the log's first CUT entries are written onto the copy, and of entry CUT
 * only its first TEAR_BYTES: the command that was in flight when the power
 * went. Whether that prefix is one the device may leave is the caller's
 * question (oracle_command_atomic()).
 *
 * A DISCARD entry's range is zeros on the image, as xfstests' replay-log
 * makes it on a device without discard: what the discarded blocks held is
 * no longer data anyone wrote, and a device that logs Write Zeroes as
 * DISCARD (lcloud-target, whose deallocated blocks also read as zeros, as
 * its DLFEAT says) is then replayed exactly. FLUSH and MARK entries write
 * nothing.
 */
#ifndef LCLOUD_LAB_CRASH_IMAGE_H
#define LCLOUD_LAB_CRASH_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "writelog.h"

/* The size of the open base image FD (ST its fstat): a block device's from its end, a file's from ST. */
uint64_t crash_image_base_size(int fd, const struct stat *st);

/*
 * Makes OUT (created or truncated) from BASE and LOG as above. CUT may be the
 * entry count (everything applied). Returns 0, or -EINVAL (CUT or TEAR_BYTES
 * out of range), -ENOSPC (an entry writes past the end of the base: the wrong
 * base?), -errno for I/O; ERR says which.
 */
int crash_image_make(const struct writelog *log, const char *base, const char *out, uint64_t cut,
		     uint64_t tear_bytes, char *err, size_t err_size);

#endif
