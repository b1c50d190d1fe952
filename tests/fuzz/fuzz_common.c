/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"

int fuzz_archive_parse(struct fuzz_archive *a, const uint8_t *data, size_t size)
{
	size_t pos = 0, npos = 0;

	memset(a, 0, sizeof(*a));
	/* Every name fits: the names are copies of input bytes, each plus a NUL. */
	a->names = malloc(size + 1);
	if (!a->names)
		return -ENOMEM;
	while (pos < size && a->n < FUZZ_MAX_RECORDS) {
		struct fuzz_record *r = &a->rec[a->n];
		const uint8_t *nul;
		size_t name_len, len;

		r->kind = (char)data[pos++];
		nul = memchr(data + pos, 0, size - pos);
		if (!nul)
			break;
		name_len = (size_t)(nul - (data + pos));
		memcpy(a->names + npos, data + pos, name_len + 1);
		r->name = a->names + npos;
		npos += name_len + 1;
		pos += name_len + 1;
		if (size - pos < 2) {
			len = 0;
			pos = size;
		} else {
			len = (size_t)data[pos] | (size_t)data[pos + 1] << 8;
			pos += 2;
		}
		if (len > size - pos)
			len = size - pos;
		r->data = data + pos;
		r->len = len;
		pos += len;
		a->n++;
	}
	return 0;
}

void fuzz_archive_free(struct fuzz_archive *a)
{
	free(a->names);
	a->names = NULL;
	a->n = 0;
}

const struct fuzz_record *fuzz_archive_find(const struct fuzz_archive *a, char kind, const char *name)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->rec[i].kind == kind && (!name || strcmp(a->rec[i].name, name) == 0))
			return &a->rec[i];
	return NULL;
}

/* A relative name of plain components: no empty, ".", or ".." ones. */
static int name_is_plain(const char *name)
{
	const char *s = name;

	if (!*name || strlen(name) > 400)
		return 0;
	for (;;) {
		const char *slash = strchr(s, '/');
		size_t n = slash ? (size_t)(slash - s) : strlen(s);

		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return 0;
		if (!slash)
			return 1;
		s = slash + 1;
	}
}

static void mkdir_parents(const char *root, const char *name)
{
	char path[PATH_MAX];
	size_t rl = strlen(root);

	if (rl + 1 + strlen(name) >= sizeof(path))
		return;
	snprintf(path, sizeof(path), "%s/%s", root, name);
	for (char *s = path + rl + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		(void)mkdir(path, 0755);
		*s = '/';
	}
}

/* Components of P below ROOT, or -1 when P is not under ROOT. */
static int depth_below(const char *root, const char *p)
{
	size_t rl = strlen(root);
	int depth = 0;

	if (strncmp(p, root, rl) != 0 || (p[rl] && p[rl] != '/'))
		return -1;
	for (p += rl; *p; p++)
		if (*p == '/')
			depth++;
	return depth;
}

/*
 * Only targets of leading ".." components and then plain ones, counted from
 * the link's real folder: a forward name stays inside (every symlink in it
 * was checked the same way), and the ".." cannot climb above ROOT.
 */
static int target_stays_inside(const char *real_root, const char *link_path, const char *target)
{
	char dir[PATH_MAX], real_dir[PATH_MAX];
	char *slash;
	int depth, up = 0;

	if (target[0] == '/' || !*target)
		return 0;
	while (strncmp(target, "../", 3) == 0) {
		up++;
		target += 3;
	}
	if (strcmp(target, "..") == 0) {
		up++;
		target += 2;
	}
	if (*target && !name_is_plain(target))
		return 0;
	snprintf(dir, sizeof(dir), "%s", link_path);
	slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	if (!realpath(dir, real_dir))
		return 0;
	depth = depth_below(real_root, real_dir);
	return depth >= 0 && up <= depth;
}

void fuzz_tree_write(const char *root, const struct fuzz_archive *a)
{
	char real_root[PATH_MAX];

	if (!realpath(root, real_root))
		return;
	for (size_t i = 0; i < a->n; i++) {
		const struct fuzz_record *r = &a->rec[i];
		char path[PATH_MAX], target[PATH_MAX];
		int fd;

		if ((r->kind != 'f' && r->kind != 'l' && r->kind != 'd') || !name_is_plain(r->name))
			continue;
		if (strlen(root) + 1 + strlen(r->name) >= sizeof(path))
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, r->name);
		mkdir_parents(root, r->name);
		switch (r->kind) {
		case 'd':
			(void)mkdir(path, 0755);
			break;
		case 'f':
			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
			if (fd < 0)
				break;
			if (write(fd, r->data, r->len) < 0) {
				/* a short tree is still a tree */
			}
			close(fd);
			break;
		case 'l':
			if (r->len >= sizeof(target) || memchr(r->data, 0, r->len))
				break;
			memcpy(target, r->data, r->len);
			target[r->len] = '\0';
			if (target_stays_inside(real_root, path, target))
				(void)symlink(target, path);
			break;
		}
	}
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		(void)rmdir(path);
	else
		(void)unlink(path);
	return 0;
}

void fuzz_tree_remove(const char *root)
{
	(void)nftw(root, remove_one, 32, FTW_DEPTH | FTW_PHYS);
}

static char scratch[PATH_MAX];

static void remove_scratch(void)
{
	if (scratch[0])
		fuzz_tree_remove(scratch);
}

const char *fuzz_scratch_dir(void)
{
	const char *tmp = getenv("TMPDIR");

	if (scratch[0])
		return scratch;
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(scratch, sizeof(scratch), "%s/lcloud-fuzz-XXXXXX", tmp);
	if (!mkdtemp(scratch)) {
		perror("mkdtemp");
		abort();
	}
	atexit(remove_scratch);
	return scratch;
}

/* Touches every byte of S, so a string past its buffer shows. */
static size_t touch(const char *s)
{
	return s ? strlen(s) : 0;
}

void fuzz_use_probe(const struct lcloud_probe *p)
{
	volatile size_t sink = 0;
	char why[256];

	sink += touch(lcloud_probe_get_path(p)) + touch(lcloud_probe_get_resolved_path(p));
	sink += touch(lcloud_target_type_to_string(lcloud_probe_get_target_type(p)));
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++) {
		const struct lcloud_layer *l = lcloud_probe_get_layer(p, i);

		sink += touch(lcloud_layer_get_name(l)) + touch(lcloud_layer_kind_to_string(lcloud_layer_get_kind(l)));
		sink += (size_t)lcloud_layer_get_parent(l);
		for (unsigned int f = 0; f < lcloud_layer_get_fact_count(l); f++) {
			const struct lcloud_fact *fact = lcloud_layer_get_fact(l, f);

			sink += touch(lcloud_fact_get_name(fact)) + touch(lcloud_fact_get_string(fact));
			sink += touch(lcloud_fact_get_source(fact)) + touch(lcloud_fact_get_reason(fact));
			sink += lcloud_fact_get_type(fact) + lcloud_fact_get_unit(fact) + lcloud_fact_get_state(fact);
			sink += (size_t)lcloud_fact_get_u64(fact);
		}
	}
	for (unsigned int i = 0; i < lcloud_probe_get_note_count(p); i++) {
		const struct lcloud_note *n = lcloud_probe_get_note(p, i);

		sink += touch(lcloud_note_get_code(n)) + touch(lcloud_note_get_message(n));
		sink += touch(lcloud_note_severity_to_string(lcloud_note_get_severity(n)));
	}
	for (int path = LCLOUD_PATH_RWF_ATOMIC; path <= LCLOUD_PATH_BUFFERED; path++) {
		const struct lcloud_verdict *v = lcloud_probe_get_verdict(p, (enum lcloud_io_path)path);
		uint64_t max, align, boundary;

		if (!v)
			continue;
		max = lcloud_verdict_get_max_untorn_bytes(v);
		align = lcloud_verdict_get_alignment(v);
		boundary = lcloud_verdict_get_boundary(v);
		sink += (size_t)(max + align + boundary + lcloud_verdict_get_min_untorn_bytes(v) +
				 lcloud_verdict_get_boundary_offset(v));
		for (unsigned int r = 0; r < lcloud_verdict_get_reason_count(v); r++)
			sink += touch(lcloud_verdict_get_reason(v, r)) + touch(lcloud_verdict_get_reason_evidence(v, r));
		/* At the edges of what the verdict says: its largest size, just past it, across a boundary. */
		sink += (size_t)lcloud_verdict_allows(v, 0, max ? max : 512, why, sizeof(why));
		sink += (size_t)lcloud_verdict_allows(v, align, max * 2, why, sizeof(why));
		if (boundary)
			sink += (size_t)lcloud_verdict_allows(v, boundary - 512, 4096, why, sizeof(why));
		sink += (size_t)lcloud_verdict_allows(v, UINT64_MAX - 4095, 4096, why, sizeof(why));
	}
	for (uint64_t size = 512; size <= (1u << 22); size <<= 1) {
		enum lcloud_io_path decided;

		sink += (size_t)lcloud_probe_check(p, LCLOUD_PATH_BEST, size, &decided, why, sizeof(why));
	}
	(void)sink;
}

void fuzz_for_each_line(const uint8_t *data, size_t size, void (*fn)(const char *line))
{
	char *text = malloc(size + 1), *line, *save = NULL;

	if (!text)
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		fn(line);
	free(text);
}
