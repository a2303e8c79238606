/* The configuration files of every program: value parsers, and a loader
 * driven by a table of keys.
 *
 * The value parsers only say what is wrong with the value; the loader
 * knows the file, the line and the key, and prefixes them. Values are
 * taken exactly as inih hands them over (already stripped of surrounding
 * blanks), so any blank left inside a number is an error rather than
 * something to skip.
 *
 * Every error of the loader names the file and the line: "PATH:LINE:
 * what is wrong". Debian's inih is built without line numbers in its
 * handler, so the file is fed to ini_parse_stream through a reader of
 * our own that counts lines; the handler runs right after the reader
 * returned the line it is about, so the count is that line's number. The
 * reader also strips the leading blanks of each line: inih would
 * otherwise take an indented "key = value" as the continuation of the
 * value above it and silently overwrite that value. inih's buffer is
 * fixed when Debian builds it (INI_MAX_LINE, 200 bytes), shorter than
 * the paths a deep directory gives: the reader hands inih a longer
 * "key = value" line as "key = " and a mark, keeps the value, and the
 * handler puts it back; longer comments go as an empty comment. Lines
 * beyond CONF_LINE_MAX, and long lines of any other kind, are refused
 * with their number rather than cut (and a path with them) short.
 *
 * An unknown section or key, a key given twice and a missing required
 * key are errors: a typo in a daemon's configuration should stop it at
 * start, not be discovered in production. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lib/conf.h"
#include "lib/log.h"
#include "lib/duration.h"

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

#define CONF_SEC 1000ULL
#define CONF_MIN (60 * CONF_SEC)
#define CONF_HOUR (60 * CONF_MIN)

/* ms as a file would write it: "250ms", "2s", "10m", "1h". */
static const char *
conf_ms_str(uint64_t ms, char *buf, size_t len)
{
	unsigned long long v = ms;

	if (v % CONF_SEC != 0)
		snprintf(buf, len, "%llums", v);
	else if (v != 0 && v % CONF_HOUR == 0)
		snprintf(buf, len, "%lluh", v / CONF_HOUR);
	else if (v != 0 && v % CONF_MIN == 0)
		snprintf(buf, len, "%llum", v / CONF_MIN);
	else
		snprintf(buf, len, "%llus", v / CONF_SEC);
	return buf;
}

int
conf_parse_duration_ms(const char *s, uint64_t min_ms, uint64_t max_ms,
    uint64_t *out, struct cerr *err)
{
	char lo[32], hi[32];
	const char *end;
	size_t n = strspn(s, "0123456789");
	uint64_t v, secs;

	if (n > 0 && s[n] == '\0')
		return cerr_set(err, ERR_INVALID,
		    "'%.64s' needs a unit (ms, s, m or h)", s);
	if (n > 0 && strcmp(s + n, "ms") == 0) {
		if (conf_digits(s, &v, &end) == -1)
			goto range;
	} else {
		if (duration_parse(s, &secs) == -1) {
			if (errno == ERANGE)
				goto range;
			return cerr_set(err, ERR_INVALID,
			    "'%.64s' is not a duration (e.g. 500ms, 2s, 10m)",
			    s);
		}
		v = secs * CONF_SEC;	/* DURATION_MAX_S: no overflow */
	}
	if (v < min_ms || v > max_ms)
		goto range;
	*out = v;
	return 0;

range:
	return cerr_set(err, ERR_INVALID, "%.64s out of range %s..%s", s,
	    conf_ms_str(min_ms, lo, sizeof(lo)),
	    conf_ms_str(max_ms, hi, sizeof(hi)));
}

int
conf_abs_path(const char *dir, const char *value, char **out,
    struct cerr *err)
{
	char *path;

	if (value[0] == '\0')
		return cerr_set(err, ERR_INVALID, "empty path");
	if (value[0] == '/')
		path = strdup(value);
	else if (asprintf(&path, "%s%s%s", dir,
	    dir[strlen(dir) - 1] == '/' ? "" : "/", value) == -1)
		path = NULL;
	if (path == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	*out = path;
	return 0;
}

/* ---- setters for key tables ---- */

/* Store v in an unsigned field of size bytes; v fits, the key's bounds
 * say so. */
static int
conf_store_uint(void *field, size_t size, uint64_t v, struct cerr *err)
{
	switch (size) {
	case sizeof(uint8_t):
		*(uint8_t *)field = (uint8_t)v;
		break;
	case sizeof(uint16_t):
		*(uint16_t *)field = (uint16_t)v;
		break;
	case sizeof(uint32_t):
		*(uint32_t *)field = (uint32_t)v;
		break;
	case sizeof(uint64_t):
		*(uint64_t *)field = v;
		break;
	default:
		return cerr_set(err, ERR_INTERNAL, "field of %zu bytes", size);
	}
	return 0;
}

int
conf_key_path(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	char **dst = conf_field(c, k);
	char *path;

	if (conf_abs_path(c->dir, value, &path, err) == -1)
		return -1;
	free(*dst);
	*dst = path;
	return 0;
}

int
conf_key_uint(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	uint64_t v;

	if (conf_parse_uint(value, k->min, k->max, &v, err) == -1)
		return -1;
	return conf_store_uint(conf_field(c, k), k->size, v, err);
}

int
conf_key_size(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	uint64_t v;

	if (conf_parse_size(value, k->min, k->max, &v, err) == -1)
		return -1;
	return conf_store_uint(conf_field(c, k), k->size, v, err);
}

int
conf_key_bool(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	return conf_parse_bool(value, conf_field(c, k), err);
}

int
conf_key_log_level(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	if (log_level_parse(value, (int *)conf_field(c, k)) == -1)
		return cerr_set(err, ERR_INVALID, "'%.32s' is not a log level "
		    "(debug, info, warning or error)", value);
	return 0;
}

int
conf_key_ms(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	return conf_parse_duration_ms(value, k->min, k->max,
	    (uint64_t *)conf_field(c, k), err);
}

/* ---- the file ---- */

struct conf_parse {
	const struct conf_key *keys;
	size_t nkeys;
	struct conf_ctx ctx;
	FILE *fp;
	char *buf;		/* getline's buffer */
	size_t bufsz;
	int line;		/* of the line last handed to inih */
	int err_line;		/* first error found by us; 0: none */
	bool stop;		/* the reader found a line it cannot pass */
	struct cerr err;
	int *seen;		/* line where each key was set; 0: not set */
	char *long_value;	/* the value of a line too long for inih */
	int (*on_section)(const struct conf_ctx *, const char *,
	    struct cerr *);
};

/* What inih gets for the value of a line too long for it. */
#define CONF_LONG_MARK "\001long"
#define CONF_LINE_MAX 8192

/* Record the first error we find, with the line it is on. */
static void __attribute__((format(printf, 2, 3)))
conf_fail(struct conf_parse *p, const char *fmt, ...)
{
	va_list ap;

	if (p->err_line != 0)
		return;
	p->err_line = p->line;
	p->err.code = ERR_INVALID;
	va_start(ap, fmt);
	vsnprintf(p->err.text, sizeof(p->err.text), fmt, ap);
	va_end(ap);
}

/* pat ends with tail ("*" or " *"): s has pat's head and more. */
static bool
conf_match(const char *pat, const char *s, const char *tail)
{
	size_t n = strlen(pat), t = strlen(tail);

	if (n >= t && strcmp(pat + n - t, tail) == 0)
		return strncmp(s, pat, n - 1) == 0 && s[n - 1] != '\0';
	return strcmp(pat, s) == 0;
}

static bool
conf_section_is_pattern(const char *pat)
{
	size_t n = strlen(pat);

	return n >= 2 && strcmp(pat + n - 2, " *") == 0;
}

/* A section header was read: keys of patterned sections start afresh,
 * and the caller's callback sees it. */
static void
conf_section_start(struct conf_parse *p, const char *line)
{
	const char *end = strchr(line + 1, ']');
	char name[256];
	struct conf_ctx ctx = p->ctx;
	struct cerr verr;
	size_t i;

	if (end == NULL)
		return;	/* inih reports the syntax error */
	if ((size_t)(end - line - 1) >= sizeof(name)) {
		conf_fail(p, "a section name is at most %zu bytes",
		    sizeof(name) - 1);
		return;
	}
	memcpy(name, line + 1, (size_t)(end - line - 1));
	name[end - line - 1] = '\0';
	for (i = 0; i < p->nkeys; i++)
		if (conf_section_is_pattern(p->keys[i].section))
			p->seen[i] = 0;
	if (p->on_section == NULL || p->err_line != 0)
		return;
	ctx.section = name;
	ctx.line = p->line;
	cerr_clear(&verr);
	if (p->on_section(&ctx, name, &verr) == -1) {
		conf_fail(p, "%s", verr.text);
		p->err.code = verr.code;
	}
}

static int
conf_handler(void *user, const char *section, const char *name,
    const char *value)
{
	struct conf_parse *p = user;
	const struct conf_key *k;
	struct cerr verr;
	bool known_section = false;
	size_t i;

	if (p->long_value != NULL && strcmp(value, CONF_LONG_MARK) == 0)
		value = p->long_value;

	/* Only the first error is reported; inih goes on parsing. */
	if (p->err_line != 0)
		return 1;
	for (i = 0; i < p->nkeys; i++) {
		if (!conf_match(p->keys[i].section, section, " *"))
			continue;
		known_section = true;
		if (conf_match(p->keys[i].name, name, "*"))
			break;
	}
	if (i == p->nkeys) {
		if (section[0] == '\0')
			conf_fail(p, "key '%.64s' is outside any section",
			    name);
		else if (!known_section)
			conf_fail(p, "unknown section [%.64s]", section);
		else
			conf_fail(p, "unknown key '%.64s' in [%.64s]", name,
			    section);
		return 0;
	}
	k = &p->keys[i];
	if (p->seen[i] != 0 && !k->repeatable) {
		conf_fail(p, "'%s' given twice in [%s] (first on line %d)",
		    name, section, p->seen[i]);
		return 0;
	}
	if (p->seen[i] == 0)
		p->seen[i] = p->line;
	cerr_clear(&verr);
	p->ctx.section = section;
	p->ctx.name = name;
	p->ctx.line = p->line;
	if (k->set(&p->ctx, k, value, &verr) == -1) {
		conf_fail(p, "%s: %s", name, verr.text);
		p->err.code = verr.code;
		return 0;
	}
	return 1;
}

/* A line longer than inih's buffer (num bytes): hand it an empty
 * comment for a comment, or "key = MARK" for "key = value" with the
 * value kept in p->long_value (blanks and an inline "; comment" taken
 * off, as inih does). NULL for anything else. */
static char *
conf_long_line(struct conf_parse *p, char *str, int num, char *line,
    size_t len)
{
	char *eq, *v, *end, *c;
	size_t klen;

	if (line[0] == ';' || line[0] == '#') {
		snprintf(str, (size_t)num, ";\n");
		return str;
	}
	if (len > CONF_LINE_MAX || line[0] == '[' ||
	    (eq = memchr(line, '=', len)) == NULL)
		return NULL;
	klen = (size_t)(eq - line);
	if (klen + sizeof(CONF_LONG_MARK) + 4 > (size_t)num)
		return NULL;
	v = eq + 1;
	end = line + len;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	for (c = v; c < end; c++)
		if (*c == ';' && c > v && (c[-1] == ' ' || c[-1] == '\t')) {
			end = c;
			break;
		}
	while (end > v && (end[-1] == '\n' || end[-1] == '\r' ||
	    end[-1] == ' ' || end[-1] == '\t'))
		end--;
	free(p->long_value);
	if ((p->long_value = strndup(v, (size_t)(end - v))) == NULL)
		return NULL;
	snprintf(str, (size_t)num, "%.*s= %s\n", (int)klen, line,
	    CONF_LONG_MARK);
	return str;
}

/* fgets-like reader for ini_parse_stream; see the comment at the top. */
static char *
conf_reader(char *str, int num, void *stream)
{
	struct conf_parse *p = stream;
	ssize_t n;
	size_t len;
	char *start;

	if (p->stop)
		return NULL;
	if ((n = getline(&p->buf, &p->bufsz, p->fp)) == -1)
		return NULL;
	p->line++;
	start = p->buf;
	while (*start == ' ' || *start == '\t')
		start++;
	len = (size_t)n - (size_t)(start - p->buf);
	if (num < 2 || len > (size_t)num - 1) {
		if (num > 32 && conf_long_line(p, str, num, start, len) != NULL)
			return str;
		/* inih would cut the line and read its tail as a line of its
		 * own; stop here, reporting the line. */
		conf_fail(p, "line too long (at most %d characters, or %d for "
		    "key = value)", num - 3, CONF_LINE_MAX);
		p->stop = true;
		return NULL;
	}
	memcpy(str, start, len);
	str[len] = '\0';
	if (str[0] == '[')
		conf_section_start(p, str);
	return str;
}

/* The absolute directory of path, for resolving relative paths in it. */
static char *
conf_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *cwd, *dir;
	int rc;

	if (slash == path)
		return strdup("/");
	if (path[0] == '/')
		return strndup(path, (size_t)(slash - path));
	if ((cwd = getcwd(NULL, 0)) == NULL)
		return NULL;
	/* "cohortd.conf" and "./cohortd.conf" both live in the cwd. */
	if (slash == NULL || (slash == path + 1 && path[0] == '.'))
		return cwd;
	rc = asprintf(&dir, "%s/%.*s", cwd, (int)(slash - path), path);
	free(cwd);
	return rc == -1 ? NULL : dir;
}

/* Everything but opening the file and finding its directory. */
static int
conf_parse_file(struct conf_parse *p, const char *path, struct cerr *err)
{
	size_t i;
	int rc, saved;

	rc = ini_parse_stream(conf_reader, p, conf_handler, p);
	if (ferror(p->fp)) {
		saved = errno;
		return cerr_set(err, ERR_INVALID, "%s: cannot read: %s", path,
		    strerror(saved));
	}
	if (rc == -2)
		return cerr_set(err, ERR_INTERNAL, "%s: out of memory", path);
	/* inih's count and ours agree, since our reader hands it one line
	 * per call; an error it found on its own (no '=', no ']') has no
	 * text of ours, and may come before the first one we found. */
	if (rc > 0 && (p->err_line == 0 || rc < p->err_line))
		return cerr_set(err, ERR_INVALID,
		    "%s:%d: syntax error: expected [section] or key = value",
		    path, rc);
	if (p->err_line != 0)
		return cerr_set(err, p->err.code, "%s:%d: %s", path,
		    p->err_line, p->err.text);
	for (i = 0; i < p->nkeys; i++) {
		if (p->keys[i].required && p->seen[i] == 0)
			return cerr_set(err, ERR_INVALID,
			    "%s: missing '%s' in [%s]", path, p->keys[i].name,
			    p->keys[i].section);
	}
	return 0;
}

int
conf_load(const char *path, const struct conf_key *keys, size_t nkeys,
    void *cfg, int *seen, struct cerr *err)
{
	return conf_load_sections(path, keys, nkeys, cfg, seen, NULL, err);
}

int
conf_load_sections(const char *path, const struct conf_key *keys,
    size_t nkeys, void *cfg, int *seen,
    int (*on_section)(const struct conf_ctx *c, const char *section,
    struct cerr *err), struct cerr *err)
{
	struct conf_parse p;
	char *dir;
	int rc, saved;

	memset(&p, 0, sizeof(p));
	p.on_section = on_section;
	p.keys = keys;
	p.nkeys = nkeys;
	p.ctx.cfg = cfg;
	cerr_clear(&p.err);
	if ((p.seen = calloc(nkeys + 1, sizeof(*p.seen))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "%s: out of memory", path);
	if ((p.fp = fopen(path, "r")) == NULL) {
		saved = errno;
		free(p.seen);
		return cerr_set(err, ERR_INVALID, "%s: cannot open: %s", path,
		    strerror(saved));
	}
	if ((dir = conf_dir_of(path)) == NULL) {
		saved = errno;
		fclose(p.fp);
		free(p.seen);
		return cerr_set(err, ERR_INTERNAL, "%s: %s", path,
		    strerror(saved));
	}
	p.ctx.dir = dir;

	rc = conf_parse_file(&p, path, err);
	if (rc == 0) {
		if (seen != NULL)
			memcpy(seen, p.seen, nkeys * sizeof(*seen));
		cerr_clear(err);
	}
	free(p.buf);
	free(p.long_value);
	free(dir);
	free(p.seen);
	fclose(p.fp);
	return rc;
}
