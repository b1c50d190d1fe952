/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The live NVMe transport (libnvme ioctls on the namespace node) and the replay one. */
#include <errno.h>
#include <fcntl.h>
#include <libnvme.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvme_transport.h"
#include "util.h"

/* libnvme returns -1 with errno, or the positive NVMe status. */
static int libnvme_result(int r)
{
	return r < 0 ? -errno : r;
}

static int live_identify(void *handle, uint8_t cns, uint32_t nsid, void *buf, size_t len, size_t *ret_len)
{
	int fd = (int)(intptr_t)handle;
	int r;

	if (len < NVME_ID_SIZE)
		return -EINVAL;
	if (cns == NVME_IDENTIFY_CNS_CTRL)
		r = nvme_identify_ctrl(fd, buf);
	else
		r = nvme_identify_ns(fd, nsid, buf);
	r = libnvme_result(r);
	if (r == 0)
		*ret_len = NVME_ID_SIZE;
	return r;
}

static int live_get_log(void *handle, uint8_t lid, uint16_t lsi, void *buf, size_t len)
{
	struct nvme_get_log_args args = {
		.args_size = sizeof(args),
		.fd = (int)(intptr_t)handle,
		.lid = lid,
		.nsid = NVME_NSID_NONE,
		.lsi = lsi,
		.lsp = NVME_LOG_LSP_NONE,
		.uuidx = NVME_UUID_NONE,
		.csi = NVME_CSI_NVM,
		.len = (uint32_t)len,
		.log = buf,
		.timeout = NVME_DEFAULT_IOCTL_TIMEOUT,
	};

	return libnvme_result(nvme_get_log(&args));
}

static int live_get_feature(void *handle, uint8_t fid, uint32_t cdw11, uint32_t *result)
{
	struct nvme_get_features_args args = {
		.args_size = sizeof(args),
		.fd = (int)(intptr_t)handle,
		.fid = fid,
		.nsid = NVME_NSID_NONE,
		.sel = NVME_GET_FEATURES_SEL_CURRENT,
		.cdw11 = cdw11,
		.uuidx = NVME_UUID_NONE,
		.timeout = NVME_DEFAULT_IOCTL_TIMEOUT,
		.result = result,
	};

	return libnvme_result(nvme_get_features(&args));
}

static int live_directive_recv(void *handle, uint32_t nsid, uint8_t dtype, uint8_t doper, void *buf, size_t len)
{
	struct nvme_directive_recv_args args = {
		.args_size = sizeof(args),
		.fd = (int)(intptr_t)handle,
		.nsid = nsid,
		.dspec = 0,
		.doper = doper,
		.dtype = dtype,
		.data_len = (uint32_t)len,
		.data = buf,
		.timeout = NVME_DEFAULT_IOCTL_TIMEOUT,
	};

	return libnvme_result(nvme_directive_recv(&args));
}

static int live_ruh_status(void *handle, uint32_t nsid, void *buf, size_t len)
{
	return libnvme_result(nvme_fdp_reclaim_unit_handle_status((int)(intptr_t)handle, nsid, (uint32_t)len, buf));
}

static void live_close(void *handle)
{
	close((int)(intptr_t)handle);
}

static const struct nvme_transport live_transport = {
	.identify = live_identify,
	.get_log = live_get_log,
	.get_feature = live_get_feature,
	.directive_recv = live_directive_recv,
	.ruh_status = live_ruh_status,
	.close = live_close,
};

/*
 * Replay: a folder of files named after the command. A missing file answers
 * "Invalid Field in Command" (0x2), as a device without the feature does; a
 * file NAME.status holding a number answers that status instead.
 */
struct replay {
	char dir[4096];
};

static int replay_read(struct replay *rp, const char *name, void *buf, size_t len, size_t *ret_len)
{
	char path[4200];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.status", rp->dir, name);
	f = fopen(path, "re");
	if (f) {
		int status = 0;

		if (fscanf(f, "%i", &status) != 1)
			status = -EIO;
		fclose(f);
		return status;
	}
	snprintf(path, sizeof(path), "%s/%s", rp->dir, name);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? NVME_SC_INVALID_FIELD : -errno;
	memset(buf, 0, len);
	n = fread(buf, 1, len, f);
	fclose(f);
	if (ret_len)
		*ret_len = n;
	return 0;
}

static int replay_identify(void *handle, uint8_t cns, uint32_t nsid, void *buf, size_t len, size_t *ret_len)
{
	(void)nsid;
	return replay_read(handle, cns == NVME_IDENTIFY_CNS_CTRL ? "id-ctrl.bin" : "id-ns.bin", buf, len, ret_len);
}

static int replay_get_log(void *handle, uint8_t lid, uint16_t lsi, void *buf, size_t len)
{
	char name[32];

	(void)lsi;
	snprintf(name, sizeof(name), "log-%02x.bin", lid);
	return replay_read(handle, name, buf, len, NULL);
}

static int replay_get_feature(void *handle, uint8_t fid, uint32_t cdw11, uint32_t *result)
{
	char name[32];
	uint8_t raw[4];
	int r;

	(void)cdw11;
	snprintf(name, sizeof(name), "feature-%02x.bin", fid);
	r = replay_read(handle, name, raw, sizeof(raw), NULL);
	if (r == 0)
		*result = (uint32_t)raw[0] | (uint32_t)raw[1] << 8 | (uint32_t)raw[2] << 16 | (uint32_t)raw[3] << 24;
	return r;
}

static int replay_directive_recv(void *handle, uint32_t nsid, uint8_t dtype, uint8_t doper, void *buf, size_t len)
{
	char name[32];

	(void)nsid;
	snprintf(name, sizeof(name), "directive-%u-%u.bin", dtype, doper);
	return replay_read(handle, name, buf, len, NULL);
}

static int replay_ruh_status(void *handle, uint32_t nsid, void *buf, size_t len)
{
	(void)nsid;
	return replay_read(handle, "ruh-status.bin", buf, len, NULL);
}

static void replay_close(void *handle)
{
	free(handle);
}

static const struct nvme_transport replay_transport = {
	.identify = replay_identify,
	.get_log = replay_get_log,
	.get_feature = replay_get_feature,
	.directive_recv = replay_directive_recv,
	.ruh_status = replay_ruh_status,
	.close = replay_close,
};

int nvme_connect(const struct lcloud_ctx *ctx, const char *name, struct nvme_conn *ret)
{
	char path[4200];
	int fd, r;

	memset(ret, 0, sizeof(*ret));
	if (ctx_has_sysroot(ctx)) {
		struct replay *rp = calloc(1, sizeof(*rp));
		unsigned int ctrl, ns;

		if (!rp)
			return -ENOMEM;
		r = path_printf(rp->dir, sizeof(rp->dir), "%s/nvme-data/%s", ctx->sysroot, name);
		if (r < 0 || access(rp->dir, F_OK) < 0) {
			free(rp);
			return r < 0 ? r : -ENOENT;
		}
		ret->ops = &replay_transport;
		ret->handle = rp;
		ret->nsid = sscanf(name, "nvme%un%u", &ctrl, &ns) == 2 ? ns : 1;
		snprintf(ret->source, sizeof(ret->source), "capture");
		return 0;
	}
	r = path_printf(path, sizeof(path), "/dev/%s", name);
	if (r < 0)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (nvme_get_nsid(fd, &ret->nsid) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	ret->ops = &live_transport;
	ret->handle = (void *)(intptr_t)fd;
	snprintf(ret->source, sizeof(ret->source), "ioctl");
	return 0;
}

void nvme_disconnect(struct nvme_conn *conn)
{
	if (conn->ops && conn->ops->close)
		conn->ops->close(conn->handle);
	conn->ops = NULL;
}

const char *nvme_status_name(int status)
{
	switch (status & 0x7ff) {
	case 0x0:
		return "Successful Completion";
	case 0x1:
		return "Invalid Command Opcode";
	case 0x2:
		return "Invalid Field in Command";
	case 0x4:
		return "Data Transfer Error";
	case 0x6:
		return "Internal Error";
	case 0x80:
		return "LBA Out of Range";
	case 0x81:
		return "Capacity Exceeded";
	case 0x82:
		return "Namespace Not Ready";
	case 0x0b:
		return "Invalid Namespace or Format";
	case 0x109:
		return "Invalid Log Page";
	case 0x10d:
		return "Feature Identifier Not Saveable";
	case 0x10e:
		return "Feature Not Changeable";
	case 0x280:
		return "Write Fault";
	case 0x281:
		return "Unrecovered Read Error";
	default:
		return "NVMe error";
	}
}
