/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Rendering numbers for people: binary units, with the exact byte value
 * beside them; and lsblk's short form for list's cells.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "print.h"

const char *format_size(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	int top = 0;

	while (top + 1 < (int)(sizeof(units) / sizeof(units[0])) && bytes >> (10 * (top + 1)))
		top++;
	/*
	 * Never round to a value that looks exact: take the largest unit that
	 * shows the size exactly with at most two decimals ("1.25 MiB",
	 * "1024.5 KiB"); only if none is short enough, say it is approximate.
	 */
	for (int u = top; u >= 0; u--) {
		uint64_t unit = 1ull << (10 * u);
		uint64_t whole = bytes / unit, rest = bytes % unit;

		if (whole >= 100000 && u < top)
			break;
		if (rest == 0) {
			snprintf(buf, size, "%" PRIu64 " %s", whole, units[u]);
			return buf;
		}
		if ((rest * 100) % unit == 0) {
			uint64_t hundredths = rest * 100 / unit;

			if (hundredths % 10 == 0)
				snprintf(buf, size, "%" PRIu64 ".%" PRIu64 " %s", whole, hundredths / 10, units[u]);
			else
				snprintf(buf, size, "%" PRIu64 ".%02" PRIu64 " %s", whole, hundredths, units[u]);
			return buf;
		}
	}
	snprintf(buf, size, "~%.2f %s", (double)bytes / (double)(1ull << (10 * top)), units[top]);
	return buf;
}

const char *format_size_short(uint64_t bytes, char *buf, size_t size)
{
	static const char letters[] = "BKMGTPE";
	uint64_t whole, frac;
	int exp = 0;

	/* util-linux's size_to_human_string(SIZE_SUFFIX_1LETTER): the unit below 1024 of it */
	while (exp < 60 && bytes >= 1ull << (exp + 10))
		exp += 10;
	whole = exp ? bytes >> exp : bytes;
	frac = exp ? bytes & ((1ull << exp) - 1) : 0;
	if (frac) {
		/* thousandths, rounded half up to one decimal; 9.96 becomes 10 */
		frac = frac >= UINT64_MAX / 1000 ? ((frac / 1024) * 1000) >> (exp - 10) : (frac * 1000) >> exp;
		frac = (frac + 50) / 100;
		if (frac == 10) {
			whole++;
			frac = 0;
		}
	}
	if (frac)
		snprintf(buf, size, "%" PRIu64 ".%" PRIu64 "%c", whole, frac, letters[exp / 10]);
	else
		snprintf(buf, size, "%" PRIu64 "%c", whole, letters[exp / 10]);
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
		snprintf(buf, size, "- (%s)", tty_str(lcloud_fact_get_reason(f)));
		return buf;
	case LCLOUD_FACT_NEEDS_ROOT:
		snprintf(buf, size, "? (needs root: %s)", tty_str(lcloud_fact_get_reason(f)));
		return buf;
	case LCLOUD_FACT_UNREADABLE:
		snprintf(buf, size, "? (unreadable: %s)", tty_str(lcloud_fact_get_reason(f)));
		return buf;
	}
	if (lcloud_fact_get_type(f) == LCLOUD_FACT_STRING)
		return escape_text(lcloud_fact_get_string(f), buf, size); /* device strings: any byte */
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
		format_size(v * 1024, human, sizeof(human));
		if (bytes)
			snprintf(buf, size, "%" PRIu64, v);
		else if (strcmp(human + strlen(human) - 3, "KiB") == 0)
			snprintf(buf, size, "%" PRIu64 " KiB", v); /* no better unit: say it once */
		else
			snprintf(buf, size, "%s (%" PRIu64 " KiB)", human, v);
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
