/* Durations as users type them for --time and --hang-timeout, and as the
 * configuration files write them. Two families are accepted:
 *
 *   one number and one unit     "90s" "30m" "2h" "3d"
 *   Slurm's --time forms        "MM" "MM:SS" "HH:MM:SS"
 *                               "D-HH" "D-HH:MM" "D-HH:MM:SS"
 *
 * A bare number is minutes, as in Slurm, so a script written for sbatch
 * means the same here. The leading field may be as large as the total
 * allows ("90:00" is ninety minutes); the fields after it are bounded
 * (HH < 24 after a day count, MM and SS < 60) because "1:75" is far more
 * likely a typo than a wish. Nothing else is accepted: no signs, no
 * spaces, no fractions, no "1h30m". */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/duration.h"

/* Read one run of decimal digits at *p into *v and advance *p. Returns 0,
 * -1 with EINVAL when there is no digit, ERANGE when the number cannot be
 * a duration at all. */
static int
duration_number(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t n = 0;
	bool big = false;

	if (*s < '0' || *s > '9') {
		errno = EINVAL;
		return -1;
	}
	for (; *s >= '0' && *s <= '9'; s++) {
		/* Keep scanning after an overflow so that "99999999999999999999x"
		 * is reported as malformed rather than as too large. */
		if (n > DURATION_MAX_S)
			big = true;
		else
			n = n * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*v = n;
	if (big || n > DURATION_MAX_S) {
		errno = ERANGE;
		return -1;
	}
	return 0;
}

/* Multiply and add with the result bounded by DURATION_MAX_S. */
static int
duration_add(uint64_t *total, uint64_t v, uint64_t unit)
{
	uint64_t t;

	if (__builtin_mul_overflow(v, unit, &t) ||
	    __builtin_add_overflow(*total, t, &t) || t > DURATION_MAX_S)
		return -1;
	*total = t;
	return 0;
}

int
duration_parse(const char *s, uint64_t *secs)
{
	static const uint64_t scale[] = { 60, 1 };
	const char *p = s;
	uint64_t f[4], total = 0, unit;
	size_t nf = 0, i;
	bool days = false, range = false;

	if (s == NULL || *s == '\0')
		goto invalid;

	/* Every number is read even after one is found too large, so that a
	 * malformed string is always EINVAL, whatever its size. */
	if (duration_number(&p, &f[nf]) == -1) {
		if (errno != ERANGE)
			goto invalid;
		range = true;
	}
	nf++;

	/* "90s" and friends: one number, one unit letter, nothing after. */
	if (p[0] != '\0' && p[1] == '\0' && strchr("smhd", p[0]) != NULL) {
		switch (p[0]) {
		case 's': unit = 1; break;
		case 'm': unit = 60; break;
		case 'h': unit = 3600; break;
		default: unit = 86400; break;
		}
		if (range || duration_add(&total, f[0], unit) == -1)
			goto toolarge;
		*secs = total;
		return 0;
	}

	if (*p == '-') {
		days = true;
		p++;
		if (duration_number(&p, &f[nf]) == -1) {
			if (errno != ERANGE)
				goto invalid;
			range = true;
		}
		nf++;
	}
	while (*p == ':') {
		/* Without a day count: MM, MM:SS, HH:MM:SS (three at most).
		 * With one: D-HH, D-HH:MM, D-HH:MM:SS (four in all). */
		if (nf == (days ? 4 : 3))
			goto invalid;
		p++;
		if (duration_number(&p, &f[nf]) == -1) {
			if (errno != ERANGE)
				goto invalid;
			range = true;
		}
		nf++;
	}
	if (*p != '\0')
		goto invalid;

	if (days) {
		/* D-HH[:MM[:SS]] */
		if (f[1] >= 24)
			goto invalid;
		for (i = 2; i < nf; i++)
			if (f[i] >= 60)
				goto invalid;
		if (range || duration_add(&total, f[0], 86400) == -1 ||
		    duration_add(&total, f[1], 3600) == -1)
			goto toolarge;
		for (i = 2; i < nf; i++)
			if (duration_add(&total, f[i], scale[i - 2]) == -1)
				goto toolarge;
	} else {
		/* MM, MM:SS or HH:MM:SS: every field but the first < 60. */
		for (i = 1; i < nf; i++)
			if (f[i] >= 60)
				goto invalid;
		if (range)
			goto toolarge;
		switch (nf) {
		case 1:
			if (duration_add(&total, f[0], 60) == -1)
				goto toolarge;
			break;
		case 2:
			if (duration_add(&total, f[0], 60) == -1 ||
			    duration_add(&total, f[1], 1) == -1)
				goto toolarge;
			break;
		default:
			if (duration_add(&total, f[0], 3600) == -1 ||
			    duration_add(&total, f[1], 60) == -1 ||
			    duration_add(&total, f[2], 1) == -1)
				goto toolarge;
			break;
		}
	}
	*secs = total;
	return 0;

toolarge:
	errno = ERANGE;
	return -1;
invalid:
	errno = EINVAL;
	return -1;
}

char *
duration_format(uint64_t secs, char *buf, size_t len)
{
	unsigned long long d = secs / 86400, h = secs % 86400 / 3600,
	    m = secs % 3600 / 60, s = secs % 60;

	if (len == 0)
		return buf;
	if (d > 0)
		snprintf(buf, len, "%llu-%02llu:%02llu:%02llu", d, h, m, s);
	else
		snprintf(buf, len, "%02llu:%02llu:%02llu", h, m, s);
	return buf;
}

/* "now+N[unit]": 0 with *at, -1 when malformed. */
static int
begin_relative(const char *s, time_t now, time_t *at)
{
	static const struct { const char *name; long mult; } units[] = {
		{ "", 1 }, { "s", 1 }, { "sec", 1 }, { "second", 1 },
		{ "seconds", 1 }, { "m", 60 }, { "min", 60 },
		{ "minute", 60 }, { "minutes", 60 }, { "h", 3600 },
		{ "hour", 3600 }, { "hours", 3600 }, { "d", 86400 },
		{ "day", 86400 }, { "days", 86400 }, { "w", 604800 },
		{ "week", 604800 }, { "weeks", 604800 },
	};
	unsigned long long n;
	char *end;
	size_t i;

	if (*s == '\0') {
		*at = now;
		return 0;
	}
	if (*s != '+' || s[1] < '0' || s[1] > '9')
		return -1;
	errno = 0;
	n = strtoull(s + 1, &end, 10);
	if (errno != 0 || n > DURATION_MAX_S)
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].name) == 0) {
			if (n * (unsigned long long)units[i].mult >
			    DURATION_MAX_S)
				return -1;
			*at = now + (time_t)(n * units[i].mult);
			return 0;
		}
	return -1;
}

/* The next time of day h:m:s from now (today, or tomorrow once it has
 * passed, as Slurm reads "16:00"); with day_offset the day given. */
static int
begin_clock(time_t now, int days, int h, int m, int sec, bool next,
    time_t *at)
{
	struct tm tm;

	if (localtime_r(&now, &tm) == NULL)
		return -1;
	tm.tm_mday += days;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	tm.tm_isdst = -1;
	if ((*at = mktime(&tm)) == (time_t)-1)
		return -1;
	if (next && *at <= now) {
		tm.tm_mday++;
		tm.tm_isdst = -1;
		if ((*at = mktime(&tm)) == (time_t)-1)
			return -1;
	}
	return 0;
}

/* "HH:MM[:SS]" into h, m, sec (end: what follows): 0 or -1. */
static int
begin_hms(const char *s, int *h, int *m, int *sec, const char **end)
{
	int n = 0;

	*sec = 0;
	if (sscanf(s, "%2d:%2d%n", h, m, &n) != 2 || n == 0)
		return -1;
	s += n;
	if (*s == ':') {
		n = 0;
		if (sscanf(s, ":%2d%n", sec, &n) != 1 || n == 0)
			return -1;
		s += n;
	}
	if (*h < 0 || *h > 23 || *m < 0 || *m > 59 || *sec < 0 || *sec > 60)
		return -1;
	*end = s;
	return 0;
}

int
duration_parse_begin(const char *s, time_t now, time_t *at)
{
	static const struct { const char *name; int h; } named[] = {
		{ "noon", 12 }, { "elevenses", 11 }, { "fika", 15 },
		{ "teatime", 16 },
	};
	struct tm tm;
	const char *end;
	int h, m, sec, n = 0;
	size_t i;

	if (s == NULL)
		goto bad;
	if (strncmp(s, "now", 3) == 0) {
		if (begin_relative(s + 3, now, at) == 0)
			return 0;
		goto bad;
	}
	if (strcmp(s, "today") == 0) {
		*at = now;
		return 0;
	}
	if (strcmp(s, "tomorrow") == 0 || strcmp(s, "midnight") == 0)
		return begin_clock(now, 1, 0, 0, 0, false, at) == 0 ? 0 : -1;
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (strcmp(s, named[i].name) == 0)
			return begin_clock(now, 0, named[i].h, 0, 0, true,
			    at) == 0 ? 0 : -1;
	if (begin_hms(s, &h, &m, &sec, &end) == 0 && *end == '\0')
		return begin_clock(now, 0, h, m, sec, true, at) == 0 ? 0 : -1;
	memset(&tm, 0, sizeof(tm));
	if (sscanf(s, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	    &n) != 3 || n != 10 || tm.tm_mon < 1 || tm.tm_mon > 12 ||
	    tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_year < 1970 ||
	    tm.tm_year > 2999)
		goto bad;
	s += n;
	if (*s == 'T') {
		if (begin_hms(s + 1, &h, &m, &sec, &end) == -1 || *end != '\0')
			goto bad;
		tm.tm_hour = h;
		tm.tm_min = m;
		tm.tm_sec = sec;
	} else if (*s != '\0')
		goto bad;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	tm.tm_isdst = -1;
	n = tm.tm_mday;
	/* mktime moves 02-31 to March: a day the month lacks is refused. */
	if ((*at = mktime(&tm)) == (time_t)-1 || tm.tm_mday != n)
		goto bad;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}
