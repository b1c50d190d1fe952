/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every file lcloudctl writes besides the target of 'write' and 'torture
 * run': crash images, 'read --output', fingerprints, exported metrics. A
 * regular file is made under a temporary name beside it (O_EXCL|O_NOFOLLOW)
 * and renamed into place only when whole, so a planted symlink is replaced,
 * never followed, and a failure leaves nothing behind. An existing block
 * device, where the command allows one, is written only through the
 * library's write guard (mounted, swap, held, signatures; an O_EXCL claim);
 * an existing regular file that is storage in use (a mounted loop's image,
 * a file-backed mount's source, a swap file) is not replaced.
 * Anything else (a directory, a character device, a FIFO) is refused.
 */
#ifndef LCLOUDCTL_OUTPUT_FILE_H
#define LCLOUDCTL_OUTPUT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <lcloud/lcloud.h>

enum output_file_flags {
	OUTPUT_FILE_DEVICE = 1u << 0,  /* an existing block device is written through the write guard */
	OUTPUT_FILE_FORCE = 1u << 1,   /* ... even one with a file system or partition table signature */
	OUTPUT_FILE_NO_REPLACE = 1u << 2, /* an existing file is refused (-EEXIST), never replaced */
	OUTPUT_FILE_KEEP_LINKS = 1u << 3, /* a symlink at the name (but to a block device) is refused, not replaced */
};

struct output_file {
	const char *path;
	char tmp[4200];             /* the temporary beside PATH while it is written; "" otherwise */
	int fd;                     /* the temporary, -1 when there is none */
	mode_t mode;
	uint32_t flags;
	struct lcloud_queue *queue; /* a block device: writes go through the guarded queue */
	uint64_t device_size;       /* its size, 0 when the probe does not say */
	void *bounce;               /* aligned staging buffer for the device's direct I/O */
	uint64_t pos;               /* where output_file_write() goes next */
};

/*
 * Opens PATH for writing as above (MODE for a new file, less the umask).
 * Returns 0, or -EBADFD (a kind of file that is never written), -EEXIST
 * (OUTPUT_FILE_NO_REPLACE), the guard's -EBUSY/-EROFS/-ESTALE (and -EBUSY
 * or -EACCES for a file in use, or not known not to be), -errno; ERR says
 * why for a person. *RET is usable by output_file_abort() either way.
 */
int output_file_open(struct lcloud_ctx *ctx, const char *path, mode_t mode, uint32_t flags, struct output_file *ret,
		     char *err, size_t err_size);
bool output_file_is_device(const struct output_file *of);
/* LEN bytes of BUF at OFFSET; a device takes them through the queue (aligned to its block size). */
int output_file_pwrite(struct output_file *of, const void *buf, uint64_t len, uint64_t offset, char *err,
		       size_t err_size);
/* The same at the end of what was written so far. */
int output_file_write(struct output_file *of, const void *buf, uint64_t len, char *err, size_t err_size);
/* Synced, given its mode and renamed into place; on failure the temporary is removed. */
int output_file_commit(struct output_file *of, char *err, size_t err_size);
/* Removes the temporary (nothing was renamed into place) or lets the device go; safe to call twice. */
void output_file_abort(struct output_file *of);
/* "/proc/self/fd/N" of the temporary, for code that opens its output by name; NULL for a device. */
const char *output_file_fd_path(const struct output_file *of, char *buf, size_t size);

/* Is OUT the file or device INPUT names (by inode, through links; by device number for devices)? */
bool output_file_same(const char *out, const char *input);
/*
 * Can a write to the device OF writes land in the file INPUT names, by any
 * path (a loop device over it, directly or over other devices, a partition
 * of one)? 1 yes, 0 no (or OF is a regular file), -EACCES not known, -errno.
 */
int output_file_reaches(struct lcloud_ctx *ctx, const struct output_file *of, const char *input);
/* Exit status for an output_file_open() error: 7 refused (exists, in use, holds data), 5 wrong kind. */
int output_file_exit_code(int err);

/* FILE replaced whole or not at all by LEN bytes of TEXT, with MODE; only a regular file. */
int write_file_atomically(const char *file, const char *text, size_t len, mode_t mode, char *err, size_t err_size);

#endif
