/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The live NVMe transport (libnvme ioctls on the namespace node) and the replay one. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libnvme.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvme_transport.h"
#include "util.h"

/*
 * libnvme is loaded when a device is first asked something: it pulls in
 * libcrypto, whose start-up (relocations, about a millisecond) every program
 * linked with liblcloud would pay, though most never send an NVMe command.
 */
#define LIBNVME_SONAME "libnvme.so.1"

static struct {
	__typeof__(nvme_identify) *identify;
	__typeof__(nvme_get_log) *get_log;
	__typeof__(nvme_get_features) *get_features;
	__typeof__(nvme_directive_recv) *directive_recv;
	__typeof__(nvme_io_mgmt_recv) *io_mgmt_recv;
	__typeof__(nvme_get_nsid) *get_nsid;
} libnvme;
static pthread_once_t libnvme_once = PTHREAD_ONCE_INIT;
static int libnvme_error = -ENOSYS; /* until loaded */

static void libnvme_load_once(void)
{
	void *lib = dlopen(LIBNVME_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		libnvme_error = -EOPNOTSUPP;
		return;
	}
	/* never closed: the functions stay in use for the life of the process */
	libnvme.identify = (__typeof__(libnvme.identify))dlsym(lib, "nvme_identify");
	libnvme.get_log = (__typeof__(libnvme.get_log))dlsym(lib, "nvme_get_log");
	libnvme.get_features = (__typeof__(libnvme.get_features))dlsym(lib, "nvme_get_features");
	libnvme.directive_recv = (__typeof__(libnvme.directive_recv))dlsym(lib, "nvme_directive_recv");
	libnvme.io_mgmt_recv = (__typeof__(libnvme.io_mgmt_recv))dlsym(lib, "nvme_io_mgmt_recv");
	libnvme.get_nsid = (__typeof__(libnvme.get_nsid))dlsym(lib, "nvme_get_nsid");
	libnvme_error = libnvme.identify && libnvme.get_log && libnvme.get_features && libnvme.directive_recv &&
				libnvme.io_mgmt_recv && libnvme.get_nsid
			? 0
			: -EOPNOTSUPP;
}

/* 0 when libnvme's functions can be called, -EOPNOTSUPP when it is missing or too old. */
static int libnvme_load(void)
{
	pthread_once(&libnvme_once, libnvme_load_once);
	return libnvme_error;
}

/* libnvme returns -1 with errno, or the positive NVMe status. */
static int libnvme_result(int r)
{
	return r < 0 ? -errno : r;
}

static int live_identify(void *handle, uint8_t cns, uint32_t nsid, void *buf, size_t len, size_t *ret_len)
{
	int fd = (int)(intptr_t)handle;
	int r;

	/* what libnvme's nvme_identify_ctrl() and nvme_identify_ns() pass */
	struct nvme_identify_args args = {
		.result = NULL,
		.data = buf,
		.args_size = sizeof(args),
		.fd = fd,
		.timeout = NVME_DEFAULT_IOCTL_TIMEOUT,
		.cns = cns == NVME_IDENTIFY_CNS_CTRL ? NVME_IDENTIFY_CNS_CTRL : NVME_IDENTIFY_CNS_NS,
		.csi = NVME_CSI_NVM,
		.nsid = cns == NVME_IDENTIFY_CNS_CTRL ? NVME_NSID_NONE : nsid,
		.cntid = NVME_CNTLID_NONE,
		.cns_specific_id = NVME_CNSSPECID_NONE,
		.uuidx = NVME_UUID_NONE,
	};

	if (len < NVME_ID_SIZE)
		return -EINVAL;
	r = libnvme_result(libnvme.identify(&args));
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

	return libnvme_result(libnvme.get_log(&args));
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

	return libnvme_result(libnvme.get_features(&args));
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

	return libnvme_result(libnvme.directive_recv(&args));
}

static int live_ruh_status(void *handle, uint32_t nsid, void *buf, size_t len)
{
	/* what libnvme's nvme_fdp_reclaim_unit_handle_status() passes */
	struct nvme_io_mgmt_recv_args args = {
		.data = buf,
		.args_size = sizeof(args),
		.fd = (int)(intptr_t)handle,
		.nsid = nsid,
		.data_len = (uint32_t)len,
		.timeout = NVME_DEFAULT_IOCTL_TIMEOUT,
		.mos = 0,
		.mo = NVME_IO_MGMT_RECV_RUH_STATUS,
	};

	return libnvme_result(libnvme.io_mgmt_recv(&args));
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

static int connect_device(const struct lcloud_ctx *ctx, const char *name, bool controller, struct nvme_conn *ret)
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
		ret->nsid = controller ? 0 : sscanf(name, "nvme%un%u", &ctrl, &ns) == 2 ? ns : 1;
		snprintf(ret->source, sizeof(ret->source), "capture");
		return 0;
	}
	r = path_printf(path, sizeof(path), "/dev/%s", name);
	if (r < 0)
		return r;
	r = libnvme_load();
	if (r < 0)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	/* a controller's character device has no namespace of its own */
	if (!controller && libnvme.get_nsid(fd, &ret->nsid) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	ret->ops = &live_transport;
	ret->handle = (void *)(intptr_t)fd;
	snprintf(ret->source, sizeof(ret->source), "ioctl");
	return 0;
}

int nvme_connect(const struct lcloud_ctx *ctx, const char *name, struct nvme_conn *ret)
{
	return connect_device(ctx, name, false, ret);
}

int nvme_connect_controller(const struct lcloud_ctx *ctx, const char *name, struct nvme_conn *ret)
{
	return connect_device(ctx, name, true, ret);
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
