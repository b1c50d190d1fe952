/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A JSON document written as it goes: the members of the top object one by
 * one, and a long array element by element, each serialized by json-c and
 * freed at once. replay and torture verify report one element per page or
 * page write, and a log or target of millions of them must not need the
 * whole document in memory.
 */
#ifndef LCLOUDCTL_JSON_STREAM_H
#define LCLOUDCTL_JSON_STREAM_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

struct json_stream {
	FILE *out;
	bool in_array, first_member, first_element;
};

/* Prints "{". */
void json_stream_open(struct json_stream *s, FILE *out);
/* Prints every member of OBJ in order, then drops OBJ (NULL: nothing). */
void json_stream_members(struct json_stream *s, json_object *obj);
/* Prints "KEY": [ ... the array is then open for elements. */
void json_stream_array_open(struct json_stream *s, const char *key);
/* Prints V as the next element and drops V. */
void json_stream_element(struct json_stream *s, json_object *v);
void json_stream_array_close(struct json_stream *s);
/* Prints "}" and a newline. */
void json_stream_close(struct json_stream *s);

#endif
