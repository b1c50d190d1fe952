/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A property test of the write guard's decision over generated stacks.
 * Each run builds a sysfs tree (under a sysroot) of random disks, their
 * partitions, loop devices over real files at random offsets and size
 * limits, and dm devices over random members (with the holders/ entries
 * the kernel makes), mounts a random few in the tree's mountinfo, and asks
 * guard_decide() about a random device. The test's own model works out
 * which bytes each device reaches (a partition its disk's at its start, a
 * loop its file's from its offset, a dm device the whole of each member),
 * independently of lib/guard/storage_map.c, and holds the guard to two
 * properties:
 *  - never refuse less: when the target's bytes overlap the bytes of any
 *    mounted device (itself included), the write is refused (-EBUSY),
 *    with and without GUARD_FORCE;
 *  - no needless refusal: with nothing mounted and no dm device, it is
 *    allowed.
 * A failing run prints its seed and the stack. The O_EXCL claims, swap and
 * the live loop status need a live kernel (tests/host/test_guard_*.py).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fixture.h"
#include "guard.h"
#include "report.h"

#define RUNS 100
#define DEVS_MAX 24
#define FILES 3
#define MIB (1ull << 20)
#define FILE_SIZE (64 * MIB)
#define NO_END UINT64_MAX

enum kind { DISK, PART, LOOP, DM };

struct dev {
	enum kind kind;
	char name[16];
	unsigned int maj, min;
	uint64_t size;     /* bytes */
	int disk;          /* PART: its disk */
	uint64_t start;    /* PART: bytes into the disk */
	int file;          /* LOOP: its backing file */
	uint64_t offset, sizelimit;
	int members[2], n_members; /* DM */
	int held_by;       /* the dm device over it, or -1 */
	bool mounted;
};

struct stack {
	struct dev d[DEVS_MAX];
	int n;
};

/* A byte range of a base: a disk (its index) or a file (FILES + its index). */
struct piece {
	int base;
	uint64_t start, end;
};

static char root[4096], files[FILES][4200];
static unsigned int seed;

static unsigned int rnd(unsigned int n)
{
	return n ? (unsigned int)rand_r(&seed) % n : 0;
}

/* The folders above PATH, made as mkdir -p would (no shell: a run writes hundreds of files). */
static void make_parents(const char *path)
{
	char buf[8192];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *slash = strchr(buf + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			fail_msg("mkdir %s: %s", buf, strerror(errno));
		*slash = '/';
	}
}

static void put(const char *rel, const char *content)
{
	char path[8192];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	make_parents(path);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void put_u64(const char *dir, const char *attr, uint64_t v)
{
	char rel[2048], buf[32];

	snprintf(rel, sizeof(rel), "%s/%s", dir, attr);
	snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)v);
	put(rel, buf);
}

static void link_to(const char *rel, const char *target)
{
	char path[8192];

	snprintf(path, sizeof(path), "%s%s", root, rel);
	make_parents(path);
	assert_int_equal(symlink(target, path), 0);
}

/* A device's sysfs folder, relative to the sysroot. */
static void dev_dir(const struct stack *s, int i, char *buf, size_t size)
{
	const struct dev *d = &s->d[i];

	if (d->kind == PART)
		snprintf(buf, size, "/sys/devices/virtual/block/%s/%s", s->d[d->disk].name, d->name);
	else
		snprintf(buf, size, "/sys/devices/virtual/block/%s", d->name);
}

static int add(struct stack *s, enum kind kind, const char *name, unsigned int maj, unsigned int min)
{
	struct dev *d = &s->d[s->n];

	memset(d, 0, sizeof(*d));
	d->kind = kind;
	d->held_by = -1;
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->maj = maj;
	d->min = min;
	return s->n++;
}

static void generate(struct stack *s)
{
	char name[16];
	int n_disks = 1 + (int)rnd(3), n_loops = (int)rnd(4), n_dm = rnd(2) ? (int)rnd(3) : 0;

	s->n = 0;
	for (int k = 0; k < n_disks; k++) {
		int disk, parts = (int)rnd(4);
		uint64_t at = MIB;

		snprintf(name, sizeof(name), "sd%c", 'a' + k);
		disk = add(s, DISK, name, 8, (unsigned int)(16 * k));
		s->d[disk].size = (64 + rnd(4) * 64) * MIB;
		for (int p = 0; p < parts && at + MIB < s->d[disk].size; p++) {
			int i;

			snprintf(name, sizeof(name), "sd%c%d", 'a' + k, p + 1);
			i = add(s, PART, name, 8, (unsigned int)(16 * k + p + 1));
			s->d[i].disk = disk;
			s->d[i].start = at + rnd(2) * MIB; /* gaps now and then */
			s->d[i].size = (1 + rnd((unsigned int)((s->d[disk].size - s->d[i].start) / MIB / 2))) * MIB;
			if (s->d[i].start + s->d[i].size > s->d[disk].size) {
				s->n--;
				break;
			}
			at = s->d[i].start + s->d[i].size;
		}
	}
	for (int k = 0; k < n_loops; k++) {
		int i;

		snprintf(name, sizeof(name), "loop%d", k);
		i = add(s, LOOP, name, 7, (unsigned int)k);
		s->d[i].file = (int)rnd(FILES);
		s->d[i].offset = rnd(32) * MIB + rnd(4) * 4096;
		s->d[i].sizelimit = rnd(2) ? (1 + rnd(24)) * MIB : 0;
		s->d[i].size = s->d[i].sizelimit ? s->d[i].sizelimit : FILE_SIZE - s->d[i].offset;
	}
	for (int k = 0; k < n_dm; k++) {
		int i, tries = 0, n_base = s->n;

		snprintf(name, sizeof(name), "dm-%d", k);
		i = add(s, DM, name, 252, (unsigned int)k);
		while (s->d[i].n_members < 2 && tries++ < 8) {
			int m = (int)rnd((unsigned int)n_base);

			/* members are free partitions, loops and disks (dm devices over dm devices too) */
			if (s->d[m].held_by >= 0 || m == i)
				continue;
			s->d[i].members[s->d[i].n_members++] = m;
			s->d[m].held_by = i;
			s->d[i].size += s->d[m].size;
		}
		if (!s->d[i].n_members)
			s->n--;
	}
}

static void write_tree(const struct stack *s)
{
	char cmd[8400], dir[1024], rel[2048], target[1200], mountinfo[16384] = "22 1 0:21 / /proc rw - proc proc rw\n";
	size_t at = strlen(mountinfo);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/sys' '%s/proc'", root, root);
	assert_int_equal(system(cmd), 0);
	for (int i = 0; i < s->n; i++) {
		const struct dev *d = &s->d[i];
		char buf[64];

		dev_dir(s, i, dir, sizeof(dir));
		snprintf(rel, sizeof(rel), "%s/dev", dir);
		snprintf(buf, sizeof(buf), "%u:%u\n", d->maj, d->min);
		put(rel, buf);
		put_u64(dir, "size", d->size / 512);
		if (d->kind == PART) {
			put_u64(dir, "start", d->start / 512);
			put_u64(dir, "partition", 1);
		}
		if (d->kind == LOOP) {
			snprintf(rel, sizeof(rel), "%s/loop/backing_file", dir);
			put(rel, files[d->file]);
			put_u64(dir, "loop/offset", d->offset);
			put_u64(dir, "loop/sizelimit", d->sizelimit);
		}
		if (d->kind == DM) {
			snprintf(rel, sizeof(rel), "%s/dm/name", dir);
			put(rel, "vg-lv\n");
			for (int m = 0; m < d->n_members; m++) {
				char mdir[1024];

				snprintf(rel, sizeof(rel), "%s/slaves/%s", dir, s->d[d->members[m]].name);
				put(rel, "");
				dev_dir(s, d->members[m], mdir, sizeof(mdir));
				snprintf(rel, sizeof(rel), "%s/holders/%s", mdir, d->name);
				put(rel, "");
			}
		}
		snprintf(rel, sizeof(rel), "/sys/class/block/%s", d->name);
		snprintf(target, sizeof(target), "../../devices/virtual/block/%s%s%s",
			 d->kind == PART ? s->d[d->disk].name : d->name, d->kind == PART ? "/" : "",
			 d->kind == PART ? d->name : "");
		link_to(rel, target);
		snprintf(rel, sizeof(rel), "/sys/dev/block/%u:%u", d->maj, d->min);
		link_to(rel, target);
		if (d->mounted)
			at += (size_t)snprintf(mountinfo + at, sizeof(mountinfo) - at,
					       "%d 1 %u:%u / /mnt/%s rw - ext4 /dev/%s rw\n", 30 + i, d->maj, d->min,
					       d->name, d->name);
	}
	put("/proc/self/mountinfo", mountinfo);
}

/* The test's own model: the bytes device I reaches, as pieces of disks and files. */
static int pieces(const struct stack *s, int i, struct piece *out, int n)
{
	const struct dev *d = &s->d[i];

	switch (d->kind) {
	case DISK:
		out[n++] = (struct piece){ i, 0, d->size };
		return n;
	case PART:
		out[n++] = (struct piece){ d->disk, d->start, d->start + d->size };
		return n;
	case LOOP:
		out[n++] = (struct piece){ FILES + DEVS_MAX + d->file, d->offset, d->offset + d->size };
		return n;
	case DM:
		for (int m = 0; m < d->n_members; m++)
			n = pieces(s, d->members[m], out, n);
		return n;
	}
	return n;
}

static bool overlap(const struct stack *s, int a, int b)
{
	struct piece pa[DEVS_MAX * 2], pb[DEVS_MAX * 2];
	int na = pieces(s, a, pa, 0), nb = pieces(s, b, pb, 0);

	for (int i = 0; i < na; i++)
		for (int j = 0; j < nb; j++)
			if (pa[i].base == pb[j].base && pa[i].start < pb[j].end && pb[j].start < pa[i].end)
				return true;
	return false;
}

static void describe(const struct stack *s, int target)
{
	fprintf(stderr, "seed %u, target %s:\n", seed, s->d[target].name);
	for (int i = 0; i < s->n; i++) {
		const struct dev *d = &s->d[i];

		fprintf(stderr, "  %-6s %u:%u size %llu MiB", d->name, d->maj, d->min, (unsigned long long)(d->size / MIB));
		if (d->kind == PART)
			fprintf(stderr, " on %s at %llu", s->d[d->disk].name, (unsigned long long)d->start);
		if (d->kind == LOOP)
			fprintf(stderr, " over file %d at %llu limit %llu", d->file, (unsigned long long)d->offset,
				(unsigned long long)d->sizelimit);
		for (int m = 0; m < d->n_members; m++)
			fprintf(stderr, " member %s", s->d[d->members[m]].name);
		fprintf(stderr, "%s\n", d->mounted ? " MOUNTED" : "");
	}
}

static int decide(const struct stack *s, int target, bool force, char *why, size_t size)
{
	struct guard_decision *d = calloc(1, sizeof(*d));
	const struct dev *t = &s->d[target];
	struct lcloud_probe *p;
	struct lcloud_ctx *ctx;
	struct lcloud_layer *l;
	char path[64], devno[32];
	int idx, r;

	assert_non_null(d);
	assert_int_equal(lcloud_ctx_new(&ctx), 0);
	assert_int_equal(lcloud_ctx_set_sysroot(ctx, root), 0);
	snprintf(path, sizeof(path), "/dev/%s", t->name);
	p = report_new(path);
	assert_non_null(p);
	p->target_type = t->kind == PART ? LCLOUD_TARGET_PARTITION : LCLOUD_TARGET_DISK;
	idx = report_add_layer(p, t->kind == PART ? LCLOUD_LAYER_PARTITION : LCLOUD_LAYER_DISK, t->name, -1);
	assert_true(idx >= 0);
	l = &p->layers[idx];
	snprintf(devno, sizeof(devno), "%u:%u", t->maj, t->min);
	assert_int_equal(layer_add_string(l, FACT_DEV, devno, "sysfs:dev"), 0);
	l->signatures = LAYER_SIGNATURES_READ;
	r = guard_decide(ctx, -1, p, force ? GUARD_FORCE : 0, d);
	snprintf(why, size, "%s", d->reason);
	assert_int_equal(r, d->error);
	guard_decision_release(d);
	free(d);
	lcloud_probe_free(p);
	lcloud_ctx_free(ctx);
	return r;
}

static void test_generated_stacks(void **state)
{
	static struct stack s;
	unsigned int refused = 0, allowed = 0, checked_live = 0;
	char why[GUARD_REASON_MAX];
	(void)state;

	for (unsigned int run = 0; run < RUNS; run++) {
		bool in_use = false, any_dm = false, any_mount = false;
		int target;

		seed = 0x5eed0000u + run;
		generate(&s);
		/* every other stack has nothing mounted: the guard must then let writes through */
		for (int i = 0; i < s.n; i++) {
			s.d[i].mounted = run % 2 && rnd(4) == 0;
			any_mount |= s.d[i].mounted;
			any_dm |= s.d[i].kind == DM;
		}
		target = (int)rnd((unsigned int)s.n);
		for (int i = 0; i < s.n; i++)
			if (s.d[i].mounted && (i == target || overlap(&s, target, i)))
				in_use = true;
		write_tree(&s);
		for (int force = 0; force < 2; force++) {
			int r = decide(&s, target, force, why, sizeof(why));

			if (in_use && r != -EBUSY) {
				describe(&s, target);
				fail_msg("the target shares bytes with a mounted device, and the guard said %d (%s)", r, why);
			}
			if (!any_mount && !any_dm && r != 0) {
				describe(&s, target);
				fail_msg("nothing is mounted and nothing built on anything, and the guard refused: %s", why);
			}
		}
		refused += in_use;
		allowed += !any_mount && !any_dm;
		checked_live++;
	}
	/* the generator reaches both sides, or the properties prove nothing */
	assert_true(refused > RUNS / 10);
	assert_true(allowed > RUNS / 10);
	assert_int_equal(checked_live, RUNS);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/lcloud-guard-stacks-XXXXXX");
	assert_non_null(mkdtemp(root));
	for (int i = 0; i < FILES; i++) {
		int fd;

		snprintf(files[i], sizeof(files[i]), "%s/file%d", root, i);
		fd = open(files[i], O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, (off_t)FILE_SIZE), 0);
		close(fd);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return fixture_remove_tree(root);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_generated_stacks, setup, teardown),
	};

	return fixture_main(argc, argv, "guard_stacks", tests, sizeof(tests) / sizeof(tests[0]));
}
