/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading a saved fingerprint back (diff) and comparing it with a new one.
 * The file is the user's, so it is checked whole against the shape that
 * 'probe --save' writes before anything is compared: a value of another
 * type is an error naming the file and the key, never a crash. Pure json-c,
 * no printing: the fuzz harness fuzz_fingerprint calls it too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint.h"
#include "json_read.h"

#define FINGERPRINT_LAYERS_MAX 1024u

static const char *const io_paths[] = { "rwf_atomic", "passthrough", "plain_direct", "buffered" };
static const char *const verdict_fields[] = { "max_untorn_bytes", "hardware_max_bytes", "above_max", "alignment",
					      "boundary_bytes", "boundary_offset_bytes" };

/* What compare reads, with the types it reads them as. */
static int fingerprint_check(struct json_in *in, json_object *fp)
{
	json_object *kernel, *probe, *layers, *verdict;
	const char *kind, *s;
	uint64_t u;
	int r;

	if (!json_object_is_type(fp, json_type_object))
		return json_in_fail(in, "not a fingerprint written by 'lcloudctl probe --save' (not a JSON object)");
	r = json_get_string(in, fp, "kind", false, &kind);
	if (r < 0)
		return r;
	if (strcmp(kind, "lcloud-fingerprint") != 0)
		return json_in_fail(in, "not a fingerprint written by 'lcloudctl probe --save' (\"kind\" is not "
				    "\"lcloud-fingerprint\")");
	if ((r = json_get_u64(in, fp, "schema", true, &u)) < 0 || (r = json_get_string(in, fp, "saved_at", true, &s)) < 0)
		return r;
	r = json_get_object(in, fp, "kernel", true, &kernel);
	if (r < 0 || (r > 0 && (r = json_get_string(in, kernel, "release", true, &s)) < 0))
		return r;
	if ((r = json_get_object(in, fp, "probe", false, &probe)) < 0)
		return r;
	snprintf(in->where, sizeof(in->where), "probe");
	if ((r = json_get_string(in, probe, "path", true, &s)) < 0)
		return r;
	r = json_get_array(in, probe, "layers", true, &layers);
	if (r < 0)
		return r;
	/* compare matches every layer against every other: no stack has this many */
	if (r > 0 && json_object_array_length(layers) > FINGERPRINT_LAYERS_MAX)
		return json_in_fail(in, "%zu layers, more than the %u of any stack", json_object_array_length(layers),
				    FINGERPRINT_LAYERS_MAX);
	for (size_t i = 0; r > 0 && i < json_object_array_length(layers); i++) {
		json_object *l = json_object_array_get_idx(layers, i), *facts;
		int e;

		json_in_at(in, "probe.layers", i);
		if ((e = json_get_string(in, l, "layer", false, &s)) < 0 || (e = json_get_string(in, l, "name", false, &s)) < 0 ||
		    (e = json_get_object(in, l, "facts", false, &facts)) < 0)
			return e;
	}
	snprintf(in->where, sizeof(in->where), "probe");
	r = json_get_object(in, probe, "verdict", true, &verdict);
	for (size_t i = 0; r > 0 && i < sizeof(io_paths) / sizeof(io_paths[0]); i++) {
		json_object *v;
		int e;

		snprintf(in->where, sizeof(in->where), "probe.verdict");
		e = json_get_object(in, verdict, io_paths[i], true, &v);
		if (e <= 0) {
			if (e < 0)
				return e;
			continue;
		}
		snprintf(in->where, sizeof(in->where), "probe.verdict.%s", io_paths[i]);
		if ((e = json_get_u64(in, v, "max_untorn_bytes", true, &u)) < 0 ||
		    (e = json_get_u64(in, v, "hardware_max_bytes", true, &u)) < 0 ||
		    (e = json_get_string(in, v, "above_max", true, &s)) < 0)
			return e;
	}
	in->where[0] = '\0';
	return r < 0 ? r : 0;
}

/* FP handed to the caller once it is a whole fingerprint; freed when not. */
static int checked(struct json_in *in, json_object *fp, json_object **ret)
{
	int r = fingerprint_check(in, fp);

	if (r < 0) {
		json_object_put(fp);
		return r;
	}
	*ret = fp;
	return 0;
}

int fingerprint_parse(const char *name, const void *text, size_t size, json_object **ret, char *err, size_t err_size)
{
	struct json_in in = { .file = name, .err = err, .err_size = err_size };
	json_object *fp;
	int r = json_in_parse(&in, text, size, &fp);

	return r < 0 ? r : checked(&in, fp, ret);
}

int fingerprint_load(const char *file, json_object **ret, char *err, size_t err_size)
{
	struct json_in in = { .file = file, .err = err, .err_size = err_size };
	json_object *fp;
	int r;

	err[0] = '\0';
	r = json_in_read_file(&in, &fp);
	return r < 0 ? r : checked(&in, fp, ret);
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *text_of(json_object *v)
{
	return v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) : "-";
}

static const char *string_of(json_object *v)
{
	return v && json_object_get_string(v) ? json_object_get_string(v) : "";
}

static bool same(json_object *a, json_object *b)
{
	return strcmp(text_of(a), text_of(b)) == 0;
}

static json_object *layer_named(json_object *probe, const char *kind, const char *name)
{
	json_object *layers = get(probe, "layers");

	for (size_t i = 0; layers && i < json_object_array_length(layers); i++) {
		json_object *l = json_object_array_get_idx(layers, i);

		if (strcmp(string_of(get(l, "layer")), kind) == 0 && strcmp(string_of(get(l, "name")), name) == 0)
			return l;
	}
	return NULL;
}

static void change(json_object *list, const char *what, const char *key, json_object *old, json_object *now)
{
	json_object *c = json_object_new_object();

	json_object_object_add(c, "what", json_object_new_string(what));
	json_object_object_add(c, "key", json_object_new_string(key));
	json_object_object_add(c, "old", json_object_new_string(text_of(old)));
	json_object_object_add(c, "new", json_object_new_string(text_of(now)));
	json_object_array_add(list, c);
}

/* Facts of the layers in OLD that changed, went away or came (NEW's layers not in OLD count too). */
static void compare_layers(json_object *old, json_object *now, json_object *facts)
{
	json_object *layers[2] = { get(old, "layers"), get(now, "layers") };

	for (int side = 0; side < 2; side++)
		for (size_t i = 0; layers[side] && i < json_object_array_length(layers[side]); i++) {
			json_object *l = json_object_array_get_idx(layers[side], i);
			const char *kind = string_of(get(l, "layer")), *name = string_of(get(l, "name"));
			json_object *other = layer_named(side ? old : now, kind, name);
			char what[256];

			snprintf(what, sizeof(what), "%s %s", kind, name);
			if (!other) {
				json_object *here = json_object_new_string("present");

				change(facts, what, "layer", side ? NULL : here, side ? here : NULL);
				json_object_put(here);
				continue;
			}
			if (side)
				continue; /* layers in both were compared from OLD's side */
			json_object_object_foreach(get(l, "facts"), key, value) {
				json_object *nv = NULL;
				/* a fact saved as null (not readable then) is present; only a missing key is gone */
				bool present = json_object_object_get_ex(get(other, "facts"), key, &nv);

				/* device numbers are handed out per boot; they say nothing about atomicity */
				if (strcmp(key, "dev") == 0)
					continue;
				if (!present || !same(value, nv))
					change(facts, what, key, value, nv);
			}
			json_object_object_foreach(get(other, "facts"), nkey, nvalue)
				if (!json_object_object_get_ex(get(l, "facts"), nkey, NULL) && strcmp(nkey, "dev") != 0)
					change(facts, what, nkey, NULL, nvalue);
		}
}

int fingerprint_compare(json_object *old_fp, json_object *new_fp, json_object **ret_report)
{
	static const char *const *paths = io_paths, *const *fields = verdict_fields;
	json_object *report = json_object_new_object(), *verdicts = json_object_new_array();
	json_object *facts = json_object_new_array();
	json_object *old_probe = get(old_fp, "probe"), *new_probe = get(new_fp, "probe");
	json_object *ok = get(get(old_fp, "kernel"), "release"), *nk = get(get(new_fp, "kernel"), "release");
	bool weaker = false;

	for (size_t i = 0; i < sizeof(io_paths) / sizeof(io_paths[0]); i++) {
		json_object *ov = get(get(old_probe, "verdict"), paths[i]), *nv = get(get(new_probe, "verdict"), paths[i]);

		for (size_t f = 0; f < sizeof(verdict_fields) / sizeof(verdict_fields[0]); f++) {
			json_object *a = get(ov, fields[f]), *b = get(nv, fields[f]);
			json_object *c;
			bool down;

			if (same(a, b))
				continue;
			/* weaker: a proved size lost, the device's own share shrunk, or "no" became "unknown" */
			down = (f < 2 && json_object_get_int64(b) < json_object_get_int64(a)) ||
			       (f == 2 && strcmp(string_of(b), "unknown") == 0);
			c = json_object_new_object();
			json_object_object_add(c, "io_path", json_object_new_string(paths[i]));
			json_object_object_add(c, "field", json_object_new_string(fields[f]));
			json_object_object_add(c, "old", a ? json_object_get(a) : NULL);
			json_object_object_add(c, "new", b ? json_object_get(b) : NULL);
			json_object_object_add(c, "weaker", json_object_new_boolean(down));
			json_object_array_add(verdicts, c);
			weaker = weaker || down;
		}
	}
	compare_layers(old_probe, new_probe, facts);
	json_object_object_add(report, "schema", json_object_new_int(1));
	json_object_object_add(report, "saved_at", json_object_get(get(old_fp, "saved_at")));
	json_object_object_add(report, "kernel_old", json_object_new_string(ok ? json_object_get_string(ok) : ""));
	json_object_object_add(report, "kernel_new", json_object_new_string(nk ? json_object_get_string(nk) : ""));
	json_object_object_add(report, "kernel_changed", json_object_new_boolean(!same(ok, nk)));
	json_object_object_add(report, "verdict_changes", verdicts);
	json_object_object_add(report, "fact_changes", facts);
	json_object_object_add(report, "weaker", json_object_new_boolean(weaker));
	json_object_object_add(report, "changed",
			       json_object_new_boolean(!same(ok, nk) || json_object_array_length(verdicts) ||
						       json_object_array_length(facts)));
	*ret_report = report;
	return weaker ? 2 : (json_object_get_boolean(get(report, "changed")) ? 1 : 0);
}
