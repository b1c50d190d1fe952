/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fingerprint reader and comparer of 'lcloudctl diff'. Input: two
 * fingerprints separated by a NUL byte (without one, the input is compared
 * with itself). Each is read as diff reads a saved one (fingerprint_parse),
 * and when both are fingerprints they are compared (fingerprint_compare) and
 * the report serialized, as 'diff --format json' prints it.
 */
#include <string.h>

#include "fingerprint.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t first = nul ? (size_t)(nul - data) : size;
	json_object *old_fp = NULL, *new_fp = NULL, *report = NULL;
	char err[512];

	if (fingerprint_parse("old.fp", data, first, &old_fp, err, sizeof(err)) < 0)
		return 0;
	if (nul) {
		if (fingerprint_parse("new.fp", nul + 1, size - first - 1, &new_fp, err, sizeof(err)) < 0) {
			json_object_put(old_fp);
			return 0;
		}
	} else {
		new_fp = json_object_get(old_fp);
	}
	fingerprint_compare(old_fp, new_fp, &report);
	{
		volatile size_t sink = strlen(json_object_to_json_string_ext(report, JSON_C_TO_STRING_PRETTY));

		(void)sink;
	}
	json_object_put(report);
	json_object_put(new_fp);
	json_object_put(old_fp);
	return 0;
}
