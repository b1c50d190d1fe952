/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SCSI pages, decoded by the offsets of SPC-5 and SBC-4 (DESIGN.md lists the
 * atomic ones). Field names are the T10 names in snake case, so that the
 * JSON reads like sg_vpd's decoding of the same page.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "scsi_pages.h"
#include "util.h"

static uint64_t be(const uint8_t *b, size_t off, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v = v << 8 | b[off + i];
	return v;
}

/* Bytes of a VPD page that are really there: min(header's length + 4, what we hold). */
static size_t vpd_usable(struct lcloud_probe *p, int index, uint8_t want_page, const uint8_t *b, size_t len,
			 const char *what)
{
	size_t claimed;

	if (len < 4) {
		report_note(p, NOTE_SCSI_PAGE_SHORT, index, "%s: %s VPD page 0x%02x is %zu bytes, "
			    "shorter than its header; not decoded", report_layer(p, index)->name, what, want_page, len);
		return 0;
	}
	if (b[1] != want_page) {
		report_note(p, NOTE_SCSI_PAGE_MISMATCH, index, "%s: asked for VPD page 0x%02x (%s), "
			    "got page 0x%02x; not decoded", report_layer(p, index)->name, want_page, what, b[1]);
		return 0;
	}
	claimed = 4 + (size_t)be(b, 2, 2);
	if (claimed > len) {
		report_note(p, NOTE_SCSI_PAGE_LENGTH, index, "%s: %s VPD page 0x%02x claims %zu "
			    "bytes but %zu arrived; fields past byte %zu are not shown",
			    report_layer(p, index)->name, what, want_page, claimed, len, len);
		return len;
	}
	return claimed;
}

struct be_field {
	enum fact_id id;
	size_t off;
	uint8_t size;
};

static int add_fields(struct lcloud_layer *l, const char *page, const uint8_t *b, size_t usable,
		      const struct be_field *fields, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char source[64];
		int r;

		snprintf(source, sizeof(source), "scsi:%s:%s", page, fact_def(fields[i].id)->name);
		if (fields[i].off + fields[i].size > usable)
			r = layer_add_missing(l, fields[i].id, LCLOUD_FACT_UNREADABLE, source,
					      "the page ends before this field");
		else
			r = layer_add_u64(l, fields[i].id, be(b, fields[i].off, fields[i].size), source);
		if (r < 0)
			return r;
	}
	return 0;
}

static void ascii_field(char *dst, size_t size, const uint8_t *b, size_t len, size_t off, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n && off + i < len && out + 1 < size; i++)
		dst[out++] = (b[off + i] >= 0x20 && b[off + i] < 0x7f) ? (char)b[off + i] : ' ';
	dst[out] = '\0';
	while (out > 0 && dst[out - 1] == ' ')
		dst[--out] = '\0';
}

int scsi_decode_inquiry(struct lcloud_probe *p, int index, const uint8_t *b, size_t len)
{
	struct lcloud_layer *l = report_layer(p, index);
	char vendor[9], product[17], revision[5];
	size_t usable;
	int r;

	if (len < 5)
		return report_note(p, NOTE_SCSI_PAGE_SHORT, index,
				   "%s: standard INQUIRY data is %zu bytes; not decoded", l->name, len);
	usable = 5 + (size_t)b[4]; /* ADDITIONAL LENGTH */
	if (usable > len) {
		r = report_note(p, NOTE_SCSI_PAGE_LENGTH, index,
				"%s: INQUIRY data claims %zu bytes but %zu arrived", l->name, usable, len);
		if (r < 0)
			return r;
		usable = len;
	}
	r = layer_add_u64(l, FACT_PERIPHERAL_QUALIFIER, b[0] >> 5, "scsi:inquiry");
	if (r >= 0)
		r = layer_add_u64(l, FACT_PERIPHERAL_DEVICE_TYPE, b[0] & 0x1f, "scsi:inquiry");
	if (r >= 0)
		r = layer_add_u64(l, FACT_VERSION, b[2], "scsi:inquiry");
	if (r >= 0 && usable > 5)
		r = layer_add_bool(l, FACT_PROTECT, b[5] & 1, "scsi:inquiry");
	if (r < 0)
		return r;
	if (usable < 36)
		return report_note_as(p, NOTE_SCSI_PAGE_SHORT, LCLOUD_NOTE_WARNING, index,
				      "%s: INQUIRY data ends at byte %zu, before the identification strings",
				      l->name, usable);
	ascii_field(vendor, sizeof(vendor), b, usable, 8, 8);
	ascii_field(product, sizeof(product), b, usable, 16, 16);
	ascii_field(revision, sizeof(revision), b, usable, 32, 4);
	r = layer_add_string(l, FACT_VENDOR, vendor, "scsi:inquiry");
	if (r >= 0)
		r = layer_add_string(l, FACT_PRODUCT, product, "scsi:inquiry");
	if (r >= 0)
		r = layer_add_string(l, FACT_REVISION, revision, "scsi:inquiry");
	return r;
}

int scsi_decode_vpd_supported(struct lcloud_probe *p, int index, const uint8_t *b, size_t len)
{
	size_t usable = vpd_usable(p, index, 0x00, b, len, "Supported VPD pages");
	char list[3 * 256 + 1] = "";

	if (usable < 4)
		return 0;
	for (size_t i = 4; i < usable; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%02x", i > 4 ? "," : "", b[i]);
	return layer_add_string(report_layer(p, index), FACT_VPD_PAGES, list, "scsi:vpd-0x00");
}

int scsi_decode_vpd_devid(struct lcloud_probe *p, int index, const uint8_t *b, size_t len)
{
	static const char *const types[] = { "vendor", "t10", "eui64", "naa", "relative-port", "target-port-group",
					     "lu-group", "md5", "scsi-name", "protocol-port", "uuid" };
	size_t usable = vpd_usable(p, index, 0x83, b, len, "Device Identification");
	char out[1024] = "";
	size_t off = 4;

	if (usable < 4)
		return 0;
	while (off + 4 <= usable) {
		uint8_t code_set = b[off] & 0x0f, assoc = (b[off + 1] >> 4) & 0x3, type = b[off + 1] & 0x0f;
		size_t dlen = b[off + 3];
		char one[300];

		if (off + 4 + dlen > usable)
			return report_note(p, NOTE_SCSI_PAGE_LENGTH, index,
					   "%s: a designator in VPD page 0x83 runs past the page; the rest is not shown",
					   report_layer(p, index)->name);
		/* Only the logical unit's own names: ports and groups are not the disk. */
		if (assoc == 0 && type < ARRAY_SIZE(types)) {
			size_t n = snprintf(one, sizeof(one), "%s:", types[type]);

			for (size_t i = 0; i < dlen && n + 3 < sizeof(one); i++) {
				uint8_t c = b[off + 4 + i];

				if (code_set == 2 || code_set == 3) /* ASCII, UTF-8 */
					n += snprintf(one + n, sizeof(one) - n, "%c", c >= 0x20 && c < 0x7f ? c : '.');
				else
					n += snprintf(one + n, sizeof(one) - n, "%02x", c);
			}
			snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", out[0] ? " " : "", one);
		}
		off += 4 + dlen;
	}
	return out[0] ? layer_add_string(report_layer(p, index), FACT_DESIGNATORS, out, "scsi:vpd-0x83") : 0;
}

int scsi_decode_block_limits(struct lcloud_probe *p, int index, const uint8_t *b, size_t len)
{
	/* SBC-4 6.6.4, Block Limits VPD page; lengths in logical blocks */
	static const struct be_field fields[] = {
		{ FACT_MAX_COMPARE_AND_WRITE_LENGTH, 5, 1 },
		{ FACT_OPTIMAL_TRANSFER_LENGTH_GRANULARITY, 6, 2 },
		{ FACT_MAX_TRANSFER_LENGTH, 8, 4 },
		{ FACT_OPTIMAL_TRANSFER_LENGTH, 12, 4 },
		{ FACT_MAX_PREFETCH_LENGTH, 16, 4 },
		{ FACT_MAX_UNMAP_LBA_COUNT, 20, 4 },
		{ FACT_MAX_UNMAP_BLOCK_DESCRIPTOR_COUNT, 24, 4 },
		{ FACT_OPTIMAL_UNMAP_GRANULARITY, 28, 4 },
		{ FACT_MAX_WRITE_SAME_LENGTH, 36, 8 },
		{ FACT_MAX_ATOMIC_TRANSFER_LENGTH, 44, 4 },
		{ FACT_ATOMIC_ALIGNMENT, 48, 4 },
		{ FACT_ATOMIC_TRANSFER_LENGTH_GRANULARITY, 52, 4 },
		{ FACT_MAX_ATOMIC_TRANSFER_LENGTH_WITH_ATOMIC_BOUNDARY, 56, 4 },
		{ FACT_MAX_ATOMIC_BOUNDARY_SIZE, 60, 4 },
	};
	size_t usable = vpd_usable(p, index, 0xb0, b, len, "Block Limits");
	struct lcloud_layer *l = report_layer(p, index);
	int r;

	if (usable < 4)
		return 0;
	if (usable > 4) {
		r = layer_add_bool(l, FACT_WSNZ, b[4] & 1, "scsi:vpd-0xb0:wsnz");
		if (r < 0)
			return r;
	}
	r = add_fields(l, "vpd-0xb0", b, usable, fields, ARRAY_SIZE(fields));
	if (r >= 0 && usable >= 36) {
		r = layer_add_bool(l, FACT_UNMAP_GRANULARITY_ALIGNMENT_VALID, b[32] >> 7, "scsi:vpd-0xb0:ugavalid");
		if (r >= 0)
			r = layer_add_u64(l, FACT_UNMAP_GRANULARITY_ALIGNMENT, be(b, 32, 4) & 0x7fffffff,
					  "scsi:vpd-0xb0:unmap_granularity_alignment");
	}
	return r;
}

int scsi_decode_block_characteristics(struct lcloud_probe *p, int index, const uint8_t *b, size_t len)
{
	size_t usable = vpd_usable(p, index, 0xb1, b, len, "Block Device Characteristics");
	struct lcloud_layer *l = report_layer(p, index);
	int r;

	if (usable < 9)
		return 0;
	/* 0 not reported, 1 non-rotating (solid state), else rpm */
	r = layer_add_u64(l, FACT_MEDIUM_ROTATION_RATE, be(b, 4, 2), "scsi:vpd-0xb1");
	if (r >= 0)
		r = layer_add_u64(l, FACT_NOMINAL_FORM_FACTOR, b[7] & 0x0f, "scsi:vpd-0xb1");
	if (r >= 0)
		r = layer_add_u64(l, FACT_ZONED, (b[8] >> 4) & 0x3, "scsi:vpd-0xb1");
	if (r >= 0)
		r = layer_add_bool(l, FACT_FUAB, (b[8] >> 1) & 1, "scsi:vpd-0xb1");
	if (r >= 0)
		r = layer_add_bool(l, FACT_VBULS, b[8] & 1, "scsi:vpd-0xb1");
	return r;
}

int scsi_decode_block_limits_ext(struct lcloud_probe *p, int index, const uint8_t *b, size_t len)
{
	static const struct be_field fields[] = {
		{ FACT_MAX_STREAMS, 6, 2 },
		{ FACT_OPTIMAL_STREAM_WRITE_SIZE, 8, 2 },
		{ FACT_STREAM_GRANULARITY, 10, 4 },
	};
	size_t usable = vpd_usable(p, index, 0xb7, b, len, "Block Limits Extension");
	struct lcloud_layer *l = report_layer(p, index);
	int r;

	if (usable < 6)
		return 0;
	r = layer_add_bool(l, FACT_RSCS, b[5] & 1, "scsi:vpd-0xb7:rscs");
	return r < 0 ? r : add_fields(l, "vpd-0xb7", b, usable, fields, ARRAY_SIZE(fields));
}

int scsi_decode_read_capacity16(struct lcloud_probe *p, int index, const uint8_t *b, size_t len)
{
	struct lcloud_layer *l = report_layer(p, index);
	int r;

	if (len < 16)
		return report_note(p, NOTE_SCSI_PAGE_SHORT, index,
				   "%s: READ CAPACITY(16) returned %zu bytes; not decoded", l->name, len);
	r = layer_add_u64(l, FACT_RETURNED_LBA, be(b, 0, 8), "scsi:readcap16");
	if (r >= 0)
		r = layer_add_u64(l, FACT_LOGICAL_BLOCK_LENGTH, be(b, 8, 4), "scsi:readcap16");
	if (r >= 0)
		r = layer_add_bool(l, FACT_PROT_EN, b[12] & 1, "scsi:readcap16");
	if (r >= 0)
		r = layer_add_u64(l, FACT_P_TYPE, (b[12] >> 1) & 0x7, "scsi:readcap16");
	if (r >= 0)
		r = layer_add_u64(l, FACT_PHYSICAL_BLOCK_EXPONENT, b[13] & 0x0f, "scsi:readcap16");
	if (r >= 0)
		r = layer_add_bool(l, FACT_LBPME, b[14] >> 7, "scsi:readcap16");
	if (r >= 0)
		r = layer_add_bool(l, FACT_LBPRZ, (b[14] >> 6) & 1, "scsi:readcap16");
	if (r >= 0)
		r = layer_add_u64(l, FACT_LOWEST_ALIGNED_LBA, be(b, 14, 2) & 0x3fff, "scsi:readcap16");
	return r;
}

/*
 * MODE SENSE(10) with DBD: an 8-byte header, then the IO Advice Hints
 * Grouping page (0Ah/05h, SBC-4): 16 bytes of page header and reserved
 * bytes, then 64 descriptors of 16 bytes; IO ADVICE HINTS MODE (byte 0,
 * bits 1:0) 00b marks a valid descriptor.
 */
int scsi_decode_io_advice_hints(struct lcloud_probe *p, int index, const uint8_t *b, size_t len)
{
	struct lcloud_layer *l = report_layer(p, index);
	size_t bdlen, page, page_len, end;
	unsigned int valid = 0, total = 0;

	if (len < 8 + 4)
		return report_note(p, NOTE_SCSI_PAGE_SHORT, index,
				   "%s: IO advice hints mode page data is %zu bytes; not decoded", l->name, len);
	bdlen = (size_t)be(b, 6, 2);
	page = 8 + bdlen;
	if (page + 4 > len || (b[page] & 0x3f) != 0x0a || !(b[page] & 0x40) || b[page + 1] != 0x05)
		return report_note(p, NOTE_SCSI_PAGE_MISMATCH, index,
				   "%s: MODE SENSE did not return the IO advice hints grouping page (0Ah/05h)",
				   l->name);
	page_len = 4 + (size_t)be(b, page + 2, 2);
	end = page + page_len;
	if (end > len) {
		int r = report_note(p, NOTE_SCSI_PAGE_LENGTH, index,
				    "%s: IO advice hints page claims %zu bytes but %zu arrived", l->name,
				    page_len, len - page);
		if (r < 0)
			return r;
		end = len;
	}
	for (size_t d = page + 16; d + 16 <= end; d += 16) {
		total++;
		if ((b[d] & 0x3) == 0)
			valid++;
	}
	{
		int r = layer_add_u64(l, FACT_IO_ADVICE_HINT_GROUPS, valid, "scsi:mode-0x0a-0x05");

		return r < 0 ? r : layer_add_u64(l, FACT_IO_ADVICE_HINT_DESCRIPTORS, total,
						 "scsi:mode-0x0a-0x05");
	}
}

/* GET STREAM STATUS (SBC-4): 8-byte header, then 8-byte descriptors; PERM is bit 0 of byte 0. */
int scsi_decode_stream_status(struct lcloud_probe *p, int index, const uint8_t *b, size_t len)
{
	struct lcloud_layer *l = report_layer(p, index);
	size_t end;
	unsigned int open = 0, perm = 0;
	int r;

	if (len < 8)
		return report_note(p, NOTE_SCSI_PAGE_SHORT, index,
				   "%s: GET STREAM STATUS returned %zu bytes; not decoded", l->name, len);
	end = 8 + (size_t)be(b, 0, 4);
	if (end > len)
		end = len;
	for (size_t d = 8; d + 8 <= end; d += 8) {
		open++;
		if (b[d] & 1)
			perm++;
	}
	r = layer_add_u64(l, FACT_OPEN_STREAMS, open, "scsi:get-stream-status");
	return r < 0 ? r : layer_add_u64(l, FACT_PERMANENT_STREAMS, perm, "scsi:get-stream-status");
}

static int add_bytes(struct lcloud_layer *l, enum fact_id id, uint64_t v, const char *source)
{
	return layer_add_u64(l, id, v, source);
}

/* Raw field ID as *RET, when it was really read (not truncated away). */
static bool field(const struct lcloud_layer *l, enum fact_id id, uint64_t *ret)
{
	return layer_get_u64(l, id, ret) > 0;
}

int scsi_derive_sizes(struct lcloud_probe *p, int index, uint64_t lb)
{
	struct lcloud_layer *l = report_layer(p, index);
	uint64_t exponent, lowest, max_atomic, boundary_size, osws, stream_granularity;
	int r = 0;

	if (!lb)
		return 0;
	if (field(l, FACT_PHYSICAL_BLOCK_EXPONENT, &exponent))
		r = add_bytes(l, FACT_PHYSICAL_BLOCK_BYTES, lb << exponent, "scsi:readcap16:physical_block_exponent");
	if (r >= 0 && field(l, FACT_LOWEST_ALIGNED_LBA, &lowest))
		r = add_bytes(l, FACT_LOWEST_ALIGNED_BYTES, lowest * lb, "scsi:readcap16:lowest_aligned_lba");
	if (r >= 0 && field(l, FACT_MAX_ATOMIC_TRANSFER_LENGTH, &max_atomic) &&
	    field(l, FACT_MAX_ATOMIC_BOUNDARY_SIZE, &boundary_size)) {
		/* the fields between these two were read with them: the page reached past both */
		uint64_t alignment = 0, granularity = 0, with_boundary = 0;

		(void)field(l, FACT_ATOMIC_ALIGNMENT, &alignment);
		(void)field(l, FACT_ATOMIC_TRANSFER_LENGTH_GRANULARITY, &granularity);
		(void)field(l, FACT_MAX_ATOMIC_TRANSFER_LENGTH_WITH_ATOMIC_BOUNDARY, &with_boundary);
		/* SBC-4: atomic fields of 0 mean no atomic support beyond one block */
		r = add_bytes(l, FACT_MAX_ATOMIC_TRANSFER_BYTES, max_atomic * lb, "scsi:vpd-0xb0:max_atomic_transfer_length");
		if (r >= 0)
			r = add_bytes(l, FACT_ATOMIC_ALIGNMENT_BYTES, alignment * lb, "scsi:vpd-0xb0:atomic_alignment");
		if (r >= 0)
			r = add_bytes(l, FACT_ATOMIC_GRANULARITY_BYTES, granularity * lb,
				      "scsi:vpd-0xb0:atomic_transfer_length_granularity");
		if (r >= 0)
			r = add_bytes(l, FACT_MAX_ATOMIC_WITH_BOUNDARY_BYTES, with_boundary * lb,
				      "scsi:vpd-0xb0:max_atomic_transfer_length_with_atomic_boundary");
		if (r >= 0)
			r = add_bytes(l, FACT_MAX_ATOMIC_BOUNDARY_BYTES, boundary_size * lb,
				      "scsi:vpd-0xb0:max_atomic_boundary_size");
		/* WRITE ATOMIC(16) (9Ch) is usable when the device states an atomic transfer length */
		if (r >= 0)
			r = layer_add_bool(l, FACT_WRITE_ATOMIC16_USABLE, max_atomic > 0, "scsi:vpd-0xb0:max_atomic_transfer_length");
	}
	if (r >= 0 && field(l, FACT_OPTIMAL_STREAM_WRITE_SIZE, &osws) &&
	    field(l, FACT_STREAM_GRANULARITY, &stream_granularity)) {
		r = add_bytes(l, FACT_OPTIMAL_STREAM_WRITE_BYTES, osws * lb, "scsi:vpd-0xb7:optimal_stream_write_size");
		if (r >= 0)
			r = add_bytes(l, FACT_STREAM_GRANULARITY_BYTES, stream_granularity * osws * lb,
				      "scsi:vpd-0xb7:stream_granularity");
	}
	return r;
}
