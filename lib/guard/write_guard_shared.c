/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The write guard's second look: not who holds the target's name, but who
 * else uses its storage. Every block device of the system is mapped down to
 * its base storage (storage_map.c); one that shares bytes with the target
 * and is mounted, swap, built upon (dm, md) or claimed by a program makes
 * the write unsafe whatever path leads to it: a second loop over a mounted
 * image, a loop at an offset over a mounted disk, the image file of a
 * mounted loop. Those that are free are claimed (O_EXCL) for as long as the
 * queue lives, so nothing mounts them between this check and the writes.
 * None of this is --force's to override.
 */
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

#include "filesystem.h"
#include "queue.h"
#include "report.h"
#include "storage_map.h"
#include "swaps.h"
#include "sysfs.h"
#include "util.h"

struct mounted {
	dev_t *devs;
	char **points;
	unsigned int n, cap;
};

static int add_mounted(struct mountinfo_entry *e, void *data)
{
	struct mounted *m = data;

	if (!e->major && !e->minor)
		return 0;
	if (m->n == m->cap) {
		unsigned int cap = m->cap ? m->cap * 2 : 32;
		dev_t *d = realloc(m->devs, cap * sizeof(*d));
		char **p;

		if (!d)
			return -ENOMEM;
		m->devs = d;
		p = realloc(m->points, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		m->points = p;
		m->cap = cap;
	}
	m->points[m->n] = strdup(e->mount_point);
	if (!m->points[m->n])
		return -ENOMEM;
	m->devs[m->n++] = makedev(e->major, e->minor);
	return 0;
}

static const char *mount_point_of(const struct mounted *m, dev_t dev)
{
	for (unsigned int i = 0; i < m->n; i++)
		if (m->devs[i] == dev)
			return m->points[i];
	return NULL;
}

static void mounted_free(struct mounted *m)
{
	for (unsigned int i = 0; i < m->n; i++)
		free(m->points[i]);
	free(m->devs);
	free(m->points);
}

/* Active swap: block devices by number, swap files by inode (/proc/swaps names them by path). */
struct swaps {
	dev_t devs[64];
	unsigned int n_devs;
	struct storage_map files;
	char file_names[4][256];
};

static int add_swap(const char *path, const struct stat *st, void *data)
{
	struct swaps *s = data;

	if (S_ISBLK(st->st_mode)) {
		if (s->n_devs == 64)
			return -E2BIG; /* one not kept would be one not guarded */
		s->devs[s->n_devs++] = st->st_rdev;
	} else if (S_ISREG(st->st_mode)) {
		if (s->files.n < 4)
			snprintf(s->file_names[s->files.n], sizeof(s->file_names[0]), "%s", path);
		return storage_map_file(&s->files, st->st_dev, st->st_ino);
	}
	return 0;
}

static int swaps_read(struct swaps *s)
{
	int r = swaps_foreach(add_swap, s);

	return r == -ENOENT ? 0 : r; /* no /proc/swaps: a kernel without swap */
}

static bool is_swap_dev(const struct swaps *s, dev_t dev)
{
	for (unsigned int i = 0; i < s->n_devs; i++)
		if (s->devs[i] == dev)
			return true;
	return false;
}

/* A whole disk with partitions: a claim on any partition makes its own O_EXCL open fail. */
static int found_one(const char *partdir, void *data)
{
	return 1;
}

static bool has_partitions(const struct lcloud_ctx *ctx, const char *dir)
{
	return sysfs_attr_exists(ctx, dir, "partition") <= 0 && sysfs_for_each_partition(ctx, dir, found_one, NULL) > 0;
}

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

/* Does the queue claim DEV already (a check run again while it writes: queue_watch.c)? */
static bool claimed_already(const struct lcloud_queue *q, dev_t dev)
{
	struct stat st;

	for (unsigned int i = 0; i < q->n_claims; i++)
		if (fstat(q->claims[i], &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev)
			return true;
	return false;
}

static int claim_add(struct lcloud_queue *q, int fd)
{
	int *c = realloc(q->claims, (q->n_claims + 1) * sizeof(*c));

	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	q->claims = c;
	q->claims[q->n_claims++] = fd;
	return 0;
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

struct check {
	const struct lcloud_ctx *ctx;
	struct lcloud_queue *q;
	const char *target_name;
	dev_t target_dev; /* 0 for a file */
	char target_path[SYSFS_PATH_MAX]; /* a file's path, as the kernel names it */
	struct storage_map target;
	struct mounted mounted;
	struct swaps swaps;
};

/* One other device D that shares the target's storage: 0 when nobody uses it (it is then claimed), else the refusal. */
static int check_sharer(struct check *c, const char *name, const char *dir, dev_t dev, const struct storage_map *dm)
{
	char how[600], holder[256], node[SYSFS_PATH_MAX];
	const char *mp = mount_point_of(&c->mounted, dev);
	bool by_stack;
	int fd;

	/* checked again while writing (queue_watch.c): a device the queue claims already is its own */
	if (claimed_already(c->q, dev))
		return 0;
	describe_base(c->target.backing[0] ? &c->target : dm, how, sizeof(how));
	if (mp)
		return queue_fail(c->q, -EBUSY, "%s shares storage with /dev/%s%s, which is mounted (at %s): a write "
				  "here lands in that file system; --force does not override this: unmount it or "
				  "detach the device first", c->target_name, name, how, mp);
	if (is_swap_dev(&c->swaps, dev))
		return queue_fail(c->q, -EBUSY, "%s shares storage with /dev/%s%s, which is an active swap area: a "
				  "write here corrupts swapped-out memory; --force does not override this: swapoff "
				  "it first", c->target_name, name, how);
	if (other_holder(c->ctx, dir, &c->target, c->target_dev, holder, sizeof(holder), &by_stack))
		return queue_fail(c->q, -EBUSY, "%s shares storage with /dev/%s%s, which is held by %s (device-mapper "
				  "or md): a write here corrupts what that device keeps; --force does not override "
				  "this: remove it first", c->target_name, name, how, holder);
	/*
	 * A member the target's own dm or md device claims is busy by that claim: what else holds it, the
	 * kernel would have refused the dm or md device's own claim. A disk's claim state also counts its
	 * partitions': those are checked one by one. A captured tree has no devices to claim.
	 */
	if (by_stack || has_partitions(c->ctx, dir) || ctx_has_sysroot(c->ctx))
		return 0;
	if (storage_find_node(c->ctx, dev, node, sizeof(node)) < 0)
		return queue_fail(c->q, -EBUSY, "%s shares storage with /dev/%s%s, which has no device node here: "
				  "whether a program uses it cannot be checked, so nothing is written",
				  c->target_name, name, how);
	/* reached with live devices only (no claims under a sysroot): tests/host/test_guard_aliases.py */
	fd = open(node, O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int err = errno;

		if (err == ENXIO || err == ENOMEDIUM || err == ENODEV)
			return 0; /* gone or empty: nothing there to corrupt */
		if (err == EBUSY)
			return queue_fail(c->q, -EBUSY, "%s shares storage with /dev/%s%s, which is in use: the kernel "
					  "refused to open it exclusively (a mount in another namespace, swap, or "
					  "a program that claimed it); --force does not override this: release it "
					  "first", c->target_name, name, how);
		return queue_fail(c->q, err == EACCES || err == EPERM ? -EACCES : -err,
				  "%s shares storage with /dev/%s%s, and whether it is in use cannot be checked: %s; "
				  "run as root", c->target_name, name, how, strerror(err));
	}
	return claim_add(c->q, fd);
}

static int scan_devices(struct check *c)
{
	char full[SYSFS_PATH_MAX + 256];
	struct dirent *de;
	int r = 0;
	DIR *d;

	if (ctx_path(c->ctx, "/sys/class/block", full, sizeof(full)) < 0 || !(d = opendir(full)))
		return queue_fail(c->q, -EBUSY, "cannot list the block devices (/sys/class/block): whether %s shares "
				  "storage with a device in use cannot be checked", c->target_name);
	while (r == 0 && (de = readdir(d))) {
		struct storage_map m = { 0 };
		char dir[SYSFS_PATH_MAX], buf[32];
		unsigned int maj, min;
		dev_t dev;

		if (de->d_name[0] == '.' || sysfs_block_dir(c->ctx, de->d_name, dir, sizeof(dir)) < 0 ||
		    sysfs_read_attr(c->ctx, dir, "dev", buf, sizeof(buf)) <= 0 || sscanf(buf, "%u:%u", &maj, &min) != 2)
			continue;
		dev = makedev(maj, min);
		if (dev == c->target_dev)
			continue; /* the target's own mounts and holders: write_guard.c, and its O_EXCL claim */
		r = storage_map_blockdev(c->ctx, dev, 0, STORAGE_END, &m);
		if (r < 0)
			break;
		if (m.unresolved) {
			/* it may or may not share our storage: only one nobody uses can be left alone */
			const char *mp = mount_point_of(&c->mounted, dev);
			bool in_use = mp || is_swap_dev(&c->swaps, dev);
			char backing[SYSFS_PATH_MAX] = "";

			/*
			 * A file the caller can write anyway: only a loop over it by its very name counts (an
			 * unprivileged caller cannot follow a loop into a folder it cannot read).
			 */
			if (!c->target_dev && (sysfs_read_attr(c->ctx, dir, "loop/backing_file", backing,
							       sizeof(backing)) < 0 ||
					       !streq(backing, c->target_path)))
				in_use = false;
			if (in_use)
				r = queue_fail(c->q, -EBUSY, "cannot tell whether %s shares storage with /dev/%s, which "
					       "is %s%s: %s; run as root, or detach it first", c->target_name, de->d_name,
					       mp ? "mounted at " : "an active swap area", mp ? mp : "", m.why);
		} else if (storage_maps_overlap(&c->target, &m)) {
			r = check_sharer(c, de->d_name, dir, dev, &m);
		}
		storage_map_free(&m);
	}
	closedir(d);
	return r;
}

int write_guard_shared_storage(struct lcloud_ctx *ctx, struct lcloud_queue *q, const char *target_name)
{
	struct check c = { .ctx = ctx, .q = q, .target_name = target_name };
	struct stat st;
	int r;

	if (q->fd < 0 && q->hold_fd < 0) {
		/* nothing opened (a captured tree): the device the probe names */
		const struct lcloud_layer *top = NULL;
		dev_t devno;

		for (unsigned int i = 0; i < q->probe->n_layers && !top; i++)
			if (q->probe->layers[i].kind != LCLOUD_LAYER_FILESYSTEM)
				top = &q->probe->layers[i];
		if (!top || layer_get_devno(top, &devno) <= 0)
			return queue_fail(q, -ENODEV, "%s: which device it is cannot be told", target_name);
		st.st_mode = S_IFBLK;
		st.st_rdev = devno;
	} else if (fstat(q->hold_fd >= 0 ? q->hold_fd : q->fd, &st) < 0) {
		return queue_fail(q, -errno, "%s: %s", target_name, strerror(errno));
	}
	if (S_ISBLK(st.st_mode)) {
		c.target_dev = st.st_rdev;
		r = storage_map_blockdev(ctx, st.st_rdev, 0, STORAGE_END, &c.target);
	} else if (S_ISREG(st.st_mode)) {
		char self[64];
		ssize_t n;

		snprintf(self, sizeof(self), "/proc/self/fd/%d", q->fd);
		n = readlink(self, c.target_path, sizeof(c.target_path) - 1);
		c.target_path[n > 0 ? n : 0] = '\0';
		r = storage_map_file(&c.target, st.st_dev, st.st_ino);
	} else {
		return 0; /* a generic node's namespace was claimed as a block device above */
	}
	if (r < 0)
		goto out;
	if (c.target.unresolved) {
		r = queue_fail(q, -EACCES, "cannot tell where the data of %s is: %s; run as root", target_name,
			       c.target.why);
		goto out;
	}
	r = mountinfo_foreach(ctx, add_mounted, &c.mounted, NULL);
	if (r < 0) {
		r = queue_fail(q, -EBUSY, "cannot read the mount table: whether %s shares storage with a mounted file "
			       "system cannot be checked", target_name);
		goto out;
	}
	if (!ctx_has_sysroot(ctx) && (r = swaps_read(&c.swaps)) < 0) {
		r = queue_fail(q, -EBUSY, "cannot read /proc/swaps (%s): whether %s shares storage with an active "
			       "swap area cannot be checked", strerror(-r), target_name);
		goto out;
	}
	if (storage_maps_overlap(&c.target, &c.swaps.files)) {
		r = queue_fail(q, -EBUSY, "%s shares storage with an active swap file (%s): a write here corrupts "
			       "swapped-out memory; --force does not override this: swapoff it first", target_name,
			       c.swaps.file_names[0]);
		goto out;
	}
	r = scan_devices(&c);
out:
	storage_map_free(&c.target);
	storage_map_free(&c.swaps.files);
	mounted_free(&c.mounted);
	return r;
}
