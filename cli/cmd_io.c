/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lcloudctl write / read: one hinted, aligned direct I/O through the
 * liblcloud queue, as a test and demonstration of what the library does
 * (backend choice, atomic refusal, the write guard, hint mapping). With
 * -o json, write says the same as a document, the placement of its class
 * (write stream, placement identifier, handle and why) in typed fields.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "escape.h"
#include "exit_codes.h"
#include "layer_kind.h"
#include "cli_facts.h"
#include "output_file.h"
#include "print.h"
#include "usage.h"

/* Linux's MAX_RW_COUNT: one read or write carries at most 2 GiB less 4 KiB (longer ones end short). */
#define IO_LENGTH_MAX 0x7ffff000ULL

struct io_opts {
	uint64_t offset, length;
	bool have_offset, have_length, atomic, fua, force, replace_output;
	int pattern;             /* -1: none */
	const char *input, *output;
	enum lcloud_backend backend;
	struct lcloud_hint hint;
};

static bool parse_class(const char *s, struct lcloud_hint *h)
{
	static const char *const classes[] = { "none", "data", "metadata", "journal", "background" };
	static const char *const reads[] = { "none", "sync", "readahead" };

	for (int i = 0; i < 5; i++)
		if (!strcmp(s, classes[i])) {
			h->write_class = (uint8_t)i;
			return true;
		}
	for (int i = 1; i < 3; i++)
		if (!strcmp(s, reads[i])) {
			h->read_kind = (uint8_t)i;
			return true;
		}
	return false;
}

static bool parse_lifetime(const char *s, struct lcloud_hint *h)
{
	static const char *const lives[] = { "none", "short", "medium", "long", "extreme" };

	for (int i = 0; i < 5; i++)
		if (!strcmp(s, lives[i])) {
			h->lifetime = (uint8_t)i;
			return true;
		}
	return false;
}

static bool parse_backend(const char *s, enum lcloud_backend *b)
{
	static const char *const names[] = { "auto", "passthrough", "io_uring", "sync" };

	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i])) {
			*b = (enum lcloud_backend)i;
			return true;
		}
	return false;
}

/*
 * What the options of write or read (WRITE false) ask for, checked as a
 * whole once getopt has read them all (one PATH must follow, at optind of
 * ARGC); OUTPUT_SHORT: -o was given in its short form. 0, or -1 said on stderr.
 */
static int check_io_opts(const char *cmd, int argc, bool write, bool output_short, struct io_opts *o,
			 void (*usage)(FILE *))
{
	if (optind + 1 != argc || !o->have_offset || !o->have_length) {
		char who[32];

		snprintf(who, sizeof(who), "lcloudctl %s", cmd);
		usage_error(who, "give one PATH, --offset and --length");
		return -1;
	}
	if (o->length > IO_LENGTH_MAX) {
		/* refused before anything is allocated or opened */
		fprintf(stderr, "lcloudctl %s: --length %" PRIu64 " is more than one read or write carries in Linux "
			"(%llu bytes, 2 GiB less 4 KiB)\n", cmd, o->length, IO_LENGTH_MAX);
		return -1;
	}
	if (!write && (o->atomic || o->pattern >= 0 || o->input || o->hint.lifetime || o->hint.group ||
		       o->hint.write_class)) {
		fprintf(stderr, "lcloudctl read: --atomic, --pattern, --input, --lifetime, --group and write classes "
			"are for writes\n");
		return -1;
	}
	if (!write && o->force && !o->output) {
		fprintf(stderr, "lcloudctl read: --force replaces an existing --out file; there is none\n");
		return -1;
	}
	if (!write && o->output && output_short && (!strcmp(o->output, "json") || !strcmp(o->output, "normal"))) {
		/* -o was the output format elsewhere: 'read ... -o json' must not create a file named json */
		fprintf(stderr, "lcloudctl read: -o here is the old --out FILE, not the output format; to write the "
			"data to a file named %s, say --out %s\n", o->output, o->output);
		return -1;
	}
	if (!write) {
		o->replace_output = o->force;
		o->force = false;
	}
	if (write && (o->output || o->hint.read_kind)) {
		fprintf(stderr, "lcloudctl write: --out and read kinds (sync, readahead) are for reads\n");
		return -1;
	}
	if (write && (o->pattern < 0) == !o->input) {
		fprintf(stderr, "lcloudctl write: give exactly one of --pattern BYTE and --input FILE\n");
		return -1;
	}
	if (o->atomic)
		o->hint.flags |= LCLOUD_IO_ATOMIC;
	if (o->fua)
		o->hint.flags |= LCLOUD_IO_FUA;
	return 0;
}

static int parse_io_opts(const char *cmd, int argc, char **argv, bool write, struct io_opts *o,
			 void (*usage)(FILE *))
{
	enum { OPT_FUA = 256, OPT_LIFETIME, OPT_GROUP, OPT_BACKEND, OPT_OUT };
	static const struct option options[] = {
		{ "offset", required_argument, NULL, 'O' },
		{ "length", required_argument, NULL, 'l' },
		{ "atomic", no_argument, NULL, 'a' },
		{ "hint", required_argument, NULL, 'H' },
		{ "lifetime", required_argument, NULL, OPT_LIFETIME },
		{ "group", required_argument, NULL, OPT_GROUP },
		{ "fua", no_argument, NULL, OPT_FUA },
		{ "pattern", required_argument, NULL, 'p' },
		{ "input", required_argument, NULL, 'i' },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "output", required_argument, NULL, 'o' }, /* deprecated: -o names columns (list) */
		{ "force", no_argument, NULL, 'f' },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool output_short = false;
	int c;

	memset(o, 0, sizeof(*o));
	o->pattern = -1;
	optind = 0; /* 0, not 1: glibc then re-reads the option string (main used "+") */
	while ((c = getopt_long(argc, argv, ":O:l:aH:p:i:o:fh", options, NULL)) != -1) {
		char *end;
		unsigned long v;

		switch (c) {
		case 'O':
			if (parse_size(optarg, &o->offset) < 0)
				goto bad;
			o->have_offset = true;
			break;
		case 'l':
			if (parse_size(optarg, &o->length) < 0 || !o->length)
				goto bad;
			o->have_length = true;
			break;
		case 'a':
			o->atomic = true;
			break;
		case 'H':
			if (!parse_class(optarg, &o->hint)) {
				fprintf(stderr, "lcloudctl %s: unknown hint '%s' (data, metadata, journal, background; "
					"for reads sync, readahead)\n", cmd, tty_str(optarg));
				return -1;
			}
			break;
		case OPT_LIFETIME:
			if (!parse_lifetime(optarg, &o->hint)) {
				fprintf(stderr, "lcloudctl %s: unknown lifetime '%s' (short, medium, long, extreme)\n",
					cmd, tty_str(optarg));
				return -1;
			}
			break;
		case OPT_GROUP:
			v = strtoul(optarg, &end, 0);
			if (*end || v > UINT32_MAX)
				goto bad;
			o->hint.group = (uint32_t)v;
			break;
		case OPT_FUA:
			o->fua = true;
			break;
		case 'p':
			v = strtoul(optarg, &end, 0);
			if (*end || v > 255)
				goto bad;
			o->pattern = (int)v;
			break;
		case 'i':
			o->input = optarg;
			break;
		case OPT_OUT:
			o->output = optarg;
			break;
		case 'o':
			o->output = optarg;
			/* the short form, as given on the command line: "-o json" or "-ojson" */
			{
				const char *opt = optarg == argv[optind - 1] && optind >= 2 ? argv[optind - 2]
											  : argv[optind - 1];

				output_short = opt[0] == '-' && opt[1] == 'o';
				fprintf(stderr, "lcloudctl %s: note: '%s FILE' is deprecated and goes in 0.6: say --out "
					"FILE (-o and --output name output columns, as in 'lcloudctl list')\n", cmd,
					output_short ? "-o" : "--output");
			}
			break;
		case 'f':
			o->force = true;
			break;
		case OPT_BACKEND:
			if (!parse_backend(optarg, &o->backend)) {
				fprintf(stderr, "lcloudctl %s: unknown backend '%s' (auto, passthrough, io_uring, sync)\n",
					cmd, tty_str(optarg));
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			return 1;
		default: {
			char who[32];

			snprintf(who, sizeof(who), "lcloudctl %s", cmd);
			usage_option_error(who, c, argc, argv);
			return -1;
		}
		}
		continue;
bad:
		fprintf(stderr, "lcloudctl %s: bad value '%s' for --%s\n", cmd, tty_str(optarg),
			c == 'O' ? "offset" : c == 'l' ? "length" : c == 'p' ? "pattern" : "group");
		return -1;
	}
	return check_io_opts(cmd, argc, write, output_short, o, usage);
}

/* Exit status for a refused or failed I/O. */
static int io_exit(int err)
{
	if (err == -EBUSY || err == -EOPNOTSUPP || err == -EINVAL)
		return EXIT_REFUSED;
	return exit_code_for_error(err);
}

/* "lcloudctl CMD: PATH: MESSAGE", without PATH when the message starts with it already. */
static void io_error(const char *cmd, const char *path, const char *message)
{
	size_t n = strlen(path);

	if (!strncmp(message, path, n) && (message[n] == ' ' || message[n] == ':'))
		fprintf(stderr, "lcloudctl %s: %s\n", cmd, tty_str(message));
	else
		fprintf(stderr, "lcloudctl %s: %s: %s\n", cmd, tty_str(path), tty_str(message));
}

/*
 * The size of the device the queue writes to, or 0 for a file (files grow;
 * reads end short) and for a whole namespace on passthrough, where the
 * device itself answers a command past its end.
 */
static uint64_t device_size(const struct lcloud_queue *q)
{
	const struct lcloud_probe *p = lcloud_queue_get_probe(q);
	uint64_t size;

	for (unsigned int i = 0; i < lcloud_probe_get_layer_count(p); i++) {
		const struct lcloud_layer *l = lcloud_probe_get_layer(p, i);

		if (lcloud_layer_get_kind(l) == LCLOUD_LAYER_FILESYSTEM ||
		    (lcloud_queue_get_backend(q) == LCLOUD_BACKEND_PASSTHROUGH &&
		     lcloud_layer_get_kind(l) != LCLOUD_LAYER_PARTITION))
			return 0;
		if (layer_kind_describes_device(lcloud_layer_get_kind(l)))
			continue;
		/* not read: 0, no size to check against, as for a file */
		return cli_fact_u64(l, FACT_SIZE, &size) > 0 ? size : 0;
	}
	return 0;
}

/*
 * The --output file (output_file.c): made beside its name with mode 0600 (it
 * holds raw device data) and put in place only once the read succeeded; an
 * existing file only with --force, a symlink never; a block device only
 * through the write guard (--force: one that carries a signature).
 */
static int open_output(struct lcloud_ctx *ctx, const char *path, bool replace, struct output_file *of)
{
	char err[512];
	int r = output_file_open(ctx, path, 0600,
				 OUTPUT_FILE_DEVICE | OUTPUT_FILE_KEEP_LINKS |
					 (replace ? OUTPUT_FILE_FORCE : OUTPUT_FILE_NO_REPLACE), of, err, sizeof(err));

	if (r < 0)
		fprintf(stderr, "lcloudctl read: --out %s%s\n", tty_str(err),
			r == -EEXIST ? " (it is never overwritten: remove it, or pass --force to replace a regular "
				       "file)" : "");
	return r;
}

/* Writes all of BUF to standard output. */
static int write_out(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	int r = 0;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	return r;
}

/* Is the probed target an NVMe namespace, or a partition of one, with nothing between: what auto writes through passthrough? */
static bool direct_namespace(const struct lcloud_probe *p)
{
	unsigned int n = lcloud_probe_get_layer_count(p);
	int disk = cli_below_partitions(p);

	if (disk < 0 || lcloud_layer_get_kind(lcloud_probe_get_layer(p, (unsigned int)disk)) != LCLOUD_LAYER_DISK)
		return false;
	for (unsigned int k = 0; k < n; k++)
		if (lcloud_layer_get_kind(lcloud_probe_get_layer(p, k)) == LCLOUD_LAYER_NVME &&
		    lcloud_layer_get_parent(lcloud_probe_get_layer(p, k)) == disk)
			return true;
	return false;
}

/*
 * --atomic with the automatic backend: the library takes passthrough for an
 * NVMe namespace, whose verdict may refuse a write that RWF_ATOMIC on the
 * block device makes untorn (a format with metadata, which liblcloud's
 * commands do not carry; a size above the namespace's own promise). Then
 * io_uring is the backend that can do it; the queue checks the chosen
 * backend's verdict again before it writes, so this choice never makes a
 * write untorn that is not. Says why on standard error.
 */
static enum lcloud_backend backend_for_atomic(struct lcloud_ctx *ctx, const char *path, const struct io_opts *o)
{
	enum lcloud_backend backend = LCLOUD_BACKEND_AUTO;
	const struct lcloud_verdict *pt, *rwf;
	struct lcloud_probe *p = NULL;
	char why[512];

	if (lcloud_probe_path(ctx, path, LCLOUD_PROBE_NO_SIGNATURES, &p) < 0)
		return backend; /* the queue's own probe reports what failed */
	pt = lcloud_probe_get_verdict(p, LCLOUD_PATH_PASSTHROUGH);
	rwf = lcloud_probe_get_verdict(p, LCLOUD_PATH_RWF_ATOMIC);
	/* a generic node takes passthrough commands only: there is no other backend to take */
	if (pt && rwf && lcloud_probe_get_target_type(p) != LCLOUD_TARGET_NVME_CHAR && direct_namespace(p) &&
	    lcloud_verdict_allows(pt, o->offset, o->length, why, sizeof(why)) == 0 &&
	    lcloud_verdict_allows(rwf, o->offset, o->length, NULL, 0) == 1) {
		unsigned int n = lcloud_verdict_get_reason_count(pt);

		/* with nothing untorn on passthrough, its reason says more than the size does */
		if (!lcloud_verdict_get_max_untorn_bytes(pt) && n)
			snprintf(why, sizeof(why), "%s", lcloud_verdict_get_reason(pt, n - 1));
		fprintf(stderr, "lcloudctl write: %s: the io_uring backend (RWF_ATOMIC), not passthrough, which cannot "
			"write this atomically: %s\n", tty_str(path), tty_str(why));
		backend = LCLOUD_BACKEND_IO_URING;
	}
	lcloud_probe_free(p);
	return backend;
}

static json_object *int_or_null(int32_t v)
{
	return v >= 0 ? json_object_new_int(v) : NULL;
}

/* lcloudctl -o json write: what was written, through which backend, and where its class landed. */
static void print_write_json(const char *path, int64_t n, const struct io_opts *o, const struct lcloud_queue *q,
			     const char *mapping)
{
	static const char *const uses[] = { "unspecified", "data", "metadata", "journal", "background" };
	struct lcloud_placement pl = { .size = sizeof(pl) };
	json_object *j = json_object_new_object(), *p = json_object_new_object();
	const char *basis;

	(void)lcloud_queue_get_placement(q, &o->hint, &pl);
	basis = lcloud_placement_basis_to_string(pl.basis);
	json_object_object_add(j, "schema", json_object_new_int(1));
	json_object_object_add(j, "io", json_object_new_string("write"));
	json_object_object_add(j, "path", json_string_from_device(path));
	json_object_object_add(j, "offset", json_object_new_uint64(o->offset));
	json_object_object_add(j, "bytes", json_object_new_int64(n));
	json_object_object_add(j, "backend", json_object_new_string(lcloud_backend_to_string(lcloud_queue_get_backend(q))));
	json_object_object_add(j, "atomic", json_object_new_boolean(o->atomic));
	json_object_object_add(j, "hints", json_object_new_string(mapping));
	json_object_object_add(p, "basis", json_object_new_string(basis ? basis : "unknown"));
	json_object_object_add(p, "write_stream", int_or_null(pl.write_stream));
	json_object_object_add(p, "placement_id", int_or_null(pl.placement_id));
	json_object_object_add(p, "handle", int_or_null(pl.handle));
	json_object_object_add(p, "use", pl.use && pl.use < sizeof(uses) / sizeof(uses[0])
						 ? json_object_new_string(uses[pl.use]) : NULL);
	json_object_object_add(j, "placement", p);
	print_json(stdout, j);
	json_object_put(j);
}

static int run_io(struct lcloud_ctx *ctx, const char *cmd, const char *path, struct io_opts *o, bool write,
		  enum output_format format)
{
	struct lcloud_queue *q = NULL;
	char mapping[256];
	uint16_t status = 0;
	void *buf = NULL;
	uint64_t size;
	struct output_file out = { .fd = -1 };
	int rc = EXIT_FAILURE_GENERIC;
	int64_t n;
	int r;

	if (!write && !o->output && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "lcloudctl read: standard output is a terminal: the data is binary and is not "
			"written there; give --out FILE, or pipe it (| xxd, | od -A d -t x1)\n");
		return EXIT_USAGE;
	}
	if (write && o->atomic && o->backend == LCLOUD_BACKEND_AUTO)
		o->backend = backend_for_atomic(ctx, path, o);
	r = lcloud_queue_open(ctx, path, 1, o->backend, (write ? LCLOUD_QUEUE_WRITE : 0) | (o->force ? LCLOUD_QUEUE_FORCE : 0),
			      &q);
	if (r < 0) {
		io_error(cmd, path, lcloud_ctx_get_error(ctx)[0] ? lcloud_ctx_get_error(ctx) : strerror(-r));
		hint_needs_root(write ? "lcloudctl write" : "lcloudctl read", path, r, write);
		if (write && r == -ENOENT)
			fprintf(stderr, "lcloudctl write: it writes into a file or device that exists: create the file "
				"first (truncate -s 1M %s, or fallocate -l 1M %s for allocated blocks)\n", tty_str(path),
				tty_str(path));
		/* in use, holds data, under a sysroot, or swapped while being opened: nothing was done */
		return r == -EBUSY || r == -EROFS || r == -ESTALE ? EXIT_REFUSED : exit_code_for_error(r);
	}
	/* checked before the buffer is allocated: a length too large for the device never costs memory */
	size = device_size(q);
	if (size && (o->offset >= size || o->length > size - o->offset)) {
		if (o->offset >= size)
			fprintf(stderr, "lcloudctl %s: %s: offset %" PRIu64 " is past the end of the device (%" PRIu64
				" bytes)\n", cmd, tty_str(path), o->offset, size);
		else
			fprintf(stderr, "lcloudctl %s: %s: %" PRIu64 " bytes at offset %" PRIu64 " run past the end of "
				"the device (%" PRIu64 " bytes: %" PRIu64 " are left there)\n", cmd, tty_str(path), o->length,
				o->offset, size, size - o->offset);
		rc = EXIT_REFUSED;
		goto done;
	}
	if (!write && o->output) {
		r = open_output(ctx, o->output, o->replace_output, &out);
		if (r < 0) {
			rc = output_file_exit_code(r);
			goto done;
		}
	}
	if (posix_memalign(&buf, 4096, o->length)) {
		buf = NULL;
		fprintf(stderr, "lcloudctl %s: cannot allocate %" PRIu64 " bytes\n", cmd, o->length);
		goto done;
	}
	if (write) {
		if (o->input) {
			FILE *f = fopen(o->input, "rb");
			size_t got = f ? fread(buf, 1, o->length, f) : 0;

			if (f)
				fclose(f);
			if (got != o->length) {
				fprintf(stderr, "lcloudctl write: --input %s: %s (need %" PRIu64 " bytes)\n", tty_str(o->input),
					f ? "too short" : strerror(errno), o->length);
				rc = EXIT_USAGE;
				goto done;
			}
		} else {
			memset(buf, o->pattern, o->length);
		}
		n = lcloud_queue_write(q, buf, o->length, o->offset, &o->hint, &status);
	} else {
		n = lcloud_queue_read(q, buf, o->length, o->offset, &o->hint, &status);
	}
	lcloud_queue_describe_hint(q, &o->hint, write, mapping, sizeof(mapping));
	if (n < 0) {
		if (status)
			fprintf(stderr, "lcloudctl %s: %s: the device failed the command: %s (NVMe status 0x%x)\n", cmd,
				tty_str(path), lcloud_nvme_status_to_string(status), status);
		else
			io_error(cmd, path, lcloud_queue_get_error(q));
		if (n == -EFBIG)
			fprintf(stderr, "lcloudctl %s: %s: the write goes past the file size limit (ulimit -f) or the "
				"largest file this file system keeps\n", cmd, tty_str(path));
		rc = status ? EXIT_FAILURE_GENERIC : io_exit((int)n);
		goto done;
	}
	if (write && (uint64_t)n < o->length) {
		/* the kernel may cut even an RWF_ATOMIC write short (at the file size limit, ulimit -f) */
		fprintf(stderr, "lcloudctl write: %s: only %" PRId64 " of %" PRIu64 " bytes were written at offset %" PRIu64
			"%s; check the file size limit (ulimit -f) and the free space\n", tty_str(path), n, o->length, o->offset,
			o->atomic ? ": the write was not one untorn unit" : "");
		free(buf);
		lcloud_queue_free(q);
		return EXIT_FAILURE_GENERIC;
	}
	if (!write && o->output) {
		char err[512];

		/* on a full disk or past ulimit -f the temporary goes and nothing is left at --out */
		r = output_file_pwrite(&out, buf, (uint64_t)n, 0, err, sizeof(err));
		if (r == 0)
			r = output_file_commit(&out, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "lcloudctl read: --out %s: %s\n", tty_str(o->output), tty_str(err));
			goto done;
		}
	} else if (!write) {
		r = write_out(STDOUT_FILENO, buf, (size_t)n);
		if (r < 0) {
			fprintf(stderr, "lcloudctl read: cannot write standard output: %s\n", strerror(-r));
			goto done;
		}
	}
	/* the report goes to stderr for reads: stdout may carry the data */
	if (write && format == OUTPUT_JSON)
		print_write_json(path, n, o, q, mapping);
	else
		fprintf(write ? stdout : stderr, "%s %" PRId64 " bytes at offset %" PRIu64 " %s %s via %s%s; hints: %s\n",
			write ? "wrote" : "read", n, o->offset, write ? "to" : "from", tty_str(path),
			lcloud_backend_to_string(lcloud_queue_get_backend(q)), o->atomic ? " (atomic)" : "", mapping);
	if ((uint64_t)n < o->length) {
		/* a read that ends at the end of a file: what there was is out, but not what was asked */
		fprintf(stderr, "lcloudctl %s: %s: short %s: %" PRId64 " of %" PRIu64 " bytes (%s)\n", cmd, tty_str(path),
			write ? "write" : "read", n, o->length,
			n == 0 ? "the offset is at or past the end of the file" : "the end of the file is within the range");
		rc = EXIT_FAILURE_GENERIC;
		goto done;
	}
	rc = EXIT_OK;
done:
	output_file_abort(&out); /* after a failure: the temporary goes, nothing is put in place */
	free(buf);
	lcloud_queue_free(q);
	return rc;
}

void cmd_write_usage(FILE *out)
{
	fputs("Usage: lcloudctl write [options] PATH --offset N --length N (--pattern BYTE | --input FILE)\n"
	      "\n"
	      "Write one aligned direct I/O to PATH through the liblcloud queue. PATH is opened\n"
	      "once and checked and written through that one descriptor. A block device is\n"
	      "opened with O_EXCL: one that is mounted or held by dm, md, swap or another\n"
	      "program is refused, --force or not. One that carries a file system or a\n"
	      "partition table is refused unless --force. Nothing is written under --sysroot.\n"
	      "A regular file that another program has open, or that a loop device maps, is\n"
	      "refused, --force or not.\n"
	      "\n"
	      "Options:\n"
	      "  -O, --offset N        byte offset in PATH (a multiple of the block size)\n"
	      "  -l, --length N        bytes to write (16K, 1M... accepted; at most 2 GiB less 4 KiB)\n"
	      "  -a, --atomic          untorn or refused: checked against the verdict first;\n"
	      "                        auto takes io_uring on NVMe where only it can\n"
	      "  -H, --hint CLASS      data, metadata, journal or background\n"
	      "      --lifetime L      short, medium, long or extreme\n"
	      "      --group ID        blocks that belong together (FDP placement)\n"
	      "      --fua             durable on completion\n"
	      "  -p, --pattern BYTE    fill the buffer with BYTE (0-255, 0x5a...)\n"
	      "  -i, --input FILE      take the data from FILE\n"
	      "  -f, --force           write to a device even if it holds data (never one in use)\n"
	      "      --backend NAME    auto (default), passthrough, io_uring or sync\n"
	      "  -h, --help            show this help\n",
	      out);
}

void cmd_read_usage(FILE *out)
{
	fputs("Usage: lcloudctl read [options] PATH --offset N --length N\n"
	      "\n"
	      "Read one aligned direct I/O from PATH through the liblcloud queue and write\n"
	      "the data to --out FILE (made with mode 0600 beside its name and renamed\n"
	      "into place when whole; an existing file or a symlink is refused; a block\n"
	      "device is written through the write guard) or to standard output, never to\n"
	      "a terminal. A read that ends past the end of a file is short: exit status 1.\n"
	      "\n"
	      "Options:\n"
	      "  -O, --offset N        byte offset in PATH (a multiple of the block size)\n"
	      "  -l, --length N        bytes to read (at most 2 GiB less 4 KiB)\n"
	      "  -H, --hint KIND       sync (a caller waits) or readahead\n"
	      "      --out FILE        where the data goes (default: standard output)\n"
	      "  -f, --force           replace an existing regular --out file; write an\n"
	      "                        --out device that holds data (never one in use)\n"
	      "      --fua             FUA on passthrough (RWF_DSYNC elsewhere: no effect on reads)\n"
	      "      --backend NAME    auto (default), passthrough, io_uring or sync\n"
	      "  -h, --help            show this help\n",
	      out);
}

int cmd_write(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	struct io_opts o;
	int r = parse_io_opts("write", argc, argv, true, &o, cmd_write_usage);

	if (r)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	return run_io(ctx, "write", argv[optind], &o, true, g->format);
}

int cmd_read(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv)
{
	struct io_opts o;
	int r = parse_io_opts("read", argc, argv, false, &o, cmd_read_usage);

	(void)g;
	if (r)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	return run_io(ctx, "read", argv[optind], &o, false, OUTPUT_NORMAL);
}
