/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Identify Controller and Identify Namespace, decoded (NVMe Base 2.0 and NVM
 * Command Set 1.0 offsets; DESIGN.md lists them). Raw fields keep
 * nvme-cli's JSON names so the two tools can be compared directly; derived
 * sizes are in bytes. A truncated buffer yields what it holds and a note.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "nvme_identify.h"
#include "nvme_lcloud_ext.h"
#include "util.h"

uint16_t nvme_le16(const uint8_t *b, size_t len, size_t off)
{
	return b && off + 2 <= len ? (uint16_t)(b[off] | b[off + 1] << 8) : 0;
}

uint32_t nvme_le32(const uint8_t *b, size_t len, size_t off)
{
	return b && off + 4 <= len ? (uint32_t)nvme_le16(b, len, off) | (uint32_t)nvme_le16(b, len, off + 2) << 16 : 0;
}

uint64_t nvme_le64(const uint8_t *b, size_t len, size_t off)
{
	return b && off + 8 <= len ? (uint64_t)nvme_le32(b, len, off) | (uint64_t)nvme_le32(b, len, off + 4) << 32 : 0;
}

/* ASCII fields are space padded; NULs and non-printables from broken devices become '?'. */
static void copy_ascii(char *dst, size_t size, const uint8_t *b, size_t len, size_t off, size_t n)
{
	size_t i, out = 0;

	for (i = 0; i < n && off + i < len && out + 1 < size; i++) {
		uint8_t c = b[off + i];

		dst[out++] = (c >= 0x20 && c < 0x7f) ? (char)c : (c == 0 ? ' ' : '?');
	}
	dst[out] = '\0';
	while (out > 0 && dst[out - 1] == ' ')
		dst[--out] = '\0';
}

enum src { CTRL, NS };

struct raw_field {
	enum fact_id id; /* named as nvme-cli's JSON key */
	enum src src;
	size_t off;
	uint8_t size;     /* 1, 2, 4 or 8 bytes */
};

static const struct raw_field raw_fields[] = {
	{ FACT_VID, CTRL, 0, 2 },      { FACT_CNTLID, CTRL, 78, 2 },  { FACT_VER, CTRL, 80, 4 },
	{ FACT_MDTS, CTRL, 77, 1 },    { FACT_CTRATT, CTRL, 96, 4 },  { FACT_OACS, CTRL, 256, 2 },
	{ FACT_NN, CTRL, 516, 4 },     { FACT_ONCS, CTRL, 520, 2 },   { FACT_VWC, CTRL, 525, 1 },
	{ FACT_AWUN, CTRL, 526, 2 },   { FACT_AWUPF, CTRL, 528, 2 },  { FACT_ACWU, CTRL, 532, 2 },
	{ FACT_NSZE, NS, 0, 8 },       { FACT_NSFEAT, NS, 24, 1 },    { FACT_NLBAF, NS, 25, 1 },
	{ FACT_FLBAS, NS, 26, 1 },     { FACT_NAWUN, NS, 34, 2 },     { FACT_NAWUPF, NS, 36, 2 },
	{ FACT_NACWU, NS, 38, 2 },     { FACT_NABSN, NS, 40, 2 },     { FACT_NABO, NS, 42, 2 },
	{ FACT_NABSPF, NS, 44, 2 },    { FACT_NOIOB, NS, 46, 2 },     { FACT_NPWG, NS, 64, 2 },
	{ FACT_NPWA, NS, 66, 2 },      { FACT_NPDG, NS, 68, 2 },      { FACT_NPDA, NS, 70, 2 },
	{ FACT_NOWS, NS, 72, 2 },      { FACT_ENDGID, NS, 102, 2 },
};

void nvme_identity_decode(struct nvme_identity *id, const uint8_t *c, size_t cl, const uint8_t *n, size_t nl)
{
	unsigned int fmt;

	memset(id, 0, sizeof(*id));
	id->ctrl = c;
	id->ctrl_len = c ? cl : 0;
	id->ns = n;
	id->ns_len = n ? nl : 0;
	cl = id->ctrl_len;
	nl = id->ns_len;

	id->vid = nvme_le16(c, cl, 0);
	copy_ascii(id->sn, sizeof(id->sn), c, cl, 4, 20);
	copy_ascii(id->mn, sizeof(id->mn), c, cl, 24, 40);
	copy_ascii(id->fr, sizeof(id->fr), c, cl, 64, 8);
	id->ctratt = nvme_le32(c, cl, 96);
	id->oacs = nvme_le16(c, cl, 256);
	id->oncs = nvme_le16(c, cl, 520);
	id->awun = nvme_le16(c, cl, 526);
	id->awupf = nvme_le16(c, cl, 528);
	id->acwu = nvme_le16(c, cl, 532);
	id->have_ctrl_atomics = cl >= 534;

	id->nsfeat = n && nl > 24 ? n[24] : 0;
	id->nlbaf = n && nl > 25 ? n[25] : 0;
	id->flbas = n && nl > 26 ? n[26] : 0;
	id->nawun = nvme_le16(n, nl, 34);
	id->nawupf = nvme_le16(n, nl, 36);
	id->nacwu = nvme_le16(n, nl, 38);
	id->nabsn = nvme_le16(n, nl, 40);
	id->nabo = nvme_le16(n, nl, 42);
	id->nabspf = nvme_le16(n, nl, 44);
	id->noiob = nvme_le16(n, nl, 46);
	id->npwg = nvme_le16(n, nl, 64);
	id->npwa = nvme_le16(n, nl, 66);
	id->npdg = nvme_le16(n, nl, 68);
	id->npda = nvme_le16(n, nl, 70);
	id->nows = nvme_le16(n, nl, 72);
	id->endgid = nvme_le16(n, nl, 102);
	id->have_ns_fields = nl >= 104;

	/* FLBAS bits 3:0 select the format, bits 6:5 extend it (as Linux and libnvme read it). */
	fmt = (id->flbas & 0xf) | (unsigned int)((id->flbas & 0x60) >> 1);
	if (n && 128 + 4 * fmt + 4 <= nl && fmt <= id->nlbaf) {
		uint8_t lbads = n[128 + 4 * fmt + 2];

		id->lba_metadata = nvme_le16(n, nl, 128 + 4 * fmt); /* MS */

		/* 2^9 .. 2^16 are the sizes the spec and Linux accept */
		if (lbads >= 9 && lbads <= 16)
			id->lba_size = 1ull << lbads;
	}
}

static int add_raw_fields(struct lcloud_layer *l, const struct nvme_identity *id)
{
	for (size_t i = 0; i < ARRAY_SIZE(raw_fields); i++) {
		const struct raw_field *f = &raw_fields[i];
		const uint8_t *b = f->src == CTRL ? id->ctrl : id->ns;
		size_t len = f->src == CTRL ? id->ctrl_len : id->ns_len;
		char source[64];
		uint64_t v;
		int r;

		snprintf(source, sizeof(source), "nvme:%s:%s", f->src == CTRL ? "id-ctrl" : "id-ns",
			 fact_def(f->id)->name);
		if (!b) {
			continue; /* the command was not run or failed: the note says why */
		} else if (f->off + f->size > len) {
			r = layer_add_missing(l, f->id, LCLOUD_FACT_UNREADABLE, source, "identify data truncated before this field");
			if (r < 0)
				return r;
			continue;
		}
		switch (f->size) {
		case 1:
			v = b[f->off];
			break;
		case 2:
			v = nvme_le16(b, len, f->off);
			break;
		case 4:
			v = nvme_le32(b, len, f->off);
			break;
		default:
			v = nvme_le64(b, len, f->off);
			break;
		}
		r = layer_add_u64(l, f->id, v, source);
		if (r < 0)
			return r;
	}
	if (id->ctrl) {
		int r = 0;

		if (id->ctrl_len >= 24)
			r = layer_add_string(l, FACT_SN, id->sn, "nvme:id-ctrl:sn");
		if (r >= 0 && id->ctrl_len >= 64)
			r = layer_add_string(l, FACT_MN, id->mn, "nvme:id-ctrl:mn");
		if (r >= 0 && id->ctrl_len >= 72)
			r = layer_add_string(l, FACT_FR, id->fr, "nvme:id-ctrl:fr");
		if (r < 0)
			return r;
	}
	return 0;
}

static int add_bytes(struct lcloud_layer *l, enum fact_id id, uint64_t v, const char *source)
{
	return layer_add_u64(l, id, v, source);
}

/*
 * Sizes in bytes. A write is power-fail atomic iff its size is at most
 * (NAWUPF+1) LBAs (AWUPF when NSFEAT bit 1, NSABP, is clear) and it does not
 * cross a boundary at LBA NABO + k * (NABSPF+1); NABSPF 0 means no boundary.
 */
static int add_derived(struct lcloud_probe *p, int index, const struct nvme_identity *id)
{
	struct lcloud_layer *l = report_layer(p, index);
	bool nsabp = id->nsfeat & 0x2;
	bool optperf = id->nsfeat & 0x30; /* OPTPERF: bit 4 in 1.4, bits 5:4 in 2.0 */
	uint64_t lba = id->lba_size;
	int r;

	if (!lba)
		return report_note(p, NOTE_NVME_LBA_FORMAT, index,
				   "%s: the current LBA format could not be read from Identify Namespace "
				   "(FLBAS %u, NLBAF %u): sizes in bytes are not shown", l->name, id->flbas, id->nlbaf);
	r = add_bytes(l, FACT_LBA_SIZE, lba, "nvme:id-ns:lbaf");
	if (r >= 0)
		r = add_bytes(l, FACT_LBA_METADATA_SIZE, id->lba_metadata, "nvme:id-ns:lbaf");
	if (r < 0)
		return r;
	r = layer_add_bool(l, FACT_NSABP, nsabp, "nvme:id-ns:nsfeat");
	if (r < 0)
		return r;
	if (nsabp) {
		/* a namespace field of 0 defers to the controller's (NVMe Base 2.0, Identify Namespace) */
		r = id->nawun ? add_bytes(l, FACT_ATOMIC_WRITE_NORMAL_BYTES, (id->nawun + 1ull) * lba, "nvme:id-ns:nawun")
			      : add_bytes(l, FACT_ATOMIC_WRITE_NORMAL_BYTES, (id->awun + 1ull) * lba, "nvme:id-ctrl:awun");
		if (r >= 0)
			r = id->nawupf ? add_bytes(l, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES, (id->nawupf + 1ull) * lba,
						   "nvme:id-ns:nawupf")
				       : add_bytes(l, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES, (id->awupf + 1ull) * lba,
						   "nvme:id-ctrl:awupf");
		if (r >= 0)
			r = id->nacwu ? add_bytes(l, FACT_ATOMIC_COMPARE_WRITE_BYTES, (id->nacwu + 1ull) * lba, "nvme:id-ns:nacwu")
				      : add_bytes(l, FACT_ATOMIC_COMPARE_WRITE_BYTES, (id->acwu + 1ull) * lba, "nvme:id-ctrl:acwu");
		if (r >= 0)
			r = add_bytes(l, FACT_ATOMIC_BOUNDARY_POWER_FAIL_BYTES, id->nabspf ? (id->nabspf + 1ull) * lba : 0,
				      "nvme:id-ns:nabspf");
		if (r >= 0)
			r = add_bytes(l, FACT_ATOMIC_BOUNDARY_NORMAL_BYTES, id->nabsn ? (id->nabsn + 1ull) * lba : 0,
				      "nvme:id-ns:nabsn");
		if (r >= 0)
			r = add_bytes(l, FACT_ATOMIC_BOUNDARY_OFFSET_BYTES, (uint64_t)id->nabo * lba, "nvme:id-ns:nabo");
	} else if (id->ctrl && id->have_ctrl_atomics) {
		r = add_bytes(l, FACT_ATOMIC_WRITE_NORMAL_BYTES, (id->awun + 1ull) * lba, "nvme:id-ctrl:awun");
		if (r >= 0)
			r = add_bytes(l, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES, (id->awupf + 1ull) * lba, "nvme:id-ctrl:awupf");
		if (r >= 0)
			r = add_bytes(l, FACT_ATOMIC_COMPARE_WRITE_BYTES, (id->acwu + 1ull) * lba, "nvme:id-ctrl:acwu");
		if (r >= 0)
			r = add_bytes(l, FACT_ATOMIC_BOUNDARY_POWER_FAIL_BYTES, 0, "nvme:id-ns:nsfeat");
	}
	if (r < 0)
		return r;
	if (optperf) {
		r = add_bytes(l, FACT_PREFERRED_WRITE_GRANULARITY_BYTES, (id->npwg + 1ull) * lba, "nvme:id-ns:npwg");
		if (r >= 0)
			r = add_bytes(l, FACT_PREFERRED_WRITE_ALIGNMENT_BYTES, (id->npwa + 1ull) * lba, "nvme:id-ns:npwa");
		if (r >= 0)
			r = add_bytes(l, FACT_PREFERRED_DEALLOCATE_GRANULARITY_BYTES, (id->npdg + 1ull) * lba, "nvme:id-ns:npdg");
		if (r >= 0)
			r = add_bytes(l, FACT_PREFERRED_DEALLOCATE_ALIGNMENT_BYTES, (id->npda + 1ull) * lba, "nvme:id-ns:npda");
		if (r >= 0)
			r = add_bytes(l, FACT_OPTIMAL_WRITE_SIZE_BYTES, (id->nows + 1ull) * lba, "nvme:id-ns:nows");
		if (r < 0)
			return r;
	}
	if (id->noiob) {
		r = add_bytes(l, FACT_OPTIMAL_IO_BOUNDARY_BYTES, (uint64_t)id->noiob * lba, "nvme:id-ns:noiob");
		if (r < 0)
			return r;
	}
	return 0;
}

static int add_capabilities(struct lcloud_layer *l, const struct nvme_identity *id)
{
	static const struct {
		enum fact_id id;
		bool ctrl;
		int field; /* 0 oncs, 1 oacs, 2 ctratt, 3 vwc */
		unsigned int bit;
	} caps[] = {
		{ FACT_DSM_SUPPORTED, true, 0, 2 },
		{ FACT_WRITE_ZEROES_SUPPORTED, true, 0, 3 },
		{ FACT_COPY_SUPPORTED, true, 0, 8 },
		{ FACT_DIRECTIVES_SUPPORTED, true, 1, 5 },
		{ FACT_FDP_SUPPORTED, true, 2, 19 },
		{ FACT_VOLATILE_WRITE_CACHE, true, 3, 0 },
	};
	static const char *const sources[] = { "nvme:id-ctrl:oncs", "nvme:id-ctrl:oacs", "nvme:id-ctrl:ctratt",
					       "nvme:id-ctrl:vwc" };

	if (!id->ctrl || id->ctrl_len < 534)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(caps); i++) {
		uint32_t v = caps[i].field == 0 ? id->oncs
			   : caps[i].field == 1 ? id->oacs
			   : caps[i].field == 2 ? id->ctratt
						: id->ctrl[525];
		int r = layer_add_bool(l, caps[i].id, (v >> caps[i].bit) & 1, sources[caps[i].field]);

		if (r < 0)
			return r;
	}
	return 0;
}

int nvme_identity_fill_layer(struct lcloud_probe *p, int index, const struct nvme_identity *id)
{
	int r;

	r = add_raw_fields(report_layer(p, index), id);
	if (r < 0)
		return r;
	if (id->ctrl && id->ctrl_len < NVME_ID_SIZE_FULL) {
		r = report_note(p, NOTE_NVME_TRUNCATED, index,
				"%s: Identify Controller returned %zu of 4096 bytes: fields past that are not shown",
				report_layer(p, index)->name, id->ctrl_len);
		if (r < 0)
			return r;
	}
	if (id->ns && id->ns_len < NVME_ID_SIZE_FULL) {
		r = report_note(p, NOTE_NVME_TRUNCATED, index,
				"%s: Identify Namespace returned %zu of 4096 bytes: fields past that are not shown",
				report_layer(p, index)->name, id->ns_len);
		if (r < 0)
			return r;
	}
	r = add_capabilities(report_layer(p, index), id);
	if (r < 0)
		return r;
	r = nvme_lcloud_ext_fill_layer(report_layer(p, index), id->ctrl, id->ctrl_len);
	if (r < 0)
		return r;
	if (id->ns)
		r = add_derived(p, index, id);
	return r;
}
