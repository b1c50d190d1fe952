/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the fuzz harnesses share: a small archive of named blobs, and reading a whole probe. */
#ifndef LCLOUD_FUZZ_COMMON_H
#define LCLOUD_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "lcloud/lcloud.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Calls FN with each non-empty line of DATA (NUL-terminated copies, freed afterwards). */
void fuzz_for_each_line(const uint8_t *data, size_t size, void (*fn)(const char *line));

/*
 * The archive: records of
 *   kind (1 byte) | name (NUL-terminated) | length (2 bytes, little-endian) | data
 * kind 'f' is a file, 'l' a symlink (data = target), 'd' a folder, '@' the
 * device to probe (data = "/dev/NAME" or "NAME"). A truncated record ends the
 * archive; its data is cut to what is there.
 */
#define FUZZ_MAX_RECORDS 1024
struct fuzz_record {
	char kind;
	const char *name;
	const uint8_t *data;
	size_t len;
};
struct fuzz_archive {
	struct fuzz_record rec[FUZZ_MAX_RECORDS];
	size_t n;
	char *names; /* owns the NUL-terminated names */
};
int fuzz_archive_parse(struct fuzz_archive *a, const uint8_t *data, size_t size);
void fuzz_archive_free(struct fuzz_archive *a);
/* The first record of KIND named NAME, or NULL. */
const struct fuzz_record *fuzz_archive_find(const struct fuzz_archive *a, char kind, const char *name);

/*
 * Writes the archive's files, folders and symlinks under ROOT (which must
 * exist and be empty). Names with empty, "." or ".." components are skipped,
 * and so are symlinks that would point out of ROOT: the library may read the
 * tree, never the machine around it.
 */
void fuzz_tree_write(const char *root, const struct fuzz_archive *a);
/* Removes everything under ROOT, and ROOT itself; symlinks are not followed. */
void fuzz_tree_remove(const char *root);
/* A fresh empty folder for this process, under $TMPDIR or /dev/shm; removed at exit. */
const char *fuzz_scratch_dir(void);

/* Reads every layer, fact, note and verdict of P as a caller would, and asks the verdict questions. */
void fuzz_use_probe(const struct lcloud_probe *p);

#endif
