/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloud-target's reader of DH-HMAC-CHAP secrets (target/auth.c,
 * dhchap_key_parse: what --dhchap-secret's file holds). Input: the text, read
 * as the C string it is up to its first NUL.
 * A secret it takes must be the one way to write its key: a 32, 48 or
 * 64-byte key, a transform hash of 0 to 3, and the text written again from
 * them (base64 of the key and its CRC-32) the very bytes given.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "target.h"

static uint32_t crc32_iso(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xffffffffu;

	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc >> 1 ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

static void base64(const uint8_t *in, size_t n, char *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);

		*out++ = a[v >> 18 & 63];
		*out++ = a[v >> 12 & 63];
		*out++ = i + 1 < n ? a[v >> 6 & 63] : '=';
		*out++ = i + 2 < n ? a[v & 63] : '=';
	}
	*out = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), again[200], b64[120], err[200];
	uint8_t raw[68];
	struct dhchap_key key;
	uint32_t crc;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (dhchap_key_parse(text, &key, err, sizeof(err)) == 0) {
		if ((key.len != 32 && key.len != 48 && key.len != 64) || key.hash > 3)
			abort();
		memcpy(raw, key.key, key.len);
		crc = crc32_iso(key.key, key.len);
		for (int i = 0; i < 4; i++)
			raw[key.len + i] = (uint8_t)(crc >> 8 * i);
		base64(raw, key.len + 4u, b64);
		snprintf(again, sizeof(again), "DHHC-1:%02u:%s:", key.hash, b64);
		if (strcmp(again, text) != 0)
			abort(); /* two texts for one secret: the reader is not strict (it reads up to a NUL) */
	} else if (!err[0]) {
		abort(); /* a refusal says why */
	}
	free(text);
	return 0;
}
