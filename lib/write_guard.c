/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Never write to a device that is in use or holds data: mounted (it or one
 * of its partitions), held by dm/md, or carrying a file system, RAID or
 * partition table signature (libblkid, read by the probe). Regular files are
 * the caller's to write. LCLOUD_QUEUE_FORCE skips this.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filesystem.h"
#include "queue.h"
#include "report.h"
#include "sysfs.h"
#include "util.h"

struct mount_of {
	const struct lcloud_ctx *ctx;
	char devdir[SYSFS_PATH_MAX];
	char *mount_point; /* the first mount found, allocated */
};

static int match_device(struct mountinfo_entry *e, void *data)
{
	struct mount_of *m = data;
	char dir[SYSFS_PATH_MAX];
	size_t len = strlen(m->devdir);

	if (e->major == 0 || sysfs_dev_dir(m->ctx, "block", e->major, e->minor, dir, sizeof(dir)) < 0)
		return 0;
	/* the mounted device is the device itself or sits inside its folder (a partition) */
	if (!streq(dir, m->devdir) && !(has_prefix(dir, m->devdir) && dir[len] == '/'))
		return 0;
	m->mount_point = strdup(e->mount_point);
	return m->mount_point ? 1 : -ENOMEM;
}

/* Is device NAME or a partition of it mounted? Returns the mount point (to free), or NULL. */
static char *mounted(const struct lcloud_ctx *ctx, const char *name)
{
	struct mount_of m = { .ctx = ctx };

	if (sysfs_block_dir(ctx, name, m.devdir, sizeof(m.devdir)) < 0)
		return NULL;
	if (mountinfo_foreach(ctx, match_device, &m, NULL) < 0)
		return NULL;
	return m.mount_point;
}

int write_guard_check(struct lcloud_ctx *ctx, struct lcloud_queue *q)
{
	const struct lcloud_probe *p = q->probe;
	const struct lcloud_layer *top = NULL;
	char holders[SYSFS_PATH_MAX], full[4200], *mp;

	/* files are the caller's; a directory is refused when it is opened (EISDIR) */
	if (p->target_type == LCLOUD_TARGET_REGULAR || p->target_type == LCLOUD_TARGET_DIRECTORY)
		return 0;
	for (unsigned int i = 0; i < p->n_layers && !top; i++)
		if (p->layers[i].kind != LCLOUD_LAYER_FILESYSTEM)
			top = &p->layers[i];
	if (!top)
		return 0;
	mp = mounted(ctx, top->name);
	if (mp) {
		int r = queue_fail(q, -EBUSY, "/dev/%s is mounted (at %s): writing to it would corrupt the file "
				   "system; unmount it, or pass --force if you mean it", top->name, mp);

		free(mp);
		return r;
	}
	if (sysfs_block_dir(ctx, top->name, holders, sizeof(holders)) == 0 &&
	    path_printf(full, sizeof(full), "%s%s/holders", ctx->sysroot, holders) == 0) {
		/* a holder (dm, md) means another layer owns the device */
		if (access(full, F_OK) == 0) {
			DIR *d = opendir(full);
			struct dirent *de;

			while (d && (de = readdir(d)))
				if (de->d_name[0] != '.') {
					int r = queue_fail(q, -EBUSY, "/dev/%s is in use by %s (device-mapper or md): "
							   "write to that device instead, or pass --force", top->name,
							   de->d_name);

					closedir(d);
					return r;
				}
			if (d)
				closedir(d);
		}
	}
	for (unsigned int i = 0; i < p->n_layers; i++) {
		const struct lcloud_layer *l = &p->layers[i];
		const struct lcloud_fact *sig = layer_fact(l, "signature_type");
		const struct lcloud_fact *pt = layer_fact(l, "partition_table");

		if (l != top)
			continue;
		if (sig && sig->state == LCLOUD_FACT_PRESENT)
			return queue_fail(q, -EBUSY, "/dev/%s carries a %s signature (%s): writing would destroy it; "
					  "wipe it first (wipefs), or pass --force if you mean it", l->name, sig->string,
					  layer_fact(l, "signature_usage") ? layer_fact(l, "signature_usage")->string : "data");
		if (pt && pt->state == LCLOUD_FACT_PRESENT)
			return queue_fail(q, -EBUSY, "/dev/%s carries a %s partition table: write to a partition, "
					  "or pass --force if you mean it", l->name, pt->string);
	}
	/* could the signatures be read at all? */
	for (unsigned int i = 0; i < p->n_notes; i++)
		if (streq(p->notes[i].code, "needs-root") && strstr(p->notes[i].message, "signatures"))
			return queue_fail(q, -EACCES, "cannot check /dev/%s for file systems and partition tables "
					  "without read access: run as root", top->name);
	return 0;
}
