/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Printers of a probe and its facts, one per output format: numbers for
 * people (format.c), the normal text (print_normal.c, nvme_fields.c) and
 * typed JSON (print_json.c).
 */
#ifndef LCLOUDCTL_PRINT_H
#define LCLOUDCTL_PRINT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <lcloud/lcloud.h>

#include "args.h"

/* "4 KiB (4096)" style rendering of a fact value into BUF. */
const char *format_fact_value(const struct lcloud_fact *f, bool bytes, char *buf, size_t size);
/* Human size, "16 KiB", "1.5 MiB", "512 B". */
const char *format_size(uint64_t bytes, char *buf, size_t size);
/* lsblk's short size, one decimal at most, rounded: "16K", "1.5G", "512M", "0B", "512B". */
const char *format_size_short(uint64_t bytes, char *buf, size_t size);

/* JSON value of a fact: number, boolean, string or null when not present. */
json_object *fact_to_json(const struct lcloud_fact *f);
json_object *probe_to_json(const struct lcloud_probe *p);
void print_json(FILE *out, json_object *obj);

void print_probe_normal(FILE *out, const struct lcloud_probe *p, const struct global_opts *opts);
/* NVMe raw Identify fields as nvme-cli shows them (hex; -H: bits by name); false: not one of those. */
bool nvme_field_print(FILE *out, const struct lcloud_fact *f, int width, bool human);

#endif
