/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dm tables, from the probe's reading of them to the verdict's alignment
 * checks. Input: one byte choosing the captured tree (dm-stack: dm-0 over
 * partitions sdb1 and sdc1; stacks: dm-0 over nvme4n1), then text lines
 * "START LENGTH TYPE PARAMS" as `dmsetup table` prints them. The lines are
 * what the reader seam (dm_table_set_reader) returns for dm-0, which is then
 * probed with lcloud_probe_path under lcloud_ctx_set_sysroot and its verdicts
 * read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm_table.h"
#include "fuzz_common.h"

#ifndef FUZZ_FIXTURES_DIR
#error "FUZZ_FIXTURES_DIR (tests/unit/fixtures) must be defined"
#endif

static const char *const trees[] = { "dm-stack", "stacks" };
static struct dm_target_line table[16];
static int table_len;

static int fuzz_reader(const struct lcloud_ctx *ctx, unsigned int major, unsigned int minor,
		       struct dm_target_line *targets, int max)
{
	(void)ctx;
	(void)major;
	(void)minor;
	if (table_len < 0)
		return table_len;
	if (max > table_len)
		max = table_len;
	memcpy(targets, table, (size_t)max * sizeof(*targets));
	return max;
}

/* Like the ioctl reader: type and params cut to their fields' sizes, NUL-terminated. */
static void parse_table(char *text)
{
	char *save = NULL;

	table_len = 0;
	for (char *line = strtok_r(text, "\n", &save); line && table_len < 16; line = strtok_r(NULL, "\n", &save)) {
		struct dm_target_line *t = &table[table_len];
		unsigned long long start, length;
		char type[64];
		int used = 0;

		if (strcmp(line, "error") == 0) {
			table_len = -5; /* -EIO: the reader failed */
			return;
		}
		if (sscanf(line, "%llu %llu %63s %n", &start, &length, type, &used) < 3 || !used)
			continue;
		memset(t, 0, sizeof(*t));
		t->start = start;
		t->length = length;
		snprintf(t->type, sizeof(t->type), "%s", type);
		snprintf(t->params, sizeof(t->params), "%s", line + used);
		table_len++;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct lcloud_ctx *ctx[2];
	struct lcloud_probe *p = NULL;
	unsigned int which;
	char *text;

	if (size < 1)
		return 0;
	which = data[0] % 2;
	if (!ctx[which]) {
		char root[4096];

		snprintf(root, sizeof(root), "%s/%s", FUZZ_FIXTURES_DIR, trees[which]);
		if (lcloud_ctx_new(&ctx[which]) < 0 || lcloud_ctx_set_sysroot(ctx[which], root) < 0)
			abort();
	}
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	parse_table(text);
	free(text);
	dm_table_set_reader(fuzz_reader);
	if (lcloud_probe_path(ctx[which], "/dev/dm-0", 0, &p) == 0) {
		fuzz_use_probe(p);
		lcloud_probe_free(p);
	}
	dm_table_set_reader(NULL);
	return 0;
}
