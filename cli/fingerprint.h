/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * probe --save and diff: a probe's fingerprint (the kernel, every fact and
 * every verdict, as JSON, schema 1), written (fingerprint.c), read back,
 * checked and compared (fingerprint_read.c).
 */
#ifndef LCLOUDCTL_FINGERPRINT_H
#define LCLOUDCTL_FINGERPRINT_H

#include <json-c/json.h>
#include <stddef.h>

#include <lcloud/lcloud.h>

json_object *fingerprint_new(const struct lcloud_probe *p, const char *sysroot);
/* FILE written whole or not at all, a regular file only (output_file.c); -errno and ERR. */
int fingerprint_save(const char *file, json_object *fp, char *err, size_t err_size);
/*
 * A saved fingerprint, checked whole against the shape 'probe --save' writes
 * (fingerprint_read.c): -EBADMSG with ERR naming the file and the key when it
 * is not one, -errno when FILE cannot be read. PARSE reads SIZE bytes of TEXT
 * (named NAME in ERR).
 */
int fingerprint_load(const char *file, json_object **ret, char *err, size_t err_size);
int fingerprint_parse(const char *name, const void *text, size_t size, json_object **ret, char *err, size_t err_size);
/* Returns 0 same, 1 changed, 2 a verdict got weaker; *RET_REPORT is the JSON report. */
int fingerprint_compare(json_object *old_fp, json_object *new_fp, json_object **ret_report);

#endif
