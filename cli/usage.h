/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How a command line that cannot run is told (usage.c): one line saying
 * what is wrong and "Try 'lcloudctl CMD --help' for more information.", as
 * util-linux's tools do, never the whole help.
 */
#ifndef LCLOUDCTL_USAGE_H
#define LCLOUDCTL_USAGE_H


/*
 * Every command's getopt string starts with ':' and opterr is 0 (main):
 * getopt returns ':' for a missing argument and '?' for an unknown option,
 * said here for WHO ("lcloudctl list"). Returns EXIT_USAGE.
 */
int usage_option_error(const char *who, int c, int argc, char **argv);

/* A usage error said in a line of its own (printf-style), then the hint; returns EXIT_USAGE. */
int usage_error(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "Try 'WHO --help' for more information." on stderr. */
void usage_try_help(const char *who);

#endif
