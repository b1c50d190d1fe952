/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reads the Linux cloud extension (nvme_lcloud_ext.h, man/lcloud-extension.7)
 * from Identify Controller into facts of the NVMe layer. What a device
 * claims here is evidence beside NAWUPF, never more: the verdict does not
 * read these facts, and the kernel's own limits still decide RWF_ATOMIC.
 * A later version keeps version 1's fields where they are, so a longer block
 * is read for what version 1 defines.
 */
#include <stdio.h>
#include <string.h>

#include "nvme_lcloud_ext.h"
#include "report.h"

static const char *const handle_use[] = {
	[LCLOUD_EXT_USE_UNSPECIFIED] = "unspecified", [LCLOUD_EXT_USE_DATA] = "data",
	[LCLOUD_EXT_USE_METADATA] = "metadata",       [LCLOUD_EXT_USE_JOURNAL] = "journal",
	[LCLOUD_EXT_USE_BACKGROUND] = "background",
};

int nvme_lcloud_ext_use_from_name(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(handle_use) / sizeof(handle_use[0]); i++)
		if (strlen(handle_use[i]) == len && !memcmp(handle_use[i], name, len))
			return (int)i;
	return -1;
}

/* Little-endian reads inside the block, whose 64 bytes of version 1 the caller has checked are there. */
static uint16_t ext16(const uint8_t *ext, size_t at)
{
	return (uint16_t)(ext[at] | ext[at + 1] << 8);
}

static uint32_t ext32(const uint8_t *ext, size_t at)
{
	return (uint32_t)ext16(ext, at) | (uint32_t)ext16(ext, at + 2) << 16;
}

int nvme_lcloud_ext_fill_layer(struct lcloud_layer *l, const uint8_t *ctrl, size_t len)
{
	const uint8_t *ext;
	uint32_t flags;
	int r;

	if (!ctrl || len < LCLOUD_EXT_OFFSET + LCLOUD_EXT_V1_LENGTH)
		return 0;
	ext = ctrl + LCLOUD_EXT_OFFSET;
	if (memcmp(ext, LCLOUD_EXT_SIGNATURE, 8) != 0 || ext16(ext, LCLOUD_EXT_VERSION_AT) == 0 ||
	    ext16(ext, LCLOUD_EXT_LENGTH_AT) < LCLOUD_EXT_V1_LENGTH)
		return 0;
	flags = ext32(ext, LCLOUD_EXT_FLAGS_AT);
	r = layer_add_u64(l, FACT_LCLOUD_EXT_VERSION, ext16(ext, LCLOUD_EXT_VERSION_AT),
			  "nvme:id-ctrl:vs[8:9]");
	if (r >= 0 && (flags & LCLOUD_EXT_UNTORN)) {
		r = layer_add_u64(l, FACT_LCLOUD_EXT_UNTORN_BYTES, ext32(ext, LCLOUD_EXT_UNTORN_AT),
				  "nvme:id-ctrl:vs[16:19]");
		if (r >= 0)
			r = layer_add_u64(l, FACT_LCLOUD_EXT_UNTORN_BOUNDARY_BYTES,
					  ext32(ext, LCLOUD_EXT_BOUNDARY_AT), "nvme:id-ctrl:vs[20:23]");
		if (r >= 0)
			r = layer_add_u64(l, FACT_LCLOUD_EXT_UNTORN_BOUNDARY_OFFSET_BYTES,
					  ext32(ext, LCLOUD_EXT_BOUNDARY_OFFSET_AT), "nvme:id-ctrl:vs[24:27]");
		if (r >= 0)
			r = layer_add_bool(l, FACT_LCLOUD_EXT_UNTORN_WITH_CACHE, !!(flags & LCLOUD_EXT_UNTORN_WITH_CACHE),
					   "nvme:id-ctrl:vs[12]");
	}
	if (r >= 0)
		r = layer_add_bool(l, FACT_LCLOUD_EXT_READ_AHEAD_HINT, !!(flags & LCLOUD_EXT_READ_AHEAD_HINT),
				   "nvme:id-ctrl:vs[12]");
	if (r >= 0 && (flags & LCLOUD_EXT_PLACEMENT)) {
		uint16_t n = ext16(ext, LCLOUD_EXT_HANDLES_AT);
		char text[LCLOUD_EXT_MAX_HANDLES * 16] = "";
		size_t used = 0;

		if (n > LCLOUD_EXT_MAX_HANDLES)
			n = LCLOUD_EXT_MAX_HANDLES;
		for (uint16_t i = 0; i < n; i++) {
			uint8_t use = ext[LCLOUD_EXT_HANDLE_USE_AT + i];

			used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%u:%s", i ? " " : "", i,
						 use < sizeof(handle_use) / sizeof(handle_use[0]) ? handle_use[use] : "reserved");
		}
		r = layer_add_string(l, FACT_LCLOUD_EXT_PLACEMENT, text, "nvme:id-ctrl:vs[28:47]");
	}
	return r < 0 ? r : 0;
}
