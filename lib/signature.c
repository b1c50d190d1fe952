/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* On-disk signatures through libblkid: what a write to the raw device would destroy. */
#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "signature.h"
#include "util.h"

static int probe_one(struct lcloud_layer *l, int fd)
{
	const char *value;
	blkid_probe pr;
	int r = 0;

	pr = blkid_new_probe();
	if (!pr)
		return -ENOMEM;
	if (blkid_probe_set_device(pr, fd, 0, 0) < 0) {
		blkid_free_probe(pr);
		return -EIO;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE | BLKID_SUBLKS_UUID);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
	/* Several signatures (a stale one beside a new one) are still a signature. */
	if (blkid_do_safeprobe(pr) == -2) {
		r = layer_add_string(l, "signature_type", "ambiguous", "blkid");
	} else {
		if (!blkid_probe_lookup_value(pr, "TYPE", &value, NULL))
			r = layer_add_string(l, "signature_type", value, "blkid");
		if (r >= 0 && !blkid_probe_lookup_value(pr, "USAGE", &value, NULL))
			r = layer_add_string(l, "signature_usage", value, "blkid");
		if (r >= 0 && !blkid_probe_lookup_value(pr, "PTTYPE", &value, NULL))
			r = layer_add_string(l, "partition_table", value, "blkid");
	}
	blkid_free_probe(pr);
	return r;
}

int signature_probe_layers(const struct lcloud_ctx *ctx, struct lcloud_probe *p)
{
	bool noted = false;

	if (ctx_has_sysroot(ctx))
		return 0; /* a captured tree has no device contents */
	for (unsigned int i = 0; i < p->n_layers; i++) {
		struct lcloud_layer *l = &p->layers[i];
		char node[300];
		int fd, r;

		/* only block devices carry signatures; device and provider layers describe one */
		if (l->kind != LCLOUD_LAYER_PARTITION && l->kind != LCLOUD_LAYER_DM && l->kind != LCLOUD_LAYER_MD &&
		    l->kind != LCLOUD_LAYER_LOOP && l->kind != LCLOUD_LAYER_DISK)
			continue;
		if (path_printf(node, sizeof(node), "/dev/%s", l->name) < 0)
			continue;
		fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0) {
			if ((errno == EACCES || errno == EPERM) && !noted) {
				noted = true;
				if (geteuid() == 0)
					/* root refused: a device cgroup or security module, not file modes */
					r = report_note(p, LCLOUD_NOTE_WARNING, "device-access-denied", (int)i,
							"opening %s was refused even for root (%s: a device "
							"cgroup or security policy); on-disk signatures were not read",
							node, strerror(errno));
				else
					r = report_note(p, LCLOUD_NOTE_NEEDS_ROOT, "needs-root", (int)i,
							"reading on-disk signatures (file systems, partition tables) "
							"needs read access to %s; run as root to see them", node);
				if (r < 0)
					return r;
			}
			continue;
		}
		r = probe_one(l, fd);
		close(fd);
		if (r == -ENOMEM)
			return r;
	}
	return 0;
}
