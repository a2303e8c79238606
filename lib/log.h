/* Logging for the daemons: to stderr in the foreground, to syslog
 * otherwise. Messages name the job or node they are about. */
#ifndef COHORT_LOG_H
#define COHORT_LOG_H

#include <stdbool.h>

/* ident: program name; foreground: stderr instead of syslog;
 * verbose: also log debug messages. */
void log_init(const char *ident, bool foreground, bool verbose);
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* log_warn appends strerror(errno); log_warnx does not. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
