/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The medium's side of a namespace: every write that reaches a backing file
 * (a write, a cached write destaged, Write Zeroes, a deallocation, what a
 * power cut leaves) passes ns_write_begin(), which asks whether the file is
 * still the target's own (t->storage_check: lcloud-target's watch, ns_watch.c;
 * none in the fuzz harness) and holds the namespace's write lock until
 * ns_write_end(), so that the watch never finds a write of the target's in
 * progress when it lets the storage go. A namespace whose storage gained a
 * user is write protected from then on; reads continue.
 */
#ifndef LCLOUD_TARGET_NS_GUARD_H
#define LCLOUD_TARGET_NS_GUARD_H

#include <stdbool.h>
#include <stdint.h>

struct target;

/* 0 with the namespace's write lock held; -EROFS (no lock held) when it is write protected. */
int ns_write_begin(struct target *t, unsigned int ns);
void ns_write_end(struct target *t, unsigned int ns);
/* Has the namespace's storage gained a user (its writes refused from then on)? */
bool ns_write_protected(struct target *t, unsigned int ns);
/*
 * Between begin and end: LEN bytes of BUF at OFFSET of the backing file,
 * durable when written if the target has no volatile cache (RWF_DSYNC: the
 * descriptor is the guarded one, duplicated, and takes no O_DSYNC). 0 or -errno.
 */
int ns_pwrite(struct target *t, unsigned int ns, const void *buf, uint64_t len, uint64_t offset);
/* After a change made by fallocate(): durable now when there is no volatile cache. 0 or -errno. */
int ns_settle(struct target *t, unsigned int ns);

#endif
