/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cloud NVMe devices and what their providers promise about torn writes.
 * Each rule names its public source; lcloud(7) lists them.
 *
 * AWS (EBS volumes and EC2 instance store): "Torn write prevention", Amazon
 * EC2 User Guide (storage-twp, twp-namespace). The Identify Namespace vendor
 * specific area (from byte 384) holds: 0-31 attachment device name, 32-63
 * volume ID, 256-257 NTWPU (torn write prevention unit), 258-259 NTWPG
 * (granularity), 260-263 NTWPB (boundary; 0 = none), all in logical blocks,
 * 0's based. Writes of NTWPG * n <= NTWPU bytes, starting at an LBA aligned
 * to the write size, are written all or nothing; no layer of the stack may
 * split, merge or move them. AWS tested ext4 bigalloc 16 KiB clusters with
 * O_DIRECT.
 *
 * Azure (vendor 0x1414) and Google (0x1ae0) NVMe disks state their atomic
 * sizes in the standard NAWUN/NAWUPF/NABSPF fields: recognised here, their
 * sizes are the NVMe layer's own.
 */
#include <stdio.h>
#include <string.h>

#include "cloud.h"
#include "util.h"

#define NS_VS 384 /* start of the Identify Namespace vendor specific area (NVMe 1.4, fig. 247) */
#define AWS_VID 0x1d0f

static int add_aws(struct lcloud_probe *p, int index, const struct nvme_identity *id, const char *product)
{
	const char *src = "cloud:aws-ebs-twp";
	uint16_t ntwpu = nvme_le16(id->ns, id->ns_len, NS_VS + 256);
	uint16_t ntwpg = nvme_le16(id->ns, id->ns_len, NS_VS + 258);
	uint32_t ntwpb = nvme_le32(id->ns, id->ns_len, NS_VS + 260);
	uint64_t lba = id->lba_size;
	struct lcloud_layer *l;
	char name[33], vol[33];
	int cloud, r = 0;

	cloud = cloud_layer_new(p, index, "aws", "nvme:id-ctrl:vid", product, "nvme:id-ctrl:mn");
	if (cloud < 0)
		return cloud;
	l = report_layer(p, cloud);
	if (id->ns && id->ns_len >= NS_VS + 64) {
		snprintf(name, sizeof(name), "%.32s", (const char *)id->ns + NS_VS);
		snprintf(vol, sizeof(vol), "%.32s", (const char *)id->ns + NS_VS + 32);
		name[strcspn(name, " ")] = '\0';
		vol[strcspn(vol, " ")] = '\0';
		if (name[0])
			r = layer_add_string(l, FACT_ATTACHMENT_NAME, name, "nvme:id-ns:vs[0:31]");
		if (r >= 0 && vol[0])
			r = layer_add_string(l, FACT_VOLUME_ID, vol, "nvme:id-ns:vs[32:63]");
		if (r < 0)
			return r;
	}
	if (!id->ns || id->ns_len < NS_VS + 264 || !lba)
		return report_note(p, NOTE_CLOUD_TWP_UNREADABLE, cloud,
				   "AWS %s: the namespace vendor area with the torn write prevention fields "
				   "could not be read", product);
	if (ntwpu == 0 && ntwpg == 0 && ntwpb == 0)
		/* All zero: a single block, i.e. no promise beyond the sector. */
		return report_note(p, NOTE_CLOUD_TWP_ABSENT, cloud,
				   "AWS %s reports no torn write prevention fields (NTWPU/NTWPG/NTWPB are 0): "
				   "this instance or volume makes no promise beyond one logical block", product);
	{
		const struct cloud_promise pr = {
			.untorn_max = (ntwpu + 1ull) * lba,
			.granularity = (ntwpg + 1ull) * lba,
			.boundary = ntwpb ? (ntwpb + 1ull) * lba : 0,
			.aligned_to_size = true,
			.conditions = "size a multiple of the granularity up to the unit, start LBA aligned to the "
				      "write size, not crossing the boundary; O_DIRECT; no stack layer may split, "
				      "merge or move the write (LVM/partition starts on 16 KiB multiples); tested by "
				      "AWS with ext4 bigalloc 16 KiB clusters",
			.source_title = "Amazon EC2 User Guide: Torn write prevention",
			.evidence = src,
		};

		r = cloud_add_promise(l, &pr);
	}
	return r;
}

int cloud_nvme_probe(struct lcloud_probe *p, int index, const struct nvme_identity *id)
{
	if (!id->ctrl)
		return 0;
	if (id->vid == AWS_VID && has_prefix(id->mn, "Amazon Elastic Block Store"))
		return add_aws(p, index, id, "ebs");
	if (id->vid == AWS_VID && has_prefix(id->mn, "Amazon EC2 NVMe Instance Storage"))
		return add_aws(p, index, id, "instance-store");
	if (id->vid == 0x1414 || id->vid == 0x1ae0) {
		int cloud = cloud_layer_new(p, index, id->vid == 0x1414 ? "azure" : "gcp", "nvme:id-ctrl:vid", id->mn,
					    "nvme:id-ctrl:mn");

		return cloud < 0 ? cloud : 0;
	}
	return 0;
}

int cloud_add_promise(struct lcloud_layer *l, const struct cloud_promise *pr)
{
	int r = layer_add_u64(l, FACT_PROMISE_UNTORN_MAX_BYTES, pr->untorn_max, pr->evidence);

	if (r >= 0)
		r = layer_add_u64(l, FACT_PROMISE_UNTORN_GRANULARITY_BYTES, pr->granularity, pr->evidence);
	if (r >= 0)
		r = layer_add_u64(l, FACT_PROMISE_BOUNDARY_BYTES, pr->boundary, pr->evidence);
	if (r >= 0)
		r = layer_set_promise_alignment(l, pr->aligned_to_size ? LAYER_PROMISE_ALIGNED_TO_SIZE
								       : LAYER_PROMISE_INSIDE_BOUNDARY, pr->evidence);
	if (r >= 0)
		r = layer_add_string(l, FACT_PROMISE_CONDITIONS, pr->conditions, pr->evidence);
	if (r >= 0)
		r = layer_add_string(l, FACT_PROMISE_SOURCE, pr->source_title, pr->evidence);
	return r;
}

int cloud_layer_new(struct lcloud_probe *p, int parent, const char *provider, const char *provider_src,
		    const char *product, const char *product_src)
{
	int cloud = report_add_layer(p, LCLOUD_LAYER_CLOUD, provider, parent);
	int r;

	if (cloud < 0)
		return cloud;
	r = layer_add_string(report_layer(p, cloud), FACT_PROVIDER, provider, provider_src);
	if (r >= 0)
		r = layer_add_string(report_layer(p, cloud), FACT_PRODUCT, product, product_src);
	return r < 0 ? r : cloud;
}
