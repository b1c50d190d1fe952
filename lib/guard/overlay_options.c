/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An overlay mount's layers from its mountinfo super options
 * (overlay_options.h). Options are parted by commas that no backslash
 * escapes; within lowerdir, layers by colons that no backslash escapes, and
 * an empty layer between two colons marks where the data-only layers begin.
 * The backslashes are removed last, so "\:" and "\," stay in the name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "overlay_options.h"

/* The value of one option with the backslash escapes undone, or NULL (malformed or out of memory). */
static char *unescape(const char *s, size_t len)
{
	char *out = malloc(len + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\') {
			if (++i == len) {
				free(out);
				return NULL;
			}
		}
		*o++ = s[i];
	}
	*o = '\0';
	return out;
}

/* Where the next SEP that no backslash escapes is in S[0..LEN), or LEN. */
static size_t next_sep(const char *s, size_t len, char sep)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 1 < len)
			i++;
		else if (s[i] == sep)
			return i;
	}
	return len;
}

static int add_lower(struct overlay_layers *l, const char *s, size_t len)
{
	char **grown, *name;

	if (!len || l->n_lowers == OVERLAY_LAYERS_MAX)
		return -EINVAL;
	name = unescape(s, len);
	if (!name)
		return -EINVAL;
	grown = realloc(l->lowers, (l->n_lowers + 1) * sizeof(*grown));
	if (!grown) {
		free(name);
		return -ENOMEM;
	}
	l->lowers = grown;
	l->lowers[l->n_lowers++] = name;
	if (name[0] != '/')
		l->relative = true;
	return 0;
}

static int parse_lowers(struct overlay_layers *l, const char *s, size_t len)
{
	size_t at = 0;

	for (;;) {
		size_t n = next_sep(s + at, len - at, ':');
		int r;

		if (n == 0) {
			/* an empty layer: "::" marks where the data-only layers begin, once, between two layers */
			if (!l->n_lowers || l->first_data_only != ~0u || at >= len)
				return -EINVAL;
			l->first_data_only = l->n_lowers;
		} else if ((r = add_lower(l, s + at, n)) < 0) {
			return r;
		}
		if (at + n >= len)
			return l->first_data_only == l->n_lowers ? -EINVAL : 0; /* "::" with nothing after it */
		at += n + 1;
	}
}

int overlay_options_parse(const char *opts, struct overlay_layers *ret)
{
	struct overlay_layers l = { .first_data_only = ~0u };
	size_t len = strlen(opts), at = 0;
	bool lowers_seen = false;
	int r = 0;

	while (at < len && r == 0) {
		size_t n = next_sep(opts + at, len - at, ',');
		const char *o = opts + at;

		if (n > 9 && !strncmp(o, "lowerdir=", 9)) {
			/* one lowerdir only */
			r = lowers_seen ? -EINVAL : parse_lowers(&l, o + 9, n - 9);
			lowers_seen = true;
		} else if (n > 9 && !strncmp(o, "upperdir=", 9)) {
			free(l.upper);
			l.upper = unescape(o + 9, n - 9);
			if (!l.upper)
				r = -EINVAL;
			else if (l.upper[0] != '/')
				l.relative = true;
		} else if (n == 11 && !strncmp(o, "metacopy=on", 11)) {
			l.metacopy = true;
		} else if ((n == 15 && !strncmp(o, "redirect_dir=on", 15)) ||
			   (n == 19 && !strncmp(o, "redirect_dir=follow", 19))) {
			l.redirect = true;
		} else if (n == 9 && !strncmp(o, "userxattr", 9)) {
			l.userxattr = true;
		}
		at += n + 1;
	}
	if (r == 0 && !l.n_lowers)
		r = -EINVAL;
	if (r < 0) {
		overlay_layers_free(&l);
		return r;
	}
	if (l.first_data_only == ~0u)
		l.first_data_only = l.n_lowers;
	*ret = l;
	return 0;
}

void overlay_layers_free(struct overlay_layers *l)
{
	if (!l)
		return;
	for (unsigned int i = 0; i < l->n_lowers; i++)
		free(l->lowers[i]);
	free(l->lowers);
	free(l->upper);
	memset(l, 0, sizeof(*l));
}
