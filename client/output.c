/* What the CLI's commands share (see output.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/commands.h"
#include "client/output.h"
#include "lib/frame.h"
#include "client/settings.h"
#include "lib/duration.h"
#include "lib/hostlist.h"
#include "lib/wire.h"

struct output_table {
	size_t ncols;
	size_t nrows;		/* including the header row, if any */
	char **cells;		/* nrows * ncols */
	bool fields;		/* "Key: value" lines */
};

static int
table_push(struct output_table *t, const char *const *cells)
{
	char **nc;
	size_t i, base = t->nrows * t->ncols;

	nc = reallocarray(t->cells, base + t->ncols, sizeof(*nc));
	if (nc == NULL)
		return -1;
	t->cells = nc;
	for (i = 0; i < t->ncols; i++) {
		if ((nc[base + i] = strdup(cells[i] ? cells[i] : "-")) ==
		    NULL) {
			while (i-- > 0)
				free(nc[base + i]);
			return -1;
		}
	}
	t->nrows++;
	return 0;
}

struct output_table *
output_table_new(size_t ncols, const char *const *headers)
{
	struct output_table *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->ncols = ncols;
	if (table_push(t, headers) == -1) {
		output_table_free(t);
		return NULL;
	}
	return t;
}

int
output_table_add(struct output_table *t, const char *const *cells)
{
	return table_push(t, cells);
}

struct output_table *
output_fields_new(void)
{
	struct output_table *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->ncols = 2;
	t->fields = true;
	return t;
}

int
output_fields_add(struct output_table *t, const char *key, const char *value)
{
	char *k;
	const char *cells[2];
	int rc;

	if (asprintf(&k, "%s%s", key ? key : "", key ? ":" : "") == -1)
		return -1;
	cells[0] = k;
	cells[1] = value ? value : "";
	rc = table_push(t, cells);
	free(k);
	return rc;
}

int
output_fields_addf(struct output_table *t, const char *key, const char *fmt,
    ...)
{
	va_list ap;
	char *v;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&v, fmt, ap);
	va_end(ap);
	if (rc == -1)
		return -1;
	rc = output_fields_add(t, key, v);
	free(v);
	return rc;
}

/* Width on a terminal: count UTF-8 characters, not bytes. */
static size_t
display_width(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

void
output_table_print(const struct output_table *t, FILE *fp)
{
	size_t *width, r, c, w;
	const char *cell;

	if ((width = calloc(t->ncols, sizeof(*width))) == NULL)
		return;
	for (r = 0; r < t->nrows; r++)
		for (c = 0; c < t->ncols; c++)
			if ((w = display_width(t->cells[r * t->ncols + c])) >
			    width[c])
				width[c] = w;
	for (r = 0; r < t->nrows; r++) {
		for (c = 0; c < t->ncols; c++) {
			cell = t->cells[r * t->ncols + c];
			fputs(cell, fp);
			if (c + 1 == t->ncols)
				break;
			w = width[c] - display_width(cell) +
			    (t->fields ? 1 : 2);
			fprintf(fp, "%*s", (int)w, "");
		}
		fputc('\n', fp);
	}
	free(width);
}

void
output_table_free(struct output_table *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

/* People get local time with its zone, "2026-12-01 15:04:05 UTC" (one
 * form in every command: jobs, show, events, nodes), which
 * output_parse_since reads back; JSON gets ISO-8601 UTC with "Z". */
static char *
format_time(int64_t ms, bool utc, bool with_ms, char *buf, size_t len)
{
	struct tm tm;
	time_t secs = (time_t)(ms / 1000);
	size_t n;

	if (ms <= 0 || (utc ? gmtime_r(&secs, &tm) : localtime_r(&secs,
	    &tm)) == NULL || (n = strftime(buf, len, utc ?
	    "%Y-%m-%dT%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &tm)) == 0) {
		snprintf(buf, len, "-");
		return buf;
	}
	/* OUTPUT_TIME_LEN leaves room for both; a shorter buf truncates. */
	if (with_ms)
		n += (size_t)snprintf(buf + n, len - n, ".%03d",
		    (int)(ms % 1000));
	if (n >= len)
		return buf;
	if (utc)
		snprintf(buf + n, len - n, "Z");
	else
		strftime(buf + n, len - n, " %Z", &tm);
	return buf;
}

char *
output_time_local(int64_t ms, char *buf, size_t len)
{
	return format_time(ms, false, false, buf, len);
}

char *
output_time_utc(int64_t ms, char *buf, size_t len)
{
	return format_time(ms, true, false, buf, len);
}

char *
output_time_local_ms(int64_t ms, char *buf, size_t len)
{
	return format_time(ms, false, true, buf, len);
}

char *
output_time_utc_ms(int64_t ms, char *buf, size_t len)
{
	return format_time(ms, true, true, buf, len);
}

/* The date-time forms of output_parse_since. 0, or -1 (EINVAL). */
static int
parse_iso(const char *s, int64_t *ms)
{
	struct tm tm;
	const char *p;
	long off = 0;
	int frac = 0, scale = 100, sign, hh, mm, mday, mon, isdst = -1;
	bool utc = false;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	if ((p = strptime(s, "%Y-%m-%d", &tm)) == NULL)
		goto bad;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		if (!isdigit((unsigned char)p[1]) ||
		    (p = strptime(p + 1, "%H:%M", &tm)) == NULL)
			goto bad;
		if (*p == ':' && (!isdigit((unsigned char)p[1]) ||
		    (p = strptime(p + 1, "%S", &tm)) == NULL))
			goto bad;
		if (*p == '.' || *p == ',') {
			if (!isdigit((unsigned char)*++p))
				goto bad;
			/* Milliseconds; finer digits are ignored. */
			for (; isdigit((unsigned char)*p); p++, scale /= 10)
				frac += (*p - '0') * scale;
		}
	}
	if (*p == ' ' && isalpha((unsigned char)p[1])) {
		/* The zone output_time_local prints: UTC, or the local
		 * zone's own abbreviation. */
		p++;
		tzset();
		if (strcmp(p, "UTC") == 0 || strcmp(p, "GMT") == 0)
			utc = true;
		else if (strcmp(p, tzname[0]) == 0)
			isdst = 0;
		else if (strcmp(p, tzname[1]) == 0)
			isdst = 1;
		else
			goto bad;
		p += strlen(p);
	} else if (*p == 'Z' || *p == 'z') {
		utc = true;
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '-' ? -1 : 1;
		if (sscanf(p, "%2d", &hh) != 1 || !isdigit((unsigned char)p[0])
		    || !isdigit((unsigned char)p[1]))
			goto bad;
		p += 2;
		if (*p == ':')
			p++;
		if (!isdigit((unsigned char)p[0]) ||
		    !isdigit((unsigned char)p[1]) ||
		    sscanf(p, "%2d", &mm) != 1 || hh > 23 || mm > 59)
			goto bad;
		p += 2;
		utc = true;
		off = sign * (hh * 3600L + mm * 60L);
	}
	if (*p != '\0')
		goto bad;
	tm.tm_isdst = isdst;
	mday = tm.tm_mday;
	mon = tm.tm_mon;
	/* mktime and timegm move the 30th of February to March: refuse
	 * a day the month does not have. */
	if ((t = utc ? timegm(&tm) : mktime(&tm)) == (time_t)-1 ||
	    tm.tm_mday != mday || tm.tm_mon != mon)
		goto bad;
	*ms = ((int64_t)t - off) * 1000 + frac;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

int
output_parse_since(const char *s, int64_t now_ms, int64_t *ms)
{
	uint64_t secs;

	/* A date starts with a four-digit year and a dash; anything else is
	 * a duration (whose "D-HH" form would otherwise read "2026-11" as
	 * 2026 days). */
	if (isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[1]) &&
	    isdigit((unsigned char)s[2]) && isdigit((unsigned char)s[3]) &&
	    s[4] == '-')
		return parse_iso(s, ms);
	if (duration_parse(s, &secs) == -1)
		return -1;
	*ms = now_ms - (int64_t)secs * 1000;
	if (*ms < 0)
		*ms = 0;
	return 0;
}

char *
output_duration_ms(uint64_t ms, char *buf, size_t len)
{
	size_t n;

	duration_format(ms / 1000, buf, len);
	n = strlen(buf);
	if (ms % 1000 != 0 && n < len)
		snprintf(buf + n, len - n, ".%03u", (unsigned)(ms % 1000));
	return buf;
}

char *
output_signal(int sig, uint32_t secs, char *buf, size_t len)
{
	const char *name = sig > 0 && sig < NSIG ? sigabbrev_np(sig) : NULL;

	if (name != NULL)
		snprintf(buf, len, "%s@%u", name, secs);
	else
		snprintf(buf, len, "%d@%u", sig, secs);
	return buf;
}

/* Words made only of these need no quotes. */
static bool
shell_safe(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789_@%+=:,./-", *s) == NULL)
			return false;
	return true;
}

char *
output_shell_quote(char *const *argv, size_t argc)
{
	char *buf;
	size_t i, len;
	FILE *fp;
	const char *p;

	if ((fp = open_memstream(&buf, &len)) == NULL)
		return NULL;
	for (i = 0; i < argc; i++) {
		if (i > 0)
			fputc(' ', fp);
		if (shell_safe(argv[i])) {
			fputs(argv[i], fp);
			continue;
		}
		/* Single quotes keep everything but a quote, which is
		 * written as '\'' */
		fputc('\'', fp);
		for (p = argv[i]; *p != '\0'; p++)
			fputs(*p == '\'' ? "'\\''" : (char[]){ *p, '\0' }, fp);
		fputc('\'', fp);
	}
	if (fclose(fp) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Append to buf[len] at *pos, keeping it terminated. A piece that does
 * not fit is dropped whole, and so is everything after it. */
static void
buf_append(char *buf, size_t len, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
buf_append(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *pos) {
		buf[*pos] = '\0';
		*pos = len;
	} else
		*pos += (size_t)n;
}

char *
output_gpu_peers(uint64_t mask, char *buf, size_t len)
{
	unsigned i, j;
	size_t pos = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < 64; i = j) {
		if (!(mask >> i & 1)) {
			j = i + 1;
			continue;
		}
		for (j = i + 1; j < 64 && (mask >> j & 1); j++)
			;
		/* Two in a row read better as "1,2" than as "1-2". */
		if (j - i == 1)
			buf_append(buf, len, &pos, "%s%u", pos ? "," : "", i);
		else if (j - i == 2)
			buf_append(buf, len, &pos, "%s%u,%u", pos ? "," : "",
			    i, i + 1);
		else
			buf_append(buf, len, &pos, "%s%u-%u", pos ? "," : "",
			    i, j - 1);
	}
	if (pos == 0)
		snprintf(buf, len, "-");
	return buf;
}

char *
output_nvlink(int domain, uint64_t peers, char *buf, size_t len)
{
	char p[OUTPUT_PEERS_LEN];

	if (peers == 0 && domain < 0)
		snprintf(buf, len, "-");
	else if (peers == 0)
		snprintf(buf, len, "%d", domain);
	else if (domain < 0)
		snprintf(buf, len, "- (%s)", output_gpu_peers(peers, p,
		    sizeof(p)));
	else
		snprintf(buf, len, "%d (%s)", domain, output_gpu_peers(peers,
		    p, sizeof(p)));
	return buf;
}

char *
output_mib(uint64_t mib, char *buf, size_t len)
{
	if (mib == 0)
		snprintf(buf, len, "-");
	else if (mib < 1024)
		snprintf(buf, len, "%llu MiB", (unsigned long long)mib);
	else if (mib % 1024 == 0)
		snprintf(buf, len, "%llu GiB", (unsigned long long)(mib / 1024));
	else
		snprintf(buf, len, "%.1f GiB", (double)mib / 1024);
	return buf;
}

char *
output_nodelist(const struct job *job)
{
	char **names, *list, *p;
	size_t i, len = 1;

	if (job->nplace == 0)
		return strdup("");
	if ((names = calloc(job->nplace, sizeof(*names))) == NULL)
		return NULL;
	for (i = 0; i < job->nplace; i++) {
		names[i] = (char *)job->place[i].node;
		len += strlen(names[i]) + 1;
	}
	errno = 0;
	list = hostlist_compress(names, job->nplace);
	if (list == NULL && errno == EINVAL && (list = malloc(len)) != NULL) {
		/* A name hostlist syntax cannot carry: list them plainly. */
		for (p = list, i = 0; i < job->nplace; i++)
			p += sprintf(p, "%s%s", i ? "," : "", names[i]);
	}
	free(names);
	return list;
}

int
output_parse_job_id(const char *cmd, const char *s, uint64_t *id)
{
	char *end;

	errno = 0;
	if (s[0] >= '0' && s[0] <= '9') {
		*id = strtoull(s, &end, 10);
		if (errno == 0 && *end == '\0' && *id > 0)
			return 0;
	}
	output_error("%s: invalid job id '%s' (a positive number)", cmd, s);
	return -1;
}

void
output_sleep_ms(int64_t ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

int64_t
output_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
output_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static json_t *
json_str_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

static json_t *
json_time(int64_t ms)
{
	char buf[OUTPUT_TIME_LEN];

	return ms > 0 ? json_string(output_time_utc(ms, buf, sizeof(buf))) :
	    json_null();
}

static json_t *
json_strv(char *const *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a != NULL && i < n; i++)
		if (json_array_append_new(a, json_string(v[i])) == -1) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static const char *
topo_mode_name(enum topo_mode m)
{
	return m == TOPO_REQUIRED ? "required" : m == TOPO_PREFERRED ?
	    "preferred" : "any";
}

/* [{"node": "node01", "node_rank": 0, "gpus": [0, 1]}, ...] */
static json_t *
json_placement(const struct job *job)
{
	json_t *a = json_array(), *gpus, *o;
	size_t i, g;

	for (i = 0; a != NULL && i < job->nplace; i++) {
		const struct placement *p = &job->place[i];

		gpus = json_array();
		for (g = 0; gpus != NULL && g < p->ngpus; g++)
			if (json_array_append_new(gpus,
			    json_integer(p->gpus[g])) == -1) {
				json_decref(gpus);
				gpus = NULL;
			}
		o = json_pack("{s:s, s:I, s:o}", "node", p->node, "node_rank",
		    (json_int_t)p->node_rank, "gpus", gpus);
		if (json_array_append_new(a, o) == -1) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* {"step": 1200, "path": "...", "time": "..."}, or null when the job
 * has reported no checkpoint. */
static json_t *
json_checkpoint(const struct job *job)
{
	if (!job->has_ckpt)
		return json_null();
	return json_pack("{s:I, s:o, s:o}", "step", (json_int_t)job->ckpt_step,
	    "path", json_str_or_null(job->ckpt_path),
	    "time", json_time(job->ckpt_ms));
}

/* Goodput (docs/SPEC.md "Goodput"): the split of the time since the first
 * start, in seconds, ETTR, and the last checkpoint's measured cost (0:
 * none); null from a controller that sent none. */
static json_t *
json_goodput(const struct job *job)
{
	const struct job_goodput_view *v = &job->gpv;

	if (!v->set)
		return json_null();
	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:f}",
	    "ettr", v->ettr,
	    "productive_s", (double)v->productive_ms / 1000,
	    "lost_s", (double)v->lost_ms / 1000,
	    "restart_s", (double)v->restart_ms / 1000,
	    "wait_s", (double)v->wait_ms / 1000,
	    "checkpoint_s", (double)v->ckpt_ms / 1000,
	    "checkpoint_advice_s", (json_int_t)v->advice_s,
	    "checkpoint_cost_s", (double)v->ckpt_cost_ms / 1000);
}

/* History: GPU time, the expected start while pending, and
 * the current or last allocation as a hostlist. 0 or -1. */
static int
output_job_json_history(json_t *doc, const struct job *job)
{
	char *nodes;
	int rc;

	if ((nodes = output_nodelist(job)) == NULL)
		return -1;
	rc = json_object_set_new(doc, "gpu_hours", json_real(
	    (double)job->gpu_ms / 3600000.0)) |
	    json_object_set_new(doc, "wasted_gpu_hours", json_real(
	    (double)job->wasted_gpu_ms / 3600000.0)) |
	    json_object_set_new(doc, "expected_start",
	    json_time(job->expected_start_ms)) |
	    json_object_set_new(doc, "nodelist", nodes[0] != '\0' ?
	    json_string(nodes) : json_null()) |
	    json_object_set_new(doc, "goodput", json_goodput(job));
	free(nodes);
	return rc == 0 ? 0 : -1;
}

/* Where the job may run and write: its -o/-e patterns, the
 * umask its tasks start with, the host it was submitted from, the nodes
 * it asked for or excluded
 * (Slurm's ReqNodeList/ExcNodeList), and whether it is CPU-only,
 * exclusive or held. 0 or -1 (ENOMEM). */
/* "container": null, or what the job asked for (its image as given). */
static int
output_container_json(json_t *doc, const struct job_container *c)
{
	json_t *o;

	if (c->image == NULL)
		return json_object_set_new(doc, "container", json_null());
	if ((o = json_object()) == NULL)
		return -1;
	if (json_object_set_new(o, "image", json_string(c->image)) == -1 ||
	    json_object_set_new(o, "mounts", json_str_or_null(c->mounts)) ==
	    -1 ||
	    json_object_set_new(o, "workdir", json_str_or_null(c->workdir)) ==
	    -1 ||
	    json_object_set_new(o, "env", json_str_or_null(c->env)) == -1 ||
	    json_object_set_new(o, "name", json_str_or_null(c->name)) == -1 ||
	    json_object_set_new(o, "writable", json_boolean(c->writable)) ==
	    -1 ||
	    json_object_set_new(o, "mount_home",
	    json_boolean(c->mount_home)) == -1) {
		json_decref(o);
		return -1;
	}
	return json_object_set_new(doc, "container", o);
}

static int
output_job_json_where(json_t *doc, const struct job *job)
{
	const struct job_spec *s = &job->spec;
	const char *hold = job->hold == JOB_HOLD_ADMIN ? "admin" :
	    job->hold == JOB_HOLD_USER ? "user" : NULL;
	char umask[8];

	/* Octal, as umask(1) prints it; null: not given (the agent's
	 * default applies). */
	snprintf(umask, sizeof(umask), "%04o", s->umask & JOB_UMASK_MAX);
	if (json_object_set_new(doc, "output", json_str_or_null(s->output)) ==
	    -1 ||
	    json_object_set_new(doc, "umask", s->has_umask ?
	    json_string(umask) : json_null()) == -1 ||
	    json_object_set_new(doc, "submit_host",
	    json_str_or_null(s->submit_host)) == -1 ||
	    json_object_set_new(doc, "mail_type",
	    json_integer((json_int_t)s->mail_type)) == -1 ||
	    json_object_set_new(doc, "mail_user",
	    json_str_or_null(s->mail_user)) == -1 ||
	    json_object_set_new(doc, "error", json_str_or_null(s->error)) ==
	    -1 ||
	    json_object_set_new(doc, "req_nodelist",
	    json_str_or_null(s->nodelist)) == -1 ||
	    json_object_set_new(doc, "exc_nodelist",
	    json_str_or_null(s->exclude)) == -1 ||
	    json_object_set_new(doc, "constraint",
	    json_str_or_null(s->constraint)) == -1 ||
	    json_object_set_new(doc, "gpu_memory_mb",
	    json_integer((json_int_t)s->gpu_memory_mb)) == -1 ||
	    json_object_set_new(doc, "cpus_per_task",
	    json_integer((json_int_t)s->cpus_per_task)) == -1 ||
	    json_object_set_new(doc, "mem_per_node_mb",
	    json_integer((json_int_t)s->mem_per_node_mb)) == -1 ||
	    json_object_set_new(doc, "segment",
	    json_integer((json_int_t)s->segment)) == -1 ||
	    json_object_set_new(doc, "idempotency_key",
	    json_str_or_null(s->idem_key)) == -1 ||
	    json_object_set_new(doc, "cpu_only", json_boolean(s->cpu_only)) ==
	    -1 ||
	    json_object_set_new(doc, "exclusive",
	    json_boolean(s->exclusive)) == -1 ||
	    json_object_set_new(doc, "batch", json_boolean(s->batch)) == -1 ||
	    json_object_set_new(doc, "hold", json_str_or_null(hold)) == -1)
		return -1;
	return output_container_json(doc, &s->ctr);
}

json_t *
output_job_json(const struct job *job)
{
	const struct job_spec *s = &job->spec;
	json_t *doc;
	char sig[32];

	/* json_pack fails as a whole (NULL) if any value is NULL, so ENOMEM
	 * anywhere inside cannot produce a partial document. */
	doc = json_pack("{s:I, s:o, s:o, s:s, s:s, s:I, s:I, s:I, s:I, s:o,"
	    " s:I, s:i, s:s, s:o, s:o, s:I, s:s, s:I, s:o, s:o, s:o, s:o,"
	    " s:o, s:o, s:o, s:I, s:o}",
	    "id", (json_int_t)job->id,
	    "name", json_str_or_null(s->name),
	    "user", json_str_or_null(job->user),
	    "state", job_state_name(job->state),
	    "reason", job->reason ? job->reason : "",
	    "nodes_min", (json_int_t)s->nodes_min,
	    "nodes_max", (json_int_t)s->nodes_max,
	    "gpus_per_node", (json_int_t)s->gpus_per_node,
	    "tasks_per_node", (json_int_t)s->tasks_per_node,
	    "gpu_type", json_str_or_null(s->gpu_type),
	    "time_limit_s", (json_int_t)s->time_limit_s,
	    "priority", (int)s->priority,
	    "topology_mode", topo_mode_name(s->topo_mode),
	    "topology_level", json_str_or_null(s->topo_level),
	    "checkpoint_dir", json_str_or_null(s->checkpoint_dir),
	    "max_restarts", (json_int_t)s->max_restarts,
	    "checkpoint_signal", output_signal(s->ckpt_signal, s->ckpt_secs,
	    sig, sizeof(sig)),
	    "hang_timeout_s", (json_int_t)s->hang_timeout_s,
	    "env", json_strv(s->env, s->nenv),
	    "workdir", json_str_or_null(s->workdir),
	    "argv", json_strv(s->argv, s->argc),
	    "script_name", json_str_or_null(s->script_name),
	    "submit_time", json_time(job->submit_ms),
	    "start_time", json_time(job->start_ms),
	    "end_time", json_time(job->end_ms),
	    "restarts", (json_int_t)job->restarts,
	    "exit_code", job->has_exit ? json_integer(job->exit_code) :
	    json_null());
	if (doc == NULL)
		return NULL;
	if (json_object_set_new(doc, "queue", json_str_or_null(s->queue)) ==
	    -1 ||
	    json_object_set_new(doc, "service", json_boolean(s->service)) ==
	    -1 ||
	    json_object_set_new(doc, "placement", json_placement(job)) == -1 ||
	    json_object_set_new(doc, "nodes_now", job->nplace > 0 &&
	    !job_state_is_final(job->state) ?
	    json_integer((json_int_t)job->nplace) : json_null()) == -1 ||
	    json_object_set_new(doc, "checkpoint", json_checkpoint(job)) ==
	    -1 ||
	    json_object_set_new(doc, "last_failure",
	    json_time(job->last_failure_ms)) == -1 ||
	    json_object_set_new(doc, "last_restart",
	    json_time(job->last_restart_ms)) == -1 ||
	    json_object_set_new(doc, "lost_work_s",
	    json_real((double)job->lost_work_ms / 1000)) == -1 ||
	    /* Arrays and dependencies: an array task's array and index. */
	    json_object_set_new(doc, "array_id", job->array_id != 0 ?
	    json_integer((json_int_t)job->array_id) : json_null()) == -1 ||
	    json_object_set_new(doc, "array_task", job->array_id != 0 ?
	    json_integer((json_int_t)job->array_task) : json_null()) == -1 ||
	    json_object_set_new(doc, "array", json_str_or_null(s->array)) ==
	    -1 ||
	    json_object_set_new(doc, "dependency",
	    json_str_or_null(s->dependency)) == -1 ||
	    output_job_json_where(doc, job) == -1 ||
	    /* env, argv (and the script) withheld: another user's job. */
	    json_object_set_new(doc, "private", json_boolean(job->redacted)) ==
	    -1 || output_job_json_history(doc, job) == -1) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

int
output_json_print(json_t *doc)
{
	int rc;

	if (doc == NULL)
		return -1;
	rc = json_dumpf(doc, stdout, JSON_INDENT(2));
	json_decref(doc);
	if (rc == -1 || fputc('\n', stdout) == EOF || fflush(stdout) == EOF)
		return -1;
	return 0;
}

void
output_error(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("cohort: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int
output_call_error(const struct cerr *err)
{
	output_error("%s", err->text);
	switch (err->code) {
	case ERR_UNAVAILABLE:
	case ERR_VERSION:
	case ERR_PROTOCOL:
		return EXIT_UNREACHABLE;
	default:
		return EXIT_FAILED;
	}
}

int
output_reply_error(const char *prefix, const Cohort__V1__Envelope *rep)
{
	enum err_code code;

	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_ERROR) {
		output_error("%s: unexpected reply '%s' from the controller",
		    prefix, wire_body_name(rep->body_case));
		return EXIT_FAILED;
	}
	output_error("%s: %s", prefix, rep->error->text);
	/* The controller refused this request: exit 1, unless it says it
	 * cannot serve anyone right now, which is "cannot reach". */
	code = wire_err_from_pb(rep->error->code);
	return code == ERR_UNAVAILABLE ? EXIT_UNREACHABLE : EXIT_FAILED;
}

int
output_usage_error(const char *cmd, int ch, char *const *argv)
{
	const char *word = optind > 0 ? argv[optind - 1] : "?";

	if (ch == ':')
		output_error("%s: %s: missing argument (see cohort %s --help)",
		    cmd, word, cmd);
	else if (optopt != 0 && optopt < 0x100)
		output_error("%s: unknown option '-%c' (see cohort %s --help)",
		    cmd, optopt, cmd);
	else
		output_error("%s: unknown option '%s' (see cohort %s --help)",
		    cmd, word, cmd);
	return EXIT_USAGE;
}

int
output_conn_flag(struct output_conn_flags *f, int opt, const char *arg)
{
	switch (opt) {
	case OUTPUT_OPT_SERVER:
		f->server = arg;
		return 1;
	case OUTPUT_OPT_CERT:
		f->cert = arg;
		return 1;
	case OUTPUT_OPT_KEY:
		f->key = arg;
		return 1;
	case OUTPUT_OPT_CA:
		f->ca = arg;
		return 1;
	}
	return 0;
}

int
output_settings(const struct cconn_opts *base,
    const struct output_conn_flags *f, struct settings *s,
    struct cconn_opts *o)
{
	struct cerr err;

	/* The values in base were resolved before the command's own flags
	 * were known (and may be missing); resolving again with both gives
	 * the command's flags precedence and names what is still missing. */
	cerr_clear(&err);
	if (settings_resolve(s, f->server ? f->server : base->server,
	    f->cert ? f->cert : base->cert, f->key ? f->key : base->key,
	    f->ca ? f->ca : base->ca, NULL, &err) == -1) {
		output_error("%s", err.text);
		settings_clear(s);
		return EXIT_USAGE;
	}
	o->server = s->server;
	o->cert = s->cert;
	o->key = s->key;
	o->ca = s->ca;
	o->crl = base->crl;
	o->timeout_ms = base->timeout_ms;
	return EXIT_OK;
}

int
output_connect(const struct cconn_opts *base,
    const struct output_conn_flags *f, struct cconn **c)
{
	struct settings s;
	struct cconn_opts o;
	struct cerr err;
	int rc;

	*c = NULL;
	if ((rc = output_settings(base, f, &s, &o)) != EXIT_OK)
		return rc;
	cerr_clear(&err);
	if ((*c = cconn_open(&o, &err)) == NULL) {
		output_error("%s", err.text);
		rc = err.code == ERR_INVALID ? EXIT_USAGE : EXIT_UNREACHABLE;
	}
	settings_clear(&s);
	return rc;
}

int
output_request(const char *cmd, const struct cconn_opts *base,
    const struct output_conn_flags *f, Cohort__V1__Envelope *req,
    Cohort__V1__Envelope__BodyCase want, Cohort__V1__Envelope **rep)
{
	Cohort__V1__Envelope *r;
	struct cconn *c;
	struct cerr err;
	int rc;

	if (rep != NULL)
		*rep = NULL;
	if ((rc = output_connect(base, f, &c)) != EXIT_OK)
		return rc;
	if ((r = cconn_call(c, req, &err)) == NULL)
		rc = output_call_error(&err);
	else if (r->body_case != want) {
		rc = output_reply_error(cmd, r);
		frame_free(r);
	} else if (rep != NULL)
		*rep = r;
	else
		frame_free(r);
	cconn_close(c);
	return rc;
}

int
output_listing(bool json, const char *key, json_t *arr,
    const struct output_table *t)
{
	if (json)
		return output_json_print(json_pack("{s:o}", key, arr)) == 0 ?
		    EXIT_OK : EXIT_FAILED;
	output_table_print(t, stdout);
	return fflush(stdout) == EOF ? EXIT_FAILED : EXIT_OK;
}

int
output_iterate_parse(const char *cmd, const char *s, unsigned *ms)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= 0.01) ||
	    v > 86400) {
		output_error("%s: --iterate '%.32s': seconds from 0.01 to "
		    "86400", cmd, s);
		return EXIT_USAGE;
	}
	*ms = (unsigned)(v * 1000 + 0.5);
	return EXIT_OK;
}

int
output_iterate(unsigned ms, int (*round)(void *), void *arg)
{
	struct timespec ts;
	int rc;

	for (;;) {
		rc = round(arg);
		if (fflush(stdout) == EOF || ferror(stdout))
			return EXIT_FAILED;
		/* A usage error is the same in every round. */
		if (ms == 0 || rc == EXIT_USAGE)
			return rc;
		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (long)(ms % 1000) * 1000000;
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	}
}
