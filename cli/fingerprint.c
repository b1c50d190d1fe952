/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A probe's fingerprint: the kernel it ran on, every fact of every layer and
 * every verdict, saved as JSON (probe --save) so that a later run can say
 * what a kernel, firmware or stack change did to the verdict (diff).
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "output_file.h"

json_object *fingerprint_new(const struct lcloud_probe *p, const char *sysroot)
{
	json_object *fp = json_object_new_object(), *kernel = json_object_new_object(), *probe;
	char abs[PATH_MAX];
	struct utsname u;
	char when[32];
	time_t now = time(NULL);
	struct tm tm;

	json_object_object_add(fp, "schema", json_object_new_int(1));
	json_object_object_add(fp, "kind", json_object_new_string("lcloud-fingerprint"));
	json_object_object_add(fp, "lcloud_version", json_object_new_string(lcloud_version()));
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_object_add(fp, "saved_at", json_object_new_string(when));
	/* a captured tree was not read on this kernel: say so rather than name this one */
	if (sysroot) {
		json_object_object_add(kernel, "release", json_object_new_string(""));
		json_object_object_add(kernel, "sysroot", json_object_new_string(sysroot));
	} else if (uname(&u) == 0) {
		json_object_object_add(kernel, "release", json_object_new_string(u.release));
		json_object_object_add(kernel, "version", json_object_new_string(u.version));
	}
	json_object_object_add(fp, "kernel", kernel);
	probe = probe_to_json(p);
	/* diff may run from another folder: the path it probes again is absolute (a link stays a link) */
	if (!sysroot && absolute_path(lcloud_probe_get_path(p), abs, sizeof(abs)) == 0)
		json_object_object_add(probe, "path", json_object_new_string(abs));
	json_object_object_add(fp, "probe", probe);
	return fp;
}

int fingerprint_save(const char *file, json_object *fp, char *err, size_t err_size)
{
	const char *text = json_object_to_json_string_ext(fp, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	char *whole = NULL;
	int r;

	if (asprintf(&whole, "%s\n", text) < 0) {
		snprintf(err, err_size, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	r = write_file_atomically(file, whole, strlen(whole), 0644, err, err_size);
	free(whole);
	return r;
}

int fingerprint_load(const char *file, json_object **ret)
{
	json_object *fp = json_object_from_file(file), *kind, *probe;

	if (!fp)
		return access(file, R_OK) == 0 ? -EBADMSG : -errno;
	if (!json_object_object_get_ex(fp, "kind", &kind) ||
	    strcmp(json_object_get_string(kind), "lcloud-fingerprint") != 0 ||
	    !json_object_object_get_ex(fp, "probe", &probe) || !json_object_is_type(probe, json_type_object)) {
		json_object_put(fp);
		return -EBADMSG;
	}
	*ret = fp;
	return 0;
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
				json_object *nv = get(get(other, "facts"), key);

				/* device numbers are handed out per boot; they say nothing about atomicity */
				if (strcmp(key, "dev") == 0)
					continue;
				if (!same(value, nv) || (!nv && !get(get(other, "facts"), key)))
					change(facts, what, key, value, nv);
			}
			json_object_object_foreach(get(other, "facts"), nkey, nvalue)
				if (!get(get(l, "facts"), nkey) && strcmp(nkey, "dev") != 0)
					change(facts, what, nkey, NULL, nvalue);
		}
}

int fingerprint_compare(json_object *old_fp, json_object *new_fp, json_object **ret_report)
{
	static const char *const paths[] = { "rwf_atomic", "passthrough", "plain_direct", "buffered" };
	static const char *const fields[] = { "max_untorn_bytes", "hardware_max_bytes", "above_max", "alignment",
					      "boundary_bytes", "boundary_offset_bytes" };
	json_object *report = json_object_new_object(), *verdicts = json_object_new_array();
	json_object *facts = json_object_new_array();
	json_object *old_probe = get(old_fp, "probe"), *new_probe = get(new_fp, "probe");
	json_object *ok = get(get(old_fp, "kernel"), "release"), *nk = get(get(new_fp, "kernel"), "release");
	bool weaker = false;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		json_object *ov = get(get(old_probe, "verdict"), paths[i]), *nv = get(get(new_probe, "verdict"), paths[i]);

		for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
			json_object *a = get(ov, fields[f]), *b = get(nv, fields[f]);
			json_object *c;
			bool down;

			if (same(a, b))
				continue;
			/* weaker: a proved size lost, the device's own share shrunk, or "no" became "unknown" */
			down = (f < 2 && json_object_get_int64(b) < json_object_get_int64(a)) ||
			       (f == 2 && strcmp(json_object_get_string(b), "unknown") == 0);
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
