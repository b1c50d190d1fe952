/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_GUARD_H
#define LCLOUD_GUARD_H

/*
 * The write guard's one question, asked of an open descriptor: can a write
 * through it land on storage that something else uses? Storage is known by
 * its identity (a block device's bytes, a file's inode, an overlay file's
 * layer file), never by a name: a mounted file system (from a device or a
 * file, in any mount namespace that can be seen), an active swap area, a
 * device claimed by dm, md, an ext4 journal or a program, and every other
 * device whose bytes overlap the target's. The guard decides and returns
 * the decision; it never writes into its caller's state. The queue, the
 * CLI's output files and lcloud-target act on it.
 *
 * guard_decide() may be called again on the same descriptor (a long-running
 * writer checking that its storage gained no user): pass the decision it
 * returned before, and the devices it claimed then count as the caller's own.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct lcloud_ctx;
struct lcloud_probe;

/* How to decide (guard_decide's HOW); more may be added, so callers pass only these. */
enum guard_how {
	/* what the storage holds (a signature, a partition table) is the caller's to lose; never who uses it */
	GUARD_FORCE = 1u << 0,
	/* only who uses the storage, not what it holds: a writer checking again while it writes */
	GUARD_USE_ONLY = 1u << 1,
	/* decide, but keep no claim on the free devices that share the storage (nothing is written through FD) */
	GUARD_NO_CLAIMS = 1u << 2,
	/*
	 * a regular file's layer files (an overlay file's) are in use while a process has one open or mapped by
	 * its own name: a write lease on FD is the overlay inode's and does not see them (as /proc shows them)
	 */
	GUARD_LAYER_HOLDERS = 1u << 3,
};

/* Why a write is refused; a program tests this, a person reads the reason. */
enum guard_refusal {
	GUARD_ALLOWED = 0,
	GUARD_MOUNTED = 1,   /* a file system uses the storage: mounted from a device, a loop, or the file itself */
	GUARD_SWAP = 2,      /* an active swap area */
	GUARD_HELD = 3,      /* claimed by someone: dm or md, an ext4 journal, a program's O_EXCL open */
	GUARD_CONTENTS = 4,  /* it holds a file system, RAID or partition table signature (GUARD_FORCE overrides) */
	GUARD_UNKNOWN = 5,   /* whether it is in use cannot be told from here */
	GUARD_NO_DEVICE = 6, /* nothing behind the target that the guard knows how to check */
};

/* Room for a mount point or two of PATH_MAX and what holds a device. */
#define GUARD_REASON_MAX 8192

/* Devices the guard opened with O_EXCL so that nobody mounts them while the caller writes. */
struct guard_claims {
	int *fds;
	dev_t *devs;
	bool *may_share; /* claimed because whether it shares the storage could not be told, not because it does */
	unsigned int n;
};

struct guard_decision {
	int error;                     /* 0 (allowed), or the refusal's -errno: -EBUSY, -EACCES, -ENODEV, -ENOMEM */
	enum guard_refusal refusal;    /* GUARD_ALLOWED exactly when ERROR is 0 */
	char reason[GUARD_REASON_MAX]; /* for a person, "" when allowed */
	struct guard_claims claims;    /* the caller's until guard_decision_release() */
};

/* A decision nothing has been decided in yet (or memset it to 0). */
#define GUARD_DECISION_INIT { .error = 0 }

/*
 * Decides whether writing through FD (a regular file or a block device,
 * opened by the caller; -1 for a captured tree under the context's sysroot,
 * where PROBE's device number names the target) is safe. PROBE is the
 * probe of FD: the stack below the target and, unless HOW has GUARD_FORCE
 * or GUARD_USE_ONLY, its signatures. Fills *D (ERROR, REFUSAL, REASON) and
 * adds the claims it takes to D->claims, which it keeps from an earlier call
 * (those devices are the caller's, not another user). Returns D->error.
 */
int guard_decide(const struct lcloud_ctx *ctx, int fd, const struct lcloud_probe *probe, uint32_t how,
		 struct guard_decision *d);

/* Closes the claims and empties D; NULL and an empty decision are fine. */
void guard_decision_release(struct guard_decision *d);

/* "mounted", "swap", "held", "contents", "unknown", "no-device"; "allowed". */
const char *guard_refusal_to_string(enum guard_refusal r);

#endif
