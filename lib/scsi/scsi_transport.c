/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SG_IO (libsgutils2 pass-through), sysfs pages, and replay transports for SCSI disks. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <scsi/sg_cmds_basic.h>
#include <scsi/sg_lib.h>
#include <scsi/sg_pt.h>

#include "scsi_transport.h"
#include "sysfs.h"
#include "util.h"

#define SCSI_TIMEOUT_SECS 30

/* One data-in command: the sense category on CHECK CONDITION, -errno from the OS. */
static int sgio_data_in(int fd, const uint8_t *cdb, int cdb_len, uint8_t *buf, size_t len, size_t *ret_len)
{
	uint8_t sense[64];
	struct sg_pt_base *pt;
	int r, cat;

	pt = construct_scsi_pt_obj();
	if (!pt)
		return -ENOMEM;
	memset(sense, 0, sizeof(sense));
	memset(buf, 0, len);
	set_scsi_pt_cdb(pt, cdb, cdb_len);
	set_scsi_pt_sense(pt, sense, sizeof(sense));
	set_scsi_pt_data_in(pt, buf, (int)len);
	r = do_scsi_pt(pt, fd, SCSI_TIMEOUT_SECS, 0);
	if (r < 0) {
		destruct_scsi_pt_obj(pt);
		return r;
	}
	cat = get_scsi_pt_result_category(pt);
	switch (cat) {
	case SCSI_PT_RESULT_GOOD:
		r = 0;
		break;
	case SCSI_PT_RESULT_SENSE:
		r = sg_err_category_sense(sense, (int)sizeof(sense));
		if (r == SG_LIB_CAT_RECOVERED || r == SG_LIB_CAT_NO_SENSE)
			r = 0;
		break;
	case SCSI_PT_RESULT_OS_ERR:
		r = -get_scsi_pt_os_err(pt);
		break;
	default:
		r = SG_LIB_CAT_OTHER;
		break;
	}
	if (r == 0 && ret_len) {
		int resid = get_scsi_pt_resid(pt);

		*ret_len = resid > 0 && (size_t)resid <= len ? len - (size_t)resid : len;
	}
	destruct_scsi_pt_obj(pt);
	return r;
}

static int sgio_inquiry(void *handle, bool evpd, uint8_t page, uint8_t *buf, size_t len, size_t *ret_len)
{
	uint8_t cdb[6] = { 0x12, evpd ? 1 : 0, evpd ? page : 0, (uint8_t)(len >> 8), (uint8_t)len, 0 };

	return sgio_data_in((int)(intptr_t)handle, cdb, sizeof(cdb), buf, len, ret_len);
}

static int sgio_read_capacity16(void *handle, uint8_t *buf, size_t len, size_t *ret_len)
{
	uint8_t cdb[16] = { 0x9e, 0x10 };

	cdb[13] = (uint8_t)len;
	return sgio_data_in((int)(intptr_t)handle, cdb, sizeof(cdb), buf, len, ret_len);
}

static int sgio_mode_sense10(void *handle, uint8_t page, uint8_t subpage, uint8_t *buf, size_t len, size_t *ret_len)
{
	/* DBD set: no block descriptors; PC 0: current values */
	uint8_t cdb[10] = { 0x5a, 0x08, page & 0x3f, subpage, 0, 0, 0, (uint8_t)(len >> 8), (uint8_t)len, 0 };

	return sgio_data_in((int)(intptr_t)handle, cdb, sizeof(cdb), buf, len, ret_len);
}

static int sgio_get_stream_status(void *handle, uint8_t *buf, size_t len, size_t *ret_len)
{
	/* SBC-4 GET STREAM STATUS: SERVICE ACTION IN(16), service action 16h */
	uint8_t cdb[16] = { 0x9e, 0x16 };

	cdb[10] = (uint8_t)(len >> 24);
	cdb[11] = (uint8_t)(len >> 16);
	cdb[12] = (uint8_t)(len >> 8);
	cdb[13] = (uint8_t)len;
	return sgio_data_in((int)(intptr_t)handle, cdb, sizeof(cdb), buf, len, ret_len);
}

static void sgio_close(void *handle)
{
	close((int)(intptr_t)handle);
}

static const struct scsi_transport sgio_transport = {
	.inquiry = sgio_inquiry,
	.read_capacity16 = sgio_read_capacity16,
	.mode_sense10 = sgio_mode_sense10,
	.get_stream_status = sgio_get_stream_status,
	.close = sgio_close,
};

/* Files in a folder: sysfs (device/inquiry, device/vpd_pgXX) or a capture. */
struct file_source {
	const struct lcloud_ctx *ctx; /* sysfs: paths are under the sysroot */
	char dir[4096];
	bool capture;
};

static int read_file(const char *path, uint8_t *buf, size_t len, size_t *ret_len)
{
	size_t n;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	memset(buf, 0, len);
	n = fread(buf, 1, len, f);
	fclose(f);
	if (ret_len)
		*ret_len = n;
	return 0;
}

/* A capture answers a missing page as a device without it does: ILLEGAL REQUEST. */
static int capture_read(struct file_source *fs, const char *name, uint8_t *buf, size_t len, size_t *ret_len)
{
	char path[4300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.status", fs->dir, name);
	f = fopen(path, "re");
	if (f) {
		int status = SG_LIB_CAT_OTHER;

		if (fscanf(f, "%i", &status) != 1)
			status = SG_LIB_CAT_OTHER;
		fclose(f);
		return status;
	}
	snprintf(path, sizeof(path), "%s/%s", fs->dir, name);
	if (access(path, F_OK) < 0)
		return SG_LIB_CAT_ILLEGAL_REQ;
	return read_file(path, buf, len, ret_len);
}

static int files_inquiry(void *handle, bool evpd, uint8_t page, uint8_t *buf, size_t len, size_t *ret_len)
{
	struct file_source *fs = handle;
	char name[32], rel[4200], path[4300];
	int r;

	if (fs->capture) {
		if (evpd)
			snprintf(name, sizeof(name), "vpd-%02x.bin", page);
		else
			snprintf(name, sizeof(name), "inquiry.bin");
		return capture_read(fs, name, buf, len, ret_len);
	}
	/* The kernel exports the standard INQUIRY and the VPD pages it read at scan time. */
	if (evpd)
		r = path_printf(rel, sizeof(rel), "%s/device/vpd_pg%02x", fs->dir, page);
	else
		r = path_printf(rel, sizeof(rel), "%s/device/inquiry", fs->dir);
	if (r < 0)
		return r;
	r = ctx_path(fs->ctx, rel, path, sizeof(path));
	if (r < 0)
		return r;
	r = read_file(path, buf, len, ret_len);
	return r == -ENOENT ? SG_LIB_CAT_ILLEGAL_REQ : r;
}

static int files_read_capacity16(void *handle, uint8_t *buf, size_t len, size_t *ret_len)
{
	struct file_source *fs = handle;

	return fs->capture ? capture_read(fs, "readcap16.bin", buf, len, ret_len) : -EACCES;
}

static int files_mode_sense10(void *handle, uint8_t page, uint8_t subpage, uint8_t *buf, size_t len, size_t *ret_len)
{
	struct file_source *fs = handle;
	char name[32];

	if (!fs->capture)
		return -EACCES;
	snprintf(name, sizeof(name), "mode-%02x-%02x.bin", page, subpage);
	return capture_read(fs, name, buf, len, ret_len);
}

static int files_get_stream_status(void *handle, uint8_t *buf, size_t len, size_t *ret_len)
{
	struct file_source *fs = handle;

	return fs->capture ? capture_read(fs, "stream-status.bin", buf, len, ret_len) : -EACCES;
}

static void files_close(void *handle)
{
	free(handle);
}

static const struct scsi_transport files_transport = {
	.inquiry = files_inquiry,
	.read_capacity16 = files_read_capacity16,
	.mode_sense10 = files_mode_sense10,
	.get_stream_status = files_get_stream_status,
	.close = files_close,
};

static int connect_files(const struct lcloud_ctx *ctx, const char *dir, bool capture, struct scsi_conn *ret)
{
	struct file_source *fs = calloc(1, sizeof(*fs));
	int r;

	if (!fs)
		return -ENOMEM;
	fs->ctx = ctx;
	fs->capture = capture;
	r = path_printf(fs->dir, sizeof(fs->dir), "%s", dir);
	if (r < 0) {
		free(fs);
		return r;
	}
	ret->ops = &files_transport;
	ret->handle = fs;
	snprintf(ret->source, sizeof(ret->source), "%s", capture ? "capture" : "sysfs");
	return 0;
}

int scsi_connect(const struct lcloud_ctx *ctx, const char *name, const char *devdir, struct scsi_conn *ret)
{
	char path[4200];
	int fd, r;

	memset(ret, 0, sizeof(*ret));
	if (ctx_has_sysroot(ctx)) {
		r = path_printf(path, sizeof(path), "%s/scsi-data/%s", ctx->sysroot, name);
		if (r < 0)
			return r;
		if (access(path, F_OK) == 0)
			return connect_files(ctx, path, true, ret);
		ret->sgio_error = -EOPNOTSUPP;
		return connect_files(ctx, devdir, false, ret);
	}
	r = path_printf(path, sizeof(path), "/dev/%s", name);
	if (r < 0)
		return r;
	/* SG_IO on the disk node needs it open; read-only is enough for these commands. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret->sgio_error = -errno;
		return connect_files(ctx, devdir, false, ret);
	}
	ret->ops = &sgio_transport;
	ret->handle = (void *)(intptr_t)fd;
	snprintf(ret->source, sizeof(ret->source), "sg_io");
	return 0;
}

void scsi_disconnect(struct scsi_conn *conn)
{
	if (conn->ops && conn->ops->close)
		conn->ops->close(conn->handle);
	conn->ops = NULL;
}

const char *scsi_category_name(int category)
{
	switch (category) {
	case SG_LIB_CAT_NOT_READY:
		return "NOT READY";
	case SG_LIB_CAT_MEDIUM_HARD:
		return "MEDIUM or HARDWARE ERROR";
	case SG_LIB_CAT_ILLEGAL_REQ:
		return "ILLEGAL REQUEST (not supported)";
	case SG_LIB_CAT_UNIT_ATTENTION:
		return "UNIT ATTENTION";
	case SG_LIB_CAT_INVALID_OP:
		return "ILLEGAL REQUEST, invalid opcode (not supported)";
	case SG_LIB_CAT_ABORTED_COMMAND:
		return "ABORTED COMMAND";
	case SG_LIB_CAT_TIMEOUT:
		return "timeout";
	default:
		return "SCSI error";
	}
}
