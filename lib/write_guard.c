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
#include <string.h>
#include <unistd.h>

#include "filesystem.h"
#include "queue.h"
#include "report.h"
#include "sysfs.h"
#include "util.h"

/* Is device MAJ:MIN or a partition of it mounted? Returns the mount point in MP. */
static bool mounted(const struct lcloud_ctx *ctx, const char *name, char *mp, size_t size)
{
	char path[4200], line[8192], devdir[SYSFS_PATH_MAX];
	struct mountinfo_entry e;
	bool found = false;
	FILE *f;

	if (ctx_path(ctx, "/proc/self/mountinfo", path, sizeof(path)) < 0 || !(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char dir[SYSFS_PATH_MAX];

		if (mountinfo_parse_line(line, &e) < 0 || e.major == 0)
			continue;
		if (sysfs_dev_dir(ctx, "block", e.major, e.minor, dir, sizeof(dir)) < 0)
			continue;
		/* the mounted device is NAME itself or sits inside NAME's folder (a partition) */
		if (sysfs_block_dir(ctx, name, devdir, sizeof(devdir)) == 0 &&
		    (streq(dir, devdir) || (has_prefix(dir, devdir) && dir[strlen(devdir)] == '/'))) {
			snprintf(mp, size, "%s", e.mount_point);
			found = true;
		}
	}
	fclose(f);
	return found;
}

int write_guard_check(struct lcloud_ctx *ctx, struct lcloud_queue *q)
{
	const struct lcloud_probe *p = q->probe;
	const struct lcloud_layer *top = NULL;
	char mp[1024], holders[SYSFS_PATH_MAX], full[4200];

	/* files are the caller's; a directory is refused when it is opened (EISDIR) */
	if (p->target_type == LCLOUD_TARGET_REGULAR || p->target_type == LCLOUD_TARGET_DIRECTORY)
		return 0;
	for (unsigned int i = 0; i < p->n_layers && !top; i++)
		if (p->layers[i].kind != LCLOUD_LAYER_FILESYSTEM)
			top = &p->layers[i];
	if (!top)
		return 0;
	if (mounted(ctx, top->name, mp, sizeof(mp)))
		return queue_fail(q, -EBUSY, "/dev/%s is mounted (at %s): writing to it would corrupt the file "
				  "system; unmount it, or pass --force if you mean it", top->name, mp);
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
