/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One hint vocabulary, mapped onto what the target offers (lcloud-hints(7)):
 *
 *  NVMe passthrough  Dataset Management bits in CDW13 (access frequency 3:0,
 *                    access latency 5:4, sequential 6), FDP placement (DTYPE 2,
 *                    DSPEC = a placement identifier), FUA (CDW12 bit 30).
 *  kernel path       io_uring write streams (Linux 6.16, max_write_streams > 0),
 *                    a file's write lifetime (fcntl F_SET_RW_HINT), FUA as
 *                    RWF_DSYNC.
 *
 * On both, a write's class lands on the handle the device states is for it
 * (hint_placement.c), by the identifier or the write stream that reaches it.
 * A hint the target cannot carry is dropped, never an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "queue.h"
#include "report.h"
#include "util.h"

/* NVMe DSM access frequency and latency values (NVM Command Set 1.0, fig. 46). */
enum {
	AF_TYPICAL = 1,
	AF_INFREQUENT = 2,
	AF_FREQ_WRITES_INFREQ_READS = 4,
	AF_FREQ_READS_WRITES = 5,
	AF_SPECULATIVE_READ = 7,
	AF_OVERWRITTEN_SOON = 8,
	AL_IDLE = 1,
	AL_NORMAL = 2,
	AL_LOW = 3,
	DSM_SEQUENTIAL = 1 << 6,
};

void hint_caps_read(struct lcloud_queue *q)
{
	const struct lcloud_probe *p = q->probe;

	memset(&q->caps, 0, sizeof(q->caps));
	q->caps.regular_file = p->target_type == LCLOUD_TARGET_REGULAR && (q->backend_caps & QUEUE_CAP_KERNEL_HINTS);
	for (unsigned int i = 0; i < p->n_layers; i++) {
		const struct lcloud_layer *l = &p->layers[i];

		/*
		 * Write streams reach a device only when it is the target itself: the
		 * kernel gives partitions none (bdev_max_write_streams) and file
		 * systems do not pass them on; the sync backend has no way to send them.
		 */
		if (i == 0 && l->kind == LCLOUD_LAYER_DISK && p->target_type == LCLOUD_TARGET_DISK) {
			uint64_t streams = 0; /* absent or unread: no streams are used */

			(void)layer_get_u64(l, FACT_MAX_WRITE_STREAMS, &streams);
			q->caps.device_write_streams = (uint32_t)streams;
			if (q->backend_caps & QUEUE_CAP_WRITE_STREAMS)
				q->caps.max_write_streams = (uint32_t)streams;
		}
		if (l->kind != LCLOUD_LAYER_NVME || !(q->backend_caps & QUEUE_CAP_NVME_COMMAND))
			continue;
		q->caps.nvme = true;
		/* capabilities absent or unread are not used */
		(void)layer_get_bool(l, FACT_DSM_SUPPORTED, &q->caps.nvme_dsm);
	}
	hint_placement_read(p, &q->caps.placement);
}

void hint_place(const struct lcloud_queue *q, const struct lcloud_hint *h, struct lcloud_placement *ret)
{
	const struct hint_placement *pl = &q->caps.placement;
	struct placement_choice c = { .index = -1, .handle = -1 };
	uint32_t size = ret->size;

	memset(ret, 0, sizeof(*ret));
	ret->size = size;
	if (q->caps.nvme) {
		/* passthrough: the command carries the identifier itself */
		hint_placement_choose(pl, pl->n_pids, h->write_class, h->group, &c);
	} else if (!q->caps.max_write_streams && (h->write_class || h->group)) {
		c.basis = q->caps.device_write_streams && !(q->backend_caps & QUEUE_CAP_WRITE_STREAMS)
				  ? LCLOUD_PLACEMENT_BACKEND
				  : LCLOUD_PLACEMENT_NO_PLACEMENT;
	} else {
		hint_placement_choose(pl, q->caps.max_write_streams, h->write_class, h->group, &c);
	}
	ret->basis = c.basis;
	ret->write_stream = c.index >= 0 && !q->caps.nvme ? c.index + 1 : -1;
	ret->placement_id = c.index >= 0 && (unsigned int)c.index < pl->n_pids ? pl->pids[c.index] : -1;
	ret->handle = c.handle;
	ret->use = c.use;
}

static void dsm_for(const struct lcloud_hint *h, bool write, unsigned int *af, unsigned int *al, bool *seq)
{
	*af = 0;
	*al = 0;
	*seq = false;
	if (write) {
		switch (h->write_class) {
		case LCLOUD_CLASS_DATA:
			*af = AF_TYPICAL;
			*al = AL_NORMAL;
			break;
		case LCLOUD_CLASS_METADATA:
			*af = AF_FREQ_READS_WRITES;
			*al = AL_LOW;
			break;
		case LCLOUD_CLASS_JOURNAL:
			*af = AF_FREQ_WRITES_INFREQ_READS;
			*al = AL_LOW;
			*seq = true;
			break;
		case LCLOUD_CLASS_BACKGROUND:
			*af = AF_INFREQUENT;
			*al = AL_IDLE;
			*seq = true;
			break;
		default:
			break;
		}
		if (h->lifetime == LCLOUD_LIFE_SHORT)
			*af = AF_OVERWRITTEN_SOON;
	} else if (h->read_kind == LCLOUD_READ_SYNC) {
		*al = AL_LOW;
	} else if (h->read_kind == LCLOUD_READ_AHEAD) {
		*af = AF_SPECULATIVE_READ;
		*al = AL_IDLE;
		*seq = true;
	}
}

void hint_map(const struct lcloud_queue *q, const struct lcloud_hint *h, bool write, struct hint_map *m)
{
	struct lcloud_placement pl = { .size = sizeof(pl), .write_stream = -1, .placement_id = -1, .handle = -1 };

	memset(m, 0, sizeof(*m));
	m->lifetime = -1;
	if (write && (h->write_class || h->group))
		hint_place(q, h, &pl);
	if (q->caps.nvme) {
		unsigned int af, al;
		bool seq;

		if (q->caps.nvme_dsm) {
			dsm_for(h, write, &af, &al, &seq);
			m->cdw13 = af | al << 4 | (seq ? DSM_SEQUENTIAL : 0);
		}
		if (write && pl.placement_id >= 0) {
			m->cdw12 |= 2u << 20; /* DTYPE 2: data placement */
			m->cdw13 |= (uint32_t)pl.placement_id << 16;
		}
		if (h->flags & LCLOUD_IO_FUA)
			m->cdw12 |= 1u << 30;
		return;
	}
	if ((h->flags & LCLOUD_IO_FUA) && (q->backend_caps & QUEUE_CAP_KERNEL_HINTS))
		m->rw_flags |= RWF_DSYNC;
	if (write && pl.write_stream > 0)
		m->write_stream = (uint8_t)pl.write_stream;
	if (write && q->caps.regular_file && h->lifetime)
		m->lifetime = RWH_WRITE_LIFE_SHORT + h->lifetime - 1; /* SHORT..EXTREME */
}

LCLOUD_EXPORT int lcloud_queue_get_placement(const struct lcloud_queue *q, const struct lcloud_hint *h,
					     struct lcloud_placement *ret)
{
	static const struct lcloud_hint none = { 0 };

	/* the first version's size is the least a caller can have; later ones only grow */
	if (!q || !ret || ret->size < sizeof(struct lcloud_placement))
		return -EINVAL;
	ret->size = sizeof(struct lcloud_placement);
	hint_place(q, h ? h : &none, ret);
	return 0;
}

LCLOUD_EXPORT const char *lcloud_placement_basis_to_string(enum lcloud_placement_basis basis)
{
	static const char *const names[] = {
		[LCLOUD_PLACEMENT_NOT_ASKED] = "not_asked",       [LCLOUD_PLACEMENT_BY_USE] = "by_use",
		[LCLOUD_PLACEMENT_BY_NUMBER] = "by_number",       [LCLOUD_PLACEMENT_NO_HANDLE] = "no_handle",
		[LCLOUD_PLACEMENT_NO_PLACEMENT] = "no_placement", [LCLOUD_PLACEMENT_BACKEND] = "backend",
		[LCLOUD_PLACEMENT_UNMAPPED] = "unmapped",
	};

	return (unsigned int)basis < sizeof(names) / sizeof(names[0]) ? names[basis] : NULL;
}

static const char *use_name(unsigned int use)
{
	static const char *const names[] = { "unspecified", "data", "metadata", "journal", "background" };

	return use < sizeof(names) / sizeof(names[0]) ? names[use] : "unknown";
}

/*
 * Where a classed or grouped write goes, and why, in the words of
 * lcloud-hints(7): "write stream 1 (journal handle 0, as the device states)"
 * on the kernel path, "; fdp placement id 0 (...)" on passthrough.
 */
static size_t describe_placement(const struct lcloud_queue *q, const struct lcloud_hint *h, char *buf, size_t size)
{
	struct lcloud_placement pl = { .size = sizeof(pl) };
	const char *what = h->write_class ? use_name(h->write_class) : "group";
	bool nvme = q->caps.nvme;
	size_t n = 0;

	hint_place(q, h, &pl);
#define ADD(...) (n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__))
	if (pl.basis == LCLOUD_PLACEMENT_BY_USE || pl.basis == LCLOUD_PLACEMENT_BY_NUMBER) {
		ADD(nvme ? "; fdp placement id %d" : " write stream %d", nvme ? pl.placement_id : pl.write_stream);
		if (pl.basis == LCLOUD_PLACEMENT_BY_USE)
			ADD(" (%s handle %d, as the device states)", use_name(pl.use), pl.handle);
		else
			ADD(" (by %s number: the device states no handle uses)", h->group ? "group" : "class");
		return n;
	}
	ADD(nvme ? "; placement dropped" : h->write_class ? " class %s dropped" : " %s dropped", what);
	switch (pl.basis) {
	case LCLOUD_PLACEMENT_NO_HANDLE:
		if (h->write_class)
			ADD(" (the device has no %s handle)", what);
		else
			ADD(" (the device states a use for every handle)");
		break;
	case LCLOUD_PLACEMENT_UNMAPPED:
		if (pl.handle >= 0)
			ADD(" (the device's %s handle %d %s)", use_name(pl.use), pl.handle,
			    nvme ? "is not among this namespace's placement identifiers" : "has no write stream here");
		else
			ADD(" (which placement identifier reaches the %s handle was not read)", use_name(pl.use));
		break;
	case LCLOUD_PLACEMENT_BACKEND:
		ADD(" (the %s backend sends no write stream)", q->backend->name);
		break;
	default:
		ADD(nvme ? " (FDP not enabled)" : " (max_write_streams 0)");
		break;
	}
#undef ADD
	return n;
}

LCLOUD_EXPORT int lcloud_queue_describe_hint(const struct lcloud_queue *q, const struct lcloud_hint *h, int is_write,
					     char *buf, size_t size)
{
	struct lcloud_hint none = { 0 };
	struct hint_map m;
	size_t n = 0;

	if (!q || !buf || !size)
		return -EINVAL;
	if (!h)
		h = &none;
	hint_map(q, h, is_write, &m);
	buf[0] = '\0';
#define ADD(...) (n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__))
	if (q->caps.nvme) {
		ADD("nvme: dsm af=%u al=%u%s", m.cdw13 & 0xf, (m.cdw13 >> 4) & 0x3, (m.cdw13 & DSM_SEQUENTIAL) ? " sequential" : "");
		if (!q->caps.nvme_dsm)
			ADD(" (dropped: no Dataset Management)");
		if (is_write && (h->write_class || h->group))
			n += describe_placement(q, h, buf + n, n < size ? size - n : 0);
		if (m.cdw12 & (1u << 30))
			ADD("; fua");
		if (h->lifetime && is_write)
			ADD("; lifetime %s", h->lifetime == LCLOUD_LIFE_SHORT && q->caps.nvme_dsm ? "as 'overwritten soon'"
												     : "dropped");
	} else {
		ADD("kernel:");
		if (is_write && (h->write_class || h->group))
			n += describe_placement(q, h, buf + n, n < size ? size - n : 0);
		if (is_write && h->lifetime)
			ADD(m.lifetime >= 0 ? " F_SET_RW_HINT %d" : " lifetime dropped (not a file)", m.lifetime);
		if (!is_write && h->read_kind)
			ADD(" read kind dropped (no per-I/O read hint on this path)");
		if (h->flags & LCLOUD_IO_FUA)
			ADD(" fua as RWF_DSYNC");
		if (!is_write && h->group)
			ADD(" group dropped");
		if (n == strlen("kernel:"))
			ADD(" no hint");
	}
#undef ADD
	return n < size ? 0 : -E2BIG;
}
