/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who is at the other end of an accepted loopback connection: the user
 * owning the peer's socket, which is on this machine, in this network
 * namespace (loopback never leaves it). Linux's nvme-tcp host opens its
 * sockets in the kernel, as root; any other program's belong to its user.
 * Asked of the kernel by NETLINK_SOCK_DIAG (one exact lookup by the
 * connection's four-tuple, inet_diag_msg's idiag_uid), or, where that is
 * not built, read from /proc/net/tcp and tcp6, whose uid column is the
 * same number. The netlink socket is opened once, at start, so a target
 * out of descriptors can still ask. A peer whose owner cannot be found is
 * not let in.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"

/* An address as (family, 16 bytes): IPv4-mapped IPv6 as the IPv4 it is. */
struct endpoint {
	int family;
	uint8_t addr[16];
	uint16_t port; /* host order */
};

static int endpoint_of(const struct sockaddr_storage *ss, struct endpoint *e)
{
	memset(e, 0, sizeof(*e));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		e->family = AF_INET;
		memcpy(e->addr, &in->sin_addr, 4);
		e->port = ntohs(in->sin_port);
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			e->family = AF_INET;
			memcpy(e->addr, in6->sin6_addr.s6_addr + 12, 4);
		} else {
			e->family = AF_INET6;
			memcpy(e->addr, &in6->sin6_addr, 16);
		}
		e->port = ntohs(in6->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

bool address_is_loopback(const struct sockaddr_storage *ss)
{
	struct endpoint e;

	if (endpoint_of(ss, &e) < 0)
		return false;
	if (e.family == AF_INET)
		return e.addr[0] == 127;
	return memcmp(e.addr, in6addr_loopback.s6_addr, 16) == 0;
}

/* The sock_diag socket, kept for every lookup: one question and its answer at a time. */
static pthread_mutex_t diag_lock = PTHREAD_MUTEX_INITIALIZER;
static int diag_fd = -1;

void peer_init(void)
{
	struct timeval tv = {1, 0};

	diag_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (diag_fd >= 0)
		setsockopt(diag_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* The owner of the socket whose local end is PEER and remote end LOCAL, by sock_diag. Under diag_lock. */
static int uid_by_sock_diag(const struct endpoint *peer, const struct endpoint *local, uid_t *ret)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {0};
	union {
		struct nlmsghdr nlh;
		uint8_t bytes[8192];
	} buf;
	struct sockaddr_nl nl = {.nl_family = AF_NETLINK};
	int fd = diag_fd, r = -ENOENT;
	ssize_t n;
	static uint32_t seq;

	if (fd < 0)
		return -ENOTCONN;
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST;
	req.nlh.nlmsg_seq = ++seq;
	req.r.sdiag_family = (uint8_t)peer->family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0u;
	/* the peer's socket: its own end is the peer's address, its far end ours */
	req.r.id.idiag_sport = htons(peer->port);
	req.r.id.idiag_dport = htons(local->port);
	memcpy(req.r.id.idiag_src, peer->addr, peer->family == AF_INET ? 4 : 16);
	memcpy(req.r.id.idiag_dst, local->addr, local->family == AF_INET ? 4 : 16);
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&nl, sizeof(nl)) < 0)
		return -errno;
	/* an answer to an earlier question that timed out is passed over by its sequence number */
	do {
		n = recv(fd, &buf, sizeof(buf), 0);
	} while (n >= (ssize_t)sizeof(buf.nlh) && buf.nlh.nlmsg_seq != seq);
	if (n < 0)
		return -errno;
	for (struct nlmsghdr *h = &buf.nlh; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			r = h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error ? e->error : -EIO;
			break;
		}
		if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY && h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);

			*ret = (uid_t)m->idiag_uid;
			r = 0;
			break;
		}
	}
	return r;
}

/* The same from /proc/net/tcp or tcp6: the line whose local end is PEER and remote end LOCAL. */
static int uid_by_proc(const struct endpoint *peer, const struct endpoint *local, uid_t *ret)
{
	FILE *f = fopen(peer->family == AF_INET ? "/proc/net/tcp" : "/proc/net/tcp6", "re");
	char want_local[64], want_remote[64], line[512];
	int r = -ENOENT;

	if (!f)
		return -errno;
	/* the kernel prints each address's 32-bit words as the host reads them, then the port */
	for (int k = 0, words = peer->family == AF_INET ? 1 : 4; k < 2; k++) {
		const struct endpoint *e = k ? local : peer;
		char *out = k ? want_remote : want_local;
		int used = 0;

		for (int w = 0; w < words; w++) {
			uint32_t v;

			memcpy(&v, e->addr + 4 * w, 4);
			used += snprintf(out + used, 64 - (size_t)used, "%08X", v);
		}
		snprintf(out + used, 64 - (size_t)used, ":%04X", e->port);
	}
	while (fgets(line, sizeof(line), f)) {
		char loc[64], rem[64];
		unsigned int uid;

		/* sl local rem st tx:rx tr:when retrnsmt uid */
		if (sscanf(line, " %*s %63s %63s %*s %*s %*s %*s %u", loc, rem, &uid) == 3 && strcmp(loc, want_local) == 0 &&
		    strcmp(rem, want_remote) == 0) {
			*ret = (uid_t)uid;
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

int peer_uid(int fd, uid_t *ret_uid)
{
	struct sockaddr_storage a, b;
	socklen_t la = sizeof(a), lb = sizeof(b);
	struct endpoint peer, local;
	int r;

	if (getpeername(fd, (struct sockaddr *)&a, &la) < 0 || getsockname(fd, (struct sockaddr *)&b, &lb) < 0)
		return -errno;
	if (endpoint_of(&a, &peer) < 0 || endpoint_of(&b, &local) < 0 || peer.family != local.family)
		return -EAFNOSUPPORT;
	pthread_mutex_lock(&diag_lock);
	r = uid_by_sock_diag(&peer, &local, ret_uid);
	pthread_mutex_unlock(&diag_lock);
	if (r < 0)
		r = uid_by_proc(&peer, &local, ret_uid);
	return r;
}
