/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The server's settings the check rests on, and the places InnoDB writes
 * its pages, read with the server's SQL service (SHOW GLOBAL VARIABLES on a
 * local connection) from the plugin's init function.
 *
 * Why the SQL service: Debian's libmariadbd-dev ships the plugin and
 * service headers only, and neither 10.11 nor 11.8 offers a service that
 * reads another plugin's system variable; the server's globals behind them
 * (srv_page_size, srv_file_flush_method, ...) are private and changed type
 * between 10.11 and 11.x (innodb_flush_method became four buffering
 * variables in 11.0). SHOW GLOBAL VARIABLES says what the server says, on
 * both. InnoDB's variables exist only once InnoDB is initialised, which
 * the server does after daemon plugins and before audit plugins: hence the
 * plugin's type (plugin.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mysql.h>
#include <mysql/plugin.h>
#include <mysql/service_sql.h>

#include "lcloud_mariadb.h"

static const char *const wanted[] = {
	"datadir", "innodb_data_home_dir", "innodb_data_file_path", "innodb_undo_directory",
	"innodb_undo_tablespaces", "innodb_log_group_home_dir", "innodb_page_size", "innodb_doublewrite",
	"innodb_flush_method", "innodb_data_file_buffering", "innodb_log_file_buffering",
};
enum {
	V_DATADIR, V_DATA_HOME, V_DATA_FILE_PATH, V_UNDO_DIR, V_UNDO_TABLESPACES, V_LOG_DIR, V_PAGE_SIZE,
	V_DOUBLEWRITE, V_FLUSH_METHOD, V_DATA_BUFFERING, V_LOG_BUFFERING, V_COUNT
};
_Static_assert(sizeof(wanted) / sizeof(wanted[0]) == V_COUNT, "one name per variable");

/* DIR (relative ones are to the data directory, where the server runs) joined with NAME. */
static void join(char *out, size_t len, const char *datadir, const char *dir, const char *name)
{
	char base[PATH_MAX];
	size_t n;

	if (!dir || !*dir || strcmp(dir, ".") == 0 || strcmp(dir, "./") == 0)
		snprintf(base, sizeof(base), "%s", datadir);
	else if (dir[0] == '/')
		snprintf(base, sizeof(base), "%s", dir);
	else
		snprintf(base, sizeof(base), "%s/%s", datadir, dir[0] == '.' && dir[1] == '/' ? dir + 2 : dir);
	n = strlen(base);
	while (n > 1 && base[n - 1] == '/')
		base[--n] = 0;
	if (name && *name)
		snprintf(out, len, "%s/%s", base, name);
	else
		snprintf(out, len, "%s", base);
}

static void add(struct md_settings *s, enum md_role role, const char *path, enum lcloud_io_path io_path)
{
	struct md_location *l;

	if (s->location_count >= MD_MAX_LOCATIONS)
		return;
	l = &s->locations[s->location_count++];
	l->role = role;
	snprintf(l->path, sizeof(l->path), "%s", path);
	l->io_path = io_path;
}

/*
 * InnoDB opens data files with O_DIRECT for innodb_flush_method O_DIRECT or
 * O_DIRECT_NO_FSYNC (10.11), or innodb_data_file_buffering=OFF (11.0+, which
 * says what the old variable maps to); every other method goes through the
 * page cache, where no write is untorn. Unsure is buffered: never untorn.
 */
static enum lcloud_io_path data_io_path(char *const v[V_COUNT])
{
	if (v[V_DATA_BUFFERING])
		return strcasecmp(v[V_DATA_BUFFERING], "OFF") == 0 ? LCLOUD_PATH_PLAIN_DIRECT : LCLOUD_PATH_BUFFERED;
	if (v[V_FLUSH_METHOD] && (strcasecmp(v[V_FLUSH_METHOD], "O_DIRECT") == 0 ||
				  strcasecmp(v[V_FLUSH_METHOD], "O_DIRECT_NO_FSYNC") == 0))
		return LCLOUD_PATH_PLAIN_DIRECT;
	return LCLOUD_PATH_BUFFERED;
}

/* innodb_log_file_buffering=OFF (10.8+): the redo log is written with O_DIRECT. */
static enum lcloud_io_path log_io_path(char *const v[V_COUNT])
{
	return v[V_LOG_BUFFERING] && strcasecmp(v[V_LOG_BUFFERING], "OFF") == 0 ? LCLOUD_PATH_PLAIN_DIRECT :
										    LCLOUD_PATH_BUFFERED;
}

/* innodb_data_file_path: "ibdata1:12M:autoextend;ibdata2:50M", a raw partition "/dev/sdb:10Gnewraw". */
static void add_system_tablespace(struct md_settings *s, char *const v[V_COUNT], enum lcloud_io_path io_path)
{
	char *spec = strdup(v[V_DATA_FILE_PATH] ? v[V_DATA_FILE_PATH] : "ibdata1");
	char *save = NULL, path[PATH_MAX];

	if (!spec)
		return;
	for (char *item = strtok_r(spec, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
		char *colon = strchr(item, ':');

		if (colon)
			*colon = 0;
		if (!*item)
			continue;
		if (item[0] == '/')
			snprintf(path, sizeof(path), "%s", item);
		else
			join(path, sizeof(path), v[V_DATADIR], v[V_DATA_HOME], item);
		add(s, MD_ROLE_SYSTEM_TABLESPACE, path, io_path);
	}
	free(spec);
}

static bool query_variables(char *v[V_COUNT], char *why, size_t why_len)
{
	char q[1024] = "SHOW GLOBAL VARIABLES WHERE Variable_name IN (";
	MYSQL *m = mysql_init(NULL);
	MYSQL_RES *res;
	MYSQL_ROW row;
	bool ok = false;

	for (int i = 0; i < V_COUNT; i++)
		snprintf(q + strlen(q), sizeof(q) - strlen(q), "%s'%s'", i ? "," : "", wanted[i]);
	snprintf(q + strlen(q), sizeof(q) - strlen(q), ")");
	if (!m) {
		snprintf(why, why_len, "the server's SQL service gave no connection");
		return false;
	}
	if (!mysql_real_connect_local(m) || mysql_real_query(m, q, strlen(q)) || !(res = mysql_store_result(m))) {
		snprintf(why, why_len, "the server's settings could not be read: %s", mysql_error(m));
		mysql_close(m);
		return false;
	}
	while ((row = mysql_fetch_row(res)))
		for (int i = 0; i < V_COUNT; i++)
			if (row[0] && row[1] && strcasecmp(row[0], wanted[i]) == 0 && !v[i])
				v[i] = *row[1] ? strdup(row[1]) : NULL;
	mysql_free_result(res);
	mysql_close(m);
	ok = v[V_DATADIR] && v[V_PAGE_SIZE] && v[V_DOUBLEWRITE];
	if (!ok)
		snprintf(why, why_len, "%s", v[V_DATADIR] ? "InnoDB is not loaded: the server shows no innodb_page_size"
							   " or innodb_doublewrite" : "the server shows no datadir");
	return ok;
}

void md_read_settings(struct md_settings *s)
{
	char *v[V_COUNT] = { 0 };
	enum lcloud_io_path data_path;
	char path[PATH_MAX];
	char *end;

	memset(s, 0, sizeof(*s));
	if (!query_variables(v, s->reason, sizeof(s->reason)))
		goto out;
	s->page_size = strtoull(v[V_PAGE_SIZE], &end, 10);
	if (*end || !s->page_size) {
		snprintf(s->reason, sizeof(s->reason), "innodb_page_size '%s' is not a number", v[V_PAGE_SIZE]);
		goto out;
	}
	/* 10.11: ON/OFF; 11.x: ON, OFF or fast, which still writes the doublewrite buffer */
	snprintf(s->doublewrite_text, sizeof(s->doublewrite_text), "%s", v[V_DOUBLEWRITE]);
	s->doublewrite = strcasecmp(v[V_DOUBLEWRITE], "OFF") != 0 && strcmp(v[V_DOUBLEWRITE], "0") != 0;
	if (v[V_DATA_BUFFERING])
		snprintf(s->flush_method, sizeof(s->flush_method), "innodb_data_file_buffering=%s", v[V_DATA_BUFFERING]);
	else
		snprintf(s->flush_method, sizeof(s->flush_method), "innodb_flush_method=%s",
			 v[V_FLUSH_METHOD] ? v[V_FLUSH_METHOD] : "(not shown)");
	data_path = data_io_path(v);
	add_system_tablespace(s, v, data_path);
	join(path, sizeof(path), v[V_DATADIR], NULL, NULL);
	add(s, MD_ROLE_FILE_PER_TABLE, path, data_path);
	/* with no undo tablespaces the undo logs live in the system tablespace */
	if (v[V_UNDO_TABLESPACES] && strtoul(v[V_UNDO_TABLESPACES], NULL, 10) > 0) {
		join(path, sizeof(path), v[V_DATADIR], v[V_UNDO_DIR], NULL);
		add(s, MD_ROLE_UNDO, path, data_path);
	}
	join(path, sizeof(path), v[V_DATADIR], v[V_LOG_DIR], NULL);
	add(s, MD_ROLE_REDO_LOG, path, log_io_path(v));
	s->read = true;
out:
	for (int i = 0; i < V_COUNT; i++)
		free(v[i]);
}
