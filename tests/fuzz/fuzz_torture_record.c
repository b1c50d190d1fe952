/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The torture record reader of 'lcloudctl torture verify'. Input: a whole
 * record file. It is read as verify reads it (torture_history_parse), and
 * the acknowledged generation of the first, the last and a middle page is
 * asked for; a geometry of up to 2^32 pages must cost memory by the
 * record's length only.
 */
#include "fuzz_common.h"
#include "torture_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct torture_history h;
	char err[512];
	volatile uint64_t sink = 0;

	if (torture_history_parse(data, size, "fuzz.record", &h, err, sizeof(err)) < 0)
		return 0;
	sink += torture_history_last_ack(&h, 0);
	sink += torture_history_last_ack(&h, h.geometry.pages / 2);
	sink += torture_history_last_ack(&h, h.geometry.pages - 1);
	for (uint64_t i = 0; i < h.n_acked; i++)
		sink += torture_history_last_ack(&h, h.acked[i].page);
	(void)sink;
	torture_history_release(&h);
	return 0;
}
