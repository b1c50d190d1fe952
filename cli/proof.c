/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What liblcloud's crash lab has proved, for advise to cite: the stacks the
 * proof matrix (tests/vm/matrix.md) and the MariaDB lab ran under the
 * device's own write log. A stack is recognised from the probe's layers; the
 * verdict, not this list, decides what is untorn.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "proof.h"
#include "cli_facts.h"

/* Fact ID of L when it was read, else 0: no proof rests on a fact not read. */
static uint64_t u64_of(const struct lcloud_layer *l, enum fact_id id)
{
	uint64_t v;

	return cli_fact_u64(l, id, &v) > 0 ? v : 0;
}

/*
 * InnoDB's 16 KiB pages written with O_DIRECT were proved on these stacks
 * only: an NVMe namespace with a 16 KiB power-fail atomic size, queue/nomerges
 * 2, and a file system that allocates whole pages.
 */
static const struct innodb_proof {
	const char *fstype; /* the file system */
	enum fact_id unit_fact; /* the fact that must be 16 KiB */
	const char *text;
} innodb_proofs[] = {
	{ "ext4", FACT_CLUSTER_SIZE,
	  "proved in liblcloud's crash lab on this kind of stack (ext4 with 16 KiB bigalloc clusters on an NVMe "
	  "namespace with a 16 KiB power-fail atomic size, queue/nomerges 2): the proof matrix's row "
	  "ext4-bigalloc-16k-nomerges and the MariaDB lab, where 18973 InnoDB page writes with "
	  "innodb_doublewrite=OFF reached the device and none could tear, and MariaDB's crash recovery brought "
	  "crash images cut in the middle of the load back sound (tests/vm/matrix.md and the section "
	  "'MariaDB without the doublewrite buffer, proved' of docs/GUIDE.md in liblcloud's source)" },
	{ "xfs", FACT_BLOCK_SIZE,
	  "proved in liblcloud's crash lab on this kind of stack (XFS with 16 KiB blocks on an NVMe namespace "
	  "with a 16 KiB power-fail atomic size, queue/nomerges 2): the proof matrix's row xfs-16k-nomerges and "
	  "the MariaDB lab, where 10358 InnoDB page writes with innodb_doublewrite=OFF reached the device and none "
	  "could tear, and MariaDB's crash recovery brought crash images cut in the middle of the load back sound "
	  "(tests/vm/matrix.md and the section 'MariaDB without the doublewrite buffer, proved' "
	  "of docs/GUIDE.md in liblcloud's source)" },
};

const char *proof_for_innodb(const struct lcloud_probe *p, uint64_t page)
{
	const struct lcloud_layer *fs = cli_first_layer(p, LCLOUD_LAYER_FILESYSTEM);
	const struct lcloud_layer *disk = cli_first_layer(p, LCLOUD_LAYER_DISK);
	const struct lcloud_layer *nvme = cli_first_layer(p, LCLOUD_LAYER_NVME);

	if (page != 16384 || !fs || !disk || !nvme || cli_first_layer(p, LCLOUD_LAYER_DM) ||
	    cli_first_layer(p, LCLOUD_LAYER_MD))
		return NULL;
	/* the verdict's own model (lib/power_fail.c, the one the lab proves) must keep the page whole here */
	if (lcloud_verdict_check_size(lcloud_probe_get_verdict(p, LCLOUD_PATH_PLAIN_DIRECT), page) != LCLOUD_ANSWER_UNTORN)
		return NULL;
	/* the proved stacks ran with merges off: the same stack shape, not only the same answer */
	if (u64_of(disk, FACT_NOMERGES) != 2)
		return NULL;
	for (size_t i = 0; i < sizeof(innodb_proofs) / sizeof(innodb_proofs[0]); i++)
		if (strcmp(lcloud_layer_get_name(fs), innodb_proofs[i].fstype) == 0 &&
		    u64_of(fs, innodb_proofs[i].unit_fact) == 16384)
			return innodb_proofs[i].text;
	return NULL;
}

const char *proof_for_buffered(void)
{
	return "liblcloud's crash lab found buffered page writes that a power cut can tear on every stack it ran, "
	       "even on devices that keep 16 KiB whole: writeback merges and splits pages into commands of 8 KiB to "
	       "1 MiB (the buffered rows of tests/vm/matrix.md in liblcloud's source)";
}
