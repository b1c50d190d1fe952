/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Following a block device down to the storage that holds its bytes: a
 * partition onto its disk at its start, a loop device onto its backing file
 * or device at its offset (the kernel's own answer, LOOP_GET_STATUS64, and
 * sysfs loop/ where the device cannot be opened), dm and md devices onto
 * their members. The write guard compares these maps, because the loop
 * driver claims nothing below it: a second loop over a mounted image, or a
 * loop at an offset over a mounted disk, is invisible to holders/ and O_EXCL.
 * Every loop device is asked once per decision, in a child with a time
 * bound (a loop over a file on a FUSE server that stopped answering would
 * hang LOOP_GET_STATUS64), through a private node where /dev has none (a
 * mounted loop whose node was removed is still a mounted loop). A file's
 * identity on overlayfs is the overlay's inode and the layer files that
 * may hold its bytes: the upper one, the lower ones not yet copied up, and
 * with metacopy the data layer its redirect names (overlay_options.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <dirent.h>


#include "bounded_query.h"
#include "overlay_options.h"
#include "private_node.h"
#include "storage_map.h"
#include "sysfs.h"
#include "util.h"

#define MAP_DEPTH_MAX 16 /* loops on loops on dm: deeper than any real stack */

static void map_unresolved(struct storage_map *m, const char *fmt, const char *a, const char *b)
{
	if (m->unresolved)
		return;
	m->unresolved = true;
	snprintf(m->why, sizeof(m->why), fmt, a, b);
}

static int add_piece(struct storage_map *m, bool file, dev_t dev, uint64_t ino, uint64_t start, uint64_t end)
{
	if (start >= end)
		return 0;
	if (m->n == m->cap) {
		unsigned int cap = m->cap ? m->cap * 2 : 4;
		struct storage_piece *p = realloc(m->pieces, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		m->pieces = p;
		m->cap = cap;
	}
	m->pieces[m->n++] = (struct storage_piece){ .file = file, .dev = dev, .ino = ino, .start = start, .end = end };
	return 0;
}

static int add_through(struct storage_map *m, dev_t dev)
{
	if (storage_map_passes_through(m, dev))
		return 0;
	if (m->n_through == m->cap_through) {
		unsigned int cap = m->cap_through ? m->cap_through * 2 : 4;
		dev_t *t = realloc(m->through, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		m->through = t;
		m->cap_through = cap;
	}
	m->through[m->n_through++] = dev;
	return 0;
}

/* start + len without wrapping; STORAGE_END stays the end */
static uint64_t add_clamped(uint64_t a, uint64_t b)
{
	return a > STORAGE_END - b ? STORAGE_END : a + b;
}

int storage_find_node(const struct lcloud_ctx *ctx, dev_t dev, char *buf, size_t size)
{
	char dir[SYSFS_PATH_MAX], uevent[1024], *name;
	struct stat st;

	snprintf(buf, size, "/dev/block/%u:%u", major(dev), minor(dev));
	if (stat(buf, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev)
		return 0;
	if (sysfs_dev_dir(ctx, "block", major(dev), minor(dev), dir, sizeof(dir)) < 0 ||
	    sysfs_read_attr(ctx, dir, "uevent", uevent, sizeof(uevent)) < 0)
		return -ENOENT;
	name = strstr(uevent, "DEVNAME=");
	if (!name)
		return -ENOENT;
	name += strlen("DEVNAME=");
	name[strcspn(name, "\n")] = '\0';
	if (path_printf(buf, size, "/dev/%s", name) < 0)
		return -ENAMETOOLONG;
	if (stat(buf, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev)
		return 0;
	return -ENOENT;
}

#define IDS_DEPTH_MAX 4 /* overlays whose layers are on overlays */

struct loop_binding {
	dev_t dev;
	int err;           /* 0: known; -ETIMEDOUT (its file system did not answer), -EACCES, -ENOENT */
	bool is_device;
	dev_t backing;     /* the backing block device, or the device of the backing file */
	uint64_t ino, offset, sizelimit;
	char path[512];    /* sysfs loop/backing_file, as the kernel names it */
	struct file_ids ids; /* a backing file's identities */
};

int storage_open_dev(const struct lcloud_ctx *ctx, dev_t dev, int flags)
{
	char node[SYSFS_PATH_MAX];
	int fd;

	if (ctx_has_sysroot(ctx))
		return -ENOENT;
	if (storage_find_node(ctx, dev, node, sizeof(node)) == 0) {
		fd = open(node, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		return fd >= 0 ? fd : -errno;
	}
	return private_node_open(dev, flags);
}

static const struct loop_binding *find_loop(const struct storage_env *env, dev_t dev)
{
	for (unsigned int i = 0; i < env->n_loops; i++)
		if (env->loops[i].dev == dev)
			return &env->loops[i];
	return NULL;
}

static int ids_add(struct file_ids *ids, dev_t dev, uint64_t ino)
{
	for (unsigned int i = 0; i < ids->n; i++)
		if (ids->id[i].dev == dev && ids->id[i].ino == ino)
			return 0;
	if (ids->n == ids->cap) {
		unsigned int cap = ids->cap ? ids->cap * 2 : 4;
		void *p = realloc(ids->id, cap * sizeof(*ids->id));

		if (!p)
			return -ENOMEM;
		ids->id = p;
		ids->cap = cap;
	}
	ids->id[ids->n].dev = dev;
	ids->id[ids->n++].ino = ino;
	return 0;
}

__attribute__((format(printf, 2, 3))) static void ids_unresolved(struct file_ids *ids, const char *fmt, ...)
{
	va_list ap;

	if (ids->unresolved)
		return;
	ids->unresolved = true;
	va_start(ap, fmt);
	vsnprintf(ids->why, sizeof(ids->why), fmt, ap);
	va_end(ap);
}

void file_ids_free(struct file_ids *ids)
{
	if (!ids)
		return;
	free(ids->id);
	memset(ids, 0, sizeof(*ids));
}

/* PATH below MOUNT_POINT (a prefix at a '/'): the rest, "" for the mount point itself; NULL otherwise. */
static const char *below(const char *path, const char *mount_point)
{
	size_t n = strlen(mount_point);

	if (streq(mount_point, "/"))
		return path[0] == '/' ? path + 1 : NULL;
	if (strncmp(path, mount_point, n) || (path[n] && path[n] != '/'))
		return NULL;
	return path[n] == '/' ? path + n + 1 : path + n;
}

/* The overlay mount of DEV that PATH was reached through (by MOUNT_ID, else the longest mount point in NS_PID's namespace, else in any). */
static const struct mount_rec *overlay_mount(const struct storage_env *env, dev_t dev, const char *path,
					     pid_t ns_pid, uint64_t mount_id, bool *is_overlay)
{
	const struct mount_rec *best = NULL;
	size_t best_len = 0;

	*is_overlay = false;
	for (int pass = 0; pass < 2 && !best; pass++)
		for (unsigned int i = 0; i < env->mounts.n; i++) {
			const struct mount_rec *m = &env->mounts.m[i];
			size_t len;

			if (m->dev != dev || !streq(m->fstype, "overlay"))
				continue;
			*is_overlay = true;
			if (mount_id && !m->ns_pid && m->mount_id == mount_id)
				return m;
			if (!path || (pass == 0 && m->ns_pid != ns_pid) || !below(path, m->mount_point))
				continue;
			len = strlen(m->mount_point);
			if (!best || len > best_len) {
				best = m;
				best_len = len;
			}
		}
	return best;
}

static int ids_of(const struct storage_env *env, dev_t dev, uint64_t ino, const char *path, pid_t ns_pid,
		  uint64_t mount_id, struct file_ids *ids, int depth);

/* One layer file that exists: its identity, and its own layers when it is on an overlay too. */
static int add_layer_file(const struct storage_env *env, const struct bq_item *it, const char *name, pid_t ns_pid,
			  struct file_ids *ids, int depth)
{
	if (!S_ISREG(it->st.mode) && !S_ISBLK(it->st.mode))
		return 0; /* a folder or a whiteout: not where the file's bytes are */
	if (S_ISBLK(it->st.mode))
		return ids_add(ids, (dev_t)it->st.rdev, 0); /* never: a layer holds no devices' bytes */
	return ids_of(env, (dev_t)it->st.dev, it->st.ino, name, ns_pid, 0, ids, depth + 1);
}

#define LAYER_CANDIDATES_MAX 64

/*
 * The layer files of an overlay file: REL (the path from the overlay's root) in the upper layer and in
 * every lower one, each asked with a bound; with metacopy, the data layer file its redirect names.
 */
static int overlay_layer_files(const struct storage_env *env, const struct mount_rec *ov, const char *rel,
			       struct file_ids *ids, int depth)
{
	struct overlay_layers l;
	/* on the heap: this recurses for overlays over overlays, and may run on a thread's small stack */
	struct bq_item *items = NULL;
	char (*names)[1024] = NULL, (*reach)[1100] = NULL;
	char xmeta[40], xredirect[40];
	unsigned int n_names = 0, n_items = 0, found = 0;
	bool metacopy = false, data_found = false, timed_out = false;
	char redirect[BQ_VALUE_MAX + 1] = "";
	int r = 0;

	if (overlay_options_parse(ov->super_options, &l) < 0) {
		ids_unresolved(ids, "the layers of the overlay mounted %s%s could not be read from its options",
			       ov->mount_point, ov->ns_pid ? " in another mount namespace" : "");
		return 0;
	}
	if (l.relative) {
		ids_unresolved(ids, "the overlay mounted at %s names its layers by relative paths (relative to "
			       "where it was mounted from, unknown here)", ov->mount_point);
		goto out;
	}
	items = calloc(LAYER_CANDIDATES_MAX * 3, sizeof(*items));
	names = calloc(LAYER_CANDIDATES_MAX, sizeof(*names));
	reach = calloc(LAYER_CANDIDATES_MAX, sizeof(*reach));
	if (!items || !names || !reach) {
		r = -ENOMEM;
		goto out;
	}
	snprintf(xmeta, sizeof(xmeta), "%s.overlay.metacopy", l.userxattr ? "user" : "trusted");
	snprintf(xredirect, sizeof(xredirect), "%s.overlay.redirect", l.userxattr ? "user" : "trusted");
	/* the upper layer, then every lower one in order; data-only layers are reached through redirects only */
	for (int i = l.upper ? -1 : 0; i < (int)l.first_data_only && n_names < LAYER_CANDIDATES_MAX; i++) {
		const char *layer = i < 0 ? l.upper : l.lowers[i];

		if (path_printf(names[n_names], sizeof(names[0]), "%s%s%s", layer, rel[0] ? "/" : "", rel) < 0 ||
		    mount_rec_reach(ov, names[n_names], reach[n_names], sizeof(reach[0])) < 0) {
			ids_unresolved(ids, "a layer path of the overlay mounted at %s is too long", ov->mount_point);
			goto out;
		}
		items[n_items++] = (struct bq_item){ .op = BQ_STAT, .path = reach[n_names] };
		if (l.metacopy) {
			items[n_items++] = (struct bq_item){ .op = BQ_XATTR, .path = reach[n_names], .name = xmeta };
			items[n_items++] = (struct bq_item){ .op = BQ_XATTR, .path = reach[n_names], .name = xredirect };
		}
		n_names++;
	}
	bq_run(items, n_items, BOUNDED_QUERY_TIMEOUT_MS);
	for (unsigned int i = 0, k = 0; i < n_names && r >= 0; i++) {
		const struct bq_item *st = &items[k];
		bool meta = false;

		if (l.metacopy) {
			meta = items[k + 1].err == 0;
			if (items[k + 2].err == 0 && items[k + 2].value_len && !redirect[0]) {
				memcpy(redirect, items[k + 2].value, items[k + 2].value_len);
				redirect[items[k + 2].value_len] = '\0';
			}
			timed_out |= items[k + 1].err == -ETIMEDOUT || items[k + 2].err == -ETIMEDOUT;
		}
		k += l.metacopy ? 3 : 1;
		if (st->err == -ETIMEDOUT)
			timed_out = true;
		if (st->err)
			continue;
		found++;
		data_found |= !meta;
		metacopy |= meta;
		r = add_layer_file(env, st, names[i], ov->ns_pid, ids, depth);
	}
	if (r < 0)
		goto out;
	if (timed_out)
		ids_unresolved(ids, "a layer of the overlay mounted at %s did not answer within %d ms", ov->mount_point,
			       BOUNDED_QUERY_TIMEOUT_MS);
	else if (!found)
		ids_unresolved(ids, "no layer of the overlay mounted at %s has %s under that name (a renamed folder "
			       "or a redirect)", ov->mount_point, rel);
	if (metacopy && redirect[0] == '/') {
		/* a metadata-only copy: its data is the file its redirect names, in a lower or a data-only layer */
		n_items = 0;
		for (unsigned int i = 0; i < l.n_lowers && n_items < LAYER_CANDIDATES_MAX; i++) {
			if (path_printf(names[n_items], sizeof(names[0]), "%s%s", l.lowers[i], redirect) < 0 ||
			    mount_rec_reach(ov, names[n_items], reach[n_items], sizeof(reach[0])) < 0)
				continue;
			items[n_items] = (struct bq_item){ .op = BQ_STAT, .path = reach[n_items] };
			n_items++;
		}
		bq_run(items, n_items, BOUNDED_QUERY_TIMEOUT_MS);
		for (unsigned int i = 0; i < n_items && r >= 0; i++) {
			if (items[i].err == -ETIMEDOUT)
				ids_unresolved(ids, "a layer of the overlay mounted at %s did not answer within %d ms",
					       ov->mount_point, BOUNDED_QUERY_TIMEOUT_MS);
			if (items[i].err)
				continue;
			data_found = true;
			r = add_layer_file(env, &items[i], names[i], ov->ns_pid, ids, depth);
		}
	}
	if (metacopy && !data_found)
		ids_unresolved(ids, "%s is a metadata-only copy in the overlay mounted at %s whose data layer file "
			       "cannot be found", rel, ov->mount_point);
out:
	free(items);
	free(names);
	free(reach);
	overlay_layers_free(&l);
	return r;
}

static int ids_of(const struct storage_env *env, dev_t dev, uint64_t ino, const char *path, pid_t ns_pid,
		  uint64_t mount_id, struct file_ids *ids, int depth)
{
	const struct mount_rec *ov;
	bool is_overlay;
	char rel[1024];
	const char *rest;
	int r = ids_add(ids, dev, ino);

	if (r < 0)
		return r;
	if (depth > IDS_DEPTH_MAX) {
		ids_unresolved(ids, "overlays over overlays deeper than %d levels", IDS_DEPTH_MAX);
		return 0;
	}
	if (path && strstr(path, " (deleted)"))
		path = NULL; /* the name is gone: the layer file cannot be found by it */
	ov = overlay_mount(env, dev, path, ns_pid, mount_id, &is_overlay);
	if (!is_overlay)
		return 0;
	if (!ov || !path) {
		ids_unresolved(ids, "%s is on an overlay (device %u:%u) whose mount it was reached through cannot be "
			       "found, so the layer file holding its bytes is not known", path ? path : "a file",
			       major(dev), minor(dev));
		return 0;
	}
	rest = below(path, ov->mount_point);
	if (!rest) {
		/* reached by mount id through a name outside its mount point (a moved mount): not followed */
		ids_unresolved(ids, "%s is not below %s, where its overlay is mounted", path, ov->mount_point);
		return 0;
	}
	/* a bind mount of a folder of the overlay: its root field is where it starts */
	if (path_printf(rel, sizeof(rel), "%s%s%s", streq(ov->root, "/") ? "" : ov->root + 1,
			streq(ov->root, "/") || !rest[0] ? "" : "/", rest) < 0) {
		ids_unresolved(ids, "the path of %s in its overlay is too long", path);
		return 0;
	}
	return overlay_layer_files(env, ov, rel, ids, depth);
}

int file_ids_of(const struct storage_env *env, dev_t dev, uint64_t ino, const char *path, pid_t ns_pid,
		uint64_t mount_id, struct file_ids *ret)
{
	memset(ret, 0, sizeof(*ret));
	return ids_of(env, dev, ino, path, ns_pid, mount_id, ret, 0);
}

/* The mount a descriptor was opened through (/proc/self/fdinfo's mnt_id), 0 when unknown. */
static uint64_t fd_mount_id(int fd)
{
	char path[64], line[256];
	uint64_t id = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "mnt_id: %" SCNu64, &id) == 1)
			break;
	fclose(f);
	return id;
}

int file_ids_of_fd(const struct storage_env *env, int fd, char *path, size_t size, struct file_ids *ret)
{
	char self[64];
	struct stat st;
	ssize_t n;

	memset(ret, 0, sizeof(*ret));
	if (fstat(fd, &st) < 0)
		return -errno;
	/* the name and mount the kernel opened it through: a bind mount, a hard link, /proc/self/fd */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = readlink(self, path, size - 1);
	path[n > 0 ? n : 0] = '\0';
	return ids_of(env, st.st_dev, st.st_ino, path[0] ? path : NULL, 0, fd_mount_id(fd), ret, 0);
}

static int map_members(struct storage_env *env, const char *dir, struct storage_map *m, int depth);
static int add_loop(struct storage_env *env, const char *dir, dev_t dev);
static int ask_loops(struct storage_env *env, unsigned int first);

static int map_dev(struct storage_env *env, dev_t dev, uint64_t start, uint64_t end, struct storage_map *m,
		   int depth)
{
	const struct lcloud_ctx *ctx = env->ctx;
	char dir[SYSFS_PATH_MAX], devname[64];
	uint64_t sectors, size;
	int r;

	snprintf(devname, sizeof(devname), "%u:%u", major(dev), minor(dev));
	if (depth > MAP_DEPTH_MAX) {
		map_unresolved(m, "the devices below %s go deeper than %s levels", devname, "16");
		return 0;
	}
	r = add_through(m, dev);
	if (r < 0)
		return r;
	if (sysfs_dev_dir(ctx, "block", major(dev), minor(dev), dir, sizeof(dir)) < 0) {
		map_unresolved(m, "block device %s has no folder in sysfs%s", devname, "");
		return 0;
	}
	if (sysfs_read_attr_u64(ctx, dir, "size", &sectors) < 0) {
		map_unresolved(m, "the size of %s (%s) cannot be read", path_basename(dir), devname);
		return 0;
	}
	size = sectors * 512;
	if (end > size)
		end = size;
	if (start >= end)
		return 0;

	if (sysfs_attr_exists(ctx, dir, "partition") > 0) {
		char parent[SYSFS_PATH_MAX], buf[32];
		unsigned int maj, min;
		uint64_t first;

		if (sysfs_partition_disk_dir(dir, parent, sizeof(parent)) < 0 ||
		    sysfs_read_attr_u64(ctx, dir, "start", &first) < 0 ||
		    sysfs_read_attr(ctx, parent, "dev", buf, sizeof(buf)) < 0 || sscanf(buf, "%u:%u", &maj, &min) != 2) {
			map_unresolved(m, "where partition %s starts on its disk cannot be read%s", path_basename(dir), "");
			return 0;
		}
		return map_dev(env, makedev(maj, min), add_clamped(first * 512, start),
			       add_clamped(first * 512, end), m, depth + 1);
	}
	if (sysfs_attr_exists(ctx, dir, "loop") > 0) {
		const struct loop_binding *b = find_loop(env, dev);
		uint64_t lstart, lend;

		if (!b) {
			/* bound since the loops were asked: asked now */
			r = add_loop(env, dir, dev);
			if (r == 0)
				r = ask_loops(env, env->n_loops - 1);
			if (r < 0)
				return r;
			b = find_loop(env, dev);
		}
		if (b && b->err == -ENXIO)
			return 0; /* unbound meanwhile: no storage */

		if (!b || b->err) {
			map_unresolved(m, "what %s is bound to cannot be read (%s)", path_basename(dir),
				       !b ? "it cannot be found"
				       : b->err == -ETIMEDOUT ? "the file system of its backing file did not answer in time"
				       : b->err == -EACCES || b->err == -EPERM ? "LOOP_GET_STATUS64 needs root, and its backing "
										 "file cannot be found by name"
				       : "its backing file cannot be found by name");
			return 0;
		}
		if (!m->backing[0])
			snprintf(m->backing, sizeof(m->backing), "%s", b->path);
		lstart = add_clamped(b->offset, start);
		lend = add_clamped(b->offset, end);
		if (b->sizelimit && lend > add_clamped(b->offset, b->sizelimit))
			lend = add_clamped(b->offset, b->sizelimit);
		if (b->is_device)
			return map_dev(env, b->backing, lstart, lend, m, depth + 1);
		/* a file can grow under the loop: the loop's end is where its size says, the file's is open */
		r = 0;
		for (unsigned int i = 0; i < b->ids.n && r >= 0; i++)
			r = add_piece(m, true, b->ids.id[i].dev, b->ids.id[i].ino, lstart, lend);
		if (b->ids.unresolved)
			map_unresolved(m, "the backing file of %s: %s", path_basename(dir), b->ids.why);
		return r;
	}
	if (sysfs_attr_exists(ctx, dir, "slaves") > 0) {
		int n = map_members(env, dir, m, depth);

		if (n != 0)
			return n < 0 ? n : 0;
	}
	return add_piece(m, false, dev, 0, start, end);
}

/* dm and md: every member whole. Returns how many members were mapped (0: none, the device is its own base). */
static int map_members(struct storage_env *env, const char *dir, struct storage_map *m, int depth)
{
	const struct lcloud_ctx *ctx = env->ctx;
	char slaves[SYSFS_PATH_MAX + 16], full[SYSFS_PATH_MAX + 256];
	struct dirent *de;
	int n = 0, r = 0;
	DIR *d;

	if (path_printf(slaves, sizeof(slaves), "%s/slaves", dir) < 0 || ctx_path(ctx, slaves, full, sizeof(full)) < 0 ||
	    !(d = opendir(full)))
		return 0;
	while (r >= 0 && (de = readdir(d))) {
		char sdir[SYSFS_PATH_MAX], buf[32];
		unsigned int maj, min;

		if (de->d_name[0] == '.')
			continue;
		n++;
		if (sysfs_block_dir(ctx, de->d_name, sdir, sizeof(sdir)) < 0 ||
		    sysfs_read_attr(ctx, sdir, "dev", buf, sizeof(buf)) < 0 || sscanf(buf, "%u:%u", &maj, &min) != 2) {
			map_unresolved(m, "member %s of %s cannot be found in sysfs", de->d_name, path_basename(dir));
			continue;
		}
		r = map_dev(env, makedev(maj, min), 0, STORAGE_END, m, depth + 1);
	}
	closedir(d);
	return r < 0 ? r : n;
}

int storage_map_blockdev(struct storage_env *env, dev_t dev, uint64_t start, uint64_t end,
			 struct storage_map *m)
{
	return map_dev(env, dev, start, end, m, 0);
}

int storage_map_file(struct storage_map *m, const struct file_ids *ids)
{
	int r = 0;

	for (unsigned int i = 0; i < ids->n && r >= 0; i++)
		r = add_piece(m, true, ids->id[i].dev, ids->id[i].ino, 0, STORAGE_END);
	if (ids->unresolved)
		map_unresolved(m, "%s%s", ids->why, "");
	return r;
}

bool storage_map_has_file(const struct storage_map *m)
{
	for (unsigned int i = 0; i < m->n; i++)
		if (m->pieces[i].file)
			return true;
	return false;
}

bool storage_maps_overlap(const struct storage_map *a, const struct storage_map *b)
{
	for (unsigned int i = 0; i < a->n; i++)
		for (unsigned int j = 0; j < b->n; j++) {
			const struct storage_piece *x = &a->pieces[i], *y = &b->pieces[j];

			if (x->file == y->file && x->dev == y->dev && x->ino == y->ino && x->start < y->end &&
			    y->start < x->end)
				return true;
		}
	return false;
}

bool storage_map_passes_through(const struct storage_map *m, dev_t dev)
{
	for (unsigned int i = 0; i < m->n_through; i++)
		if (m->through[i] == dev)
			return true;
	return false;
}

void storage_map_free(struct storage_map *m)
{
	if (!m)
		return;
	free(m->pieces);
	free(m->through);
	*m = (struct storage_map){ 0 };
}

/* One bound loop device (sysfs has loop/ then), with what sysfs says of it; asked later (ask_loops). */
static int add_loop(struct storage_env *env, const char *dir, dev_t dev)
{
	struct loop_binding *b;

	if (env->n_loops % 16 == 0) {
		void *p = realloc(env->loops, (env->n_loops + 16) * sizeof(*env->loops));

		if (!p)
			return -ENOMEM;
		env->loops = p;
	}
	b = &env->loops[env->n_loops++];
	memset(b, 0, sizeof(*b));
	b->dev = dev;
	b->err = -ENOENT;
	sysfs_read_attr(env->ctx, dir, "loop/backing_file", b->path, sizeof(b->path));
	if (sysfs_read_attr_u64(env->ctx, dir, "loop/offset", &b->offset) < 0 ||
	    sysfs_read_attr_u64(env->ctx, dir, "loop/sizelimit", &b->sizelimit) < 0)
		b->err = -ENODATA;
	return 0;
}

/* Every bound loop device. */
static int list_loops(struct storage_env *env)
{
	char full[SYSFS_PATH_MAX + 256];
	struct dirent *de;
	int r = 0;
	DIR *d;

	if (ctx_path(env->ctx, "/sys/class/block", full, sizeof(full)) < 0 || !(d = opendir(full)))
		return 0; /* the scan that needs the list refuses without it */
	while (r == 0 && (de = readdir(d))) {
		char dir[SYSFS_PATH_MAX], buf[32];
		unsigned int maj, min;

		if (de->d_name[0] == '.' || sysfs_block_dir(env->ctx, de->d_name, dir, sizeof(dir)) < 0 ||
		    sysfs_attr_exists(env->ctx, dir, "loop") <= 0 ||
		    sysfs_read_attr(env->ctx, dir, "dev", buf, sizeof(buf)) <= 0 || sscanf(buf, "%u:%u", &maj, &min) != 2)
			continue;
		r = add_loop(env, dir, makedev(maj, min));
	}
	closedir(d);
	return r;
}

/*
 * What each loop device is bound to: the kernel's own answer through the device (root; a private node
 * when /dev has none), else the backing file's name in sysfs, stat()ed. Both touch the backing file's file
 * system, so both are asked in one bounded child: a loop whose file system does not answer stays
 * unresolved (-ETIMEDOUT) and the rest are answered all the same.
 */
static int ask_loops(struct storage_env *env, unsigned int first)
{
	unsigned int n = env->n_loops - first;
	struct bq_item *items = calloc(n ? n : 1, sizeof(*items));
	int *fds = calloc(n ? n : 1, sizeof(*fds));
	int r = 0;

	if (!items || !fds) {
		free(items);
		free(fds);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct loop_binding *b = &env->loops[first + i];

		fds[i] = b->err == -ENODATA ? -1 : storage_open_dev(env->ctx, b->dev, O_RDONLY);
		if (fds[i] >= 0)
			items[i] = (struct bq_item){ .op = BQ_LOOP_STATUS, .fd = fds[i] };
		else if (b->path[0] && b->path[0] == '/' && !strstr(b->path, " (deleted)") && b->err != -ENODATA)
			items[i] = (struct bq_item){ .op = BQ_STAT, .path = b->path };
		else
			items[i] = (struct bq_item){ .op = 0 }; /* answered -EINVAL: nothing to ask */
	}
	bq_run(items, n, BOUNDED_QUERY_TIMEOUT_MS);
	for (unsigned int i = 0; i < n && r >= 0; i++) {
		struct loop_binding *b = &env->loops[first + i];
		const struct bq_item *it = &items[i];

		if (fds[i] >= 0)
			close(fds[i]);
		if (b->err == -ENODATA)
			continue;
		if (it->op == BQ_LOOP_STATUS && !it->err) {
			/* lo_rdevice is the backing inode's rdev: non-zero only for a device (huge_encode_dev = makedev) */
			b->is_device = it->loop.rdev != 0;
			b->backing = b->is_device ? (dev_t)it->loop.rdev : (dev_t)it->loop.dev;
			b->ino = it->loop.ino;
			b->offset = it->loop.offset;
			b->sizelimit = it->loop.sizelimit;
			b->err = 0;
		} else if (it->op == BQ_STAT && !it->err) {
			b->is_device = S_ISBLK(it->st.mode);
			b->backing = b->is_device ? (dev_t)it->st.rdev : (dev_t)it->st.dev;
			b->ino = it->st.ino;
			b->err = 0;
		} else {
			b->err = it->err == -ETIMEDOUT ? -ETIMEDOUT : it->op == BQ_LOOP_STATUS || !it->op ? -EACCES : it->err;
			if (it->op == BQ_LOOP_STATUS && it->err == -ENXIO)
				b->err = -ENXIO; /* unbound meanwhile */
		}
		if (!b->err && !b->is_device)
			r = file_ids_of(env, b->backing, b->ino, b->path, 0, 0, &b->ids);
	}
	free(items);
	free(fds);
	return r;
}

int storage_env_open(const struct lcloud_ctx *ctx, struct storage_env *env)
{
	int r;

	memset(env, 0, sizeof(*env));
	env->ctx = ctx;
	r = mount_table_read(ctx, &env->mounts);
	if (r >= 0)
		r = list_loops(env);
	if (r >= 0)
		r = ask_loops(env, 0);
	if (r < 0)
		storage_env_close(env);
	return r;
}

void storage_env_close(struct storage_env *env)
{
	if (!env)
		return;
	for (unsigned int i = 0; i < env->n_loops; i++)
		file_ids_free(&env->loops[i].ids);
	free(env->loops);
	mount_table_free(&env->mounts);
	memset(env, 0, sizeof(*env));
}
