/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What each kind of layer is, said once. The stack's block devices
 * (partition, dm, md, loop, disk) have device nodes, signatures and
 * holders; the whole ones among them (all but a partition) have their own
 * request queue and its split limits; the NVMe, SCSI and cloud layers only
 * describe the disk above them. Pure functions of the kind: lcloudctl
 * builds this file in too.
 */
#ifndef LCLOUD_LAYER_KIND_H
#define LCLOUD_LAYER_KIND_H

#include <stdbool.h>

#include "lcloud/lcloud.h"

/* Partition, dm, md, loop or disk. */
bool layer_kind_is_block_device(enum lcloud_layer_kind kind);
/* dm, md, loop or disk: a block device with its own request queue, which a partition shares. */
bool layer_kind_is_whole_device(enum lcloud_layer_kind kind);
/* NVMe, SCSI or cloud: what a disk says or is promised, not a device of its own. */
bool layer_kind_describes_device(enum lcloud_layer_kind kind);

#endif
