/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Identify: the controller (CNS 1), a namespace (CNS 0), the active namespace
 * list (CNS 2) and a namespace's identifiers (CNS 3), filled from the
 * configuration. The atomic promise is written where the Linux host reads
 * it: NAWUN/NAWUPF/NABSN/NABSPF/NABO with NSFEAT bit 1 set in the namespace,
 * AWUN/AWUPF in the controller, each in zero-based logical blocks, and in
 * bytes in the Linux cloud extension of the controller's vendor area. With
 * FDP on, CTRATT bit 19 and each namespace's ENDGID are what lead the Linux
 * host to its placement handles (fdp.c), and the extension says what each
 * handle is for.
 */
#include <string.h>

#include "nvme_lcloud_ext.h"
#include "nvme_tcp.h"
#include "target.h"

#define LCLOUD_PCI_VID 0x1b36 /* none of a vendor's own: the value QEMU's emulated devices use */

/* BYTES as a zero-based count of LBA-sized blocks (0 when not given). */
static uint16_t zero_based_blocks(uint32_t bytes, uint32_t lba)
{
	return bytes ? (uint16_t)(bytes / lba - 1) : 0;
}

/*
 * The Linux cloud extension (man/lcloud-extension.7): the promise in bytes,
 * as the power-fail model keeps it (power.c), for every namespace; with the
 * cache too, since the model keeps it for cached writes. A liar states the
 * same: the extension is a claim, and the liar's is false. The read-ahead
 * hint flag is set when the cloud back end acts on it (--hints, backend.c);
 * the placement handles FDP offers are described, each with the use
 * --placement-use gave it.
 */
static void linux_cloud_extension(const struct target_config *cfg, uint8_t *ext)
{
	bool ns_fields = cfg->nawun || cfg->nawupf || cfg->nabsn || cfg->nabspf || cfg->nabo;
	uint32_t untorn = ns_fields ? (cfg->nawupf ? cfg->nawupf : cfg->awupf) : cfg->awupf;
	uint32_t flags = 0;

	memcpy(ext, LCLOUD_EXT_SIGNATURE, 8);
	put16(ext + LCLOUD_EXT_VERSION_AT, LCLOUD_EXT_VERSION);
	put16(ext + LCLOUD_EXT_LENGTH_AT, LCLOUD_EXT_V1_LENGTH);
	if (untorn) {
		flags |= LCLOUD_EXT_UNTORN;
		if (cfg->vwc)
			flags |= LCLOUD_EXT_UNTORN_WITH_CACHE;
		put32(ext + LCLOUD_EXT_UNTORN_AT, untorn);
		if (ns_fields) {
			put32(ext + LCLOUD_EXT_BOUNDARY_AT, cfg->nabspf);
			put32(ext + LCLOUD_EXT_BOUNDARY_OFFSET_AT, cfg->nabo);
		}
	}
	if (cfg->backend.on && (cfg->backend.hints & SCHED_HINT_READ_AHEAD))
		flags |= LCLOUD_EXT_READ_AHEAD_HINT;
	if (cfg->fdp_handles) {
		flags |= LCLOUD_EXT_PLACEMENT;
		put16(ext + LCLOUD_EXT_HANDLES_AT, (uint16_t)cfg->fdp_handles);
		memcpy(ext + LCLOUD_EXT_HANDLE_USE_AT, cfg->placement_use, cfg->fdp_handles);
	}
	put32(ext + LCLOUD_EXT_FLAGS_AT, flags);
}

static void identify_controller(const struct target *t, const struct controller *ctrl, uint8_t *id)
{
	const struct target_config *cfg = &t->cfg;

	put16(id + 0, LCLOUD_PCI_VID);
	put16(id + 2, LCLOUD_PCI_VID);
	put_ascii(id + 4, 20, cfg->serial);
	put_ascii(id + 24, 40, cfg->model);
	put_ascii(id + 64, 8, LCLOUD_VERSION);
	id[72] = 0;                 /* RAB */
	id[77] = cfg->mdts;
	put16(id + 78, ctrl ? ctrl->cntlid : 0);
	put32(id + 80, 0x00010400); /* VER 1.4 */
	if (cfg->fdp_handles)
		put32(id + 96, 1u << 4 | 1u << 19); /* CTRATT: endurance groups, Flexible Data Placement */
	id[111] = 1;                /* CNTRLTYPE: an I/O controller */
	id[259] = 3;                /* AERL: 4 outstanding Asynchronous Event Requests */
	id[260] = 1 << 1;           /* FRMW: one firmware slot, not writable */
	id[261] = 0;                /* LPA: no effects log, no extended data */
	id[262] = 0;                /* ELPE: one error log entry */
	put16(id + 266, 343);       /* WCTEMP */
	put16(id + 268, 373);       /* CCTEMP */
	put16(id + 320, 1);         /* KAS: keep alive in 100 ms units */
	if (cfg->fdp_handles)
		put16(id + 340, FDP_ENDGID); /* ENDGIDMAX */
	id[512] = 0x66;             /* SQES: 64 bytes */
	id[513] = 0x44;             /* CQES: 16 bytes */
	put16(id + 514, TARGET_QUEUE_ENTRIES); /* MAXCMD */
	put32(id + 516, TARGET_MAX_NAMESPACES); /* NN */
	put16(id + 520, 1 << 2 | 1 << 3);       /* ONCS: Dataset Management, Write Zeroes */
	id[525] = cfg->vwc ? 1 : 0;             /* VWC present */
	put16(id + 526, zero_based_blocks(cfg->awun, cfg->lba_size));
	put16(id + 528, zero_based_blocks(cfg->awupf, cfg->lba_size));
	put32(id + 536, 1u << 0 | 1u << 20);    /* SGLS: SGLs, offsets in the capsule */
	strncpy((char *)id + 768, cfg->nqn, 256);
	put32(id + 1792, (64 + TARGET_IO_INLINE) / 16); /* IOCCSZ */
	put32(id + 1796, 1);                            /* IORCSZ */
	put16(id + 1800, 0);                            /* ICDOFF */
	id[1802] = 0;                                   /* FCATT: dynamic controllers */
	id[1803] = 1;                                   /* MSDBD */
	/* power state 0: 9 W, the figures of a plain SSD */
	put16(id + 2048, 900);
	linux_cloud_extension(cfg, id + LCLOUD_EXT_OFFSET);
}

static void identify_namespace(const struct target *t, const struct target_namespace *ns, uint8_t *id)
{
	const struct target_config *cfg = &t->cfg;
	uint32_t lba = cfg->lba_size;
	bool promise = cfg->nawun || cfg->nawupf || cfg->nabsn || cfg->nabspf || cfg->nabo;

	put64(id + 0, ns->blocks);  /* NSZE */
	put64(id + 8, ns->blocks);  /* NCAP */
	put64(id + 16, ns->blocks); /* NUSE */
	id[24] = promise ? 1 << 1 : 0; /* NSFEAT bit 1: the NAWUN.. fields hold */
	id[25] = 0;                 /* NLBAF: one format */
	id[26] = 0;                 /* FLBAS: format 0 */
	id[33] = 0x01;              /* DLFEAT: a deallocated block reads as zeros (io.c makes it so) */
	put16(id + 34, zero_based_blocks(cfg->nawun, lba));
	put16(id + 36, zero_based_blocks(cfg->nawupf, lba));
	put16(id + 40, zero_based_blocks(cfg->nabsn, lba));
	put16(id + 42, (uint16_t)(cfg->nabo / lba));
	put16(id + 44, zero_based_blocks(cfg->nabspf, lba));
	if (cfg->fdp_handles)
		put16(id + 102, FDP_ENDGID); /* ENDGID: where the host asks for FDP's feature and logs */
	memcpy(id + 104, ns->nguid, 16);
	id[128 + 2] = lba == 4096 ? 12 : 9; /* LBAF0: LBADS */
}

int identify_fill(const struct target *t, const struct controller *ctrl, uint8_t cns, uint32_t nsid, uint8_t *buf)
{
	const struct target_namespace *ns;
	uint32_t n = 0;

	memset(buf, 0, 4096);
	switch (cns) {
	case 0x00:
		ns = target_namespace((struct target *)t, nsid);
		if (!ns)
			return SC_INVALID_NS;
		identify_namespace(t, ns, buf);
		return SC_SUCCESS;
	case 0x01:
		identify_controller(t, ctrl, buf);
		return SC_SUCCESS;
	case 0x02:
		if (nsid >= 0xfffffffe)
			return SC_INVALID_NS;
		for (uint32_t i = nsid + 1; i <= t->n_ns && n < 1024; i++)
			put32(buf + 4 * n++, i);
		return SC_SUCCESS;
	case 0x03:
		ns = target_namespace((struct target *)t, nsid);
		if (!ns)
			return SC_INVALID_NS;
		buf[0] = 2;  /* NIDT: NGUID */
		buf[1] = 16; /* NIDL */
		memcpy(buf + 4, ns->nguid, 16);
		return SC_SUCCESS;
	}
	return SC_INVALID_FIELD;
}
