/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Little-endian fields of the on-disk formats the lab reads and writes, on any host. */
#ifndef LCLOUD_LAB_LE_H
#define LCLOUD_LAB_LE_H

#include <stdint.h>

static inline uint64_t get_le64(const void *p)
{
	const uint8_t *b = p;
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | b[i];
	return v;
}

static inline uint32_t get_le32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static inline uint16_t get_le16(const void *p)
{
	const uint8_t *b = p;

	return (uint16_t)(b[0] | b[1] << 8);
}

static inline void put_le64(void *p, uint64_t v)
{
	uint8_t *b = p;

	for (int i = 0; i < 8; i++, v >>= 8)
		b[i] = (uint8_t)v;
}

static inline void put_le32(void *p, uint32_t v)
{
	uint8_t *b = p;

	for (int i = 0; i < 4; i++, v >>= 8)
		b[i] = (uint8_t)v;
}

static inline void put_le16(void *p, uint16_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}

#endif
