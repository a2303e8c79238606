/* Logging for the daemons: to stderr in the foreground (under systemd,
 * whose units run the daemons with -f, stderr is the journal: lines then
 * carry their priority as "<N>"), to syslog otherwise (which journald
 * reads too). Messages name the job or node they are
 * about. A level (log_level = debug|info|warning|error) drops the lines
 * below it; fatal lines always go out. */
#ifndef COHORT_LOG_H
#define COHORT_LOG_H

#include <stdbool.h>

/* Levels, as syslog(3) numbers them (smaller: more severe). */
#define LOG_LEVEL_ERROR		3	/* LOG_ERR */
#define LOG_LEVEL_WARNING	4	/* LOG_WARNING */
#define LOG_LEVEL_INFO		6	/* LOG_INFO */
#define LOG_LEVEL_DEBUG		7	/* LOG_DEBUG */

/* ident: program name; foreground: stderr instead of syslog;
 * verbose: also log debug messages (the level becomes debug). */
void log_init(const char *ident, bool foreground, bool verbose);
/* Lines below level are dropped from now on. */
void log_set_level(int level);
int log_get_level(void);
/* "debug", "info", "warning" or "error" → *level: 0, or -1 (EINVAL). */
int log_level_parse(const char *s, int *level);
/* The word for a level ("info"). */
const char *log_level_name(int level);

void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* log_warn appends strerror(errno); log_warnx does not. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An error the daemon survives (shown at every level). */
void log_errorx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
