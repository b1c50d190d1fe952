/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The listening socket and a thread per connection: the simplest correct
 * shape, since each NVMe/TCP queue is its own connection and a queue's
 * commands are served in order. A thread waits for its socket or its
 * connection's next timer (conn_tick), feeds what it reads, and closes the
 * connection when it says so, with the reason in the log. One more thread
 * runs the keep alive timer, which ends a failed controller's connections by
 * shutting their sockets down under their threads' feet.
 *
 * Nothing a peer does ends the process or grows it without bound: at most
 * --max-connections are open (fewer when RLIMIT_NOFILE allows fewer), and a
 * new one past the limit ends the oldest that has not finished its
 * handshake, so idle strangers cannot keep a host out; threads have small
 * stacks; accept() errors (no descriptors, no memory, a connection aborted)
 * are waited out with a growing pause, never fatal. On loopback without a
 * DH-HMAC-CHAP secret only root and the target's own user may connect: the
 * peer's socket owner is asked of the kernel (peer.c) before a byte is read.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server.h"
#include "target.h"
#include "write_log.h"

#define THREAD_STACK (256u << 10) /* a connection's thread: its read buffer and the handlers' frames */
#define READ_BUFFER (32u << 10)
#define FD_RESERVE 64              /* descriptors kept for namespaces, logs and the kernel's lookups */
#define EVICTING_SLACK 64          /* connections told to go that have not gone yet, at most */

struct worker {
	struct target *t;
	int fd;
	int wake_fd;      /* an eventfd: the back end wakes the thread when buffers its commands wait for are free */
	unsigned int id;
	bool established; /* under server.lock: it finished its handshake, and is never evicted */
	bool evicted;
	struct worker *prev, *next;
};

/* The open connections, oldest first. */
static struct {
	pthread_mutex_t lock;
	struct worker *head, *tail;
	unsigned int count, evicting, limit;
} server = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int socket_send(void *ctx, const struct iovec *iov, int iovcnt)
{
	struct iovec local[4];
	struct msghdr msg = {0};
	int fd = ((struct worker *)ctx)->fd;

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
	shutdown(((struct worker *)ctx)->fd, SHUT_RDWR);
}

/* The back end gave buffers back: the connection's thread starts the commands that wait for them. */
static void worker_wake(void *ctx)
{
	int fd = __atomic_load_n(&((struct worker *)ctx)->wake_fd, __ATOMIC_ACQUIRE);
	uint64_t one = 1;
	ssize_t n = 0;

	/* no eventfd yet: its next tick finds the buffers; a full counter (EAGAIN) has woken it already */
	if (fd >= 0)
		n = write(fd, &one, sizeof(one));
	(void)n;
}

/* Says what happened at most once a second, with how often it happened since it last said. */
struct rate_line {
	uint64_t last_us;
	unsigned long suppressed;
};

static bool rate_ok(struct rate_line *r, unsigned long *ret_suppressed)
{
	uint64_t now = trace_now_us();

	if (r->last_us && now - r->last_us < 1000000) {
		r->suppressed++;
		return false;
	}
	r->last_us = now;
	*ret_suppressed = r->suppressed;
	r->suppressed = 0;
	return true;
}

/* The closing line: the reason another thread gave (the keep alive timer, an eviction), else WHY. */
static void log_close(struct worker *w, struct conn *c, const char *why)
{
	char killed[sizeof(c->killed)];
	bool evicted;

	pthread_mutex_lock(&w->t->lock);
	memcpy(killed, c->killed, sizeof(killed));
	pthread_mutex_unlock(&w->t->lock);
	pthread_mutex_lock(&server.lock);
	evicted = w->evicted;
	pthread_mutex_unlock(&server.lock);
	if (killed[0])
		tlog(w->t, "conn %u: closing: %s", w->id, killed);
	else if (!evicted) /* an eviction was said when it was decided */
		tlog(w->t, "conn %u: %s", w->id, why);
}

/* A refusal is said at most once a second (a flood of strangers is not a flood of lines). */
static bool refusal_said(void)
{
	static struct rate_line said;
	unsigned long more;
	bool ok;

	pthread_mutex_lock(&server.lock);
	ok = rate_ok(&said, &more);
	pthread_mutex_unlock(&server.lock);
	return ok;
}

/* On loopback without a secret: is the peer root or the target's own user? */
static bool local_peer_allowed(struct worker *w)
{
	const struct target *t = w->t;
	uid_t uid;
	int r = peer_uid(w->fd, &uid);

	if (r < 0 && refusal_said()) {
		tlog(t, "conn %u: refused: the owner of the peer's socket cannot be found (%s); on loopback without "
		     "--dhchap-secret only root%s may connect", w->id, strerror(-r), t->cfg.own_uid ? " and this user" : "");
	}
	if (r < 0)
		return false;
	if (uid == 0 || uid == t->cfg.own_uid)
		return true;
	if (refusal_said()) {
		struct passwd pw, *found = NULL;
		char buf[1024];

		getpwuid_r(uid, &pw, buf, sizeof(buf), &found);
		tlog(t, "conn %u: refused: the peer's socket belongs to uid %u%s%s%s; on loopback without --dhchap-secret "
		     "only root%s may connect (the kernel's nvme-tcp host is root)", w->id, (unsigned int)uid,
		     found ? " (" : "", found ? found->pw_name : "", found ? ")" : "",
		     t->cfg.own_uid ? " and the target's own user" : "");
	}
	return false;
}

/* The worker leaves the list; its descriptor is then its own to close (no eviction can reach it). */
static void worker_leave(struct worker *w)
{
	pthread_mutex_lock(&server.lock);
	if (w->prev)
		w->prev->next = w->next;
	else
		server.head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		server.tail = w->prev;
	server.count--;
	if (w->evicted)
		server.evicting--;
	pthread_mutex_unlock(&server.lock);
}

static void *serve(void *arg)
{
	struct worker *w = arg;
	struct conn_io io = {socket_send, socket_shutdown, worker_wake, w};
	struct conn *c = NULL;
	uint8_t buf[READ_BUFFER];
	bool established = false;

	if (w->t->cfg.loopback && !w->t->cfg.host_key_set && !local_peer_allowed(w))
		goto out;
	c = malloc(sizeof(*c));
	if (!c || conn_init(c, w->t, &io, w->id) < 0) {
		tlog(w->t, "conn %u: out of memory", w->id);
		goto out;
	}
	for (;;) {
		/* a negative descriptor (no eventfd yet) is one poll() passes over */
		struct pollfd p[2] = {{w->fd, POLLIN, 0}, {w->wake_fd, POLLIN, 0}};
		int wait_ms, n_ready;
		uint64_t woken;
		ssize_t n;

		if (conn_tick(c, trace_now_us(), &wait_ms) < 0) {
			tlog(w->t, "conn %u: closing: %s", w->id, c->reason);
			break;
		}
		n_ready = poll(p, 2, wait_ms);
		if (n_ready < 0 && errno != EINTR) {
			tlog(w->t, "conn %u: closing: poll: %s", w->id, strerror(errno));
			break;
		}
		if (n_ready <= 0)
			continue; /* a timer is due: conn_tick decides */
		if (p[1].revents && read(w->wake_fd, &woken, sizeof(woken)) < 0 && errno != EAGAIN) {
			tlog(w->t, "conn %u: closing: eventfd: %s", w->id, strerror(errno));
			break;
		}
		if (!p[0].revents)
			continue; /* buffers were given back: conn_tick starts the commands that wait for them */
		n = read(w->fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
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
		if (c->established != established) {
			established = c->established;
			/* only an established queue's commands go to the back end, which wakes it */
			__atomic_store_n(&w->wake_fd, eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), __ATOMIC_RELEASE);
			if (w->wake_fd < 0) {
				tlog(w->t, "conn %u: closing: eventfd: %s", w->id, strerror(errno));
				break;
			}
			pthread_mutex_lock(&server.lock);
			w->established = established;
			pthread_mutex_unlock(&server.lock);
		}
	}
	conn_destroy(c);
out:
	free(c);
	worker_leave(w);
	if (w->wake_fd >= 0)
		close(w->wake_fd);
	close(w->fd);
	free(w);
	return NULL;
}

/* The connection limit: --max-connections, or fewer when RLIMIT_NOFILE leaves fewer descriptors. */
static unsigned int connection_limit(struct target *t)
{
	struct rlimit rl;
	unsigned int limit = t->cfg.max_connections ? t->cfg.max_connections : 1;

	/* as many descriptors as the hard limit allows: the soft one is often a default far below */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		/* two to a connection: its socket, and its eventfd once it is established */
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)limit * 2 + FD_RESERVE) {
			unsigned int fit = rl.rlim_cur > FD_RESERVE + 2 ? (unsigned int)((rl.rlim_cur - FD_RESERVE) / 2) : 1;

			tlog(t, "at most %u connections, not %u: RLIMIT_NOFILE is %llu descriptors", fit, limit,
			     (unsigned long long)rl.rlim_cur);
			limit = fit;
		}
	}
	return limit;
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
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 1024) < 0 ||
	    getsockname(fd, (struct sockaddr *)&bound, &bound_len) < 0) {
		r = -errno;
		snprintf(ret_name, name_len, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		return r;
	}
	freeaddrinfo(res);
	server.limit = connection_limit(t); /* said before the listening line, as the rest of the set-up is */
	if (t->cfg.loopback && !t->cfg.host_key_set)
		peer_init();
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

/*
 * Tells the oldest connection that has not finished its handshake to go
 * (its thread sees its socket shut down). Under server.lock. False when
 * every open connection is established.
 */
static bool evict_oldest_pending(struct target *t, const char *why)
{
	static struct rate_line said;
	unsigned long more = 0;

	for (struct worker *w = server.head; w; w = w->next) {
		if (w->established || w->evicted)
			continue;
		w->evicted = true;
		server.evicting++;
		shutdown(w->fd, SHUT_RDWR);
		if (rate_ok(&said, &more))
			tlog(t, "conn %u: closing: %s, and it had not finished its handshake (the oldest such)%s", w->id, why,
			     more ? "; more since the last such line" : "");
		return true;
	}
	return false;
}

/* Is an accept() error one to wait out (the machine is short of something), one to ignore, or fatal? */
enum accept_error { ACCEPT_RETRY, ACCEPT_WAIT, ACCEPT_FATAL };

static enum accept_error accept_error_kind(int e)
{
	switch (e) {
	case EBADF:
	case EINVAL:
	case ENOTSOCK:
	case EFAULT:
	case EOPNOTSUPP:
		return ACCEPT_FATAL; /* the listening socket itself is gone or wrong */
	case EMFILE:
	case ENFILE:
	case ENOBUFS:
	case ENOMEM:
		return ACCEPT_WAIT;
	default:
		/* ECONNABORTED, EPROTO, EPERM, and the network errors accept(2) says to treat as EAGAIN */
		return ACCEPT_RETRY;
	}
}

int server_run(struct target *t, int listen_fd)
{
	unsigned int next_id = 1, pause_ms = 0;
	struct rate_line refused = {0}, short_of = {0};
	pthread_attr_t attr;
	pthread_t timer;

	if (pthread_create(&timer, NULL, keep_alive_timer, t) != 0) {
		tlog(t, "no thread for the keep alive timer");
		return -EAGAIN;
	}
	pthread_detach(timer);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, THREAD_STACK);

	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC), one = 1, e = errno;
		unsigned long more = 0;
		unsigned int open_now;
		struct worker *w;
		bool room;

		if (fd < 0) {
			switch (accept_error_kind(e)) {
			case ACCEPT_FATAL:
				tlog(t, "accept: %s: the listening socket is unusable", strerror(e));
				pthread_attr_destroy(&attr);
				return -e;
			case ACCEPT_RETRY:
				continue;
			case ACCEPT_WAIT:
				break;
			}
			/* short of descriptors or memory: a stranger's idle connection goes first, then a pause */
			pthread_mutex_lock(&server.lock);
			evict_oldest_pending(t, "the target is out of descriptors or memory");
			pthread_mutex_unlock(&server.lock);
			pause_ms = pause_ms ? (pause_ms * 2 > 1000 ? 1000 : pause_ms * 2) : 10;
			if (rate_ok(&short_of, &more))
				tlog(t, "accept: %s: waiting %u ms before accepting again (%lu more such errors since the last "
				     "line)", strerror(e), pause_ms, more);
			usleep(pause_ms * 1000u);
			continue;
		}
		pause_ms = 0;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		pthread_mutex_lock(&server.lock);
		room = server.count - server.evicting < server.limit ||
		       evict_oldest_pending(t, "the connection limit is reached");
		room = room && server.count < server.limit + EVICTING_SLACK;
		open_now = server.count;
		w = room ? calloc(1, sizeof(*w)) : NULL;
		if (w) {
			*w = (struct worker){t, fd, -1, next_id++, false, false, server.tail, NULL};
			if (server.tail)
				server.tail->next = w;
			else
				server.head = w;
			server.tail = w;
			server.count++;
		}
		pthread_mutex_unlock(&server.lock);
		if (!w) {
			if (rate_ok(&refused, &more))
				tlog(t, "a connection refused: %u are open, all established (--max-connections %u)%s",
				     open_now, server.limit, more ? "; and more since the last such line" : "");
			close(fd);
			continue;
		}
		{
			pthread_t thread;
			int r = pthread_create(&thread, &attr, serve, w);

			if (r != 0) {
				tlog(t, "conn %u: no thread for it (%s): closed", w->id, strerror(r));
				worker_leave(w);
				close(fd);
				free(w);
				usleep(10000); /* threads are short: let some end */
			}
		}
	}
}
