/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_PRIVATE_NODE_H
#define LCLOUD_PRIVATE_NODE_H

/*
 * Opening a block device that has no node in /dev (removed, or a /dev that
 * is not devtmpfs): a node is made where nobody else can reach it, opened,
 * and is gone once the descriptor is closed. The guard must still ask such
 * a device what it is bound to and whether it is claimed: a mounted loop
 * whose node was deleted holds a file system all the same.
 */
#include <sys/types.h>

/*
 * Opens block device DEV with FLAGS (O_RDONLY, maybe O_EXCL; O_CLOEXEC and
 * O_NONBLOCK are added) through a node of its own: in a tmpfs mounted
 * nowhere (fsopen/fsmount), else in a root-only folder made in /dev and
 * removed at once. Returns the descriptor or -errno (-EPERM without the
 * privilege to make device nodes; the open's own error, EBUSY for a claimed
 * device, otherwise).
 */
int private_node_open(dev_t dev, int flags);

#endif
