/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The target's log: one line per event on stderr, with a UTC time, so that a
 * closed connection's reason can be matched with what the host logged.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "target.h"

void tlog(const struct target *t, const char *fmt, ...)
{
	char line[1024], stamp[32]; /* room for a refusal of the write guard and its path */
	struct timespec ts;
	struct tm tm;
	va_list ap;

	if (t->quiet)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one fprintf per line: lines of different connections do not mix */
	fprintf(stderr, "lcloud-target %s.%03ld: %s\n", stamp, ts.tv_nsec / 1000000, line);
}
