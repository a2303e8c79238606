#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/log.h"

_Static_assert(LOG_LEVEL_ERROR == LOG_ERR && LOG_LEVEL_WARNING == LOG_WARNING &&
    LOG_LEVEL_INFO == LOG_INFO && LOG_LEVEL_DEBUG == LOG_DEBUG,
    "log levels are syslog's priorities");

static const char *log_ident = "cohort";
static bool log_foreground = true;
static int log_level = LOG_LEVEL_INFO;
/* stderr is systemd's journal stream (a unit running the daemon with
 * -f): lines go without our timestamp and name, which the journal adds,
 * and with the "<N>" priority prefix sd-daemon(3) describes, so that
 * journalctl -p warning finds the warnings. */
static bool log_journal;

static bool
log_stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (e == NULL || sscanf(e, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &st) == -1)
		return false;
	return (unsigned long long)st.st_dev == dev &&
	    (unsigned long long)st.st_ino == ino;
}

void
log_init(const char *ident, bool foreground, bool verbose)
{
	log_ident = ident;
	log_foreground = foreground;
	log_journal = foreground && log_stderr_is_journal();
	if (verbose)
		log_level = LOG_LEVEL_DEBUG;
	if (!foreground)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void
log_set_level(int level)
{
	log_level = level;
}

int
log_get_level(void)
{
	return log_level;
}

static const struct {
	const char *name;
	int level;
} log_levels[] = {
	{ "debug", LOG_LEVEL_DEBUG },
	{ "info", LOG_LEVEL_INFO },
	{ "warning", LOG_LEVEL_WARNING },
	{ "error", LOG_LEVEL_ERROR },
};

int
log_level_parse(const char *s, int *level)
{
	size_t i;

	for (i = 0; i < sizeof(log_levels) / sizeof(log_levels[0]); i++) {
		if (strcmp(s, log_levels[i].name) == 0) {
			*level = log_levels[i].level;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

const char *
log_level_name(int level)
{
	size_t i;

	for (i = 0; i < sizeof(log_levels) / sizeof(log_levels[0]); i++)
		if (log_levels[i].level == level)
			return log_levels[i].name;
	return "?";
}

/* The level as written in the foreground: nothing for info, so that
 * ordinary lines read as before; a word for the others, so that a test
 * (tests/integration/lib.sh) or a person can pick out what went wrong
 * with grep ': warning: ' / ': fatal: ' in a daemon's log. */
static const char *
log_level_tag(int pri)
{
	switch (pri) {
	case LOG_DEBUG:
		return "debug: ";
	case LOG_WARNING:
		return "warning: ";
	case LOG_ERR:
		return "error: ";
	case LOG_CRIT:
		return "fatal: ";
	default:
		return "";
	}
}

static void
log_vwrite(int pri, const char *fmt, va_list ap, const char *suffix)
{
	char msg[1024];
	struct timespec ts;
	struct tm tm;

	if (pri > log_level && pri != LOG_CRIT)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (!log_foreground) {
		if (suffix != NULL)
			syslog(pri, "%s: %s", msg, suffix);
		else
			syslog(pri, "%s", msg);
		return;
	}
	if (log_journal) {
		fprintf(stderr, "<%d>%s%s%s%s\n", pri, log_level_tag(pri), msg,
		    suffix != NULL ? ": " : "", suffix != NULL ? suffix : "");
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	fprintf(stderr, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s: %s%s%s%s\n",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, log_ident,
	    log_level_tag(pri), msg, suffix != NULL ? ": " : "",
	    suffix != NULL ? suffix : "");
}

#define LOG_BODY(pri, suffix)                                                  \
	do {                                                                   \
		va_list ap;                                                    \
		va_start(ap, fmt);                                             \
		log_vwrite((pri), fmt, ap, (suffix));                          \
		va_end(ap);                                                    \
	} while (0)

void
log_debug(const char *fmt, ...)
{
	if (log_level >= LOG_DEBUG)
		LOG_BODY(LOG_DEBUG, NULL);
}

void
log_info(const char *fmt, ...)
{
	LOG_BODY(LOG_INFO, NULL);
}

void
log_warn(const char *fmt, ...)
{
	const char *e = strerror(errno);

	LOG_BODY(LOG_WARNING, e);
}

void
log_warnx(const char *fmt, ...)
{
	LOG_BODY(LOG_WARNING, NULL);
}

void
log_errorx(const char *fmt, ...)
{
	LOG_BODY(LOG_ERR, NULL);
}

void
fatal(const char *fmt, ...)
{
	const char *e = strerror(errno);

	LOG_BODY(LOG_CRIT, e);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	LOG_BODY(LOG_CRIT, NULL);
	exit(1);
}
