/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl: a table of subcommands over liblcloud. Whatever a command
 * printed is checked once here, on the way out: output the system did not
 * take (a full disk, a file size limit) is an error, never exit 0.
 */
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "color.h"
#include "commands.h"
#include "escape.h"
#include "exit_codes.h"
#include "usage.h"

static void main_usage(FILE *out);

static const struct command commands[] = {
	{ "probe", "show every layer's atomic write and I/O facts for paths", cmd_probe, cmd_probe_usage },
	{ "list", "list block devices with atomic write and stream limits", cmd_list, cmd_list_usage },
	{ "check", "is an aligned N-byte write untorn? (exit 0 yes, 6 no, 8 unknown)", cmd_check, cmd_check_usage },
	{ "advise", "database settings for this storage (MySQL, MariaDB, PostgreSQL)", cmd_advise, cmd_advise_usage },
	{ "write", "one hinted, aligned direct write (atomic if asked)", cmd_write, cmd_write_usage },
	{ "read", "one hinted, aligned direct read", cmd_read, cmd_read_usage },
	{ "torture", "write self-describing pages, then find torn and lost ones after a crash", cmd_torture,
	  cmd_torture_usage },
	{ "replay", "which page writes in a device's write log a power cut could tear; crash images",
	  cmd_replay, cmd_replay_usage },
	{ "udev", "a block device's verdict as udev properties (IMPORT{program})", cmd_udev, cmd_udev_usage },
	{ "diff", "what changed since 'probe --save' (exit 13: a verdict got weaker)", cmd_diff, cmd_diff_usage },
	{ "export", "every verdict as Prometheus gauges (node_exporter textfile)", cmd_export, cmd_export_usage },
};

static void main_usage(FILE *out)
{
	fputs("Usage: lcloudctl [global options] COMMAND [options] [ARGS]\n"
	      "\n"
	      "Is an aligned N-byte write to this file or device untorn on power loss?\n"
	      "lcloudctl shows what the file system, the device stack, the kernel and\n"
	      "the device say, with where each fact came from.\n"
	      "\n"
	      "Commands:\n",
	      out);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fputs("\n"
	      "Global options:\n"
	      "      --sysroot DIR     read /sys, /proc and /dev under DIR (captured trees)\n"
	      "      --format FORMAT   normal (default) or json\n"
	      "  -J, --json            the same as --format json\n"
	      "      --color[=WHEN]    colour verdicts and warnings: auto (default: on a\n"
	      "                        terminal, unless NO_COLOR is set), always or never\n"
	      "                        (--color WHEN too)\n"
	      "  -b, --bytes           print sizes as plain numbers\n"
	      "  -h, --help            show this help ('lcloudctl COMMAND --help' for a command)\n"
	      "  -V, --version         show the version\n"
	      "\n"
	      "Exit status: 0 success, 1 failure, 2 usage error, 3 path not found,\n"
	      "4 permission denied, 5 wrong kind of file or device, 6 (check) not untorn,\n"
	      "7 (write, read, torture run, replay --out) refused before submission, 8\n"
	      "(check, advise) unknown, 9 (torture verify) torn or damaged pages (replay\n"
	      "--cut-all: an image shows one), 10 (torture verify) lost acknowledged\n"
	      "writes, 11 (replay) a page write could tear, 12 (diff) changed, 13 (diff)\n"
	      "a verdict got weaker.\n"	      "See lcloudctl(1).\n",
	      out);
}

/*
 * Standard output flushed and closed: when any of it was lost, says so and
 * returns 1 whatever RC was (a verdict's exit status must not stand for a
 * report nobody got); RC otherwise.
 */
static int finish_stdout(int rc)
{
	bool earlier = ferror(stdout) != 0;
	int e;

	errno = 0;
	if (fclose(stdout) == 0 && !earlier)
		return rc;
	e = errno;
	/* stdout closed before start (>&-) with nothing to print is no loss, as coreutils' close_stdout */
	if (!earlier && e == EBADF)
		return rc;
	if (e)
		fprintf(stderr, "lcloudctl: write error: %s\n", strerror(e));
	else
		fputs("lcloudctl: write error: standard output lost some of what was printed\n", stderr);
	return EXIT_FAILURE_GENERIC;
}

static int run(int argc, char **argv)
{
	enum { OPT_SYSROOT = 256, OPT_COLOR };
	static const struct option options[] = {
		{ "sysroot", required_argument, NULL, OPT_SYSROOT },
		FORMAT_OPTIONS,
		{ "color", optional_argument, NULL, OPT_COLOR },
		{ "bytes", no_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct global_opts g = { .sysroot = NULL, .format = OUTPUT_NORMAL, .bytes = false };
	struct lcloud_ctx *ctx = NULL;
	const struct command *cmd = NULL;
	const char *color = "auto";
	int c, r, rc;

	/* the character set only (not numbers or messages): printable UTF-8 stays readable, as in lsblk */
	setlocale(LC_CTYPE, "");
	/* '+': stop at the command name; its options are its own. ':': usage errors are said by usage.c */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:JbhV", options, NULL)) != -1) {
		r = format_option("lcloudctl", c, argc, argv, &g.format);
		if (r < 0)
			return EXIT_USAGE;
		if (r > 0)
			continue;
		switch (c) {
		case OPT_SYSROOT:
			g.sysroot = optarg;
			break;
		case 'b':
			g.bytes = true;
			break;
		case OPT_COLOR:
			/* "--color WHEN" as well as "--color=WHEN": no command is named auto, always or never */
			if (!optarg && optind < argc && is_color_when(argv[optind]))
				optarg = argv[optind++];
			color = optarg ? optarg : "always"; /* a bare --color asks for it, as ls's */
			break;
		case 'h':
			main_usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("lcloudctl %s (liblcloud %s)\n", LCLOUD_VERSION, lcloud_version());
			return EXIT_OK;
		default:
			return usage_option_error("lcloudctl", c, argc, argv);
		}
	}
	if (!color_decide(color, &g.color))
		return usage_error("lcloudctl", "--color=%s: use auto, always or never", tty_str(color));
	if (optind >= argc)
		return usage_error("lcloudctl", "no command given");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[optind], commands[i].name) == 0)
			cmd = &commands[i];
	if (!cmd)
		return usage_error("lcloudctl", "unknown command '%s'", tty_str(argv[optind]));

	r = lcloud_ctx_new(&ctx);
	if (r < 0) {
		fprintf(stderr, "lcloudctl: %s\n", strerror(-r));
		return EXIT_FAILURE_GENERIC;
	}
	if (g.sysroot) {
		r = lcloud_ctx_set_sysroot(ctx, g.sysroot);
		if (r < 0) {
			fprintf(stderr, "lcloudctl: --sysroot %s: %s\n", tty_str(g.sysroot), strerror(-r));
			lcloud_ctx_free(ctx);
			return exit_code_for_error(r);
		}
	}
	rc = cmd->run(ctx, &g, argc - optind, argv + optind);
	lcloud_ctx_free(ctx);
	return rc;
}

int main(int argc, char **argv)
{
	/* past 'ulimit -f' a write fails with EFBIG, reported as any other error, instead of killing us unheard */
	signal(SIGXFSZ, SIG_IGN);
	return finish_stdout(run(argc, argv));
}
