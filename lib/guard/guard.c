/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guard's decision (guard.h): never write to a device that is in use or
 * holds data. Who holds it (a mount of it or of one of its partitions, a dm
 * or md device built on it or on a device below it) is never overridden: the
 * kernel's O_EXCL claim refuses most of it at open, and this says so for
 * what the claim does not cover. What it holds (a file system, RAID or
 * partition table signature, read by the probe through the caller's own
 * descriptor) is the caller's to give up with GUARD_FORCE. Regular files are
 * the caller's to write, unless something else uses their storage; and any
 * target that shares its storage with something in use is refused
 * (shared_storage.c). The decision is returned, never written into the
 * caller's state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard_internal.h"
#include "holders.h"
#include "layer_kind.h"
#include "report.h"
#include "sysfs.h"
#include "util.h"

#define STACK_NAMES_MAX 64

/* Mounts and holders of every block device of the stack, the target first. */
static int check_holders(struct guard_run *g, const struct lcloud_layer *top)
{
	const struct lcloud_ctx *ctx = g->ctx;
	const struct lcloud_probe *p = g->probe;
	const char *names[STACK_NAMES_MAX];
	unsigned int n_names = 0;

	for (unsigned int i = 0; i < p->n_layers && n_names < STACK_NAMES_MAX; i++)
		if (layer_kind_is_block_device(p->layers[i].kind))
			names[n_names++] = p->layers[i].name;
	for (unsigned int i = 0; i < p->n_layers; i++) {
		const struct lcloud_layer *l = &p->layers[i];
		char dir[SYSFS_PATH_MAX], holder[256], dmname[256] = "", hdir[SYSFS_PATH_MAX], *mp;
		int r;

		if (!layer_kind_is_block_device(l->kind) || sysfs_block_dir(ctx, l->name, dir, sizeof(dir)) < 0)
			continue;
		/* the target with its partitions; below it, the device itself (a sibling partition is not ours) */
		mp = holders_mount_point(ctx, dir, l == top);
		if (mp) {
			r = l == top ? guard_fail(g->d, -EBUSY, GUARD_MOUNTED, "/dev/%s is mounted (at %s): a write under a mounted file "
						  "system corrupts it, and its cache hides that until it writes over "
						  "the damage; --force does not override this: unmount it first",
						  l->name, mp)
				     : guard_fail(g->d, -EBUSY, GUARD_MOUNTED, "/dev/%s sits on /dev/%s, which is mounted (at %s): a write "
						  "here corrupts that file system; --force does not override this: "
						  "unmount it first", top->name, l->name, mp);
			free(mp);
			return r;
		}
		/* a holder inside our own stack (the dm device over its slaves) is the stack itself */
		r = holders_first_other(ctx, dir, l == top ? NULL : names, l == top ? 0 : n_names, holder,
					sizeof(holder));
		if (r <= 0)
			continue;
		if (sysfs_block_dir(ctx, holder, hdir, sizeof(hdir)) == 0)
			sysfs_read_attr(ctx, hdir, "dm/name", dmname, sizeof(dmname));
		if (l == top)
			return guard_fail(g->d, -EBUSY, GUARD_HELD, "/dev/%s is held by %s%s%s%s (device-mapper or md): it is part of "
					  "that device, and a write to it bypasses and corrupts it; --force does not "
					  "override this: write to /dev/%s instead, or remove it first", l->name, holder,
					  dmname[0] ? " (" : "", dmname, dmname[0] ? ")" : "", holder);
		return guard_fail(g->d, -EBUSY, GUARD_HELD, "/dev/%s sits on /dev/%s, which is also held by %s%s%s%s: a write here "
				  "can corrupt what that device keeps there; --force does not override this: remove "
				  "it first", top->name, l->name, holder, dmname[0] ? " (" : "", dmname,
				  dmname[0] ? ")" : "");
	}
	return 0;
}

/* Signatures and partition tables on the target, and whether they could be read at all. */
static int check_contents(struct guard_run *g, const struct lcloud_layer *top, unsigned int top_index)
{
	const struct lcloud_probe *p = g->probe;
	const struct lcloud_fact *sig = layer_fact(top, FACT_SIGNATURE_TYPE);
	const struct lcloud_fact *pt = layer_fact(top, FACT_PARTITION_TABLE);

	if (sig && sig->state == LCLOUD_FACT_PRESENT)
		return guard_fail(g->d, -EBUSY, GUARD_CONTENTS, "/dev/%s carries %s %s signature (%s): a write destroys what it "
				  "describes; wipe it first (wipefs), or pass --force to write anyway and lose it",
				  top->name, sig->string[0] && strchr("aeiouAEIOU", sig->string[0]) ? "an" : "a", sig->string,
				  layer_fact(top, FACT_SIGNATURE_USAGE) ? layer_fact(top, FACT_SIGNATURE_USAGE)->string : "data");
	if (pt && pt->state == LCLOUD_FACT_PRESENT)
		return guard_fail(g->d, -EBUSY, GUARD_CONTENTS, "/dev/%s carries %s %s partition table: write to a partition, or pass "
				  "--force to write anyway (a write over the table loses every partition)", top->name,
				  pt->string[0] && strchr("aeiouAEIOU", pt->string[0]) ? "an" : "a", pt->string);
	/* could the signatures be read at all? unread is not "none": the probe's typed record, not its notes' text */
	for (unsigned int i = 0; i < p->n_layers; i++) {
		const struct lcloud_layer *l = &p->layers[i];

		if (!layer_kind_is_block_device(l->kind) || l->signatures != LAYER_SIGNATURES_UNREAD)
			continue;
		if (i == top_index)
			return guard_fail(g->d, -EBUSY, GUARD_CONTENTS, "cannot tell whether /dev/%s holds data: its file system and "
					  "partition table signatures could not be read (see the probe's notes); "
					  "--force writes without looking, and destroys whatever is there", top->name);
		return guard_fail(g->d, -EACCES, GUARD_CONTENTS, "cannot check /dev/%s, below /dev/%s, for file systems and partition "
				  "tables: its signatures could not be read (without read access: run as root); "
				  "--force writes without looking, and destroys whatever is there", l->name, top->name);
	}
	return 0;
}

int guard_decide(const struct lcloud_ctx *ctx, int fd, const struct lcloud_probe *probe, uint32_t how,
		 struct guard_decision *d)
{
	struct guard_run g = { .ctx = ctx, .probe = probe, .how = how, .fd = fd, .d = d };
	const struct lcloud_layer *top = NULL;
	unsigned int top_index = 0;
	char name[300];
	int r;

	d->error = 0;
	d->refusal = GUARD_ALLOWED;
	d->reason[0] = '\0';
	if (!ctx || !probe)
		return guard_fail(d, -EINVAL, GUARD_NO_DEVICE, "the write guard was asked without a target");
	/* a directory was refused when it was opened; a file is the caller's, unless something else uses its storage */
	if (probe->target_type == LCLOUD_TARGET_DIRECTORY)
		return 0;
	if (probe->target_type == LCLOUD_TARGET_REGULAR)
		return guard_shared_storage(&g, probe->path);
	for (unsigned int i = 0; i < probe->n_layers && !top; i++)
		if (layer_kind_is_block_device(probe->layers[i].kind)) {
			top = &probe->layers[i];
			top_index = i;
		}
	if (!top)
		return guard_fail(d, -ENODEV, GUARD_NO_DEVICE, "the probe found no block device behind the target: "
				  "the write guard cannot check it");
	r = check_holders(&g, top);
	if (r < 0)
		return r;
	snprintf(name, sizeof(name), "/dev/%s", top->name);
	r = guard_shared_storage(&g, name);
	if (r < 0 || (how & (GUARD_FORCE | GUARD_USE_ONLY)))
		return r;
	return check_contents(&g, top, top_index);
}
