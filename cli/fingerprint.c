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

#include "args.h"
#include "fingerprint.h"
#include "print.h"
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
