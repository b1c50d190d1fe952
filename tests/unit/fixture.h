/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the unit tests share: the fixture trees, probing them, and reading the results. */
#ifndef LCLOUD_TEST_FIXTURE_H
#define LCLOUD_TEST_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lcloud/lcloud.h"
#include "notes.h"

/* tests/unit/fixtures, from the command line */
extern char fixtures_dir[4096];

/* A context whose sysroot is fixture tree TREE. */
struct lcloud_ctx *fixture_ctx(const char *tree);
/* DEV ("/dev/sda") probed in fixture tree TREE; fails the test if the probe does. */
struct lcloud_probe *fixture_probe(const char *tree, const char *dev);

const struct lcloud_layer *layer_of_kind(const struct lcloud_probe *p, enum lcloud_layer_kind kind);
/* A fact that must be present, as a number or a string. */
uint64_t fact_u64(const struct lcloud_layer *l, const char *name);
const char *fact_str(const struct lcloud_layer *l, const char *name);
/* A scratch tree made by a test (mkdtemp), removed whole; 0 or the shell's status. */
int fixture_remove_tree(const char *root);
/* Notes with CODE whose message contains NEEDLE (any when NULL). */
unsigned int notes_with(const struct lcloud_probe *p, enum note_code code, const char *needle);
/* Notes of any code whose message contains NEEDLE. */
unsigned int notes_saying(const struct lcloud_probe *p, const char *needle);

/* main(): takes the fixtures folder from argv[1] and runs TESTS. */
int fixture_main(int argc, char **argv, const char *group, const struct CMUnitTest *tests, size_t n);

#endif
