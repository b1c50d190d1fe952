/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The target's sockets: listening on one address, a thread per connection, and who is at the other end. */
#ifndef LCLOUD_TARGET_SERVER_H
#define LCLOUD_TARGET_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

struct target;

/* Binds HOST:PORT (numeric); the listening fd, and the bound address in RET_NAME (the error on failure). */
int server_listen(struct target *t, const char *host, const char *port, char *ret_name, size_t name_len);
/* Accepts connections until the listening socket fails; -errno then. */
int server_run(struct target *t, int listen_fd);

/* peer.c: is SS a loopback address (127.0.0.0/8, ::1, or IPv4-mapped 127.x)? */
bool address_is_loopback(const struct sockaddr_storage *ss);
/* Opens what peer_uid() asks the kernel with, while descriptors are to be had (at start). */
void peer_init(void);
/* The user owning the peer's socket of the accepted loopback connection FD. 0, or -errno when not found. */
int peer_uid(int fd, uid_t *ret_uid);

#endif
