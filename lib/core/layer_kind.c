/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kinds of layer by what they are (layer_kind.h): one list of the block
 * devices, so that the write guard, the signature probe, the verdict and
 * lcloudctl cannot disagree about which layers are devices.
 */
#include "layer_kind.h"

bool layer_kind_is_whole_device(enum lcloud_layer_kind kind)
{
	return kind == LCLOUD_LAYER_DM || kind == LCLOUD_LAYER_MD || kind == LCLOUD_LAYER_LOOP ||
	       kind == LCLOUD_LAYER_DISK;
}

bool layer_kind_is_block_device(enum lcloud_layer_kind kind)
{
	return kind == LCLOUD_LAYER_PARTITION || layer_kind_is_whole_device(kind);
}

bool layer_kind_describes_device(enum lcloud_layer_kind kind)
{
	return kind == LCLOUD_LAYER_NVME || kind == LCLOUD_LAYER_SCSI || kind == LCLOUD_LAYER_CLOUD;
}
