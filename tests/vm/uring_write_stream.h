/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One io_uring write with a write stream (sqe->write_stream, Linux 6.16),
 * made with the raw system calls so that the guest programs of the VM tests
 * need no library and no liburing newer than the system's.
 */
#ifndef LCLOUD_TESTS_URING_WRITE_STREAM_H
#define LCLOUD_TESTS_URING_WRITE_STREAM_H

#include <stddef.h>
#include <sys/types.h>

/* IORING_OP_WRITE of SIZE bytes of BUF at OFFSET of FD with write stream STREAM: the result, or -errno. */
ssize_t uring_write_stream(int fd, const void *buf, size_t size, off_t offset, unsigned int stream);

#endif
