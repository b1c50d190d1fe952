/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CRC32C in software with one 256-entry table: the stamps are 512 bytes, so
 * speed matters less than having no dependency and the same answer everywhere.
 */
#include <pthread.h>

#include "crc32c.h"

static uint32_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1; /* reflected Castagnoli polynomial */
		table[i] = c;
	}
}

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&table_once, table_init);
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
