/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_LAB_ERROR_H
#define LCLOUD_LAB_ERROR_H

#include <stddef.h>

/* Puts the message in ERR (when given) for a person and returns R, a -errno. */
__attribute__((format(printf, 4, 5)))
int lab_fail(char *err, size_t err_size, int r, const char *fmt, ...);

#endif
