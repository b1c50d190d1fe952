/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The power-fail model reader of 'lcloudctl replay --model-from'. Input: the
 * JSON of 'lcloudctl probe --format json'. It is read as replay reads it
 * (replay_model_parse), and a model it yields is checked as replay checks
 * one (oracle_model_check) and asked the oracle's questions.
 */
#include <string.h>

#include "fuzz_common.h"
#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct replay_model m;
	char err[512];
	volatile uint64_t sink = 0;

	memset(&m, 0, sizeof(m));
	if (replay_model_parse("probe.json", data, size, &m, err, sizeof(err)) < 0)
		return 0;
	sink += strlen(m.src_lba) + strlen(m.src_atomic) + strlen(m.src_boundary) + strlen(m.src_cache);
	if (!m.m.lba)
		m.m.lba = 512;
	if (!m.m.atomic_bytes)
		m.m.atomic_bytes = m.m.lba;
	if (oracle_model_check(&m.m, err, sizeof(err)) == 0) {
		sink += oracle_command_atomic(&m.m, 0, m.m.atomic_bytes);
		sink += oracle_boundary_after(&m.m, m.m.boundary_offset);
		sink += oracle_boundary_after(&m.m, UINT64_MAX - 1);
	}
	(void)sink;
	return 0;
}
