/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Checked reading of JSON files the tool is given (a fingerprint for diff, a
 * probe's JSON for replay --model-from): every value is type-checked before
 * use, and anything else is -EBADMSG with a sentence naming the file and the
 * key, so that a hostile or damaged file is an error, never a crash. No
 * printing and no exit(): the fuzz harnesses call these readers too.
 */
#ifndef LCLOUDCTL_JSON_READ_H
#define LCLOUDCTL_JSON_READ_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Larger than any fingerprint or probe output by far; json-c's tree costs many times its text. */
#define JSON_READ_MAX_BYTES (16u << 20)

/* Where a reader is, for its error messages: FILE, and WHERE ("probe.layers[2]") inside it. */
struct json_in {
	const char *file;
	char where[128];
	char *err;
	size_t err_size;
};

/* TEXT of SIZE bytes (not NUL-terminated) as JSON into *RET; -EBADMSG (or -ENOMEM) with IN's error. */
int json_in_parse(struct json_in *in, const void *text, size_t size, json_object **ret);
/* The file IN->file, at most JSON_READ_MAX_BYTES, parsed; -errno for reading, -EBADMSG for content. */
int json_in_read_file(struct json_in *in, json_object **ret);

/*
 * The value of KEY in object O, of the type asked for. Returns 1 when
 * present, 0 when absent or null and OPTIONAL (RET untouched), -EBADMSG
 * with the error otherwise (absent and required, or of another type).
 */
int json_get_object(struct json_in *in, json_object *o, const char *key, bool optional, json_object **ret);
int json_get_array(struct json_in *in, json_object *o, const char *key, bool optional, json_object **ret);
int json_get_string(struct json_in *in, json_object *o, const char *key, bool optional, const char **ret);
/* A non-negative integer. */
int json_get_u64(struct json_in *in, json_object *o, const char *key, bool optional, uint64_t *ret);
int json_get_bool(struct json_in *in, json_object *o, const char *key, bool optional, bool *ret);

/* IN->where set to PARENT[INDEX] (for the elements of an array). */
void json_in_at(struct json_in *in, const char *parent, size_t index);
/* -EBADMSG with "FILE: WHERE: " and the rest of the sentence. */
int json_in_fail(struct json_in *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
