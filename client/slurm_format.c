/* Slurm's format strings, cells and words (slurm_format.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "client/slurm_format.h"

/* No field is wider than this (a width given larger is refused). */
#define SFMT_WIDTH_MAX 4096
/* -O's width when none is given, as Slurm's. */
#define SFMT_NAMES_WIDTH 20

void
sfmt_clear(struct sfmt *fmt)
{
	size_t i;

	for (i = 0; i < fmt->n; i++)
		free(fmt->v[i].text);
	free(fmt->v);
	fmt->v = NULL;
	fmt->n = 0;
}

static struct sfmt_item *
sfmt_push(struct sfmt *fmt)
{
	struct sfmt_item *v;

	if ((v = reallocarray(fmt->v, fmt->n + 1, sizeof(*v))) == NULL)
		return NULL;
	fmt->v = v;
	memset(&v[fmt->n], 0, sizeof(v[0]));
	return &v[fmt->n++];
}

static int
sfmt_literal(struct sfmt *fmt, const char *s, size_t len)
{
	struct sfmt_item *it;

	if (len == 0)
		return 0;
	if ((it = sfmt_push(fmt)) == NULL ||
	    (it->text = strndup(s, len)) == NULL)
		return -1;
	return 0;
}

/* A width: digits at *p, advanced past them. -1 when too large. */
static int
sfmt_width(const char **p)
{
	long w = 0;

	while (isdigit((unsigned char)**p)) {
		w = w * 10 + (**p - '0');
		if (w > SFMT_WIDTH_MAX)
			return -1;
		(*p)++;
	}
	return (int)w;
}

static const struct sfmt_def *
sfmt_by_letter(const struct sfmt_def *defs, size_t n, char c)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (defs[i].letter == c)
			return &defs[i];
	return NULL;
}

static const struct sfmt_def *
sfmt_by_name(const struct sfmt_def *defs, size_t n, const char *s,
    size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (defs[i].name != NULL && strlen(defs[i].name) == len &&
		    strncasecmp(defs[i].name, s, len) == 0)
			return &defs[i];
	return NULL;
}

static int
sfmt_fail(struct sfmt *fmt, struct cerr *err, const char *what,
    const char *s, size_t len)
{
	sfmt_clear(fmt);
	if (what == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	/* sacct quotes the field it refuses. */
	if (strcmp(what, "Invalid field requested") == 0)
		return cerr_set(err, ERR_INVALID, "%s: \"%.*s\"", what,
		    (int)len, s);
	return cerr_set(err, ERR_INVALID, "%s: %.*s", what, (int)len, s);
}

int
sfmt_parse_letters(const char *s, const struct sfmt_def *defs, size_t ndefs,
    struct sfmt *fmt, struct cerr *err)
{
	const char *p = s, *lit = s, *start;
	struct sfmt_item *it;
	const struct sfmt_def *d;
	bool right, fit;
	int w;

	memset(fmt, 0, sizeof(*fmt));
	while ((p = strchr(p, '%')) != NULL) {
		start = p++;
		if (*p == '%') {
			/* "%%": one percent sign, kept with the text before. */
			if (sfmt_literal(fmt, lit, (size_t)(p - lit)) == -1)
				return sfmt_fail(fmt, err, NULL, NULL, 0);
			lit = ++p;
			continue;
		}
		if (sfmt_literal(fmt, lit, (size_t)(start - lit)) == -1)
			return sfmt_fail(fmt, err, NULL, NULL, 0);
		/* '-' is Slurm's default (left) said explicitly. */
		right = *p == '.';
		if (*p == '.' || *p == '-')
			p++;
		fit = *p == '#';
		if (fit)
			p++;
		if ((w = sfmt_width(&p)) == -1)
			return sfmt_fail(fmt, err, "width too large",
			    start, (size_t)(p - start));
		if (*p == '\0' || (d = sfmt_by_letter(defs, ndefs, *p)) ==
		    NULL)
			return sfmt_fail(fmt, err, "Invalid format "
			    "specification", start, *p ? (size_t)(p + 1 -
			    start) : (size_t)(p - start));
		if ((it = sfmt_push(fmt)) == NULL)
			return sfmt_fail(fmt, err, NULL, NULL, 0);
		it->def = d;
		it->width = w;
		it->right = right;
		it->fit = fit;
		lit = ++p;
	}
	if (sfmt_literal(fmt, lit, strlen(lit)) == -1)
		return sfmt_fail(fmt, err, NULL, NULL, 0);
	if (sfmt_nfields(fmt) == 0)
		return sfmt_fail(fmt, err, "no field in format", s,
		    strlen(s));
	return 0;
}

/* The comma-separated words of s, each handed to one(word, len). */
static int
sfmt_words(const char *s, struct sfmt *fmt, struct cerr *err,
    const struct sfmt_def *defs, size_t ndefs,
    int (*one)(const char *, size_t, const struct sfmt_def *, size_t,
    struct sfmt *, struct cerr *))
{
	const char *p = s, *comma;
	size_t len;

	memset(fmt, 0, sizeof(*fmt));
	while (*p != '\0') {
		comma = strchr(p, ',');
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (len > 0 && one(p, len, defs, ndefs, fmt, err) == -1)
			return -1;
		p += len + (comma != NULL);
	}
	if (fmt->n == 0)
		return sfmt_fail(fmt, err, "no field in format", s,
		    strlen(s));
	return 0;
}

static int
sfmt_one_name(const char *s, size_t len, const struct sfmt_def *defs,
    size_t ndefs, struct sfmt *fmt, struct cerr *err)
{
	const char *colon = memchr(s, ':', len), *p;
	const struct sfmt_def *d;
	struct sfmt_item *it;
	size_t nlen = colon != NULL ? (size_t)(colon - s) : len;
	char num[8];
	size_t k;
	int w = SFMT_NAMES_WIDTH;
	bool right = false;

	if ((d = sfmt_by_name(defs, ndefs, s, nlen)) == NULL)
		return sfmt_fail(fmt, err, "Invalid job format specification",
		    s, nlen);
	p = colon != NULL ? colon + 1 : s + len;
	if (p < s + len && *p == '.') {
		right = true;
		p++;
	}
	for (k = 0; p + k < s + len && isdigit((unsigned char)p[k]); k++)
		if (k + 1 >= sizeof(num))
			return sfmt_fail(fmt, err, "width too large", s, len);
	if (k > 0) {
		memcpy(num, p, k);
		num[k] = '\0';
		if ((w = atoi(num)) > SFMT_WIDTH_MAX)
			return sfmt_fail(fmt, err, "width too large", s, len);
		p += k;
	}
	if ((it = sfmt_push(fmt)) == NULL)
		return sfmt_fail(fmt, err, NULL, NULL, 0);
	it->def = d;
	it->width = w;
	it->right = right;
	if (p < s + len && (it->text = strndup(p, (size_t)(s + len - p))) ==
	    NULL)
		return sfmt_fail(fmt, err, NULL, NULL, 0);
	return 0;
}

int
sfmt_parse_names(const char *s, const struct sfmt_def *defs, size_t ndefs,
    struct sfmt *fmt, struct cerr *err)
{
	return sfmt_words(s, fmt, err, defs, ndefs, sfmt_one_name);
}

static int
sfmt_one_sacct(const char *s, size_t len, const struct sfmt_def *defs,
    size_t ndefs, struct sfmt *fmt, struct cerr *err)
{
	const char *pct = memchr(s, '%', len), *p;
	const struct sfmt_def *d;
	struct sfmt_item *it;
	size_t nlen = pct != NULL ? (size_t)(pct - s) : len;
	int w;

	if ((d = sfmt_by_name(defs, ndefs, s, nlen)) == NULL)
		return sfmt_fail(fmt, err, "Invalid field requested",
		    s, nlen);
	w = d->width;
	if (pct != NULL) {
		p = pct + 1;
		if ((w = sfmt_width(&p)) == -1 || p != s + len || p == pct + 1)
			return sfmt_fail(fmt, err, "Invalid field width", s,
			    len);
	}
	if ((it = sfmt_push(fmt)) == NULL)
		return sfmt_fail(fmt, err, NULL, NULL, 0);
	it->def = d;
	it->width = w;
	/* sacct right-justifies every field but its ids and lists. */
	it->right = d->width > 0;
	if (d->width < 0)
		it->width = pct != NULL ? w : -d->width;
	/* One space after each field, as sacct prints them. */
	return (it = sfmt_push(fmt)) == NULL ||
	    (it->text = strdup(" ")) == NULL ? sfmt_fail(fmt, err, NULL,
	    NULL, 0) : 0;
}

int
sfmt_parse_sacct(const char *s, const struct sfmt_def *defs, size_t ndefs,
    struct sfmt *fmt, struct cerr *err)
{
	if (sfmt_words(s, fmt, err, defs, ndefs, sfmt_one_sacct) == -1)
		return -1;
	fmt->plus = true;
	return 0;
}

size_t
sfmt_nfields(const struct sfmt *fmt)
{
	size_t i, n = 0;

	for (i = 0; i < fmt->n; i++)
		n += fmt->v[i].def != NULL;
	return n;
}

void
sfmt_fit(struct sfmt *fmt, const char *const *cells)
{
	const char *c;
	size_t i, k = 0, len;

	for (i = 0; i < fmt->n; i++) {
		if (fmt->v[i].def == NULL)
			continue;
		c = cells != NULL ? cells[k] : fmt->v[i].def->head;
		k++;
		len = c != NULL ? strlen(c) : 0;
		if (fmt->v[i].fit && len > (size_t)fmt->v[i].width &&
		    len <= SFMT_WIDTH_MAX)
			fmt->v[i].width = (int)len;
	}
}

/* One cell: value padded to width, or cut to it (with '+' last when
 * plus). */
static void
sfmt_cell(FILE *fp, const char *v, int width, bool right, bool plus)
{
	size_t len = strlen(v), w = (size_t)width;

	if (width <= 0 || len == w) {
		fputs(v, fp);
		return;
	}
	if (len > w) {
		if (plus && w > 1)
			fprintf(fp, "%.*s+", width - 1, v);
		else
			fprintf(fp, "%.*s", width, v);
		return;
	}
	fprintf(fp, right ? "%*s" : "%-*s", width, v);
}

int
sfmt_print(const struct sfmt *fmt, const char *const *cells, FILE *fp)
{
	const struct sfmt_item *it;
	const char *v;
	size_t i, k = 0;

	for (i = 0; i < fmt->n; i++) {
		it = &fmt->v[i];
		if (it->def == NULL) {
			fputs(it->text, fp);
			continue;
		}
		v = cells != NULL ? cells[k] : it->def->head;
		k++;
		/* A header is justified as its field's values are. */
		sfmt_cell(fp, v != NULL ? v : "", it->width, it->right,
		    fmt->plus);
		if (it->text != NULL)
			fputs(it->text, fp);
	}
	fputc('\n', fp);
	return ferror(fp) ? -1 : 0;
}

int
sfmt_print_dashes(const struct sfmt *fmt, FILE *fp)
{
	size_t i;
	int k;

	for (i = 0; i < fmt->n; i++) {
		if (fmt->v[i].def == NULL) {
			fputs(fmt->v[i].text, fp);
			continue;
		}
		for (k = 0; k < fmt->v[i].width; k++)
			fputc('-', fp);
	}
	fputc('\n', fp);
	return ferror(fp) ? -1 : 0;
}

int
sfmt_print_parsable(const struct sfmt *fmt, const char *const *cells,
    bool trailing, FILE *fp)
{
	size_t i, k = 0, n = sfmt_nfields(fmt);
	const char *v;

	for (i = 0; i < fmt->n; i++) {
		if (fmt->v[i].def == NULL)
			continue;
		v = cells != NULL ? cells[k] : fmt->v[i].def->head;
		k++;
		fprintf(fp, "%s%s", v != NULL ? v : "", k < n || trailing ?
		    "|" : "");
	}
	fputc('\n', fp);
	return ferror(fp) ? -1 : 0;
}

/* ---- States ---- */

static const struct {
	enum job_state st;
	const char *name;
	const char *code;
} slurm_states[] = {
	{ JOB_PENDING, "PENDING", "PD" },
	{ JOB_RUNNING, "RUNNING", "R" },
	{ JOB_RESTARTING, "REQUEUED", "RQ" },
	{ JOB_RESIZING, "RESIZING", "RS" },
	{ JOB_COMPLETED, "COMPLETED", "CD" },
	{ JOB_FAILED, "FAILED", "F" },
	{ JOB_CANCELLED, "CANCELLED", "CA" },
	{ JOB_TIMEOUT, "TIMEOUT", "TO" },
};
#define NSLURM_STATES (sizeof(slurm_states) / sizeof(slurm_states[0]))

/* Slurm's states that no Cohort job is ever in: accepted in a filter
 * (matching nothing), so that a tool's usual list works. */
static const char *const slurm_states_never[] = {
	"BOOT_FAIL", "BF", "COMPLETING", "CG", "CONFIGURING", "CF",
	"DEADLINE", "DL", "NODE_FAIL", "NF", "OUT_OF_MEMORY", "OOM",
	"PREEMPTED", "PR", "REQUEUE_FED", "RF", "REQUEUE_HOLD", "RH",
	"RESV_DEL_HOLD", "RD", "REVOKED", "RV", "SIGNALING", "SI",
	"SPECIAL_EXIT", "SE", "STAGE_OUT", "SO", "STOPPED", "ST",
	"SUSPENDED", "S",
};

const char *
slurm_state_name(enum job_state st)
{
	size_t i;

	for (i = 0; i < NSLURM_STATES; i++)
		if (slurm_states[i].st == st)
			return slurm_states[i].name;
	return "UNKNOWN";
}

const char *
slurm_state_code(enum job_state st)
{
	size_t i;

	for (i = 0; i < NSLURM_STATES; i++)
		if (slurm_states[i].st == st)
			return slurm_states[i].code;
	return "??";
}

int
slurm_states_parse(const char *list, unsigned *mask, struct cerr *err)
{
	const char *p = list, *comma;
	size_t len, i;
	bool ok;

	do {
		comma = strchr(p, ',');
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		ok = false;
		if (len == 3 && strncasecmp(p, "all", 3) == 0) {
			for (i = 0; i < NSLURM_STATES; i++)
				*mask |= 1u << slurm_states[i].st;
			ok = true;
		}
		for (i = 0; !ok && i < NSLURM_STATES; i++)
			if ((strlen(slurm_states[i].name) == len &&
			    strncasecmp(p, slurm_states[i].name, len) == 0) ||
			    (strlen(slurm_states[i].code) == len &&
			    strncasecmp(p, slurm_states[i].code, len) == 0)) {
				*mask |= 1u << slurm_states[i].st;
				ok = true;
			}
		for (i = 0; !ok && i < sizeof(slurm_states_never) /
		    sizeof(slurm_states_never[0]); i++)
			ok = strlen(slurm_states_never[i]) == len &&
			    strncasecmp(p, slurm_states_never[i], len) == 0;
		if (!ok || len == 0)
			return cerr_set(err, ERR_INVALID, "Invalid job state "
			    "specified: %.*s", (int)len, p);
		p = comma != NULL ? comma + 1 : NULL;
	} while (p != NULL);
	return 0;
}

/* Cohort's reasons that Slurm words differently. */
static const struct {
	const char *cohort;
	const char *slurm;
} slurm_reasons[] = {
	{ "QueueQuota", "QOSGrpGRES" },
	{ "BadConstraints", "BadConstraints" },
	{ "Preempting", "Resources" },
};

const char *
slurm_reason(const char *reason, char *buf, size_t len)
{
	size_t i, n;

	if (reason == NULL || reason[0] == '\0')
		return "None";
	/* Slurm's reason is one word: Cohort's detail after it (" (reserved,
	 * starts by ...)", ": queue ...") is left to cohort show. */
	for (n = 0; reason[n] != '\0' && (isalnum((unsigned char)reason[n]) ||
	    reason[n] == '_'); n++)
		;
	if (n == 0 || n >= len)
		n = len > 0 ? len - 1 : 0;
	snprintf(buf, len, "%.*s", (int)n, reason);
	for (i = 0; i < sizeof(slurm_reasons) / sizeof(slurm_reasons[0]);
	    i++)
		if (strcmp(buf, slurm_reasons[i].cohort) == 0)
			return slurm_reasons[i].slurm;
	return buf;
}

/* ---- Times ---- */

/* squeue's and sacct's durations differ only in the hours: hwidth 1
 * (squeue) leaves zero hours out, hwidth 2 (sacct) always shows two. */
static char *
slurm_secs(uint64_t secs, int hwidth, char *buf, size_t len)
{
	unsigned long long d = secs / 86400, h = secs / 3600 % 24,
	    m = secs / 60 % 60, s = secs % 60;

	if (d > 0)
		snprintf(buf, len, "%llu-%02llu:%02llu:%02llu", d, h, m, s);
	else if (h > 0 || hwidth > 1)
		snprintf(buf, len, "%0*llu:%02llu:%02llu", hwidth, h, m, s);
	else
		snprintf(buf, len, "%llu:%02llu", m, s);
	return buf;
}

char *
slurm_secs_short(uint64_t secs, char *buf, size_t len)
{
	return slurm_secs(secs, 1, buf, len);
}

char *
slurm_secs_long(uint64_t secs, char *buf, size_t len)
{
	return slurm_secs(secs, 2, buf, len);
}

char *
slurm_time(int64_t ms, const char *none, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms <= 0 || localtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		snprintf(buf, len, "%s", none);
	return buf;
}

int
slurm_print_date(FILE *fp)
{
	char buf[64];
	time_t t = time(NULL);
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(buf, sizeof(buf), "%a %b %d %H:%M:%S %Y", &tm) == 0)
		return -1;
	fprintf(fp, "%s\n", buf);
	return ferror(fp) ? -1 : 0;
}

/* "now", "now-N[unit]" or "now+N[unit]": units seconds (the default),
 * minutes, hours, days, weeks, any prefix of them. */
static int
slurm_time_now(const char *s, int64_t now_ms, int64_t *ms)
{
	static const struct {
		const char *unit;
		int64_t secs;
	} units[] = { { "seconds", 1 }, { "minutes", 60 }, { "hours", 3600 },
	    { "days", 86400 }, { "weeks", 7 * 86400 } };
	long long n;
	char *end;
	size_t i;
	int sign;

	if (strncasecmp(s, "now", 3) != 0)
		return -1;
	s += 3;
	if (*s == '\0') {
		*ms = now_ms;
		return 0;
	}
	if (*s != '-' && *s != '+')
		return -1;
	sign = *s == '-' ? -1 : 1;
	errno = 0;
	n = strtoll(s + 1, &end, 10);
	if (errno != 0 || end == s + 1 || n < 0 || n > 100LL * 365 * 86400)
		return -1;
	if (*end == '\0') {
		*ms = now_ms + sign * n * 1000;
		return 0;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strncasecmp(end, units[i].unit, strlen(end)) == 0) {
			*ms = now_ms + sign * n * units[i].secs * 1000;
			return 0;
		}
	return -1;
}

int
slurm_time_parse(const char *s, int64_t now_ms, int64_t *ms)
{
	struct tm tm, now_tm;
	time_t now = (time_t)(now_ms / 1000), t;
	const char *end;
	int yy;

	if (slurm_time_now(s, now_ms, ms) == 0)
		return 0;
	memset(&tm, 0, sizeof(tm));
	if ((end = strptime(s, "%Y-%m-%d", &tm)) != NULL) {
		if (*end == 'T' && (end = strptime(end + 1, "%H:%M",
		    &tm)) != NULL && *end == ':')
			end = strptime(end + 1, "%S", &tm);
	} else if ((end = strptime(s, "%m/%d", &tm)) != NULL) {
		if (localtime_r(&now, &now_tm) == NULL)
			goto bad;
		tm.tm_year = now_tm.tm_year;
		if (*end == '/') {
			if (sscanf(end + 1, "%2d", &yy) != 1 ||
			    strlen(end + 1) != 2)
				goto bad;
			tm.tm_year = 100 + yy;
			end += 3;
		}
	}
	if (end == NULL || *end != '\0')
		goto bad;
	tm.tm_isdst = -1;
	if ((t = mktime(&tm)) == (time_t)-1)
		goto bad;
	*ms = (int64_t)t * 1000;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

/* ---- Nodes ---- */

const char *
slurm_node_state(const struct nodes_view_node *n, bool longer)
{
	/* A DOWN node's agent is gone: Slurm's not responding, '*'. */
	if (!n->up)
		return n->drain[0] != '\0' ? (longer ? "drained*" :
		    "drain*") : "down*";
	switch (nodes_view_state(n)) {
	case NODES_VIEW_IDLE:
		return "idle";
	case NODES_VIEW_MIXED:
		return longer ? "mixed" : "mix";
	case NODES_VIEW_ALLOCATED:
		return longer ? "allocated" : "alloc";
	case NODES_VIEW_DRAINING:
		return longer ? "draining" : "drng";
	case NODES_VIEW_DRAINED:
		return longer ? "drained" : "drain";
	default:
		return "down*";
	}
}
