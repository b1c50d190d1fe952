/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cloud SCSI disks and what their providers promise about torn writes.
 *
 * Google Persistent Disk (INQUIRY "Google" / "PersistentDisk"): "Best
 * practices for 16 KB persistent disk and MySQL", Google Cloud Compute
 * Engine documentation: a persistent disk created with a 16 KB physical
 * block size "provides 16 KB write atomicity at the physical block level".
 * Conditions there: 16 KiB-aligned writes of 16 KiB, O_DIRECT
 * (innodb_flush_method=O_DIRECT), ext4 with bigalloc and 16 KiB clusters
 * so that files are allocated in aligned 16 KiB units.
 *
 * What liblcloud takes it to cover: a write that stays inside one aligned
 * 16 KiB physical block. The disk updates a physical block as a whole, so a
 * smaller write inside one (a read-modify-write of that block) is as untorn
 * as a whole-block write; a write that crosses from one physical block into
 * the next is two block updates and is not covered, whatever its size.
 * The same rule holds on the disk, in its partitions and in dm segments:
 * offsets there are shifted onto the disk before the rule is applied.
 * The rule places physical blocks at multiples of 16 KiB from LBA 0, as on
 * Google's disks: a disk that says they start elsewhere gets no promise.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cloud.h"
#include "util.h"

int cloud_scsi_probe(struct lcloud_probe *p, int scsi, int disk)
{
	const struct lcloud_fact *vendor = layer_fact(report_layer(p, scsi), FACT_VENDOR);
	const struct lcloud_fact *product = layer_fact(report_layer(p, scsi), FACT_PRODUCT);
	const char *src = "cloud:gcp-pd-16k";
	struct lcloud_layer *l;
	const struct lcloud_fact *lowest = layer_fact(report_layer(p, scsi), FACT_LOWEST_ALIGNED_BYTES);
	const struct lcloud_fact *kernel_off = layer_fact(report_layer(p, disk), FACT_ALIGNMENT_OFFSET);
	uint64_t physical = 0, first_block, granularity = 512;
	int cloud, r;

	if (!vendor || !product || !streq(vendor->string, "Google") || !streq(product->string, "PersistentDisk"))
		return 0;
	/* READ CAPACITY's physical block (needs root), else the kernel's view of it */
	if (layer_get_bytes(report_layer(p, scsi), FACT_PHYSICAL_BLOCK_BYTES, &physical) <= 0)
		(void)layer_get_bytes(report_layer(p, disk), FACT_PHYSICAL_BLOCK_SIZE, &physical);
	/* the promise's granularity: the logical block, 512 bytes (the smallest) when unknown */
	(void)layer_get_bytes(report_layer(p, disk), FACT_LOGICAL_BLOCK_SIZE, &granularity);
	/* where the first whole physical block starts: READ CAPACITY(16), else the kernel's alignment_offset */
	first_block = lowest && lowest->state == LCLOUD_FACT_PRESENT ? lowest->u64
		      : kernel_off && kernel_off->state == LCLOUD_FACT_PRESENT ? kernel_off->u64 : 0;
	cloud = cloud_layer_new(p, scsi, "gcp", "scsi:inquiry:vendor", "persistent-disk", "scsi:inquiry:product");
	if (cloud < 0)
		return cloud;
	l = report_layer(p, cloud);
	if (physical != 16384)
		return report_note(p, NOTE_CLOUD_GCP_PD_4K, cloud,
				   "Google Persistent Disk with a %" PRIu64 "-byte physical block: Google promises "
				   "16 KiB write atomicity only for disks created with a 16 KB physical block size",
				   physical);
	/*
	 * Google's physical blocks start at LBA 0. A disk whose READ CAPACITY
	 * says they start elsewhere (lowest aligned LBA) is not the disk the
	 * promise describes, and a write aligned to 16 KiB on it straddles two
	 * physical blocks: no promise.
	 */
	if (!(lowest && lowest->state == LCLOUD_FACT_PRESENT) && kernel_off && kernel_off->state != LCLOUD_FACT_PRESENT)
		return report_note(p, NOTE_CLOUD_GCP_PD_OFFSET, cloud,
				   "Google Persistent Disk: where its physical blocks start could not be read (READ "
				   "CAPACITY(16) needs root; the kernel's alignment_offset: %s), so whether a write aligned "
				   "to 16 KiB stays inside one is unknown and Google's promise is not claimed; run as root",
				   kernel_off->reason ? kernel_off->reason : "unreadable");
	if (first_block % physical)
		return report_note(p, NOTE_CLOUD_GCP_PD_OFFSET, cloud,
				   "Google Persistent Disk whose %" PRIu64 "-byte physical blocks start at byte %" PRIu64
				   " (%s), not at LBA 0: a write aligned to 16 KiB on it spans two physical blocks, and "
				   "Google's 16 KiB promise does not describe such a disk, so none is claimed",
				   physical, first_block % physical,
				   lowest && lowest->state == LCLOUD_FACT_PRESENT ? "READ CAPACITY(16) lowest aligned LBA"
										   : "the kernel's alignment_offset");
	{
		const struct cloud_promise pr = {
			.untorn_max = 16384,
			/* the logical block: any O_DIRECT write inside one physical block */
			.granularity = granularity,
			.boundary = 16384, /* the physical block */
			.aligned_to_size = false,
			.conditions = "writes inside one 16 KiB-aligned 16 KiB physical block of the disk (16 KiB "
				      "writes aligned to 16 KiB, or smaller ones that do not cross a physical block); O_DIRECT; "
				      "Google's recipe: ext4 with bigalloc and 16 KiB clusters, data files only",
			.source_title = "Google Cloud: Best practices for 16 KB persistent disk and MySQL",
			.evidence = src,
		};

		r = cloud_add_promise(l, &pr);
	}
	return r;
}
