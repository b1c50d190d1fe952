/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* On-disk signatures through libblkid: what a write to the raw device would destroy. */
#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "layer_kind.h"
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
	r = blkid_do_safeprobe(pr);
	if (r == -1) {
		r = -EIO; /* could not read: not the same as "nothing there" */
	} else if (r == -2) {
		r = layer_add_string(l, FACT_SIGNATURE_TYPE, "ambiguous", "blkid");
	} else {
		r = 0;
		if (!blkid_probe_lookup_value(pr, "TYPE", &value, NULL))
			r = layer_add_string(l, FACT_SIGNATURE_TYPE, value, "blkid");
		if (r >= 0 && !blkid_probe_lookup_value(pr, "USAGE", &value, NULL))
			r = layer_add_string(l, FACT_SIGNATURE_USAGE, value, "blkid");
		if (r >= 0 && !blkid_probe_lookup_value(pr, "PTTYPE", &value, NULL))
			r = layer_add_string(l, FACT_PARTITION_TABLE, value, "blkid");
	}
	blkid_free_probe(pr);
	return r;
}

/* A device whose signatures could not be read gets a note: unread is not "none". */
static int note_failure(struct lcloud_probe *p, unsigned int index, const char *name, int r)
{
	p->layers[index].signatures = r >= 0 ? LAYER_SIGNATURES_READ : LAYER_SIGNATURES_UNREAD;
	if (r >= 0 || r == -ENOMEM)
		return r;
	return report_note(p, NOTE_SIGNATURES_UNREADABLE, (int)index,
			   "libblkid could not read /dev/%s (%s): whether it carries a file system or a "
			   "partition table is unknown", name, strerror(-r));
}

/* Is the open FD the block device whose number the layer's "dev" fact gives? */
static bool is_layer_device(const struct lcloud_layer *l, int fd)
{
	struct stat st;
	dev_t devno;

	return layer_get_devno(l, &devno) > 0 && fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == devno;
}

int signature_probe_layers(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int target_fd)
{
	bool noted = false;

	if (ctx_has_sysroot(ctx))
		return 0; /* a captured tree has no device contents */
	for (unsigned int i = 0; i < p->n_layers; i++) {
		struct lcloud_layer *l = &p->layers[i];
		char node[300];
		int fd, r;

		/* only block devices carry signatures; device and provider layers describe one */
		if (!layer_kind_is_block_device(l->kind))
			continue;
		/* the caller's own descriptor of the target: what is read is what it will write */
		if (target_fd >= 0 && is_layer_device(l, target_fd)) {
			r = note_failure(p, i, l->name, probe_one(l, target_fd));
			if (r < 0)
				return r;
			continue;
		}
		if (path_printf(node, sizeof(node), "/dev/%s", l->name) < 0)
			continue;
		fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			l->signatures = LAYER_SIGNATURES_UNREAD;
		if (fd < 0) {
			if ((errno == EACCES || errno == EPERM) && !noted) {
				noted = true;
				if (geteuid() == 0)
					/* root refused: a device cgroup or security module, not file modes */
					r = report_note(p, NOTE_DEVICE_ACCESS_DENIED, (int)i,
							"opening %s was refused even for root (%s: a device "
							"cgroup or security policy); on-disk signatures were not read",
							node, strerror(errno));
				else
					r = report_note(p, NOTE_NEEDS_ROOT, (int)i,
							"reading on-disk signatures (file systems, partition tables) "
							"needs read access to %s; run as root to see them", node);
				if (r < 0)
					return r;
			}
			continue;
		}
		/* a node by that name that is another device (a stale or planted /dev entry) says nothing */
		if (!is_layer_device(l, fd)) {
			close(fd);
			l->signatures = LAYER_SIGNATURES_UNREAD;
			r = report_note(p, NOTE_DEVICE_NODE_MISMATCH, (int)i,
					"%s is not the device %s of sysfs: its signatures were not read", node,
					layer_fact(l, FACT_DEV) ? layer_fact(l, FACT_DEV)->string : "?");
			if (r < 0)
				return r;
			continue;
		}
		r = note_failure(p, i, l->name, probe_one(l, fd));
		close(fd);
		if (r < 0)
			return r;
	}
	return 0;
}
