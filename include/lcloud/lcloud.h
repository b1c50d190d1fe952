/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * liblcloud: what Linux, the device stack and the file system say about
 * untorn (atomic) writes and I/O hints for a path.
 *
 * Conventions (see lcloud(7)):
 *  - functions that can fail return >= 0 on success and -errno on failure;
 *    out-parameters are left untouched on failure;
 *  - objects are opaque; *_free() accepts NULL;
 *  - getters return borrowed pointers, valid until the owning object is freed.
 */
#ifndef LCLOUD_LCLOUD_H
#define LCLOUD_LCLOUD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lcloud_ctx;
struct lcloud_probe;
struct lcloud_layer;
struct lcloud_fact;
struct lcloud_note;

/* ---- library and context ------------------------------------------------ */

const char *lcloud_version(void);

int lcloud_ctx_new(struct lcloud_ctx **ret_ctx);
void lcloud_ctx_free(struct lcloud_ctx *ctx);
/* Prefix for every /sys, /proc and /dev lookup ("" or NULL: the live system). */
int lcloud_ctx_set_sysroot(struct lcloud_ctx *ctx, const char *sysroot);
const char *lcloud_ctx_get_sysroot(const struct lcloud_ctx *ctx);
/* Why the last lcloud_queue_open() on CTX failed, for a person; "" when it did not. */
const char *lcloud_ctx_get_error(const struct lcloud_ctx *ctx);

/* ---- probing ------------------------------------------------------------- */

enum lcloud_target_type {
	LCLOUD_TARGET_UNKNOWN = 0,
	LCLOUD_TARGET_REGULAR = 1,   /* regular file */
	LCLOUD_TARGET_DIRECTORY = 2, /* probed through an O_TMPFILE file */
	LCLOUD_TARGET_DISK = 3,      /* whole block device */
	LCLOUD_TARGET_PARTITION = 4, /* partition block device */
	LCLOUD_TARGET_NVME_CHAR = 5, /* NVMe generic char device /dev/ngXnY */
};

/* Flags for lcloud_probe_path() and lcloud_probe_fd(). */
enum lcloud_probe_flags {
	/* Do not follow a final symlink; probe fails with -ELOOP on one. */
	LCLOUD_PROBE_NOFOLLOW = 1u << 0,
	/* Skip libblkid signature probing (it opens the block devices). */
	LCLOUD_PROBE_NO_SIGNATURES = 1u << 1,
	/* Skip the commands sent to devices (NVMe Identify, SCSI INQUIRY/VPD): sysfs and statx only. */
	LCLOUD_PROBE_NO_DEVICE_QUERY = 1u << 2,
	/*
	 * Files and directories: confirm statx's atomic write limits with live
	 * RWF_ATOMIC writes to a nameless O_TMPFILE file in the same directory
	 * (never the file itself), and one write that must be refused. The
	 * kernel's answer wins over statx. Needs write access there. (0.2)
	 */
	LCLOUD_PROBE_CONFIRM_ATOMIC = 1u << 3,
	/*
	 * Compute no verdicts (lcloud_probe_get_verdict() returns NULL) and skip
	 * what only they read: the block layer's split limits (fua,
	 * chunk_sectors, max_segments, max_segment_size, virt_boundary_mask), a
	 * loop device's size limit and direct I/O mode, and statx() of a block
	 * device node. For listings of many devices. (0.2)
	 */
	LCLOUD_PROBE_NO_VERDICT = 1u << 4,
};

int lcloud_probe_path(struct lcloud_ctx *ctx, const char *path, uint32_t flags,
		      struct lcloud_probe **ret_probe);
int lcloud_probe_fd(struct lcloud_ctx *ctx, int fd, uint32_t flags,
		    struct lcloud_probe **ret_probe);
/* Probe a block device by its kernel name ("sda1", "dm-0"); works under a sysroot. */
int lcloud_probe_blockdev(struct lcloud_ctx *ctx, const char *name, uint32_t flags,
			  struct lcloud_probe **ret_probe);
void lcloud_probe_free(struct lcloud_probe *probe);

const char *lcloud_probe_get_path(const struct lcloud_probe *probe);
const char *lcloud_probe_get_resolved_path(const struct lcloud_probe *probe);
enum lcloud_target_type lcloud_probe_get_target_type(const struct lcloud_probe *probe);
const char *lcloud_target_type_to_string(enum lcloud_target_type type);

enum lcloud_layer_kind {
	LCLOUD_LAYER_FILESYSTEM = 1, /* mount, statfs and statx of the target */
	LCLOUD_LAYER_PARTITION = 2,  /* a partition of the disk below it */
	LCLOUD_LAYER_DM = 3,         /* device-mapper device */
	LCLOUD_LAYER_MD = 4,         /* md (software RAID) device */
	LCLOUD_LAYER_LOOP = 5,       /* loop device over a file */
	LCLOUD_LAYER_DISK = 6,       /* a disk: the bottom of the stack */
	LCLOUD_LAYER_NVME = 7,       /* what an NVMe namespace's device says (Identify, hints) */
	LCLOUD_LAYER_CLOUD = 8,      /* a cloud provider's documented promise for the device */
	LCLOUD_LAYER_SCSI = 9,       /* what a SCSI disk says (INQUIRY, VPD, READ CAPACITY) */
};

/* Layers, top (filesystem) first, then the block devices below it. */
unsigned int lcloud_probe_get_layer_count(const struct lcloud_probe *probe);
const struct lcloud_layer *lcloud_probe_get_layer(const struct lcloud_probe *probe,
						  unsigned int index);
unsigned int lcloud_probe_get_note_count(const struct lcloud_probe *probe);
const struct lcloud_note *lcloud_probe_get_note(const struct lcloud_probe *probe,
						unsigned int index);

/*
 * Shortcut: the numeric fact NAME of the first layer of KIND.
 * -ENOENT no such layer or fact, -ENODATA not provided by this kernel or
 * device, -EACCES needs privileges, -EIO could not be read, -EINVAL not a number.
 */
int lcloud_probe_get_u64(const struct lcloud_probe *probe, enum lcloud_layer_kind kind,
			 const char *name, uint64_t *ret_value);

/* ---- layers -------------------------------------------------------------- */


enum lcloud_layer_kind lcloud_layer_get_kind(const struct lcloud_layer *layer);
const char *lcloud_layer_kind_to_string(enum lcloud_layer_kind kind);
/* "xfs" for a file system, the kernel name ("nvme0n1p2", "dm-0") otherwise. */
const char *lcloud_layer_get_name(const struct lcloud_layer *layer);
/* Index of the layer this one sits under, -1 for the top layer. */
int lcloud_layer_get_parent(const struct lcloud_layer *layer);
/*
 * A loop device with direct I/O: the probe of its backing file or device,
 * followed as a target of its own (the verdict's plain_direct rests on it);
 * NULL for any other layer, on kernels before Linux 7.3, or where it could
 * not be followed (a loop-backing-not-followed note says why). Owned by
 * the outer probe. (0.5)
 */
const struct lcloud_probe *lcloud_layer_get_backing_probe(const struct lcloud_layer *layer);
unsigned int lcloud_layer_get_fact_count(const struct lcloud_layer *layer);
const struct lcloud_fact *lcloud_layer_get_fact(const struct lcloud_layer *layer,
						unsigned int index);
const struct lcloud_fact *lcloud_layer_find_fact(const struct lcloud_layer *layer,
						 const char *name);

/* ---- facts --------------------------------------------------------------- */

enum lcloud_fact_type {
	LCLOUD_FACT_U64 = 1,
	LCLOUD_FACT_BOOL = 2,
	LCLOUD_FACT_STRING = 3,
};

enum lcloud_fact_unit {
	LCLOUD_UNIT_NONE = 0,    /* a count, a flag or text */
	LCLOUD_UNIT_BYTES = 1,
	LCLOUD_UNIT_KIB = 2,     /* sysfs *_kb attributes */
	LCLOUD_UNIT_SECTORS = 3, /* 512-byte sectors */
};

enum lcloud_fact_state {
	LCLOUD_FACT_PRESENT = 0,
	LCLOUD_FACT_NOT_PROVIDED = 1, /* this kernel, file system or device has no such value */
	LCLOUD_FACT_NEEDS_ROOT = 2,   /* reading it needs privileges the caller lacks */
	LCLOUD_FACT_UNREADABLE = 3,   /* present but reading or parsing it failed */
};

const char *lcloud_fact_get_name(const struct lcloud_fact *fact);
enum lcloud_fact_type lcloud_fact_get_type(const struct lcloud_fact *fact);
enum lcloud_fact_unit lcloud_fact_get_unit(const struct lcloud_fact *fact);
enum lcloud_fact_state lcloud_fact_get_state(const struct lcloud_fact *fact);
/* Value of a U64 or BOOL fact; 0 when the fact is not PRESENT. */
uint64_t lcloud_fact_get_u64(const struct lcloud_fact *fact);
/* Value of a STRING fact; NULL when not PRESENT or not a string. */
const char *lcloud_fact_get_string(const struct lcloud_fact *fact);
/* Where it came from: "sysfs:queue/physical_block_size", "statx", ... */
const char *lcloud_fact_get_source(const struct lcloud_fact *fact);
/* Why a fact is not PRESENT, for a person; NULL when it is. */
const char *lcloud_fact_get_reason(const struct lcloud_fact *fact);

/* ---- notes --------------------------------------------------------------- */

enum lcloud_note_severity {
	LCLOUD_NOTE_INFO = 0,
	LCLOUD_NOTE_WARNING = 1,   /* something a user should fix or know (misalignment) */
	LCLOUD_NOTE_NEEDS_ROOT = 2,/* part of the probe was skipped for lack of privileges */
	LCLOUD_NOTE_ERROR = 3,     /* part of the probe failed; the rest is still valid */
};

enum lcloud_note_severity lcloud_note_get_severity(const struct lcloud_note *note);
const char *lcloud_note_severity_to_string(enum lcloud_note_severity severity);
/* Short stable identifier, e.g. "partition-misaligned", "needs-root". */
const char *lcloud_note_get_code(const struct lcloud_note *note);
/* Layer index the note is about, -1 for the probe as a whole. */
int lcloud_note_get_layer(const struct lcloud_note *note);
const char *lcloud_note_get_message(const struct lcloud_note *note);

/* ---- verdict: is an aligned N-byte write untorn, on which path, and why -- */

struct lcloud_verdict;

enum lcloud_io_path {
	LCLOUD_PATH_BEST = 0,         /* for lcloud_probe_check(): the path that allows most */
	LCLOUD_PATH_RWF_ATOMIC = 1,   /* O_DIRECT + pwritev2(RWF_ATOMIC): the kernel guarantees it */
	LCLOUD_PATH_PASSTHROUGH = 2,  /* NVMe commands sent by liblcloud, which enforces the limits */
	LCLOUD_PATH_PLAIN_DIRECT = 3, /* aligned O_DIRECT writes: only a device or provider promise */
	LCLOUD_PATH_BUFFERED = 4,     /* page cache writes: never guaranteed */
};

const char *lcloud_io_path_to_string(enum lcloud_io_path path);
/* "rwf_atomic", "passthrough", "plain_direct", "buffered" (or "best"); -EINVAL otherwise. */
int lcloud_io_path_from_string(const char *name, enum lcloud_io_path *ret_path);

/* The verdict for one path; NULL for LCLOUD_PATH_BEST or an unknown path. */
const struct lcloud_verdict *lcloud_probe_get_verdict(const struct lcloud_probe *probe,
						      enum lcloud_io_path path);
enum lcloud_io_path lcloud_verdict_get_path(const struct lcloud_verdict *verdict);
/* Largest power-of-two size that is untorn on this path; 0 when none is. */
uint64_t lcloud_verdict_get_max_untorn_bytes(const struct lcloud_verdict *verdict);
/* Smallest size the path accepts (RWF_ATOMIC's unit minimum); 0 when there is none. */
uint64_t lcloud_verdict_get_min_untorn_bytes(const struct lcloud_verdict *verdict);
/* Offset alignment a write needs; 0 means natural alignment (a multiple of its own size). */
uint64_t lcloud_verdict_get_alignment(const struct lcloud_verdict *verdict);
/* Writes must not cross offset + k * boundary (0: no boundary). Offsets are in the target. */
uint64_t lcloud_verdict_get_boundary(const struct lcloud_verdict *verdict);
uint64_t lcloud_verdict_get_boundary_offset(const struct lcloud_verdict *verdict);
unsigned int lcloud_verdict_get_reason_count(const struct lcloud_verdict *verdict);
/* Why, for a person; and the evidence it rests on ("statx", "nvme:id-ns:nawupf", ...). */
const char *lcloud_verdict_get_reason(const struct lcloud_verdict *verdict, unsigned int index);
const char *lcloud_verdict_get_reason_evidence(const struct lcloud_verdict *verdict, unsigned int index);

/* The answer to "is it untorn?" (0.2). Compare with these names, never with "> 0". */
enum lcloud_answer {
	LCLOUD_ANSWER_NO = 0,      /* not untorn: the evidence says so */
	LCLOUD_ANSWER_UNTORN = 1,  /* untorn: the evidence proves it */
	LCLOUD_ANSWER_UNKNOWN = 2, /* the evidence could not be read: neither; treat as not untorn */
};
/* "no", "untorn", "unknown". */
const char *lcloud_answer_to_string(enum lcloud_answer answer);
/* The answer for an aligned write of SIZE bytes on this verdict's path. */
enum lcloud_answer lcloud_verdict_check_size(const struct lcloud_verdict *verdict, uint64_t size);
/*
 * rwf_atomic: the largest size the device writes atomically itself; larger
 * untorn sizes are done by the file system in software (XFS: copy on write,
 * much slower). 0 on the other paths, or when no size is known to be the
 * device's own. (0.2)
 */
uint64_t lcloud_verdict_get_hardware_max_bytes(const struct lcloud_verdict *verdict);
/*
 * Why sizes above the largest proved one could not be decided (evidence that
 * needs root, a directory that could not be written, ...); NULL when the
 * verdict rests on everything it needs.
 */
const char *lcloud_verdict_get_unknown_reason(const struct lcloud_verdict *verdict);
/*
 * Sizes between the largest proved one and the smallest are not always all
 * untorn: where the block layer may merge a write with its neighbours into
 * a command the device does not keep whole, sizes above *RET_ABOVE and below
 * *RET_BELOW are not, while sizes up to *RET_ABOVE (a block every command
 * keeps whole) and *RET_BELOW itself (a write no merge can grow) are.
 * Returns 1 with both set (either may be NULL), 0 when there is no such gap,
 * -EINVAL. (0.5)
 */
int lcloud_verdict_get_merge_gap(const struct lcloud_verdict *verdict, uint64_t *ret_above, uint64_t *ret_below);

/*
 * Is an aligned write of SIZE bytes untorn on PATH (LCLOUD_PATH_BEST: on any
 * path, the kernel's guarantee preferred)? Returns LCLOUD_ANSWER_UNTORN (1),
 * LCLOUD_ANSWER_NO (0), LCLOUD_ANSWER_UNKNOWN (2) when the evidence could not
 * be read, -EINVAL for a SIZE that is 0 or not a power of two, -ERANGE for a
 * SIZE larger than the device or file system. RET_PATH gets the path that
 * decided (may be NULL); WHY gets one line saying why either way (may be NULL).
 * Programs built against liblcloud 0.1 get 0 where this returns 2.
 */
int lcloud_probe_check(const struct lcloud_probe *probe, enum lcloud_io_path path, uint64_t size,
		       enum lcloud_io_path *ret_path, char *why, size_t why_size);

/*
 * May a write of SIZE bytes at OFFSET (in the target) go on this verdict's
 * path untorn? Checks the size range, the alignment and the boundary.
 * Returns 1 yes, 0 no (WHY says which rule it breaks; may be NULL), -EINVAL.
 */
int lcloud_verdict_allows(const struct lcloud_verdict *verdict, uint64_t offset, uint64_t size,
			  char *why, size_t why_size);

/* ---- one call for storage engines ------------------------------------------ */

/*
 * How to write PAGE_SIZE-byte pages to the open data file FD so that they are
 * untorn. Set ->size to sizeof(struct lcloud_page_plan) before the call;
 * later versions may grow the structure at its end.
 */
struct lcloud_page_plan {
	uint32_t size;             /* in: sizeof(struct lcloud_page_plan) */
	uint32_t path;             /* enum lcloud_io_path; 0 when no path makes pages untorn */
	uint32_t open_flags;       /* flags the data file needs: O_DIRECT for the direct paths */
	uint32_t rwf_flags;        /* pwritev2() flags per write: RWF_ATOMIC on rwf_atomic */
	uint64_t alignment;        /* file offset and buffer alignment for each page write */
	uint64_t max_untorn_bytes; /* largest untorn write on that path */
	char reason[512];          /* why, either way */
};

/* Returns 1 when page writes are untorn (the plan says how), 0 when not, -errno on error. */
int lcloud_plan_page_writes(int fd, uint64_t page_size, struct lcloud_page_plan *ret_plan);

/* ---- hinted, aligned direct I/O ------------------------------------------- */

struct lcloud_queue;

enum lcloud_backend {
	LCLOUD_BACKEND_AUTO = 0,        /* passthrough for NVMe namespaces the caller may use, else io_uring */
	LCLOUD_BACKEND_PASSTHROUGH = 1, /* io_uring NVMe passthrough on /dev/ngXnY */
	LCLOUD_BACKEND_IO_URING = 2,    /* io_uring reads and writes on an O_DIRECT descriptor */
	LCLOUD_BACKEND_SYNC = 3,        /* preadv2()/pwritev2(), where io_uring is not available */
};

/* Flags for lcloud_queue_open(). */
enum lcloud_queue_flags {
	LCLOUD_QUEUE_WRITE = 1u << 0, /* open for writing (reads only without it) */
	/* write to a device that carries a file system or partition table (never to storage in use) */
	LCLOUD_QUEUE_FORCE = 1u << 1,
	/*
	 * the regular file is the caller's own (a storage engine's data file): other processes may have it
	 * open (since 0.5.0; a loop device, a mount or swap over it is still refused)
	 */
	LCLOUD_QUEUE_OWN_FILE = 1u << 2,
};

/* What an I/O is for; the queue maps it onto what the target offers. */
enum lcloud_write_class {
	LCLOUD_CLASS_NONE = 0,
	LCLOUD_CLASS_DATA = 1,
	LCLOUD_CLASS_METADATA = 2,
	LCLOUD_CLASS_JOURNAL = 3,
	LCLOUD_CLASS_BACKGROUND = 4, /* backups, compaction: nobody waits */
};

enum lcloud_read_kind {
	LCLOUD_READ_NONE = 0,
	LCLOUD_READ_SYNC = 1,      /* a caller is waiting */
	LCLOUD_READ_AHEAD = 2,     /* speculative, sequential */
};

enum lcloud_lifetime {
	LCLOUD_LIFE_NONE = 0,
	LCLOUD_LIFE_SHORT = 1,
	LCLOUD_LIFE_MEDIUM = 2,
	LCLOUD_LIFE_LONG = 3,
	LCLOUD_LIFE_EXTREME = 4,
};

enum lcloud_io_flags {
	LCLOUD_IO_ATOMIC = 1u << 0, /* untorn or refused: never silently non-atomic */
	LCLOUD_IO_FUA = 1u << 1,    /* durable when it completes */
};

struct lcloud_hint {
	uint8_t write_class; /* enum lcloud_write_class */
	uint8_t read_kind;   /* enum lcloud_read_kind */
	uint8_t lifetime;    /* enum lcloud_lifetime */
	uint8_t reserved;
	uint32_t flags;      /* enum lcloud_io_flags */
	uint32_t group;      /* blocks that belong together (an inode, an object); 0 none */
	uint32_t reserved2;
};

struct lcloud_completion {
	uint64_t user_data;
	int32_t result;       /* bytes transferred, or -errno */
	uint16_t nvme_status; /* passthrough: the NVMe status (SCT << 8 | SC), 0 on success */
	uint16_t reserved;
};

/* Opens PATH (a file, a block device or partition, /dev/ngXnY) for DEPTH I/Os in flight. */
int lcloud_queue_open(struct lcloud_ctx *ctx, const char *path, uint32_t depth, enum lcloud_backend backend,
		      uint32_t flags, struct lcloud_queue **ret_queue);
void lcloud_queue_free(struct lcloud_queue *queue);
enum lcloud_backend lcloud_queue_get_backend(const struct lcloud_queue *queue);
const char *lcloud_backend_to_string(enum lcloud_backend backend);
/* The probe the queue was opened with (its verdict decides what is atomic). */
const struct lcloud_probe *lcloud_queue_get_probe(const struct lcloud_queue *queue);
/* Why the last call on this queue failed, for a person; "" when it did not. */
const char *lcloud_queue_get_error(const struct lcloud_queue *queue);
/*
 * The file or block device the queue guarded and claimed (borrowed: valid
 * until lcloud_queue_free(); do not close it), or -EBADF for NULL: for
 * passthrough and generic nodes, the namespace's block device. For
 * fdatasync() and for duplicating (F_DUPFD_CLOEXEC), never opening it by
 * its name again: a new open of a watched regular file is a new user, and
 * stops the queue.
 */
int lcloud_queue_get_fd(const struct lcloud_queue *queue);
/*
 * Whether the queue's storage is still its own (since 0.5.0): 0 while it is
 * (and for a queue opened for reading), -EBUSY once another program opened
 * the file or a device or mount over the same storage appeared and the
 * queue stopped (lcloud_queue_get_error() says why), -EINVAL for NULL.
 * Every submission asks this itself; a program that writes the queue's
 * descriptor on its own calls it before each such write, with none of
 * those writes in progress, and when idle, so that a stopped queue lets go
 * of its lease and claims.
 */
int lcloud_queue_check_storage(struct lcloud_queue *queue);
/*
 * Whether a write through QUEUE can land in the file or block device open
 * at FD, by any path (the same file; a loop device over it, over another
 * loop device, at an offset, or a partition of one; a device below it):
 * 1 yes, 0 no, -EACCES when part of either could not be followed (not known
 * to be apart), -errno otherwise. For a program that must not write over
 * its own inputs.
 */
int lcloud_queue_reaches_file(struct lcloud_ctx *ctx, const struct lcloud_queue *queue, int fd);
/*
 * The write guard's answer for the regular file or block device open at FD
 * (read-only or O_PATH will do), for a program that writes without a queue
 * or replaces a file by renaming another over its name: is its storage in
 * use, by any name (a loop device's backing file, also through an overlay
 * layer; a file-backed mount's source; a swap file; a device mounted, held
 * or claimed, in any mount namespace in view)? 0 no, -EBUSY yes, -EACCES
 * when that cannot be told (lcloud_ctx_get_error() says why), -EBADFD for
 * another kind of file, -errno. FLAGS must be 0. Nothing is claimed.
 */
int lcloud_guard_check(struct lcloud_ctx *ctx, int fd, uint32_t flags);

/*
 * Queue a write or read of LEN bytes at OFFSET (in the target) from BUF.
 * An atomic write the verdict would not call untorn on this backend's path
 * is refused here, before anything is submitted: -EINVAL (size, alignment,
 * boundary) or -EOPNOTSUPP (the path has no atomic writes). -EAGAIN when the
 * queue is full. HINT may be NULL.
 */
int lcloud_queue_prep_write(struct lcloud_queue *queue, const void *buf, uint64_t len, uint64_t offset,
			    const struct lcloud_hint *hint, uint64_t user_data);
int lcloud_queue_prep_read(struct lcloud_queue *queue, void *buf, uint64_t len, uint64_t offset,
			   const struct lcloud_hint *hint, uint64_t user_data);
/* Submits what is queued; returns how many, or -errno. */
int lcloud_queue_submit(struct lcloud_queue *queue);
/* Both in one step (one system call on the io_uring backends); returns how many were reaped. */
int lcloud_queue_submit_and_reap(struct lcloud_queue *queue, struct lcloud_completion *out, uint32_t max,
				 uint32_t min);
/* Reaps up to MAX completions, waiting for at least MIN; returns how many, or -errno. */
int lcloud_queue_reap(struct lcloud_queue *queue, struct lcloud_completion *out, uint32_t max, uint32_t min);
/* Synchronous convenience: one I/O, submitted and reaped. Returns bytes, -errno; *ret_nvme_status may be NULL. */
int64_t lcloud_queue_write(struct lcloud_queue *queue, const void *buf, uint64_t len, uint64_t offset,
			   const struct lcloud_hint *hint, uint16_t *ret_nvme_status);
int64_t lcloud_queue_read(struct lcloud_queue *queue, void *buf, uint64_t len, uint64_t offset,
			  const struct lcloud_hint *hint, uint16_t *ret_nvme_status);
/* Registers buffers for the io_uring backends (fewer page pins per I/O). */
int lcloud_queue_register_buffers(struct lcloud_queue *queue, void *const *bufs, const uint64_t *lens, uint32_t n);
/* What HINT becomes on this queue's target, for a person ("nvme dsm af=4 al=3; fdp pid 1"). */
int lcloud_queue_describe_hint(const struct lcloud_queue *queue, const struct lcloud_hint *hint, int is_write,
			       char *buf, size_t size);
/* A readable name for an NVMe status ("LBA Out of Range"). */
const char *lcloud_nvme_status_to_string(uint16_t status);

/* Why a write's class or group lands where it does, or is dropped (LCLOUD_0.5). */
enum lcloud_placement_basis {
	LCLOUD_PLACEMENT_NOT_ASKED = 0,    /* the write has no class and no group */
	LCLOUD_PLACEMENT_BY_USE = 1,       /* on a handle the device states is for the write's class */
	LCLOUD_PLACEMENT_BY_NUMBER = 2,    /* the device states no uses: by class (or group) number */
	LCLOUD_PLACEMENT_NO_HANDLE = 3,    /* dropped: the device states its handles' uses, none is the class's */
	LCLOUD_PLACEMENT_NO_PLACEMENT = 4, /* dropped: no FDP on the device, or no write streams on this path */
	LCLOUD_PLACEMENT_BACKEND = 5,      /* dropped: this backend sends no write stream (sync) */
	LCLOUD_PLACEMENT_UNMAPPED = 6,     /* dropped: the class's handle is not reachable from this namespace */
};

/*
 * Where a write with a hint lands on the queue's device: the write stream
 * the kernel gets, the FDP placement identifier the device receives and the
 * reclaim unit handle behind it. Set ->size to sizeof(struct
 * lcloud_placement) before the call; later versions may grow it at its end.
 */
struct lcloud_placement {
	uint32_t size;        /* in: sizeof(struct lcloud_placement) */
	uint32_t basis;       /* enum lcloud_placement_basis */
	int32_t write_stream; /* the io_uring write stream (kernel path); -1: none */
	int32_t placement_id; /* the placement identifier the device receives (DSPEC); -1: none or not known */
	int32_t handle;       /* the reclaim unit handle it reaches; -1: none or not known */
	uint32_t use;         /* what the device states that handle is for (enum lcloud_write_class); 0: nothing */
};

/* Where a write with HINT lands on QUEUE's device, and why (lcloud_queue_describe_hint() says it in words). */
int lcloud_queue_get_placement(const struct lcloud_queue *queue, const struct lcloud_hint *hint,
			       struct lcloud_placement *ret_placement);
/* "by_use", "by_number", "no_handle"... (the enumerator's name, lowercase); NULL for an unknown basis. */
const char *lcloud_placement_basis_to_string(enum lcloud_placement_basis basis);

/* ---- enumeration ----------------------------------------------------------- */

/*
 * Calls CB for every block device the kernel lists (disks, then their
 * partitions), in sysfs order. A non-zero return from CB stops the walk and is
 * returned. Returns 0 or -errno.
 */
typedef int (*lcloud_blockdev_cb)(const char *name, void *userdata);
int lcloud_blockdev_foreach(struct lcloud_ctx *ctx, lcloud_blockdev_cb cb, void *userdata);

/* Flags for lcloud_blockdev_foreach_flags(). */
enum lcloud_blockdev_flags {
	/* also loop devices with no file attached (lsblk leaves them out too) */
	LCLOUD_BLOCKDEV_UNBOUND_LOOPS = 1u << 0,
};
/*
 * As lcloud_blockdev_foreach(), but unbound loop devices are left out unless
 * FLAGS has LCLOUD_BLOCKDEV_UNBOUND_LOOPS. -EINVAL for unknown flags. (0.2)
 */
int lcloud_blockdev_foreach_flags(struct lcloud_ctx *ctx, uint32_t flags, lcloud_blockdev_cb cb,
				  void *userdata);

#ifdef __cplusplus
}
#endif

#endif /* LCLOUD_LCLOUD_H */
