/* cohort-agent's configuration file, read with inih.
 *
 * The file is read the way cohortd's is (daemon/controller/ctl_config.c):
 * a table of keys, each with a setter; every error names the file and
 * the line; relative paths are taken relative to the file's directory
 * and stored absolute; unknown sections and keys, keys given twice and
 * missing required keys are errors. Debian's inih has no line numbers
 * in its handler, so the file goes to ini_parse_stream through a reader
 * of ours that counts lines (and strips leading blanks, so that inih
 * does not take an indented line for the continuation of the value
 * above it, and refuses lines longer than inih's buffer). The reader,
 * the handler and the path helpers repeat ctl_config.c's; they are
 * written against the key table only, ready to move to lib/conf.c.
 *
 * Durations here need a unit ("2s", "500ms", "1m", or Slurm's "MM:SS"):
 * lib/duration.c reads a bare number as minutes, as Slurm's --time does,
 * and "heartbeat_interval = 2" meaning two minutes would be a trap. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/agent_config.h"
#include "lib/duration.h"

#define AGENT_DEFAULT_HEARTBEAT_MS 2000
#define AGENT_DEFAULT_KILL_WAIT_MS 10000
#define AGENT_DEFAULT_HEALTH_INTERVAL_MS 30000
#define AGENT_DEFAULT_HEALTH_TIMEOUT_MS 60000
#define AGENT_NODE_NAME_MAX 64
#define AGENT_USER_NAME_MAX 32

#define SEC 1000ULL
#define MIN (60 * SEC)
#define HOUR (60 * MIN)

struct agent_parse;

struct agent_key {
	const char *section;
	const char *name;
	bool required;
	int (*set)(struct agent_parse *, const struct agent_key *,
	    const char *, struct cerr *);
	size_t off;		/* of the field the value goes to */
	size_t size;		/* of that field, for numbers */
	uint64_t min, max;	/* bounds of numbers and durations (ms) */
	bool repeat;		/* may be given again, adding to it */
};

struct agent_parse {
	struct agent_config *cfg;
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

static int agent_set_controller(struct agent_parse *,
    const struct agent_key *, const char *, struct cerr *);
static int agent_set_name(struct agent_parse *, const struct agent_key *,
    const char *, struct cerr *);
static int agent_set_address(struct agent_parse *, const struct agent_key *,
    const char *, struct cerr *);
static int agent_set_path(struct agent_parse *, const struct agent_key *,
    const char *, struct cerr *);
static int agent_set_ms(struct agent_parse *, const struct agent_key *,
    const char *, struct cerr *);
static int agent_set_user_map(struct agent_parse *,
    const struct agent_key *, const char *, struct cerr *);
static int agent_set_source(struct agent_parse *, const struct agent_key *,
    const char *, struct cerr *);
static int agent_set_library(struct agent_parse *, const struct agent_key *,
    const char *, struct cerr *);
static int agent_set_uint(struct agent_parse *, const struct agent_key *,
    const char *, struct cerr *);
static int agent_set_model(struct agent_parse *, const struct agent_key *,
    const char *, struct cerr *);
static int agent_set_nvlink(struct agent_parse *, const struct agent_key *,
    const char *, struct cerr *);

#define CFG(f) offsetof(struct agent_config, f), \
	sizeof(((struct agent_config *)0)->f)
#define KEY(sec, name, req, set) \
	{ sec, name, req, set, 0, 0, 0, 0, false }
#define PATHKEY(sec, name, f, req) \
	{ sec, name, req, agent_set_path, CFG(f), 0, 0, false }
#define MSKEY(sec, name, f, lo, hi) \
	{ sec, name, false, agent_set_ms, CFG(f), lo, hi, false }
#define SIMKEY(name, f, lo, hi) \
	{ "gpu", name, false, agent_set_uint, CFG(sim.f), lo, hi, false }

static const struct agent_key agent_keys[] = {
	KEY("agent", "controller", true, agent_set_controller),
	KEY("agent", "name", true, agent_set_name),
	PATHKEY("agent", "spool", spool, true),
	KEY("agent", "address", false, agent_set_address),
	MSKEY("agent", "heartbeat_interval", heartbeat_ms, 100, 10 * MIN),
	MSKEY("agent", "kill_wait", kill_wait_ms, 0, HOUR),
	{ "agent", "user_map", false, agent_set_user_map, 0, 0, 0, 0, true },
	PATHKEY("tls", "ca", ca, true),
	PATHKEY("tls", "cert", cert, true),
	PATHKEY("tls", "key", key, true),
	KEY("gpu", "source", false, agent_set_source),
	{ "gpu", "nvml_library", false, agent_set_library, CFG(nvml_library),
	    0, 0, false },
	SIMKEY("count", count, 0, INV_MAX_GPUS),
	KEY("gpu", "model", false, agent_set_model),
	SIMKEY("memory_mb", memory_mb, 1, 1ULL << 24),
	KEY("gpu", "nvlink", false, agent_set_nvlink),
	SIMKEY("numa_nodes", numa_nodes, 1, 64),
	SIMKEY("nics", nics, 0, 1024),
	SIMKEY("cpus", ncpus, 1, 1U << 20),
	SIMKEY("memory_total_mb", memory_total_mb, 1, 1ULL << 32),
	PATHKEY("health", "program", health_program, false),
	MSKEY("health", "interval", health_interval_ms, SEC, 24 * HOUR),
	MSKEY("health", "timeout", health_timeout_ms, SEC, HOUR),
};
#define AGENT_NKEYS (sizeof(agent_keys) / sizeof(agent_keys[0]))

static void
agent_config_defaults(struct agent_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->heartbeat_ms = AGENT_DEFAULT_HEARTBEAT_MS;
	cfg->kill_wait_ms = AGENT_DEFAULT_KILL_WAIT_MS;
	cfg->health_interval_ms = AGENT_DEFAULT_HEALTH_INTERVAL_MS;
	cfg->health_timeout_ms = AGENT_DEFAULT_HEALTH_TIMEOUT_MS;
	inventory_sim_defaults(&cfg->sim);
}

static void
agent_user_map_free(struct user_map_entry *map, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		free(map[i].from);
		free(map[i].to);
	}
}

void
agent_config_clear(struct agent_config *cfg)
{
	if (cfg == NULL)
		return;
	free(cfg->name);
	free(cfg->spool);
	free(cfg->address);
	agent_user_map_free(cfg->user_map, cfg->nuser_map);
	free(cfg->ca);
	free(cfg->cert);
	free(cfg->key);
	free(cfg->nvml_library);
	free(cfg->health_program);
	agent_config_defaults(cfg);
}

const char *
agent_config_map_user(const struct agent_config *cfg, const char *user)
{
	unsigned i;

	for (i = 0; i < cfg->nuser_map; i++) {
		if (strcmp(cfg->user_map[i].from, "*") == 0 ||
		    strcmp(cfg->user_map[i].from, user) == 0)
			return cfg->user_map[i].to;
	}
	return user;
}

/* ---- values ---- */

static void *
agent_field(struct agent_parse *p, const struct agent_key *k)
{
	return (char *)p->cfg + k->off;
}

static int
agent_set_str(char **dst, const char *value, struct cerr *err)
{
	if (conf_set_str(dst, value) == -1)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	return 0;
}

/* Letters, digits, '.', '_' and '-': what node and account names are
 * made of. */
static bool
agent_name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

static bool
agent_valid_node_name(const char *s)
{
	size_t i;

	if (!agent_name_char(s[0]) || s[0] == '.' || s[0] == '_' ||
	    s[0] == '-')
		return false;
	for (i = 1; s[i] != '\0'; i++)
		if (i >= AGENT_NODE_NAME_MAX || !agent_name_char(s[i]))
			return false;
	return true;
}

/* A POSIX-portable account name, as useradd takes it: no leading '-',
 * which would read as an option to the tools an administrator uses. */
static bool
agent_valid_user_name(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > AGENT_USER_NAME_MAX || s[0] == '-')
		return false;
	for (i = 0; i < len; i++)
		if (!agent_name_char(s[i]))
			return false;
	return true;
}

static int
agent_set_controller(struct agent_parse *p, const struct agent_key *k,
    const char *value, struct cerr *err)
{
	return conf_parse_hostport(value, p->cfg->controller_host,
	    sizeof(p->cfg->controller_host), &p->cfg->controller_port, false,
	    err);
}

static int
agent_set_name(struct agent_parse *p, const struct agent_key *k,
    const char *value, struct cerr *err)
{
	if (!agent_valid_node_name(value))
		return cerr_set(err, ERR_INVALID,
		    "'%.80s' is not a node name (a letter or digit, then up "
		    "to %d letters, digits, '.', '_' or '-')", value,
		    AGENT_NODE_NAME_MAX - 1);
	return agent_set_str(&p->cfg->name, value, err);
}

/* What other nodes connect to: a host name, or an IPv4 or IPv6 address
 * (bare, since it becomes MASTER_ADDR). */
static int
agent_set_address(struct agent_parse *p, const struct agent_key *k,
    const char *value, struct cerr *err)
{
	unsigned char v6[16];
	size_t len = strlen(value), i;

	if (len == 0 || len > CONF_HOST_MAX)
		return cerr_set(err, ERR_INVALID,
		    "'%.64s' is not a host name or address", value);
	if (strchr(value, ':') != NULL) {
		if (inet_pton(AF_INET6, value, v6) != 1)
			return cerr_set(err, ERR_INVALID,
			    "'%.64s' is not an IPv6 address", value);
	} else {
		for (i = 0; i < len; i++)
			if (!agent_name_char(value[i]))
				return cerr_set(err, ERR_INVALID,
				    "'%.64s' is not a host name or address",
				    value);
	}
	return agent_set_str(&p->cfg->address, value, err);
}

/* value made absolute against the configuration file's directory. */
static char *
agent_abs_path(const char *dir, const char *value)
{
	char *path;

	if (value[0] == '/')
		return strdup(value);
	if (asprintf(&path, "%s%s%s", dir,
	    dir[strlen(dir) - 1] == '/' ? "" : "/", value) == -1)
		return NULL;
	return path;
}

static int
agent_set_path(struct agent_parse *p, const struct agent_key *k,
    const char *value, struct cerr *err)
{
	char **dst = agent_field(p, k);
	char *path;

	if (value[0] == '\0')
		return cerr_set(err, ERR_INVALID, "empty path");
	if ((path = agent_abs_path(p->dir, value)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	free(*dst);
	*dst = path;
	return 0;
}

/* A bare library name is for dlopen to look up on the library search
 * path, as it does for the default; only a value with a '/' is a path. */
static int
agent_set_library(struct agent_parse *p, const struct agent_key *k,
    const char *value, struct cerr *err)
{
	if (strchr(value, '/') != NULL)
		return agent_set_path(p, k, value, err);
	if (value[0] == '\0')
		return cerr_set(err, ERR_INVALID, "empty library name");
	return agent_set_str(&p->cfg->nvml_library, value, err);
}

/* ms as the file would write it: "250ms", "2s", "10m", "1h". */
static const char *
agent_ms_str(uint64_t ms, char *buf, size_t len)
{
	unsigned long long v = ms;

	if (v % SEC != 0)
		snprintf(buf, len, "%llums", v);
	else if (v != 0 && v % HOUR == 0)
		snprintf(buf, len, "%lluh", v / HOUR);
	else if (v != 0 && v % MIN == 0)
		snprintf(buf, len, "%llum", v / MIN);
	else
		snprintf(buf, len, "%llus", v / SEC);
	return buf;
}

/* A duration in ms: "NNNms", or anything lib/duration.c reads except a
 * bare number (see the comment at the top). */
static int
agent_set_ms(struct agent_parse *p, const struct agent_key *k,
    const char *value, struct cerr *err)
{
	char lo[32], hi[32], digits[24];
	size_t len = strlen(value), n;
	uint64_t v, secs;
	struct cerr verr;

	n = strspn(value, "0123456789");
	if (n == len)
		return cerr_set(err, ERR_INVALID,
		    "'%.64s' needs a unit (ms, s, m or h)", value);
	if (n > 0 && strcmp(value + n, "ms") == 0) {
		if (n >= sizeof(digits))
			goto range;
		memcpy(digits, value, n);
		digits[n] = '\0';
		if (conf_parse_uint(digits, 0, UINT64_MAX, &v, &verr) == -1)
			goto range;
	} else {
		if (duration_parse(value, &secs) == -1) {
			if (errno == ERANGE)
				goto range;
			return cerr_set(err, ERR_INVALID,
			    "'%.64s' is not a duration (e.g. 500ms, 2s, 10m)",
			    value);
		}
		v = secs * SEC;
	}
	if (v < k->min || v > k->max)
		goto range;
	*(uint64_t *)agent_field(p, k) = v;
	return 0;

range:
	return cerr_set(err, ERR_INVALID, "%.64s out of range %s..%s", value,
	    agent_ms_str(k->min, lo, sizeof(lo)),
	    agent_ms_str(k->max, hi, sizeof(hi)));
}

static int
agent_set_uint(struct agent_parse *p, const struct agent_key *k,
    const char *value, struct cerr *err)
{
	uint64_t v;

	if (conf_parse_uint(value, k->min, k->max, &v, err) == -1)
		return -1;
	if (k->size == sizeof(unsigned))
		*(unsigned *)agent_field(p, k) = (unsigned)v;
	else
		*(uint64_t *)agent_field(p, k) = v;
	return 0;
}

static int
agent_set_model(struct agent_parse *p, const struct agent_key *k,
    const char *value, struct cerr *err)
{
	size_t len = strlen(value);

	if (len == 0 || len >= sizeof(p->cfg->sim.model))
		return cerr_set(err, ERR_INVALID,
		    "a model name has 1 to %zu characters",
		    sizeof(p->cfg->sim.model) - 1);
	memcpy(p->cfg->sim.model, value, len + 1);
	return 0;
}

static int
agent_set_nvlink(struct agent_parse *p, const struct agent_key *k,
    const char *value, struct cerr *err)
{
	static const char *const layouts[] = { "all", "quads", "pairs",
		"none" };
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		if (strcmp(value, layouts[i]) == 0) {
			snprintf(p->cfg->sim.nvlink, sizeof(p->cfg->sim.nvlink),
			    "%s", value);
			return 0;
		}
	}
	return cerr_set(err, ERR_INVALID,
	    "unknown layout '%.64s' (all, quads, pairs or none)", value);
}

static int
agent_set_source(struct agent_parse *p, const struct agent_key *k,
    const char *value, struct cerr *err)
{
	if (strcmp(value, "simulated") == 0)
		p->cfg->nvml = false;
	else if (strcmp(value, "nvml") == 0)
		p->cfg->nvml = true;
	else
		return cerr_set(err, ERR_INVALID,
		    "'%.64s' is neither simulated nor nvml", value);
	return 0;
}

/* One "from:to" of a user map, blanks around it already skipped. */
static int
agent_map_entry(const char *s, size_t len, struct user_map_entry *e,
    struct cerr *err)
{
	const char *colon = memchr(s, ':', len);
	size_t flen, tlen;

	if (colon == NULL)
		return cerr_set(err, ERR_INVALID,
		    "'%.*s' is not USER:ACCOUNT", (int)(len > 64 ? 64 : len),
		    s);
	flen = (size_t)(colon - s);
	tlen = len - flen - 1;
	if (!(flen == 1 && s[0] == '*') && !agent_valid_user_name(s, flen))
		return cerr_set(err, ERR_INVALID,
		    "'%.*s' is not a user name or '*'",
		    (int)(flen > 64 ? 64 : flen), s);
	if (!agent_valid_user_name(colon + 1, tlen))
		return cerr_set(err, ERR_INVALID,
		    "'%.*s' is not an account name",
		    (int)(tlen > 64 ? 64 : tlen), colon + 1);
	/* The agent never runs a user's command as root; a map saying so
	 * is a mistake to stop at, not to find out about later. */
	if (tlen == 4 && memcmp(colon + 1, "root", 4) == 0)
		return cerr_set(err, ERR_INVALID,
		    "tasks are never run as root");
	if ((e->from = strndup(s, flen)) == NULL ||
	    (e->to = strndup(colon + 1, tlen)) == NULL) {
		free(e->from);
		e->from = NULL;
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	return 0;
}

/* "alice:svc,bob:nobody,*:guest": the first entry that matches wins,
 * so a user named twice, or anything after "*", could never be used and
 * is refused as a likely typo. inih cuts lines at 200 characters, so a
 * long map is written as several user_map lines, which add up in
 * order. */
static int
agent_set_user_map(struct agent_parse *p, const struct agent_key *k,
    const char *value, struct cerr *err)
{
	struct user_map_entry *map = p->cfg->user_map;
	const char *s = value, *end;
	size_t len;
	unsigned n0 = p->cfg->nuser_map, n = n0, i;

	for (;;) {
		s += strspn(s, " \t");
		end = s + strcspn(s, ",");
		len = (size_t)(end - s);
		while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
			len--;
		if (len == 0) {
			cerr_set(err, ERR_INVALID, "empty entry");
			goto fail;
		}
		if (n == AGENT_USER_MAP_MAX) {
			cerr_set(err, ERR_INVALID, "more than %d entries",
			    AGENT_USER_MAP_MAX);
			goto fail;
		}
		if (n > 0 && strcmp(map[n - 1].from, "*") == 0) {
			cerr_set(err, ERR_INVALID,
			    "'%.*s' comes after '*', which matches every user",
			    (int)(len > 64 ? 64 : len), s);
			goto fail;
		}
		if (agent_map_entry(s, len, &map[n], err) == -1)
			goto fail;
		n++;
		for (i = 0; i + 1 < n; i++) {
			if (strcmp(map[i].from, map[n - 1].from) == 0) {
				cerr_set(err, ERR_INVALID,
				    "user '%s' is mapped twice",
				    map[n - 1].from);
				goto fail;
			}
		}
		if (*end == '\0')
			break;
		s = end + 1;
	}
	p->cfg->nuser_map = n;
	return 0;

fail:
	/* The entries of this line go; those of earlier lines stay, for
	 * agent_config_clear. */
	agent_user_map_free(map + n0, n - n0);
	memset(map + n0, 0, (n - n0) * sizeof(map[0]));
	return -1;
}

/* ---- the file ---- */

/* Record the first error we find, with the line it is on. */
static void __attribute__((format(printf, 2, 3)))
agent_fail(struct agent_parse *p, const char *fmt, ...)
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
agent_handler(void *user, const char *section, const char *name,
    const char *value)
{
	struct agent_parse *p = user;
	struct cerr verr;
	bool known_section = false;
	size_t i;

	/* Only the first error is reported; inih goes on parsing. */
	if (p->err_line != 0)
		return 1;
	for (i = 0; i < AGENT_NKEYS; i++) {
		if (strcmp(section, agent_keys[i].section) != 0)
			continue;
		known_section = true;
		if (strcmp(name, agent_keys[i].name) == 0)
			break;
	}
	if (i == AGENT_NKEYS) {
		if (section[0] == '\0')
			agent_fail(p, "key '%.64s' is outside any section",
			    name);
		else if (!known_section)
			agent_fail(p, "unknown section [%.64s]", section);
		else
			agent_fail(p, "unknown key '%.64s' in [%.64s]", name,
			    section);
		return 0;
	}
	if (p->seen[i] != 0 && !agent_keys[i].repeat) {
		agent_fail(p, "'%s' given twice in [%s] (first on line %d)",
		    name, section, p->seen[i]);
		return 0;
	}
	if (p->seen[i] == 0)
		p->seen[i] = p->line;
	cerr_clear(&verr);
	if (agent_keys[i].set(p, &agent_keys[i], value, &verr) == -1) {
		agent_fail(p, "%s: %s", name, verr.text);
		p->err.code = verr.code;
		return 0;
	}
	return 1;
}

/* fgets-like reader for ini_parse_stream; see the comment at the top. */
static char *
agent_reader(char *str, int num, void *stream)
{
	struct agent_parse *p = stream;
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
		agent_fail(p, "line too long (at most %d characters)",
		    num - 3);
		p->stop = true;
		return NULL;
	}
	memcpy(str, start, len);
	str[len] = '\0';
	return str;
}

/* The absolute directory of path, for resolving relative paths in it. */
static char *
agent_dir_of(const char *path)
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
	if (slash == NULL || (slash == path + 1 && path[0] == '.'))
		return cwd;
	rc = asprintf(&dir, "%s/%.*s", cwd, (int)(slash - path), path);
	free(cwd);
	return rc == -1 ? NULL : dir;
}

/* What the file leaves to be derived: the address defaults to the name,
 * the simulated NICs to one per GPU. */
static int
agent_finish(struct agent_config *cfg, const int *seen, const char *path,
    struct cerr *err)
{
	size_t i;

	for (i = 0; i < AGENT_NKEYS; i++) {
		if (agent_keys[i].required && seen[i] == 0)
			return cerr_set(err, ERR_INVALID,
			    "%s: missing '%s' in [%s]", path,
			    agent_keys[i].name, agent_keys[i].section);
		if (strcmp(agent_keys[i].name, "nics") == 0 && seen[i] == 0)
			cfg->sim.nics = cfg->sim.count;
	}
	if (cfg->address == NULL && (cfg->address = strdup(cfg->name)) ==
	    NULL)
		return cerr_set(err, ERR_INTERNAL, "%s: out of memory", path);
	return 0;
}

int
agent_config_load(struct agent_config *cfg, const char *path,
    struct cerr *err)
{
	struct agent_parse p;
	int seen[AGENT_NKEYS] = { 0 };
	char *dir = NULL;
	int rc, saved;

	agent_config_defaults(cfg);
	memset(&p, 0, sizeof(p));
	p.cfg = cfg;
	p.seen = seen;
	cerr_clear(&p.err);

	if ((p.fp = fopen(path, "r")) == NULL) {
		saved = errno;
		return cerr_set(err, ERR_INVALID, "%s: cannot open: %s", path,
		    strerror(saved));
	}
	if ((dir = agent_dir_of(path)) == NULL) {
		saved = errno;
		fclose(p.fp);
		return cerr_set(err, ERR_INTERNAL, "%s: %s", path,
		    strerror(saved));
	}
	p.dir = dir;

	rc = ini_parse_stream(agent_reader, &p, agent_handler, &p);
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
	/* An error inih found on its own (no '=', no ']') carries no text
	 * of ours, and may come before the first one we found. */
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
	if (agent_finish(cfg, seen, path, err) == -1)
		goto fail;
	free(p.buf);
	free(dir);
	fclose(p.fp);
	cerr_clear(err);
	return 0;

fail:
	free(p.buf);
	free(dir);
	fclose(p.fp);
	agent_config_clear(cfg);
	return -1;
}
