/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stamp_log OUT BLOCKS PAGE_SIZE: writes a dm-log-writes log (format in
 * lib/lab/writelog.h) of one write entry whose BLOCKS 512-byte blocks are
 * each block 0 of a new page (page i, generation 0, run 0x5eed) of
 * PAGE_SIZE bytes: the log that costs the oracle the most state per byte
 * it holds. Stamps come from the crash lab itself (torture_block_fill), as
 * Python would take minutes to compute half a million of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "torture_page.h"

static void put_le64(unsigned char *b, unsigned long long v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
}

int main(int argc, char **argv)
{
	unsigned char sector[512] = { 0 }, block[TORTURE_BLOCK_SIZE];
	unsigned long long blocks;
	unsigned long page_size;
	FILE *f;

	if (argc != 4) {
		fputs("usage: stamp_log OUT BLOCKS PAGE_SIZE\n", stderr);
		return 2;
	}
	blocks = strtoull(argv[2], NULL, 0);
	page_size = strtoul(argv[3], NULL, 0);
	if (!torture_page_size_valid(page_size) || !blocks) {
		fputs("stamp_log: BLOCKS must be positive and PAGE_SIZE a torture page size\n", stderr);
		return 2;
	}
	f = fopen(argv[1], "wbe");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	put_le64(sector, 0x6a736677736872ull); /* magic */
	put_le64(sector + 8, 1);               /* version */
	put_le64(sector + 16, 1);              /* one entry */
	sector[24] = 0x00, sector[25] = 0x02;  /* sector size 512, little-endian u32 */
	fwrite(sector, 1, sizeof(sector), f);
	memset(sector, 0, sizeof(sector));
	put_le64(sector, 0);          /* device sector 0 */
	put_le64(sector + 8, blocks); /* nr_sectors */
	fwrite(sector, 1, sizeof(sector), f);
	for (unsigned long long i = 0; i < blocks; i++) {
		struct torture_stamp s = { .run_id = 0x5eed, .page = i, .generation = 0, .page_size = (uint32_t)page_size,
					   .block = 0 };

		torture_block_fill(block, &s);
		fwrite(block, 1, sizeof(block), f);
	}
	if (fclose(f) != 0) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
