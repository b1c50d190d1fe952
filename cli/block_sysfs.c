/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What lsblk reads about a block device besides its queue limits, for
 * list's columns and tree: mounts (MOUNTPOINT, FSTYPE), udev's record of an
 * unmounted file system, the transport (TRAN), the devices a partition or
 * a dm/md device sits on, the device number lsblk sorts by, and the
 * kernel's name behind a /dev path. All under the --sysroot prefix;
 * nothing here opens a device.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "block_sysfs.h"
#include "mountinfo.h"

static char *sysroot_path(const char *sysroot, const char *fmt, const char *a)
{
	char rel[PATH_MAX], *full = NULL;

	snprintf(rel, sizeof(rel), fmt, a);
	if (asprintf(&full, "%s%s", sysroot, rel) < 0)
		return NULL;
	return full;
}

/* The first line of a sysfs file, without its newline; NULL when absent. */
static char *read_line(const char *file)
{
	FILE *f = fopen(file, "re");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return NULL;
	if (getline(&line, &cap, f) < 0) {
		free(line);
		line = NULL;
	} else {
		line[strcspn(line, "\n")] = '\0';
	}
	fclose(f);
	return line;
}

static void mount_table_read(struct mount_table *t, const char *sysroot)
{
	char *file = sysroot_path(sysroot, "%s", "/proc/self/mountinfo"), *line = NULL;
	size_t cap = 0;
	FILE *f;

	t->read = true;
	f = file ? fopen(file, "re") : NULL;
	free(file);
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		struct mountinfo_entry e;
		struct mount_entry *grown;
		char devno[32];

		/* the library's own parser: escapes undone once, the same fields the probe reads */
		if (mountinfo_parse_line(line, &e) < 0)
			continue;
		grown = realloc(t->entries, (t->n + 1) * sizeof(*grown));
		if (!grown) {
			mountinfo_entry_free(&e);
			break;
		}
		t->entries = grown;
		snprintf(devno, sizeof(devno), "%u:%u", e.major, e.minor);
		grown[t->n].devno = strdup(devno);
		grown[t->n].mount_point = strdup(e.mount_point);
		grown[t->n].fstype = strdup(e.fstype);
		mountinfo_entry_free(&e);
		t->n++;
	}
	free(line);
	fclose(f);
}

const struct mount_entry *mount_table_next(struct mount_table *t, const char *sysroot, const char *devno,
					   const struct mount_entry *after)
{
	if (!devno)
		return NULL;
	if (!t->read)
		mount_table_read(t, sysroot);
	for (size_t i = after ? (size_t)(after - t->entries) + 1 : 0; i < t->n; i++)
		if (t->entries[i].devno && strcmp(t->entries[i].devno, devno) == 0)
			return &t->entries[i];
	return NULL;
}

const struct mount_entry *mount_table_find(struct mount_table *t, const char *sysroot, const char *devno)
{
	return mount_table_next(t, sysroot, devno, NULL);
}

void mount_table_release(struct mount_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->entries[i].devno);
		free(t->entries[i].mount_point);
		free(t->entries[i].fstype);
	}
	free(t->entries);
	*t = (struct mount_table){ 0 };
}

char *udev_fs_type(const char *sysroot, const char *devno)
{
	char *file = devno ? sysroot_path(sysroot, "/run/udev/data/b%s", devno) : NULL, *line = NULL, *type = NULL;
	size_t cap = 0;
	FILE *f = file ? fopen(file, "re") : NULL;

	free(file);
	if (!f)
		return NULL;
	while (!type && getline(&line, &cap, f) > 0)
		if (strncmp(line, "E:ID_FS_TYPE=", 13) == 0 && line[13] && line[13] != '\n') {
			line[strcspn(line, "\n")] = '\0';
			type = strdup(line + 13);
		}
	free(line);
	fclose(f);
	return type;
}

char *block_transport(const char *sysroot, const char *disk)
{
	char *link = sysroot_path(sysroot, "/sys/class/block/%s", disk), *real = link ? realpath(link, NULL) : NULL;
	const char *word = NULL;
	char *out = NULL;

	free(link);
	if (!real)
		return NULL;
	if (strstr(real, "/nvme/") || strstr(real, "/nvme-subsystem/")) {
		char *attr = sysroot_path(sysroot, "/sys/class/block/%s/device/transport", disk);
		char *t = attr ? read_line(attr) : NULL;

		free(attr);
		if (t && *t && strcmp(t, "pcie") != 0) {
			out = t; /* a fabric: tcp, rdma, fc, loop */
		} else {
			free(t);
			word = "nvme";
		}
	} else if (strstr(real, "/usb")) {
		word = "usb";
	} else if (strstr(real, "/ata")) {
		word = "sata";
	} else if (strstr(real, "/end_device-") || strstr(real, "/sas_")) {
		word = "sas";
	} else if (strstr(real, "/rport-")) {
		word = "fc";
	} else if (strstr(real, "/session")) {
		word = "iscsi";
	} else if (strstr(real, "/virtio")) {
		word = "virtio";
	}
	free(real);
	return word ? strdup(word) : out;
}

int block_parents(const char *sysroot, const char *name, char ***ret, size_t *n_ret)
{
	char *part = sysroot_path(sysroot, "/sys/class/block/%s/partition", name);
	char *dir = sysroot_path(sysroot, "/sys/class/block/%s/slaves", name);
	char **names = NULL;
	size_t n = 0;
	DIR *d = NULL;
	struct dirent *e;

	/* a partition's directory sits in its disk's */
	if (part && access(part, F_OK) == 0) {
		char *link = sysroot_path(sysroot, "/sys/class/block/%s/..", name);
		char *real = link ? realpath(link, NULL) : NULL, *slash = real ? strrchr(real, '/') : NULL;

		names = slash ? calloc(1, sizeof(char *)) : NULL;
		if (names && (names[0] = strdup(slash + 1)))
			n = 1;
		free(real);
		free(link);
	} else if (dir) {
		d = opendir(dir);
	}
	while (d && (e = readdir(d))) {
		char **grown;

		if (e->d_name[0] == '.')
			continue;
		grown = realloc(names, (n + 1) * sizeof(char *));
		if (!grown)
			break;
		names = grown;
		if ((names[n] = strdup(e->d_name)))
			n++;
	}
	if (d)
		closedir(d);
	free(dir);
	free(part);
	*ret = names;
	*n_ret = n;
	return 0;
}

int block_devno(const char *sysroot, const char *name, uint64_t *ret)
{
	char *file = sysroot_path(sysroot, "/sys/class/block/%s/dev", name), *line = file ? read_line(file) : NULL;
	unsigned int major_nr, minor_nr;
	int r = -ENOENT;

	/* makedev(): lsblk's sort key is the dev_t value, not MAJ then MIN */
	if (line && sscanf(line, "%u:%u", &major_nr, &minor_nr) == 2) {
		*ret = (uint64_t)makedev(major_nr, minor_nr);
		r = 0;
	} else if (line) {
		r = -EINVAL;
	}
	free(line);
	free(file);
	return r;
}

char *block_device_name(const char *sysroot, const char *arg)
{
	char *full, *real = NULL, *slash;

	if (!strchr(arg, '/'))
		return strdup(arg);
	if (asprintf(&full, "%s%s", sysroot, arg) >= 0) {
		real = realpath(full, NULL);
		free(full);
	}
	if (!real)
		real = strdup(arg);
	slash = real ? strrchr(real, '/') : NULL;
	if (slash)
		memmove(real, slash + 1, strlen(slash + 1) + 1);
	return real;
}
