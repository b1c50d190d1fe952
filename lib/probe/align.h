/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_ALIGN_H
#define LCLOUD_ALIGN_H

#include "report.h"

/* Alignment every file system block and database page needs on a device. */
#define ALIGN_PAGE_BYTES 4096u

/*
 * Checks where partitions, dm targets and loop offsets start on the device
 * below them, against its physical block size, atomic write unit and boundary
 * and the 4 KiB page, and adds a warning note for each misalignment, with the
 * numbers. Reads only the report's facts.
 */
int align_check_stack(struct lcloud_probe *p);

#endif
