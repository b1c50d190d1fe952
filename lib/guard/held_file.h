/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_HELD_FILE_H
#define LCLOUD_HELD_FILE_H

/*
 * Whether another program has a regular file open. The kernel answers for
 * every opener at once through a write lease (fcntl F_SETLEASE F_WRLCK),
 * granted only while no other open file description of the inode exists:
 * another process's, a loop device's, a file-backed mount's, swap's. Who
 * they are is read from /proc (each process's descriptors and mappings, by
 * inode), which names the processes it may read and counts the rest. A
 * lease kept afterwards breaks when anyone opens the file, which is how a
 * long-running writer learns of a new user (watch.c). Pure system calls and
 * text: no library context, so lcloudctl links it for its output files too.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HELD_SCAN_MAX 8 /* holders named; more are counted */

struct held_holder {
	pid_t pid;
	int fd; /* -1: the file is mapped (mmap), not open */
	bool self; /* this very process (another descriptor of its own) */
	char comm[17];
};

struct held_scan {
	struct held_holder holders[HELD_SCAN_MAX];
	unsigned int n_holders; /* named in HOLDERS */
	unsigned int n_more;    /* found beyond them */
	unsigned int n_hidden;  /* processes whose descriptors could not be read */
	bool incomplete;        /* the scan stopped at its time bound */
};

enum held_answer {
	HELD_FREE_LEASED = 0, /* nobody else has it open; the lease is kept (or was let go, as asked) */
	HELD_FREE_NO_LEASE = 1, /* the file system grants no leases, and no process here has it open */
};

/*
 * Asks about the regular file open at FD (NAME for messages): a write lease
 * on FD, kept when KEEP_LEASE (its lease-break signal turned off: the
 * process is never signalled), else let go at once. Returns an enum
 * held_answer, or -EBUSY when another opener exists (WHY names the
 * processes where /proc shows them, else says none is visible), -EACCES
 * when it cannot be told (neither the owner nor CAP_LEASE; a file system
 * without leases and processes hidden from here), with WHY for a person.
 * FD itself (and its duplicates) is not counted as a holder; any other
 * descriptor of the file, in this process too, is. REMEDY ends the
 * sentence that names processes ("stop it first").
 */
int held_file_check(int fd, const char *name, bool keep_lease, const char *remedy, char *why, size_t why_size);

/*
 * The same for the regular file at PATH (a symbolic link there is not
 * followed: the link is what a rename replaces), for a program about to
 * replace it by rename: /proc is looked at first, so that a writer whose
 * lease would break at an open is named and left alone; then the lease is
 * asked through a read-only, non-blocking open and let go. 0 when no
 * regular file is there or nobody else has it open; else as above.
 */
int held_file_check_path(const char *path, char *why, size_t why_size);

/*
 * The processes under PROC (normally "/proc") that have the inode DEV:INO
 * open or mapped, but for descriptor SELF_FD of process SELF_PID and its
 * duplicates. Bounded in time (HELD_SCAN_SECONDS). 0, or -errno when PROC
 * cannot be read.
 */
#define HELD_SCAN_SECONDS 2
int held_file_scan(const char *proc, dev_t dev, uint64_t ino, pid_t self_pid, int self_fd, struct held_scan *ret);

/* "mariadbd (pid 4242, fd 8), ..." and the counts of more and hidden ones; "" when none. */
void held_scan_describe(const struct held_scan *s, char *buf, size_t size);

/* The "ino:" field of a /proc/PID/fdinfo/N text of LEN bytes; 0, or -ENOENT without one. */
int held_parse_fdinfo_ino(const char *text, size_t len, uint64_t *ret_ino);
/* The device (major, minor) and inode of a /proc/PID/maps line of LEN bytes; 0, or -EINVAL. */
int held_parse_maps_line(const char *line, size_t len, unsigned int *ret_major, unsigned int *ret_minor,
			 uint64_t *ret_ino);

#endif
