/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloud-target: a user-space NVMe/TCP target serving one subsystem whose
 * namespaces are files, with the geometry and atomic-write promise given on
 * the command line. Each backing file is opened through liblcloud's write
 * guard, so a namespace can never be storage that holds a mounted file
 * system, an active swap area, or a file or device another program holds;
 * the target then does its I/O through that guarded descriptor, duplicated,
 * and keeps the guard's watch on it while it runs (ns_watch.c): a namespace
 * whose storage gains a user is write protected. It listens on loopback
 * unless --listen names another address, and then only with a DH-HMAC-CHAP
 * secret, which every host must prove it has; on loopback without one only
 * root (the kernel's host) and the target's own user may connect (server.c).
 * With any option of the cloud back end (backend.c) its namespaces are a
 * cloud volume: caps, latency, the device's own read-ahead and a scheduler
 * that may use hints.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <getopt.h>
#include <limits.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "lcloud/lcloud.h"
#include "ns_watch.h"
#include "nvme_lcloud_ext.h"
#include "power.h"
#include "server.h"
#include "target.h"
#include "write_log.h"

#define DEFAULT_NQN "nqn.2026-12.org.liblcloud:target"
#define DEFAULT_LISTEN "127.0.0.1:4420"
#define DEFAULT_MAX_CONNECTIONS 256
#define DEFAULT_TIMEOUT_MS 10000
#define DEFAULT_DATA_BUFFER (64ull << 20)
#define DEFAULT_CONN_DATA_BUFFER (2ull << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: lcloud-target [options] --ns FILE [--ns FILE...]\n"
		"Serve FILEs as the namespaces of one NVMe/TCP subsystem.\n\n"
		"  --ns FILE                 a namespace backed by FILE (a file or an unused block device)\n"
		"  --nqn NQN                 the subsystem's NQN (default " DEFAULT_NQN ")\n"
		"  --listen ADDR:PORT        where to listen (default " DEFAULT_LISTEN "; [ADDR]:PORT for IPv6)\n"
		"  --lba-size 512|4096       logical block size (default 4096)\n"
		"  --mdts N                  largest transfer 2^N x 4 KiB, N 1..8 (default 5: 128 KiB)\n"
		"  --max-r2t-bytes BYTES     the most one R2T asks for, 4K..1M in 4K steps (default 128K)\n"
		"  --volatile-write-cache on|off  a volatile write cache (default off: writes are durable when done)\n"
		"  --nawun BYTES, --nawupf BYTES, --nabsn BYTES, --nabspf BYTES, --nabo BYTES\n"
		"                            the namespaces' atomic promise (sets NSFEAT bit 1)\n"
		"  --awun BYTES, --awupf BYTES  the controller's atomic write units\n"
		"  --serial TEXT, --model TEXT  Identify Controller's serial number and model\n"
		"  --fdp N                   Flexible Data Placement with N placement handles, 1..16 (default off)\n"
		"  --placement-use H=USE[,H=USE...]  what handle H is for: data, metadata, journal, background\n"
		"                            or unspecified (the default), in the Linux cloud extension\n"
		"  --namespace-use N=USE[,N=USE...]  what namespace N's writes without a placement handle are for\n"
		"A cloud back end (any of these turns it on; the namespaces share it):\n"
		"  --disk-model NAME         the caps a provider publishes: gp3, hyperdisk-balanced, ops-bound, bw-bound\n"
		"  --disk-model-scale F      a volume F times as fast: caps times F, latency and wait limit divided by F\n"
		"  --iops N, --bandwidth BYTES  operations and bytes per second at most (0: no cap)\n"
		"  --iops-size BYTES         an I/O up to this counts as one operation (default 256K)\n"
		"  --latency USEC            each command's time at the back end (default 0)\n"
		"  --device-read-ahead BYTES the device's own sequential read-ahead, up to BYTES ahead (default 0: none)\n"
		"  --read-ahead-cache BYTES  its cache (default 8M)\n"
		"  --hints use|ignore|read-ahead|placement  the hints the scheduler acts on (default ignore)\n"
		"  --max-wait MSEC           past this wait a command is served in turns with the levels above (default 1000;\n"
		"                            0 never)\n"
		"Power cuts (cached and in-flight writes; SIGUSR1 cuts the power now):\n"
		"  --cache-size BYTES        the cache's size (default 64M): past it the oldest write goes to the file\n"
		"  --cut-after N             cut the power when I/O command N + 1 arrives (a write: while its data does)\n"
		"  --seed N                  decides what each cached or in-flight write leaves at the cut (default 1)\n"
		"  --liar                    advertise the promise and tear covered writes anyway\n"
		"  --power-report FILE       each cached or in-flight write's fate at the cut (made at start, replaced\n"
		"                            whole at the cut; exit status 3 if it or a log cannot be written)\n"
		"What it received:\n"
		"  --write-log FILE          new files: each namespace's writes, flushes and discards (dm-log-writes);\n"
		"                            %%n in FILE is the namespace ID (needed with several namespaces)\n"
		"  --write-log-limit BYTES   each log's largest size: past it, logged commands fail (Capacity Exceeded)\n"
		"  --trace FILE              a new file: each I/O command's fields, hints and times\n"
		"Who may connect (see \"Who may connect\" in lcloud-target(8)):\n"
		"  --allow-host NQN          only hosts with these NQNs (repeatable; default any host NQN)\n"
		"  --dhchap-secret FILE      every host authenticates (DH-HMAC-CHAP) with the secret in FILE (mode 600),\n"
		"                            as nvme connect --dhchap-secret; needed to listen beyond loopback\n"
		"  --dhchap-ctrl-secret FILE the target's own secret, for hosts that ask it to authenticate itself\n"
		"Bounds:\n"
		"  --max-connections N       open connections (default %u); past it the oldest unfinished handshake goes\n"
		"  --handshake-timeout SECS  from connecting to Connect done and authenticated (default %g)\n"
		"  --data-timeout SECS       for a PDU begun, and for the data an R2T asks for (default %g)\n"
		"  --data-buffer BYTES       command data buffered for all connections (default %lluM)\n"
		"  --connection-data-buffer BYTES  ... for one connection (default %lluM); past them, commands wait\n"
		"  -q, --quiet               no log lines\n"
		"  -h, --help, --version\n", DEFAULT_MAX_CONNECTIONS, DEFAULT_TIMEOUT_MS / 1000.0,
		DEFAULT_TIMEOUT_MS / 1000.0, DEFAULT_DATA_BUFFER >> 20, DEFAULT_CONN_DATA_BUFFER >> 20);
}

/* A factor: a positive number, at most 1000. */
static int parse_factor(const char *s, double *ret)
{
	char *end;

	errno = 0;
	*ret = strtod(s, &end);
	return errno || end == s || *end || !(*ret > 0 && *ret <= 1000) ? -EINVAL : 0;
}

/* --hints: use (every hint), ignore (none), or a list of read-ahead and placement. */
static int parse_hints(const char *s, unsigned int *ret)
{
	*ret = 0;
	if (strcmp(s, "use") == 0) {
		*ret = SCHED_HINT_READ_AHEAD | SCHED_HINT_PLACEMENT;
		return 0;
	}
	if (strcmp(s, "ignore") == 0)
		return 0;
	while (*s) {
		size_t len = strcspn(s, ",");

		if (len == 10 && strncmp(s, "read-ahead", len) == 0)
			*ret |= SCHED_HINT_READ_AHEAD;
		else if (len == 9 && strncmp(s, "placement", len) == 0)
			*ret |= SCHED_HINT_PLACEMENT;
		else
			return -EINVAL;
		s += len;
		if (*s == ',' && *++s == '\0')
			return -EINVAL;
	}
	return 0;
}

/* BYTES with an optional K or M suffix. */
static int parse_bytes(const char *s, uint32_t *ret)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end || v > UINT32_MAX)
		return -EINVAL;
	*ret = (uint32_t)v;
	return 0;
}

/* BYTES with an optional K, M or G suffix, as 64 bits. */
static int parse_size64(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	if (*end || v > UINT64_MAX >> shift)
		return -EINVAL;
	*ret = (uint64_t)v << shift;
	return 0;
}

/* SECONDS (a decimal number, 0.01 to one day) in milliseconds. */
static int parse_seconds(const char *s, uint32_t *ret_ms)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0.01 || v > 86400)
		return -EINVAL;
	*ret_ms = (uint32_t)lround(v * 1000);
	return 0;
}

/* The write log's name: a pattern with %n (and %% for a %), a name per namespace when there are several. */
static int wlog_path_check(const char *pattern, unsigned int n_ns)
{
	char one[4096], two[4096];
	int r = wlog_name(pattern, 1, one, sizeof(one));

	if (r == 0)
		r = wlog_name(pattern, 2, two, sizeof(two));
	if (r < 0) {
		fprintf(stderr, "lcloud-target: --write-log %s: %s\n", pattern,
			r == -EINVAL ? "a %% is followed by n (the namespace ID) or %%" : strerror(-r));
		return r;
	}
	if (n_ns > 1 && strcmp(one, two) == 0) {
		fprintf(stderr, "lcloud-target: --write-log %s: with %u namespaces the name needs %%n, the namespace ID\n",
			pattern, n_ns);
		return -EINVAL;
	}
	return 0;
}

/* The long name of option VAL. */
static const char *option_name(const struct option *opts, int val)
{
	for (; opts->name; opts++)
		if (opts->val == val)
			return opts->name;
	return "?";
}

static int parse_u64(const char *s, uint64_t *ret)
{
	char *end;

	errno = 0;
	*ret = strtoull(s, &end, 10);
	return errno || end == s || *end || *s == '-' ? -EINVAL : 0;
}

/* The signals one thread waits for: SIGUSR1, and with a back end SIGTERM and SIGINT. */
static void switch_signals(const struct target *t, sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGUSR1);
	if (t->cfg.backend.on) {
		sigaddset(set, SIGTERM);
		sigaddset(set, SIGINT);
	}
}

/* SIGUSR1 is the power switch; SIGTERM and SIGINT end a back end's target with its counters. */
static void *power_switch(void *arg)
{
	struct target *t = arg;
	sigset_t set;
	int sig;

	switch_signals(t, &set);
	while (sigwait(&set, &sig) != 0)
		;
	if (sig == SIGUSR1)
		power_cut(t, "SIGUSR1");
	backend_report(t);
	tlog(t, "%s: the target ends", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	_exit(0);
}

/* KEY=USE[,KEY=USE...], KEY from FIRST to FIRST + COUNT - 1: each one's use, as the Linux cloud extension numbers them. */
static int parse_use_list(const char *s, uint8_t *use, unsigned int first, unsigned int count, unsigned int *ret_highest)
{
	static const char *const names[] = {
		[LCLOUD_EXT_USE_UNSPECIFIED] = "unspecified", [LCLOUD_EXT_USE_DATA] = "data",
		[LCLOUD_EXT_USE_METADATA] = "metadata",       [LCLOUD_EXT_USE_JOURNAL] = "journal",
		[LCLOUD_EXT_USE_BACKGROUND] = "background",
	};

	while (*s) {
		char *end;
		unsigned long h;
		size_t len, i;

		errno = 0;
		h = strtoul(s, &end, 10);
		if (errno || end == s || *end != '=' || h < first || h - first >= count || *s == '-')
			return -EINVAL;
		h -= first;
		s = end + 1;
		len = strcspn(s, ",");
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i]) == len && strncmp(s, names[i], len) == 0)
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return -EINVAL;
		use[h] = (uint8_t)i;
		if (h + 1 > *ret_highest)
			*ret_highest = (unsigned int)h + 1;
		s += len;
		if (*s == ',' && *++s == '\0')
			return -EINVAL;
	}
	return 0;
}

static int check_atomic(const char *name, uint32_t bytes, uint32_t lba, bool zero_ok)
{
	if (bytes % lba || bytes / lba > 65536 || (!zero_ok && bytes == 0)) {
		fprintf(stderr, "lcloud-target: --%s %u: a multiple of the %u-byte logical block, at most 65536 blocks\n",
			name, bytes, lba);
		return -EINVAL;
	}
	return 0;
}

static void make_nguid(struct target_namespace *ns, unsigned int nsid, const struct stat *st)
{
	uint64_t a = (uint64_t)st->st_dev * 0x9e3779b97f4a7c15ull ^ st->st_ino;
	uint64_t b = (uint64_t)nsid << 32 | (uint32_t)st->st_ino;

	for (int i = 0; i < 8; i++) {
		ns->nguid[i] = (uint8_t)(a >> (8 * i));
		ns->nguid[8 + i] = (uint8_t)(b >> (8 * i));
	}
}

static int open_namespace(struct target *t, struct lcloud_ctx *ctx, const char *path)
{
	struct target_namespace *ns = &t->ns[t->n_ns];
	struct lcloud_queue *q;
	struct stat st;
	uint64_t size;
	int r, fd, fl;

	/* the guard decides: a file a mounted loop device uses, a swap file, a mounted disk are refused */
	r = lcloud_queue_open(ctx, path, 1, LCLOUD_BACKEND_SYNC, LCLOUD_QUEUE_WRITE, &q);
	if (r < 0) {
		fprintf(stderr, "lcloud-target: %s: %s\n", path,
			*lcloud_ctx_get_error(ctx) ? lcloud_ctx_get_error(ctx) : strerror(-r));
		return r;
	}
	/*
	 * Buffered I/O through a duplicate of the guarded descriptor, without O_DIRECT (a flag of the open file
	 * both share; the queue itself does no I/O here): a new open would break the write lease the queue holds
	 * on a file, as any other opener does. Durable at each write without a volatile cache: RWF_DSYNC
	 * (ns_guard.c), since O_DSYNC cannot be set on an open file.
	 */
	fd = fcntl(lcloud_queue_get_fd(q), F_DUPFD_CLOEXEC, 3);
	fl = fd < 0 ? -1 : fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_DIRECT) < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		fprintf(stderr, "lcloud-target: %s: duplicating the guarded descriptor: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		lcloud_queue_free(q);
		return r;
	}
	size = (uint64_t)st.st_size;
	if (S_ISBLK(st.st_mode) && ioctl(fd, BLKGETSIZE64, &size) < 0)
		size = 0;
	if (size / t->cfg.lba_size == 0) {
		fprintf(stderr, "lcloud-target: %s: smaller than one %u-byte block\n", path, t->cfg.lba_size);
		close(fd);
		lcloud_queue_free(q);
		return -EINVAL;
	}
	ns->queue = q;
	snprintf(ns->path, sizeof(ns->path), "%s", path);
	ns->fd = fd;
	pthread_mutex_init(&ns->write_lock, NULL);
	ns->write_protected = false;
	ns->blocks = size / t->cfg.lba_size;
	t->n_ns++;
	make_nguid(ns, t->n_ns, &st);
	tlog(t, "namespace %u: %s, %llu blocks of %u bytes", t->n_ns, path, (unsigned long long)ns->blocks,
	     t->cfg.lba_size);
	return 0;
}

/* What main opened, given back on the way out (a leak checker sees every exit). */
static void release_all(struct target *t, struct lcloud_ctx *ctx)
{
	for (unsigned int i = 0; i < t->n_ns; i++) {
		/* the watch's thread may be looking: it finds the namespace write protected, and its queue unused */
		pthread_mutex_lock(&t->ns[i].write_lock);
		t->ns[i].write_protected = true;
		close(t->ns[i].fd);
		lcloud_queue_free(t->ns[i].queue);
		t->ns[i].queue = NULL;
		pthread_mutex_unlock(&t->ns[i].write_lock);
	}
	t->n_ns = 0;
	wlog_close(t);
	if (t->report_fd >= 0)
		close(t->report_fd);
	t->report_fd = -1;
	OPENSSL_cleanse(&t->cfg.host_key, sizeof(t->cfg.host_key));
	OPENSSL_cleanse(&t->cfg.ctrl_key, sizeof(t->cfg.ctrl_key));
	lcloud_ctx_free(ctx);
}

/* The DH-HMAC-CHAP secrets, from their files. 0, or -errno after saying why. */
static int load_secrets(struct target_config *cfg, const char *host, const char *ctrl)
{
	const char *paths[2] = {host, ctrl};
	struct dhchap_key *keys[2] = {&cfg->host_key, &cfg->ctrl_key};
	bool *set[2] = {&cfg->host_key_set, &cfg->ctrl_key_set};

	if (ctrl && !host) {
		fprintf(stderr, "lcloud-target: --dhchap-ctrl-secret needs --dhchap-secret: the target proves itself to "
			"hosts that have proven themselves\n");
		return -EINVAL;
	}
	for (int i = 0; i < 2; i++) {
		char err[200];

		if (!paths[i])
			continue;
		if (strncmp(paths[i], "DHHC-1:", 7) == 0) {
			/* a command line is every local user's to read (ps, /proc/PID/cmdline) */
			fprintf(stderr, "lcloud-target: --%s takes a file holding the secret, not the secret itself\n",
				i ? "dhchap-ctrl-secret" : "dhchap-secret");
			return -EINVAL;
		}
		if (dhchap_key_load(paths[i], keys[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "lcloud-target: --%s %s: %s\n", i ? "dhchap-ctrl-secret" : "dhchap-secret", paths[i],
				err);
			return -EINVAL;
		}
		*set[i] = true;
	}
	return 0;
}

/* Beyond loopback every host must authenticate; on loopback the peer's user is checked instead. */
static int check_listen(struct target_config *cfg, const char *host, const char *port)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST};
	struct addrinfo *res;
	struct sockaddr_storage ss = {0};

	if (getaddrinfo(host, port, &hints, &res) != 0) {
		fprintf(stderr, "lcloud-target: --listen %s:%s: not a numeric address and port\n", host, port);
		return -EINVAL;
	}
	memcpy(&ss, res->ai_addr, res->ai_addrlen < sizeof(ss) ? res->ai_addrlen : sizeof(ss));
	freeaddrinfo(res);
	cfg->loopback = address_is_loopback(&ss);
	cfg->own_uid = geteuid();
	if (!cfg->loopback && !cfg->host_key_set) {
		fprintf(stderr, "lcloud-target: --listen %s:%s reaches other machines: give --dhchap-secret FILE, and every "
			"host must prove it has the secret (nvme connect --dhchap-secret)\n", host, port);
		return -EPERM;
	}
	return 0;
}

/* Splits ADDR:PORT or [ADDR]:PORT. */
static int split_listen(char *s, char **ret_host, char **ret_port)
{
	char *colon = strrchr(s, ':');

	if (!colon)
		return -EINVAL;
	*colon = '\0';
	*ret_port = colon + 1;
	if (s[0] == '[') {
		size_t n = strlen(s);

		if (n < 2 || s[n - 1] != ']')
			return -EINVAL;
		s[n - 1] = '\0';
		s++;
	}
	*ret_host = s;
	return **ret_host && **ret_port ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	enum { O_NS = 256, O_NQN, O_LISTEN, O_LBA, O_MDTS, O_VWC, O_NAWUN, O_NAWUPF, O_NABSN, O_NABSPF, O_NABO,
	       O_AWUN, O_AWUPF, O_SERIAL, O_MODEL, O_CACHE, O_CUT, O_SEED, O_LIAR, O_REPORT, O_WLOG, O_TRACE, O_FDP,
	       O_PLACEMENT_USE, O_VERSION, O_MAX_R2T, O_WLOG_LIMIT, O_ALLOW_HOST, O_DHCHAP, O_DHCHAP_CTRL,
	       O_MAX_CONNS, O_HANDSHAKE_TIMEOUT, O_DATA_TIMEOUT, O_DATA_BUFFER, O_CONN_DATA_BUFFER,
	       O_NAMESPACE_USE, O_DISK_MODEL, O_DISK_SCALE, O_IOPS, O_BANDWIDTH, O_IOPS_SIZE, O_LATENCY, O_DEVICE_RA,
	       O_RA_CACHE, O_HINTS, O_MAX_WAIT };
	static const struct option opts[] = {
		{"ns", required_argument, NULL, O_NS},
		{"nqn", required_argument, NULL, O_NQN},
		{"listen", required_argument, NULL, O_LISTEN},
		{"lba-size", required_argument, NULL, O_LBA},
		{"mdts", required_argument, NULL, O_MDTS},
		{"volatile-write-cache", required_argument, NULL, O_VWC},
		{"nawun", required_argument, NULL, O_NAWUN},
		{"nawupf", required_argument, NULL, O_NAWUPF},
		{"nabsn", required_argument, NULL, O_NABSN},
		{"nabspf", required_argument, NULL, O_NABSPF},
		{"nabo", required_argument, NULL, O_NABO},
		{"awun", required_argument, NULL, O_AWUN},
		{"awupf", required_argument, NULL, O_AWUPF},
		{"serial", required_argument, NULL, O_SERIAL},
		{"model", required_argument, NULL, O_MODEL},
		{"cache-size", required_argument, NULL, O_CACHE},
		{"cut-after", required_argument, NULL, O_CUT},
		{"seed", required_argument, NULL, O_SEED},
		{"liar", no_argument, NULL, O_LIAR},
		{"power-report", required_argument, NULL, O_REPORT},
		{"write-log", required_argument, NULL, O_WLOG},
		{"trace", required_argument, NULL, O_TRACE},
		{"fdp", required_argument, NULL, O_FDP},
		{"placement-use", required_argument, NULL, O_PLACEMENT_USE},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, O_VERSION},
		{"max-r2t-bytes", required_argument, NULL, O_MAX_R2T},
		{"write-log-limit", required_argument, NULL, O_WLOG_LIMIT},
		{"allow-host", required_argument, NULL, O_ALLOW_HOST},
		{"dhchap-secret", required_argument, NULL, O_DHCHAP},
		{"dhchap-ctrl-secret", required_argument, NULL, O_DHCHAP_CTRL},
		{"max-connections", required_argument, NULL, O_MAX_CONNS},
		{"handshake-timeout", required_argument, NULL, O_HANDSHAKE_TIMEOUT},
		{"data-timeout", required_argument, NULL, O_DATA_TIMEOUT},
		{"data-buffer", required_argument, NULL, O_DATA_BUFFER},
		{"connection-data-buffer", required_argument, NULL, O_CONN_DATA_BUFFER},
		{"namespace-use", required_argument, NULL, O_NAMESPACE_USE},
		{"disk-model", required_argument, NULL, O_DISK_MODEL},
		{"disk-model-scale", required_argument, NULL, O_DISK_SCALE},
		{"iops", required_argument, NULL, O_IOPS},
		{"bandwidth", required_argument, NULL, O_BANDWIDTH},
		{"iops-size", required_argument, NULL, O_IOPS_SIZE},
		{"latency", required_argument, NULL, O_LATENCY},
		{"device-read-ahead", required_argument, NULL, O_DEVICE_RA},
		{"read-ahead-cache", required_argument, NULL, O_RA_CACHE},
		{"hints", required_argument, NULL, O_HINTS},
		{"max-wait", required_argument, NULL, O_MAX_WAIT},
		{0},
	};
	static struct target t;
	const char *ns_paths[TARGET_MAX_NAMESPACES], *wlog_path = NULL, *trace_path = NULL;
	const char *host_secret = NULL, *ctrl_secret = NULL;
		unsigned int n_paths = 0, uses_given = 0, ns_uses_given = 0;
	struct backend_config *be = &t.cfg.backend;
	uint64_t iops = UINT64_MAX, bandwidth = UINT64_MAX; /* not given */
	uint64_t model_iops = 0, model_bandwidth = 0;      /* --disk-model's, which --iops and --bandwidth replace */
	char listen_arg[300] = DEFAULT_LISTEN, name[300], *host, *port;
	struct target_config *cfg = &t.cfg;
	struct lcloud_ctx *ctx;
	int opt, fd, r;

	snprintf(cfg->nqn, sizeof(cfg->nqn), "%s", DEFAULT_NQN);
	snprintf(cfg->serial, sizeof(cfg->serial), "lcloud-target");
	snprintf(cfg->model, sizeof(cfg->model), "Linux cloud reference target");
	cfg->lba_size = 4096;
	cfg->mdts = 5;
	cfg->cache_bytes = 64u << 20;
	cfg->seed = 1;
	cfg->max_r2t_bytes = TARGET_MAX_R2T_BYTES;
	cfg->max_connections = DEFAULT_MAX_CONNECTIONS;
	cfg->handshake_timeout_ms = cfg->data_timeout_ms = DEFAULT_TIMEOUT_MS;
	cfg->data_buffer = DEFAULT_DATA_BUFFER;
	cfg->conn_data_buffer = DEFAULT_CONN_DATA_BUFFER;
	t.report_fd = -1;
	be->scale = 1;
	be->iops_size = 256u << 10;
	be->read_ahead_cache = 8u << 20;
	be->max_wait_us = 1000000;
	while ((opt = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		uint32_t v = 0;
		int bad = 0;

		switch (opt) {
		case O_NS:
			if (n_paths == TARGET_MAX_NAMESPACES) {
				fprintf(stderr, "lcloud-target: at most %d namespaces\n", TARGET_MAX_NAMESPACES);
				return 2;
			}
			ns_paths[n_paths++] = optarg;
			break;
		case O_NQN:
			if (strlen(optarg) > TARGET_NQN_MAX || !*optarg) {
				fprintf(stderr, "lcloud-target: --nqn: 1 to %d bytes\n", TARGET_NQN_MAX);
				return 2;
			}
			snprintf(cfg->nqn, sizeof(cfg->nqn), "%s", optarg);
			break;
		case O_LISTEN:
			snprintf(listen_arg, sizeof(listen_arg), "%s", optarg);
			break;
		case O_LBA:
			bad = parse_bytes(optarg, &v) || (v != 512 && v != 4096);
			cfg->lba_size = v;
			break;
		case O_MDTS:
			bad = parse_bytes(optarg, &v) || v < 1 || v > 8;
			cfg->mdts = (uint8_t)v;
			break;
		case O_VWC:
			bad = strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0;
			cfg->vwc = strcmp(optarg, "on") == 0;
			break;
		case O_NAWUN: bad = parse_bytes(optarg, &cfg->nawun); break;
		case O_NAWUPF: bad = parse_bytes(optarg, &cfg->nawupf); break;
		case O_NABSN: bad = parse_bytes(optarg, &cfg->nabsn); break;
		case O_NABSPF: bad = parse_bytes(optarg, &cfg->nabspf); break;
		case O_NABO: bad = parse_bytes(optarg, &cfg->nabo); break;
		case O_AWUN: bad = parse_bytes(optarg, &cfg->awun); break;
		case O_AWUPF: bad = parse_bytes(optarg, &cfg->awupf); break;
		case O_SERIAL:
			snprintf(cfg->serial, sizeof(cfg->serial), "%s", optarg);
			break;
		case O_MODEL:
			snprintf(cfg->model, sizeof(cfg->model), "%s", optarg);
			break;
		case O_CACHE:
			bad = parse_bytes(optarg, &v) || v == 0;
			cfg->cache_bytes = v;
			break;
		case O_CUT:
			bad = parse_u64(optarg, &cfg->cut_after) || cfg->cut_after == 0;
			break;
		case O_SEED:
			bad = parse_u64(optarg, &cfg->seed);
			break;
		case O_LIAR:
			cfg->liar = true;
			break;
		case O_REPORT:
			snprintf(cfg->report_path, sizeof(cfg->report_path), "%s", optarg);
			break;
		case O_WLOG:
			wlog_path = optarg;
			break;
		case O_TRACE:
			trace_path = optarg;
			break;
		case O_FDP:
			bad = parse_bytes(optarg, &v) || v < 1 || v > TARGET_FDP_MAX_HANDLES;
			cfg->fdp_handles = v;
			break;
		case O_PLACEMENT_USE:
			bad = parse_use_list(optarg, cfg->placement_use, 0, TARGET_FDP_MAX_HANDLES, &uses_given) < 0;
			break;
		case O_NAMESPACE_USE:
			bad = parse_use_list(optarg, cfg->namespace_use, 1, TARGET_MAX_NAMESPACES, &ns_uses_given) < 0;
			break;
		case O_DISK_MODEL: {
			uint32_t size;

			bad = strlen(optarg) >= sizeof(be->model) ||
			      backend_model(optarg, &model_iops, &model_bandwidth, &size) < 0;
			if (!bad)
				snprintf(be->model, sizeof(be->model), "%s", optarg);
			be->on = true;
			break;
		}
		case O_DISK_SCALE:
			bad = parse_factor(optarg, &be->scale);
			be->on = true;
			break;
		case O_IOPS:
		case O_LATENCY:
		case O_MAX_WAIT: {
			uint64_t n;

			bad = parse_u64(optarg, &n) || n > (opt == O_IOPS ? 100000000u : 3600000000u);
			if (opt == O_IOPS)
				iops = n;
			else if (opt == O_LATENCY)
				be->latency_us = n;
			else
				be->max_wait_us = n * 1000;
			be->on = true;
			break;
		}
		case O_BANDWIDTH:
			bad = parse_bytes(optarg, &v);
			bandwidth = v;
			be->on = true;
			break;
		case O_IOPS_SIZE:
			bad = parse_bytes(optarg, &be->iops_size) || be->iops_size < 512;
			be->on = true;
			break;
		case O_DEVICE_RA:
			bad = parse_bytes(optarg, &v) || v > (64u << 20);
			be->read_ahead_bytes = v;
			be->on = true;
			break;
		case O_RA_CACHE:
			bad = parse_bytes(optarg, &v) || v > (1u << 30);
			be->read_ahead_cache = v;
			be->on = true;
			break;
		case O_HINTS:
			bad = parse_hints(optarg, &be->hints) < 0;
			be->on = true;
			break;
		case 'q':
			t.quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case O_VERSION:
			printf("lcloud-target %s\n", LCLOUD_VERSION);
			return 0;
		case O_MAX_R2T:
			bad = parse_bytes(optarg, &cfg->max_r2t_bytes) || cfg->max_r2t_bytes % 4096 ||
			      cfg->max_r2t_bytes == 0 || cfg->max_r2t_bytes > (1u << 20);
			break;
		case O_WLOG_LIMIT:
			bad = parse_size64(optarg, &cfg->wlog_limit) || cfg->wlog_limit == 0;
			break;
		case O_ALLOW_HOST:
			if (cfg->n_allowed_hosts == TARGET_MAX_HOSTS || !*optarg || strlen(optarg) > TARGET_NQN_MAX) {
				fprintf(stderr, "lcloud-target: --allow-host: at most %d hosts, each NQN 1 to %d bytes\n",
					TARGET_MAX_HOSTS, TARGET_NQN_MAX);
				return 2;
			}
			snprintf(cfg->allowed_hosts[cfg->n_allowed_hosts++], TARGET_NQN_MAX + 1, "%s", optarg);
			break;
		case O_DHCHAP:
			host_secret = optarg;
			break;
		case O_DHCHAP_CTRL:
			ctrl_secret = optarg;
			break;
		case O_MAX_CONNS:
			bad = parse_bytes(optarg, &v) || v == 0 || v > 65536;
			cfg->max_connections = v;
			break;
		case O_HANDSHAKE_TIMEOUT:
			bad = parse_seconds(optarg, &cfg->handshake_timeout_ms);
			break;
		case O_DATA_TIMEOUT:
			bad = parse_seconds(optarg, &cfg->data_timeout_ms);
			break;
		case O_DATA_BUFFER:
			bad = parse_size64(optarg, &cfg->data_buffer) || cfg->data_buffer == 0;
			break;
		case O_CONN_DATA_BUFFER:
			bad = parse_size64(optarg, &cfg->conn_data_buffer) || cfg->conn_data_buffer == 0;
			break;
		default:
			usage(stderr);
			return 2;
		}
		if (bad) {
			fprintf(stderr, "lcloud-target: --%s %s: not a value it takes (see --help)\n", option_name(opts, opt),
				optarg);
			return 2;
		}
	}
	if (optind != argc || n_paths == 0) {
		fprintf(stderr, "lcloud-target: %s\n", n_paths ? "unexpected arguments" : "no namespace: give --ns FILE");
		usage(stderr);
		return 2;
	}
	if (check_atomic("nawun", cfg->nawun, cfg->lba_size, true) || check_atomic("nawupf", cfg->nawupf, cfg->lba_size, true) ||
	    check_atomic("nabsn", cfg->nabsn, cfg->lba_size, true) || check_atomic("nabspf", cfg->nabspf, cfg->lba_size, true) ||
	    check_atomic("nabo", cfg->nabo, cfg->lba_size, true) || check_atomic("awun", cfg->awun, cfg->lba_size, true) ||
	    check_atomic("awupf", cfg->awupf, cfg->lba_size, true))
		return 2;
	if (uses_given > cfg->fdp_handles) {
		fprintf(stderr, "lcloud-target: --placement-use names handle %u, and --fdp offers %u\n", uses_given - 1,
			cfg->fdp_handles);
		return 2;
	}
	if (ns_uses_given > n_paths) {
		fprintf(stderr, "lcloud-target: --namespace-use names namespace %u, and there are %u\n", ns_uses_given,
			n_paths);
		return 2;
	}
	if (iops == UINT64_MAX)
		iops = model_iops;
	if (bandwidth == UINT64_MAX)
		bandwidth = model_bandwidth;
	be->iops = (uint64_t)((double)iops * be->scale + 0.5);
	be->bytes_per_s = (uint64_t)((double)bandwidth * be->scale + 0.5);
	/* a volume F times as fast: its caps times F, its times (latency, wait limit) divided by F */
	be->latency_us = (uint64_t)((double)be->latency_us / be->scale + 0.5);
	be->max_wait_us = (uint64_t)((double)be->max_wait_us / be->scale + 0.5);
	if ((iops && !be->iops) || (bandwidth && !be->bytes_per_s)) {
		fprintf(stderr, "lcloud-target: --disk-model-scale %g leaves a cap of 0\n", be->scale);
		return 2;
	}
	if (split_listen(listen_arg, &host, &port) < 0) {
		fprintf(stderr, "lcloud-target: --listen %s: ADDR:PORT or [ADDR]:PORT, numeric\n", listen_arg);
		return 2;
	}
	if (wlog_path && wlog_path_check(wlog_path, n_paths) < 0)
		return 2;
	if (cfg->wlog_limit && cfg->wlog_limit < 2ull * cfg->lba_size) {
		fprintf(stderr, "lcloud-target: --write-log-limit %llu: less than a log's super block and one entry (%u "
			"bytes)\n", (unsigned long long)cfg->wlog_limit, 2 * cfg->lba_size);
		return 2;
	}
	if (load_secrets(cfg, host_secret, ctrl_secret) < 0 || check_listen(cfg, host, port) < 0)
		return 2;
	pthread_mutex_init(&t.lock, NULL);
	pthread_mutex_init(&t.cache_lock, NULL);
	pthread_mutex_init(&t.wlog_lock, NULL);
	t.next_cntlid = 1;
	t.started_us = trace_now_us();
	{
		sigset_t set;
		pthread_t thread;

		/* blocked here, so every thread made after inherits it and only power_switch takes it */
		switch_signals(&t, &set);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		if (pthread_create(&thread, NULL, power_switch, &t) != 0)
			return 1;
		pthread_detach(thread);
	}
	if (lcloud_ctx_new(&ctx) < 0)
		return 1;
	for (unsigned int i = 0; i < n_paths; i++)
		if (open_namespace(&t, ctx, ns_paths[i]) < 0)
			goto fail;
	for (unsigned int i = 0; wlog_path && i < t.n_ns; i++) {
		char path[4096];

		r = wlog_name(wlog_path, i + 1, path, sizeof(path));
		if (r < 0 || (r = wlog_open(&t, i, path)) < 0) {
			fprintf(stderr, "lcloud-target: --write-log %s: %s (it must be a new file)\n", path, strerror(-r));
			goto fail;
		}
	}
	if (trace_path && (r = trace_open(&t, trace_path)) < 0) {
		fprintf(stderr, "lcloud-target: --trace %s: %s (it must be a new file)\n", trace_path, strerror(-r));
		goto fail;
	}
	if (cfg->report_path[0]) {
		char err[300];

		/* checked and made now: a report that could not be written is known before anything is served */
		if (power_report_prepare(&t, err, sizeof(err)) < 0) {
			fprintf(stderr, "lcloud-target: --power-report %s: %s\n", cfg->report_path, err);
			goto fail;
		}
	}
	if ((r = backend_start(&t)) < 0) {
		fprintf(stderr, "lcloud-target: the cloud back end: %s\n", strerror(-r));
		goto fail;
	}
	signal(SIGPIPE, SIG_IGN);
	r = ns_watch_start(&t);
	if (r < 0) {
		fprintf(stderr, "lcloud-target: no thread to watch the namespaces' storage: %s\n", strerror(-r));
		goto fail;
	}
	fd = server_listen(&t, host, port, name, sizeof(name));
	if (fd < 0) {
		fprintf(stderr, "lcloud-target: --listen %s:%s: %s\n", host, port, name);
		goto fail;
	}
	/* on stdout, for whoever started the target with port 0 */
	printf("listening %s %s\n", name, cfg->nqn);
	fflush(stdout);
	tlog(&t, "listening on %s, subsystem %s", name, cfg->nqn);
	r = server_run(&t, fd);
	release_all(&t, ctx);
	return r < 0 ? 1 : 0;

fail:
	release_all(&t, ctx);
	return 1;
}
