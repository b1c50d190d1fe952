/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who holds a block device: a file system mounted on it or on one of its
 * partitions (in any mount namespace in view), swap, a dm or md device
 * built on it (sysfs holders/), an ext4 file system whose external journal
 * it is, a process that has it open. Read when a write is refused, so that
 * the refusal names whom to ask, in words that are true.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "filesystem.h"
#include "holders.h"
#include "mount_table.h"
#include "swaps.h"
#include "sysfs.h"
#include "util.h"

#define RELATED_MAX 256  /* a disk and its partitions */
#define PROCESSES_MAX 8  /* named in a message; more are counted */

/* The device, and its partitions (a disk) or its disk (a partition): who holds one, holds the data. */
struct related {
	char *dirs[RELATED_MAX]; /* sysfs folders */
	dev_t devs[RELATED_MAX];
	unsigned int n;
};

struct text {
	char *buf;
	size_t size, len;
};

__attribute__((format(printf, 2, 3))) static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->len + 1 >= t->size)
		return;
	if (t->len) {
		n = snprintf(t->buf + t->len, t->size - t->len, "; ");
		t->len += (size_t)n < t->size - t->len ? (size_t)n : t->size - t->len - 1;
	}
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += (size_t)n < t->size - t->len ? (size_t)n : t->size - t->len - 1;
}

static void related_add(const struct lcloud_ctx *ctx, struct related *rel, const char *dir)
{
	char buf[32];
	unsigned int maj, min;

	if (rel->n == RELATED_MAX || sysfs_read_attr(ctx, dir, "dev", buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "%u:%u", &maj, &min) != 2 || !(rel->dirs[rel->n] = strdup(dir)))
		return;
	rel->devs[rel->n++] = makedev(maj, min);
}

static void related_free(struct related *rel)
{
	for (unsigned int i = 0; i < rel->n; i++)
		free(rel->dirs[i]);
	rel->n = 0;
}

struct related_scan {
	const struct lcloud_ctx *ctx;
	struct related *rel;
};

static int related_add_partition(const char *partdir, void *data)
{
	struct related_scan *s = data;

	related_add(s->ctx, s->rel, partdir);
	return 0;
}

static void related_read(const struct lcloud_ctx *ctx, const char *devdir, struct related *rel)
{
	struct related_scan scan = { .ctx = ctx, .rel = rel };
	char parent[SYSFS_PATH_MAX];

	rel->n = 0;
	related_add(ctx, rel, devdir);
	if (sysfs_attr_exists(ctx, devdir, "partition") > 0) {
		if (sysfs_partition_disk_dir(devdir, parent, sizeof(parent)) == 0)
			related_add(ctx, rel, parent);
		return;
	}
	(void)sysfs_for_each_partition(ctx, devdir, related_add_partition, &scan);
}

static int related_index(const struct related *rel, dev_t dev)
{
	for (unsigned int i = 0; i < rel->n; i++)
		if (rel->devs[i] == dev)
			return (int)i;
	return -1;
}

struct mount_scan {
	const struct related *rel;
	unsigned int only; /* how many of REL count (1: the device itself) */
	char *found;
};

static int first_mount(struct mountinfo_entry *e, void *data)
{
	struct mount_scan *s = data;
	int i = related_index(s->rel, makedev(e->major, e->minor));

	if (i < 0 || (unsigned int)i >= s->only)
		return 0;
	s->found = strdup(e->mount_point);
	return s->found ? 1 : -ENOMEM;
}

char *holders_mount_point(const struct lcloud_ctx *ctx, const char *devdir, bool with_partitions)
{
	struct related rel;
	struct mount_scan s = { .rel = &rel };

	related_read(ctx, devdir, &rel);
	if (!rel.n)
		return NULL;
	/* a partition's "related" disk is above it, not inside it: only partitions count */
	s.only = with_partitions && sysfs_attr_exists(ctx, devdir, "partition") <= 0 ? rel.n : 1;
	/* this namespace's: a mount elsewhere makes the target's own O_EXCL open fail, which words it */
	if (mountinfo_foreach(ctx, first_mount, &s, NULL) < 0) {
		free(s.found);
		s.found = NULL;
	}
	related_free(&rel);
	return s.found;
}

int holders_first_other(const struct lcloud_ctx *ctx, const char *devdir, const char *const *names_to_skip,
			unsigned int n_skip, char *ret_name, size_t size)
{
	char rel[SYSFS_PATH_MAX + 16], full[SYSFS_PATH_MAX + 256];
	struct dirent *de;
	int found = 0;
	DIR *d;

	if (path_printf(rel, sizeof(rel), "%s/holders", devdir) < 0 || ctx_path(ctx, rel, full, sizeof(full)) < 0)
		return -ENAMETOOLONG;
	d = opendir(full);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!found && (de = readdir(d))) {
		bool skip = de->d_name[0] == '.';

		for (unsigned int i = 0; i < n_skip && !skip; i++)
			skip = streq(de->d_name, names_to_skip[i]);
		if (!skip) {
			snprintf(ret_name, size, "%s", de->d_name);
			found = 1;
		}
	}
	closedir(d);
	return found;
}

/* "held by dm-0 (vg-data)": a dm device by its name as well, others by their kernel name. */
static void add_sysfs_holders(const struct lcloud_ctx *ctx, const struct related *rel, unsigned int i,
			      struct text *t)
{
	char rel_dir[SYSFS_PATH_MAX + 16], full[SYSFS_PATH_MAX + 256];
	struct dirent *de;
	DIR *d;

	if (path_printf(rel_dir, sizeof(rel_dir), "%s/holders", rel->dirs[i]) < 0 ||
	    ctx_path(ctx, rel_dir, full, sizeof(full)) < 0 || !(d = opendir(full)))
		return;
	while ((de = readdir(d))) {
		char hdir[SYSFS_PATH_MAX], dmname[256] = "";

		if (de->d_name[0] == '.')
			continue;
		if (sysfs_block_dir(ctx, de->d_name, hdir, sizeof(hdir)) == 0)
			sysfs_read_attr(ctx, hdir, "dm/name", dmname, sizeof(dmname));
		text_add(t, "%s%sheld by %s%s%s%s", i ? path_basename(rel->dirs[i]) : "", i ? " " : "", de->d_name,
			 dmname[0] ? " (" : "", dmname, dmname[0] ? ")" : "");
	}
	closedir(d);
}

struct swap_scan {
	const struct related *rel;
	struct text *t;
};

static int add_swap(const char *path, bool is_file, void *data)
{
	struct swap_scan *s = data;
	struct stat st;
	int i;

	/* a swap partition's node is in /dev; a swap file is never a device, and its file system may not answer */
	if (!is_file && stat(path, &st) == 0 && S_ISBLK(st.st_mode) && (i = related_index(s->rel, st.st_rdev)) >= 0)
		text_add(s->t, "%s%sused as swap", i ? path_basename(s->rel->dirs[i]) : "", i ? " " : "");
	return 0;
}

/* Swap areas on the device or its relatives (/proc/swaps). */
static void add_swaps(const struct related *rel, struct text *t)
{
	struct swap_scan s = { rel, t };

	swaps_foreach(add_swap, &s);
}

/* Processes with the device or a relative open, as fuser(1) would find them (root sees all). */
static void add_processes(const struct related *rel, struct text *t)
{
	unsigned int named = 0, more = 0;
	struct dirent *pe;
	DIR *proc = opendir("/proc");

	if (!proc)
		return;
	while ((pe = readdir(proc))) {
		char fddir[300], comm[64] = "?";
		struct dirent *fe;
		bool holds = false;
		DIR *fds;
		FILE *f;

		if (!isdigit((unsigned char)pe->d_name[0]) || atoi(pe->d_name) == getpid())
			continue;
		snprintf(fddir, sizeof(fddir), "/proc/%s/fd", pe->d_name);
		fds = opendir(fddir);
		if (!fds)
			continue;
		while (!holds && (fe = readdir(fds))) {
			char link[600], target[8];
			struct stat st;

			if (fe->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "%s/%s", fddir, fe->d_name);
			/*
			 * Only a descriptor named in /dev is stat()ed: a file's may be on a FUSE server or NFS share
			 * that does not answer, and devices are opened by their /dev names.
			 */
			holds = readlink(link, target, sizeof(target)) >= 5 && !memcmp(target, "/dev/", 5) &&
				stat(link, &st) == 0 && S_ISBLK(st.st_mode) && related_index(rel, st.st_rdev) >= 0;
		}
		closedir(fds);
		if (!holds)
			continue;
		if (named == PROCESSES_MAX) {
			more++;
			continue;
		}
		snprintf(fddir, sizeof(fddir), "/proc/%s/comm", pe->d_name);
		if ((f = fopen(fddir, "re"))) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		text_add(t, "open in process %s (%s)", pe->d_name, comm);
		named++;
	}
	closedir(proc);
	if (more)
		text_add(t, "and in %u more processes", more);
}

/* Mounts of the device or a relative in every mount namespace in view. */
static void add_mounts(const struct lcloud_ctx *ctx, const struct related *rel, struct text *t)
{
	struct mount_table mt;

	if (mount_table_read(ctx, &mt) < 0)
		return;
	for (unsigned int k = 0; k < mt.n; k++) {
		const struct mount_rec *m = &mt.m[k];
		int i = related_index(rel, m->dev);
		char where[4200];

		if (i < 0)
			continue;
		mount_rec_where(m, where, sizeof(where));
		text_add(t, "%s%smounted %s (%s)", i ? path_basename(rel->dirs[i]) : "", i ? " " : "", where, m->fstype);
	}
	mount_table_free(&mt);
}

bool holders_is_external_journal(const struct lcloud_ctx *ctx, const char *devdir)
{
	char path[300];

	if (ctx_has_sysroot(ctx))
		return false;
	snprintf(path, sizeof(path), "/proc/fs/jbd2/%s", path_basename(devdir));
	return access(path, F_OK) == 0;
}

void holders_describe(const struct lcloud_ctx *ctx, const char *devdir, char *buf, size_t size)
{
	struct related *rel = calloc(1, sizeof(*rel));
	struct text t = { buf, size, 0 };

	if (!size)
		return;
	buf[0] = '\0';
	if (!rel)
		return;
	related_read(ctx, devdir, rel);
	add_mounts(ctx, rel, &t);
	for (unsigned int i = 0; i < rel->n; i++) {
		add_sysfs_holders(ctx, rel, i, &t);
		if (holders_is_external_journal(ctx, rel->dirs[i]))
			text_add(&t, "%s%sthe external journal of a mounted ext4 file system (/proc/fs/jbd2/%s)",
				 i ? path_basename(rel->dirs[i]) : "", i ? " is " : "is ", path_basename(rel->dirs[i]));
	}
	if (!ctx_has_sysroot(ctx)) {
		add_swaps(rel, &t);
		add_processes(rel, &t);
	}
	related_free(rel);
	free(rel);
}
