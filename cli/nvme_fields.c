/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * NVMe raw Identify fields the way nvme-cli shows them: hexadecimal where
 * 'nvme id-ctrl' and 'nvme id-ns' print hex, and with -H the bits of the
 * capability fields by name (NVM Express Base 2.0 and NVM Command Set 1.0).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "print.h"

struct bit_name {
	unsigned int bit;
	const char *name;
};

static const struct bit_name oacs_bits[] = {
	{ 0, "Security Send/Receive" }, { 1, "Format NVM" }, { 2, "Firmware Download/Commit" },
	{ 3, "Namespace Management" }, { 4, "Device Self-test" }, { 5, "Directives" },
	{ 6, "NVMe-MI Send/Receive" }, { 7, "Virtualization Management" }, { 8, "Doorbell Buffer Config" },
	{ 9, "Get LBA Status" }, { 10, "Command and Feature Lockdown" }, { 0, NULL },
};
static const struct bit_name oncs_bits[] = {
	{ 0, "Compare" }, { 1, "Write Uncorrectable" }, { 2, "Dataset Management" }, { 3, "Write Zeroes" },
	{ 4, "Save/Select in Features" }, { 5, "Reservations" }, { 6, "Timestamp" }, { 7, "Verify" },
	{ 8, "Copy" }, { 0, NULL },
};
static const struct bit_name ctratt_bits[] = {
	{ 0, "128-bit Host Identifier" }, { 1, "Non-Operational Power State Permissive" },
	{ 2, "NVM Sets" }, { 3, "Read Recovery Levels" }, { 4, "Endurance Groups" }, { 5, "Predictable Latency" },
	{ 6, "Traffic Based Keep Alive" }, { 7, "Namespace Granularity" }, { 8, "SQ Associations" },
	{ 9, "UUID List" }, { 10, "Multi-Domain Subsystem" }, { 11, "Fixed Capacity Management" },
	{ 12, "Variable Capacity Management" }, { 13, "Delete Endurance Group" }, { 14, "Delete NVM Set" },
	{ 15, "Extended LBA Formats" }, { 19, "Flexible Data Placement" }, { 0, NULL },
};
static const struct bit_name vwc_bits[] = {
	{ 0, "Volatile Write Cache Present" }, { 0, NULL },
};
static const struct bit_name nsfeat_bits[] = {
	{ 0, "Thin Provisioning" }, { 1, "NAWUN/NAWUPF/NACWU (NSABP)" }, { 2, "Deallocated Error" },
	{ 3, "Identifier Reuse" }, { 4, "NPWG/NPWA/NPDG/NPDA/NOWS (OPTPERF)" }, { 0, NULL },
};

struct field_look {
	const char *name;
	const struct bit_name *bits; /* -H: decode these */
};

/* The fields nvme-cli prints in hex; those with bits are decoded by -H. */
static const struct field_look hex_fields[] = {
	{ "vid", NULL }, { "ssvid", NULL }, { "ver", NULL }, { "ctratt", ctratt_bits }, { "oacs", oacs_bits },
	{ "oncs", oncs_bits }, { "vwc", vwc_bits }, { "nsze", NULL }, { "ncap", NULL }, { "nuse", NULL },
	{ "nsfeat", nsfeat_bits }, { "flbas", NULL },
};

static const struct field_look *look(const char *name)
{
	for (size_t i = 0; i < sizeof(hex_fields) / sizeof(hex_fields[0]); i++)
		if (strcmp(hex_fields[i].name, name) == 0)
			return &hex_fields[i];
	return NULL;
}

bool nvme_field_print(FILE *out, const struct lcloud_fact *f, int width, bool human)
{
	const struct field_look *fl = look(lcloud_fact_get_name(f));
	uint64_t v = lcloud_fact_get_u64(f);
	const char *src = lcloud_fact_get_source(f);

	/* only the raw Identify fields: a derived size keeps its bytes */
	if (!fl || lcloud_fact_get_state(f) != LCLOUD_FACT_PRESENT || lcloud_fact_get_type(f) != LCLOUD_FACT_U64 ||
	    !src || strncmp(src, "nvme:id-", 8) != 0)
		return false;
	fprintf(out, "  %-*s  %#" PRIx64 "\n", width, lcloud_fact_get_name(f), v);
	if (human && fl->bits)
		for (const struct bit_name *b = fl->bits; b->name; b++)
			fprintf(out, "  %-*s    [%2u] %s: %s\n", width, "", b->bit, b->name,
				(v >> b->bit) & 1 ? "yes" : "no");
	return true;
}
