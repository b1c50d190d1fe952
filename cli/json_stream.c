/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * JSON written as it goes (json_stream.h), laid out as print_json lays out a
 * whole document: two spaces per level, one member or element per line.
 */
#include <string.h>

#include "json_stream.h"

#define FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

/* TEXT re-indented by INDENT spaces after each newline (a JSON string never holds a raw one). */
static void put_indented(FILE *out, const char *text, int indent)
{
	for (const char *p = text; *p; p++) {
		fputc(*p, out);
		if (*p == '\n')
			fprintf(out, "%*s", indent, "");
	}
}

static void put_key(FILE *out, const char *key)
{
	json_object *k = json_object_new_string(key);

	fputs(json_object_to_json_string_ext(k, FLAGS), out);
	fputs(": ", out);
	json_object_put(k);
}

static void next_member(struct json_stream *s)
{
	fputs(s->first_member ? "\n  " : ",\n  ", s->out);
	s->first_member = false;
}

void json_stream_open(struct json_stream *s, FILE *out)
{
	s->out = out;
	s->in_array = false;
	s->first_member = true;
	fputc('{', out);
}

void json_stream_members(struct json_stream *s, json_object *obj)
{
	if (!obj)
		return;
	json_object_object_foreach(obj, key, value) {
		next_member(s);
		put_key(s->out, key);
		put_indented(s->out, value ? json_object_to_json_string_ext(value, FLAGS) : "null", 2);
	}
	json_object_put(obj);
}

void json_stream_array_open(struct json_stream *s, const char *key)
{
	next_member(s);
	put_key(s->out, key);
	fputc('[', s->out);
	s->in_array = true;
	s->first_element = true;
}

void json_stream_element(struct json_stream *s, json_object *v)
{
	fputs(s->first_element ? "\n    " : ",\n    ", s->out);
	s->first_element = false;
	put_indented(s->out, v ? json_object_to_json_string_ext(v, FLAGS) : "null", 4);
	json_object_put(v);
}

void json_stream_array_close(struct json_stream *s)
{
	fputs(s->first_element ? "]" : "\n  ]", s->out);
	s->in_array = false;
}

void json_stream_close(struct json_stream *s)
{
	fputs(s->first_member ? "}\n" : "\n}\n", s->out);
}
