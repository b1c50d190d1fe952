/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cloud disk models and what dropping the doublewrite buffer buys on them.
 * A cloud disk is limited by two caps: operations per second, each I/O of up
 * to IOPS_SIZE bytes counted as one (AWS: 256 KiB on SSD volumes, larger
 * ones split), and bytes per second. Doublewrite writes each page twice but
 * the copy in large sequential requests, so it costs few more operations and
 * twice the bytes: the gain from dropping it is near 2x where bandwidth binds
 * and small where operations do. The caps are the providers' published
 * baselines; the measured figures come from tests/bench/README.md, sections
 * "page_flush under cloud disk models" and "MariaDB under cloud disk models"
 * (runs of 2026-12-04, QEMU throttle groups with these caps scaled by 0.02
 * for emulation), and are compiled in so that advise can cite them.
 */
#include <stdbool.h>
#include <string.h>

#include "cli_facts.h"
#include "disk_models.h"

static const struct disk_model models[] = {
	/* AWS EBS gp3 baseline: 3000 IOPS, 125 MiB/s (Amazon EBS User Guide, General Purpose SSD volumes) */
	{ "gp3", "AWS EBS gp3 baseline", 3000, 125ull << 20, 256 << 10, 1.19, 1.18, 1.09 },
	/* Google Cloud Hyperdisk Balanced baseline: 3000 IOPS, 140 MiB/s (Compute Engine documentation) */
	{ "hyperdisk-balanced", "Google Cloud Hyperdisk Balanced baseline", 3000, 140ull << 20, 256 << 10, 1.15, 1.13, 1.41 },
	/* gp3 at its 1000 MiB/s maximum: only the IOPS cap binds */
	{ "ops-bound", "an operations-bound disk", 3000, 1000ull << 20, 256 << 10, 1.06, 1.05, 1.17 },
	/* gp3 at its 16000 IOPS maximum: only the 125 MiB/s binds */
	{ "bw-bound", "a bandwidth-bound disk", 16000, 125ull << 20, 256 << 10, 2.00, 2.00, 1.56 },
};

const struct disk_model *disk_model_find(const char *name)
{
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (strcmp(models[i].name, name) == 0)
			return &models[i];
	return NULL;
}

const char *disk_model_names(void)
{
	return "gp3, hyperdisk-balanced, ops-bound, bw-bound";
}

const struct disk_model *disk_model_recognise(const struct lcloud_probe *p, const char **why)
{
	const struct lcloud_layer *cloud = cli_first_layer(p, LCLOUD_LAYER_CLOUD);
	const char *provider = cli_fact_string(cloud, FACT_PROVIDER);
	const char *product = cli_fact_string(cloud, FACT_PRODUCT);

	*why = NULL;
	if (!provider || !product)
		return NULL;
	if (strcmp(provider, "aws") == 0 && strcmp(product, "ebs") == 0) {
		*why = "an AWS EBS volume (its type cannot be read from the instance: gp3, the default type, "
		       "at its baseline is assumed; name another with --disk-model)";
		return disk_model_find("gp3");
	}
	/* Google's NVMe disks: Hyperdisk is NVMe only; SCSI Persistent Disk has other caps, no model */
	if (strcmp(provider, "gcp") == 0 && strcmp(product, "persistent-disk") != 0) {
		*why = "a Google Cloud NVMe disk (its type cannot be read from the instance: Hyperdisk Balanced "
		       "at its baseline is assumed; name another with --disk-model)";
		return disk_model_find("hyperdisk-balanced");
	}
	return NULL;
}

/* pages/s the caps allow for OPS operations and BYTES bytes per page; *by_ops: the IOPS cap binds */
static double pages_per_s(const struct disk_model *m, double ops, double bytes, bool *by_ops)
{
	double a = (double)m->iops / ops, b = (double)m->bytes_per_s / bytes;

	*by_ops = a <= b;
	return a <= b ? a : b;
}

double disk_model_limit(const struct disk_model *m, uint64_t page, unsigned int batch, const char **bound)
{
	/* in place: each page once, in ceil(page / iops_size) operations */
	double ops = (double)((page + m->iops_size - 1) / m->iops_size);
	/* doublewrite adds the batch written sequentially, in requests of at most iops_size */
	double dw_ops = ops + (double)((batch * page + m->iops_size - 1) / m->iops_size) / batch;
	bool by_ops, dw_by_ops;
	double in_place = pages_per_s(m, ops, (double)page, &by_ops);
	double dw = pages_per_s(m, dw_ops, 2.0 * (double)page, &dw_by_ops);

	*bound = by_ops ? "IOPS" : "bandwidth";
	return in_place / dw;
}
