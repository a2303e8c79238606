/* Value parsers shared by the configuration files of every program. They
 * only say what is wrong with the value; the caller knows the file, the
 * line and the key, and prefixes them. Values are taken exactly as inih
 * hands them over (already stripped of surrounding blanks), so any blank
 * left inside a number is an error rather than something to skip. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "duration.h"

/* Digits only: strtoull would accept "+5", " 5" and "-1" (as a huge
 * number), none of which belongs in a configuration file. Returns 0, or
 * -1 with errno EINVAL (not a number) or ERANGE (above UINT64_MAX). The
 * digits end at *end. */
static int
conf_digits(const char *s, uint64_t *out, const char **end)
{
	uint64_t v = 0;
	int range = 0;

	if (*s < '0' || *s > '9') {
		errno = EINVAL;
		return -1;
	}
	for (; *s >= '0' && *s <= '9'; s++) {
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*s - '0'), &v))
			range = 1;
	}
	*end = s;
	*out = v;
	if (range) {
		errno = ERANGE;
		return -1;
	}
	return 0;
}

/* Write a size with the largest suffix that divides it exactly, so that
 * error messages speak the units the file uses ("1K..256M"). */
static const char *
conf_size_str(uint64_t v, char *buf, size_t len)
{
	static const char suffix[] = "GMK";
	int shift, i;

	for (i = 0, shift = 30; shift > 0; i++, shift -= 10) {
		if (v != 0 && v % (1ULL << shift) == 0) {
			snprintf(buf, len, "%llu%c",
			    (unsigned long long)(v >> shift), suffix[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

int
conf_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out,
    struct cerr *err)
{
	const char *end;
	uint64_t v;
	int rc;

	rc = conf_digits(s, &v, &end);
	if ((rc == -1 && errno == EINVAL) || *end != '\0')
		return cerr_set(err, ERR_INVALID, "'%.64s' is not a number", s);
	if (rc == -1 || v < min || v > max)
		return cerr_set(err, ERR_INVALID, "%.64s out of range %llu..%llu",
		    s, (unsigned long long)min, (unsigned long long)max);
	*out = v;
	return 0;
}

int
conf_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out,
    struct cerr *err)
{
	char lo[32], hi[32];
	const char *end;
	uint64_t v, mult = 1;
	int rc;

	rc = conf_digits(s, &v, &end);
	if (rc == -1 && errno == EINVAL)
		goto invalid;
	switch (*end) {
	case '\0':
		break;
	case 'K': case 'k':
		mult = 1ULL << 10;
		end++;
		break;
	case 'M': case 'm':
		mult = 1ULL << 20;
		end++;
		break;
	case 'G': case 'g':
		mult = 1ULL << 30;
		end++;
		break;
	default:
		goto invalid;
	}
	if (*end != '\0')
		goto invalid;
	if (rc == -1 || __builtin_mul_overflow(v, mult, &v) || v < min ||
	    v > max)
		return cerr_set(err, ERR_INVALID, "%.64s out of range %s..%s",
		    s, conf_size_str(min, lo, sizeof(lo)),
		    conf_size_str(max, hi, sizeof(hi)));
	*out = v;
	return 0;

invalid:
	return cerr_set(err, ERR_INVALID,
	    "'%.64s' is not a size (a number with an optional K, M or G)", s);
}

int
conf_parse_bool(const char *s, bool *out, struct cerr *err)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return cerr_set(err, ERR_INVALID,
	    "'%.64s' is not a boolean (yes/no, true/false, on/off, 1/0)", s);
}

int
conf_parse_duration(const char *s, uint64_t min, uint64_t max,
    uint64_t *out, struct cerr *err)
{
	char lo[32], hi[32];
	uint64_t v;

	int rc;

	rc = duration_parse(s, &v);
	if (rc == -1 && errno != ERANGE)
		return cerr_set(err, ERR_INVALID,
		    "'%.64s' is not a duration (e.g. 90s, 30m, 2h, 1-00:00:00)",
		    s);
	if (rc == -1 || v < min || v > max)
		return cerr_set(err, ERR_INVALID, "%.64s out of range %s..%s",
		    s, duration_format(min, lo, sizeof(lo)),
		    duration_format(max, hi, sizeof(hi)));
	*out = v;
	return 0;
}

int
conf_parse_hostport(const char *s, char *host, size_t hostlen,
    uint16_t *port, bool allow_zero, struct cerr *err)
{
	unsigned char v6[16];
	char tmp[CONF_HOST_MAX + 1];
	const char *h, *colon, *ps, *end;
	size_t hlen, i;
	uint64_t p;
	unsigned min = allow_zero ? 0 : 1;
	int rc;

	if (s[0] == '[') {
		/* "[::1]:7420": a colon inside an address needs brackets to
		 * tell it from the port's. */
		h = s + 1;
		if ((end = strchr(h, ']')) == NULL)
			return cerr_set(err, ERR_INVALID,
			    "'%.64s': missing ']' after the IPv6 address", s);
		hlen = (size_t)(end - h);
		if (end[1] != ':')
			return cerr_set(err, ERR_INVALID,
			    "'%.64s': missing port (expected [ADDRESS]:PORT)", s);
		colon = end + 1;
		if (hlen == 0)
			return cerr_set(err, ERR_INVALID,
			    "'%.64s': empty host", s);
		if (hlen >= sizeof(tmp))
			return cerr_set(err, ERR_INVALID,
			    "'%.64s...': host longer than %d characters", s,
			    CONF_HOST_MAX);
		memcpy(tmp, h, hlen);
		tmp[hlen] = '\0';
		if (inet_pton(AF_INET6, tmp, v6) != 1)
			return cerr_set(err, ERR_INVALID,
			    "'%.64s' is not an IPv6 address", tmp);
	} else {
		h = s;
		if ((colon = strrchr(s, ':')) == NULL)
			return cerr_set(err, ERR_INVALID,
			    "'%.64s': missing port (expected HOST:PORT)", s);
		hlen = (size_t)(colon - h);
		if (memchr(h, ':', hlen) != NULL)
			return cerr_set(err, ERR_INVALID,
			    "'%.64s': an IPv6 address needs brackets, as in "
			    "[::1]:7420", s);
		if (hlen == 0)
			return cerr_set(err, ERR_INVALID,
			    "'%.64s': empty host", s);
		if (hlen > CONF_HOST_MAX)
			return cerr_set(err, ERR_INVALID,
			    "'%.64s...': host longer than %d characters", s,
			    CONF_HOST_MAX);
		/* Host names and IPv4 addresses; anything else would only
		 * fail later, in getaddrinfo, with a vaguer message. */
		for (i = 0; i < hlen; i++) {
			unsigned char c = (unsigned char)h[i];

			if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			    (c >= '0' && c <= '9') || c == '.' || c == '-' ||
			    c == '_')
				continue;
			return cerr_set(err, ERR_INVALID,
			    "'%.*s' is not a host name or address",
			    (int)(hlen < 64 ? hlen : 64), h);
		}
	}
	if (hlen >= hostlen)
		return cerr_set(err, ERR_INVALID,
		    "'%.64s...': host longer than %zu characters", s,
		    hostlen == 0 ? 0 : hostlen - 1);

	ps = colon + 1;
	if (*ps == '\0')
		return cerr_set(err, ERR_INVALID, "'%.64s': missing port", s);
	rc = conf_digits(ps, &p, &end);
	if ((rc == -1 && errno == EINVAL) || *end != '\0')
		return cerr_set(err, ERR_INVALID, "port '%.32s' is not a number",
		    ps);
	if (rc == -1 || p < min || p > 65535)
		return cerr_set(err, ERR_INVALID, "port %.32s out of range %u..65535",
		    ps, min);

	memcpy(host, h, hlen);
	host[hlen] = '\0';
	*port = (uint16_t)p;
	return 0;
}

int
conf_set_str(char **dst, const char *s)
{
	char *copy;

	if ((copy = strdup(s)) == NULL)
		return -1;
	free(*dst);
	*dst = copy;
	return 0;
}
