/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a write class lands, on hand-built facts (no device): a namespace
 * whose device states what each reclaim unit handle is for (the Linux cloud
 * extension's lcloud_ext_placement), the placement identifiers it may use
 * in the reclaim unit handle status's order (fdp_placement_ids: Linux's
 * write stream N is the N-th) and the handle each reaches
 * (fdp_placement_handles). The expected streams and identifiers are worked
 * out here from those three lists, the way the NVMe driver numbers streams
 * (drivers/nvme/host/core.c, nvme_setup_rw: stream N sends plids[N - 1]),
 * never taken from the queue: a journal write must reach the journal
 * handle, whatever its number, through io_uring's stream and through
 * passthrough's DSPEC alike; a class the device has no handle for is
 * dropped and said to be. lcloud-target's FDP namespace proves the same
 * end to end (tests/vm/test_hint_census.py).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "queue.h"
#include "stack_builder.h"

struct device {
	const char *uses;    /* lcloud_ext_placement; NULL: the device states none */
	const char *pids;    /* fdp_placement_ids; NULL: FDP off */
	const char *handles; /* fdp_placement_handles; NULL: unread */
	uint64_t streams;    /* the disk's max_write_streams */
};

/* A queue of BACKEND on a whole namespace of DEV, built by hand: the probe and the backend's capabilities. */
static struct lcloud_queue *queue_on(const struct device *dev, const struct queue_backend_ops *backend)
{
	struct lcloud_probe *p = sb_new("/dev/nvme0n1", LCLOUD_TARGET_DISK);
	struct lcloud_queue *q = calloc(1, sizeof(*q));
	int disk = sb_disk(p, "nvme0n1", "259:0", -1);
	int nvme = sb_nvme(p, disk, "nvme0n1", 4096, 4096, "nvme:id-ns:nawupf");

	assert_non_null(q);
	sb_u64(p, disk, FACT_MAX_WRITE_STREAMS, dev->streams);
	sb_bool(p, nvme, FACT_DSM_SUPPORTED, true);
	if (dev->uses)
		sb_string(p, nvme, FACT_LCLOUD_EXT_PLACEMENT, dev->uses);
	sb_bool(p, nvme, FACT_FDP_ENABLED, dev->pids != NULL);
	if (dev->pids)
		sb_string(p, nvme, FACT_FDP_PLACEMENT_IDS, dev->pids);
	if (dev->handles)
		sb_string(p, nvme, FACT_FDP_PLACEMENT_HANDLES, dev->handles);
	q->probe = p;
	q->backend = backend;
	q->backend_caps = backend->caps;
	hint_caps_read(q);
	return q;
}

static void queue_done(struct lcloud_queue *q)
{
	lcloud_probe_free(q->probe);
	free(q);
}

static struct lcloud_placement place(struct lcloud_queue *q, unsigned int write_class, uint32_t group)
{
	struct lcloud_hint h = { .write_class = (uint8_t)write_class, .group = group };
	struct lcloud_placement pl = { .size = sizeof(pl) };

	assert_int_equal(lcloud_queue_get_placement(q, &h, &pl), 0);
	return pl;
}

static void assert_describes(struct lcloud_queue *q, unsigned int write_class, const char *want)
{
	struct lcloud_hint h = { .write_class = (uint8_t)write_class };
	char text[256];

	assert_int_equal(lcloud_queue_describe_hint(q, &h, 1, text, sizeof(text)), 0);
	if (!strstr(text, want))
		fail_msg("describe: '%s' lacks '%s'", text, want);
}

/* What the device receives from passthrough: DTYPE (CDW12 23:20) and DSPEC (CDW13 31:16); -1 no directive. */
static int dspec_sent(struct lcloud_queue *q, unsigned int write_class)
{
	struct lcloud_hint h = { .write_class = (uint8_t)write_class };
	struct hint_map m;

	hint_map(q, &h, true, &m);
	if (((m.cdw12 >> 20) & 0xf) != 2)
		return -1;
	return (int)(m.cdw13 >> 16);
}

/* lcloud-target --fdp 4 --placement-use 0=journal,1=data,2=metadata: handle 3 has no use, none is background. */
static const struct device census_target = { "0:journal 1:data 2:metadata 3:unspecified", "0,1,2,3", "0,1,2,3", 4 };

static void test_classes_go_to_the_handles_the_device_names(void **state)
{
	struct lcloud_queue *q = queue_on(&census_target, &queue_backend_uring);
	struct lcloud_placement pl;
	(void)state;

	/* journal: handle 0 is the first identifier, so stream 1 (by class number it would be stream 3) */
	pl = place(q, LCLOUD_CLASS_JOURNAL, 0);
	assert_int_equal(pl.basis, LCLOUD_PLACEMENT_BY_USE);
	assert_int_equal(pl.write_stream, 1);
	assert_int_equal(pl.placement_id, 0);
	assert_int_equal(pl.handle, 0);
	assert_int_equal(pl.use, LCLOUD_CLASS_JOURNAL);
	assert_int_equal(place(q, LCLOUD_CLASS_DATA, 0).write_stream, 2);
	assert_int_equal(place(q, LCLOUD_CLASS_METADATA, 0).write_stream, 3);
	assert_describes(q, LCLOUD_CLASS_JOURNAL, "kernel: write stream 1 (journal handle 0, as the device states)");
	/* background: no handle is for it; never handle 3 (no use) nor another class's */
	pl = place(q, LCLOUD_CLASS_BACKGROUND, 0);
	assert_int_equal(pl.basis, LCLOUD_PLACEMENT_NO_HANDLE);
	assert_int_equal(pl.write_stream, -1);
	assert_int_equal(pl.placement_id, -1);
	assert_describes(q, LCLOUD_CLASS_BACKGROUND, "class background dropped (the device has no background handle)");
	{
		struct lcloud_hint h = { .write_class = LCLOUD_CLASS_BACKGROUND };
		struct hint_map m;

		hint_map(q, &h, true, &m);
		assert_int_equal(m.write_stream, 0);
	}
	/* a write without class or group asks for nothing */
	assert_int_equal(place(q, 0, 0).basis, LCLOUD_PLACEMENT_NOT_ASKED);
	queue_done(q);
}

static void test_passthrough_sends_the_same_handles(void **state)
{
	struct lcloud_queue *q = queue_on(&census_target, &queue_backend_uring_nvme);
	(void)state;

	assert_int_equal(dspec_sent(q, LCLOUD_CLASS_JOURNAL), 0);
	assert_int_equal(dspec_sent(q, LCLOUD_CLASS_DATA), 1);
	assert_int_equal(dspec_sent(q, LCLOUD_CLASS_METADATA), 2);
	assert_int_equal(dspec_sent(q, LCLOUD_CLASS_BACKGROUND), -1);
	assert_int_equal(dspec_sent(q, LCLOUD_CLASS_NONE), -1); /* a write that asks for nothing gets no directive */
	assert_int_equal(place(q, LCLOUD_CLASS_JOURNAL, 0).write_stream, -1); /* no stream: DSPEC itself */
	assert_describes(q, LCLOUD_CLASS_JOURNAL, "; fdp placement id 0 (journal handle 0, as the device states)");
	assert_describes(q, LCLOUD_CLASS_BACKGROUND, "; placement dropped (the device has no background handle)");
	queue_done(q);
}

static void test_handle_reached_through_another_identifier(void **state)
{
	/* identifier 0 reaches handle 1 (data) and identifier 1 handle 0 (journal): journal is stream 2 */
	static const struct device crossed = { "0:journal 1:data", "0,1", "1,0", 2 };
	struct lcloud_queue *q = queue_on(&crossed, &queue_backend_uring);
	struct lcloud_queue *pt = queue_on(&crossed, &queue_backend_uring_nvme);
	struct lcloud_placement pl = place(q, LCLOUD_CLASS_JOURNAL, 0);
	(void)state;

	assert_int_equal(pl.write_stream, 2);
	assert_int_equal(pl.placement_id, 1);
	assert_int_equal(pl.handle, 0);
	assert_int_equal(place(q, LCLOUD_CLASS_DATA, 0).write_stream, 1);
	assert_int_equal(dspec_sent(pt, LCLOUD_CLASS_JOURNAL), 1);
	assert_int_equal(dspec_sent(pt, LCLOUD_CLASS_DATA), 0);
	queue_done(q);
	queue_done(pt);
}

static void test_a_group_picks_among_the_class_handles(void **state)
{
	static const struct device two_journals = { "0:journal 1:data 2:journal", "0,1,2", "0,1,2", 3 };
	struct lcloud_queue *q = queue_on(&two_journals, &queue_backend_uring);
	(void)state;

	assert_int_equal(place(q, LCLOUD_CLASS_JOURNAL, 1).handle, 0);
	assert_int_equal(place(q, LCLOUD_CLASS_JOURNAL, 2).handle, 2);
	assert_int_equal(place(q, LCLOUD_CLASS_JOURNAL, 3).handle, 0);
	assert_int_equal(place(q, LCLOUD_CLASS_JOURNAL, 2).write_stream, 3);
	/* a group never leaves its class: data has one handle */
	assert_int_equal(place(q, LCLOUD_CLASS_DATA, 2).handle, 1);
	/* a group without a class goes to handles without a use: here there are none */
	assert_int_equal(place(q, 0, 5).basis, LCLOUD_PLACEMENT_NO_HANDLE);
	queue_done(q);
}

static void test_without_stated_uses_by_number(void **state)
{
	static const struct device plain = { NULL, "0,1,2,3", "0,1,2,3", 4 };
	struct lcloud_queue *q = queue_on(&plain, &queue_backend_uring);
	struct lcloud_queue *pt = queue_on(&plain, &queue_backend_uring_nvme);
	struct lcloud_placement pl = place(q, LCLOUD_CLASS_JOURNAL, 0);
	(void)state;

	/* data the first stream, metadata the second, journal the third, background the fourth */
	assert_int_equal(pl.basis, LCLOUD_PLACEMENT_BY_NUMBER);
	assert_int_equal(pl.write_stream, 3);
	assert_int_equal(pl.use, 0);
	assert_int_equal(place(q, LCLOUD_CLASS_BACKGROUND, 0).write_stream, 4);
	/* passthrough by the same rule: the third identifier */
	assert_int_equal(dspec_sent(pt, LCLOUD_CLASS_JOURNAL), 2);
	assert_int_equal(dspec_sent(pt, LCLOUD_CLASS_DATA), 0);
	assert_describes(q, LCLOUD_CLASS_JOURNAL, "write stream 3 (by class number: the device states no handle uses)");
	queue_done(q);
	queue_done(pt);
}

static void test_dropped_and_why(void **state)
{
	static const struct device unread = { "0:data 1:journal", "0,1", NULL, 2 };
	static const struct device one_stream = { "0:data 1:journal", "0,1", "0,1", 1 };
	static const struct device no_fdp = { NULL, NULL, NULL, 0 };
	static const struct device malformed = { "journal everywhere", "0,1", "0,1", 2 };
	struct lcloud_queue *q;
	struct lcloud_placement pl;
	(void)state;

	/* which identifier reaches the journal handle is not known: dropped, not guessed */
	q = queue_on(&unread, &queue_backend_uring);
	assert_int_equal(place(q, LCLOUD_CLASS_JOURNAL, 0).basis, LCLOUD_PLACEMENT_UNMAPPED);
	queue_done(q);
	/* the journal handle's identifier is the second, past the one stream Linux offers */
	q = queue_on(&one_stream, &queue_backend_uring);
	pl = place(q, LCLOUD_CLASS_JOURNAL, 0);
	assert_int_equal(pl.basis, LCLOUD_PLACEMENT_UNMAPPED);
	assert_int_equal(pl.handle, 1);
	assert_describes(q, LCLOUD_CLASS_JOURNAL, "class journal dropped (the device's journal handle 1 has no write stream here)");
	assert_int_equal(place(q, LCLOUD_CLASS_DATA, 0).write_stream, 1);
	queue_done(q);
	/* the sync backend has no per-I/O stream: dropped because of it, not because of the device */
	q = queue_on(&census_target, &queue_backend_sync);
	assert_int_equal(place(q, LCLOUD_CLASS_JOURNAL, 0).basis, LCLOUD_PLACEMENT_BACKEND);
	assert_describes(q, LCLOUD_CLASS_JOURNAL, "class journal dropped (the sync backend sends no write stream)");
	queue_done(q);
	q = queue_on(&no_fdp, &queue_backend_uring);
	assert_int_equal(place(q, LCLOUD_CLASS_JOURNAL, 0).basis, LCLOUD_PLACEMENT_NO_PLACEMENT);
	queue_done(q);
	q = queue_on(&no_fdp, &queue_backend_uring_nvme);
	assert_int_equal(dspec_sent(q, LCLOUD_CLASS_JOURNAL), -1);
	assert_describes(q, LCLOUD_CLASS_JOURNAL, "; placement dropped (FDP not enabled)");
	queue_done(q);
	/* an extension table that does not parse states nothing: by number */
	q = queue_on(&malformed, &queue_backend_uring);
	assert_int_equal(place(q, LCLOUD_CLASS_JOURNAL, 0).basis, LCLOUD_PLACEMENT_BY_NUMBER);
	queue_done(q);
}

static void test_the_public_call_checks_its_arguments(void **state)
{
	struct lcloud_queue *q = queue_on(&census_target, &queue_backend_uring);
	struct lcloud_placement pl = { .size = 8 };
	(void)state;

	assert_int_equal(lcloud_queue_get_placement(q, NULL, &pl), -EINVAL); /* too small for version 1 */
	pl.size = sizeof(pl);
	assert_int_equal(lcloud_queue_get_placement(NULL, NULL, &pl), -EINVAL);
	assert_int_equal(lcloud_queue_get_placement(q, NULL, NULL), -EINVAL);
	assert_int_equal(lcloud_queue_get_placement(q, NULL, &pl), 0);
	assert_int_equal(pl.basis, LCLOUD_PLACEMENT_NOT_ASKED);
	assert_string_equal(lcloud_placement_basis_to_string(LCLOUD_PLACEMENT_BY_USE), "by_use");
	assert_string_equal(lcloud_placement_basis_to_string(LCLOUD_PLACEMENT_UNMAPPED), "unmapped");
	assert_null(lcloud_placement_basis_to_string((enum lcloud_placement_basis)99));
	queue_done(q);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes_go_to_the_handles_the_device_names),
		cmocka_unit_test(test_passthrough_sends_the_same_handles),
		cmocka_unit_test(test_handle_reached_through_another_identifier),
		cmocka_unit_test(test_a_group_picks_among_the_class_handles),
		cmocka_unit_test(test_without_stated_uses_by_number),
		cmocka_unit_test(test_dropped_and_why),
		cmocka_unit_test(test_the_public_call_checks_its_arguments),
	};
	(void)argc;
	(void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
