/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The lab's errors: a -errno for the caller and one line for a person. */
#include <stdarg.h>
#include <stdio.h>

#include "lab_error.h"

int lab_fail(char *err, size_t err_size, int r, const char *fmt, ...)
{
	va_list ap;

	if (err && err_size) {
		va_start(ap, fmt);
		vsnprintf(err, err_size, fmt, ap);
		va_end(ap);
	}
	return r;
}
