/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The lcloud MariaDB plugin: liblcloud's verdict for the places InnoDB
 * writes its pages (system tablespace, file-per-table directory, undo
 * tablespaces, redo log), on the I/O path InnoDB writes them with, told in
 * the error log at startup and as status variables. Shared declarations of
 * its files; only plugin.c knows the server's plugin API.
 */
#ifndef LCLOUD_MARIADB_H
#define LCLOUD_MARIADB_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <lcloud/lcloud.h>

/* At most this many places are checked: the system tablespace's files and the three directories. */
#define MD_MAX_LOCATIONS 12
#define MD_REASON_MAX 1536

/* What InnoDB keeps at a location; doublewrite protects data pages, not the redo log. */
enum md_role {
	MD_ROLE_SYSTEM_TABLESPACE,
	MD_ROLE_FILE_PER_TABLE,
	MD_ROLE_UNDO,
	MD_ROLE_REDO_LOG,
};

struct md_location {
	enum md_role role;
	char path[PATH_MAX];
	enum lcloud_io_path io_path; /* how InnoDB writes there */
};

/* The server's settings the check rests on, read once at startup (server_settings.c). */
struct md_settings {
	bool read;                      /* false: the reason says why not */
	char reason[512];
	uint64_t page_size;             /* innodb_page_size */
	bool doublewrite;               /* innodb_doublewrite is not OFF */
	char doublewrite_text[32];      /* as the server says it: ON, OFF, fast */
	char flush_method[64];          /* innodb_flush_method, or the buffering variables of 11.0+ */
	unsigned int location_count;
	struct md_location locations[MD_MAX_LOCATIONS];
};

/* One location's answer, as the probe child sent it (answer.c). */
struct md_answer {
	enum lcloud_answer answer;
	uint64_t max_untorn_bytes;      /* on the location's I/O path; 0 when not told */
	bool timed_out;
	char reason[MD_REASON_MAX];    /* liblcloud's, naming its evidence in brackets */
	char filesystem[64];            /* empty when unknown */
	char mount_point[512];
	char device[512];
};

/* The summary the status variables show. */
struct md_summary {
	uint64_t page_size;
	uint64_t max_untorn_bytes;      /* the smallest over the data locations; 0: none proved */
	const char *doublewrite_needed; /* "yes", "no", "unknown" */
	const char *io_path;            /* how InnoDB writes data pages */
	char reason[2048];
	unsigned long long checks;      /* how many checks have finished */
};

/* server_settings.c: through the SQL service, in the plugin's init function */
void md_read_settings(struct md_settings *ret);

/* answer.c: liblcloud in a forked child (../common/bounded_probe.c), waited for at most TIMEOUT_MS */
void md_answer_for(const char *path, uint64_t size, enum lcloud_io_path io_path, int timeout_ms,
		   struct md_answer *ret);

/* check.c: answers for every location, the log lines, the summary; true when enforce refuses */
typedef void (*md_log_fn)(int severity, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
enum { MD_LOG_NOTE, MD_LOG_WARNING, MD_LOG_ERROR };
bool md_check(const struct md_settings *s, int timeout_ms, bool enforce, md_log_fn log,
	      struct md_summary *ret);
const char *md_role_name(enum md_role role);
bool md_role_holds_data_pages(enum md_role role);

#endif /* LCLOUD_MARIADB_H */
