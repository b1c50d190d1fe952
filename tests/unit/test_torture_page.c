/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The torture formats: CRC32C against its published check value, stamps that
 * name any 512-byte fragment, pages classified after a simulated tear, and a
 * record file whose torn tail is ignored, never misread.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "crc32c.h"
#include "page_check.h"
#include "torture_page.h"
#include "torture_record.h"

static void test_crc32c(void **state)
{
	static const uint8_t zeros[32], ones[32] = { [0 ... 31] = 0xff };
	(void)state;

	/* the check value of the CRC catalogue, and RFC 3720 B.4's 32-byte vectors */
	assert_int_equal(crc32c(0, "123456789", 9), 0xe3069283u);
	assert_int_equal(crc32c(0, zeros, sizeof(zeros)), 0x8a9136aau);
	assert_int_equal(crc32c(0, ones, sizeof(ones)), 0x62a8ab43u);
	/* in pieces, the same */
	assert_int_equal(crc32c(crc32c(0, "1234", 4), "56789", 5), 0xe3069283u);
}

static void test_stamp_round_trip_and_bit_flip(void **state)
{
	uint8_t page[16384];
	struct torture_stamp s;
	(void)state;

	torture_page_fill(page, sizeof(page), 0x1122334455667788ull, 9, 41);
	for (unsigned int b = 0; b < 32; b++) {
		assert_int_equal(torture_block_decode(page + b * 512, &s), TORTURE_BLOCK_STAMPED);
		assert_int_equal(s.run_id, 0x1122334455667788ull);
		assert_int_equal(s.page, 9);
		assert_int_equal(s.generation, 41);
		assert_int_equal(s.block, b);
		assert_int_equal(s.page_size, 16384);
	}
	/* neighbouring blocks and generations differ in their payload, not only their header */
	assert_memory_not_equal(page + 64, page + 512 + 64, 448);
	/* any flipped bit, header or payload, is caught */
	for (unsigned int bit = 0; bit < 512 * 8; bit += 97) {
		page[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_not_equal(torture_block_decode(page, NULL), TORTURE_BLOCK_STAMPED);
		page[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	assert_int_equal(torture_block_decode(page, NULL), TORTURE_BLOCK_STAMPED);
	page[100] ^= 1;
	assert_int_equal(torture_block_decode(page, NULL), TORTURE_BLOCK_BAD_CRC);
	memset(page, 0, 512);
	assert_int_equal(torture_block_decode(page, NULL), TORTURE_BLOCK_NO_STAMP);
}

static void test_fragment_attribution(void **state)
{
	uint8_t *page = malloc(1 << 20), frag[512];
	struct torture_stamp s;
	(void)state;

	/* a 512-byte fragment from the middle of a 1 MiB page names its page, generation and block */
	torture_page_fill(page, 1 << 20, 7, 123456, 99);
	memcpy(frag, page + 1537 * 512, 512);
	assert_int_equal(torture_block_decode(frag, &s), TORTURE_BLOCK_STAMPED);
	assert_int_equal(s.page, 123456);
	assert_int_equal(s.generation, 99);
	assert_int_equal(s.block, 1537);
	/* a header copied onto another block's payload is not taken for that block */
	memcpy(frag + 64, page + 12 * 512 + 64, 448);
	assert_int_not_equal(torture_block_decode(frag, NULL), TORTURE_BLOCK_STAMPED);
	free(page);
	assert_false(torture_page_size_valid(2048));
	assert_false(torture_page_size_valid(12288));
	assert_false(torture_page_size_valid(2u << 20));
	assert_true(torture_page_size_valid(4096));
	assert_true(torture_page_size_valid(1u << 20));
}

static void test_page_check(void **state)
{
	uint8_t page[16384], old[16384];
	struct page_check c;
	(void)state;

	torture_page_fill(page, sizeof(page), 5, 3, 20);
	torture_page_fill(old, sizeof(old), 5, 3, 7);
	assert_int_equal(page_check(page, sizeof(page), 5, 3, &c), 0);
	assert_int_equal(c.state, PAGE_INTACT);
	assert_int_equal(c.newest, 20);
	assert_int_equal(c.n_parts, 1);
	page_check_release(&c);

	/* the second half still old: torn, new blocks 0-15, old 16-31 */
	memcpy(page + 8192, old + 8192, 8192);
	assert_int_equal(page_check(page, sizeof(page), 5, 3, &c), 0);
	assert_int_equal(c.state, PAGE_TORN);
	assert_int_equal(c.generations, 2);
	assert_int_equal(c.newest, 20);
	assert_int_equal(c.oldest, 7);
	assert_int_equal(c.n_parts, 2);
	assert_int_equal(c.parts[0].first_block, 0);
	assert_int_equal(c.parts[0].blocks, 16);
	assert_int_equal(c.parts[0].generation, 20);
	assert_int_equal(c.parts[1].first_block, 16);
	assert_int_equal(c.parts[1].generation, 7);
	page_check_release(&c);

	/* the right page of the wrong run, and zeroes: damaged, not intact */
	torture_page_fill(page, sizeof(page), 6, 3, 20);
	assert_int_equal(page_check(page, sizeof(page), 5, 3, &c), 0);
	assert_int_equal(c.state, PAGE_DAMAGED);
	assert_int_equal(c.parts[0].kind, PART_FOREIGN);
	assert_int_equal(c.newest, UINT64_MAX);
	page_check_release(&c);
	torture_page_fill(page, sizeof(page), 5, 3, 20);
	memset(page + 4096, 0, 512);
	assert_int_equal(page_check(page, sizeof(page), 5, 3, &c), 0);
	assert_int_equal(c.state, PAGE_DAMAGED);
	assert_int_equal(c.n_parts, 3);
	assert_int_equal(c.parts[1].kind, PART_GARBAGE);
	assert_int_equal(c.parts[1].first_block, 8);
	assert_int_equal(c.parts[1].state, TORTURE_BLOCK_NO_STAMP);
	page_check_release(&c);
	/* another page's blocks at this place: foreign */
	torture_page_fill(page, sizeof(page), 5, 4, 20);
	assert_int_equal(page_check(page, sizeof(page), 5, 3, &c), 0);
	assert_int_equal(c.state, PAGE_DAMAGED);
	page_check_release(&c);
}

static void test_record_torn_tail(void **state)
{
	char path[] = "/tmp/lcloud-record-XXXXXX", err[256];
	uint8_t rec[5][TORTURE_RECORD_SIZE];
	struct torture_record r = { .path = 1, .run_id = 77, .page_size = 16384, .pages = 4 };
	struct torture_history h;
	int fd = mkstemp(path);
	(void)state;

	assert_true(fd >= 0);
	r.kind = TORTURE_RECORD_START;
	torture_record_encode(rec[0], &r);
	r.kind = TORTURE_RECORD_FILLED;
	torture_record_encode(rec[1], &r);
	r.kind = TORTURE_RECORD_ACK;
	r.page = 2;
	r.generation = 5;
	torture_record_encode(rec[2], &r);
	r.generation = 3; /* an older generation recorded later never lowers the acknowledged one */
	torture_record_encode(rec[3], &r);
	r.page = 1;
	r.generation = 9;
	torture_record_encode(rec[4], &r);
	assert_int_equal(write(fd, rec, sizeof(rec)), (ssize_t)sizeof(rec));
	/* the crash tore the last record: half of a sixth one */
	assert_int_equal(write(fd, rec[4], 30), 30);
	assert_int_equal(torture_history_read(path, &h, err, sizeof(err)), 0);
	assert_true(h.started && h.filled && !h.ended);
	assert_int_equal(h.acks, 3);
	assert_int_equal(h.ignored_bytes, 30);
	assert_int_equal(torture_history_last_ack(&h, 0), 0);
	assert_int_equal(torture_history_last_ack(&h, 1), 9);
	assert_int_equal(torture_history_last_ack(&h, 2), 5);
	torture_history_release(&h);
	/* a flipped bit in the middle record: it and all after it are ignored */
	rec[3][20] ^= 4;
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(write(fd, rec, sizeof(rec)), (ssize_t)sizeof(rec));
	assert_int_equal(torture_history_read(path, &h, err, sizeof(err)), 0);
	assert_int_equal(h.acks, 1);
	assert_int_equal(h.ignored_bytes, 2 * TORTURE_RECORD_SIZE + 30);
	torture_history_release(&h);
	/* a page outside the geometry is an error, not an out-of-bounds write */
	r.page = 4;
	torture_record_encode(rec[3], &r);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(write(fd, rec, sizeof(rec)), (ssize_t)sizeof(rec));
	assert_int_equal(torture_history_read(path, &h, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "outside"));
	/* nothing valid at all */
	assert_int_equal(ftruncate(fd, 10), 0);
	assert_int_equal(torture_history_read(path, &h, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "no valid record"));
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test(test_stamp_round_trip_and_bit_flip),
		cmocka_unit_test(test_fragment_attribution),
		cmocka_unit_test(test_page_check),
		cmocka_unit_test(test_record_torn_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
