/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "report.h"

char fixtures_dir[4096];

struct lcloud_ctx *fixture_ctx(const char *tree)
{
	struct lcloud_ctx *ctx = NULL;
	char root[4200];

	snprintf(root, sizeof(root), "%s/%s", fixtures_dir, tree);
	assert_int_equal(lcloud_ctx_new(&ctx), 0);
	assert_int_equal(lcloud_ctx_set_sysroot(ctx, root), 0);
	return ctx;
}

struct lcloud_probe *fixture_probe(const char *tree, const char *dev)
{
	struct lcloud_ctx *ctx = fixture_ctx(tree);
	struct lcloud_probe *p = NULL;

	assert_int_equal(lcloud_probe_path(ctx, dev, 0, &p), 0);
	lcloud_ctx_free(ctx);
	return p;
}

const struct lcloud_layer *layer_of_kind(const struct lcloud_probe *p, enum lcloud_layer_kind kind)
{
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++)
		if (lcloud_layer_get_kind(lcloud_probe_get_layer(p, i)) == kind)
			return lcloud_probe_get_layer(p, i);
	return NULL;
}

uint64_t fact_u64(const struct lcloud_layer *l, const char *name)
{
	const struct lcloud_fact *f = lcloud_layer_find_fact(l, name);

	if (!f)
		fail_msg("no fact %s", name);
	assert_int_equal(lcloud_fact_get_state(f), LCLOUD_FACT_PRESENT);
	return lcloud_fact_get_u64(f);
}

const char *fact_str(const struct lcloud_layer *l, const char *name)
{
	const char *s = lcloud_fact_get_string(lcloud_layer_find_fact(l, name));

	if (!s)
		fail_msg("no string fact %s", name);
	return s;
}

unsigned int notes_with(const struct lcloud_probe *p, enum note_code code, const char *needle)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < p->n_notes; i++)
		if (p->notes[i].code == code && (!needle || strstr(p->notes[i].message, needle)))
			n++;
	return n;
}

unsigned int notes_saying(const struct lcloud_probe *p, const char *needle)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < lcloud_probe_get_note_count(p); i++)
		if (strstr(lcloud_note_get_message(lcloud_probe_get_note(p, i)), needle))
			n++;
	return n;
}

int fixture_remove_tree(const char *root)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

int fixture_main(int argc, char **argv, const char *group, const struct CMUnitTest *tests, size_t n)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
		return 2;
	}
	snprintf(fixtures_dir, sizeof(fixtures_dir), "%s", argv[1]);
	return _cmocka_run_group_tests(group, tests, n, NULL, NULL);
}
