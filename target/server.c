/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The listening socket and a thread per connection: the simplest correct
 * shape, since each NVMe/TCP queue is its own connection and a queue's
 * commands are served in order. A thread reads, feeds its connection and
 * closes it when the connection says so, with the reason in the log. One
 * more thread runs the keep alive timer, which ends a failed controller's
 * connections by shutting their sockets down under their threads' feet.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server.h"
#include "target.h"
#include "write_log.h"

struct worker {
	struct target *t;
	int fd;
	unsigned int id;
};

static int socket_send(void *ctx, const struct iovec *iov, int iovcnt)
{
	struct iovec local[4];
	struct msghdr msg = {0};
	int fd = *(int *)ctx;

	if (iovcnt > 4)
		return -EINVAL;
	memcpy(local, iov, sizeof(*iov) * (size_t)iovcnt);
	msg.msg_iov = local;
	msg.msg_iovlen = (size_t)iovcnt;
	while (msg.msg_iovlen) {
		ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		/* a short send: step past what went */
		while (msg.msg_iovlen && (size_t)n >= msg.msg_iov[0].iov_len) {
			n -= (ssize_t)msg.msg_iov[0].iov_len;
			msg.msg_iov++;
			msg.msg_iovlen--;
		}
		if (msg.msg_iovlen) {
			msg.msg_iov[0].iov_base = (uint8_t *)msg.msg_iov[0].iov_base + n;
			msg.msg_iov[0].iov_len -= (size_t)n;
		}
	}
	return 0;
}

static void socket_shutdown(void *ctx)
{
	/* the reading thread sees the end of the stream and closes: the fd stays its to close */
	shutdown(*(int *)ctx, SHUT_RDWR);
}

/* The closing line: the reason another thread gave (the keep alive timer), else READ's. */
static void log_close(struct worker *w, struct conn *c, const char *why)
{
	char killed[sizeof(c->killed)];

	pthread_mutex_lock(&w->t->lock);
	memcpy(killed, c->killed, sizeof(killed));
	pthread_mutex_unlock(&w->t->lock);
	if (killed[0])
		tlog(w->t, "conn %u: closing: %s", w->id, killed);
	else
		tlog(w->t, "conn %u: %s", w->id, why);
}

static void *serve(void *arg)
{
	struct worker *w = arg;
	struct conn_io io = {socket_send, socket_shutdown, &w->fd};
	struct conn *c = malloc(sizeof(*c));
	uint8_t buf[65536];

	if (!c || conn_init(c, w->t, &io, w->id) < 0) {
		tlog(w->t, "conn %u: out of memory", w->id);
		goto out;
	}
	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			char why[160];

			snprintf(why, sizeof(why), "closed by the host%s%s", n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
			log_close(w, c, why);
			break;
		}
		if (conn_feed(c, buf, (size_t)n) < 0) {
			tlog(w->t, "conn %u: closing: %s", w->id, c->reason);
			break;
		}
	}
	conn_destroy(c);
out:
	free(c);
	close(w->fd);
	free(w);
	return NULL;
}

int server_listen(struct target *t, const char *host, const char *port, char *ret_name, size_t name_len)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST};
	struct addrinfo *res;
	struct sockaddr_storage bound;
	socklen_t bound_len = sizeof(bound);
	char h[64], p[16];
	int fd, one = 1, r;

	r = getaddrinfo(host, port, &hints, &res);
	if (r != 0) {
		snprintf(ret_name, name_len, "%s", gai_strerror(r));
		return -EINVAL;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&bound, &bound_len) < 0) {
		r = -errno;
		snprintf(ret_name, name_len, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		return r;
	}
	freeaddrinfo(res);
	getnameinfo((struct sockaddr *)&bound, bound_len, h, sizeof(h), p, sizeof(p), NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(ret_name, name_len, "%s%s%s:%s", bound.ss_family == AF_INET6 ? "[" : "", h,
		 bound.ss_family == AF_INET6 ? "]" : "", p);
	return fd;
}

/* The keep alive timer: wakes as often as the shortest KATO needs. */
static void *keep_alive_timer(void *arg)
{
	struct target *t = arg;

	for (;;) {
		unsigned int ms = controllers_check_keep_alive(t, trace_now_us());
		struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	return NULL;
}

int server_run(struct target *t, int listen_fd)
{
	unsigned int next_id = 1;
	pthread_t timer;

	if (pthread_create(&timer, NULL, keep_alive_timer, t) != 0) {
		tlog(t, "no thread for the keep alive timer");
		return -EAGAIN;
	}
	pthread_detach(timer);

	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC), one = 1;
		struct worker *w;
		pthread_attr_t attr;
		pthread_t thread;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			tlog(t, "accept: %s", strerror(errno));
			return -errno;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		w = malloc(sizeof(*w));
		if (!w) {
			close(fd);
			continue;
		}
		*w = (struct worker){t, fd, next_id++};
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&thread, &attr, serve, w) != 0) {
			tlog(t, "conn %u: no thread for it", w->id);
			close(fd);
			free(w);
		}
		pthread_attr_destroy(&attr);
	}
}
