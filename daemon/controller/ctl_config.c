/* cohortd's configuration file, read with inih.
 *
 * Relative paths in the file (database, port_file and the TLS files) are
 * taken relative to the directory that holds the configuration file, not
 * to the daemon's working directory, so that a cluster directory written
 * by cohort-local can be moved as a whole, and so that a daemon that
 * changes directory still finds its files. They are stored absolute.
 *
 * Every error names the file and the line: "PATH:LINE: what is wrong".
 * Debian's inih is built without line numbers in its handler, so the file
 * is fed to ini_parse_stream through a reader of our own that counts
 * lines; the handler runs right after the reader returned the line it is
 * about, so the count is that line's number. The reader also strips the
 * leading blanks of each line: inih would otherwise take an indented
 * "key = value" as the continuation of the value above it and silently
 * overwrite that value. It refuses lines longer than inih's buffer
 * instead of letting inih cut them (and a path with them) short.
 *
 * An unknown section or key, a key given twice and a missing required
 * key are errors: a typo in a daemon's configuration should stop it at
 * start, not be discovered in production. */
#include "daemon/controller/ctl_config.h"

#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The defaults live here rather than in lib/frame.h, which pulls in the
 * generated protobuf header. */
#define CTL_DEFAULT_LISTEN_HOST "127.0.0.1"
#define CTL_DEFAULT_LISTEN_PORT 7420
#define CTL_DEFAULT_MAX_FRAME (4u << 20)
#define CTL_MIN_MAX_FRAME (1u << 10)
#define CTL_MAX_MAX_FRAME (256u << 20)
#define CTL_DEFAULT_MAX_CONNECTIONS 1024
#define CTL_MAX_MAX_CONNECTIONS 1000000
#define CTL_DEFAULT_MAX_SCRIPT (1u << 20)
#define CTL_MIN_MAX_SCRIPT (1u << 10)
#define CTL_MAX_MAX_SCRIPT (64u << 20)

struct ctl_parse;

struct ctl_key {
	const char *section;
	const char *name;
	bool required;
	int (*set)(struct ctl_parse *, const struct ctl_key *, const char *,
	    struct cerr *);
	size_t off;		/* of the char * field, for paths */
};

struct ctl_parse {
	struct ctl_config *cfg;
	const char *dir;	/* absolute directory of the file */
	FILE *fp;
	char *buf;		/* getline's buffer */
	size_t bufsz;
	int line;		/* of the line last handed to inih */
	int err_line;		/* first error found by us; 0: none */
	bool stop;		/* the reader found a line it cannot pass */
	struct cerr err;
	int *seen;		/* line where each key was set; 0: not set */
};

static int ctl_set_listen(struct ctl_parse *, const struct ctl_key *,
    const char *, struct cerr *);
static int ctl_set_path(struct ctl_parse *, const struct ctl_key *,
    const char *, struct cerr *);
static int ctl_set_max_frame(struct ctl_parse *, const struct ctl_key *,
    const char *, struct cerr *);
static int ctl_set_max_connections(struct ctl_parse *,
    const struct ctl_key *, const char *, struct cerr *);
static int ctl_set_max_script(struct ctl_parse *, const struct ctl_key *,
    const char *, struct cerr *);
static int ctl_set_ms(struct ctl_parse *, const struct ctl_key *,
    const char *, struct cerr *);

#define MSKEY(sec, key, field)                                                 \
	{ sec, key, false, ctl_set_ms, offsetof(struct ctl_config, field) }

#define PATHKEY(sec, key, req)                                                 \
	{ sec, #key, req, ctl_set_path, offsetof(struct ctl_config, key) }

static const struct ctl_key ctl_keys[] = {
	{ "controller", "listen", false, ctl_set_listen, 0 },
	PATHKEY("controller", port_file, false),
	PATHKEY("controller", database, true),
	PATHKEY("controller", topology, false),
	MSKEY("controller", "node_timeout", node_timeout_ms),
	MSKEY("controller", "heartbeat_interval", heartbeat_ms),
	MSKEY("controller", "default_time_limit", default_time_limit_ms),
	PATHKEY("tls", ca, true),
	PATHKEY("tls", cert, true),
	PATHKEY("tls", key, true),
	{ "limits", "max_frame", false, ctl_set_max_frame, 0 },
	{ "limits", "max_connections", false, ctl_set_max_connections, 0 },
	{ "limits", "max_script", false, ctl_set_max_script, 0 },
};
#define CTL_NKEYS (sizeof(ctl_keys) / sizeof(ctl_keys[0]))

static void
ctl_config_defaults(struct ctl_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->listen_host, sizeof(cfg->listen_host), "%s",
	    CTL_DEFAULT_LISTEN_HOST);
	cfg->listen_port = CTL_DEFAULT_LISTEN_PORT;
	cfg->max_frame = CTL_DEFAULT_MAX_FRAME;
	cfg->max_connections = CTL_DEFAULT_MAX_CONNECTIONS;
	cfg->max_script = CTL_DEFAULT_MAX_SCRIPT;
	cfg->node_timeout_ms = 10000;
	cfg->heartbeat_ms = 2000;
	cfg->default_time_limit_ms = 24ULL * 3600 * 1000;
}

void
ctl_config_clear(struct ctl_config *cfg)
{
	if (cfg == NULL)
		return;
	free(cfg->port_file);
	free(cfg->database);
	free(cfg->ca);
	free(cfg->cert);
	free(cfg->key);
	free(cfg->topology);
	ctl_config_defaults(cfg);
}

static int
ctl_set_listen(struct ctl_parse *p, const struct ctl_key *k,
    const char *value, struct cerr *err)
{
	/* Port 0 asks the kernel for a free port; tests and cohort-local
	 * read the bound one back from port_file. */
	return conf_parse_hostport(value, p->cfg->listen_host,
	    sizeof(p->cfg->listen_host), &p->cfg->listen_port, true, err);
}

static int
ctl_set_path(struct ctl_parse *p, const struct ctl_key *k,
    const char *value, struct cerr *err)
{
	char **dst = (char **)(void *)((char *)p->cfg + k->off);
	char *path;

	if (value[0] == '\0')
		return cerr_set(err, ERR_INVALID, "empty path");
	if (value[0] == '/')
		path = strdup(value);
	else if (asprintf(&path, "%s%s%s", p->dir,
	    p->dir[strlen(p->dir) - 1] == '/' ? "" : "/", value) == -1)
		path = NULL;
	if (path == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	free(*dst);
	*dst = path;
	return 0;
}

static int
ctl_set_max_frame(struct ctl_parse *p, const struct ctl_key *k,
    const char *value, struct cerr *err)
{
	uint64_t v;

	if (conf_parse_size(value, CTL_MIN_MAX_FRAME, CTL_MAX_MAX_FRAME, &v,
	    err) == -1)
		return -1;
	p->cfg->max_frame = (size_t)v;
	return 0;
}

static int
ctl_set_max_connections(struct ctl_parse *p, const struct ctl_key *k,
    const char *value, struct cerr *err)
{
	uint64_t v;

	if (conf_parse_uint(value, 1, CTL_MAX_MAX_CONNECTIONS, &v, err) == -1)
		return -1;
	p->cfg->max_connections = (unsigned)v;
	return 0;
}

static int
ctl_set_max_script(struct ctl_parse *p, const struct ctl_key *k,
    const char *value, struct cerr *err)
{
	uint64_t v;

	if (conf_parse_size(value, CTL_MIN_MAX_SCRIPT, CTL_MAX_MAX_SCRIPT, &v,
	    err) == -1)
		return -1;
	p->cfg->max_script = (size_t)v;
	return 0;
}

/* A duration with a sub-second form allowed ("500ms") for the timers
 * tests shorten, stored in milliseconds. */
static int
ctl_set_ms(struct ctl_parse *p, const struct ctl_key *k, const char *value,
    struct cerr *err)
{
	uint64_t *dst = (uint64_t *)(void *)((char *)p->cfg + k->off);
	uint64_t v, s;
	size_t len = strlen(value);

	if (len > 2 && strcmp(value + len - 2, "ms") == 0) {
		char num[32];

		if (len - 2 >= sizeof(num))
			return cerr_set(err, ERR_INVALID, "invalid duration");
		memcpy(num, value, len - 2);
		num[len - 2] = '\0';
		if (conf_parse_uint(num, 100, 366ULL * 86400 * 1000, &v,
		    err) == -1)
			return -1;
		*dst = v;
		return 0;
	}
	if (conf_parse_duration(value, 1, 366ULL * 86400, &s, err) == -1)
		return -1;
	*dst = s * 1000;
	return 0;
}

/* Record the first error we find, with the line it is on. */
static void __attribute__((format(printf, 2, 3)))
ctl_fail(struct ctl_parse *p, const char *fmt, ...)
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

static int
ctl_handler(void *user, const char *section, const char *name,
    const char *value)
{
	struct ctl_parse *p = user;
	struct cerr verr;
	bool known_section = false;
	size_t i;

	/* Only the first error is reported; inih goes on parsing. */
	if (p->err_line != 0)
		return 1;
	for (i = 0; i < CTL_NKEYS; i++) {
		if (strcmp(section, ctl_keys[i].section) != 0)
			continue;
		known_section = true;
		if (strcmp(name, ctl_keys[i].name) == 0)
			break;
	}
	if (i == CTL_NKEYS) {
		if (section[0] == '\0')
			ctl_fail(p, "key '%.64s' is outside any section",
			    name);
		else if (!known_section)
			ctl_fail(p, "unknown section [%.64s]", section);
		else
			ctl_fail(p, "unknown key '%.64s' in [%.64s]", name,
			    section);
		return 0;
	}
	if (p->seen[i] != 0) {
		ctl_fail(p, "'%s' given twice in [%s] (first on line %d)",
		    name, section, p->seen[i]);
		return 0;
	}
	p->seen[i] = p->line;
	cerr_clear(&verr);
	if (ctl_keys[i].set(p, &ctl_keys[i], value, &verr) == -1) {
		ctl_fail(p, "%s: %s", name, verr.text);
		p->err.code = verr.code;
		return 0;
	}
	return 1;
}

/* fgets-like reader for ini_parse_stream; see the comment at the top. */
static char *
ctl_reader(char *str, int num, void *stream)
{
	struct ctl_parse *p = stream;
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
		/* inih would cut the line and read its tail as a line of its
		 * own; stop here, reporting the line. */
		ctl_fail(p, "line too long (at most %d characters)", num - 3);
		p->stop = true;
		return NULL;
	}
	memcpy(str, start, len);
	str[len] = '\0';
	return str;
}

/* The absolute directory of path, for resolving relative paths in it. */
static char *
ctl_dir_of(const char *path)
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

int
ctl_config_load(struct ctl_config *cfg, const char *path, struct cerr *err)
{
	struct ctl_parse p;
	int seen[CTL_NKEYS] = { 0 };
	char *dir = NULL;
	size_t i;
	int rc, saved;

	ctl_config_defaults(cfg);
	memset(&p, 0, sizeof(p));
	p.cfg = cfg;
	p.seen = seen;
	cerr_clear(&p.err);

	if ((p.fp = fopen(path, "r")) == NULL) {
		saved = errno;
		return cerr_set(err, ERR_INVALID, "%s: cannot open: %s", path,
		    strerror(saved));
	}
	if ((dir = ctl_dir_of(path)) == NULL) {
		saved = errno;
		fclose(p.fp);
		return cerr_set(err, ERR_INTERNAL, "%s: %s", path,
		    strerror(saved));
	}
	p.dir = dir;

	rc = ini_parse_stream(ctl_reader, &p, ctl_handler, &p);
	if (ferror(p.fp)) {
		saved = errno;
		cerr_set(err, ERR_INVALID, "%s: cannot read: %s", path,
		    strerror(saved));
		goto fail;
	}
	if (rc == -2) {
		cerr_set(err, ERR_INTERNAL, "%s: out of memory", path);
		goto fail;
	}
	/* inih's count and ours agree, since our reader hands it one line
	 * per call; an error it found on its own (no '=', no ']') has no
	 * text of ours, and may come before the first one we found. */
	if (rc > 0 && (p.err_line == 0 || rc < p.err_line)) {
		cerr_set(err, ERR_INVALID,
		    "%s:%d: syntax error: expected [section] or key = value",
		    path, rc);
		goto fail;
	}
	if (p.err_line != 0) {
		cerr_set(err, p.err.code, "%s:%d: %s", path, p.err_line,
		    p.err.text);
		goto fail;
	}
	for (i = 0; i < CTL_NKEYS; i++) {
		if (ctl_keys[i].required && seen[i] == 0) {
			cerr_set(err, ERR_INVALID, "%s: missing '%s' in [%s]",
			    path, ctl_keys[i].name, ctl_keys[i].section);
			goto fail;
		}
	}
	free(p.buf);
	free(dir);
	fclose(p.fp);
	cerr_clear(err);
	return 0;

fail:
	free(p.buf);
	free(dir);
	fclose(p.fp);
	ctl_config_clear(cfg);
	return -1;
}
