/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Rendering numbers for people: binary units, with the exact byte value beside them. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char *format_size(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned int u = 0;
	uint64_t v = bytes;

	/* Exact multiples read best ("16 KiB"); others get one decimal ("1.5 MiB"). */
	while (v >= 1024 && v % 1024 == 0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (v < 1024 || u + 1 == sizeof(units) / sizeof(units[0])) {
		snprintf(buf, size, "%" PRIu64 " %s", v, units[u]);
		return buf;
	}
	{
		double d = (double)bytes;

		u = 0;
		while (d >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
			d /= 1024.0;
			u++;
		}
		/* Two decimals at most, trailing zeros dropped: "1.25 MiB", "1.5 GiB". */
		snprintf(buf, size, "%.2f", d);
		{
			size_t n = strlen(buf);

			while (n > 0 && buf[n - 1] == '0')
				buf[--n] = '\0';
			if (n > 0 && buf[n - 1] == '.')
				buf[--n] = '\0';
			snprintf(buf + n, size - n, " %s", units[u]);
		}
	}
	return buf;
}

const char *format_fact_value(const struct lcloud_fact *f, bool bytes, char *buf, size_t size)
{
	uint64_t v = lcloud_fact_get_u64(f);
	char human[32];

	switch (lcloud_fact_get_state(f)) {
	case LCLOUD_FACT_PRESENT:
		break;
	case LCLOUD_FACT_NOT_PROVIDED:
		snprintf(buf, size, "- (%s)", lcloud_fact_get_reason(f));
		return buf;
	case LCLOUD_FACT_NEEDS_ROOT:
		snprintf(buf, size, "? (needs root: %s)", lcloud_fact_get_reason(f));
		return buf;
	case LCLOUD_FACT_UNREADABLE:
		snprintf(buf, size, "? (unreadable: %s)", lcloud_fact_get_reason(f));
		return buf;
	}
	if (lcloud_fact_get_type(f) == LCLOUD_FACT_STRING) {
		snprintf(buf, size, "%s", lcloud_fact_get_string(f));
		return buf;
	}
	if (lcloud_fact_get_type(f) == LCLOUD_FACT_BOOL) {
		snprintf(buf, size, "%s", v ? "yes" : "no");
		return buf;
	}
	switch (lcloud_fact_get_unit(f)) {
	case LCLOUD_UNIT_BYTES:
		if (bytes || v < 1024)
			snprintf(buf, size, "%" PRIu64, v);
		else
			snprintf(buf, size, "%s (%" PRIu64 ")", format_size(v, human, sizeof(human)), v);
		break;
	case LCLOUD_UNIT_KIB:
		if (bytes)
			snprintf(buf, size, "%" PRIu64, v);
		else
			snprintf(buf, size, "%s (%" PRIu64 " KiB)", format_size(v * 1024, human, sizeof(human)), v);
		break;
	case LCLOUD_UNIT_SECTORS:
		if (bytes)
			snprintf(buf, size, "%" PRIu64, v);
		else
			snprintf(buf, size, "%" PRIu64 " sectors (%s)", v, format_size(v * 512, human, sizeof(human)));
		break;
	default:
		snprintf(buf, size, "%" PRIu64, v);
		break;
	}
	return buf;
}
