/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who else has a regular file open (held_file.h). The kernel's answer is a
 * write lease: F_SETLEASE F_WRLCK succeeds only when the caller's open file
 * description is the inode's only one (fs/locks.c, check_conflicting_open:
 * the inode's write and read counts must be the caller's own), which counts
 * every opener however it got there: a process by any name or hard link, a
 * loop device, a file system mounted from the file, swap. Only the file's
 * owner or a holder of CAP_LEASE may ask, and some file systems grant no
 * leases at all (EINVAL). The names come from /proc: each process's
 * descriptors are matched by the inode number in fdinfo (text, no file
 * system touched) and then by device through statx(AT_STATX_DONT_SYNC),
 * which does not wait on a FUSE or NFS server; mappings by the device and
 * inode that maps shows. A kept lease would signal the process (SIGIO, whose
 * default action ends it) when someone opens the file: the signal is made
 * SIGURG (ignored by default) before the lease exists and then switched off
 * (F_SETOWN 0: no owner, no signal), both checked on Linux 6.18, so a library
 * never takes over a signal of its caller's.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/kcmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "held_file.h"

int held_parse_fdinfo_ino(const char *text, size_t len, uint64_t *ret_ino)
{
	size_t i = 0;

	while (i < len) {
		size_t end = i;

		while (end < len && text[end] != '\n')
			end++;
		if (end - i > 4 && !memcmp(text + i, "ino:", 4)) {
			uint64_t v = 0;
			size_t j = i + 4;
			bool digits = false;

			while (j < end && (text[j] == ' ' || text[j] == '\t'))
				j++;
			for (; j < end && text[j] >= '0' && text[j] <= '9'; j++) {
				if (v > (UINT64_MAX - 9) / 10)
					return -ENOENT; /* no inode number is that long */
				v = v * 10 + (uint64_t)(text[j] - '0');
				digits = true;
			}
			if (!digits || j != end)
				return -ENOENT;
			*ret_ino = v;
			return 0;
		}
		i = end + 1;
	}
	return -ENOENT;
}

int held_parse_maps_line(const char *line, size_t len, unsigned int *ret_major, unsigned int *ret_minor,
			 uint64_t *ret_ino)
{
	char buf[256];
	unsigned int maj, min;
	uint64_t ino;
	int used = 0;

	/* "start-end perms offset MAJ:MIN inode [path]": the path may be long, the fields before it are not */
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (memchr(buf, '\0', len))
		return -EINVAL;
	if (sscanf(buf, "%*[0-9a-f]-%*[0-9a-f] %*4s %*[0-9a-f] %x:%x %" SCNu64 "%n", &maj, &min, &ino, &used) != 3 ||
	    (buf[used] && !isspace((unsigned char)buf[used])))
		return -EINVAL;
	*ret_major = maj;
	*ret_minor = min;
	*ret_ino = ino;
	return 0;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Is descriptor FD of this process the same open file as SELF_FD (a duplicate)? */
static bool same_open_file(int self_fd, int fd)
{
	pid_t me = getpid();

	if (fd == self_fd)
		return true;
	return syscall(SYS_kcmp, me, me, KCMP_FILE, self_fd, fd) == 0;
}

static void add_holder(struct held_scan *s, pid_t pid, int fd, const char *proc)
{
	struct held_holder *h;
	char path[64];
	FILE *f;

	for (unsigned int i = 0; i < s->n_holders; i++)
		if (s->holders[i].pid == pid && (fd < 0 || s->holders[i].fd < 0))
			return; /* a process that maps it as well as opening it is one holder */
	if (s->n_holders == HELD_SCAN_MAX) {
		s->n_more++;
		return;
	}
	h = &s->holders[s->n_holders++];
	h->pid = pid;
	h->fd = fd;
	h->self = pid == getpid();
	snprintf(h->comm, sizeof(h->comm), "?");
	snprintf(path, sizeof(path), "%s/%d/comm", proc, (int)pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(h->comm, sizeof(h->comm), f))
			h->comm[strcspn(h->comm, "\n")] = '\0';
		fclose(f);
	}
}

/* One process's descriptors: those whose fdinfo names inode INO, then checked by device. */
static int scan_fds(const char *proc, pid_t pid, dev_t dev, uint64_t ino, pid_t self_pid, int self_fd,
		    struct held_scan *s)
{
	char dir[64];
	struct dirent *de;
	DIR *d;
	int found = 0;
	bool hidden = false;

	snprintf(dir, sizeof(dir), "%s/%d/fd", proc, (int)pid);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno; /* gone since the listing, or not ours to read */
	while ((de = readdir(d))) {
		char info[600], link[300], text[512];
		struct statx stx;
		uint64_t fd_ino;
		ssize_t n;
		int ifd, fd;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		fd = atoi(de->d_name);
		snprintf(info, sizeof(info), "%s/%d/fdinfo/%s", proc, (int)pid, de->d_name);
		ifd = open(info, O_RDONLY | O_CLOEXEC);
		if (ifd < 0) {
			/* a listing may be readable where the descriptors are not (a process that ptrace cannot reach) */
			hidden |= errno == EACCES || errno == EPERM;
			continue;
		}
		/* pos, flags, mnt_id and ino come first; an epoll's list of targets after them is not needed */
		n = read(ifd, text, sizeof(text));
		close(ifd);
		if (n <= 0 || held_parse_fdinfo_ino(text, (size_t)n, &fd_ino) < 0 || fd_ino != ino)
			continue;
		snprintf(link, sizeof(link), "%s/%d/fd/%s", proc, (int)pid, de->d_name);
		if (statx(AT_FDCWD, link, AT_STATX_DONT_SYNC, STATX_INO, &stx) < 0 || stx.stx_ino != ino ||
		    makedev(stx.stx_dev_major, stx.stx_dev_minor) != dev)
			continue;
		if (pid == self_pid && self_fd >= 0 && same_open_file(self_fd, fd))
			continue;
		add_holder(s, pid, fd, proc);
		found = 1;
	}
	closedir(d);
	return found ? found : hidden ? -EACCES : 0;
}

/* One process's mappings of DEV:INO (a file mapped and then closed is still open to the kernel). */
static void scan_maps(const char *proc, pid_t pid, dev_t dev, uint64_t ino, struct held_scan *s)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/maps", proc, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while ((n = getline(&line, &cap, f)) > 0) {
		unsigned int maj, min;
		uint64_t i;

		if (held_parse_maps_line(line, (size_t)n, &maj, &min, &i) == 0 && i == ino && makedev(maj, min) == dev) {
			add_holder(s, pid, -1, proc);
			break;
		}
	}
	free(line);
	fclose(f);
}

int held_file_scan(const char *proc, dev_t dev, uint64_t ino, pid_t self_pid, int self_fd, struct held_scan *ret)
{
	double end = now_seconds() + HELD_SCAN_SECONDS;
	struct dirent *de;
	DIR *d;

	memset(ret, 0, sizeof(*ret));
	d = opendir(proc);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *tail;
		long pid = strtol(de->d_name, &tail, 10);
		int r;

		if (*tail || pid <= 0 || !isdigit((unsigned char)de->d_name[0]))
			continue;
		if (now_seconds() > end) {
			ret->incomplete = true;
			break;
		}
		r = scan_fds(proc, (pid_t)pid, dev, ino, self_pid, self_fd, ret);
		if (r == -EACCES || r == -EPERM)
			ret->n_hidden++;
		else if (r == 0 && pid != self_pid)
			scan_maps(proc, (pid_t)pid, dev, ino, ret);
	}
	closedir(d);
	return 0;
}

void held_scan_describe(const struct held_scan *s, char *buf, size_t size)
{
	size_t used = 0;

	if (!size)
		return;
	buf[0] = '\0';
	for (unsigned int i = 0; i < s->n_holders && used < size; i++) {
		const struct held_holder *h = &s->holders[i];
		int n;

		if (h->self)
			n = snprintf(buf + used, size - used, "%sthis process itself (%s, fd %d)", i ? ", " : "", h->comm,
				     h->fd);
		else if (h->fd >= 0)
			n = snprintf(buf + used, size - used, "%s%s (pid %d, fd %d)", i ? ", " : "", h->comm, (int)h->pid,
				     h->fd);
		else
			n = snprintf(buf + used, size - used, "%s%s (pid %d, mapped)", i ? ", " : "", h->comm,
				     (int)h->pid);
		used += n > 0 ? (size_t)n : 0;
	}
	if (s->n_more && used < size)
		snprintf(buf + used, size - used, " and %u more", s->n_more);
}

/* " (1 process could not be looked at)", or "" when every process was. */
static void hidden_part(const struct held_scan *s, char *buf, size_t size)
{
	if (s->incomplete)
		snprintf(buf, size, " (the look through /proc stopped after %d s)", HELD_SCAN_SECONDS);
	else if (s->n_hidden)
		snprintf(buf, size, " (%u process%s could not be looked at%s)", s->n_hidden, s->n_hidden == 1 ? "" : "es",
			 geteuid() ? ": run as root to see every process" : "");
	else
		buf[0] = '\0';
}

/* A write lease on FD whose break signals nobody: SIGURG (ignored by default) while it is set up, then no owner. */
static int take_lease(int fd)
{
	if (fcntl(fd, F_SETSIG, SIGURG) < 0 || fcntl(fd, F_SETLEASE, F_WRLCK) < 0)
		return -errno;
	if (fcntl(fd, F_SETOWN, 0) < 0) {
		int r = -errno;

		fcntl(fd, F_SETLEASE, F_UNLCK);
		return r;
	}
	return 0;
}

int held_file_check(int fd, const char *name, bool keep_lease, const char *remedy, char *why, size_t why_size)
{
	char who[1024], hidden[160];
	struct held_scan s;
	struct stat st;
	int r = take_lease(fd), lease_err = -r;

	if (r == 0) {
		if (!keep_lease)
			fcntl(fd, F_SETLEASE, F_UNLCK);
		return HELD_FREE_LEASED;
	}
	if (fstat(fd, &st) < 0)
		return -errno;
	r = held_file_scan("/proc", st.st_dev, st.st_ino, getpid(), fd, &s);
	if (r < 0) {
		snprintf(why, why_size, "%s: whether another program has it open cannot be told: /proc cannot be read "
			 "(%s)", name, strerror(-r));
		return -EACCES;
	}
	held_scan_describe(&s, who, sizeof(who));
	hidden_part(&s, hidden, sizeof(hidden));
	if (who[0]) {
		snprintf(why, why_size, "%s is open elsewhere: %s%s. A write under a running program corrupts "
			 "what it keeps there, and it would not know; --force does not override this: %s",
			 name, who, hidden, remedy);
		return -EBUSY;
	}
	if (lease_err == EAGAIN || lease_err == EWOULDBLOCK) {
		snprintf(why, why_size, "%s is held open: the kernel refused a write lease, which it grants only while "
			 "nothing else has the file open, and no process here shows it%s: a loop device, a file system "
			 "mounted from it, swap, or a program in another PID namespace holds it; --force does not "
			 "override this: release it first", name, hidden);
		return -EBUSY;
	}
	if (lease_err == EACCES || lease_err == EPERM) {
		snprintf(why, why_size, "%s: whether another program has it open cannot be told: only its owner or root "
			 "(CAP_LEASE) may ask the kernel (a write lease), and no process this user can see has it "
			 "open%s; run as root or as its owner", name, hidden);
		return -EACCES;
	}
	/* the file system grants no leases (EINVAL): /proc is the only witness, and it must have seen everyone */
	if (s.n_hidden || s.incomplete) {
		snprintf(why, why_size, "%s: whether another program has it open cannot be told: its file system grants "
			 "no write leases (%s), and not every process could be looked at%s", name, strerror(lease_err),
			 hidden);
		return -EACCES;
	}
	return HELD_FREE_NO_LEASE;
}

int held_file_check_path(const char *path, char *why, size_t why_size)
{
	char self[64], who[1024], hidden[160];
	struct held_scan s;
	struct stat st;
	int pfd, fd, r;

	/* O_PATH opens nothing (no lease breaks, no device is touched); a symlink is the link itself */
	pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(pfd);
		return 0;
	}
	if (held_file_scan("/proc", st.st_dev, st.st_ino, getpid(), pfd, &s) == 0 && s.n_holders) {
		close(pfd);
		held_scan_describe(&s, who, sizeof(who));
		hidden_part(&s, hidden, sizeof(hidden));
		snprintf(why, why_size, "%s is open elsewhere: %s%s", path, who, hidden);
		return -EBUSY;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	r = -errno;
	close(pfd);
	if (fd < 0) {
		if (r == -EWOULDBLOCK) {
			snprintf(why, why_size, "%s is held open by a program with a lease on it (one that writes it, "
				 "as lcloud-target and lcloudctl torture run do)", path);
			return -EBUSY;
		}
		snprintf(why, why_size, "%s: whether another program has it open cannot be told: %s", path, strerror(-r));
		return r == -EACCES || r == -EPERM ? -EACCES : r;
	}
	r = held_file_check(fd, path, false, "stop it first", why, why_size);
	close(fd);
	return r < 0 ? r : 0;
}
