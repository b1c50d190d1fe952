/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every rule of lcloud(7)'s VERDICT section, each on the smallest stack
 * that shows it, built by hand (stack_builder.h) rather than captured: the
 * verdict is a function of typed layers, facts and note codes, and these
 * tests hold it to the rules as the man page states them. Expected sizes
 * come from each rule's arithmetic, worked out beside the test; the reason
 * must name the rule (its evidence or its words).
 *
 * Most stacks sit on one NVMe namespace (4 KiB blocks, power-fail atomic
 * writes up to 16 KiB from NAWUPF, no boundary) whose queue splits and
 * merges nothing (sb_queue: 1 MiB max_sectors_kb, nomerges 2, 256
 * segments); a test changes only what its rule reads. Every built probe
 * states 4 KiB memory pages (SB_PAGE_SIZE), whatever the machine has.
 *
 * The map, paragraph of lcloud(7) VERDICT -> test(s):
 *
 * "three answers ... unknown is never a yes"
 *      unread_evidence_is_unknown_never_no_limit, unknown_never_hides_a_no
 * lcloud_probe_check answers for one size, preferring the kernel's guarantee
 *      check_prefers_the_kernels_guarantee
 * rwf_atomic
 *   statx of the file, or of the device node rwf_atomic_statx_of_the_file,
 *                                            rwf_atomic_statx_of_the_device_node
 *   queue limits of a device without statx   rwf_atomic_queue_limits_of_a_device
 *   partitions: start multiple of max(unit min, boundary)
 *                                            rwf_atomic_partition_start_rule,
 *                                            rwf_atomic_partition_start_unread_is_unknown
 *   cut at a non-zero NABO                   rwf_atomic_cut_at_shifted_nabo
 *   stacking file system (overlayfs)         rwf_atomic_stacking_file_system_none
 *   a file that takes no direct I/O          rwf_atomic_file_without_direct_io_none
 *   statx trusted on XFS and ext4 only       rwf_atomic_other_file_system_unknown_until_confirmed,
 *                                            file_system_type_is_its_fstype_fact
 *   live confirmation: refused, unenforced, largest confirmed
 *                                            rwf_atomic_live_refused_takes_the_path,
 *                                            rwf_atomic_live_unenforced_is_unknown,
 *                                            rwf_atomic_live_max_caps_where_statx_is_not_trusted
 *   a write that could not be tried refuses nothing
 *                                            rwf_atomic_live_not_tried_leaves_statx
 *   directory without a temporary file: unknown; ext4 over a device
 *   without atomic writes: none              rwf_atomic_directory_without_tmpfile_unknown,
 *                                            rwf_atomic_directory_ext4_device_without_atomics_none
 *   statx fields unread: unknown; no such fields (before 6.11): none
 *                                            rwf_atomic_statx_unread_unknown,
 *                                            rwf_atomic_kernel_without_atomic_fields_none
 * passthrough
 *   namespace's power-fail size within its boundaries
 *                                            passthrough_power_fail_size,
 *                                            passthrough_boundary_and_nabo
 *   a cloud provider's larger promise        passthrough_cloud_promise_when_larger
 *   for a namespace, its generic node or a partition of it
 *                                            passthrough_power_fail_size, passthrough_generic_node,
 *                                            passthrough_partition_shifts_boundary
 *   transfer limit (max_hw_sectors_kb); missing: unknown above one block
 *                                            passthrough_transfer_limit,
 *                                            passthrough_transfer_limit_unread_is_unknown
 *   without Identify: unknown                passthrough_identify_unread_is_unknown
 *   not NVMe, or dm/md/loop in between: none passthrough_needs_an_nvme_namespace
 *   LBA format with metadata: none           passthrough_lba_metadata_none
 * plain_direct
 *   every disk below promises it             plain_direct_device_promise,
 *                                            plain_direct_no_promise_none,
 *                                            plain_direct_identify_unread_is_unknown
 *   a file's extent edges, the worst edge's byte
 *                                            plain_direct_file_extent_edges
 *   max_sectors_kb split                     plain_direct_max_sectors_kb_split
 *   chunk (chunk_sectors, md chunks) and dm segment edges
 *                                            plain_direct_chunk_edges,
 *                                            plain_direct_md_chunk_edges,
 *                                            plain_direct_dm_segment_edge
 *   max_segments / max_segment_size / virt_boundary_mask and the buffer's pages
 *                                            plain_direct_segments_per_request,
 *                                            plain_direct_segments_counted_in_the_probe_pages,
 *                                            plain_direct_virt_boundary
 *   merges (nomerges, max_sectors_kb above the promise, boundaries)
 *                                            plain_direct_merges_beyond_the_promise,
 *                                            plain_direct_merges_within_the_promise,
 *                                            plain_direct_merges_across_a_boundary,
 *                                            plain_direct_nomerges_unread
 *   a write of max_sectors_kb is never merged; smaller ones are: the gap
 *                                            plain_direct_merges_across_a_boundary,
 *                                            plain_direct_merge_cap_equal_to_the_write
 *   merges never cross chunk_sectors edges   plain_direct_chunk_edges_stop_merges
 *   a promise aligned to size: merged commands need not be
 *                                            plain_direct_merges_under_a_promise_aligned_to_size
 *   every disk's merges                      plain_direct_merges_on_every_disk
 *   placement: partition starts, md data offsets, dm linear segments
 *                                            plain_direct_partition_off_the_boundary,
 *                                            plain_direct_partition_off_the_block,
 *                                            plain_direct_partition_start_unread_is_unknown,
 *                                            plain_direct_md_member_offsets,
 *                                            plain_direct_md_member_offset_unread_is_unknown,
 *                                            plain_direct_dm_linear_offsets,
 *                                            plain_direct_dm_table_unread_is_unknown
 *   a file without direct I/O                plain_direct_file_without_direct_io_none
 *   extent map unread: block size, unknown above
 *                                            plain_direct_file_extent_edges
 *   below stx_dio_offset_align: none         plain_direct_direct_io_alignment_floor
 *   XFS realtime: flags unread: unknown      plain_direct_realtime_unread_is_unknown
 *   file systems followed; btrfs over several devices; others unknown
 *                                            plain_direct_file_system_placement,
 *                                            file_system_type_is_its_fstype_fact
 *   block / bigalloc cluster keeps a write in one extent
 *                                            plain_direct_file_system_allocation_unit
 *   parity RAID: none                        plain_direct_parity_raid_none
 *   provider alignment lost: device's own promise if more
 *                                            plain_direct_own_promise_where_provider_alignment_is_lost
 *   without the evidence (Identify, dm table, partition start, queue
 *   limits above one page, ext4 cluster above the block, block size above
 *   512): unknown                            plain_direct_split_limits_unread_is_unknown,
 *                                            plain_direct_cluster_size_unread_is_unknown,
 *                                            plain_direct_block_size_unread_is_unknown
 *                                            (and the *_unread_is_unknown tests above)
 *   dm-striped: members, chunk edges, chunk below the unit
 *                                            plain_direct_dm_striped
 *   dm-crypt: one clone, max_write_size, integrity, its sector over smaller blocks
 *                                            plain_direct_dm_crypt,
 *                                            plain_direct_dm_crypt_sector_over_smaller_blocks
 *   striped and crypt only on Linux 7.3 and later; release unread: unknown
 *                                            plain_direct_dm_followed_kernel
 *   a loop device with direct I/O: its backing file's verdict, its offset, its merges
 *                                            plain_direct_loop_follows_its_backing_file,
 *                                            plain_direct_loop_merges
 *   a loop without direct I/O: none; backing not followed: unknown (or none without a device)
 *                                            plain_direct_loop_not_followed
 *   another dm target, no promise: none      plain_direct_dm_non_linear_none,
 *                                            plain_direct_no_promise_none
 * KERNEL SUPPORT, Linux 6.16: XFS software atomic writes above unit_max_opt
 *                                            rwf_atomic_software_path_above_unit_max_opt
 *   a partition the kernel gives no atomic writes: XFS's copy on write, not the device
 *                                            rwf_atomic_misaligned_partition_is_software
 * buffered: never                            buffered_never
 * extended LBA format with size 0: none on every path, check answers no
 *                                            extended_lba_no_path
 * the promise (NVMe LAYER, CLOUD PROMISES)
 *   NAWUPF / NABSPF / NABO                   passthrough_power_fail_size, passthrough_boundary_and_nabo,
 *                                            rwf_atomic_cut_at_shifted_nabo
 *   AWUPF on a namespace with several paths  awupf_on_a_shared_namespace
 *   AWS: aligned to the write's size         cloud_aws_promise_aligned_to_size
 *   Google PD: inside one physical block     cloud_gcp_promise_inside_physical_block
 *   Google PD: a whole block in merged commands cloud_gcp_merged_whole_blocks
 *   a cloud disk whose promise does not apply cloud_disk_without_promise_none
 *   volatile write cache: no rule of the verdict (durability, not tearing)
 *                                            volatile_write_cache_changes_no_size
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "stack_builder.h"

#define RWF LCLOUD_PATH_RWF_ATOMIC
#define PT LCLOUD_PATH_PASSTHROUGH
#define PD LCLOUD_PATH_PLAIN_DIRECT
#define BUF LCLOUD_PATH_BUFFERED
#define YES LCLOUD_ANSWER_UNTORN
#define NO LCLOUD_ANSWER_NO
#define UNKNOWN LCLOUD_ANSWER_UNKNOWN

/* The usual namespace: disk nvme0n1 (259:0) with its NVMe layer, 4 KiB blocks, NAWUPF 16 KiB. */
static int namespace_below(struct lcloud_probe *p, int parent, int *ret_nvme)
{
	int disk = sb_disk(p, "nvme0n1", "259:0", parent);
	int nvme = sb_nvme(p, disk, "nvme0n1", 4 * KIB, 16 * KIB, "nvme:id-ns:nawupf");

	if (ret_nvme)
		*ret_nvme = nvme;
	return disk;
}

/* A second namespace, for md and dm stacks over two disks. */
static int second_namespace_below(struct lcloud_probe *p, int parent, int *ret_nvme)
{
	int disk = sb_disk(p, "nvme1n1", "259:1", parent);
	int nvme = sb_nvme(p, disk, "nvme1n1", 4 * KIB, 16 * KIB, "nvme:id-ns:nawupf");

	if (ret_nvme)
		*ret_nvme = nvme;
	return disk;
}

/* The usual namespace as the target, with its disk's queue fact ID set to VALUE. */
static struct lcloud_probe *namespace_with(enum fact_id id, uint64_t value)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);

	sb_set_u64(p, namespace_below(p, -1, NULL), id, value);
	return p;
}

/* The same with fact ID unread. */
static struct lcloud_probe *namespace_without(enum fact_id id)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);

	sb_set_unread(p, namespace_below(p, -1, NULL), id, "hand-built: unread");
	return p;
}

/* The namespace's power-fail boundaries: BYTES apart (NABSPF), from OFFSET (NABO). */
static void boundary(struct lcloud_probe *p, int nvme, uint64_t bytes, uint64_t offset)
{
	sb_set_u64(p, nvme, FACT_ATOMIC_BOUNDARY_POWER_FAIL_BYTES, bytes);
	sb_set_u64(p, nvme, FACT_ATOMIC_BOUNDARY_OFFSET_BYTES, offset);
}

/* ---- the answers ---------------------------------------------------------- */

/* An unread limit leaves the sizes above it unknown: never "no limit", never "no". */
static void unread_evidence_is_unknown_never_no_limit(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int disk = sb_layer(p, LCLOUD_LAYER_DISK, "nvme0n1", -1);
	(void)state;

	/* max_sectors_kb unread: above one page (4 KiB) the split is unknown */
	sb_queue(p, disk, "259:0");
	sb_set_unread(p, disk, FACT_MAX_SECTORS_KB, "hand-built: unread");
	sb_nvme(p, disk, "nvme0n1", 4 * KIB, 16 * KIB, "nvme:id-ns:nawupf");
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 4 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 16 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PD, "max_sectors_kb"));
	/* above what the device promises is "no", read or not */
	assert_int_equal(sb_check(p, PD, 32 * KIB), NO);
	lcloud_probe_free(p);
}

/* A limit that was read closes the sizes above it, whatever else could not be read. */
static void unknown_never_hides_a_no(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int disk = sb_layer(p, LCLOUD_LAYER_DISK, "nvme0n1", -1);
	(void)state;

	/* max_sectors_kb 8 (read) splits above 8 KiB; max_segments unread leaves 4..8 KiB open */
	sb_queue(p, disk, "259:0");
	sb_set_u64(p, disk, FACT_MAX_SECTORS_KB, 8);
	sb_set_unread(p, disk, FACT_MAX_SEGMENTS, "hand-built: unread");
	sb_nvme(p, disk, "nvme0n1", 4 * KIB, 16 * KIB, "nvme:id-ns:nawupf");
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 8 * KIB), UNKNOWN);
	assert_int_equal(sb_check(p, PD, 16 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "splits writes above 8 KiB"));
	lcloud_probe_free(p);
}

/* lcloud_probe_check() prefers the kernel's guarantee, then passthrough, then a promise; undecided is unknown. */
static void check_prefers_the_kernels_guarantee(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int disk = namespace_below(p, -1, NULL);
	enum lcloud_io_path path = LCLOUD_PATH_BEST;
	char why[1024];
	(void)state;

	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, 4 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, 16 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, 0);
	sb_verdict(p);
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_BEST, 16 * KIB, &path, why, sizeof(why)), YES);
	assert_int_equal(path, RWF);
	lcloud_probe_free(p);

	/* no path proves 8 KiB, and plain_direct could not decide it: unknown, not no */
	p = namespace_without(FACT_MAX_SECTORS_KB);
	sb_set_u64(p, 0, FACT_MAX_HW_SECTORS_KB, 4);
	sb_verdict(p);
	assert_int_equal(lcloud_probe_check(p, LCLOUD_PATH_BEST, 8 * KIB, &path, why, sizeof(why)), UNKNOWN);
	assert_int_equal(path, PD);
	lcloud_probe_free(p);
}

/* ---- rwf_atomic ----------------------------------------------------------- */

static void rwf_atomic_statx_of_the_file(void **state)
{
	struct lcloud_probe *p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	int fs = sb_fs(p, "xfs", 4 * KIB);
	(void)state;

	sb_statx_atomic(p, fs, 4 * KIB, 64 * KIB);
	sb_verdict(p);
	/* the kernel guarantees powers of two from unit min to unit max */
	assert_int_equal(sb_max(p, RWF), 64 * KIB);
	assert_int_equal(lcloud_verdict_get_min_untorn_bytes(sb_path(p, RWF)), 4 * KIB);
	assert_int_equal(sb_check(p, RWF, 64 * KIB), YES);
	assert_int_equal(sb_check(p, RWF, 128 * KIB), NO);
	assert_int_equal(sb_check(p, RWF, 2 * KIB), NO);
	assert_true(sb_reason_has(p, RWF, "statx"));
	lcloud_probe_free(p);
}

static void rwf_atomic_queue_limits_of_a_device(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int disk = namespace_below(p, -1, NULL);
	(void)state;

	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, 4 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, 32 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, 0);
	sb_verdict(p);
	assert_int_equal(sb_max(p, RWF), 32 * KIB);
	assert_int_equal(sb_check(p, RWF, 32 * KIB), YES);
	assert_int_equal(sb_check(p, RWF, 64 * KIB), NO);
	assert_true(sb_reason_has(p, RWF, "sysfs:queue/atomic_write_unit_max_bytes"));
	lcloud_probe_free(p);

	/* unit max 0: the kernel reports no atomic writes for the device */
	p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	disk = namespace_below(p, -1, NULL);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, 0);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, 0);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, 0);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), NO);
	assert_true(sb_reason_has(p, RWF, "atomic_write_unit_max_bytes 0"));
	lcloud_probe_free(p);
}

/* A device's own statx reading, where there is one, rather than its queue limits. */
static void rwf_atomic_statx_of_the_device_node(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int disk = namespace_below(p, -1, NULL);
	(void)state;

	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, 4 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, 64 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, 0);
	sb_statx_atomic(p, disk, 4 * KIB, 16 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, RWF), 16 * KIB);
	assert_int_equal(sb_check(p, RWF, 32 * KIB), NO);
	assert_true(sb_reason_has(p, RWF, "statx"));
	assert_int_equal(lcloud_verdict_get_boundary(sb_path(p, RWF)), 0);
	lcloud_probe_free(p);

	/* statx has no boundary: the disk's queue limit is the one the kernel refuses crossings of */
	p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	disk = namespace_below(p, -1, NULL);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, 4 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, 16 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, 32 * KIB);
	sb_statx_atomic(p, disk, 4 * KIB, 16 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, RWF), 16 * KIB);
	assert_int_equal(lcloud_verdict_get_boundary(sb_path(p, RWF)), 32 * KIB);
	assert_int_equal(lcloud_verdict_get_boundary_offset(sb_path(p, RWF)), 0);
	assert_int_equal(sb_check(p, RWF, 16 * KIB), YES);
	lcloud_probe_free(p);
}

/* XFS writes RWF_ATOMIC above stx_atomic_write_unit_max_opt in software: untorn, but not the device's own. */
static void rwf_atomic_software_path_above_unit_max_opt(void **state)
{
	struct lcloud_probe *p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	int fs = sb_fs(p, "xfs", 4 * KIB);
	(void)state;

	sb_statx_atomic(p, fs, 4 * KIB, 64 * KIB);
	sb_u64(p, fs, FACT_STX_ATOMIC_WRITE_UNIT_MAX_OPT, 16 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 64 * KIB), YES);
	assert_int_equal(lcloud_verdict_get_hardware_max_bytes(sb_path(p, RWF)), 16 * KIB);
	assert_true(sb_reason_has(p, RWF, "software path"));
	lcloud_probe_free(p);
}

/*
 * XFS on a partition whose start the kernel's atomic rule rejects (1 MiB +
 * 4 KiB, no multiple of max(unit min, boundary)): the disk has atomic
 * writes, the partition none, so XFS does every RWF_ATOMIC write by copy on
 * write. The answer credits the file system, not the device.
 */
static void rwf_atomic_misaligned_partition_is_software(void **state)
{
	struct lcloud_probe *p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	int fs = sb_fs(p, "xfs", 16 * KIB);
	int part = sb_partition(p, "nvme0n1p1", MIB + 4 * KIB, fs);
	int disk = namespace_below(p, part, NULL);
	char why[1024];
	(void)state;

	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, 4 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, 16 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, 32 * KIB);
	sb_statx_atomic(p, fs, 16 * KIB, MIB);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 16 * KIB), YES);
	assert_int_equal(lcloud_verdict_get_hardware_max_bytes(sb_path(p, RWF)), 0);
	assert_int_equal(lcloud_probe_check(p, RWF, 16 * KIB, NULL, why, sizeof(why)), YES);
	assert_non_null(strstr(why, "written atomically in software by the file system"));
	assert_null(strstr(why, "written atomically by the device"));
	assert_true(sb_reason_has(p, RWF, "the kernel gives it none of nvme0n1's atomic writes"));
	lcloud_probe_free(p);

	/* 2 MiB is a multiple of 32 KiB: the device writes up to its 16 KiB itself */
	p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	fs = sb_fs(p, "xfs", 16 * KIB);
	part = sb_partition(p, "nvme0n1p1", 2 * MIB, fs);
	disk = namespace_below(p, part, NULL);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, 4 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, 16 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, 32 * KIB);
	sb_statx_atomic(p, fs, 16 * KIB, MIB);
	sb_verdict(p);
	assert_int_equal(lcloud_verdict_get_hardware_max_bytes(sb_path(p, RWF)), 16 * KIB);
	assert_int_equal(lcloud_probe_check(p, RWF, 16 * KIB, NULL, why, sizeof(why)), YES);
	assert_non_null(strstr(why, "written atomically by the device"));
	lcloud_probe_free(p);
}

static struct lcloud_probe *partition_with_queue_atomics(uint64_t start)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1p1", LCLOUD_TARGET_PARTITION);
	int part = sb_partition(p, "nvme0n1p1", start, -1);
	int disk = namespace_below(p, part, NULL);

	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, 4 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, 32 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, 64 * KIB);
	return p;
}

/* The kernel takes RWF_ATOMIC on a partition only where its start is a multiple of max(unit min, boundary). */
static void rwf_atomic_partition_start_rule(void **state)
{
	/* 1 MiB + 4 KiB is no multiple of max(4 KiB, 64 KiB): none */
	struct lcloud_probe *p = partition_with_queue_atomics(MIB + 4 * KIB);
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_max(p, RWF), 0);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), NO);
	assert_true(sb_reason_has(p, RWF, "not a multiple of 65536"));
	lcloud_probe_free(p);

	/* 2 MiB is: the disk's unit max */
	p = partition_with_queue_atomics(2 * MIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, RWF), 32 * KIB);
	assert_int_equal(sb_check(p, RWF, 32 * KIB), YES);
	lcloud_probe_free(p);
}

static void rwf_atomic_partition_start_unread_is_unknown(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1p1", LCLOUD_TARGET_PARTITION);
	int part = sb_layer(p, LCLOUD_LAYER_PARTITION, "nvme0n1p1", -1);
	int disk = namespace_below(p, part, NULL);
	(void)state;

	sb_unread(p, part, FACT_START_BYTES, "hand-built: start unread");
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, 4 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, 32 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, 0);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, RWF, "where the partition starts"));
	lcloud_probe_free(p);
}

/* The kernel counts atomic boundaries from 0; at NABO 8 KiB only writes up to 8 KiB stay inside one. */
static void rwf_atomic_cut_at_shifted_nabo(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int nvme, disk = namespace_below(p, -1, &nvme);
	(void)state;

	boundary(p, nvme, 32 * KIB, 8 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, 4 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, 16 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, 32 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, RWF), 8 * KIB);
	assert_int_equal(sb_check(p, RWF, 8 * KIB), YES);
	assert_int_equal(sb_check(p, RWF, 16 * KIB), NO);
	assert_true(sb_reason_has(p, RWF, "nvme:id-ns:nabo"));
	lcloud_probe_free(p);
}

static void rwf_atomic_stacking_file_system_none(void **state)
{
	struct lcloud_probe *p = sb_new("/merged/file", LCLOUD_TARGET_REGULAR);
	int fs = sb_fs(p, "overlay", 4 * KIB);
	(void)state;

	/* statx shows the lower file system's limits, which overlay's own files do not honour */
	sb_statx_atomic(p, fs, 4 * KIB, 64 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, RWF), 0);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), NO);
	assert_true(sb_reason_has(p, RWF, "stacking file system"));
	lcloud_probe_free(p);
}

static void rwf_atomic_file_without_direct_io_none(void **state)
{
	struct lcloud_probe *p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	int fs = sb_fs(p, "ext4", 4 * KIB);
	(void)state;

	sb_statx_atomic(p, fs, 4 * KIB, 16 * KIB);
	sb_u64(p, fs, FACT_STX_DIO_OFFSET_ALIGN, 0);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), NO);
	assert_true(sb_reason_has(p, RWF, "statx:stx_dio_offset_align"));
	lcloud_probe_free(p);
}

/* The file system is what its fstype fact says: the layer's name is for a person. */
static void file_system_type_is_its_fstype_fact(void **state)
{
	struct lcloud_probe *p = sb_new("/merged/file", LCLOUD_TARGET_REGULAR);
	int fs = sb_layer(p, LCLOUD_LAYER_FILESYSTEM, "merged", -1);
	(void)state;

	sb_string(p, fs, FACT_FSTYPE, "overlay");
	sb_u64(p, fs, FACT_BLOCK_SIZE, 4 * KIB);
	sb_statx_atomic(p, fs, 4 * KIB, 64 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), NO);
	assert_true(sb_reason_has(p, RWF, "stacking file system"));
	lcloud_probe_free(p);

	/* XFS under another name: statx taken at its word; its placement followed */
	p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	fs = sb_layer(p, LCLOUD_LAYER_FILESYSTEM, "data", -1);
	sb_string(p, fs, FACT_FSTYPE, "xfs");
	sb_u64(p, fs, FACT_BLOCK_SIZE, 16 * KIB);
	sb_u64(p, fs, FACT_EXTENTS, 1);
	sb_u64(p, fs, FACT_EXTENT_EDGE_ALIGNMENT, 0);
	sb_statx_atomic(p, fs, 4 * KIB, 64 * KIB);
	namespace_below(p, fs, NULL);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 64 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	lcloud_probe_free(p);
}

/* Only XFS and ext4 are taken at statx's word; elsewhere a live write must confirm it. */
static void rwf_atomic_other_file_system_unknown_until_confirmed(void **state)
{
	struct lcloud_probe *p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	int fs = sb_fs(p, "btrfs", 4 * KIB);
	(void)state;

	sb_statx_atomic(p, fs, 4 * KIB, 16 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, RWF, "confirm"));
	lcloud_probe_free(p);

	/* the same limits on XFS: untorn */
	p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	fs = sb_fs(p, "xfs", 4 * KIB);
	sb_statx_atomic(p, fs, 4 * KIB, 16 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 16 * KIB), YES);
	lcloud_probe_free(p);
}

static void rwf_atomic_live_refused_takes_the_path(void **state)
{
	struct lcloud_probe *p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	int fs = sb_fs(p, "xfs", 4 * KIB);
	(void)state;

	sb_statx_atomic(p, fs, 4 * KIB, 64 * KIB);
	sb_string(p, fs, FACT_LIVE_RWF_ATOMIC_REFUSED, "4096 bytes: EOPNOTSUPP");
	sb_verdict(p);
	assert_int_equal(sb_max(p, RWF), 0);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), NO);
	assert_true(sb_reason_has(p, RWF, "EOPNOTSUPP"));
	lcloud_probe_free(p);
}

static void rwf_atomic_live_unenforced_is_unknown(void **state)
{
	struct lcloud_probe *p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	int fs = sb_fs(p, "xfs", 4 * KIB);
	(void)state;

	sb_statx_atomic(p, fs, 4 * KIB, 64 * KIB);
	sb_string(p, fs, FACT_LIVE_RWF_ATOMIC_UNENFORCED, "a misaligned 8192-byte write succeeded");
	sb_verdict(p);
	assert_int_equal(sb_max(p, RWF), 0);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, RWF, "misaligned 8192-byte"));
	lcloud_probe_free(p);
}

/* live_rwf_atomic_max_bytes is the largest size confirmed: above it statx decides on XFS and ext4 only. */
static void rwf_atomic_live_max_caps_where_statx_is_not_trusted(void **state)
{
	struct lcloud_probe *p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	int fs = sb_fs(p, "btrfs", 4 * KIB);
	(void)state;

	sb_statx_atomic(p, fs, 4 * KIB, 64 * KIB);
	sb_u64(p, fs, FACT_LIVE_RWF_ATOMIC_MAX_BYTES, 16 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, RWF), 16 * KIB);
	assert_int_equal(sb_check(p, RWF, 16 * KIB), YES);
	assert_int_equal(sb_check(p, RWF, 32 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, RWF, "confirmed up to 16384"));
	lcloud_probe_free(p);

	p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	fs = sb_fs(p, "xfs", 4 * KIB);
	sb_statx_atomic(p, fs, 4 * KIB, 64 * KIB);
	sb_u64(p, fs, FACT_LIVE_RWF_ATOMIC_MAX_BYTES, 16 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 64 * KIB), YES);
	lcloud_probe_free(p);
}

/* ENOSPC and the like refuse nothing: the confirmation is undone and statx decides as without it. */
static void rwf_atomic_live_not_tried_leaves_statx(void **state)
{
	struct lcloud_probe *p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	int fs = sb_fs(p, "xfs", 4 * KIB);
	(void)state;

	sb_statx_atomic(p, fs, 4 * KIB, 64 * KIB);
	assert_int_equal(layer_add_missing(report_layer(p, fs), FACT_LIVE_RWF_ATOMIC_MAX_BYTES, LCLOUD_FACT_UNREADABLE,
					   NULL, "ENOSPC: the file system is full"), 0);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 64 * KIB), YES);
	lcloud_probe_free(p);

	/* on a file system whose statx is not trusted, unknown, naming why nothing was tried */
	p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	fs = sb_fs(p, "btrfs", 4 * KIB);
	sb_statx_atomic(p, fs, 4 * KIB, 64 * KIB);
	assert_int_equal(layer_add_missing(report_layer(p, fs), FACT_LIVE_RWF_ATOMIC_MAX_BYTES, LCLOUD_FACT_UNREADABLE,
					   NULL, "ENOSPC: the file system is full"), 0);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, RWF, "ENOSPC"));
	lcloud_probe_free(p);
}

static void rwf_atomic_directory_without_tmpfile_unknown(void **state)
{
	struct lcloud_probe *p = sb_new("/data", LCLOUD_TARGET_DIRECTORY);
	int fs = sb_fs(p, "xfs", 4 * KIB);
	(void)state;

	namespace_below(p, fs, NULL);
	sb_note(p, NOTE_NEEDS_WRITE_ACCESS, fs);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, RWF, "temporary file"));
	lcloud_probe_free(p);
}

static void rwf_atomic_directory_ext4_device_without_atomics_none(void **state)
{
	struct lcloud_probe *p = sb_new("/data", LCLOUD_TARGET_DIRECTORY);
	int fs = sb_fs(p, "ext4", 4 * KIB);
	int disk = namespace_below(p, fs, NULL);
	(void)state;

	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, 0);
	sb_note(p, NOTE_TMPFILE_REFUSED, fs);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), NO);
	assert_true(sb_reason_has(p, RWF, "ext4 has no others"));
	lcloud_probe_free(p);
}

static void rwf_atomic_statx_unread_unknown(void **state)
{
	struct lcloud_probe *p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	int fs = sb_fs(p, "xfs", 4 * KIB);
	(void)state;

	sb_unread(p, fs, FACT_STX_ATOMIC_WRITE_UNIT_MAX, "hand-built: statx failed");
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, RWF, "statx failed"));
	lcloud_probe_free(p);
}

static void rwf_atomic_kernel_without_atomic_fields_none(void **state)
{
	struct lcloud_probe *p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	int fs = sb_fs(p, "xfs", 4 * KIB);
	(void)state;

	sb_not_provided(p, fs, FACT_STX_ATOMIC_WRITE_UNIT_MAX);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), NO);
	assert_true(sb_reason_has(p, RWF, "before 6.11"));
	lcloud_probe_free(p);

	/* a device on a kernel without queue atomic limits */
	p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	namespace_below(p, -1, NULL);
	sb_verdict(p);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), NO);
	assert_true(sb_reason_has(p, RWF, "Linux 6.11+"));
	lcloud_probe_free(p);
}

/* ---- passthrough ---------------------------------------------------------- */

static void passthrough_power_fail_size(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	(void)state;

	namespace_below(p, -1, NULL);
	sb_verdict(p);
	/* (NAWUPF+1) blocks: 16 KiB; larger writes are silently non-atomic */
	assert_int_equal(sb_max(p, PT), 16 * KIB);
	assert_int_equal(sb_check(p, PT, 16 * KIB), YES);
	assert_int_equal(sb_check(p, PT, 32 * KIB), NO);
	assert_true(sb_reason_has(p, PT, "nvme:id-ns:nawupf"));
	lcloud_probe_free(p);
}

/* No write may cross NABO + k * (NABSPF+1) blocks: here 32 KiB boundaries from 8 KiB. */
static void passthrough_boundary_and_nabo(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int nvme;
	const struct lcloud_verdict *v;
	(void)state;

	namespace_below(p, -1, &nvme);
	boundary(p, nvme, 32 * KIB, 8 * KIB);
	sb_set_u64(p, nvme, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES, 64 * KIB);
	sb_verdict(p);
	v = sb_path(p, PT);
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(v), 32 * KIB);
	assert_int_equal(lcloud_verdict_get_boundary(v), 32 * KIB);
	assert_int_equal(lcloud_verdict_get_boundary_offset(v), 8 * KIB);
	/* [8 KiB, 40 KiB) is one boundary block; [0, 32 KiB) crosses at 8 KiB */
	assert_int_equal(lcloud_verdict_allows(v, 8 * KIB, 32 * KIB, NULL, 0), 1);
	assert_int_equal(lcloud_verdict_allows(v, 0, 32 * KIB, NULL, 0), 0);
	/* naturally aligned: 8 KiB writes never cross, 16 KiB ones at 0 mod 32 KiB do */
	assert_int_equal(sb_check(p, PT, 8 * KIB), YES);
	assert_int_equal(sb_check(p, PT, 16 * KIB), NO);
	assert_true(sb_reason_has(p, PT, "nvme:id-ns:nabspf"));
	lcloud_probe_free(p);
}

/* An EBS-shaped namespace: AWUPF one 512-byte block, the provider's 16 KiB aligned to size. */
static int ebs_namespace(struct lcloud_probe *p, int parent, uint64_t own_bytes, uint64_t lba)
{
	int disk = sb_disk(p, "nvme1n1", "259:1", parent);
	int nvme = sb_nvme(p, disk, "nvme1n1", lba, own_bytes, "nvme:id-ctrl:awupf");
	int cloud = sb_layer(p, LCLOUD_LAYER_CLOUD, "aws", nvme);

	sb_string(p, cloud, FACT_PRODUCT, "ebs");
	sb_u64_from(p, cloud, FACT_PROMISE_UNTORN_MAX_BYTES, 16 * KIB, "cloud:aws-ebs-twp");
	sb_u64_from(p, cloud, FACT_PROMISE_UNTORN_GRANULARITY_BYTES, lba, "cloud:aws-ebs-twp");
	sb_u64_from(p, cloud, FACT_PROMISE_BOUNDARY_BYTES, 0, "cloud:aws-ebs-twp");
	sb_promise_alignment(p, cloud, LAYER_PROMISE_ALIGNED_TO_SIZE);
	return disk;
}

static void passthrough_cloud_promise_when_larger(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme1n1", LCLOUD_TARGET_DISK);
	(void)state;

	ebs_namespace(p, -1, 512, 512);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PT), 16 * KIB);
	assert_int_equal(sb_check(p, PT, 16 * KIB), YES);
	assert_true(sb_reason_has(p, PT, "cloud:aws-ebs-twp"));
	lcloud_probe_free(p);
}

/* In a partition the boundaries are shifted by its start: 1 MiB + 4 KiB puts them at 60 KiB + k * 64 KiB. */
static void passthrough_partition_shifts_boundary(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1p1", LCLOUD_TARGET_PARTITION);
	int part = sb_partition(p, "nvme0n1p1", MIB + 4 * KIB, -1);
	int nvme;
	const struct lcloud_verdict *v;
	(void)state;

	namespace_below(p, part, &nvme);
	boundary(p, nvme, 64 * KIB, 0);
	sb_verdict(p);
	v = sb_path(p, PT);
	assert_int_equal(lcloud_verdict_get_max_untorn_bytes(v), 16 * KIB);
	assert_int_equal(lcloud_verdict_get_boundary_offset(v), 64 * KIB - 4 * KIB);
	/* 61440 is a multiple of 4 KiB but not of 16 KiB: aligned 16 KiB writes can cross */
	assert_int_equal(sb_check(p, PT, 4 * KIB), YES);
	assert_int_equal(sb_check(p, PT, 16 * KIB), NO);
	lcloud_probe_free(p);

	/* a start that could not be read: unknown */
	p = sb_new("/dev/nvme0n1p1", LCLOUD_TARGET_PARTITION);
	part = sb_layer(p, LCLOUD_LAYER_PARTITION, "nvme0n1p1", -1);
	sb_unread(p, part, FACT_START_BYTES, "hand-built: start unread");
	namespace_below(p, part, NULL);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PT, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PT, "where the partition starts"));
	lcloud_probe_free(p);
}

/* The namespace's generic node takes passthrough commands only: the namespace's size there, no other path. */
static void passthrough_generic_node(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/ng0n1", LCLOUD_TARGET_NVME_CHAR);
	(void)state;

	namespace_below(p, -1, NULL);
	sb_note(p, NOTE_NVME_GENERIC, 0);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PT), 16 * KIB);
	assert_int_equal(sb_check(p, PT, 16 * KIB), YES);
	assert_int_equal(sb_check(p, RWF, 4 * KIB), NO);
	assert_int_equal(sb_check(p, PD, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "target:nvme-generic"));
	lcloud_probe_free(p);
}

static void passthrough_transfer_limit(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int disk = sb_layer(p, LCLOUD_LAYER_DISK, "nvme0n1", -1);
	(void)state;

	/* the kernel refuses a command above max_hw_sectors_kb (8 KiB) rather than split it */
	sb_queue(p, disk, "259:0");
	sb_set_u64(p, disk, FACT_MAX_HW_SECTORS_KB, 8);
	sb_nvme(p, disk, "nvme0n1", 4 * KIB, 16 * KIB, "nvme:id-ns:nawupf");
	sb_verdict(p);
	assert_int_equal(sb_max(p, PT), 8 * KIB);
	assert_int_equal(sb_check(p, PT, 16 * KIB), NO);
	assert_true(sb_reason_has(p, PT, "max_hw_sectors_kb"));
	lcloud_probe_free(p);
}

static void passthrough_transfer_limit_unread_is_unknown(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int disk = sb_layer(p, LCLOUD_LAYER_DISK, "nvme0n1", -1);
	(void)state;

	sb_queue(p, disk, "259:0");
	sb_set_unread(p, disk, FACT_MAX_HW_SECTORS_KB, "hand-built: unread");
	sb_nvme(p, disk, "nvme0n1", 4 * KIB, 16 * KIB, "nvme:id-ns:nawupf");
	sb_verdict(p);
	/* one logical block every command carries; above it unknown, not "no limit" */
	assert_int_equal(sb_max(p, PT), 4 * KIB);
	assert_int_equal(sb_check(p, PT, 4 * KIB), YES);
	assert_int_equal(sb_check(p, PT, 16 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PT, "max_hw_sectors_kb"));
	lcloud_probe_free(p);
}

static void passthrough_identify_unread_is_unknown(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int disk = sb_disk(p, "nvme0n1", "259:0", -1);
	int nvme = sb_layer(p, LCLOUD_LAYER_NVME, "nvme0n1", disk);
	(void)state;

	sb_unread(p, nvme, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES, "Identify Namespace needs root");
	sb_verdict(p);
	assert_int_equal(sb_check(p, PT, 4 * KIB), UNKNOWN);
	assert_int_equal(sb_check(p, PD, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PT, "Identify"));
	assert_true(sb_unknown_has(p, PD, "Identify"));
	lcloud_probe_free(p);
}

static void passthrough_needs_an_nvme_namespace(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/sda", LCLOUD_TARGET_DISK);
	int disk = sb_disk(p, "sda", "8:0", -1);
	int dm;
	(void)state;

	sb_layer(p, LCLOUD_LAYER_SCSI, "sda", disk);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PT, 512), NO);
	assert_true(sb_reason_has(p, PT, "not an NVMe namespace"));
	lcloud_probe_free(p);

	/* a dm device over a namespace: NVMe commands cannot go through it */
	p = sb_new("/dev/dm-0", LCLOUD_TARGET_DISK);
	dm = sb_layer(p, LCLOUD_LAYER_DM, "dm-0", -1);
	sb_queue(p, dm, "253:0");
	sb_dm_segment(p, dm, 0, 1 << 20, "linear", "259:0 2048");
	namespace_below(p, dm, NULL);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PT, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PT, "cannot go through"));
	lcloud_probe_free(p);

	/* a file */
	p = sb_new("/data/file", LCLOUD_TARGET_REGULAR);
	namespace_below(p, sb_fs(p, "xfs", 4 * KIB), NULL);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PT, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PT, "target:file"));
	lcloud_probe_free(p);
}

static void passthrough_lba_metadata_none(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int disk = sb_disk(p, "nvme0n1", "259:0", -1);
	int nvme = sb_layer(p, LCLOUD_LAYER_NVME, "nvme0n1", disk);
	(void)state;

	/* 8 metadata bytes in a separate buffer (FLBAS bit 4 clear): block I/O works, passthrough does not */
	sb_u64(p, nvme, FACT_FLBAS, 0);
	sb_u64(p, nvme, FACT_LBA_SIZE, 4 * KIB);
	sb_u64(p, nvme, FACT_LBA_METADATA_SIZE, 8);
	sb_u64_from(p, nvme, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES, 16 * KIB, "nvme:id-ns:nawupf");
	sb_verdict(p);
	assert_int_equal(sb_check(p, PT, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PT, "metadata"));
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	lcloud_probe_free(p);
}

/* ---- plain_direct: devices and placement ---------------------------------- */

static void plain_direct_device_promise(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	(void)state;

	namespace_below(p, -1, NULL);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 32 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "nvme:id-ns:nawupf"));
	/* it rests on nomerges 2, and says so */
	assert_true(sb_reason_has(p, PD, "udev rule"));
	lcloud_probe_free(p);
}

static void plain_direct_no_promise_none(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/vda", LCLOUD_TARGET_DISK);
	int loop;
	(void)state;

	sb_disk(p, "vda", "252:0", -1);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 512), NO);
	assert_true(sb_reason_has(p, PD, "promises no untorn writes"));
	lcloud_probe_free(p);

	p = sb_new("/dev/loop0", LCLOUD_TARGET_DISK);
	loop = sb_layer(p, LCLOUD_LAYER_LOOP, "loop0", -1);
	sb_queue(p, loop, "7:0");
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 512), NO);
	assert_true(sb_reason_has(p, PD, "loop device"));
	lcloud_probe_free(p);
}

static void plain_direct_identify_unread_is_unknown(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int disk = sb_disk(p, "nvme0n1", "259:0", -1);
	int nvme = sb_layer(p, LCLOUD_LAYER_NVME, "nvme0n1", disk);
	(void)state;

	sb_unread(p, nvme, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES, "Identify Namespace needs root");
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), UNKNOWN);
	lcloud_probe_free(p);
}

/* A namespace with 64 KiB boundaries from 0, under a partition at START. */
static struct lcloud_probe *partition_on_bounded_namespace(uint64_t start)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1p1", LCLOUD_TARGET_PARTITION);
	int part = sb_partition(p, "nvme0n1p1", start, -1);
	int nvme;

	namespace_below(p, part, &nvme);
	boundary(p, nvme, 64 * KIB, 0);
	return p;
}

/* A start of 1 MiB + 4 KiB keeps only 4 KiB-aligned writes inside the device's 64 KiB boundaries. */
static void plain_direct_partition_off_the_boundary(void **state)
{
	struct lcloud_probe *p = partition_on_bounded_namespace(MIB + 4 * KIB);
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 4 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "1052672"));
	lcloud_probe_free(p);

	p = partition_on_bounded_namespace(2 * MIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	lcloud_probe_free(p);
}

/* A start off the promise's block: no aligned write in the partition is aligned on the disk. */
static void plain_direct_partition_off_the_block(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1p1", LCLOUD_TARGET_PARTITION);
	int part = sb_partition(p, "nvme0n1p1", MIB + 512, -1);
	(void)state;

	namespace_below(p, part, NULL);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 0);
	assert_int_equal(sb_check(p, PD, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "off its 4096-byte blocks"));
	lcloud_probe_free(p);
}

static void plain_direct_partition_start_unread_is_unknown(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1p1", LCLOUD_TARGET_PARTITION);
	int part = sb_layer(p, LCLOUD_LAYER_PARTITION, "nvme0n1p1", -1);
	(void)state;

	sb_unread(p, part, FACT_START_BYTES, "hand-built: start unread");
	namespace_below(p, part, NULL);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PD, "where the partition starts"));
	lcloud_probe_free(p);
}

/* The md layer of raid1(): the target, the first layer. */
#define MD_LAYER 0

/*
 * md0 at LEVEL (no chunks) over two namespaces with 64 KiB boundaries;
 * member data at 1 MiB and at SECOND_OFFSET (unread unless SECOND_READ).
 */
static struct lcloud_probe *raid1(const char *level, uint64_t second_offset, bool second_read)
{
	struct lcloud_probe *p = sb_new("/dev/md0", LCLOUD_TARGET_DISK);
	int md = sb_layer(p, LCLOUD_LAYER_MD, "md0", -1);
	int nvme0, nvme1;

	sb_queue(p, md, "9:0");
	sb_string(p, md, FACT_MD_LEVEL, level);
	sb_u64(p, md, FACT_MD_CHUNK_SIZE, 0);
	sb_md_member(p, md, "nvme0n1", MIB);
	if (second_read)
		sb_md_member(p, md, "nvme1n1", second_offset);
	namespace_below(p, md, &nvme0);
	second_namespace_below(p, md, &nvme1);
	boundary(p, nvme0, 64 * KIB, 0);
	boundary(p, nvme1, 64 * KIB, 0);
	return p;
}

static void plain_direct_md_member_offsets(void **state)
{
	struct lcloud_probe *p = raid1("raid1", MIB + 4 * KIB, true);
	(void)state;

	/* the second member's data at 1 MiB + 4 KiB: aligned writes above 4 KiB can cross a boundary there */
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "1052672"));
	lcloud_probe_free(p);

	p = raid1("raid1", 2 * MIB, true);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	lcloud_probe_free(p);
}

static void plain_direct_md_member_offset_unread_is_unknown(void **state)
{
	struct lcloud_probe *p = raid1("raid1", 0, false);
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PD, "nvme1n1"));
	lcloud_probe_free(p);
}

static void plain_direct_parity_raid_none(void **state)
{
	struct lcloud_probe *p = raid1("raid5", 2 * MIB, true);
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "raid5"));
	lcloud_probe_free(p);
}

/* dm-0 over the namespace (64 KiB boundaries): one linear segment with PARAMS, or its table unread (NULL). */
static struct lcloud_probe *dm_linear(const char *params)
{
	struct lcloud_probe *p = sb_new("/dev/dm-0", LCLOUD_TARGET_DISK);
	int dm = sb_layer(p, LCLOUD_LAYER_DM, "dm-0", -1);
	int nvme;

	sb_queue(p, dm, "253:0");
	if (params)
		sb_dm_segment(p, dm, 0, 1 << 20, "linear", params);
	namespace_below(p, dm, &nvme);
	boundary(p, nvme, 64 * KIB, 0);
	return p;
}

static void plain_direct_dm_linear_offsets(void **state)
{
	/* sector 2056 = 1 MiB + 4 KiB on the disk */
	struct lcloud_probe *p = dm_linear("259:0 2056");
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_true(sb_reason_has(p, PD, "1052672"));
	lcloud_probe_free(p);

	p = dm_linear("259:0 2048");
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	lcloud_probe_free(p);
}

static void plain_direct_dm_table_unread_is_unknown(void **state)
{
	struct lcloud_probe *p = dm_linear(NULL);
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PD, "device-mapper table could not be read"));
	lcloud_probe_free(p);
}

static void plain_direct_dm_non_linear_none(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/dm-0", LCLOUD_TARGET_DISK);
	int dm = sb_layer(p, LCLOUD_LAYER_DM, "dm-0", -1);
	(void)state;

	sb_queue(p, dm, "253:0");
	sb_dm_segment(p, dm, 0, 1 << 20, "thin", "253:1 7");
	namespace_below(p, dm, NULL);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "thin target"));
	assert_true(sb_reason_has(p, PD, "follows only linear, striped and crypt targets"));
	lcloud_probe_free(p);
}

#define KERNEL_7_3 "7.3.4+deb13-cloud-amd64"

/*
 * dm-0 striped over the two namespaces (32 KiB boundaries) with PARAMS, run by
 * kernel RELEASE (NULL: not read). Linux 7.3's dm-stripe splits a write at
 * the chunk edges and sends what is inside one chunk to one member.
 */
static struct lcloud_probe *dm_striped(const char *params, const char *release)
{
	struct lcloud_probe *p = sb_new("/dev/dm-0", LCLOUD_TARGET_DISK);
	int dm = sb_layer(p, LCLOUD_LAYER_DM, "dm-0", -1);
	int nvme0, nvme1;

	sb_queue(p, dm, "253:0");
	sb_dm_segment(p, dm, 0, 1 << 20, "striped", params);
	if (release)
		sb_string(p, dm, FACT_KERNEL_RELEASE, release);
	else
		sb_unread(p, dm, FACT_KERNEL_RELEASE, "hand-built: unread");
	namespace_below(p, dm, &nvme0);
	second_namespace_below(p, dm, &nvme1);
	boundary(p, nvme0, 32 * KIB, 0);
	boundary(p, nvme1, 32 * KIB, 0);
	return p;
}

static void plain_direct_dm_striped(void **state)
{
	/* 16 KiB chunks (32 sectors), both members' parts from 1 MiB */
	struct lcloud_probe *p = dm_striped("2 32 259:0 2048 259:1 2048", KERNEL_7_3);
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 32 * KIB), NO);
	lcloud_probe_free(p);

	/* the second member's part starts 4 KiB past 1 MiB: a 16 KiB write there is aligned to 4 KiB only */
	p = dm_striped("2 32 259:0 2048 259:1 2056", KERNEL_7_3);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_true(sb_reason_has(p, PD, "1052672"));
	lcloud_probe_free(p);

	/* a chunk smaller than the promise: a 16 KiB write reaches two members */
	p = dm_striped("2 16 259:0 2048 259:1 2048", KERNEL_7_3);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 8 * KIB);
	assert_int_equal(sb_check(p, PD, 16 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "8192-byte chunk edges"));
	lcloud_probe_free(p);
}

/* Striped and crypt targets are followed as Linux 7.3 runs them: an older kernel is no, an unknown one unknown. */
static void plain_direct_dm_followed_kernel(void **state)
{
	struct lcloud_probe *p = dm_striped("2 32 259:0 2048 259:1 2048", "6.12.48+deb13-amd64");
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 16 * KIB), NO);
	assert_int_equal(sb_check(p, PD, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "Linux 6.12.48+deb13-amd64 runs its striped or crypt target"));
	lcloud_probe_free(p);

	p = dm_striped("2 32 259:0 2048 259:1 2048", NULL);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PD, "which kernel runs its striped or crypt target could not be told"));
	lcloud_probe_free(p);

	/* a release that is no version: unknown, never a guess */
	p = dm_striped("2 32 259:0 2048 259:1 2048", "custom");
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), UNKNOWN);
	lcloud_probe_free(p);
}

/*
 * dm-0 crypt over the namespace (32 KiB boundaries) with PARAMS, run by
 * Linux 7.3, its max_write_size MAX_WRITE (UINT64_MAX: not read). Linux
 * 7.3's dm-crypt encrypts a write into one clone of the same size, split
 * only above max_write_size (0: 128 KiB).
 */
static struct lcloud_probe *dm_crypt(const char *params, uint64_t max_write)
{
	struct lcloud_probe *p = sb_new("/dev/dm-0", LCLOUD_TARGET_DISK);
	int dm = sb_layer(p, LCLOUD_LAYER_DM, "dm-0", -1);
	int nvme;

	sb_queue(p, dm, "253:0");
	sb_dm_segment(p, dm, 0, 1 << 20, "crypt", params);
	sb_string(p, dm, FACT_KERNEL_RELEASE, KERNEL_7_3);
	if (max_write == UINT64_MAX)
		sb_unread(p, dm, FACT_DM_CRYPT_MAX_WRITE_SIZE, "hand-built: unread");
	else
		sb_u64(p, dm, FACT_DM_CRYPT_MAX_WRITE_SIZE, max_write);
	namespace_below(p, dm, &nvme);
	boundary(p, nvme, 32 * KIB, 0);
	return p;
}

static void plain_direct_dm_crypt(void **state)
{
	/* data from sector 4096 (2 MiB), 512-byte crypt sectors: as a linear shift */
	struct lcloud_probe *p = dm_crypt("aes-xts-plain64 - 0 259:0 4096", 0);
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	assert_int_equal(sb_check(p, PD, 4 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	lcloud_probe_free(p);

	/* data 4 KiB past a 16 KiB edge: aligned writes of more than 4 KiB land off the promise's alignment */
	p = dm_crypt("aes-xts-plain64 - 0 259:0 4104", 0);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	lcloud_probe_free(p);

	/* max_write_size 8 KiB: dm-crypt splits a 16 KiB write into two encrypted writes */
	p = dm_crypt("aes-xts-plain64 - 0 259:0 4096", 8 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 8 * KIB);
	assert_int_equal(sb_check(p, PD, 16 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "dm-crypt splits writes above 8192 bytes"));
	lcloud_probe_free(p);

	/* max_write_size not read: above the crypt sector, unknown */
	p = dm_crypt("aes-xts-plain64 - 0 259:0 4096", UINT64_MAX);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 16 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PD, "max_write_size could not be read"));
	lcloud_probe_free(p);

	/* authenticated encryption: tags through dm-integrity, not followed */
	p = dm_crypt("capi:authenc(hmac(sha256),xts(aes))-random - 0 259:0 4096 1 integrity:28:aead", 0);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "authenticated encryption"));
	lcloud_probe_free(p);

	/* an option liblcloud does not know: not followed */
	p = dm_crypt("aes-xts-plain64 - 0 259:0 4096 1 some_new_option", 0);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "could not read its table line whole"));
	lcloud_probe_free(p);
}

/* A crypt sector larger than the device's block: a command torn between blocks garbles a crypt sector. */
static void plain_direct_dm_crypt_sector_over_smaller_blocks(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/dm-0", LCLOUD_TARGET_DISK);
	int dm = sb_layer(p, LCLOUD_LAYER_DM, "dm-0", -1);
	int disk = sb_disk(p, "nvme0n1", "259:0", dm);
	int nvme = sb_nvme(p, disk, "nvme0n1", 512, 16 * KIB, "nvme:id-ns:nawupf");
	(void)state;

	sb_queue(p, dm, "253:0");
	sb_dm_segment(p, dm, 0, 1 << 20, "crypt", "aes-xts-plain64 - 0 259:0 4096 1 sector_size:4096");
	sb_string(p, dm, FACT_KERNEL_RELEASE, KERNEL_7_3);
	sb_u64(p, dm, FACT_DM_CRYPT_MAX_WRITE_SIZE, 0);
	boundary(p, nvme, 32 * KIB, 0);
	/* merges on, max_sectors_kb 16: commands across a boundary keep only each 512-byte block whole */
	sb_set_u64(p, disk, FACT_NOMERGES, 0);
	sb_set_u64(p, disk, FACT_MAX_SECTORS_KB, 16);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), NO);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	assert_true(sb_reason_has(p, PD, "less than a dm-crypt sector above it"));
	/* writes come in whole crypt sectors */
	assert_int_equal(lcloud_verdict_get_alignment(sb_path(p, PD)), 4 * KIB);
	lcloud_probe_free(p);
}

/*
 * A file on a file system of TYPE with BLOCK-byte blocks on the usual
 * namespace (merges off unless CAP_KB: then on, max_sectors_kb CAP_KB, and a
 * 32 KiB boundary): a loop device's backing file, every extent whole.
 */
static struct lcloud_probe *backing_file(const char *type, uint64_t block, uint64_t cap_kb)
{
	struct lcloud_probe *b = sb_new("/srv/disk.img", LCLOUD_TARGET_REGULAR);
	int fs = sb_fs(b, type, block), nvme, disk = namespace_below(b, fs, &nvme);

	sb_u64(b, fs, FACT_EXTENTS, 1);
	sb_u64(b, fs, FACT_EXTENT_EDGE_ALIGNMENT, 0);
	sb_u64(b, disk, FACT_LOGICAL_BLOCK_SIZE, 4 * KIB);
	if (cap_kb) {
		sb_set_u64(b, disk, FACT_NOMERGES, 0);
		sb_set_u64(b, disk, FACT_MAX_SECTORS_KB, cap_kb);
		boundary(b, nvme, 32 * KIB, 0);
	}
	return b;
}

/*
 * loop0 over BACKING (NULL: not followed) with direct I/O DIO, run by
 * RELEASE, bound to a file on device BACKING_DEV, its queue merging nothing.
 */
static struct lcloud_probe *loop_bound_to(struct lcloud_probe *backing, bool dio, const char *release,
					  const char *backing_dev)
{
	struct lcloud_probe *p = sb_new("/dev/loop0", LCLOUD_TARGET_DISK);
	int loop = sb_layer(p, LCLOUD_LAYER_LOOP, "loop0", -1);

	sb_queue(p, loop, "7:0");
	sb_u64(p, loop, FACT_LOOP_OFFSET, 0);
	sb_bool(p, loop, FACT_LOOP_DIO, dio);
	if (dio) {
		sb_string(p, loop, FACT_KERNEL_RELEASE, release);
		sb_string(p, loop, FACT_LOOP_BACKING_DEV, backing_dev);
		sb_u64(p, loop, FACT_LOOP_BACKING_INODE, 12);
		sb_string(p, loop, FACT_LOOP_BACKING_FILE, "/srv/disk.img");
	}
	if (backing)
		sb_backing(p, loop, backing);
	return p;
}

static struct lcloud_probe *loop_over(struct lcloud_probe *backing, bool dio, const char *release)
{
	return loop_bound_to(backing, dio, release, "259:0");
}

static void plain_direct_loop_follows_its_backing_file(void **state)
{
	/* XFS with 16 KiB blocks over the namespace: its file keeps 16 KiB whole, and so does the loop */
	struct lcloud_probe *p = loop_over(backing_file("xfs", 16 * KIB, 0), true, KERNEL_7_3);
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 32 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "loop:backing_file"));
	assert_true(sb_reason_has(p, PD, "backing file /srv/disk.img"));
	lcloud_probe_free(p);

	/* 4 KiB blocks: a larger write can span two extents of the file */
	p = loop_over(backing_file("ext4", 4 * KIB, 0), true, KERNEL_7_3);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_true(sb_reason_has(p, PD, "allocates in 4096-byte units"));
	lcloud_probe_free(p);

	/* a backing file whose own sizes have a merge gap (its namespace merges, max_sectors_kb 16): so has the loop */
	p = loop_over(backing_file("xfs", 16 * KIB, 16), true, KERNEL_7_3);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	lcloud_probe_free(p);

	/* the loop 4 KiB into its file: a 16 KiB write lands 4 KiB off the file's blocks */
	p = loop_over(backing_file("xfs", 16 * KIB, 0), true, KERNEL_7_3);
	sb_set_u64(p, 0, FACT_LOOP_OFFSET, 4 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 16 * KIB), NO);
	lcloud_probe_free(p);
}

/*
 * The loop's queue merges requests like a disk's: a merged request is a
 * larger direct write to the file, which keeps a smaller one whole only
 * inside one logical block of the device below; a write of the loop's
 * max_sectors_kb is never merged. The backing path merging too (C3 of the
 * proof matrix): its own sizes still bound the loop's.
 */
static void plain_direct_loop_merges(void **state)
{
	struct lcloud_probe *p = loop_over(backing_file("xfs", 16 * KIB, 0), true, KERNEL_7_3);
	(void)state;

	sb_set_u64(p, 0, FACT_NOMERGES, 0);
	sb_set_u64(p, 0, FACT_MAX_SECTORS_KB, 128);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	assert_int_equal(sb_check(p, PD, 16 * KIB), NO);
	lcloud_probe_free(p);

	p = loop_over(backing_file("xfs", 16 * KIB, 0), true, KERNEL_7_3);
	sb_set_u64(p, 0, FACT_NOMERGES, 0);
	sb_set_u64(p, 0, FACT_MAX_SECTORS_KB, 16);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	lcloud_probe_free(p);

	/* ext4 with 4 KiB blocks on a namespace that merges across boundaries: 4 KiB, one logical block */
	p = loop_over(backing_file("ext4", 4 * KIB, 1280), true, KERNEL_7_3);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 4 * KIB), YES);
	lcloud_probe_free(p);
}

/* Without direct I/O, through the page cache: no. Not followed: unknown, or no where nothing is below it. */
static void plain_direct_loop_not_followed(void **state)
{
	struct lcloud_probe *p = loop_over(NULL, false, NULL);
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "does buffered I/O to its backing file (loop/dio 0)"));
	lcloud_probe_free(p);

	/* bound to a file it could not probe (the note says why): unknown */
	p = loop_over(NULL, true, KERNEL_7_3);
	sb_note(p, NOTE_LOOP_BACKING_NOT_FOLLOWED, 0);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PD, "loop-backing-not-followed"));
	lcloud_probe_free(p);

	/* what it is bound to unread (LOOP_GET_STATUS64 needs root): unknown, run as root */
	p = loop_over(NULL, true, KERNEL_7_3);
	sb_set_unread(p, 0, FACT_LOOP_BACKING_DEV, "hand-built: needs root");
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PD, "run as root"));
	lcloud_probe_free(p);

	/* a file on a file system with no block device (tmpfs): no */
	p = loop_bound_to(NULL, true, KERNEL_7_3, "0:45");
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "no block device"));
	lcloud_probe_free(p);

	/* an older kernel: no, naming it */
	p = loop_over(backing_file("xfs", 16 * KIB, 0), true, "6.12.48+deb13-amd64");
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "Linux 6.12.48+deb13-amd64 runs it"));
	lcloud_probe_free(p);
}

/* ---- plain_direct: splits and merges -------------------------------------- */

static void plain_direct_max_sectors_kb_split(void **state)
{
	struct lcloud_probe *p = namespace_with(FACT_MAX_SECTORS_KB, 8);
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 8 * KIB);
	assert_int_equal(sb_check(p, PD, 16 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "splits writes above 8 KiB"));
	lcloud_probe_free(p);
}

static void plain_direct_chunk_edges(void **state)
{
	/* chunk_sectors 16: 8 KiB chunks */
	struct lcloud_probe *p = namespace_with(FACT_CHUNK_SECTORS, 16);
	int part, disk;
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 8 * KIB);
	assert_true(sb_reason_has(p, PD, "8192-byte chunk edges"));
	lcloud_probe_free(p);

	/* 64 KiB chunks seen from a partition 4 KiB into the disk: an edge every 64 KiB from 60 KiB */
	p = sb_new("/dev/nvme0n1p1", LCLOUD_TARGET_PARTITION);
	part = sb_partition(p, "nvme0n1p1", 4 * KIB, -1);
	disk = sb_layer(p, LCLOUD_LAYER_DISK, "nvme0n1", part);
	sb_queue(p, disk, "259:0");
	sb_set_u64(p, disk, FACT_CHUNK_SECTORS, 128);
	sb_nvme(p, disk, "nvme0n1", 4 * KIB, 16 * KIB, "nvme:id-ns:nawupf");
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	lcloud_probe_free(p);
}

static void plain_direct_md_chunk_edges(void **state)
{
	struct lcloud_probe *p = raid1("raid0", MIB, true);
	(void)state;

	/* raid0 with 8 KiB chunks */
	sb_set_u64(p, MD_LAYER, FACT_MD_CHUNK_SIZE, 8 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 8 * KIB);
	assert_true(sb_reason_has(p, PD, "sysfs:md/chunk_size"));
	lcloud_probe_free(p);
}

/* A dm device whose second segment starts at 12 KiB: writes across byte 12288 are split. */
static void plain_direct_dm_segment_edge(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/dm-0", LCLOUD_TARGET_DISK);
	int dm = sb_layer(p, LCLOUD_LAYER_DM, "dm-0", -1);
	(void)state;

	sb_queue(p, dm, "253:0");
	/* both segments land on 1 MiB-aligned places of the disk: only the edge limits */
	sb_dm_segment(p, dm, 0, 24, "linear", "259:0 2048");
	sb_dm_segment(p, dm, 24, 1 << 20, "linear", "259:0 4120");
	namespace_below(p, dm, NULL);
	sb_verdict(p);
	/* 12288 is a multiple of 4 KiB only */
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "12288"));
	lcloud_probe_free(p);
}

/* Two segments per request: with 512-byte buffer alignment a 4 KiB write may touch two pages, 8 KiB three. */
static void plain_direct_segments_per_request(void **state)
{
	struct lcloud_probe *p = namespace_with(FACT_MAX_SEGMENTS, 2);
	int disk;
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "sysfs:queue/max_segments"));
	lcloud_probe_free(p);

	/* buffers page aligned (dma_alignment 4095): 8 KiB fills exactly two pages */
	p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	disk = sb_layer(p, LCLOUD_LAYER_DISK, "nvme0n1", -1);
	sb_queue(p, disk, "259:0");
	sb_set_u64(p, disk, FACT_MAX_SEGMENTS, 2);
	sb_set_u64(p, disk, FACT_DMA_ALIGNMENT, 4095);
	sb_nvme(p, disk, "nvme0n1", 4 * KIB, 16 * KIB, "nvme:id-ns:nawupf");
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 8 * KIB);
	lcloud_probe_free(p);

	/* segments of at most 2 KiB, four per request: two per page, so two pages (a 4 KiB write) at most */
	p = namespace_with(FACT_MAX_SEGMENTS, 4);
	sb_set_u64(p, 0, FACT_MAX_SEGMENT_SIZE, 2 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_true(sb_reason_has(p, PD, "segments of at most 2048 bytes"));
	lcloud_probe_free(p);
}

/*
 * The pages are the writing system's, as the probe states them: with 16 KiB
 * pages (arm64) a 16 KiB write from a 512-byte-aligned buffer touches two,
 * which two segments carry.
 */
static void plain_direct_segments_counted_in_the_probe_pages(void **state)
{
	struct lcloud_probe *p = namespace_with(FACT_MAX_SEGMENTS, 2);
	(void)state;

	p->page_size = 16 * KIB;
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	lcloud_probe_free(p);
}

/* A virt boundary wider than a page splits at every page: only writes up to the buffer alignment stay whole. */
static void plain_direct_virt_boundary(void **state)
{
	struct lcloud_probe *p = namespace_with(FACT_VIRT_BOUNDARY_MASK, 16 * KIB - 1);
	(void)state;

	/* buffers 512-byte aligned */
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 512);
	assert_int_equal(sb_check(p, PD, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "virt_boundary_mask"));
	lcloud_probe_free(p);
}

static void plain_direct_split_limits_unread_is_unknown(void **state)
{
	static const enum fact_id unread[] = { FACT_MAX_SECTORS_KB, FACT_CHUNK_SECTORS, FACT_MAX_SEGMENTS,
					       FACT_VIRT_BOUNDARY_MASK };
	struct lcloud_probe *p;
	(void)state;

	for (size_t i = 0; i < sizeof(unread) / sizeof(unread[0]); i++) {
		p = namespace_without(unread[i]);
		sb_verdict(p);
		assert_int_equal(sb_max(p, PD), SB_PAGE_SIZE);
		assert_int_equal(sb_check(p, PD, 8 * KIB), UNKNOWN);
		assert_true(sb_unknown_has(p, PD, fact_def(unread[i])->name));
		lcloud_probe_free(p);
	}

	/* an md array's chunk size */
	p = raid1("raid0", MIB, true);
	sb_set_unread(p, MD_LAYER, FACT_MD_CHUNK_SIZE, "hand-built: unread");
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), SB_PAGE_SIZE);
	assert_int_equal(sb_check(p, PD, 8 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PD, "md/chunk_size"));
	lcloud_probe_free(p);
}

static void plain_direct_merges_beyond_the_promise(void **state)
{
	/* nomerges 0, commands of up to 1 MiB: more than the 16 KiB promised */
	struct lcloud_probe *p = namespace_with(FACT_NOMERGES, 0);
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 16 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "echo 2 > /sys/block/nvme0n1/queue/nomerges"));
	lcloud_probe_free(p);
}

static void plain_direct_merges_within_the_promise(void **state)
{
	/* merges on, but no command larger than 16 KiB and no boundary: each write stays whole */
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int disk = sb_layer(p, LCLOUD_LAYER_DISK, "nvme0n1", -1);
	(void)state;

	sb_queue(p, disk, "259:0");
	sb_set_u64(p, disk, FACT_NOMERGES, 0);
	sb_set_u64(p, disk, FACT_MAX_SECTORS_KB, 16);
	sb_nvme(p, disk, "nvme0n1", 4 * KIB, 16 * KIB, "nvme:id-ns:nawupf");
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	lcloud_probe_free(p);
}

/* The usual namespace with a 32 KiB boundary, merges on (nomerges 0) and max_sectors_kb CAP_KB. */
static struct lcloud_probe *merging_namespace(uint64_t cap_kb, uint64_t boundary_bytes)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int nvme, disk = namespace_below(p, -1, &nvme);

	sb_set_u64(p, disk, FACT_NOMERGES, 0);
	sb_set_u64(p, disk, FACT_MAX_SECTORS_KB, cap_kb);
	if (boundary_bytes)
		boundary(p, nvme, boundary_bytes, 0);
	return p;
}

static void plain_direct_merges_across_a_boundary(void **state)
{
	/*
	 * No command larger than the 16 KiB promised, but the promise has 32 KiB
	 * boundaries: two 8 KiB writes on either side of one merge into a 16 KiB
	 * command that crosses it, kept whole per 4 KiB block only. A 16 KiB
	 * write is max_sectors_kb itself: no merge can grow it, and aligned it
	 * crosses no boundary. So 4 KiB and 16 KiB, not 8 KiB.
	 */
	struct lcloud_probe *p = merging_namespace(16, 32 * KIB);
	uint64_t above = 0, below = 0;
	char why[1024];
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	assert_int_equal(sb_check(p, PD, 4 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 32 * KIB), NO);
	assert_int_equal(lcloud_verdict_get_merge_gap(sb_path(p, PD), &above, &below), 1);
	assert_int_equal(above, 4 * KIB);
	assert_int_equal(below, 16 * KIB);
	assert_true(sb_reason_has(p, PD, "atomic boundaries"));
	assert_true(sb_reason_has(p, PD, "max_sectors_kb itself, is never merged"));
	/* the 8 KiB answer names the merge, and lcloud_verdict_allows refuses it too */
	assert_int_equal(lcloud_probe_check(p, PD, 8 * KIB, NULL, why, sizeof(why)), NO);
	assert_non_null(strstr(why, "merge such a write with a neighbour"));
	assert_int_equal(lcloud_verdict_allows(sb_path(p, PD), 0, 8 * KIB, NULL, 0), 0);
	assert_int_equal(lcloud_verdict_allows(sb_path(p, PD), 16 * KIB, 16 * KIB, NULL, 0), 1);
	lcloud_probe_free(p);
}

/* A cap equal to a smaller write: 8 KiB is never merged; 4 KiB is one block; 16 KiB is split. */
static void plain_direct_merge_cap_equal_to_the_write(void **state)
{
	struct lcloud_probe *p = merging_namespace(8, 32 * KIB);
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 8 * KIB);
	assert_int_equal(sb_check(p, PD, 4 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 8 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 16 * KIB), NO);
	/* 4 and 8 KiB are neighbours: no gap between them */
	assert_int_equal(lcloud_verdict_get_merge_gap(sb_path(p, PD), NULL, NULL), 0);
	assert_true(sb_reason_has(p, PD, "a 8192-byte write, max_sectors_kb itself, is never merged"));
	assert_true(sb_reason_has(p, PD, "a larger one is split at max_sectors_kb"));
	lcloud_probe_free(p);

	/* a cap that is no power of two: no aligned write equals it, and every smaller one can be merged */
	p = merging_namespace(12, 32 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	lcloud_probe_free(p);

	/* a cap above the promise: a write of the cap is more than the device keeps whole */
	p = merging_namespace(32, 0);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 16 * KIB), NO);
	assert_int_equal(sb_check(p, PD, 32 * KIB), NO);
	lcloud_probe_free(p);
}

/* Merges never cross a chunk edge: boundaries that are all chunk edges are never crossed by a merge. */
static void plain_direct_chunk_edges_stop_merges(void **state)
{
	struct lcloud_probe *p = merging_namespace(16, 32 * KIB);
	(void)state;

	/* chunk_sectors 64: 32 KiB chunks, the same edges as the boundaries */
	sb_set_u64(p, 0, FACT_CHUNK_SECTORS, 64);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	assert_int_equal(sb_check(p, PD, 8 * KIB), YES);
	assert_int_equal(lcloud_verdict_get_merge_gap(sb_path(p, PD), NULL, NULL), 0);
	assert_true(sb_reason_has(p, PD, "never merges across"));
	lcloud_probe_free(p);

	/* 16 KiB chunks inside 32 KiB boundaries: every boundary is a chunk edge too */
	p = merging_namespace(16, 32 * KIB);
	sb_set_u64(p, 0, FACT_CHUNK_SECTORS, 32);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 8 * KIB), YES);
	lcloud_probe_free(p);

	/* 64 KiB chunks: the boundary at 32 KiB is no chunk edge, merges can cross it */
	p = merging_namespace(16, 32 * KIB);
	sb_set_u64(p, 0, FACT_CHUNK_SECTORS, 128);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	lcloud_probe_free(p);
}

/* A promise aligned to the write's size (AWS): a merged command need not be aligned, so it is no shelter. */
static void plain_direct_merges_under_a_promise_aligned_to_size(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme1n1", LCLOUD_TARGET_DISK);
	int disk = ebs_namespace(p, -1, 4 * KIB, 4 * KIB);
	(void)state;

	/* merged commands stay within 16 KiB, but two 8 KiB writes at 8 KiB and 16 KiB make one at 8 KiB */
	sb_set_u64(p, disk, FACT_NOMERGES, 0);
	sb_set_u64(p, disk, FACT_MAX_SECTORS_KB, 16);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	assert_true(sb_reason_has(p, PD, "aligned to its own size, which a merged one need not be"));
	lcloud_probe_free(p);
}

/* Several disks: a size survives merges only where it survives on every one of them. */
static void plain_direct_merges_on_every_disk(void **state)
{
	struct lcloud_probe *p = raid1("raid1", MIB, true);
	(void)state;

	/* both namespaces cap at 16 KiB: 4 and 16 KiB on each, so on the mirror */
	sb_set_u64(p, 1, FACT_NOMERGES, 0);
	sb_set_u64(p, 1, FACT_MAX_SECTORS_KB, 16);
	sb_set_u64(p, 3, FACT_NOMERGES, 0);
	sb_set_u64(p, 3, FACT_MAX_SECTORS_KB, 16);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	lcloud_probe_free(p);

	/* one caps at 8 KiB: 16 KiB is split there, and 8 KiB can be merged on the other */
	p = raid1("raid1", MIB, true);
	sb_set_u64(p, 1, FACT_NOMERGES, 0);
	sb_set_u64(p, 1, FACT_MAX_SECTORS_KB, 16);
	sb_set_u64(p, 3, FACT_NOMERGES, 0);
	sb_set_u64(p, 3, FACT_MAX_SECTORS_KB, 8);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	assert_int_equal(sb_check(p, PD, 16 * KIB), NO);
	lcloud_probe_free(p);
}

static void plain_direct_nomerges_unread(void **state)
{
	struct lcloud_probe *p = namespace_without(FACT_NOMERGES);
	(void)state;

	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_true(sb_check(p, PD, 16 * KIB) != YES);
	assert_true(sb_reason_has(p, PD, "queue/nomerges could not be read"));
	lcloud_probe_free(p);
}

/* ---- plain_direct: the file system ---------------------------------------- */

/* A file system of TYPE over the usual namespace; TARGET a directory (new files) or a regular file. */
static struct lcloud_probe *fs_on_namespace(const char *type, uint64_t block, enum lcloud_target_type target,
					    int *ret_fs)
{
	struct lcloud_probe *p = sb_new("/data/x", target);
	int fs = sb_fs(p, type, block);

	namespace_below(p, fs, NULL);
	*ret_fs = fs;
	return p;
}

static void plain_direct_file_system_allocation_unit(void **state)
{
	int fs;
	struct lcloud_probe *p = fs_on_namespace("xfs", 4 * KIB, LCLOUD_TARGET_DIRECTORY, &fs);
	(void)state;

	/* 4 KiB blocks: a larger write can span two extents */
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_true(sb_reason_has(p, PD, "allocates in 4096-byte units"));
	lcloud_probe_free(p);

	/* ext4 with 16 KiB bigalloc clusters keeps the device's 16 KiB */
	p = fs_on_namespace("ext4", 4 * KIB, LCLOUD_TARGET_DIRECTORY, &fs);
	sb_u64(p, fs, FACT_CLUSTER_SIZE, 16 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	lcloud_probe_free(p);
}

static void plain_direct_cluster_size_unread_is_unknown(void **state)
{
	int fs;
	struct lcloud_probe *p = fs_on_namespace("ext4", 4 * KIB, LCLOUD_TARGET_DIRECTORY, &fs);
	(void)state;

	sb_unread(p, fs, FACT_CLUSTER_SIZE, "reading the superblock needs root");
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 8 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PD, "cluster size"));
	lcloud_probe_free(p);
}

static void plain_direct_block_size_unread_is_unknown(void **state)
{
	struct lcloud_probe *p = sb_new("/data", LCLOUD_TARGET_DIRECTORY);
	int fs = sb_layer(p, LCLOUD_LAYER_FILESYSTEM, "xfs", -1);
	(void)state;

	sb_string(p, fs, FACT_FSTYPE, "xfs");
	sb_unread(p, fs, FACT_BLOCK_SIZE, "statfs failed");
	namespace_below(p, fs, NULL);
	sb_verdict(p);
	/* no block is smaller than 512 bytes: above that, unknown */
	assert_int_equal(sb_max(p, PD), 512);
	assert_int_equal(sb_check(p, PD, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PD, "block size"));
	lcloud_probe_free(p);
}

static void plain_direct_file_system_placement(void **state)
{
	int fs;
	struct lcloud_probe *p = fs_on_namespace("vfat", 4 * KIB, LCLOUD_TARGET_DIRECTORY, &fs);
	(void)state;

	/* a file system whose placement liblcloud does not follow: unknown */
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PD, "vfat"));
	lcloud_probe_free(p);

	/* btrfs over two devices: the data may be on the one not shown */
	p = fs_on_namespace("btrfs", 4 * KIB, LCLOUD_TARGET_DIRECTORY, &fs);
	sb_u64(p, fs, FACT_BTRFS_DEVICES, 2);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "spans 2 devices"));
	lcloud_probe_free(p);

	/* btrfs on one device is followed */
	p = fs_on_namespace("btrfs", 4 * KIB, LCLOUD_TARGET_DIRECTORY, &fs);
	sb_u64(p, fs, FACT_BTRFS_DEVICES, 1);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), YES);
	lcloud_probe_free(p);
}

static void plain_direct_realtime_unread_is_unknown(void **state)
{
	int fs;
	struct lcloud_probe *p = fs_on_namespace("xfs", 16 * KIB, LCLOUD_TARGET_REGULAR, &fs);
	(void)state;

	sb_unread(p, fs, FACT_REALTIME, "the file's flags could not be read");
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PD, "flags could not be read"));
	lcloud_probe_free(p);

	/* a realtime file whose realtime device could not be read */
	p = fs_on_namespace("xfs", 16 * KIB, LCLOUD_TARGET_REGULAR, &fs);
	sb_bool(p, fs, FACT_REALTIME, true);
	sb_unread(p, fs, FACT_REALTIME_DEVICE, "the rtdev mount option names no device");
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PD, "realtime"));
	lcloud_probe_free(p);
}

static void plain_direct_file_without_direct_io_none(void **state)
{
	int fs;
	struct lcloud_probe *p = fs_on_namespace("ext4", 4 * KIB, LCLOUD_TARGET_REGULAR, &fs);
	(void)state;

	sb_u64(p, fs, FACT_STX_DIO_OFFSET_ALIGN, 0);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "statx:stx_dio_offset_align"));
	lcloud_probe_free(p);
}

/* Writes smaller than stx_dio_offset_align (16 KiB) go through the page cache: none. */
static void plain_direct_direct_io_alignment_floor(void **state)
{
	int fs;
	struct lcloud_probe *p = fs_on_namespace("xfs", 16 * KIB, LCLOUD_TARGET_DIRECTORY, &fs);
	(void)state;

	sb_u64(p, fs, FACT_STX_DIO_OFFSET_ALIGN, 16 * KIB);
	sb_verdict(p);
	assert_int_equal(lcloud_verdict_get_min_untorn_bytes(sb_path(p, PD)), 16 * KIB);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	lcloud_probe_free(p);
}

/* A file's own extents: an edge at byte 12288 keeps writes to 4 KiB; an unread map to the block. */
static void plain_direct_file_extent_edges(void **state)
{
	int fs;
	struct lcloud_probe *p = fs_on_namespace("ext4", 4 * KIB, LCLOUD_TARGET_REGULAR, &fs);
	(void)state;

	sb_u64(p, fs, FACT_CLUSTER_SIZE, 16 * KIB);
	sb_u64(p, fs, FACT_EXTENTS, 2);
	sb_u64(p, fs, FACT_EXTENT_EDGE_ALIGNMENT, 4 * KIB);
	sb_u64(p, fs, FACT_EXTENT_EDGE_WORST, 12288);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 16 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "12288"));
	lcloud_probe_free(p);

	/* every edge on 64 KiB: the cluster stands */
	p = fs_on_namespace("ext4", 4 * KIB, LCLOUD_TARGET_REGULAR, &fs);
	sb_u64(p, fs, FACT_CLUSTER_SIZE, 16 * KIB);
	sb_u64(p, fs, FACT_EXTENTS, 2);
	sb_u64(p, fs, FACT_EXTENT_EDGE_ALIGNMENT, 64 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	lcloud_probe_free(p);

	/* the extent map unread: the block size, unknown above it */
	p = fs_on_namespace("ext4", 4 * KIB, LCLOUD_TARGET_REGULAR, &fs);
	sb_u64(p, fs, FACT_CLUSTER_SIZE, 16 * KIB);
	sb_unread(p, fs, FACT_EXTENTS, "no read permission on the file");
	sb_unread(p, fs, FACT_EXTENT_EDGE_ALIGNMENT, "no read permission on the file");
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_check(p, PD, 16 * KIB), UNKNOWN);
	assert_true(sb_unknown_has(p, PD, "extent map"));
	lcloud_probe_free(p);
}

/* ---- the promise ---------------------------------------------------------- */

/* AWUPF is each controller's own: with two paths and the others' unread, one block is sure. */
static void awupf_on_a_shared_namespace(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int disk = sb_disk(p, "nvme0n1", "259:0", -1);
	int nvme = sb_nvme(p, disk, "nvme0n1", 4 * KIB, 16 * KIB, "nvme:id-ctrl:awupf");
	(void)state;

	sb_u64(p, nvme, FACT_MULTIPATH_PATHS, 2);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PT), 4 * KIB);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_true(sb_reason_has(p, PT, "sysfs:multipath"));
	lcloud_probe_free(p);

	/* the smallest AWUPF over every path, 8 KiB, counts */
	p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	disk = sb_disk(p, "nvme0n1", "259:0", -1);
	nvme = sb_nvme(p, disk, "nvme0n1", 4 * KIB, 16 * KIB, "nvme:id-ctrl:awupf");
	sb_u64(p, nvme, FACT_MULTIPATH_PATHS, 2);
	sb_u64(p, nvme, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES_EVERY_PATH, 8 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PT), 8 * KIB);
	assert_int_equal(sb_max(p, PD), 8 * KIB);
	lcloud_probe_free(p);

	/* NAWUPF is the namespace's own: it counts in full on every path */
	p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	disk = sb_disk(p, "nvme0n1", "259:0", -1);
	nvme = sb_nvme(p, disk, "nvme0n1", 4 * KIB, 16 * KIB, "nvme:id-ns:nawupf");
	sb_u64(p, nvme, FACT_MULTIPATH_PATHS, 2);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PT), 16 * KIB);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	lcloud_probe_free(p);
}

static void cloud_aws_promise_aligned_to_size(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme1n1", LCLOUD_TARGET_DISK);
	int part;
	(void)state;

	ebs_namespace(p, -1, 512, 512);
	sb_verdict(p);
	/* writes aligned to their own size: no fixed alignment, no boundary */
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	assert_int_equal(lcloud_verdict_get_alignment(sb_path(p, PD)), 0);
	assert_true(sb_reason_has(p, PD, "cloud:aws-ebs-twp"));
	lcloud_probe_free(p);

	/* a partition at 1 MiB + 4 KiB: 4 KiB writes aligned in it are aligned on the disk, 8 KiB ones not */
	p = sb_new("/dev/nvme1n1p1", LCLOUD_TARGET_PARTITION);
	part = sb_partition(p, "nvme1n1p1", MIB + 4 * KIB, -1);
	ebs_namespace(p, part, 512, 512);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	assert_int_equal(sb_max(p, PT), 4 * KIB);
	lcloud_probe_free(p);
}

/* Where the provider's alignment is lost, the device's own promise holds if it gives more. */
static void plain_direct_own_promise_where_provider_alignment_is_lost(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme1n1p1", LCLOUD_TARGET_PARTITION);
	int part = sb_partition(p, "nvme1n1p1", MIB + 4 * KIB, -1);
	(void)state;

	/* the device's own 8 KiB (no alignment beyond its 4 KiB blocks) beats the provider's 4 KiB here */
	ebs_namespace(p, part, 8 * KIB, 4 * KIB);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 8 * KIB);
	assert_int_equal(sb_max(p, PT), 8 * KIB);
	/* passthrough names the promise that holds; plain_direct names only the provider's that does not */
	assert_true(sb_reason_has(p, PT, "which holds here"));
	lcloud_probe_free(p);
}

/* A Google persistent disk with 16 KiB physical blocks, on SCSI. */
static int gcp_disk(struct lcloud_probe *p, int parent, bool promise)
{
	int disk = sb_disk(p, "sda", "8:0", parent);
	int scsi = sb_layer(p, LCLOUD_LAYER_SCSI, "sda", disk);
	int cloud = sb_layer(p, LCLOUD_LAYER_CLOUD, "gcp", scsi);

	sb_string(p, cloud, FACT_PRODUCT, "persistent-disk");
	if (!promise)
		return disk;
	sb_u64_from(p, cloud, FACT_PROMISE_UNTORN_MAX_BYTES, 16 * KIB, "cloud:gcp-pd-16k");
	sb_u64_from(p, cloud, FACT_PROMISE_UNTORN_GRANULARITY_BYTES, 4 * KIB, "cloud:gcp-pd-16k");
	sb_u64_from(p, cloud, FACT_PROMISE_BOUNDARY_BYTES, 16 * KIB, "cloud:gcp-pd-16k");
	sb_promise_alignment(p, cloud, LAYER_PROMISE_INSIDE_BOUNDARY);
	return disk;
}

/* A write inside one 16 KiB-aligned physical block is untorn; one across two is not. */
static void cloud_gcp_promise_inside_physical_block(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/sda", LCLOUD_TARGET_DISK);
	int part;
	(void)state;

	gcp_disk(p, -1, true);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	assert_true(sb_reason_has(p, PD, "cloud:gcp-pd-16k"));
	/* no NVMe namespace: no passthrough */
	assert_int_equal(sb_check(p, PT, 4 * KIB), NO);
	lcloud_probe_free(p);

	/* a partition 4 KiB past a 16 KiB boundary: 4 KiB writes stay in one block, 16 KiB ones straddle two */
	p = sb_new("/dev/sda1", LCLOUD_TARGET_PARTITION);
	part = sb_partition(p, "sda1", MIB + 4 * KIB, -1);
	gcp_disk(p, part, true);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 16 * KIB), NO);
	lcloud_probe_free(p);
}

/*
 * Google's promise is per aligned physical block: a command the block layer
 * merged from whole aligned blocks keeps each of them whole. With merges on
 * and commands of up to 1280 KiB, an aligned 16 KiB write stays whole; an
 * 8 KiB one can share a block with a neighbour's part in a command across
 * two blocks, which keeps only each 4 KiB unit of the promise whole.
 */
static void cloud_gcp_merged_whole_blocks(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/sda", LCLOUD_TARGET_DISK);
	int disk = gcp_disk(p, -1, true);
	uint64_t above = 0, below = 0;
	(void)state;

	sb_set_u64(p, disk, FACT_NOMERGES, 0);
	sb_set_u64(p, disk, FACT_MAX_SECTORS_KB, 1280);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	assert_int_equal(sb_check(p, PD, 16 * KIB), YES);
	assert_int_equal(sb_check(p, PD, 8 * KIB), NO);
	/* the promise's granularity here (4 KiB) is the block every command keeps whole */
	assert_int_equal(sb_check(p, PD, 4 * KIB), YES);
	assert_int_equal(lcloud_verdict_get_merge_gap(sb_path(p, PD), &above, &below), 1);
	assert_int_equal(above, 4 * KIB);
	assert_int_equal(below, 16 * KIB);
	assert_true(sb_reason_has(p, PD, "one whole aligned 16384-byte block stays whole"));
	lcloud_probe_free(p);

	/* a partition 4 KiB past a block: its aligned 16 KiB writes straddle two blocks, merged or not */
	p = sb_new("/dev/sda1", LCLOUD_TARGET_PARTITION);
	disk = gcp_disk(p, sb_partition(p, "sda1", MIB + 4 * KIB, -1), true);
	sb_set_u64(p, disk, FACT_NOMERGES, 0);
	sb_set_u64(p, disk, FACT_MAX_SECTORS_KB, 1280);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 16 * KIB), NO);
	assert_int_equal(sb_max(p, PD), 4 * KIB);
	lcloud_probe_free(p);
}

static void cloud_disk_without_promise_none(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/sda", LCLOUD_TARGET_DISK);
	(void)state;

	/* a persistent disk with 4 KiB physical blocks: the cloud layer states no promise */
	gcp_disk(p, -1, false);
	sb_verdict(p);
	assert_int_equal(sb_check(p, PD, 4 * KIB), NO);
	assert_true(sb_reason_has(p, PD, "cloud-* notes"));
	lcloud_probe_free(p);
}

/* A volatile write cache is about durability (a flush), not tearing: the sizes stay. */
static void volatile_write_cache_changes_no_size(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int nvme;
	(void)state;

	namespace_below(p, -1, &nvme);
	sb_bool(p, nvme, FACT_VOLATILE_WRITE_CACHE, true);
	sb_verdict(p);
	assert_int_equal(sb_max(p, PT), 16 * KIB);
	assert_int_equal(sb_max(p, PD), 16 * KIB);
	lcloud_probe_free(p);
}

/* ---- buffered and the extended LBA format --------------------------------- */

static void buffered_never(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	(void)state;

	namespace_below(p, -1, NULL);
	sb_verdict(p);
	assert_int_equal(sb_check(p, BUF, 512), NO);
	assert_true(sb_reason_has(p, BUF, "page cache"));
	lcloud_probe_free(p);
}

/* Metadata interleaved in every block and a block device of size 0: no path, and check says no. */
static void extended_lba_no_path(void **state)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	int disk = sb_layer(p, LCLOUD_LAYER_DISK, "nvme0n1", -1);
	int nvme;
	(void)state;

	sb_queue(p, disk, "259:0");
	sb_set_u64(p, disk, FACT_SIZE, 0);
	nvme = sb_layer(p, LCLOUD_LAYER_NVME, "nvme0n1", disk);
	sb_u64(p, nvme, FACT_FLBAS, 0x10);
	sb_u64(p, nvme, FACT_LBA_SIZE, 4 * KIB);
	sb_u64(p, nvme, FACT_LBA_METADATA_SIZE, 8);
	sb_u64_from(p, nvme, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES, 16 * KIB, "nvme:id-ns:nawupf");
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MIN_BYTES, 4 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES, 16 * KIB);
	sb_u64(p, disk, FACT_ATOMIC_WRITE_BOUNDARY_BYTES, 0);
	sb_verdict(p);
	for (enum lcloud_io_path path = RWF; path <= BUF; path++) {
		assert_int_equal(sb_max(p, path), 0);
		assert_true(sb_reason_has(p, path, "nvme:id-ns:flbas"));
	}
	/* not -ERANGE for a device of size 0: no, for any size */
	assert_int_equal(sb_check(p, LCLOUD_PATH_BEST, 4 * KIB), NO);
	lcloud_probe_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unread_evidence_is_unknown_never_no_limit),
		cmocka_unit_test(unknown_never_hides_a_no),
		cmocka_unit_test(check_prefers_the_kernels_guarantee),
		cmocka_unit_test(rwf_atomic_statx_of_the_file),
		cmocka_unit_test(rwf_atomic_statx_of_the_device_node),
		cmocka_unit_test(rwf_atomic_software_path_above_unit_max_opt),
		cmocka_unit_test(rwf_atomic_misaligned_partition_is_software),
		cmocka_unit_test(rwf_atomic_queue_limits_of_a_device),
		cmocka_unit_test(rwf_atomic_partition_start_rule),
		cmocka_unit_test(rwf_atomic_partition_start_unread_is_unknown),
		cmocka_unit_test(rwf_atomic_cut_at_shifted_nabo),
		cmocka_unit_test(rwf_atomic_stacking_file_system_none),
		cmocka_unit_test(rwf_atomic_file_without_direct_io_none),
		cmocka_unit_test(file_system_type_is_its_fstype_fact),
		cmocka_unit_test(rwf_atomic_other_file_system_unknown_until_confirmed),
		cmocka_unit_test(rwf_atomic_live_refused_takes_the_path),
		cmocka_unit_test(rwf_atomic_live_unenforced_is_unknown),
		cmocka_unit_test(rwf_atomic_live_max_caps_where_statx_is_not_trusted),
		cmocka_unit_test(rwf_atomic_live_not_tried_leaves_statx),
		cmocka_unit_test(rwf_atomic_directory_without_tmpfile_unknown),
		cmocka_unit_test(rwf_atomic_directory_ext4_device_without_atomics_none),
		cmocka_unit_test(rwf_atomic_statx_unread_unknown),
		cmocka_unit_test(rwf_atomic_kernel_without_atomic_fields_none),
		cmocka_unit_test(passthrough_power_fail_size),
		cmocka_unit_test(passthrough_boundary_and_nabo),
		cmocka_unit_test(passthrough_cloud_promise_when_larger),
		cmocka_unit_test(passthrough_partition_shifts_boundary),
		cmocka_unit_test(passthrough_generic_node),
		cmocka_unit_test(passthrough_transfer_limit),
		cmocka_unit_test(passthrough_transfer_limit_unread_is_unknown),
		cmocka_unit_test(passthrough_identify_unread_is_unknown),
		cmocka_unit_test(passthrough_needs_an_nvme_namespace),
		cmocka_unit_test(passthrough_lba_metadata_none),
		cmocka_unit_test(plain_direct_device_promise),
		cmocka_unit_test(plain_direct_no_promise_none),
		cmocka_unit_test(plain_direct_identify_unread_is_unknown),
		cmocka_unit_test(plain_direct_partition_off_the_boundary),
		cmocka_unit_test(plain_direct_partition_off_the_block),
		cmocka_unit_test(plain_direct_partition_start_unread_is_unknown),
		cmocka_unit_test(plain_direct_md_member_offsets),
		cmocka_unit_test(plain_direct_md_member_offset_unread_is_unknown),
		cmocka_unit_test(plain_direct_parity_raid_none),
		cmocka_unit_test(plain_direct_dm_linear_offsets),
		cmocka_unit_test(plain_direct_dm_table_unread_is_unknown),
		cmocka_unit_test(plain_direct_dm_non_linear_none),
		cmocka_unit_test(plain_direct_dm_striped),
		cmocka_unit_test(plain_direct_dm_followed_kernel),
		cmocka_unit_test(plain_direct_dm_crypt),
		cmocka_unit_test(plain_direct_dm_crypt_sector_over_smaller_blocks),
		cmocka_unit_test(plain_direct_loop_follows_its_backing_file),
		cmocka_unit_test(plain_direct_loop_merges),
		cmocka_unit_test(plain_direct_loop_not_followed),
		cmocka_unit_test(plain_direct_max_sectors_kb_split),
		cmocka_unit_test(plain_direct_chunk_edges),
		cmocka_unit_test(plain_direct_md_chunk_edges),
		cmocka_unit_test(plain_direct_dm_segment_edge),
		cmocka_unit_test(plain_direct_segments_per_request),
		cmocka_unit_test(plain_direct_segments_counted_in_the_probe_pages),
		cmocka_unit_test(plain_direct_virt_boundary),
		cmocka_unit_test(plain_direct_split_limits_unread_is_unknown),
		cmocka_unit_test(plain_direct_merges_beyond_the_promise),
		cmocka_unit_test(plain_direct_merges_within_the_promise),
		cmocka_unit_test(plain_direct_merges_across_a_boundary),
		cmocka_unit_test(plain_direct_merge_cap_equal_to_the_write),
		cmocka_unit_test(plain_direct_chunk_edges_stop_merges),
		cmocka_unit_test(plain_direct_merges_under_a_promise_aligned_to_size),
		cmocka_unit_test(plain_direct_merges_on_every_disk),
		cmocka_unit_test(plain_direct_nomerges_unread),
		cmocka_unit_test(plain_direct_file_system_allocation_unit),
		cmocka_unit_test(plain_direct_cluster_size_unread_is_unknown),
		cmocka_unit_test(plain_direct_block_size_unread_is_unknown),
		cmocka_unit_test(plain_direct_file_system_placement),
		cmocka_unit_test(plain_direct_realtime_unread_is_unknown),
		cmocka_unit_test(plain_direct_file_without_direct_io_none),
		cmocka_unit_test(plain_direct_direct_io_alignment_floor),
		cmocka_unit_test(plain_direct_file_extent_edges),
		cmocka_unit_test(awupf_on_a_shared_namespace),
		cmocka_unit_test(cloud_aws_promise_aligned_to_size),
		cmocka_unit_test(plain_direct_own_promise_where_provider_alignment_is_lost),
		cmocka_unit_test(cloud_gcp_promise_inside_physical_block),
		cmocka_unit_test(cloud_gcp_merged_whole_blocks),
		cmocka_unit_test(cloud_disk_without_promise_none),
		cmocka_unit_test(volatile_write_cache_changes_no_size),
		cmocka_unit_test(buffered_never),
		cmocka_unit_test(extended_lba_no_path),
	};

	return cmocka_run_group_tests_name("verdict rules", tests, NULL, NULL);
}
