/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small helpers shared by every file of the library. */
#ifndef LCLOUD_UTIL_H
#define LCLOUD_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LCLOUD_EXPORT __attribute__((visibility("default")))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline bool streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static inline bool has_prefix(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static inline bool is_power_of_2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Formats like snprintf; returns -ENAMETOOLONG instead of truncating. */
int path_printf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Last component of PATH (no allocation). */
const char *path_basename(const char *path);

/*
 * The oldest kernel whose code the verdict's rules for dm-striped, dm-crypt
 * and loop devices were checked against (its block/, drivers/md/ and
 * drivers/block/loop.c), and whether RELEASE (uname -r) is that or later:
 * 1 yes, 0 older, -EINVAL when RELEASE says no version.
 */
#define FOLLOWED_KERNEL_MAJOR 7
#define FOLLOWED_KERNEL_MINOR 3
int kernel_release_followed(const char *release);

#endif
