/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Text for a terminal from a string this program did not write (escape.c):
 * control characters, bytes that are not UTF-8 and '\\' as \xNN; printable
 * UTF-8 kept under a UTF-8 locale. Escape each string once, where it is
 * printed. Table cells go to libsmartcols raw: it escapes them itself.
 */
#ifndef LCLOUDCTL_ESCAPE_H
#define LCLOUDCTL_ESCAPE_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>

/*
 * escape_text() truncates to SIZE (never inside an escape) and returns BUF;
 * S and BUF must not overlap. tty_str() returns an escaped copy that stays
 * valid for the next TTY_STR_SLOTS - 1 calls: for printf arguments;
 * tty_strn() the same for the first N bytes of S.
 */
#define TTY_STR_SLOTS 8
const char *escape_text(const char *s, char *buf, size_t size);
const char *tty_str(const char *s);
const char *tty_strn(const char *s, size_t n);
/* tty_str() for JSON text (json-c's own escapes kept): its backslashes are JSON's. */
const char *tty_json(const char *json_text);
void fputs_escaped(const char *s, FILE *out);
/* JSON text to OUT with DEL and the C1 controls as \u00NN: no string in it commands a terminal. */
void fputs_json(const char *json, FILE *out);
/* A JSON string of S, valid UTF-8 whatever S holds: a byte that is not UTF-8 becomes U+0080..U+00FF. */
json_object *json_string_from_device(const char *s);

#endif
