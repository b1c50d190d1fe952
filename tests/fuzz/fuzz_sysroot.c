/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whole captured trees: sysfs (sys/...), NVMe captures (nvme-data/NAME/...)
 * and SCSI captures (scsi-data/NAME/...), written from an archive
 * (fuzz_common.h) into a scratch folder that becomes the sysroot. The device
 * named by the '@' record ("/dev/NAME": lcloud_probe_path; "NAME":
 * lcloud_probe_blockdev), or else every device in sys/class/block, is probed
 * under lcloud_ctx_set_sysroot and its verdicts read; lcloud_blockdev_foreach
 * walks the tree too.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static void probe_one(struct lcloud_ctx *ctx, const char *target)
{
	struct lcloud_probe *p = NULL;
	int r;

	if (target[0] == '/')
		r = lcloud_probe_path(ctx, target, 0, &p);
	else
		r = lcloud_probe_blockdev(ctx, target, 0, &p);
	if (r == 0) {
		fuzz_use_probe(p);
		lcloud_probe_free(p);
	}
}

static int count_device(const char *name, void *userdata)
{
	*(size_t *)userdata += strlen(name);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *scratch = fuzz_scratch_dir();
	const struct fuzz_record *at;
	struct lcloud_ctx *ctx = NULL;
	struct fuzz_archive a;
	char root[4200], dir[4300];
	size_t names = 0;

	if (fuzz_archive_parse(&a, data, size) < 0)
		return 0;
	snprintf(root, sizeof(root), "%s/root", scratch);
	if (mkdir(root, 0755) < 0)
		abort(); /* left over from the last input: the cleanup failed */
	fuzz_tree_write(root, &a);
	if (lcloud_ctx_new(&ctx) < 0)
		abort();
	if (lcloud_ctx_set_sysroot(ctx, root) < 0)
		goto out;
	at = fuzz_archive_find(&a, '@', NULL);
	if (at) {
		char target[256];
		size_t n = at->len < sizeof(target) - 1 ? at->len : sizeof(target) - 1;

		memcpy(target, at->data, n);
		target[n] = '\0';
		probe_one(ctx, target);
	} else {
		DIR *d;
		struct dirent *de;
		int probed = 0;

		snprintf(dir, sizeof(dir), "%s/sys/class/block", root);
		d = opendir(dir);
		while (d && (de = readdir(d)) && probed < 8) {
			char target[300];

			if (de->d_name[0] == '.')
				continue;
			snprintf(target, sizeof(target), "/dev/%s", de->d_name);
			probe_one(ctx, target);
			probed++;
		}
		if (d)
			closedir(d);
	}
	(void)lcloud_blockdev_foreach(ctx, count_device, &names);
out:
	lcloud_ctx_free(ctx);
	fuzz_tree_remove(root);
	fuzz_archive_free(&a);
	return 0;
}
