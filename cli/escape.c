/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strings that come from devices (NVMe Identify, vendor areas, SCSI INQUIRY
 * and VPD designators, sysfs model and serial) may hold any byte, and a
 * terminal obeys escape sequences. Text output shows every byte outside
 * printable ASCII, and the backslash itself, as \xNN, as lsblk and nvme-cli
 * do. JSON output keeps the characters (json-c writes control characters
 * as \u00NN); only a byte that is not UTF-8, which would make the document
 * invalid, is given as the character of the same value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '\\';
}

const char *escape_text(const char *s, char *buf, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t out = 0;

	if (!size)
		return buf;
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (plain(c)) {
			if (out + 1 >= size)
				break;
			buf[out++] = (char)c;
		} else {
			if (out + 4 >= size)
				break; /* never half an escape */
			buf[out++] = '\\';
			buf[out++] = 'x';
			buf[out++] = hex[c >> 4];
			buf[out++] = hex[c & 15];
		}
	}
	buf[out] = '\0';
	return buf;
}

void fputs_escaped(const char *s, FILE *out)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (plain(c))
			fputc(c, out);
		else
			fprintf(out, "\\x%02x", c);
	}
}

/* Length of the valid UTF-8 sequence at S (1-4), or 0 when it is not one. */
static size_t utf8_sequence(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		unsigned char lo = s[0] == 0xe0 ? 0xa0 : 0x80, hi = s[0] == 0xed ? 0x9f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		unsigned char lo = s[0] == 0xf0 ? 0x90 : 0x80, hi = s[0] == 0xf4 ? 0x8f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

json_object *json_string_from_device(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0, len;
	json_object *obj;
	char *fixed, *out;

	if (!s)
		return NULL;
	while (p[n] && (len = utf8_sequence(p + n)))
		n += len;
	if (!p[n])
		return json_object_new_string(s); /* valid UTF-8: json-c escapes the control characters */
	/* a byte that is not UTF-8 becomes the character of the same value (U+0080..U+00FF) */
	fixed = out = malloc(strlen(s) * 2 + 1);
	if (!fixed)
		return NULL;
	for (n = 0; p[n];) {
		len = utf8_sequence(p + n);
		if (len) {
			memcpy(out, p + n, len);
			out += len;
			n += len;
		} else {
			*out++ = (char)(0xc0 | (p[n] >> 6));
			*out++ = (char)(0x80 | (p[n] & 0x3f));
			n++;
		}
	}
	*out = '\0';
	obj = json_object_new_string(fixed);
	free(fixed);
	return obj;
}
