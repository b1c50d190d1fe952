/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl udev NAME: the verdict of one block device as udev properties,
 * KEY=VALUE lines for a rule's IMPORT{program}. The installed rule
 * (60-lcloud.rules) adds them to every disk and partition, so that
 * 'udevadm info' and anything reading the udev database sees them.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "exit_codes.h"
#include "usage.h"
#include "cli_facts.h"

void cmd_udev_usage(FILE *out)
{
	fputs("Usage: lcloudctl udev [options] NAME\n"
	      "\n"
	      "Print the verdict for block device NAME (a kernel name such as nvme0n1 or\n"
	      "sda1, or /dev/NAME) as udev properties, one KEY=VALUE line each, for a\n"
	      "udev rule's IMPORT{program}:\n"
	      "  ID_LCLOUD_<PATH>_MAX      largest untorn write per I/O path (bytes; 0 none)\n"
	      "  ID_LCLOUD_<PATH>_ABOVE    no, or unknown when evidence could not be read\n"
	      "  ID_LCLOUD_RWF_ATOMIC_HW_MAX, ID_LCLOUD_ATOMIC_UNIT_MAX, ID_LCLOUD_ATOMIC_BOUNDARY,\n"
	      "  ID_LCLOUD_POWER_FAIL_BYTES, ID_LCLOUD_CLOUD, ID_LCLOUD_PROMISE_SOURCE, ID_LCLOUD_VERSION\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help            show this help\n",
	      out);
}

/* udev takes the value to the end of the line: keep it one word of safe characters. */
static void prop(const char *key, const char *value)
{
	printf("%s=", key);
	for (const char *c = value; *c; c++)
		putchar((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
				strchr("._:/+-", *c)
			? *c
			: '_');
	putchar('\n');
}

static void prop_u64(const char *key, uint64_t value)
{
	printf("%s=%" PRIu64 "\n", key, value);
}

/* The first present number or string NAME in a layer of KIND. */
static const struct lcloud_fact *find(const struct lcloud_probe *p, enum lcloud_layer_kind kind, enum fact_id id)
{
	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++) {
		const struct lcloud_layer *l = lcloud_probe_get_layer(p, i);
		const struct lcloud_fact *f;

		if (lcloud_layer_get_kind(l) != kind)
			continue;
		f = cli_fact(l, id);
		if (f && lcloud_fact_get_state(f) == LCLOUD_FACT_PRESENT)
			return f;
	}
	return NULL;
}

int cmd_udev(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const keys[] = { NULL, "RWF_ATOMIC", "PASSTHROUGH", "PLAIN_DIRECT", "BUFFERED" };
	struct lcloud_probe *p = NULL;
	const struct lcloud_fact *f;
	const char *name;
	char key[64];
	int c, r;

	(void)g;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		switch (c) {
		case 'h':
			cmd_udev_usage(stdout);
			return EXIT_OK;
		default:
			return usage_option_error("lcloudctl udev", c, argc, argv);
		}
	}
	if (optind + 1 != argc)
		return usage_error("lcloudctl udev", "give exactly one block device NAME (udev's %%k)");
	name = argv[optind];
	if (strncmp(name, "/dev/", 5) == 0)
		name += 5;
	/* no signatures: udev's own blkid builtin reads those, and a rule must be quick */
	r = lcloud_probe_blockdev(ctx, name, LCLOUD_PROBE_NO_SIGNATURES, &p);
	if (r < 0)
		return report_probe_error("lcloudctl udev", name, r);
	prop("ID_LCLOUD_VERSION", lcloud_version());
	for (int path = LCLOUD_PATH_RWF_ATOMIC; path <= LCLOUD_PATH_BUFFERED; path++) {
		const struct lcloud_verdict *v = lcloud_probe_get_verdict(p, (enum lcloud_io_path)path);

		snprintf(key, sizeof(key), "ID_LCLOUD_%s_MAX", keys[path]);
		prop_u64(key, lcloud_verdict_get_max_untorn_bytes(v));
		snprintf(key, sizeof(key), "ID_LCLOUD_%s_ABOVE", keys[path]);
		prop(key, lcloud_verdict_get_unknown_reason(v) ? "unknown" : "no");
	}
	prop_u64("ID_LCLOUD_RWF_ATOMIC_HW_MAX",
		 lcloud_verdict_get_hardware_max_bytes(lcloud_probe_get_verdict(p, LCLOUD_PATH_RWF_ATOMIC)));
	f = find(p, LCLOUD_LAYER_DISK, FACT_ATOMIC_WRITE_UNIT_MAX_BYTES);
	if (f)
		prop_u64("ID_LCLOUD_ATOMIC_UNIT_MAX", lcloud_fact_get_u64(f));
	f = find(p, LCLOUD_LAYER_DISK, FACT_ATOMIC_WRITE_BOUNDARY_BYTES);
	if (f)
		prop_u64("ID_LCLOUD_ATOMIC_BOUNDARY", lcloud_fact_get_u64(f));
	f = find(p, LCLOUD_LAYER_NVME, FACT_ATOMIC_WRITE_POWER_FAIL_BYTES);
	if (f)
		prop_u64("ID_LCLOUD_POWER_FAIL_BYTES", lcloud_fact_get_u64(f));
	f = find(p, LCLOUD_LAYER_CLOUD, FACT_PROVIDER);
	if (f && lcloud_fact_get_string(f))
		prop("ID_LCLOUD_CLOUD", lcloud_fact_get_string(f));
	f = find(p, LCLOUD_LAYER_CLOUD, FACT_PROMISE_SOURCE);
	if (f && lcloud_fact_get_string(f))
		prop("ID_LCLOUD_PROMISE_SOURCE", lcloud_fact_get_string(f));
	lcloud_probe_free(p);
	return EXIT_OK;
}
