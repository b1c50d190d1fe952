/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The check: liblcloud's answer for every place InnoDB writes pages, one
 * line each in the error log, and the summary the status variables show.
 *
 * Only a data location (system tablespace, file-per-table directory, undo
 * tablespaces) decides whether the doublewrite buffer is needed: it
 * protects data pages; the redo log's blocks carry their own checksums and
 * its line is for information. An answer that is not "untorn" is never
 * taken as one: "unknown" with doublewrite OFF is a WARNING like "no".
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lcloud_mariadb.h"

const char *md_role_name(enum md_role role)
{
	switch (role) {
	case MD_ROLE_SYSTEM_TABLESPACE:
		return "system tablespace";
	case MD_ROLE_FILE_PER_TABLE:
		return "file-per-table directory";
	case MD_ROLE_UNDO:
		return "undo tablespace directory";
	case MD_ROLE_REDO_LOG:
		return "redo log directory";
	}
	return "location";
}

bool md_role_holds_data_pages(enum md_role role)
{
	return role != MD_ROLE_REDO_LOG;
}

/* The summary's reason; a long one is cut, and the log lines have it whole. */
__attribute__((format(printf, 3, 4)))
static void set_text(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, len, fmt, ap);
	va_end(ap);
}

static const char *storage_text(const struct md_answer *a, char *buf, size_t len)
{
	if (!a->filesystem[0])
		snprintf(buf, len, "file system and device unknown");
	else
		snprintf(buf, len, "%s on %s mounted at %s", a->filesystem, a->device[0] ? a->device : "?",
			 a->mount_point[0] ? a->mount_point : "?");
	return buf;
}

/*
 * One line for one location, at the severity its answer and innodb_doublewrite
 * call for: what to do first, then how InnoDB writes there and liblcloud's
 * rule (the server cuts a message at 512 bytes; plugin.c continues it).
 */
static void log_location(const struct md_settings *s, const struct md_location *l, const struct md_answer *a,
			 md_log_fn log)
{
	char where[PATH_MAX + 64], storage[1200], how[1400];
	const char *rule = a->reason; /* liblcloud's reason names its evidence in brackets */
	const char *answer = lcloud_answer_to_string(a->answer);
	unsigned long long page = (unsigned long long)s->page_size;

	snprintf(where, sizeof(where), "the %s (%s)", md_role_name(l->role), l->path);
	storage_text(a, storage, sizeof(storage));
	snprintf(how, sizeof(how), "Written %s (%s) to %s", lcloud_io_path_to_string(l->io_path),
		 l->role == MD_ROLE_REDO_LOG ? "redo log" : s->flush_method, storage);
	if (!md_role_holds_data_pages(l->role))
		log(MD_LOG_NOTE, "lcloud: %llu-byte writes to %s: %s; innodb_doublewrite does not cover the redo log, "
		    "whose blocks carry their own checksums. %s: %s", page, where, answer, how, rule);
	else if (!s->doublewrite && a->answer != LCLOUD_ANSWER_UNTORN)
		log(MD_LOG_WARNING, "lcloud: innodb_doublewrite is OFF, but %llu-byte page writes to %s are not proved "
		    "untorn (answer: %s); turn innodb_doublewrite ON. %s: %s", page, where, answer, how, rule);
	else if (a->answer == LCLOUD_ANSWER_UNKNOWN)
		log(MD_LOG_NOTE, "lcloud: whether %llu-byte page writes to %s are untorn could not be told; "
		    "innodb_doublewrite is %s. %s: %s", page, where, s->doublewrite_text, how, rule);
	else if (a->answer == LCLOUD_ANSWER_UNTORN && s->doublewrite)
		log(MD_LOG_NOTE, "lcloud: innodb_doublewrite is %s, but not needed for %s: %llu-byte page writes there "
		    "are untorn; 'lcloudctl advise --db mariadb %s' says what turning it off rests on. %s: %s",
		    s->doublewrite_text, where, page, l->path, how, rule);
	else if (a->answer == LCLOUD_ANSWER_UNTORN)
		log(MD_LOG_NOTE, "lcloud: innodb_doublewrite is OFF, and %llu-byte page writes to %s are untorn. %s: %s",
		    page, where, how, rule);
	else
		log(MD_LOG_NOTE, "lcloud: innodb_doublewrite is %s and needed: %llu-byte page writes to %s are not "
		    "untorn. %s: %s", s->doublewrite_text, page, where, how, rule);
}

bool md_check(const struct md_settings *s, int timeout_ms, bool enforce, md_log_fn log, struct md_summary *ret)
{
	const struct md_location *first_no = NULL, *first_unknown = NULL, *first_data = NULL;
	struct md_answer answers[MD_MAX_LOCATIONS];
	const struct md_answer *decisive = NULL;
	uint64_t smallest = UINT64_MAX;

	ret->page_size = s->page_size;
	ret->max_untorn_bytes = 0;
	ret->doublewrite_needed = "unknown";
	ret->io_path = "unknown";
	if (!s->read) {
		snprintf(ret->reason, sizeof(ret->reason), "%s", s->reason);
		log(MD_LOG_NOTE, "lcloud: whether InnoDB's page writes are untorn could not be told: %s", s->reason);
		goto enforce;
	}
	for (unsigned int i = 0; i < s->location_count; i++) {
		const struct md_location *l = &s->locations[i];
		struct md_answer *a = &answers[i];
		uint64_t contribution;

		md_answer_for(l->path, s->page_size, l->io_path, timeout_ms, a);
		log_location(s, l, a, log);
		if (!md_role_holds_data_pages(l->role))
			continue;
		if (!first_data) {
			first_data = l;
			ret->io_path = lcloud_io_path_to_string(l->io_path);
		}
		if (a->answer == LCLOUD_ANSWER_NO && !first_no) {
			first_no = l;
			decisive = a;
		}
		if (a->answer == LCLOUD_ANSWER_UNKNOWN && !first_unknown) {
			first_unknown = l;
			if (!first_no)
				decisive = a;
		}
		/* a size at or above the page where the page itself is not proved untorn proves nothing */
		contribution = a->answer == LCLOUD_ANSWER_UNTORN || a->max_untorn_bytes < s->page_size ?
				       a->max_untorn_bytes : 0;
		if (a->answer == LCLOUD_ANSWER_UNKNOWN || contribution < smallest)
			smallest = a->answer == LCLOUD_ANSWER_UNKNOWN ? 0 : contribution;
	}
	if (first_no || first_unknown) {
		const struct md_location *l = first_no ? first_no : first_unknown;

		ret->doublewrite_needed = first_no ? "yes" : "unknown";
		set_text(ret->reason, sizeof(ret->reason), "%s (%s): %s", md_role_name(l->role), l->path,
			 decisive->reason);
	} else if (first_data) {
		ret->doublewrite_needed = "no";
		set_text(ret->reason, sizeof(ret->reason), "%s (%s): %s", md_role_name(first_data->role),
			 first_data->path, answers[first_data - s->locations].reason);
	} else {
		snprintf(ret->reason, sizeof(ret->reason), "no InnoDB data location was found");
	}
	ret->max_untorn_bytes = smallest == UINT64_MAX ? 0 : smallest;
enforce:
	ret->checks++;
	/* settings that could not be read do not say doublewrite is OFF */
	if (!enforce || !s->read || s->doublewrite || strcmp(ret->doublewrite_needed, "no") == 0)
		return false;
	log(MD_LOG_ERROR, "lcloud: refusing to start: innodb_doublewrite is %s, but page writes are not proved "
	    "untorn (doublewrite needed: %s); set innodb_doublewrite=ON, or lcloud_enforce=OFF to start anyway. "
	    "%s", s->doublewrite_text, ret->doublewrite_needed, ret->reason);
	return true;
}
