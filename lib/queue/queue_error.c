/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The queue family's error helper (queue_error.h): a -errno with its sentence. */
#include <stdarg.h>
#include <stdio.h>

#include "queue_error.h"

int queue_error_set(struct queue_error *e, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
	return err;
}
