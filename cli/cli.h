/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUDCTL_CLI_H
#define LCLOUDCTL_CLI_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <lcloud/lcloud.h>

/* Exit codes, documented in lcloudctl(8). */
enum {
	EXIT_OK = 0,
	EXIT_FAILURE_GENERIC = 1,
	EXIT_USAGE = 2,
	EXIT_NOT_FOUND = 3,
	EXIT_PERMISSION = 4,
	EXIT_WRONG_KIND = 5,
	EXIT_NOT_UNTORN = 6, /* check: the write would not be untorn */
	EXIT_REFUSED = 7,    /* write/read: refused before submission (in use, holds data, not atomic) */
	EXIT_UNKNOWN = 8,    /* check, advise: the evidence could not be read; neither untorn nor not */
	EXIT_TORN = 9,       /* torture verify: torn or damaged pages; replay --cut-all: an image shows one */
	EXIT_LOST = 10,      /* torture verify: acknowledged writes lost (and no torn page) */
	EXIT_TEARABLE = 11,  /* replay: a page write a power cut could tear under the model */
	EXIT_CHANGED = 12,   /* diff: something changed, no verdict got weaker */
	EXIT_WEAKER = 13,    /* diff: a verdict got weaker */
};

enum output_format {
	OUTPUT_NORMAL,
	OUTPUT_JSON,
};

struct global_opts {
	const char *sysroot;
	enum output_format format;
	bool bytes; /* raw byte values instead of human units */
	bool human; /* probe -H: decode the bits of NVMe capability fields */
	bool color; /* --color, NO_COLOR and whether stdout is a terminal, decided once in main */
};

/* What a coloured word says; never used in JSON. */
enum color_role {
	COLOR_GOOD,    /* untorn, ok */
	COLOR_BAD,     /* not untorn, misaligned, an error note, a weaker verdict */
	COLOR_UNKNOWN, /* unknown, a warning note */
};

/* --color=WHEN: auto (a terminal and no NO_COLOR), always or never; false for another word. */
bool color_decide(const char *when, bool *ret);
/* The escape that starts ROLE's colour, or "" when G says no colour; color_end() likewise. */
const char *color_start(const struct global_opts *g, enum color_role role);
const char *color_end(const struct global_opts *g);
/* libsmartcols' colour name for ROLE. */
const char *color_name(enum color_role role);

struct command {
	const char *name;
	const char *summary;
	int (*run)(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
	void (*usage)(FILE *out);
};

/* A nested command's verbs (torture run, torture verify), dispatched by their name in argv[1] (verbs.c). */
struct verb {
	const char *name;
	int (*run)(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
	void (*usage)(FILE *out);
};
int dispatch_verb(const char *who, const struct verb *verbs, size_t n, void (*usage)(FILE *out),
		  struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);

int cmd_probe(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_probe_usage(FILE *out);
int cmd_list(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_list_usage(FILE *out);
int cmd_check(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_check_usage(FILE *out);
int cmd_advise(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
int cmd_write(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_write_usage(FILE *out);
int cmd_read(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_read_usage(FILE *out);
void cmd_advise_usage(FILE *out);
int cmd_udev(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_udev_usage(FILE *out);

/* What the crash lab proved for this stack, for advise to cite; NULL where it has not run it. */
const char *proof_for_innodb(const struct lcloud_probe *p, uint64_t page);
const char *proof_for_buffered(void);

/* InnoDB data files under a directory whose existing pages straddle two extents (data_file_edges.c). */
struct data_file_edges {
	unsigned long files, split, unread;
	char split_first[4096];
	uint64_t split_first_edge;
	char unread_first[4200];
};
/* Walks DIR (one file system, no symlinks) for PAGE-byte pages across extent edges. Returns 0 or -errno. */
int data_file_edges_scan(const char *dir, uint64_t page, struct data_file_edges *ret);
int cmd_diff(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_diff_usage(FILE *out);

/* probe --save / diff: the kernel, every fact and every verdict, as JSON (schema 1). */
json_object *fingerprint_new(const struct lcloud_probe *p, const char *sysroot);
/* FILE written whole or not at all, a regular file only (output_file.c); -errno and ERR. */
int fingerprint_save(const char *file, json_object *fp, char *err, size_t err_size);
/*
 * A saved fingerprint, checked whole against the shape 'probe --save' writes
 * (fingerprint_read.c): -EBADMSG with ERR naming the file and the key when it
 * is not one, -errno when FILE cannot be read. PARSE reads SIZE bytes of TEXT
 * (named NAME in ERR).
 */
int fingerprint_load(const char *file, json_object **ret, char *err, size_t err_size);
int fingerprint_parse(const char *name, const void *text, size_t size, json_object **ret, char *err, size_t err_size);
/* Returns 0 same, 1 changed, 2 a verdict got weaker; *RET_REPORT is the JSON report. */
int fingerprint_compare(json_object *old_fp, json_object *new_fp, json_object **ret_report);
int cmd_export(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_export_usage(FILE *out);
int cmd_torture(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_torture_usage(FILE *out);
void cmd_torture_run_usage(FILE *out);
void cmd_torture_verify_usage(FILE *out);
int cmd_replay(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
void cmd_replay_usage(FILE *out);
int cmd_torture_run(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);
int cmd_torture_verify(struct lcloud_ctx *ctx, const struct global_opts *g, int argc, char **argv);

/* "16384", "16K", "16KiB", "1M": binary units; -EINVAL or -ERANGE. */
int parse_size(const char *s, uint64_t *ret);

/* -o/--output argument; for an unknown format says so on stderr as WHO ("lcloudctl check") and returns false. */
bool parse_output_format(const char *who, const char *arg, enum output_format *ret);

/* "4 KiB (4096)" style rendering of a fact value into BUF. */
const char *format_fact_value(const struct lcloud_fact *f, bool bytes, char *buf, size_t size);
/* Human size, "16 KiB", "1.5 MiB", "512 B". */
const char *format_size(uint64_t bytes, char *buf, size_t size);
/* abs_path.c: PATH made absolute against the current folder, not resolved; 0 or -errno. */
int absolute_path(const char *path, char *buf, size_t size);

/* JSON value of a fact: number, boolean, string or null when not present. */
json_object *fact_to_json(const struct lcloud_fact *f);
json_object *probe_to_json(const struct lcloud_probe *p);
void print_probe_normal(FILE *out, const struct lcloud_probe *p, const struct global_opts *opts);
/* NVMe raw Identify fields as nvme-cli shows them (hex; -H: bits by name); false: not one of those. */
bool nvme_field_print(FILE *out, const struct lcloud_fact *f, int width, bool human);

/* Reports a failed probe of PATH on stderr with what to do; returns the exit code. */
int report_probe_error(const char *prog, const char *path, int err);
json_object *probe_error_to_json(const char *path, int err);
int exit_code_for_error(int err);

void print_json(FILE *out, json_object *obj);

/* block_sysfs.c: list's columns beside the probe; every path under SYSROOT ("" for the live system). */
struct mount_entry {
	char *devno; /* "MAJ:MIN" */
	char *mount_point;
	char *fstype;
};
struct mount_table {
	struct mount_entry *entries;
	size_t n;
	bool read;
};
/* The first mount of DEVNO in /proc/self/mountinfo (read on the first call); NULL: not mounted. */
const struct mount_entry *mount_table_find(struct mount_table *t, const char *sysroot, const char *devno);
void mount_table_release(struct mount_table *t);
/* An unmounted file system's type as udev's blkid builtin recorded it (lsblk reads the same), or NULL. */
char *udev_fs_type(const char *sysroot, const char *devno);
/*
 * TRAN, from where DISK sits in sysfs, as lsblk: nvme (PCIe) or the NVMe
 * fabric, sata, usb, sas, fc, iscsi, virtio; NULL for dm, md, loop and buses not known.
 */
char *block_transport(const char *sysroot, const char *disk);
/* A partition's disk, or the slaves/ of a dm/md device: where --tree hangs NAME. */
int block_parents(const char *sysroot, const char *name, char ***ret, size_t *n_ret);
/*
 * NAME's device number from sysfs "dev" as a dev_t value (makedev), lsblk's
 * default sort key; -ENOENT or -EINVAL when it cannot be read.
 */
int block_devno(const char *sysroot, const char *name, uint64_t *ret);
/* "nvme0n1", "/dev/nvme0n1", "/dev/mapper/x" (a link to ../dm-0): the kernel's name. */
char *block_device_name(const char *sysroot, const char *arg);

/*
 * Text for a terminal from a string this program did not write (escape.c):
 * control characters, bytes that are not UTF-8 and '\\' as \xNN; printable
 * UTF-8 kept under a UTF-8 locale. Escape each string once, where it is
 * printed. escape_text() truncates to SIZE (never inside an escape) and
 * returns BUF; S and BUF must not overlap. tty_str() returns an escaped
 * copy that stays valid for the next TTY_STR_SLOTS - 1 calls: for printf
 * arguments; tty_strn() the same for the first N bytes of S. Table cells
 * go to libsmartcols raw: it escapes them itself.
 */
#define TTY_STR_SLOTS 8
const char *escape_text(const char *s, char *buf, size_t size);
const char *tty_str(const char *s);
const char *tty_strn(const char *s, size_t n);
/* tty_str() for JSON text (json-c's own escapes kept): its backslashes are JSON's. */
const char *tty_json(const char *json_text);
void fputs_escaped(const char *s, FILE *out);
/* JSON text to OUT with DEL and the C1 controls as \u00NN: no string in it commands a terminal. */
void fputs_json(const char *json, FILE *out);
/* A JSON string of S, valid UTF-8 whatever S holds: a byte that is not UTF-8 becomes U+0080..U+00FF. */
json_object *json_string_from_device(const char *s);

#endif
