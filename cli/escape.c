/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one place where text meets a terminal. Strings this program did not
 * write itself (paths and names the user typed, what devices, sysfs,
 * mountinfo and saved files hold, library messages that quote them) may
 * hold any byte, and a terminal obeys escape sequences. Text output shows
 * every control character (C0, DEL, C1, ESC), every byte that is not
 * UTF-8 and the backslash itself as \xNN, as lsblk does; under a UTF-8
 * locale a printable UTF-8 character stays as it is, elsewhere every byte
 * above 0x7f is escaped. Each string is escaped once, where it is printed:
 * tty_str() for printf arguments, escape_text() into a caller's buffer,
 * fputs_escaped() straight to a stream. Table cells go to libsmartcols
 * unescaped: it applies lsblk's rules itself (-r and -P included).
 * JSON output keeps the characters (json-c writes control characters as
 * \u00NN); only a byte that is not UTF-8, which would make the document
 * invalid, is given as the character of the same value.
 */
#include <errno.h>
#include <langinfo.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "escape.h"

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

/* The character LEN bytes of valid UTF-8 at S encode. */
static wint_t utf8_decode(const unsigned char *s, size_t len)
{
	static const unsigned char lead_mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	wint_t c = s[0] & lead_mask[len];

	for (size_t i = 1; i < len; i++)
		c = (c << 6) | (s[i] & 0x3f);
	return c;
}

/* Whether LC_CTYPE (main sets it from the environment) is UTF-8: then iswprint() knows every character. */
static bool utf8_locale(void)
{
	return strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
}

/*
 * How many bytes at S go to a terminal as they are: 0 when S[0] must be
 * shown as \xNN. A backslash is escaped too (so \xNN is never ambiguous)
 * unless S is JSON text, where every backslash starts one of JSON's escapes.
 */
static size_t shown_as_is(const unsigned char *s, bool json)
{
	size_t len;

	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] < 0x7f && (s[0] != '\\' || json);
	if (!utf8_locale())
		return 0;
	len = utf8_sequence(s);
	/* C1 controls (U+0080..U+009F) are valid UTF-8 but not printable */
	return len && iswprint(utf8_decode(s, len)) ? len : 0;
}

static const char *escape_into(const char *s, char *buf, size_t size, bool json)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t out = 0, len;

	if (!size)
		return buf;
	while (p && *p) {
		len = shown_as_is(p, json);
		if (len) {
			if (out + len >= size)
				break; /* never half a character */
			memcpy(buf + out, p, len);
			out += len;
			p += len;
		} else {
			if (out + 4 >= size)
				break; /* never half an escape */
			buf[out++] = '\\';
			buf[out++] = 'x';
			buf[out++] = hex[*p >> 4];
			buf[out++] = hex[*p & 15];
			p++;
		}
	}
	buf[out] = '\0';
	return buf;
}

const char *escape_text(const char *s, char *buf, size_t size)
{
	return escape_into(s, buf, size, false);
}

/* An escaped copy of the first N bytes of S in the next slot of a ring (tty_str, tty_json). */
static const char *ring_copy(const char *s, size_t n, bool json)
{
	/* enough slots for every argument of one printf call */
	static char *ring[TTY_STR_SLOTS];
	static unsigned int next;
	int saved_errno = errno; /* an argument beside strerror(errno) */
	char *raw, *copy;
	size_t size;

	if (!s)
		return "(null)";
	raw = strndup(s, n);
	size = raw ? strlen(raw) * 4 + 1 : 0;
	copy = raw ? malloc(size) : NULL;
	if (!copy) {
		free(raw);
		errno = saved_errno;
		return "(no memory to show this text)";
	}
	escape_into(raw, copy, size, json);
	free(raw);
	free(ring[next]);
	ring[next] = copy;
	next = (next + 1) % TTY_STR_SLOTS;
	errno = saved_errno;
	return copy;
}

const char *tty_strn(const char *s, size_t n)
{
	return ring_copy(s, n, false);
}

const char *tty_str(const char *s)
{
	return ring_copy(s, SIZE_MAX, false);
}

const char *tty_json(const char *json_text)
{
	return ring_copy(json_text, SIZE_MAX, true);
}

void fputs_escaped(const char *s, FILE *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len;

	while (p && *p) {
		len = shown_as_is(p, false);
		if (len) {
			fwrite(p, 1, len, out);
			p += len;
		} else {
			fprintf(out, "\\x%02x", *p++);
		}
	}
}

void fputs_json(const char *json, FILE *out)
{
	const unsigned char *p = (const unsigned char *)json;

	/*
	 * json-c writes C0 controls as \u00NN but DEL and the C1 controls
	 * (U+0080..U+009F, CSI among them) as they are; a UTF-8 terminal may
	 * obey those. They only occur inside strings, where \u00NN is the
	 * same character.
	 */
	for (; p && *p; p++) {
		if (*p == 0x7f) {
			fputs("\\u007f", out);
		} else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			fprintf(out, "\\u00%02x", p[1]);
			p++;
		} else {
			fputc(*p, out);
		}
	}
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
