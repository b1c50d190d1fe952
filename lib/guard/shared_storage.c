/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The write guard's second look: not who holds the target's name, but who
 * else uses its storage. The target is mapped down to its base storage
 * (storage_map.c: a block device's bytes, a file's inode and, on overlayfs,
 * its layer files), and so is everything that can use storage:
 *  - every other block device: one that shares bytes with the target and is
 *    mounted (in any mount namespace in view), swap, built upon (dm, md) or
 *    claimed (O_EXCL fails) makes the write unsafe whatever path leads to
 *    it: a second loop over a mounted image, a loop at an offset over a
 *    mounted disk, the image file of a mounted loop, a loop over an overlay
 *    file whose layer file is the target. A disk with partitions has bytes
 *    of its own outside them, claimed by the disk itself: a whole-disk file
 *    system under a stale partition table, an ext4 external journal. A
 *    device whose map cannot be followed (a chain of loops too deep, a
 *    backing file on a file system that does not answer) is a sharer of
 *    unknown extent: refused when it is mounted, swap or claimed.
 *  - every file-backed mount (erofs mounted from a file, a FUSE server such
 *    as fuse2fs given an image): its source file is in use. A FUSE source is
 *    only the name the server was started with, which any user may choose
 *    (fusermount's fsname, a mount in a user namespace of its own): the
 *    files the FUSE servers hold open are what a FUSE file system may read,
 *    whatever their names now, and a source no file has by that name is
 *    decided by them alone.
 *  - every active swap file.
 *  - with GUARD_LAYER_HOLDERS, every process that has one of an overlay file's
 *    layer files open or mapped by that file's own name (upper/img under
 *    merged/img): the caller's write lease is the overlay inode's, which such
 *    a process never opened. /proc is the only witness there; a process it
 *    does not show (another user's, without root) is not seen.
 * The free sharers are claimed (O_EXCL) into the decision, which the writer
 * keeps while it writes, so that nothing mounts them between this check and
 * the writes. None of this is --force's to override.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bounded_query.h"
#include "guard_internal.h"
#include "held_file.h"
#include "holders.h"
#include "report.h"
#include "storage_map.h"
#include "swaps.h"
#include "sysfs.h"
#include "util.h"

#define SWAPS_MAX 64
#define FILE_MOUNTS_MAX 256

/* Active swap: block devices by number, swap files by identity (/proc/swaps names them by path). */
struct swaps {
	char *paths[SWAPS_MAX];
	bool is_file[SWAPS_MAX];
	unsigned int n;
	dev_t devs[SWAPS_MAX];
	unsigned int n_devs;
	struct storage_map files[SWAPS_MAX];
	unsigned int n_files;
	const char *unresolved; /* a swap file whose identity could not be asked */
	int unresolved_err;
};

/* A mount whose source is a file (or a device a FUSE server was given): what it is and where. */
struct file_mount {
	const struct mount_rec *m;
	struct storage_map map;
	bool device;       /* the source is a block device: it counts as mounted */
	dev_t source_dev;
	bool unresolved;   /* its file could not be found */
	bool by_servers;   /* a FUSE source no file has by that name: the files the FUSE servers hold decide */
	char why[300];
};

/* Processes holding /dev/fuse (FUSE servers): a FUSE file system's image is a file one of them holds open. */
struct fuse_servers {
	pid_t *pids;
	unsigned int n;
};

struct check {
	struct guard_run *g;
	const struct lcloud_ctx *ctx;
	struct guard_decision *d;
	const char *target_name;
	dev_t target_dev;   /* 0 for a file */
	dev_t target_disk;  /* the disk of a partition target: its own O_EXCL open covers the disk's claim */
	char target_path[SYSFS_PATH_MAX]; /* a file's path, as the kernel names it */
	struct storage_env env;
	struct storage_map target;
	struct swaps swaps;
	struct file_mount *fm;
	unsigned int n_fm;
	struct fuse_servers servers;
	bool servers_read;
	int servers_hold;   /* 0: not asked yet; 1: a FUSE server holds the target; 2: none does; -errno: cannot tell */
	pid_t holding_server;
	dev_t covered[64]; /* disks claimed here: their partitions cannot be claimed by anyone else */
	unsigned int n_covered;
};

static int keep_swap(const char *path, bool is_file, void *data)
{
	struct swaps *s = data;

	if (s->n == SWAPS_MAX)
		return -E2BIG; /* one not kept would be one not guarded */
	s->paths[s->n] = strdup(path);
	if (!s->paths[s->n])
		return -ENOMEM;
	s->is_file[s->n++] = is_file;
	return 0;
}

/* /proc/swaps, each area's identity asked with a bound. */
static int swaps_read(struct check *c)
{
	struct swaps *s = &c->swaps;
	struct bq_item *items;
	int r = swaps_foreach(keep_swap, s);

	if (r == -ENOENT)
		return 0; /* no /proc/swaps: a kernel without swap */
	if (r < 0)
		return r;
	items = calloc(SWAPS_MAX, sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (unsigned int i = 0; i < s->n; i++)
		items[i] = (struct bq_item){ .op = BQ_STAT, .path = s->paths[i] };
	bq_run(items, s->n, BOUNDED_QUERY_TIMEOUT_MS);
	for (unsigned int i = 0; i < s->n && r >= 0; i++) {
		struct file_ids ids;

		if (items[i].err == -ENOENT && !strstr(s->paths[i], " (deleted)"))
			continue; /* swapped off since the kernel wrote the line */
		if (items[i].err) {
			if (s->is_file[i] && !s->unresolved) {
				s->unresolved = s->paths[i];
				s->unresolved_err = items[i].err;
			}
			continue;
		}
		if (S_ISBLK(items[i].st.mode)) {
			s->devs[s->n_devs++] = (dev_t)items[i].st.rdev;
		} else if (S_ISREG(items[i].st.mode)) {
			r = file_ids_of(&c->env, (dev_t)items[i].st.dev, items[i].st.ino, s->paths[i], 0, 0, &ids);
			if (r >= 0)
				r = storage_map_file(&s->files[s->n_files++], &ids);
			file_ids_free(&ids);
		}
	}
	free(items);
	return r;
}

static bool is_swap_dev(const struct swaps *s, dev_t dev)
{
	for (unsigned int i = 0; i < s->n_devs; i++)
		if (s->devs[i] == dev)
			return true;
	return false;
}

static void swaps_free(struct swaps *s)
{
	for (unsigned int i = 0; i < s->n; i++)
		free(s->paths[i]);
	for (unsigned int i = 0; i < s->n_files; i++)
		storage_map_free(&s->files[i]);
}

/* Where DEV is mounted, for a person: any mount namespace in view, or as the device a FUSE server was given. */
static bool mounted_where(const struct check *c, dev_t dev, char *buf, size_t size)
{
	const struct mount_rec *m = mount_table_find_dev(&c->env.mounts, dev);

	if (m) {
		mount_rec_where(m, buf, size);
		return true;
	}
	for (unsigned int i = 0; i < c->n_fm; i++)
		if (c->fm[i].device && c->fm[i].source_dev == dev) {
			char where[SYSFS_PATH_MAX];

			mount_rec_where(c->fm[i].m, where, sizeof(where));
			snprintf(buf, size, "by the %s server mounted %s", c->fm[i].m->fstype, where);
			return true;
		}
	return false;
}

/* ------------------------------------------------------------------ file-backed mounts */

/* Calls CB with each descriptor's link of process PID (readlink only: its file is never asked anything). */
static void for_each_fd_link(const char *pid, void (*cb)(const char *fdpath, const char *link, void *data),
			     void *data)
{
	char fddir[300];
	struct dirent *fe;
	DIR *fds;

	snprintf(fddir, sizeof(fddir), "/proc/%s/fd", pid);
	fds = opendir(fddir);
	if (!fds)
		return;
	while ((fe = readdir(fds))) {
		char fdpath[600], link[4096];
		ssize_t n;

		if (fe->d_name[0] == '.')
			continue;
		snprintf(fdpath, sizeof(fdpath), "%s/%s", fddir, fe->d_name);
		n = readlink(fdpath, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		cb(fdpath, link, data);
	}
	closedir(fds);
}

static void note_fuse_fd(const char *fdpath, const char *link, void *data)
{
	(void)fdpath;
	if (streq(link, "/dev/fuse"))
		*(bool *)data = true;
}

static void find_fuse_servers(struct fuse_servers *fs)
{
	struct dirent *pe;
	DIR *proc = opendir("/proc");

	while (proc && (pe = readdir(proc))) {
		bool server = false;

		if (!isdigit((unsigned char)pe->d_name[0]))
			continue;
		for_each_fd_link(pe->d_name, note_fuse_fd, &server);
		if (server && fs->n % 16 == 0) {
			pid_t *p = realloc(fs->pids, (fs->n + 16) * sizeof(*p));

			if (!p)
				break;
			fs->pids = p;
		}
		if (server)
			fs->pids[fs->n++] = (pid_t)atoi(pe->d_name);
	}
	if (proc)
		closedir(proc);
}

/* A FUSE server's open files whose name ends in the relative source: the image it was given (it keeps it open). */
struct source_match {
	const char *source;
	char (*paths)[SYSFS_PATH_MAX + 64];
	unsigned int *n, max;
};

static bool name_ends_with(const char *name, const char *rel);

static void match_source_fd(const char *fdpath, const char *link, void *data)
{
	struct source_match *sm = data;

	if (*sm->n < sm->max && name_ends_with(link, sm->source) &&
	    path_printf(sm->paths[*sm->n], sizeof(sm->paths[0]), "%s", fdpath) == 0)
		(*sm->n)++;
}

static bool is_fuse(const char *fstype)
{
	return streq(fstype, "fuse") || !strncmp(fstype, "fuse.", 5);
}

/* Can a mount of this type read a file given as its source, without a loop device? */
static bool file_backed_type(const char *fstype)
{
	return streq(fstype, "erofs") || is_fuse(fstype);
}

#define CANDIDATES_MAX 2048

/*
 * Every mount without a block device of its own whose source names a file: erofs mounted from its image,
 * a FUSE server given an image (fuse2fs img mnt; a relative source is relative to the server's folder).
 * Each source is stat()ed with a bound, in the mount's own namespace.
 */
static int read_file_mounts(struct check *c)
{
	struct bq_item *items = calloc(CANDIDATES_MAX, sizeof(*items));
	char (*paths)[SYSFS_PATH_MAX + 64] = calloc(CANDIDATES_MAX, sizeof(*paths));
	unsigned int *owner = calloc(CANDIDATES_MAX, sizeof(*owner));
	unsigned int n = 0;
	int r = 0;

	c->fm = calloc(FILE_MOUNTS_MAX, sizeof(*c->fm));
	if (!items || !paths || !owner || !c->fm) {
		r = -ENOMEM;
		goto out;
	}
	for (unsigned int i = 0; i < c->env.mounts.n && c->n_fm < FILE_MOUNTS_MAX; i++) {
		const struct mount_rec *m = &c->env.mounts.m[i];
		struct file_mount *fm;
		unsigned int before = n;

		/* a mount from a block device is that device, seen by the device scan */
		if (major(m->dev) || !m->source[0] || streq(m->fstype, "overlay"))
			continue;
		if (m->source[0] != '/' && !file_backed_type(m->fstype))
			continue;
		fm = &c->fm[c->n_fm];
		fm->m = m;
		if (m->source[0] == '/') {
			if (mount_rec_reach(m, m->source, paths[n], sizeof(paths[0])) == 0 && n < CANDIDATES_MAX)
				n++;
		} else if (is_fuse(m->fstype)) {
			/* the servers' folders (a daemon has mostly gone to /), and the files they hold by that name */
			if (!c->servers_read) {
				find_fuse_servers(&c->servers);
				c->servers_read = true;
			}
			for (unsigned int k = 0; k < c->servers.n && n < CANDIDATES_MAX; k++) {
				struct source_match sm = { m->source, paths, &n, CANDIDATES_MAX };
				char pid[16];

				if (path_printf(paths[n], sizeof(paths[0]), "/proc/%d/cwd/%s", (int)c->servers.pids[k],
						m->source) == 0)
					n++;
				snprintf(pid, sizeof(pid), "%d", (int)c->servers.pids[k]);
				for_each_fd_link(pid, match_source_fd, &sm);
			}
			/* until one of them is a file, the source is a name that may be a file somewhere unseen */
			fm->unresolved = true;
			snprintf(fm->why, sizeof(fm->why), "its source \"%s\" is relative to the folder of a FUSE "
				 "server, and no server in view has such a file", m->source);
		} else {
			fm->unresolved = true;
			snprintf(fm->why, sizeof(fm->why), "its source \"%s\" is relative to the folder it was mounted "
				 "from, which is not known here", m->source);
		}
		for (unsigned int k = before; k < n; k++) {
			items[k] = (struct bq_item){ .op = BQ_STAT, .path = paths[k] };
			owner[k] = c->n_fm;
		}
		c->n_fm++;
	}
	bq_run(items, n, BOUNDED_QUERY_TIMEOUT_MS);
	for (unsigned int k = 0; k < n && r >= 0; k++) {
		struct file_mount *fm = &c->fm[owner[k]];
		struct file_ids ids;

		if (items[k].err && items[k].err != -ETIMEDOUT && fm->m->source[0] == '/' && is_fuse(fm->m->fstype)) {
			/*
			 * A FUSE source is the name its server was started with (any user may choose it: fusermount's
			 * fsname, a mount in a user namespace), not something the kernel opened: no file by that name
			 * is not "any file may be its image". The image, if any, is a file a FUSE server holds open.
			 */
			fm->by_servers = true;
			continue;
		}
		if (items[k].err == -ETIMEDOUT || (items[k].err && fm->m->source[0] == '/' &&
						   file_backed_type(fm->m->fstype))) {
			/* it may be a file: the kernel or the server reads one, and where it is cannot be told */
			fm->unresolved = true;
			snprintf(fm->why, sizeof(fm->why), "its source \"%s\" %s", fm->m->source,
				 items[k].err == -ETIMEDOUT ? "did not answer in time" : "cannot be found by that name");
			continue;
		}
		if (items[k].err)
			continue; /* not a file: a FUSE file system's name ("sshfs", "lxcfs") */
		fm->unresolved = false; /* found: what it is decides */
		if (S_ISBLK(items[k].st.mode)) {
			fm->device = true;
			fm->source_dev = (dev_t)items[k].st.rdev;
		} else if (S_ISREG(items[k].st.mode)) {
			const char *name = fm->m->source[0] == '/' ? fm->m->source : NULL;

			r = file_ids_of(&c->env, (dev_t)items[k].st.dev, items[k].st.ino, name, fm->m->ns_pid, 0, &ids);
			if (r >= 0)
				r = storage_map_file(&fm->map, &ids);
			file_ids_free(&ids);
		}
	}
out:
	free(items);
	free(paths);
	free(owner);
	return r;
}

/* Does the target's name end in the relative path REL ("img", "dir/img", "./img")? */
static bool name_ends_with(const char *name, const char *rel)
{
	size_t n, k;

	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	n = strlen(name);
	k = strlen(rel);
	return k && n > k && name[n - k - 1] == '/' && streq(name + n - k, rel);
}

/*
 * Does a FUSE server have one of the target's identities open (the image it serves from, under whatever name
 * it has now)? 1 yes (C->holding_server), 2 no, -EACCES when a server's descriptors cannot be looked at.
 * Each descriptor is asked by statx(AT_STATX_DONT_SYNC) through its /proc link, which waits on no server.
 */
static int fuse_servers_hold(struct check *c)
{
	if (c->servers_hold)
		return c->servers_hold;
	if (!c->servers_read) {
		find_fuse_servers(&c->servers);
		c->servers_read = true;
	}
	c->servers_hold = 2;
	for (unsigned int k = 0; k < c->servers.n && c->servers_hold == 2; k++) {
		char dir[64];
		struct dirent *de;
		DIR *fds;

		snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)c->servers.pids[k]);
		fds = opendir(dir);
		if (!fds) {
			if (errno == EACCES || errno == EPERM)
				c->servers_hold = -EACCES;
			continue; /* ended meanwhile */
		}
		while ((de = readdir(fds)) && c->servers_hold == 2) {
			char link[600];
			struct statx stx;

			if (de->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
			if (statx(AT_FDCWD, link, AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO, &stx) < 0 ||
			    !S_ISREG(stx.stx_mode))
				continue;
			for (unsigned int i = 0; i < c->target.n; i++) {
				const struct storage_piece *p = &c->target.pieces[i];

				if (p->file && p->ino == stx.stx_ino && p->dev == makedev(stx.stx_dev_major, stx.stx_dev_minor)) {
					c->servers_hold = 1;
					c->holding_server = c->servers.pids[k];
					break;
				}
			}
		}
		closedir(fds);
	}
	return c->servers_hold;
}

static int check_file_mounts(struct check *c)
{
	const char *name = c->target_dev ? c->target.backing : c->target_path;

	for (unsigned int i = 0; i < c->n_fm; i++) {
		const struct file_mount *fm = &c->fm[i];
		char where[SYSFS_PATH_MAX + 64];

		mount_rec_where(fm->m, where, sizeof(where));
		if (!fm->unresolved && storage_maps_overlap(&c->target, &fm->map))
			return guard_fail(c->d, -EBUSY, GUARD_MOUNTED, "%s shares storage with the file %s, which the %s "
					  "file system mounted %s reads as its device (a mount from a file, without a "
					  "loop device): a write here corrupts that file system; --force does not "
					  "override this: unmount it first", c->target_name, fm->m->source,
					  fm->m->fstype, where);
		/* a FUSE server's image is a file it holds, under whatever name it has now (renamed, or a decoy at the source) */
		if (is_fuse(fm->m->fstype) && storage_map_has_file(&c->target)) {
			int held = fuse_servers_hold(c);

			if (held == 1)
				return guard_fail(c->d, -EBUSY, GUARD_MOUNTED, "%s is open in a FUSE server (pid %d), which "
						  "serves a file system from what it holds (the %s file system mounted %s, "
						  "source \"%s\", or another): a write here can corrupt it; --force does not "
						  "override this: unmount it first", c->target_name, (int)c->holding_server,
						  fm->m->fstype, where, fm->m->source);
			if (held == 2)
				continue; /* every server's open files were seen, and none is the target */
			if (fm->by_servers)
				return guard_fail(c->d, -EBUSY, GUARD_MOUNTED, "cannot tell whether %s is the file that the %s "
						  "file system mounted %s reads as its device: its source \"%s\" cannot be "
						  "found by that name, and not every FUSE server's open files can be looked "
						  "at; --force does not override this: unmount it first", c->target_name,
						  fm->m->fstype, where, fm->m->source);
		}
		/* a file the mount may read: only a target with file storage can be it */
		if (fm->unresolved && storage_map_has_file(&c->target) &&
		    (fm->m->source[0] == '/' || (name[0] && name_ends_with(name, fm->m->source))))
			return guard_fail(c->d, -EBUSY, GUARD_MOUNTED, "cannot tell whether %s is the file that the %s "
					  "file system mounted %s reads as its device: %s; --force does not override "
					  "this: unmount it first", c->target_name, fm->m->fstype, where, fm->why);
	}
	return 0;
}

/* ------------------------------------------------------------------ block devices */

/*
 * The first holder of DIR (sysfs holders/) that is neither the target nor on its way down, into NAME;
 * *BY_STACK tells whether one of them is (a dm or md target claims its own members).
 */
static bool other_holder(const struct lcloud_ctx *ctx, const char *dir, const struct storage_map *target,
			 dev_t target_dev, char *name, size_t size, bool *by_stack)
{
	char rel[SYSFS_PATH_MAX + 16], full[SYSFS_PATH_MAX + 256];
	struct dirent *de;
	bool found = false;
	DIR *d;

	*by_stack = false;
	if (path_printf(rel, sizeof(rel), "%s/holders", dir) < 0 || ctx_path(ctx, rel, full, sizeof(full)) < 0 ||
	    !(d = opendir(full)))
		return false;
	while (!found && (de = readdir(d))) {
		char hdir[SYSFS_PATH_MAX], buf[32];
		unsigned int maj, min;

		if (de->d_name[0] == '.')
			continue;
		if (sysfs_block_dir(ctx, de->d_name, hdir, sizeof(hdir)) == 0 &&
		    sysfs_read_attr(ctx, hdir, "dev", buf, sizeof(buf)) > 0 && sscanf(buf, "%u:%u", &maj, &min) == 2 &&
		    (makedev(maj, min) == target_dev || storage_map_passes_through(target, makedev(maj, min)))) {
			*by_stack = true;
			continue;
		}
		snprintf(name, size, "%s", de->d_name);
		found = true;
	}
	closedir(d);
	return found;
}

/* "(both reach bytes of /img)" or of the base device, for a person */
static void describe_base(const struct storage_map *t, char *buf, size_t size)
{
	if (t->backing[0])
		snprintf(buf, size, " (through loop devices over %s)", t->backing);
	else if (t->n && !t->pieces[0].file)
		snprintf(buf, size, " (both map onto device %u:%u)", major(t->pieces[0].dev), minor(t->pieces[0].dev));
	else
		buf[0] = '\0';
}

/* One sharer met in the scan. */
struct sharer {
	char name[256];
	char dir[SYSFS_PATH_MAX];
	dev_t dev;
	dev_t disk;       /* a partition's disk, else 0 */
	bool partitions;  /* a whole disk with partitions */
	struct storage_map map;
};

/*
 * Is DISK, a sharer's disk, claimed by this writer: the target itself (its O_EXCL open), a disk this
 * decision claimed, or one an earlier decision on the same descriptor did? Then none of its partitions
 * can be claimed by anyone else, nor by this writer, whose own claim makes theirs fail.
 */
static bool disk_is_ours(const struct check *c, dev_t disk)
{
	if (!disk)
		return false;
	if (disk == c->target_dev || guard_claims_hold(c->d, disk))
		return true;
	for (unsigned int i = 0; i < c->n_covered; i++)
		if (c->covered[i] == disk)
			return true;
	return false;
}

/* Keeps an O_EXCL claim (or lets it go at once with GUARD_NO_CLAIMS). */
static int keep_claim(struct check *c, int fd, dev_t dev, bool disk, bool may_share)
{
	if (disk && c->n_covered < sizeof(c->covered) / sizeof(c->covered[0]))
		c->covered[c->n_covered++] = dev;
	if (c->g->how & GUARD_NO_CLAIMS) {
		close(fd);
		return 0;
	}
	return guard_claim_add(c->d, fd, dev, may_share);
}

/* What holds the device in DIR, for a person ("mounted at /m in the mount namespace of process 12", ...). */
static void who_holds(const struct check *c, const char *dir, char *buf, size_t size)
{
	holders_describe(c->ctx, dir, buf, size);
	if (!buf[0])
		snprintf(buf, size, "%s", HOLDERS_INVISIBLE);
}

/* Is a partition in use in a way that explains its disk's failed O_EXCL open? */
static bool partition_visibly_used(const struct check *c, const char *partdir, dev_t dev)
{
	char where[64], holder[256];
	bool by_stack;

	return mounted_where(c, dev, where, sizeof(where)) || is_swap_dev(&c->swaps, dev) ||
	       other_holder(c->ctx, partdir, &c->target, c->target_dev, holder, sizeof(holder), &by_stack) || by_stack ||
	       holders_is_external_journal(c->ctx, partdir);
}

struct part_probe {
	const struct check *c;
	unsigned int free, used;
};

static int probe_partition(const char *partdir, void *data)
{
	struct part_probe *pp = data;
	char buf[32];
	unsigned int maj, min;
	int fd;

	if (sysfs_read_attr(pp->c->ctx, partdir, "dev", buf, sizeof(buf)) <= 0 || sscanf(buf, "%u:%u", &maj, &min) != 2)
		return 0;
	fd = storage_open_dev(pp->c->ctx, makedev(maj, min), O_RDONLY | O_EXCL);
	if (fd >= 0) {
		close(fd);
		pp->free++;
	} else if (partition_visibly_used(pp->c, partdir, makedev(maj, min))) {
		pp->used++;
	}
	return 0;
}

/*
 * A disk with partitions that shares the target's storage. A claim on any partition makes the disk's own
 * O_EXCL open fail, and a real claim on the whole disk (a whole-disk file system mounted in another
 * namespace, an ext4 external journal) makes every partition's fail: while one partition can be claimed or
 * is visibly in use, the disk holds no claim of its own; when none can and none is, the disk itself is held.
 */
static int check_disk_with_partitions(struct check *c, const struct sharer *s, const char *how)
{
	struct part_probe pp = { .c = c };
	char who[4096];
	int fd = storage_open_dev(c->ctx, s->dev, O_RDONLY | O_EXCL);

	if (fd >= 0)
		return keep_claim(c, fd, s->dev, true, false); /* nothing claims it or a partition: now nothing else can */
	if (fd != -EBUSY)
		return fd == -ENXIO || fd == -ENODEV || fd == -ENOMEDIUM ? 0
		       : guard_fail(c->d, fd == -EACCES || fd == -EPERM ? -EACCES : fd, GUARD_UNKNOWN,
				    "%s shares storage with /dev/%s%s, and whether it is in use cannot be checked: "
				    "%s; run as root", c->target_name, s->name, how, strerror(-fd));
	(void)sysfs_for_each_partition(c->ctx, s->dir, probe_partition, &pp);
	if (pp.free || pp.used)
		return 0; /* its partitions are what is claimed: each one that shares the target's bytes is decided */
	who_holds(c, s->dir, who, sizeof(who));
	return guard_fail(c->d, -EBUSY, GUARD_HELD, "%s shares storage with /dev/%s%s, which is in use as a whole: "
			  "the kernel refuses to open it exclusively, and each of its partitions too, which happens "
			  "when the disk itself is claimed (%s); --force does not override this: release it first",
			  c->target_name, s->name, how, who);
}

/* One other device that shares the target's storage: 0 when nobody uses it (it is then claimed), else the refusal. */
static int check_sharer(struct check *c, const struct sharer *s)
{
	char how[600], holder[256], where[SYSFS_PATH_MAX + 64], who[4096];
	bool by_stack;
	int fd;

	describe_base(c->target.backing[0] ? &c->target : &s->map, how, sizeof(how));
	if (mounted_where(c, s->dev, where, sizeof(where)))
		return guard_fail(c->d, -EBUSY, GUARD_MOUNTED, "%s shares storage with /dev/%s%s, which is mounted (%s): "
				  "a write here lands in that file system; --force does not override this: unmount "
				  "it or detach the device first", c->target_name, s->name, how, where);
	if (is_swap_dev(&c->swaps, s->dev))
		return guard_fail(c->d, -EBUSY, GUARD_SWAP, "%s shares storage with /dev/%s%s, which is an active swap "
				  "area: a write here corrupts swapped-out memory; --force does not override this: "
				  "swapoff it first", c->target_name, s->name, how);
	if (other_holder(c->ctx, s->dir, &c->target, c->target_dev, holder, sizeof(holder), &by_stack))
		return guard_fail(c->d, -EBUSY, GUARD_HELD, "%s shares storage with /dev/%s%s, which is held by %s "
				  "(device-mapper or md): a write here corrupts what that device keeps; --force does "
				  "not override this: remove it first", c->target_name, s->name, how, holder);
	/*
	 * A member the target's own dm or md device claims is busy by that claim: what else holds it, the
	 * kernel would have refused the dm or md device's own claim. The disk of a partition target: the
	 * target's own O_EXCL open fails while the disk is claimed; a partition of a disk this writer holds
	 * (the target, or one claimed before): nobody else can claim it. A captured tree has no devices to
	 * claim.
	 */
	if (by_stack || s->dev == c->target_disk || ctx_has_sysroot(c->ctx) || guard_claims_hold(c->d, s->dev) ||
	    disk_is_ours(c, s->disk))
		return 0;
	if (s->partitions)
		return check_disk_with_partitions(c, s, how);
	/* reached with live devices only (no claims under a sysroot): tests/host/test_guard_aliases.py */
	fd = storage_open_dev(c->ctx, s->dev, O_RDONLY | O_EXCL);
	if (fd >= 0)
		return keep_claim(c, fd, s->dev, false, false);
	if (fd == -ENXIO || fd == -ENOMEDIUM || fd == -ENODEV)
		return 0; /* gone or empty: nothing there to corrupt */
	if (fd == -EBUSY) {
		who_holds(c, s->dir, who, sizeof(who));
		return guard_fail(c->d, -EBUSY, GUARD_HELD, "%s shares storage with /dev/%s%s, which is in use: the kernel "
				  "refused to open it exclusively (%s); --force does not override this: release it "
				  "first", c->target_name, s->name, how, who);
	}
	return guard_fail(c->d, fd == -EACCES || fd == -EPERM ? -EACCES : fd, GUARD_UNKNOWN,
			  "%s shares storage with /dev/%s%s, and whether it is in use cannot be checked: %s; run as "
			  "root", c->target_name, s->name, how, strerror(-fd));
}

/*
 * A device whose storage could not be followed: it may or may not share the target's, so only one nobody
 * uses can be left alone (and is claimed, so that nobody mounts it while the target is written).
 */
static int check_unresolved(struct check *c, const struct sharer *s)
{
	char where[SYSFS_PATH_MAX + 128], holder[256], who[4096];
	bool by_stack;
	int fd;

	if (storage_map_passes_through(&c->target, s->dev) || s->dev == c->target_disk)
		return 0; /* below the target: its mounts and holders are the target's own (guard.c) */
	if (mounted_where(c, s->dev, where, sizeof(where)))
		return guard_fail(c->d, -EBUSY, GUARD_MOUNTED, "cannot tell whether %s shares storage with /dev/%s, which "
				  "is mounted %s: %s; --force does not override this: unmount it or detach it first",
				  c->target_name, s->name, where, s->map.why);
	if (is_swap_dev(&c->swaps, s->dev))
		return guard_fail(c->d, -EBUSY, GUARD_SWAP, "cannot tell whether %s shares storage with /dev/%s, which "
				  "is an active swap area: %s; --force does not override this: swapoff it first",
				  c->target_name, s->name, s->map.why);
	if (other_holder(c->ctx, s->dir, &c->target, c->target_dev, holder, sizeof(holder), &by_stack))
		return guard_fail(c->d, -EBUSY, GUARD_HELD, "cannot tell whether %s shares storage with /dev/%s, which "
				  "is held by %s: %s; --force does not override this: remove it first",
				  c->target_name, s->name, holder, s->map.why);
	if (by_stack || ctx_has_sysroot(c->ctx) || guard_claims_hold(c->d, s->dev) || disk_is_ours(c, s->disk))
		return 0;
	fd = storage_open_dev(c->ctx, s->dev, O_RDONLY | O_EXCL);
	if (fd >= 0)
		return keep_claim(c, fd, s->dev, s->partitions, true);
	if (fd == -ENXIO || fd == -ENOMEDIUM || fd == -ENODEV)
		return 0;
	if (fd == -EBUSY) {
		who_holds(c, s->dir, who, sizeof(who));
		return guard_fail(c->d, -EBUSY, GUARD_HELD, "cannot tell whether %s shares storage with /dev/%s, which is "
				  "in use (%s): %s; --force does not override this: release it or detach it first",
				  c->target_name, s->name, who, s->map.why);
	}
	return guard_fail(c->d, fd == -EACCES || fd == -EPERM ? -EACCES : fd, GUARD_UNKNOWN,
			  "cannot tell whether %s shares storage with /dev/%s (%s), nor whether that device is in use "
			  "(%s); run as root", c->target_name, s->name, s->map.why, strerror(-fd));
}

static int found_one(const char *partdir, void *data)
{
	(void)partdir;
	(void)data;
	return 1;
}

/* Every block device that shares the target's storage, or may: whole disks first (see check_disk_with_partitions). */
static int scan_devices(struct check *c)
{
	char full[SYSFS_PATH_MAX + 256];
	struct sharer *list = NULL;
	unsigned int n = 0;
	struct dirent *de;
	int r = 0;
	DIR *d;

	if (ctx_path(c->ctx, "/sys/class/block", full, sizeof(full)) < 0 || !(d = opendir(full)))
		return guard_fail(c->d, -EBUSY, GUARD_UNKNOWN, "cannot list the block devices (/sys/class/block): "
				  "whether %s shares storage with a device in use cannot be checked", c->target_name);
	while (r == 0 && (de = readdir(d))) {
		struct sharer s = { 0 };
		char buf[32], parent[SYSFS_PATH_MAX];
		unsigned int maj, min;

		if (de->d_name[0] == '.' || sysfs_block_dir(c->ctx, de->d_name, s.dir, sizeof(s.dir)) < 0 ||
		    sysfs_read_attr(c->ctx, s.dir, "dev", buf, sizeof(buf)) <= 0 || sscanf(buf, "%u:%u", &maj, &min) != 2)
			continue;
		s.dev = makedev(maj, min);
		if (s.dev == c->target_dev)
			continue; /* the target's own mounts and holders: guard.c, and its O_EXCL claim */
		snprintf(s.name, sizeof(s.name), "%s", de->d_name);
		if (sysfs_attr_exists(c->ctx, s.dir, "partition") > 0) {
			if (sysfs_partition_disk_dir(s.dir, parent, sizeof(parent)) == 0 &&
			    sysfs_read_attr(c->ctx, parent, "dev", buf, sizeof(buf)) > 0 &&
			    sscanf(buf, "%u:%u", &maj, &min) == 2)
				s.disk = makedev(maj, min);
		} else {
			s.partitions = sysfs_for_each_partition(c->ctx, s.dir, found_one, NULL) > 0;
		}
		r = storage_map_blockdev(&c->env, s.dev, 0, STORAGE_END, &s.map);
		if (r < 0 || (!s.map.unresolved && !storage_maps_overlap(&c->target, &s.map))) {
			storage_map_free(&s.map);
			continue;
		}
		if (n % 16 == 0) {
			struct sharer *grown = realloc(list, (n + 16) * sizeof(*list));

			if (!grown) {
				storage_map_free(&s.map);
				r = -ENOMEM;
				break;
			}
			list = grown;
		}
		list[n++] = s;
	}
	closedir(d);
	/* whole disks before their partitions: claiming a partition first would make the disk's own claim fail */
	for (int pass = 0; pass < 2 && r == 0; pass++)
		for (unsigned int i = 0; i < n && r == 0; i++)
			if ((list[i].disk != 0) == (pass == 1))
				r = list[i].map.unresolved ? check_unresolved(c, &list[i]) : check_sharer(c, &list[i]);
	for (unsigned int i = 0; i < n; i++)
		storage_map_free(&list[i].map);
	free(list);
	return r == -ENOMEM ? guard_fail(c->d, -ENOMEM, GUARD_UNKNOWN, "out of memory while mapping the block devices")
			    : r;
}

/* ------------------------------------------------------------------ the target */

static int map_target(struct check *c, const struct stat *st)
{
	struct file_ids ids;
	int r;

	if (S_ISBLK(st->st_mode)) {
		char dir[SYSFS_PATH_MAX], parent[SYSFS_PATH_MAX], buf[32];
		unsigned int maj, min;

		c->target_dev = st->st_rdev;
		if (sysfs_dev_dir(c->ctx, "block", major(st->st_rdev), minor(st->st_rdev), dir, sizeof(dir)) == 0 &&
		    sysfs_attr_exists(c->ctx, dir, "partition") > 0 &&
		    sysfs_partition_disk_dir(dir, parent, sizeof(parent)) == 0 &&
		    sysfs_read_attr(c->ctx, parent, "dev", buf, sizeof(buf)) > 0 && sscanf(buf, "%u:%u", &maj, &min) == 2)
			c->target_disk = makedev(maj, min);
		return storage_map_blockdev(&c->env, st->st_rdev, 0, STORAGE_END, &c->target);
	}
	r = file_ids_of_fd(&c->env, c->g->fd, c->target_path, sizeof(c->target_path), &ids);
	if (r >= 0)
		r = storage_map_file(&c->target, &ids);
	file_ids_free(&ids);
	return r;
}

/*
 * A process that holds one of the target's layer files (an identity of its map other than the descriptor's
 * own inode ST): a program with upper/img open while the caller writes merged/img.
 */
static int check_layer_holders(struct check *c, const struct stat *st)
{
	for (unsigned int i = 0; i < c->target.n; i++) {
		const struct storage_piece *p = &c->target.pieces[i];
		char who[1024], fdpath[64], layer[SYSFS_PATH_MAX] = "";
		struct held_scan s;
		ssize_t n;

		if (!p->file || (p->dev == st->st_dev && p->ino == st->st_ino))
			continue;
		if (held_file_scan("/proc", p->dev, p->ino, getpid(), -1, &s) < 0 || !s.n_holders)
			continue;
		held_scan_describe(&s, who, sizeof(who));
		/* the layer file's name, as the first holder opened it; else its identity */
		snprintf(fdpath, sizeof(fdpath), "/proc/%d/fd/%d", (int)s.holders[0].pid, s.holders[0].fd);
		n = s.holders[0].fd >= 0 ? readlink(fdpath, layer, sizeof(layer) - 1) : -1;
		if (n > 0)
			layer[n] = '\0';
		else
			snprintf(layer, sizeof(layer), "(device %u:%u, inode %" PRIu64 ")", major(p->dev), minor(p->dev),
				 p->ino);
		return guard_fail(c->d, -EBUSY, GUARD_HELD, "%s is an overlay file, and its layer file %s is open "
				  "elsewhere by that name: %s. A write here lands in what that program holds, and it "
				  "would not know; --force does not override this: stop it first", c->target_name,
				  layer, who);
	}
	return 0;
}

/* Everything after the tables are read: the target's map, swap, file-backed mounts, the block devices. */
static int check_all(struct check *c, const struct stat *st)
{
	const char *target_name = c->target_name;
	int r;

	r = map_target(c, st);
	if (r < 0)
		return guard_fail(c->d, r, GUARD_UNKNOWN, "%s: %s", target_name, strerror(-r));
	if (c->target.unresolved)
		return guard_fail(c->d, -EACCES, GUARD_UNKNOWN, "cannot tell where the data of %s is: %s; run as root",
				  target_name, c->target.why);
	if ((c->g->how & GUARD_LAYER_HOLDERS) && S_ISREG(st->st_mode) && !ctx_has_sysroot(c->ctx) &&
	    (r = check_layer_holders(c, st)) < 0)
		return r;
	if (!ctx_has_sysroot(c->ctx) && (r = swaps_read(c)) < 0)
		return guard_fail(c->d, r == -ENOMEM ? -ENOMEM : -EBUSY, GUARD_UNKNOWN, "cannot read /proc/swaps (%s): "
				  "whether %s shares storage with an active swap area cannot be checked", strerror(-r),
				  target_name);
	for (unsigned int i = 0; i < c->swaps.n_files; i++)
		if (storage_maps_overlap(&c->target, &c->swaps.files[i]))
			return guard_fail(c->d, -EBUSY, GUARD_SWAP, "%s shares storage with an active swap file: a write "
					  "here corrupts swapped-out memory; --force does not override this: swapoff it "
					  "first", target_name);
	if (c->swaps.unresolved && storage_map_has_file(&c->target))
		return guard_fail(c->d, -EBUSY, GUARD_SWAP, "cannot tell whether %s is the active swap file %s (%s); "
				  "--force does not override this: swapoff it first", target_name, c->swaps.unresolved,
				  c->swaps.unresolved_err == -ETIMEDOUT ? "its file system did not answer in time"
								       : "it cannot be found by that name");
	if (!ctx_has_sysroot(c->ctx)) {
		r = read_file_mounts(c);
		if (r == 0)
			r = check_file_mounts(c);
		if (r < 0) {
			if (!c->d->error)
				r = guard_fail(c->d, r, GUARD_UNKNOWN, "cannot read the file-backed mounts: %s", strerror(-r));
			return r;
		}
	}
	return scan_devices(c);
}

int guard_shared_storage(struct guard_run *g, const char *target_name)
{
	struct check *c;
	struct stat st;
	int r;

	if (g->fd < 0) {
		/* nothing opened (a captured tree): the device the probe names */
		const struct lcloud_layer *top = NULL;
		dev_t devno;

		for (unsigned int i = 0; i < g->probe->n_layers && !top; i++)
			if (g->probe->layers[i].kind != LCLOUD_LAYER_FILESYSTEM)
				top = &g->probe->layers[i];
		if (!top || layer_get_devno(top, &devno) <= 0)
			return guard_fail(g->d, -ENODEV, GUARD_NO_DEVICE, "%s: which device it is cannot be told",
					  target_name);
		st.st_mode = S_IFBLK;
		st.st_rdev = devno;
	} else if (fstat(g->fd, &st) < 0) {
		return guard_fail(g->d, -errno, GUARD_UNKNOWN, "%s: %s", target_name, strerror(errno));
	}
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
		return 0; /* a generic node's namespace was claimed as a block device above */
	/* on the heap: tens of KiB, and a writer may check again from a thread of its own */
	c = calloc(1, sizeof(*c));
	if (!c)
		return guard_fail(g->d, -ENOMEM, GUARD_UNKNOWN, "out of memory for the write guard");
	*c = (struct check){ .ctx = g->ctx, .g = g, .d = g->d, .target_name = target_name };
	r = storage_env_open(g->ctx, &c->env);
	if (r < 0) {
		r = guard_fail(c->d, r == -ENOMEM ? -ENOMEM : -EBUSY, GUARD_UNKNOWN, "cannot read the mount table: "
			       "whether %s shares storage with a mounted file system cannot be checked", target_name);
		free(c);
		return r;
	}
	r = check_all(c, &st);
	storage_map_free(&c->target);
	swaps_free(&c->swaps);
	for (unsigned int i = 0; i < c->n_fm; i++)
		storage_map_free(&c->fm[i].map);
	free(c->fm);
	free(c->servers.pids);
	storage_env_close(&c->env);
	free(c);
	return r;
}
