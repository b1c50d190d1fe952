/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cloud disk models for advise: a disk's IOPS and bandwidth caps, the best
 * gain in pages per second that dropping InnoDB's doublewrite buffer can give
 * under them, and what liblcloud measured on the same model (tests/bench/
 * README.md). The caps are the same as tests/vm/lcvm's model= table.
 */
#ifndef LCLOUDCTL_DISK_MODELS_H
#define LCLOUDCTL_DISK_MODELS_H

#include <stdint.h>

#include "lcloud/lcloud.h"

struct disk_model {
	const char *name;  /* as --disk-model and lcvm's model= take it */
	const char *title; /* what it models */
	uint64_t iops, bytes_per_s;
	uint64_t iops_size; /* the largest I/O counted as one operation */
	/* 16 KiB pages (0: not measured): the limit with doublewrite's copy and
	 * in-place phases bound in turn over QEMU's 0.1 s buckets; page_flush at
	 * depth 32, plain_direct pages/s over doublewrite's; MariaDB
	 * oltp_write_only tps OFF/ON */
	double phased_limit, page_flush_ratio, mariadb_tps_ratio;
};

/* The model named NAME, or NULL. */
const struct disk_model *disk_model_find(const char *name);
/* The models' names, comma separated, for messages and --help. */
const char *disk_model_names(void);
/*
 * The model a cloud layer of P points to, or NULL; *WHY then says what was
 * recognised and what is assumed (a volume's type cannot be read from the
 * instance).
 */
const struct disk_model *disk_model_recognise(const struct lcloud_probe *p, const char **why);
/*
 * The best ratio of in-place to doublewrite pages per second that M's caps
 * allow for PAGE-byte pages written BATCH per flush; *BOUND names the cap
 * that binds the in-place writes ("IOPS" or "bandwidth").
 */
double disk_model_limit(const struct disk_model *m, uint64_t page, unsigned int batch, const char **bound);

#endif
