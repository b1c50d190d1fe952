/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Note codes as an enum, from the one list in notes.def: code that makes or
 * tests a note names it by id, so a misspelt code does not compile, and its
 * string and usual severity are looked up, never retyped.
 */
#ifndef LCLOUD_NOTES_H
#define LCLOUD_NOTES_H

#include "lcloud/lcloud.h"

enum note_code {
#define NOTE(id, code, severity, meaning) NOTE_##id,
#include "notes.def"
#undef NOTE
	NOTE_CODE_COUNT
};

/* The code as programs see it ("partition-misaligned"); "unknown" out of range. */
const char *note_code_name(enum note_code code);
/* The severity a note with CODE has unless its maker says otherwise. */
enum lcloud_note_severity note_code_severity(enum note_code code);
/* The code named NAME, or -ENOENT: for callers that hold only the public string. */
int note_code_from_name(const char *name);

#endif
