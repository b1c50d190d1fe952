/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The target's sockets: listening on one address, a thread per connection. */
#ifndef LCLOUD_TARGET_SERVER_H
#define LCLOUD_TARGET_SERVER_H

#include <stddef.h>

struct target;

/* Binds HOST:PORT (numeric); the listening fd, and the bound address in RET_NAME (the error on failure). */
int server_listen(struct target *t, const char *host, const char *port, char *ret_name, size_t name_len);
/* Accepts connections until accept() fails. */
int server_run(struct target *t, int listen_fd);

#endif
