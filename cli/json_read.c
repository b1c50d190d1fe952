/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Checked accessors for the JSON files the tool reads (json_read.h): one
 * place that knows the type of what it takes, so that the readers above it
 * hold only what they mean.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_read.h"

int json_in_fail(struct json_in *in, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	if (!in->err || !in->err_size)
		return -EBADMSG;
	snprintf(in->err, in->err_size, "%s: %s%s", in->file, in->where, in->where[0] ? ": " : "");
	n = strlen(in->err);
	va_start(ap, fmt);
	vsnprintf(in->err + n, in->err_size - n, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

void json_in_at(struct json_in *in, const char *parent, size_t index)
{
	snprintf(in->where, sizeof(in->where), "%s[%zu]", parent, index);
}

int json_in_parse(struct json_in *in, const void *text, size_t size, json_object **ret)
{
	struct json_tokener *tok;
	json_object *doc;
	enum json_tokener_error e;
	size_t end;
	char *copy;

	in->where[0] = '\0';
	if (size > JSON_READ_MAX_BYTES)
		return json_in_fail(in, "%zu bytes, more than the %u this reader takes", size, JSON_READ_MAX_BYTES);
	/* json-c reads up to a NUL: one inside the text would hide what follows it */
	if (memchr(text, '\0', size))
		return json_in_fail(in, "not JSON (a NUL byte in the text)");
	/* with its NUL, so that a number at the very end is known to have ended */
	copy = malloc(size + 1);
	tok = json_tokener_new();
	if (!copy || !tok) {
		free(copy);
		json_tokener_free(tok);
		return -ENOMEM;
	}
	memcpy(copy, text, size);
	copy[size] = '\0';
	doc = json_tokener_parse_ex(tok, copy, (int)size + 1);
	e = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	/* trailing white space is fine; anything else after the value is not */
	while (doc && e == json_tokener_success && end < size && strchr(" \t\r\n", copy[end]))
		end++;
	free(copy);
	json_tokener_free(tok);
	if (!doc || e != json_tokener_success || end < size) {
		json_object_put(doc);
		return json_in_fail(in, "not JSON (%s at byte %zu)",
				    e == json_tokener_continue ? "the text ends inside a value"
				    : e != json_tokener_success ? json_tokener_error_desc(e)
				    : doc ? "text after the value" : "null", end);
	}
	*ret = doc;
	return 0;
}

int json_in_read_file(struct json_in *in, json_object **ret)
{
	struct stat st;
	char *text;
	size_t have = 0;
	int fd, r;

	in->where[0] = '\0';
	fd = open(in->file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return json_in_fail(in, "not a regular file");
	}
	if ((uint64_t)st.st_size > JSON_READ_MAX_BYTES) {
		close(fd);
		return json_in_fail(in, "%llu bytes, more than the %u this reader takes", (unsigned long long)st.st_size,
				    JSON_READ_MAX_BYTES);
	}
	/* one byte more than the size: a file that grew meanwhile is read to the limit, then refused */
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n = read(fd, text + have, (size_t)st.st_size + 1 - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			free(text);
			close(fd);
			return r;
		}
		if (n == 0 || (have += (size_t)n) > (size_t)st.st_size)
			break;
	}
	close(fd);
	if (have > (size_t)st.st_size) {
		free(text);
		return json_in_fail(in, "the file grew while it was read");
	}
	r = json_in_parse(in, text, have, ret);
	free(text);
	return r;
}

static const char *type_word(json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
		return "a fraction";
	case json_type_int:
		return "an integer";
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	}
	return "unknown";
}

/* 1 with *RET when KEY is there and not null, 0 when not and OPTIONAL, -EBADMSG when not and required. */
static int lookup(struct json_in *in, json_object *o, const char *key, bool optional, json_object **ret)
{
	json_object *v = NULL;

	if (!json_object_is_type(o, json_type_object))
		return json_in_fail(in, "must be an object, not %s", type_word(o));
	if (!json_object_object_get_ex(o, key, &v) || !v) {
		if (optional)
			return 0;
		return json_in_fail(in, "\"%s\" is %s", key, json_object_object_get_ex(o, key, NULL) ? "null" : "missing");
	}
	*ret = v;
	return 1;
}

static int typed(struct json_in *in, json_object *o, const char *key, bool optional, enum json_type type,
		 const char *word, json_object **ret)
{
	json_object *v = NULL;
	int r = lookup(in, o, key, optional, &v);

	if (r <= 0)
		return r;
	if (!json_object_is_type(v, type))
		return json_in_fail(in, "\"%s\" must be %s, not %s", key, word, type_word(v));
	*ret = v;
	return 1;
}

int json_get_object(struct json_in *in, json_object *o, const char *key, bool optional, json_object **ret)
{
	return typed(in, o, key, optional, json_type_object, "an object", ret);
}

int json_get_array(struct json_in *in, json_object *o, const char *key, bool optional, json_object **ret)
{
	return typed(in, o, key, optional, json_type_array, "an array", ret);
}

int json_get_string(struct json_in *in, json_object *o, const char *key, bool optional, const char **ret)
{
	json_object *v = NULL;
	int r = typed(in, o, key, optional, json_type_string, "a string", &v);

	if (r > 0)
		*ret = json_object_get_string(v);
	return r;
}

int json_get_u64(struct json_in *in, json_object *o, const char *key, bool optional, uint64_t *ret)
{
	json_object *v = NULL;
	int r = typed(in, o, key, optional, json_type_int, "an integer", &v);

	if (r <= 0)
		return r;
	/* json-c keeps integers above INT64_MAX as unsigned; below zero is no size or count */
	if (json_object_get_int64(v) < 0)
		return json_in_fail(in, "\"%s\" must not be negative", key);
	*ret = json_object_get_uint64(v);
	return 1;
}

int json_get_bool(struct json_in *in, json_object *o, const char *key, bool optional, bool *ret)
{
	json_object *v = NULL;
	int r = typed(in, o, key, optional, json_type_boolean, "true or false", &v);

	if (r > 0)
		*ret = json_object_get_boolean(v);
	return r;
}
