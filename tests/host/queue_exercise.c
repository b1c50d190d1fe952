/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Drives the liblcloud queue API on a file given by the host test: a batch of
 * QD writes with distinct user data reaped out of order, read back and
 * compared; the sync backend; a full queue; refusals with their reasons; the
 * context error of a failed open; the unhinted fast path over rings that wrap. Prints "ok ..." lines, exits 1 on a failure.
 *   queue_exercise FILE (atomic|plain)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lcloud/lcloud.h>

#define QD 32
#define BS 16384

static int failures;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (cond) {                                                     \
			printf("ok   " __VA_ARGS__);                            \
		} else {                                                        \
			printf("FAIL " __VA_ARGS__);                            \
			failures++;                                             \
		}                                                               \
		putchar('\n');                                                  \
	} while (0)

static void batch(struct lcloud_ctx *ctx, const char *path, enum lcloud_backend backend, bool atomic)
{
	struct lcloud_hint hint = { .write_class = LCLOUD_CLASS_DATA, .flags = atomic ? LCLOUD_IO_ATOMIC : 0 };
	struct lcloud_completion c[QD];
	struct lcloud_queue *q = NULL;
	unsigned char *buf, *back;
	int r, seen = 0;

	r = lcloud_queue_open(ctx, path, QD, backend, LCLOUD_QUEUE_WRITE, &q);
	CHECK(r == 0, "open %s on %s: %s", lcloud_backend_to_string(backend), path, lcloud_ctx_get_error(ctx));
	if (r)
		return;
	CHECK(lcloud_queue_get_backend(q) == backend, "backend is %s", lcloud_backend_to_string(backend));
	if (posix_memalign((void **)&buf, 4096, QD * BS) || posix_memalign((void **)&back, 4096, QD * BS))
		exit(2);
	for (int i = 0; i < QD; i++) {
		memset(buf + i * BS, 'A' + i % 26, BS);
		r = lcloud_queue_prep_write(q, buf + i * BS, BS, (uint64_t)i * BS, &hint, 1000 + i);
		if (r)
			break;
	}
	CHECK(r == 0, "%d writes queued: %s", QD, lcloud_queue_get_error(q));
	r = lcloud_queue_prep_write(q, buf, BS, 0, &hint, 9999);
	CHECK(r == -EAGAIN, "a full queue says EAGAIN (%d): %s", r, lcloud_queue_get_error(q));
	CHECK(lcloud_queue_submit(q) == QD, "%d submitted", QD);
	while (seen < QD) {
		r = lcloud_queue_reap(q, c, QD, 1);
		if (r <= 0)
			break;
		for (int i = 0; i < r; i++)
			if (c[i].user_data >= 1000 && c[i].user_data < 1000 + QD && c[i].result == BS)
				seen++;
	}
	CHECK(seen == QD, "%d completions with their user data and full length", seen);
	for (int i = 0; i < QD; i++)
		if (lcloud_queue_read(q, back + i * BS, BS, (uint64_t)i * BS, NULL, NULL) != BS)
			break;
	CHECK(memcmp(buf, back, QD * BS) == 0, "read back equals what was written");
	/* the same batch again, submitted and reaped in one step */
	for (int i = 0; i < QD; i++)
		lcloud_queue_prep_write(q, buf + i * BS, BS, (uint64_t)i * BS, &hint, 2000 + i);
	seen = 0;
	r = lcloud_queue_submit_and_reap(q, c, QD, QD);
	for (int i = 0; i < r; i++)
		if (c[i].user_data >= 2000 && c[i].user_data < 2000 + QD && c[i].result == BS)
			seen++;
	CHECK(r == QD && seen == QD, "submit_and_reap: %d of %d completions at once", seen, QD);
	/* MIN counts what the ring holds: with 4 already done, asking for 8 still waits for 8 */
	for (int i = 0; i < 4; i++)
		lcloud_queue_prep_write(q, buf + i * BS, BS, (uint64_t)i * BS, &hint, 3000 + i);
	lcloud_queue_submit(q);
	usleep(200000);
	for (int i = 4; i < 8; i++)
		lcloud_queue_prep_write(q, buf + i * BS, BS, (uint64_t)i * BS, &hint, 3000 + i);
	r = lcloud_queue_submit_and_reap(q, c, 8, 8);
	CHECK(r == 8, "min counts ready completions too: %d of 8", r);
	/* refusals: misaligned and odd-sized atomic writes never reach the kernel */
	if (atomic) {
		r = lcloud_queue_prep_write(q, buf, BS, 4096, &hint, 1);
		CHECK(r == -EINVAL && strstr(lcloud_queue_get_error(q), "naturally aligned"),
		      "misaligned atomic write refused: %s", lcloud_queue_get_error(q));
		r = lcloud_queue_prep_write(q, buf, 3 * 4096, 0, &hint, 1);
		CHECK(r == -EINVAL, "non-power-of-two atomic write refused: %s", lcloud_queue_get_error(q));
	}
	/* the synchronous calls refuse a queue with I/Os of its own */
	lcloud_queue_prep_write(q, buf, BS, 0, &hint, 4000);
	r = (int)lcloud_queue_write(q, buf, BS, 0, &hint, NULL);
	CHECK(r == -EBUSY, "a synchronous write on a busy queue is refused: %s", lcloud_queue_get_error(q));
	lcloud_queue_submit(q);
	r = lcloud_queue_reap(q, c, QD, 1);
	CHECK(r == 1 && c[0].user_data == 4000, "the queued write completes on its own");
	r = lcloud_queue_prep_write(q, buf + 1, 4096, 0, NULL, 1);
	CHECK(r == -EINVAL && strstr(lcloud_queue_get_error(q), "not aligned"), "unaligned buffer refused: %s",
	      lcloud_queue_get_error(q));
	{
		char mapping[256];

		CHECK(lcloud_queue_describe_hint(q, &hint, 1, mapping, sizeof(mapping)) == 0 && mapping[0],
		      "hint mapping: %s", mapping);
	}
	free(buf);
	free(back);
	lcloud_queue_free(q);
}

/*
 * The unhinted fast path on the io_uring backend: more writes than the rings
 * hold, reaped a few at a time (so that the submission and completion rings
 * wrap), read back through the fast read path and compared; a full queue;
 * and a registered buffer, which takes the fixed-buffer path instead.
 */
#define FAST_QD 8
#define FAST_ROUNDS 7
#define FAST_BATCH 7 /* not a divisor of the completion ring's 16 entries: reaps of 3 meet its end part way */
static void fast_path(struct lcloud_ctx *ctx, const char *path)
{
	struct lcloud_completion c[FAST_QD];
	struct lcloud_queue *q = NULL;
	unsigned char *buf, *back;
	bool seen[FAST_ROUNDS * FAST_BATCH] = { false };
	int r, ok = 1, n_seen = 0;

	r = lcloud_queue_open(ctx, path, FAST_QD, LCLOUD_BACKEND_IO_URING, LCLOUD_QUEUE_WRITE, &q);
	CHECK(r == 0, "fast path: open: %s", lcloud_ctx_get_error(ctx));
	if (r)
		return;
	if (posix_memalign((void **)&buf, 4096, FAST_ROUNDS * FAST_QD * 4096) ||
	    posix_memalign((void **)&back, 4096, FAST_ROUNDS * FAST_QD * 4096))
		exit(2);
	for (int i = 0; i < FAST_ROUNDS * FAST_QD; i++)
		memset(buf + i * 4096, 'a' + i % 26, 4096);
	for (int round = 0; round < FAST_ROUNDS; round++) {
		int base = round * FAST_BATCH, done = 0;

		for (int i = 0; i < FAST_BATCH; i++) {
			r = lcloud_queue_prep_write(q, buf + (base + i) * 4096, 4096, (uint64_t)(base + i) * 4096, NULL,
						    5000 + (uint64_t)(base + i));
			ok &= r == 0;
		}
		r = lcloud_queue_submit_and_reap(q, c, 3, 3);
		while (r > 0) {
			for (int k = 0; k < r; k++) {
				uint64_t id = c[k].user_data - 5000;

				ok &= id < FAST_ROUNDS * FAST_BATCH && !seen[id] && c[k].result == 4096 &&
				      c[k].nvme_status == 0 && c[k].reserved == 0;
				if (id < FAST_ROUNDS * FAST_BATCH && !seen[id]) {
					seen[id] = true;
					n_seen++;
				}
			}
			done += r;
			r = done < FAST_BATCH ? lcloud_queue_reap(q, c, 3, FAST_BATCH - done < 3 ? FAST_BATCH - done : 3) : 0;
		}
		ok &= r == 0 && done == FAST_BATCH;
	}
	CHECK(ok && n_seen == FAST_ROUNDS * FAST_BATCH, "fast path: %d unhinted writes in %d rounds, each completed "
	      "once with its own user data and length", n_seen, FAST_ROUNDS);
	ok = 1;
	for (int i = 0; i < FAST_ROUNDS * FAST_BATCH; i += FAST_BATCH) {
		for (int k = 0; k < FAST_BATCH; k++)
			ok &= lcloud_queue_prep_read(q, back + (i + k) * 4096, 4096, (uint64_t)(i + k) * 4096, NULL, k) == 0;
		ok &= lcloud_queue_submit_and_reap(q, c, FAST_QD, FAST_BATCH) == FAST_BATCH;
	}
	CHECK(ok && memcmp(buf, back, FAST_ROUNDS * FAST_BATCH * 4096) == 0,
	      "fast path: what was written reads back through the fast read path");
	for (int k = 0; k < FAST_QD; k++)
		lcloud_queue_prep_write(q, buf, 4096, 0, NULL, k);
	r = lcloud_queue_prep_write(q, buf, 4096, 0, NULL, 99);
	CHECK(r == -EAGAIN && strstr(lcloud_queue_get_error(q), "full"), "fast path: a full queue is refused: %s",
	      lcloud_queue_get_error(q));
	r = lcloud_queue_submit_and_reap(q, c, FAST_QD, FAST_QD);
	CHECK(r == FAST_QD, "fast path: the queue drains (%d)", r);
	{
		void *bufs[1] = { back };
		uint64_t lens[1] = { 4096 };

		memset(back, 'Z', 4096);
		r = lcloud_queue_register_buffers(q, bufs, lens, 1);
		CHECK(r == 0, "fast path: buffer registered (%d)", r);
		r = lcloud_queue_prep_write(q, back, 4096, 0, NULL, 7);
		ok = r == 0 && lcloud_queue_submit_and_reap(q, c, 1, 1) == 1 && c[0].result == 4096;
		memset(back, 0, 4096);
		ok &= lcloud_queue_read(q, back + 4096, 4096, 0, NULL, NULL) == 4096 && back[4096] == 'Z' &&
		      back[8191] == 'Z';
		CHECK(ok, "fast path: a write from a registered buffer lands");
	}
	free(buf);
	free(back);
	lcloud_queue_free(q);
}

int main(int argc, char **argv)
{
	struct lcloud_ctx *ctx = NULL;
	struct lcloud_queue *q = NULL;
	bool atomic;
	int r;

	if (argc != 3) {
		fprintf(stderr, "usage: %s FILE atomic|plain\n", argv[0]);
		return 2;
	}
	atomic = strcmp(argv[2], "atomic") == 0;
	if (lcloud_ctx_new(&ctx))
		return 2;
	batch(ctx, argv[1], LCLOUD_BACKEND_IO_URING, atomic);
	batch(ctx, argv[1], LCLOUD_BACKEND_SYNC, atomic);
	fast_path(ctx, argv[1]);
	r = lcloud_queue_open(ctx, "/nonexistent/file", 4, LCLOUD_BACKEND_AUTO, 0, &q);
	CHECK(r == -ENOENT && q == NULL, "a missing file: %d", r);
	r = lcloud_queue_open(ctx, argv[1], 4, LCLOUD_BACKEND_PASSTHROUGH, 0, &q);
	CHECK(r == -ENODEV && strstr(lcloud_ctx_get_error(ctx), "passthrough"), "passthrough on a file refused: %s",
	      lcloud_ctx_get_error(ctx));
	lcloud_ctx_free(ctx);
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
