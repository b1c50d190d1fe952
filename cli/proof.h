/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the crash lab proved for a stack (proof.c), for advise to cite beside the verdict. */
#ifndef LCLOUDCTL_PROOF_H
#define LCLOUDCTL_PROOF_H

#include <stdint.h>

#include <lcloud/lcloud.h>

/* The proof for PAGE-byte InnoDB pages on this stack; NULL where the lab has not run it. */
const char *proof_for_innodb(const struct lcloud_probe *p, uint64_t page);
const char *proof_for_buffered(void);

#endif
