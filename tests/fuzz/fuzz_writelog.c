/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The crash lab's write-log reader and its oracle. Input: one byte choosing
 * the oracle's device model and whether the tail is scanned, then a whole
 * dm-log-writes log. The log is parsed (writelog_open_buffer), every entry's
 * data is read back through writelog_read_data and its reach on an image
 * sized (writelog_entry_image_bytes: a DISCARD's range), and the oracle
 * judges every page write in it (oracle_run), as 'lcloudctl replay' does.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "oracle.h"
#include "writelog.h"

static const struct oracle_model models[] = {
	{ .lba = 512, .atomic_bytes = 512 },
	{ .lba = 4096, .atomic_bytes = 16384 },
	{ .lba = 512, .atomic_bytes = 16384, .boundary = 32768, .boundary_offset = 8192 },
	{ .lba = 4096, .atomic_bytes = 65536, .volatile_cache = true },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct oracle_model *m;
	struct oracle_result result;
	struct writelog *log = NULL;
	uint8_t buf[4096];
	char err[512];

	if (size < 1)
		return 0;
	m = &models[data[0] % (sizeof(models) / sizeof(models[0]))];
	if (writelog_open_buffer(data + 1, size - 1, (data[0] & 0x80) ? WRITELOG_SCAN_TAIL : 0, &log, err,
				 sizeof(err)) < 0)
		return 0;
	for (uint64_t i = 0; i < writelog_entry_count(log); i++) {
		const struct writelog_entry *e = writelog_entry(log, i);
		volatile size_t sink = strlen(writelog_entry_kind(e)) + (size_t)writelog_entry_writes(e) +
				       (size_t)writelog_entry_image_bytes(log, e);

		/* the first and the last block of the data, and one past its end (which must be refused) */
		if (e->data_bytes) {
			uint64_t n = e->data_bytes < sizeof(buf) ? e->data_bytes : sizeof(buf);

			writelog_read_data(log, e, 0, buf, n);
			writelog_read_data(log, e, e->data_bytes - n, buf, n);
			writelog_read_data(log, e, e->data_bytes, buf, 1);
		}
		if (e->mark)
			sink += strlen(e->mark);
		(void)sink;
	}
	memset(&result, 0, sizeof(result));
	{
		const struct writelog *logs[] = { log };

		if (oracle_run(logs, 1, m, &result, err, sizeof(err)) == 0)
			oracle_result_release(&result);
	}
	writelog_free(log);
	return 0;
}
