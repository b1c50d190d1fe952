/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mounts of every mount namespace in view (mount_table.h). Namespaces
 * are told apart by /proc/PID/ns/mnt; each is read once, from the first
 * process found in it. Reading mountinfo asks no file system anything, so
 * a stalled FUSE server or NFS share cannot hold this up.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mount_table.h"
#include "mountinfo.h"
#include "util.h"

struct add_ctx {
	struct mount_table *t;
	pid_t ns_pid;
};

static int add_entry(struct mountinfo_entry *e, void *data)
{
	struct add_ctx *a = data;
	struct mount_table *t = a->t;

	if (t->n == t->cap) {
		unsigned int cap = t->cap ? t->cap * 2 : 64;
		struct mount_rec *m = realloc(t->m, cap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		t->m = m;
		t->cap = cap;
	}
	t->m[t->n++] = (struct mount_rec){
		.mount_id = e->mount_id, .dev = makedev(e->major, e->minor), .root = e->root,
		.mount_point = e->mount_point, .fstype = e->fstype, .source = e->source,
		.super_options = e->super_options, .ns_pid = a->ns_pid, .buf = e->buf,
	};
	e->buf = NULL; /* kept: the strings point into it */
	return 0;
}

/* One /proc/PID/mountinfo, parsed with the library's own parser. */
static int read_file(const char *path, struct add_ctx *a)
{
	char *line = NULL;
	size_t cap = 0;
	int r = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (r == 0 && getline(&line, &cap, f) >= 0) {
		struct mountinfo_entry e;

		if (mountinfo_parse_line(line, &e) < 0)
			continue;
		r = add_entry(&e, a);
		mountinfo_entry_free(&e);
	}
	free(line);
	fclose(f);
	return r;
}

static bool seen_ns(const char (*seen)[64], unsigned int n, const char *ns)
{
	for (unsigned int i = 0; i < n; i++)
		if (streq(seen[i], ns))
			return true;
	return false;
}

#define NAMESPACES_MAX 4096

int mount_table_read(const struct lcloud_ctx *ctx, struct mount_table *t)
{
	struct add_ctx a = { .t = t, .ns_pid = 0 };
	char (*seen)[64] = NULL;
	unsigned int n_seen = 0;
	struct dirent *de;
	DIR *proc;
	int r;

	memset(t, 0, sizeof(*t));
	r = mountinfo_foreach(ctx, add_entry, &a, NULL);
	if (r < 0) {
		mount_table_free(t);
		return r;
	}
	t->n_namespaces = 1;
	if (ctx_has_sysroot(ctx))
		return 0;
	seen = calloc(NAMESPACES_MAX, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	if (readlink("/proc/self/ns/mnt", seen[0], sizeof(seen[0]) - 1) > 0)
		n_seen = 1;
	proc = opendir("/proc");
	while (proc && (de = readdir(proc)) && n_seen < NAMESPACES_MAX) {
		char link[300], ns[64] = "";
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (pid_t)atoi(de->d_name);
		snprintf(link, sizeof(link), "/proc/%s/ns/mnt", de->d_name);
		/* a process that cannot be asked (another user's, without root) tells nothing */
		if (readlink(link, ns, sizeof(ns) - 1) <= 0 || seen_ns(seen, n_seen, ns))
			continue;
		snprintf(seen[n_seen++], sizeof(seen[0]), "%s", ns);
		snprintf(link, sizeof(link), "/proc/%s/mountinfo", de->d_name);
		a.ns_pid = pid;
		r = read_file(link, &a);
		if (r == -ENOMEM)
			break;
		if (r < 0)
			t->unreadable++; /* it ended meanwhile, or is not ours to read */
		else
			t->n_namespaces++;
		r = 0;
	}
	if (proc)
		closedir(proc);
	free(seen);
	if (r < 0)
		mount_table_free(t);
	return r;
}

void mount_table_free(struct mount_table *t)
{
	if (!t)
		return;
	for (unsigned int i = 0; i < t->n; i++)
		free(t->m[i].buf);
	free(t->m);
	memset(t, 0, sizeof(*t));
}

const struct mount_rec *mount_table_find_dev(const struct mount_table *t, dev_t dev)
{
	/* this namespace's entries come first */
	for (unsigned int i = 0; i < t->n; i++)
		if (t->m[i].dev == dev)
			return &t->m[i];
	return NULL;
}

int mount_rec_reach(const struct mount_rec *m, const char *path, char *buf, size_t size)
{
	if (!m->ns_pid)
		return path_printf(buf, size, "%s", path);
	return path_printf(buf, size, "/proc/%d/root%s%s", (int)m->ns_pid, path[0] == '/' ? "" : "/", path);
}

void mount_rec_where(const struct mount_rec *m, char *buf, size_t size)
{
	if (!m->ns_pid)
		snprintf(buf, size, "at %s", m->mount_point);
	else
		snprintf(buf, size, "at %s in the mount namespace of process %d", m->mount_point, (int)m->ns_pid);
}

bool fstype_may_stall(const char *fstype)
{
	static const char *const remote[] = { "fuse", "fuseblk", "nfs", "nfs4", "cifs", "smb3", "9p", "ceph",
					      "afs", "glusterfs", "virtiofs", "lustre", "gfs2", "ocfs2", "coda",
					      "ncpfs", "sshfs" };

	if (!strncmp(fstype, "fuse.", 5))
		return true;
	for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
		if (streq(fstype, remote[i]))
			return true;
	return false;
}
