/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One hint vocabulary, mapped onto what the target offers (lcloud-hints(7)):
 *
 *  NVMe passthrough  Dataset Management bits in CDW13 (access frequency 3:0,
 *                    access latency 5:4, sequential 6), FDP placement (DTYPE 2,
 *                    DSPEC = a placement identifier chosen by class or group),
 *                    FUA (CDW12 bit 30).
 *  kernel path       io_uring write streams (Linux 6.16, max_write_streams > 0),
 *                    a file's write lifetime (fcntl F_SET_RW_HINT), FUA as
 *                    RWF_DSYNC.
 *
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
		bool fdp = false;

		/*
		 * Write streams reach a device only when it is the target itself: the
		 * kernel gives partitions none (bdev_max_write_streams) and file
		 * systems do not pass them on; the sync backend has no way to send them.
		 */
		if (i == 0 && l->kind == LCLOUD_LAYER_DISK && p->target_type == LCLOUD_TARGET_DISK &&
		    (q->backend_caps & QUEUE_CAP_WRITE_STREAMS))
		{
			uint64_t streams = 0; /* absent or unread: no streams are used */

			(void)layer_get_u64(l, FACT_MAX_WRITE_STREAMS, &streams);
			q->caps.max_write_streams = (uint32_t)streams;
		}
		if (l->kind != LCLOUD_LAYER_NVME || !(q->backend_caps & QUEUE_CAP_NVME_COMMAND))
			continue;
		q->caps.nvme = true;
		/* capabilities absent or unread are not used */
		(void)layer_get_bool(l, FACT_DSM_SUPPORTED, &q->caps.nvme_dsm);
		if (layer_get_bool(l, FACT_FDP_ENABLED, &fdp) > 0 && fdp) {
			const struct lcloud_fact *f = layer_fact(l, FACT_FDP_PLACEMENT_IDS);
			const char *s = f && f->state == LCLOUD_FACT_PRESENT ? f->string : NULL;

			while (s && *s && q->caps.n_fdp_pids < QUEUE_FDP_PIDS_MAX) {
				unsigned int pid;
				int used;

				if (sscanf(s, "%u%n", &pid, &used) != 1)
					break;
				q->caps.fdp_pids[q->caps.n_fdp_pids++] = (uint16_t)pid;
				s += used;
				if (*s == ',')
					s++;
			}
		}
	}
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
	memset(m, 0, sizeof(*m));
	m->lifetime = -1;
	if (q->caps.nvme) {
		unsigned int af, al;
		bool seq;

		if (q->caps.nvme_dsm) {
			dsm_for(h, write, &af, &al, &seq);
			m->cdw13 = af | al << 4 | (seq ? DSM_SEQUENTIAL : 0);
		}
		if (write && q->caps.n_fdp_pids && (h->write_class || h->group)) {
			/* blocks that belong together share a reclaim unit; else one per class */
			unsigned int key = h->group ? h->group : h->write_class;
			uint16_t pid = q->caps.fdp_pids[key % q->caps.n_fdp_pids];

			m->cdw12 |= 2u << 20; /* DTYPE 2: data placement */
			m->cdw13 |= (uint32_t)pid << 16;
		}
		if (h->flags & LCLOUD_IO_FUA)
			m->cdw12 |= 1u << 30;
		return;
	}
	if ((h->flags & LCLOUD_IO_FUA) && (q->backend_caps & QUEUE_CAP_KERNEL_HINTS))
		m->rw_flags |= RWF_DSYNC;
	if (write && q->caps.max_write_streams && h->write_class)
		m->write_stream = (uint8_t)(1 + (h->write_class - 1) % q->caps.max_write_streams);
	if (write && q->caps.regular_file && h->lifetime)
		m->lifetime = RWH_WRITE_LIFE_SHORT + h->lifetime - 1; /* SHORT..EXTREME */
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
		if (m.cdw12 & (2u << 20))
			ADD("; fdp placement id %u", m.cdw13 >> 16);
		else if (is_write && (h->write_class || h->group))
			ADD("; placement dropped (FDP not enabled)");
		if (m.cdw12 & (1u << 30))
			ADD("; fua");
		if (h->lifetime && is_write)
			ADD("; lifetime %s", h->lifetime == LCLOUD_LIFE_SHORT && q->caps.nvme_dsm ? "as 'overwritten soon'"
												     : "dropped");
	} else {
		ADD("kernel:");
		if (is_write && h->write_class)
			ADD(m.write_stream ? " write stream %u" : " class dropped (max_write_streams 0)", m.write_stream);
		if (is_write && h->lifetime)
			ADD(m.lifetime >= 0 ? " F_SET_RW_HINT %d" : " lifetime dropped (not a file)", m.lifetime);
		if (!is_write && h->read_kind)
			ADD(" read kind dropped (no per-I/O read hint on this path)");
		if (h->flags & LCLOUD_IO_FUA)
			ADD(" fua as RWF_DSYNC");
		if (h->group)
			ADD(" group dropped");
		if (n == strlen("kernel:"))
			ADD(" no hint");
	}
#undef ADD
	return n < size ? 0 : -E2BIG;
}
