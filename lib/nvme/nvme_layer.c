/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The NVMe device layer: for each namespace in the stack, Identify Controller
 * and Namespace, the hint features, the cloud promise, and how the running
 * kernel's sysfs view compares with what the device says.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloud.h"
#include "nvme_hints.h"
#include "nvme_identify.h"
#include "nvme_layer.h"
#include "nvme_transport.h"
#include "sysfs.h"
#include "util.h"

static bool is_namespace_name(const char *name)
{
	unsigned int c, n;
	char tail;

	/* nvme0n1, not nvme0c0n1 (a hidden path) or nvme0n1p1 (a partition) */
	return sscanf(name, "nvme%un%u%c", &c, &n, &tail) == 2;
}

static uint64_t rounddown_pow2(uint64_t v)
{
	while (v & (v - 1))
		v &= v - 1;
	return v;
}

/*
 * Linux (drivers/nvme/host/core.c, 6.11+) takes the namespace's NAWUPF when
 * NSABP is set and NAWUPF is non-zero; older 6.x kernels fell back to the
 * controller's AWUPF, newer ones ignore AWUPF ("nvme: stop using AWUPF").
 * The queue limit is the power of two at or below that size.
 */
static int compare_kernel_view(struct lcloud_probe *p, int nvme, int disk, const struct nvme_identity *id)
{
	const struct lcloud_layer *d = report_layer(p, disk);
	const struct lcloud_layer *n = report_layer(p, nvme);
	const struct lcloud_fact *kf = layer_fact(d, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES);
	uint64_t dev = 0, kern, want;

	/* nothing to compare with when the device's size is absent or unread */
	(void)layer_get_bytes(n, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES, &dev);
	if (!dev || !kf)
		return 0;
	if (kf->state == LCLOUD_FACT_NOT_PROVIDED)
		return report_note(p, NOTE_NVME_KERNEL_VIEW, nvme,
				   "%s: the device promises power-fail atomic writes up to %" PRIu64 " bytes; this "
				   "kernel has no atomic write limits (Linux 6.11+), so RWF_ATOMIC is not available "
				   "and only liblcloud's passthrough path can use the promise",
				   n->name, dev);
	if (kf->state != LCLOUD_FACT_PRESENT)
		return 0;
	kern = kf->u64;
	want = rounddown_pow2(dev);
	if (kern == want)
		return report_note(p, NOTE_NVME_KERNEL_VIEW, nvme,
				   "%s: the kernel honours the device's power-fail atomic size: "
				   "atomic_write_unit_max_bytes %" PRIu64 " from %s %" PRIu64 " bytes",
				   n->name, kern, (id->nsfeat & 0x2) ? "NAWUPF" : "AWUPF", dev);
	if (!(id->nsfeat & 0x2) && kern < want)
		return report_note_as(p, NOTE_NVME_KERNEL_VIEW, LCLOUD_NOTE_WARNING, nvme,
				      "%s: the controller promises %" PRIu64 " bytes (AWUPF) but this kernel reports "
				      "atomic_write_unit_max_bytes %" PRIu64 ": newer kernels ignore AWUPF without a "
				      "namespace NAWUPF, so RWF_ATOMIC is limited to the kernel's value",
				      n->name, dev, kern);
	return report_note_as(p, NOTE_NVME_KERNEL_VIEW, LCLOUD_NOTE_WARNING, nvme,
			      "%s: the device says %" PRIu64 " bytes, the kernel %" PRIu64 ": the two views "
			      "disagree; the smaller one is the safe one", n->name, dev, kern);
}

/*
 * How many controllers reach namespace NAME: a multipath head lists one
 * entry per path in /sys/block/NAME/multipath/. 0 when it is no head,
 * -errno when the folder is there but could not be listed.
 */
static int count_paths(const struct lcloud_ctx *ctx, const char *name)
{
	char dir[SYSFS_PATH_MAX], full[SYSFS_PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d;

	if (path_printf(dir, sizeof(dir), "/sys/block/%s/multipath", name) < 0 ||
	    ctx_path(ctx, dir, full, sizeof(full)) < 0)
		return -ENAMETOOLONG;
	/* no such folder: a head without native multipath, or no head, has one path */
	if (!(d = opendir(full)))
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/*
 * The smallest AWUPF among the controllers that reach multipath head NAME,
 * read from each controller's own device: a write through the head takes
 * any path. 0 with *ret_awupf set; -errno (WHY says which controller and
 * what failed) when one cannot be read, for then no size is sure.
 */
static int smallest_awupf(const struct lcloud_ctx *ctx, const char *name, uint16_t *ret_awupf, char *why,
			  size_t why_len)
{
	char dir[SYSFS_PATH_MAX], full[SYSFS_PATH_MAX], path[SYSFS_PATH_MAX], canon[SYSFS_PATH_MAX];
	uint8_t *ctrl = calloc(1, NVME_ID_SIZE);
	unsigned int n = 0;
	struct dirent *de;
	int r = 0;
	DIR *d;

	if (!ctrl)
		return -ENOMEM;
	if (path_printf(dir, sizeof(dir), "/sys/block/%s/multipath", name) < 0 ||
	    ctx_path(ctx, dir, full, sizeof(full)) < 0 || !(d = opendir(full))) {
		free(ctrl);
		snprintf(why, why_len, "%.200s cannot be read", dir);
		return -ENOENT;
	}
	while (r == 0 && (de = readdir(d))) {
		struct nvme_identity id;
		struct nvme_conn conn;
		const char *cname;
		char *slash;
		size_t len = 0;

		if (de->d_name[0] == '.')
			continue;
		/* the path's block device sits in its controller's folder: .../nvme1/nvme0c1n1 */
		r = path_printf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (r >= 0)
			r = sysfs_canonical(ctx, path, canon, sizeof(canon));
		if (r < 0 || !(slash = strrchr(canon, '/')) || slash == canon) {
			snprintf(why, why_len, "the controller of path %.64s could not be found", de->d_name);
			r = r < 0 ? r : -ENOENT;
			break;
		}
		*slash = '\0';
		cname = path_basename(canon);
		r = nvme_connect_controller(ctx, cname, &conn);
		if (r < 0) {
			snprintf(why, why_len, "/dev/%.64s cannot be opened: %s", cname, strerror(-r));
			break;
		}
		r = conn.ops->identify(conn.handle, 0x01, 0, ctrl, NVME_ID_SIZE, &len);
		nvme_disconnect(&conn);
		if (r != 0) {
			snprintf(why, why_len, "Identify Controller on %.64s failed: %s", cname,
				 r < 0 ? strerror(-r) : nvme_status_name(r));
			r = r < 0 ? r : -EIO;
			break;
		}
		nvme_identity_decode(&id, ctrl, len, NULL, 0);
		if (n++ == 0 || id.awupf < *ret_awupf)
			*ret_awupf = id.awupf;
	}
	closedir(d);
	free(ctrl);
	if (r == 0 && n == 0) {
		snprintf(why, why_len, "%.200s lists no path", dir);
		r = -ENOENT;
	}
	return r;
}

/*
 * On a head with several paths whose power-fail size comes from AWUPF (not
 * the namespace's own NAWUPF): the size every path's controller promises.
 */
static int add_every_path_awupf(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int index)
{
	struct lcloud_layer *l = report_layer(p, index);
	const struct lcloud_fact *pf = layer_fact(l, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES);
	uint64_t lba = 0;
	char why[256] = "";
	uint16_t awupf = 0;
	int r;

	/* no logical block size, no size to give: the verdict then keeps one block per path */
	(void)layer_get_bytes(l, FACT_LBA_SIZE, &lba);
	if (!pf || !pf->source || strcmp(pf->source, "nvme:id-ctrl:awupf") != 0 || !lba)
		return 0;
	r = smallest_awupf(ctx, l->name, &awupf, why, sizeof(why));
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return layer_add_missing(l, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES_EVERY_PATH, r == -EACCES || r == -EPERM ? LCLOUD_FACT_NEEDS_ROOT
											: LCLOUD_FACT_UNREADABLE,
					 "nvme:id-ctrl:awupf:every-path", why);
	return layer_add_u64(l, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES_EVERY_PATH, (awupf + 1ull) * lba,
			     "nvme:id-ctrl:awupf:every-path");
}

static int identify_failed(struct lcloud_probe *p, int index, const char *what, int err)
{
	const char *name = report_layer(p, index)->name;

	if (err == -EACCES || err == -EPERM)
		return report_note(p, NOTE_NEEDS_ROOT, index,
				   "%s: %s needs root (CAP_SYS_ADMIN); run as root to see the device's fields",
				   name, what);
	if (err == -ENODEV || err == -ENXIO)
		return report_note(p, NOTE_NVME_IDENTIFY_FAILED, index,
				   "%s: %s failed: %s (the namespace or its controller has gone away; "
				   "check 'nvme list')", name, what, strerror(-err));
	if (err < 0)
		return report_note(p, NOTE_NVME_IDENTIFY_FAILED, index, "%s: %s failed: %s",
				   name, what, strerror(-err));
	return report_note(p, NOTE_NVME_IDENTIFY_FAILED, index,
			   "%s: %s failed with NVMe status 0x%x (%s)", name, what, err, nvme_status_name(err));
}

static int probe_namespace(const struct lcloud_ctx *ctx, struct lcloud_probe *p, int disk)
{
	uint8_t *ctrl = NULL, *ns = NULL;
	size_t ctrl_len = 0, ns_len = 0;
	struct nvme_identity id;
	struct nvme_conn conn;
	char name[64];
	int index, paths = 0, r;

	snprintf(name, sizeof(name), "%s", report_layer(p, disk)->name);
	r = nvme_connect(ctx, name, &conn);
	index = report_add_layer(p, LCLOUD_LAYER_NVME, name, disk);
	if (index < 0) {
		if (r == 0)
			nvme_disconnect(&conn);
		return index;
	}
	/* a captured tree without NVMe data: the device's fields were not read, which is not "none" */
	if (r == -ENOENT && ctx_has_sysroot(ctx))
		return report_note(p, NOTE_NVME_NOT_CAPTURED, index,
				   "%s: the captured tree has no NVMe Identify data (nvme-data/%s/id-ctrl.bin, "
				   "id-ns.bin): the device's own fields were not read", name, name);
	if (r < 0) {
		if (r == -EACCES || r == -EPERM)
			return report_note(p, NOTE_NEEDS_ROOT, index,
					   "%s: NVMe Identify needs root (opening /dev/%s and CAP_SYS_ADMIN); run as "
					   "root to see the device's atomic write and hint fields", name, name);
		if (r == -EOPNOTSUPP)
			return report_note(p, NOTE_NVME_LIBRARY_MISSING, index,
					   "%s: libnvme (libnvme.so.1, loaded for NVMe commands) is missing or lacks "
					   "nvme_io_mgmt_recv (libnvme 1.3+); install it to see the device's fields",
					   name);
		return report_note(p, NOTE_NVME_OPEN_FAILED, index,
				   "%s: cannot open the namespace for NVMe commands: %s (it may have vanished)",
				   name, strerror(-r));
	}
	r = layer_add_string(report_layer(p, index), FACT_TRANSPORT, conn.source, "nvme");
	if (r < 0)
		goto out;
	r = layer_add_u64(report_layer(p, index), FACT_NSID, conn.nsid, "nvme:nsid");
	if (r < 0)
		goto out;

	ctrl = calloc(1, NVME_ID_SIZE);
	ns = calloc(1, NVME_ID_SIZE);
	if (!ctrl || !ns) {
		r = -ENOMEM;
		goto out;
	}
	r = conn.ops->identify(conn.handle, 0x01, 0, ctrl, NVME_ID_SIZE, &ctrl_len);
	if (r != 0) {
		r = identify_failed(p, index, "Identify Controller", r);
		free(ctrl);
		ctrl = NULL;
		if (r < 0)
			goto out;
	}
	r = conn.ops->identify(conn.handle, 0x00, conn.nsid, ns, NVME_ID_SIZE, &ns_len);
	if (r != 0) {
		r = identify_failed(p, index, "Identify Namespace", r);
		free(ns);
		ns = NULL;
		if (r < 0)
			goto out;
	}
	nvme_identity_decode(&id, ctrl, ctrl_len, ns, ns_len);
	r = nvme_identity_fill_layer(p, index, &id);
	/* several controllers: their Identify Controller data may differ, and only one answered */
	if (r >= 0) {
		paths = count_paths(ctx, name);
		if (paths < 0) {
			char why[128];

			/* unread is not one path: the verdict then keeps one block per path */
			snprintf(why, sizeof(why), "could not list /sys/block/%s/multipath: %s", name, strerror(-paths));
			r = layer_add_missing(report_layer(p, index), FACT_MULTIPATH_PATHS,
					      paths == -EACCES ? LCLOUD_FACT_NEEDS_ROOT : LCLOUD_FACT_UNREADABLE,
					      "sysfs:multipath", why);
		} else if (paths > 1) {
			r = layer_add_u64(report_layer(p, index), FACT_MULTIPATH_PATHS, (uint64_t)paths,
					  "sysfs:multipath");
		}
	}
	if (r >= 0 && paths > 1)
		r = add_every_path_awupf(ctx, p, index);
	if (r >= 0 && ns)
		r = compare_kernel_view(p, index, disk, &id);
	if (r >= 0 && ctrl && ns)
		r = nvme_hints_probe(p, index, &conn, &id);
	if (r >= 0)
		r = cloud_nvme_probe(p, index, &id);
out:
	free(ctrl);
	free(ns);
	nvme_disconnect(&conn);
	return r;
}

int nvme_probe_layers(const struct lcloud_ctx *ctx, struct lcloud_probe *p)
{
	unsigned int n = p->n_layers; /* the loop adds layers; visit only the stack's own */

	for (unsigned int i = 0; i < n; i++) {
		int r;

		if (p->layers[i].kind != LCLOUD_LAYER_DISK || !is_namespace_name(p->layers[i].name))
			continue;
		r = probe_namespace(ctx, p, (int)i);
		if (r < 0)
			return r;
	}
	return 0;
}
