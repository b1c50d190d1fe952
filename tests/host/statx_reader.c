/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tests' own statx reading, independent of liblcloud: a raw 256-byte
 * buffer read at the offsets of include/uapi/linux/stat.h (Linux 6.16).
 * Prints "name value" lines for the fields the kernel filled.
 *   statx_reader PATH
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint32_t u32_at(const unsigned char *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static uint64_t u64_at(const unsigned char *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

int main(int argc, char **argv)
{
	unsigned char buf[256];
	const unsigned int want = 0x2000 /* DIOALIGN */ | 0x10000 /* WRITE_ATOMIC */ | 0x20000 /* DIO_READ_ALIGN */;
	uint32_t mask;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH\n", argv[0]);
		return 2;
	}
	memset(buf, 0, sizeof(buf));
	if (syscall(SYS_statx, AT_FDCWD, argv[1], 0, want, buf) < 0) {
		perror("statx");
		return 1;
	}
	mask = u32_at(buf, 0x00);
	printf("mask %u\n", mask);
	printf("attributes %llu\n", (unsigned long long)u64_at(buf, 0x08));
	printf("attributes_mask %llu\n", (unsigned long long)u64_at(buf, 0x28));
	if (mask & 0x2000) {
		printf("stx_dio_mem_align %u\n", u32_at(buf, 0x98));
		printf("stx_dio_offset_align %u\n", u32_at(buf, 0x9c));
	}
	if (mask & 0x10000) {
		printf("stx_atomic_write_unit_min %u\n", u32_at(buf, 0xa8));
		printf("stx_atomic_write_unit_max %u\n", u32_at(buf, 0xac));
		printf("stx_atomic_write_segments_max %u\n", u32_at(buf, 0xb0));
		printf("stx_atomic_write_unit_max_opt %u\n", u32_at(buf, 0xb8));
	}
	if (mask & 0x20000)
		printf("stx_dio_read_offset_align %u\n", u32_at(buf, 0xb4));
	return 0;
}
