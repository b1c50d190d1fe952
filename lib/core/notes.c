/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The note code table, built from notes.def: the strings and default
 * severities that notes.h's enum indexes. Kept free of the report's
 * internals so that lcloudctl can compile it too and test the codes it
 * reads through the public API by enum.
 */
#include <errno.h>
#include <string.h>

#include "notes.h"

static const struct {
	const char *name;
	enum lcloud_note_severity severity;
} note_codes[NOTE_CODE_COUNT] = {
#define NOTE(id, code, sev, meaning) [NOTE_##id] = { code, LCLOUD_NOTE_##sev },
#include "notes.def"
#undef NOTE
};

const char *note_code_name(enum note_code code)
{
	return (unsigned int)code < NOTE_CODE_COUNT ? note_codes[code].name : "unknown";
}

enum lcloud_note_severity note_code_severity(enum note_code code)
{
	return (unsigned int)code < NOTE_CODE_COUNT ? note_codes[code].severity : LCLOUD_NOTE_ERROR;
}

int note_code_from_name(const char *name)
{
	for (unsigned int i = 0; name && i < NOTE_CODE_COUNT; i++)
		if (strcmp(note_codes[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}
