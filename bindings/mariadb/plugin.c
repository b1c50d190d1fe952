/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plugin `lcloud` (lcloud.so): its declaration, system variables and
 * status variables, and the thread that refreshes the answers on request.
 *
 * An audit plugin that subscribes to connection events and does nothing
 * with them, rather than a daemon plugin: the server initialises daemon
 * plugins before the storage engines, so a daemon plugin's init function
 * runs before InnoDB's variables exist, and refusing to start (lcloud_enforce
 * with FORCE_PLUS_PERMANENT) must happen in the init function. Audit
 * plugins are initialised after the storage engines, on 10.11 and 11.x
 * alike; an audit plugin must name at least one event class, and connection
 * events (connect, disconnect, change user) are the rarest.
 *
 * The init function reads the settings (server_settings.c), checks every
 * location (check.c, each probe in a bounded child: answer.c) and
 * logs; SET GLOBAL lcloud_refresh=ON wakes a thread that probes again with
 * the settings read at startup (the paths, the page size, the flush method
 * and, on 10.11, innodb_doublewrite cannot change while the server runs),
 * so the SET returns at once and never waits for a file system.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <mysql/plugin.h>
#include <mysql/plugin_audit.h>
#include <mysql/service_my_print_error.h>

#include "lcloud_mariadb.h"

/* my_sys.h's flags for my_printf_error(), which the plugin headers do not carry */
#ifndef ME_ERROR_LOG_ONLY
#define ME_ERROR_LOG_ONLY 128
#endif
#ifndef ME_NOTE
#define ME_NOTE 1024
#endif
#ifndef ME_WARNING
#define ME_WARNING 2048
#endif

static my_bool enforce;
static my_bool refresh;
static unsigned int probe_timeout_s;

static struct md_settings settings;
static struct md_summary summary = { .doublewrite_needed = "unknown", .io_path = "unknown" };
static pthread_mutex_t summary_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_t refresher;
static bool refresher_started;
static pthread_mutex_t refresh_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t refresh_wanted = PTHREAD_COND_INITIALIZER;
static bool refresh_pending, stopping;

/* The server cuts a message at MYSQL_ERRMSG_SIZE (512) bytes: longer ones go on in more lines. */
#define LINE_BYTES 480
#define CONTINUED "lcloud: (continued) "

static void log_piece(int severity, const char *text)
{
	unsigned long flags = ME_ERROR_LOG_ONLY;

	if (severity == MD_LOG_NOTE)
		flags |= ME_NOTE;
	else if (severity == MD_LOG_WARNING)
		flags |= ME_WARNING;
	my_printf_error(0, "%s", flags, text);
}

/* LEN bytes of TEXT as one line, after the continuation mark when CONTINUED. */
static void emit(int severity, bool continued, const char *text, size_t len)
{
	char piece[LINE_BYTES + 1];
	size_t mark = continued ? strlen(CONTINUED) : 0;

	if (mark + len > LINE_BYTES)
		len = LINE_BYTES - mark;
	memcpy(piece, CONTINUED, mark);
	memcpy(piece + mark, text, len);
	piece[mark + len] = 0;
	log_piece(severity, piece);
}

static void log_line(int severity, const char *fmt, ...)
{
	char buf[8192];
	bool continued = false;
	const char *at = buf;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (;;) {
		size_t room = LINE_BYTES - (continued ? strlen(CONTINUED) : 0), cut = room;

		if (strlen(at) <= room)
			break;
		/* at a space, so that the pieces joined with one space give the message back */
		while (cut > room / 2 && at[cut] != ' ')
			cut--;
		if (at[cut] != ' ')
			for (cut = room; cut > 0 && ((unsigned char)at[cut] & 0xc0) == 0x80; cut--)
				; /* not inside a UTF-8 character */
		emit(severity, continued, at, cut);
		at += cut + (at[cut] == ' ');
		continued = true;
	}
	emit(severity, continued, at, strlen(at));
}

static bool run_check(void)
{
	struct md_summary fresh;
	bool refuse;

	pthread_mutex_lock(&summary_lock);
	fresh = summary;
	pthread_mutex_unlock(&summary_lock);
	refuse = md_check(&settings, (int)probe_timeout_s * 1000, enforce, log_line, &fresh);
	pthread_mutex_lock(&summary_lock);
	summary = fresh;
	pthread_mutex_unlock(&summary_lock);
	return refuse;
}

static void *refresh_main(void *arg)
{
	pthread_mutex_lock(&refresh_lock);
	for (;;) {
		while (!refresh_pending && !stopping)
			pthread_cond_wait(&refresh_wanted, &refresh_lock);
		if (stopping)
			break;
		refresh_pending = false;
		pthread_mutex_unlock(&refresh_lock);
		(void)run_check(); /* enforce refuses a start only: a running server is not stopped */
		pthread_mutex_lock(&refresh_lock);
	}
	pthread_mutex_unlock(&refresh_lock);
	return NULL;
}

static void refresh_update(MYSQL_THD thd, struct st_mysql_sys_var *var, void *var_ptr, const void *save)
{
	/* the variable stays OFF: each SET ... = ON asks for one more check */
	if (!*(const my_bool *)save)
		return;
	pthread_mutex_lock(&refresh_lock);
	refresh_pending = true;
	pthread_cond_signal(&refresh_wanted);
	pthread_mutex_unlock(&refresh_lock);
}

static MYSQL_SYSVAR_BOOL(enforce, enforce, PLUGIN_VAR_OPCMDARG | PLUGIN_VAR_READONLY,
			 "Refuse to start when innodb_doublewrite is OFF where InnoDB's page writes are not proved "
			 "untorn; needs the plugin loaded as FORCE_PLUS_PERMANENT", NULL, NULL, 0);
static MYSQL_SYSVAR_BOOL(refresh, refresh, PLUGIN_VAR_OPCMDARG | PLUGIN_VAR_NOCMDOPT,
			 "SET GLOBAL lcloud_refresh=ON probes the storage again in the background; the lcloud_checks "
			 "status variable counts finished checks", NULL, refresh_update, 0);
static MYSQL_SYSVAR_UINT(probe_timeout, probe_timeout_s, PLUGIN_VAR_RQCMDARG | PLUGIN_VAR_READONLY,
			 "Seconds one probe may take (a frozen file system): then its answer is unknown", NULL, NULL,
			 10, 1, 3600, 0);

static struct st_mysql_sys_var *sys_vars[] = {
	MYSQL_SYSVAR(enforce),
	MYSQL_SYSVAR(refresh),
	MYSQL_SYSVAR(probe_timeout),
	NULL,
};

/* Status variables are copied under the lock: the refresh thread may be writing them. */
static int show_string(struct st_mysql_show_var *var, void *buff, const char *value)
{
	var->type = SHOW_CHAR;
	var->value = buff;
	snprintf(buff, SHOW_VAR_FUNC_BUFF_SIZE, "%s", value);
	return 0;
}

static int show_number(struct st_mysql_show_var *var, void *buff, unsigned long long value)
{
	var->type = SHOW_ULONGLONG;
	var->value = buff;
	*(unsigned long long *)buff = value;
	return 0;
}

#define SHOW_FIELD(name, body)                                                                                   \
	static int name(MYSQL_THD thd, struct st_mysql_show_var *var, void *buff, struct system_status_var *sv,  \
			enum enum_var_type scope)                                                                \
	{                                                                                                        \
		int r;                                                                                           \
		pthread_mutex_lock(&summary_lock);                                                               \
		r = body;                                                                                        \
		pthread_mutex_unlock(&summary_lock);                                                             \
		return r;                                                                                        \
	}
SHOW_FIELD(show_page_size, show_number(var, buff, summary.page_size))
SHOW_FIELD(show_max_untorn, show_number(var, buff, summary.max_untorn_bytes))
SHOW_FIELD(show_needed, show_string(var, buff, summary.doublewrite_needed))
SHOW_FIELD(show_io_path, show_string(var, buff, summary.io_path))
SHOW_FIELD(show_reason, show_string(var, buff, summary.reason))
SHOW_FIELD(show_checks, show_number(var, buff, summary.checks))

static struct st_mysql_show_var status_vars[] = {
	{ "lcloud_page_size", (char *)show_page_size, SHOW_SIMPLE_FUNC },
	{ "lcloud_max_untorn_page_write", (char *)show_max_untorn, SHOW_SIMPLE_FUNC },
	{ "lcloud_doublewrite_needed", (char *)show_needed, SHOW_SIMPLE_FUNC },
	{ "lcloud_io_path", (char *)show_io_path, SHOW_SIMPLE_FUNC },
	{ "lcloud_reason", (char *)show_reason, SHOW_SIMPLE_FUNC },
	{ "lcloud_checks", (char *)show_checks, SHOW_SIMPLE_FUNC },
	{ NULL, NULL, SHOW_UNDEF },
};

static int lcloud_plugin_init(void *p)
{
	md_read_settings(&settings);
	if (run_check())
		return 1; /* with FORCE_PLUS_PERMANENT the server does not start */
	stopping = false;
	refresher_started = pthread_create(&refresher, NULL, refresh_main, NULL) == 0;
	if (!refresher_started)
		log_line(MD_LOG_WARNING, "lcloud: no refresh thread: SET GLOBAL lcloud_refresh will not probe again");
	return 0;
}

static int lcloud_plugin_deinit(void *p)
{
	if (refresher_started) {
		pthread_mutex_lock(&refresh_lock);
		stopping = true;
		pthread_cond_signal(&refresh_wanted);
		pthread_mutex_unlock(&refresh_lock);
		/* a probe waits at most lcloud_probe_timeout seconds, so this join is bounded */
		pthread_join(refresher, NULL);
		refresher_started = false;
	}
	return 0;
}

static void ignore_event(MYSQL_THD thd, unsigned int event_class, const void *event)
{
}

static struct st_mysql_audit lcloud_descriptor = {
	MYSQL_AUDIT_INTERFACE_VERSION, NULL, ignore_event, { MYSQL_AUDIT_CONNECTION_CLASSMASK },
};

maria_declare_plugin(lcloud)
{
	MYSQL_AUDIT_PLUGIN,
	&lcloud_descriptor,
	"lcloud",
	"liblcloud",
	"Are InnoDB's page writes untorn on this storage? liblcloud's answer for innodb_doublewrite",
	PLUGIN_LICENSE_GPL,
	lcloud_plugin_init,
	lcloud_plugin_deinit,
	0x0100,
	status_vars,
	sys_vars,
	"1.0",
	MariaDB_PLUGIN_MATURITY_STABLE
}
maria_declare_plugin_end;
