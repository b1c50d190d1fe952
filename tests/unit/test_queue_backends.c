/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The queue's backends through their tables alone, without queue.c: each
 * table decides every operation and capability consistently, and the sync
 * and io_uring backends do I/O on a temporary file, refuse what their depth
 * does not hold with the same messages the queue gave before, and hand back
 * the slots they are done with (sync at submit) instead of calling back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "queue_backend.h"

static const struct queue_backend_ops *const tables[] = {
	&queue_backend_uring,
	&queue_backend_uring_nvme,
	&queue_backend_sync,
};

static void test_every_table_is_whole(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		const struct queue_backend_ops *t = tables[i];

		assert_non_null(t->name);
		assert_true(t->id != LCLOUD_BACKEND_AUTO);
		assert_string_equal(t->name, lcloud_backend_to_string(t->id));
		assert_true(t->atomic_path == LCLOUD_PATH_RWF_ATOMIC || t->atomic_path == LCLOUD_PATH_PASSTHROUGH);
		assert_true(t->state_size > 0);
		assert_non_null(t->open);
		assert_non_null(t->prep);
		assert_non_null(t->submit);
		assert_non_null(t->reap);
		assert_non_null(t->pending);
		assert_non_null(t->free);
		/* the operation is there exactly when the capability says so */
		assert_int_equal(t->register_buffers != NULL, !!(t->caps & QUEUE_CAP_REGISTERED_BUFFERS));
		/* an atomic write is either the kernel's RWF_ATOMIC or a command the verdict bounds, never both */
		assert_false((t->caps & QUEUE_CAP_RWF_ATOMIC) && (t->caps & QUEUE_CAP_NVME_COMMAND));
		assert_int_equal(t->atomic_path == LCLOUD_PATH_PASSTHROUGH, !!(t->caps & QUEUE_CAP_NVME_COMMAND));
	}
}

static int temp_file(void)
{
	char name[] = "/tmp/lcloud-backend-XXXXXX";
	int fd = mkstemp(name);

	assert_true(fd >= 0);
	unlink(name);
	assert_int_equal(ftruncate(fd, 1 << 16), 0);
	return fd;
}

static void test_sync_queues_completes_and_hands_slots_back(void **state)
{
	struct queue_backend_target t = { .depth = 2 };
	struct lcloud_completion out[4];
	struct queue_error e = { "" };
	uint32_t back[2], queued, to_reap;
	struct queue_slots done = { back, 0 };
	static char buf[2][4096];
	void *priv = calloc(1, queue_backend_sync.state_size);
	(void)state;

	assert_non_null(priv);
	t.fd = temp_file();
	assert_int_equal(queue_backend_sync.open(&t, priv, &e), 0);
	for (uint32_t i = 0; i < 2; i++) {
		const struct queue_op op = { true, buf[i], sizeof(buf[i]), i * 4096, 0, 100 + i };
		const struct hint_map m = { .lifetime = -1 };

		memset(buf[i], 'a' + (int)i, sizeof(buf[i]));
		assert_int_equal(queue_backend_sync.prep(priv, 7 - i, &op, &m, &e), 0);
	}
	{
		const struct queue_op op = { true, buf[0], 4096, 8192, 0, 102 };
		const struct hint_map m = { .lifetime = -1 };

		assert_int_equal(queue_backend_sync.prep(priv, 5, &op, &m, &e), -EAGAIN);
		assert_string_equal(e.text, "0 completions wait to be reaped; reap them first");
	}
	queue_backend_sync.pending(priv, &queued, &to_reap);
	assert_int_equal(queued, 2);
	assert_int_equal(to_reap, 0);
	/* the slots come back at submit, in the order they were queued */
	assert_int_equal(queue_backend_sync.submit(priv, &done, &e), 2);
	assert_int_equal(done.n, 2);
	assert_int_equal(back[0], 7);
	assert_int_equal(back[1], 6);
	queue_backend_sync.pending(priv, &queued, &to_reap);
	assert_int_equal(queued, 0);
	assert_int_equal(to_reap, 2);
	done.n = 0;
	assert_int_equal(queue_backend_sync.reap(priv, out, 4, 1, &done, &e), 2);
	assert_int_equal(done.n, 0);
	assert_int_equal(out[0].user_data, 100);
	assert_int_equal(out[0].result, 4096);
	assert_int_equal(out[1].user_data, 101);
	assert_int_equal(out[1].result, 4096);
	{
		char back_buf[4096];

		assert_int_equal(pread(t.fd, back_buf, sizeof(back_buf), 4096), 4096);
		assert_int_equal(back_buf[0], 'b');
	}
	queue_backend_sync.free(priv);
	free(priv);
	close(t.fd);
}

static void test_uring_completes_without_slots(void **state)
{
	struct queue_backend_target t = { .depth = 4 };
	struct lcloud_completion out[4];
	struct queue_error e = { "" };
	uint32_t back[4], queued, to_reap;
	struct queue_slots done = { back, 0 };
	static char buf[4096];
	const struct queue_op op = { true, buf, sizeof(buf), 0, 0, 42 };
	const struct hint_map m = { .lifetime = -1 };
	void *priv = calloc(1, queue_backend_uring.state_size);
	int r;
	(void)state;

	assert_non_null(priv);
	t.fd = temp_file();
	r = queue_backend_uring.open(&t, priv, &e);
	if (r == -EPERM || r == -ENOSYS || r == -EACCES) {
		free(priv);
		close(t.fd);
		skip(); /* io_uring switched off here */
	}
	assert_int_equal(r, 0);
	assert_int_equal(queue_backend_uring.prep(priv, UINT32_MAX, &op, &m, &e), 0);
	queue_backend_uring.pending(priv, &queued, &to_reap);
	assert_int_equal(queued, 1);
	assert_int_equal(queue_backend_uring.submit(priv, &done, &e), 1);
	assert_int_equal(queue_backend_uring.reap(priv, out, 4, 1, &done, &e), 1);
	assert_int_equal(done.n, 0);
	assert_int_equal(out[0].user_data, 42);
	assert_int_equal(out[0].result, 4096);
	assert_int_equal(out[0].nvme_status, 0);
	queue_backend_uring.free(priv);
	free(priv);
	close(t.fd);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_table_is_whole),
		cmocka_unit_test(test_sync_queues_completes_and_hands_slots_back),
		cmocka_unit_test(test_uring_completes_without_slots),
	};

	return fixture_main(argc, argv, "queue_backends", tests, sizeof(tests) / sizeof(tests[0]));
}
