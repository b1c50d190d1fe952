/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dm tables through /dev/mapper/control. sysfs shows which devices a dm device
 * sits on but not where on them: the target offsets needed for alignment
 * checks are only in the table, and reading it needs CAP_SYS_ADMIN. The
 * kernel prints a crypt target's key in its table line: it is left out here,
 * before anything keeps it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dm_params.h"
#include "dm_table.h"
#include "util.h"

static int dm_table_ioctl(const struct lcloud_ctx *ctx, unsigned int major, unsigned int minor,
			  struct dm_target_line *targets, int max)
{
	size_t size = 16384;
	struct dm_ioctl *io;
	int fd, r, n = 0;

	if (ctx_has_sysroot(ctx))
		return -EOPNOTSUPP;
	fd = open("/dev/mapper/control", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		io = calloc(1, size);
		if (!io) {
			close(fd);
			return -ENOMEM;
		}
		io->version[0] = DM_VERSION_MAJOR;
		io->version[1] = 0;
		io->version[2] = 0;
		io->data_size = size;
		io->data_start = sizeof(*io);
		io->dev = makedev(major, minor);
		io->flags = DM_STATUS_TABLE_FLAG;
		if (ioctl(fd, DM_TABLE_STATUS, io) < 0) {
			r = -errno;
			free(io);
			close(fd);
			return r;
		}
		if (!(io->flags & DM_BUFFER_FULL_FLAG) || size >= (1u << 22))
			break;
		free(io);
		size *= 4;
	}
	close(fd);

	/* Targets follow data_start; each 'next' is relative to the first spec. */
	{
		const char *base = (const char *)io + io->data_start;
		const char *end = (const char *)io + io->data_size;
		const struct dm_target_spec *spec = (const void *)base;

		for (uint32_t i = 0; i < io->target_count && n < max; i++) {
			char whole[1024];
			int len;

			if ((const char *)(spec + 1) > end)
				break;
			targets[n].start = spec->sector_start;
			targets[n].length = spec->length;
			snprintf(targets[n].type, sizeof(targets[n].type), "%.*s",
				 (int)sizeof(spec->target_type), spec->target_type);
			len = snprintf(whole, sizeof(whole), "%.*s", (int)(end - (const char *)(spec + 1)),
				       (const char *)(spec + 1));
			/* no key is kept, shown or saved; a line too long to keep whole is kept as nothing, so none of it is followed */
			dm_params_redact(targets[n].type, whole, sizeof(whole));
			if (len < 0 || (size_t)len >= sizeof(whole) || strlen(whole) >= sizeof(targets[n].params))
				whole[0] = '\0';
			snprintf(targets[n].params, sizeof(targets[n].params), "%s", whole);
			explicit_bzero(whole, sizeof(whole));
			n++;
			if (!spec->next)
				break;
			spec = (const void *)(base + spec->next);
		}
	}
	explicit_bzero(io, size);
	free(io);
	return n;
}

static dm_table_reader table_reader = dm_table_ioctl;

void dm_table_set_reader(dm_table_reader reader)
{
	table_reader = reader ? reader : dm_table_ioctl;
}

int dm_table_read(const struct lcloud_ctx *ctx, unsigned int major, unsigned int minor,
		  struct dm_target_line *targets, int max)
{
	int n = table_reader(ctx, major, minor, targets, max);

	/* whatever the reader: no key leaves here */
	for (int i = 0; i < n; i++)
		dm_params_redact(targets[i].type, targets[i].params, sizeof(targets[i].params));
	return n;
}
