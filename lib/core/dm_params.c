/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A device-mapper table line's parameters, as the kernel prints them
 * (DM_TABLE_STATUS with DM_STATUS_TABLE_FLAG; Linux 7.3's dm-linear.c,
 * dm-stripe.c and dm-crypt.c status functions), read into the typed
 * placement the verdict follows: a linear target's device and offset, a
 * striped target's chunk and members, a crypt target's device, offset,
 * sector size and integrity option. Anything else in those targets, or a
 * line cut short, leaves the segment unfollowed: the verdict then claims
 * nothing for it. Devices are "major:minor", as the kernel prints them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm_params.h"
#include "util.h"

#define TOKENS_MAX (2 + 2 * DM_STRIPES_MAX + 16)

/* Splits a copy of PARAMS at spaces into at most MAX tokens; returns how many, or -1 for more. */
static int tokens(const char *params, char *copy, size_t size, char **tok, int max)
{
	char *save = NULL, *t;
	int n = 0;

	snprintf(copy, size, "%s", params);
	for (t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (n == max)
			return -1;
		tok[n++] = t;
	}
	return n;
}

/* A whole decimal number, nothing after it. */
static bool number(const char *s, uint64_t *ret)
{
	char *end;

	if (!*s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*ret = strtoull(s, &end, 10);
	return !*end && !errno;
}

static bool device(const char *s, unsigned int *major, unsigned int *minor)
{
	char tail;

	return sscanf(s, "%u:%u%c", major, minor, &tail) == 2;
}

/* striped: <stripes> <chunk sectors> (<dev> <offset>){stripes} */
static void parse_striped(struct layer_dm_segment *s, char **tok, int n)
{
	uint64_t stripes, chunk;

	/* the kernel keeps the chunk in an unsigned int of sectors */
	if (n < 2 || !number(tok[0], &stripes) || !number(tok[1], &chunk) || !stripes || !chunk || chunk > UINT32_MAX ||
	    stripes > DM_STRIPES_MAX || (uint64_t)n != 2 + 2 * stripes)
		return;
	for (unsigned int i = 0; i < stripes; i++)
		if (!device(tok[2 + 2 * i], &s->stripe[i].major, &s->stripe[i].minor) ||
		    !number(tok[3 + 2 * i], &s->stripe[i].offset))
			return;
	s->chunk = chunk;
	s->stripes = (unsigned int)stripes;
}

/* The options of crypt's table line in Linux 7.3; any other may change how it writes, so none is followed. */
static bool crypt_option(struct layer_dm_segment *s, const char *o)
{
	static const char *const plain[] = { "allow_discards", "same_cpu_crypt", "high_priority",
					     "submit_from_crypt_cpus", "no_read_workqueue", "no_write_workqueue",
					     "iv_large_sectors" };
	uint64_t v;

	for (size_t i = 0; i < ARRAY_SIZE(plain); i++)
		if (streq(o, plain[i]))
			return true;
	if (has_prefix(o, "sector_size:")) {
		/* the kernel takes 512 to 4096, a power of two */
		if (!number(o + strlen("sector_size:"), &v) || v < 512 || v > 4096 || !is_power_of_2(v))
			return false;
		s->crypt_sector = v;
		return true;
	}
	if (has_prefix(o, "integrity:") || has_prefix(o, "integrity_key_size:")) {
		s->crypt_integrity = true;
		return true;
	}
	return false;
}

/* crypt: <cipher> <key> <iv offset> <dev> <offset> [<count> <option>{count}] */
static void parse_crypt(struct layer_dm_segment *s, char **tok, int n)
{
	uint64_t iv, count = 0;

	if (n < 5 || !number(tok[2], &iv) || !device(tok[3], &s->major, &s->minor) || !number(tok[4], &s->offset))
		return;
	if (n > 5 && (!number(tok[5], &count) || (uint64_t)n != 6 + count))
		return;
	s->crypt_sector = 512;
	for (int i = 6; i < n; i++)
		if (!crypt_option(s, tok[i]))
			return;
	s->crypt = true;
}

void dm_params_parse(struct layer_dm_segment *s)
{
	char copy[sizeof(s->params)], *tok[TOKENS_MAX];
	int n = tokens(s->params, copy, sizeof(copy), tok, TOKENS_MAX);

	s->linear = false;
	s->stripes = 0;
	s->crypt = s->crypt_integrity = false;
	if (n < 0)
		return;
	if (streq(s->type, "linear"))
		s->linear = n == 2 && device(tok[0], &s->major, &s->minor) && number(tok[1], &s->offset);
	else if (streq(s->type, "striped"))
		parse_striped(s, tok, n);
	else if (streq(s->type, "crypt"))
		parse_crypt(s, tok, n);
}

void dm_params_redact(const char *type, char *params, size_t size)
{
	char copy[1024], *save = NULL, *t;
	size_t n = 0;
	int i = 0;

	/* crypt's second word is its key, in hex unless it names one in the keyring; dm-integrity's options carry keys too */
	if (!streq(type, "crypt") && !streq(type, "integrity"))
		return;
	snprintf(copy, sizeof(copy), "%s", params);
	params[0] = '\0';
	for (t = strtok_r(copy, " ", &save); t && n < size; t = strtok_r(NULL, " ", &save), i++) {
		char word[256];

		snprintf(word, sizeof(word), "%s", t);
		if (streq(type, "crypt") && i == 1)
			snprintf(word, sizeof(word), "-");
		else if (streq(type, "integrity") &&
			 (has_prefix(t, "internal_hash:") || has_prefix(t, "journal_crypt:") || has_prefix(t, "journal_mac:"))) {
			/* name:algorithm[:key]: keep the algorithm */
			char *second = strchr(word, ':'), *third = second ? strchr(second + 1, ':') : NULL;

			if (third)
				*third = '\0';
		}
		n += (size_t)snprintf(params + n, size - n, "%s%s", n ? " " : "", word);
	}
}
