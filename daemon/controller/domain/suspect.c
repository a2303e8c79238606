/* Suspect nodes (suspect.h): attribution, scoring and thresholds, pure
 * functions of the evidence and of the `now` each call brings. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/log.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/domain/suspect.h"
#include "daemon/controller/store/txq.h"

/* Hardware evidence this close to the last counted is the same incident
 * (a health verdict, then the node going DOWN). */
#define SUSPECT_INCIDENT_MS (10 * 60 * 1000)

struct suspect {
	struct store *st;
	struct txq *q;
	struct suspect_opts o;
	struct suspect_node **tab;	/* sorted by name */
	size_t n, cap;
	size_t waiting;			/* unconfirmed early failures */
	unsigned long crossings;
};

static const char *const kind_names[SUSPECT_KINDS] = {
	[SUSPECT_EARLY] = "early",
	[SUSPECT_XID] = "xid",
	[SUSPECT_HEALTH] = "health",
	[SUSPECT_DOWN] = "down",
	[SUSPECT_STOP] = "stop",
	[SUSPECT_SLOW] = "slow",
};

void
suspect_opts_default(struct suspect_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->drain = true;
	o->early_fail_ms = 60 * 1000;
	o->early_jobs = 3;
	o->early_users = 2;
	o->early_period_ms = 3600 * 1000;
	o->hardware_failures = 2;
	o->hardware_period_ms = 72LL * 3600 * 1000;
	o->confirm_ms = 24LL * 3600 * 1000;
	o->recent_ms = 3600 * 1000;
	o->large_gang_nodes = 16;
}

const char *
suspect_kind_name(enum suspect_kind kind)
{
	return kind >= 0 && kind < SUSPECT_KINDS ? kind_names[kind] : "?";
}

static int
kind_parse(const char *name)
{
	int k;

	for (k = 0; k < SUSPECT_KINDS; k++)
		if (strcmp(kind_names[k], name) == 0)
			return k;
	return -1;
}

/* The index of name in tab, or where it would go (*found false). */
static size_t
suspect_index(const struct suspect *s, const char *name, bool *found)
{
	size_t lo = 0, hi = s->n, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(s->tab[mid]->name, name);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

const struct suspect_node *
suspect_get(const struct suspect *s, const char *node)
{
	bool found;
	size_t at;

	if (s == NULL)
		return NULL;
	at = suspect_index(s, node, &found);
	return found ? s->tab[at] : NULL;
}

struct suspect_node *const *
suspect_all(const struct suspect *s, size_t *n)
{
	*n = s != NULL ? s->n : 0;
	return s != NULL ? s->tab : NULL;
}

/* The record of node, added (empty, in memory only) when it has none.
 * NULL with err on ENOMEM or a name too long. */
static struct suspect_node *
suspect_node_get(struct suspect *s, const char *node, struct cerr *err)
{
	struct suspect_node *sn, **tab;
	bool found;
	size_t at;

	at = suspect_index(s, node, &found);
	if (found)
		return s->tab[at];
	if (strlen(node) > PEER_NAME_MAX) {
		cerr_set(err, ERR_INVALID, "node name too long");
		return NULL;
	}
	if (s->n == s->cap) {
		tab = reallocarray(s->tab, s->cap ? s->cap * 2 : 16,
		    sizeof(*tab));
		if (tab == NULL)
			goto oom;
		s->tab = tab;
		s->cap = s->cap ? s->cap * 2 : 16;
	}
	if ((sn = calloc(1, sizeof(*sn))) == NULL)
		goto oom;
	snprintf(sn->name, sizeof(sn->name), "%s", node);
	memmove(&s->tab[at + 1], &s->tab[at], (s->n - at) * sizeof(*s->tab));
	s->tab[at] = sn;
	s->n++;
	return sn;
oom:
	cerr_set(err, ERR_INTERNAL, "out of memory");
	return NULL;
}

static size_t
count_waiting(const struct suspect_node *sn)
{
	size_t i, n = 0;

	for (i = 0; i < sn->nev; i++)
		n += sn->ev[i].kind == SUSPECT_EARLY && !sn->ev[i].confirmed;
	return n;
}

static void describe(const struct suspect_node *sn, char *buf, size_t len);

/* Write next as node's record, then make it the one in memory. */
static int
suspect_save(struct suspect *s, struct suspect_node *sn,
    const struct suspect_node *next, struct cerr *err)
{
	struct store_evidence ev[SUSPECT_EVIDENCE_MAX];
	struct store_suspect x = {
		.node = next->name, .exempt = next->exempt,
		.cleared_ms = next->cleared_ms, .reason = next->reason,
		.drained_ms = next->drained_ms,
	};
	size_t i;

	for (i = 0; i < next->nev; i++) {
		ev[i].node = next->name;
		ev[i].seq = next->ev[i].seq;
		ev[i].time_ms = next->ev[i].time_ms;
		ev[i].kind = suspect_kind_name(next->ev[i].kind);
		ev[i].job_id = next->ev[i].job_id;
		ev[i].user = next->ev[i].user;
		ev[i].confirmed = next->ev[i].confirmed;
		ev[i].detail = next->ev[i].detail;
	}
	if (txq_join(s->q, err) == -1 || store_mark(s->st, err) == -1)
		return -1;
	if (store_suspect_put(s->st, &x, ev, next->nev, err) == -1 ||
	    store_keep(s->st, err) == -1) {
		store_undo(s->st);
		return -1;
	}
	s->waiting -= count_waiting(sn);
	s->waiting += count_waiting(next);
	if (sn != next)
		memcpy(sn, next, sizeof(*sn));
	describe(sn, sn->text, sizeof(sn->text));
	return 0;
}

/* Drop evidence that no rule looks at any more: confirmed early
 * failures past early_period, hardware past hardware_period, waiting
 * ones past confirm_ms. */
static void
prune(const struct suspect_opts *o, struct suspect_node *sn, int64_t now)
{
	const struct suspect_evidence *e;
	size_t i, k = 0;
	int64_t keep;

	for (i = 0; i < sn->nev; i++) {
		e = &sn->ev[i];
		if (e->kind != SUSPECT_EARLY)
			keep = o->hardware_period_ms;
		else if (e->confirmed)
			keep = o->early_period_ms;
		else
			keep = o->confirm_ms;
		if (now - e->time_ms > keep)
			continue;
		sn->ev[k++] = *e;
	}
	sn->nev = k;
}

/* Append e (its seq given here). When full, the oldest slow rank
 * goes first (slowness never drains; failures do), else the oldest; a
 * slow rank never pushes out a failure. */
static void
append(struct suspect_node *sn, const struct suspect_evidence *e)
{
	size_t i;

	if (sn->nev == SUSPECT_EVIDENCE_MAX) {
		for (i = 0; i < sn->nev && sn->ev[i].kind != SUSPECT_SLOW; i++)
			;
		if (i == sn->nev) {
			if (e->kind == SUSPECT_SLOW)
				return;
			i = 0;
		}
		memmove(&sn->ev[i], &sn->ev[i + 1],
		    (sn->nev - i - 1) * sizeof(sn->ev[0]));
		sn->nev--;
	}
	sn->ev[sn->nev] = *e;
	sn->ev[sn->nev++].seq = sn->seq++;
}

/* "2026-12-01T18:04:05Z". */
static void
time_utc(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "%lld ms", (long long)ms);
}

/* Append to buf[*at..len) without overflowing. */
static void
cat(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
cat(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*at >= len)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (k > 0)
		*at = (size_t)k < len - *at ? *at + (size_t)k : len - 1;
}

/* Is the early failure at i the first of its job among the counted? */
static bool
first_of_job(const struct suspect_node *sn, size_t i, int64_t since)
{
	size_t k;

	for (k = 0; k < i; k++)
		if (sn->ev[k].kind == SUSPECT_EARLY && sn->ev[k].confirmed &&
		    sn->ev[k].time_ms >= since &&
		    sn->ev[k].job_id == sn->ev[i].job_id)
			return false;
	return true;
}

/* Where a window of period ending now starts, or the resume if later. */
static int64_t
since_resume(const struct suspect_node *sn, int64_t now, int64_t period)
{
	return now - period < sn->cleared_ms ? sn->cleared_ms : now - period;
}

/* The distinct jobs confirmed within early_period since the resume. */
static uint32_t
early_count(const struct suspect_opts *o, const struct suspect_node *sn,
    int64_t now)
{
	int64_t since = since_resume(sn, now, o->early_period_ms);
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < sn->nev; i++)
		if (sn->ev[i].kind == SUSPECT_EARLY && sn->ev[i].confirmed &&
		    sn->ev[i].time_ms >= since && first_of_job(sn, i, since))
			n++;
	return n;
}

/* The distinct users of the confirmed early failures counted by
 * early_count (few: at most SUSPECT_EVIDENCE_MAX entries). */
static uint32_t
early_users(const struct suspect_opts *o, const struct suspect_node *sn,
    int64_t now)
{
	int64_t since = now - o->early_period_ms;
	uint32_t n = 0;
	size_t i, k;

	if (since < sn->cleared_ms)
		since = sn->cleared_ms;
	for (i = 0; i < sn->nev; i++) {
		if (sn->ev[i].kind != SUSPECT_EARLY || !sn->ev[i].confirmed ||
		    sn->ev[i].time_ms < since)
			continue;
		for (k = 0; k < i; k++)
			if (sn->ev[k].kind == SUSPECT_EARLY &&
			    sn->ev[k].confirmed && sn->ev[k].time_ms >= since &&
			    strcmp(sn->ev[k].user, sn->ev[i].user) == 0)
				break;
		n += k == i;
	}
	return n;
}

/* Hardware failures within hardware_period, since the resume unless
 * across (the lemon rule looks across repairs). */
static uint32_t
hardware_count(const struct suspect_opts *o, const struct suspect_node *sn,
    int64_t now, bool across)
{
	int64_t since = across ? now - o->hardware_period_ms :
	    since_resume(sn, now, o->hardware_period_ms);
	int64_t last = INT64_MIN;
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < sn->nev; i++)
		if (sn->ev[i].kind != SUSPECT_EARLY &&
		    sn->ev[i].kind != SUSPECT_SLOW &&
		    sn->ev[i].time_ms >= since &&
		    (last == INT64_MIN ||
		    sn->ev[i].time_ms - last > SUSPECT_INCIDENT_MS)) {
			last = sn->ev[i].time_ms;
			n++;
		}
	return n;
}

/* Stragglers named on sn within the hardware period, since a resume. */
static uint32_t
slow_count(const struct suspect_opts *o, const struct suspect_node *sn,
    int64_t now)
{
	int64_t since = since_resume(sn, now, o->hardware_period_ms);
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < sn->nev; i++)
		n += sn->ev[i].kind == SUSPECT_SLOW &&
		    sn->ev[i].time_ms >= since;
	return n;
}

static uint32_t
score(const struct suspect_opts *o, const struct suspect_node *sn,
    int64_t now)
{
	return early_count(o, sn, now) + hardware_count(o, sn, now, false) +
	    slow_count(o, sn, now);
}

uint32_t
suspect_score(const struct suspect *s, const char *node, int64_t now_ms)
{
	const struct suspect_node *sn = suspect_get(s, node);

	return sn != NULL ? score(&s->o, sn, now_ms) : 0;
}

/* Does sn cross a threshold now? Then its reason names the evidence. */
static bool
crosses(const struct suspect_opts *o, struct suspect_node *sn, int64_t now)
{
	const struct suspect_evidence *e;
	char when[32], hours[32];
	int64_t since;
	uint32_t n;
	size_t i, at = 0;
	bool early;

	if (sn->exempt || !o->drain || sn->reason[0] != '\0')
		return false;
	if (o->early_jobs > 0 &&
	    (n = early_count(o, sn, now)) >= o->early_jobs &&
	    early_users(o, sn, now) >= o->early_users)
		early = true;
	else if (o->hardware_failures > 0 &&
	    (n = hardware_count(o, sn, now, true)) >= o->hardware_failures)
		early = false;
	else
		return false;
	since = early ? o->early_period_ms : o->hardware_period_ms;
	if (since % 3600000 == 0)
		snprintf(hours, sizeof(hours), "%" PRId64 " h",
		    since / 3600000);
	else
		snprintf(hours, sizeof(hours), "%" PRId64 " s", since / 1000);
	if (early)
		cat(sn->reason, sizeof(sn->reason), &at, SUSPECT_PREFIX
		    " %u jobs failed early here and ran elsewhere within %s:",
		    n, hours);
	else
		cat(sn->reason, sizeof(sn->reason), &at, SUSPECT_PREFIX
		    " %u hardware failures within %s%s:", n, hours,
		    sn->cleared_ms > 0 ? " across a resume" : "");
	since = now - (early ? o->early_period_ms : o->hardware_period_ms);
	if (early && since < sn->cleared_ms)
		since = sn->cleared_ms;
	for (i = 0; i < sn->nev; i++) {
		e = &sn->ev[i];
		if ((e->kind == SUSPECT_EARLY) != early ||
		    e->kind == SUSPECT_SLOW || e->time_ms < since ||
		    (early && (!e->confirmed || !first_of_job(sn, i, since))))
			continue;
		time_utc(e->time_ms, when, sizeof(when));
		if (early)
			cat(sn->reason, sizeof(sn->reason), &at,
			    " job %" PRIu64 " (%s) at %s;", e->job_id, e->user,
			    when);
		else
			cat(sn->reason, sizeof(sn->reason), &at, " %s at %s%s%s;",
			    suspect_kind_name(e->kind), when,
			    e->detail[0] ? ": " : "", e->detail);
	}
	if (at > 0 && sn->reason[at - 1] == ';')
		sn->reason[at - 1] = '\0';
	sn->drained_ms = now;
	return true;
}

static int
load_suspect(const struct store_suspect *x, void *arg)
{
	struct suspect *s = arg;
	struct suspect_node *sn;
	struct cerr err;

	if (strlen(x->reason) > SUSPECT_REASON_MAX ||
	    (sn = suspect_node_get(s, x->node, &err)) == NULL)
		return -1;
	sn->exempt = x->exempt;
	sn->cleared_ms = x->cleared_ms;
	snprintf(sn->reason, sizeof(sn->reason), "%s", x->reason);
	sn->drained_ms = x->drained_ms;
	return 0;
}

static int
load_evidence(const struct store_evidence *x, void *arg)
{
	struct suspect *s = arg;
	struct suspect_node *sn;
	struct suspect_evidence e;
	struct cerr err;
	int k;

	if ((k = kind_parse(x->kind)) == -1 ||
	    strlen(x->user) > PEER_NAME_MAX ||
	    strlen(x->detail) > SUSPECT_DETAIL_MAX ||
	    (sn = suspect_node_get(s, x->node, &err)) == NULL)
		return -1;
	memset(&e, 0, sizeof(e));
	e.time_ms = x->time_ms;
	e.kind = (enum suspect_kind)k;
	e.job_id = x->job_id;
	snprintf(e.user, sizeof(e.user), "%s", x->user);
	e.confirmed = x->confirmed;
	snprintf(e.detail, sizeof(e.detail), "%s", x->detail);
	append(sn, &e);
	sn->ev[sn->nev - 1].seq = x->seq;
	if (sn->seq <= x->seq)
		sn->seq = x->seq + 1;
	s->waiting += k == SUSPECT_EARLY && !x->confirmed;
	return 0;
}

struct suspect *
suspect_create(struct store *st, struct txq *q, const struct suspect_opts *o,
    struct cerr *err)
{
	struct suspect *s;
	size_t i;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	s->st = st;
	s->q = q;
	if (o != NULL)
		s->o = *o;
	else
		suspect_opts_default(&s->o);
	if (store_suspects_load(st, load_suspect, load_evidence, s,
	    err) == -1) {
		suspect_destroy(s);
		return NULL;
	}
	for (i = 0; i < s->n; i++)
		describe(s->tab[i], s->tab[i]->text, sizeof(s->tab[i]->text));
	return s;
}

void
suspect_destroy(struct suspect *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		free(s->tab[i]);
	free(s->tab);
	free(s);
}

const struct suspect_opts *
suspect_get_opts(const struct suspect *s)
{
	return &s->o;
}

void
suspect_set_opts(struct suspect *s, const struct suspect_opts *o)
{
	s->o = *o;
}

int
suspect_hardware(struct suspect *s, const char *node, enum suspect_kind kind,
    uint64_t job_id, const char *detail, int64_t now_ms, char *reason_out,
    size_t len, struct cerr *err)
{
	struct suspect_node *sn, next;
	struct suspect_evidence e;
	bool crossed;

	if ((sn = suspect_node_get(s, node, err)) == NULL)
		return -1;
	next = *sn;
	memset(&e, 0, sizeof(e));
	e.time_ms = now_ms;
	e.kind = kind;
	e.job_id = job_id;
	e.confirmed = true;
	snprintf(e.detail, sizeof(e.detail), "%s", detail != NULL ? detail :
	    "");
	prune(&s->o, &next, now_ms);
	append(&next, &e);
	/* Slowness never drains, even a node whose failures before a
	 * resume are still counted by the lemon rule. */
	crossed = kind != SUSPECT_SLOW && crosses(&s->o, &next, now_ms);
	if (suspect_save(s, sn, &next, err) == -1)
		return -1;
	if (!crossed)
		return 0;
	s->crossings++;
	snprintf(reason_out, len, "%s", sn->reason);
	return 1;
}

int
suspect_early(struct suspect *s, const char *node, uint64_t job_id,
    const char *user, const char *detail, int64_t now_ms, struct cerr *err)
{
	struct suspect_node *sn, next;
	struct suspect_evidence e;

	if (s->o.early_fail_ms == 0)
		return 0;
	if ((sn = suspect_node_get(s, node, err)) == NULL)
		return -1;
	next = *sn;
	memset(&e, 0, sizeof(e));
	e.time_ms = now_ms;
	e.kind = SUSPECT_EARLY;
	e.job_id = job_id;
	snprintf(e.user, sizeof(e.user), "%s", user != NULL ? user : "");
	snprintf(e.detail, sizeof(e.detail), "%s", detail != NULL ? detail :
	    "");
	prune(&s->o, &next, now_ms);
	append(&next, &e);
	return suspect_save(s, sn, &next, err);
}

static bool
named(const char *const *nodes, size_t n, const char *node)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(nodes[i], node) == 0)
			return true;
	return false;
}

int
suspect_job_ran(struct suspect *s, uint64_t job_id, const char *const *nodes,
    size_t n, int64_t now_ms, suspect_crossed_fn crossed, void *arg)
{
	struct suspect_node *sn, next;
	struct cerr err;
	size_t i, k, j;
	bool here, changed, over;
	int rc = 0;

	for (i = 0; i < s->n && s->waiting > 0; i++) {
		sn = s->tab[i];
		next = *sn;
		here = named(nodes, n, sn->name);
		changed = false;
		for (k = j = 0; k < next.nev; k++) {
			if (next.ev[k].kind == SUSPECT_EARLY &&
			    !next.ev[k].confirmed &&
			    next.ev[k].job_id == job_id) {
				changed = true;
				/* It ran fine here: not this node's fault. */
				if (here)
					continue;
				next.ev[k].confirmed = true;
			}
			next.ev[j++] = next.ev[k];
		}
		if (!changed)
			continue;
		next.nev = j;
		prune(&s->o, &next, now_ms);
		over = crosses(&s->o, &next, now_ms);
		if (suspect_save(s, sn, &next, &err) == -1) {
			log_warnx("node %s: evidence of job %" PRIu64 " not "
			    "saved: %s", sn->name, job_id, err.text);
			rc = -1;
			continue;
		}
		if (here)
			continue;
		log_info("node %s: job %" PRIu64 " failed early here and ran "
		    "fine elsewhere (score %u)", sn->name, job_id,
		    score(&s->o, sn, now_ms));
		if (over) {
			s->crossings++;
			if (crossed != NULL)
				crossed(arg, sn->name, sn->reason);
		}
	}
	return rc;
}

void
suspect_job_lost(struct suspect *s, uint64_t job_id, int64_t now_ms)
{
	struct suspect_node *sn, next;
	struct cerr err;
	size_t i, k, j;

	for (i = 0; i < s->n && s->waiting > 0; i++) {
		sn = s->tab[i];
		next = *sn;
		for (k = j = 0; k < next.nev; k++)
			if (!(next.ev[k].kind == SUSPECT_EARLY &&
			    !next.ev[k].confirmed &&
			    next.ev[k].job_id == job_id))
				next.ev[j++] = next.ev[k];
		if (j == next.nev)
			continue;
		next.nev = j;
		prune(&s->o, &next, now_ms);
		if (suspect_save(s, sn, &next, &err) == -1)
			log_warnx("node %s: evidence of job %" PRIu64 " not "
			    "dropped: %s", sn->name, job_id, err.text);
	}
}

size_t
suspect_waiting_jobs(const struct suspect *s, uint64_t *ids, size_t max)
{
	const struct suspect_evidence *e;
	size_t i, k, j, n = 0;

	for (i = 0; i < s->n && s->waiting > 0 && n < max; i++)
		for (k = 0; k < s->tab[i]->nev && n < max; k++) {
			e = &s->tab[i]->ev[k];
			if (e->kind != SUSPECT_EARLY || e->confirmed)
				continue;
			for (j = 0; j < n && ids[j] != e->job_id; j++)
				;
			if (j == n)
				ids[n++] = e->job_id;
		}
	return n;
}

void
suspect_expire(struct suspect *s, int64_t now_ms)
{
	struct suspect_node *sn, next;
	struct cerr err;
	size_t i, k;

	for (i = 0; i < s->n && s->waiting > 0; i++) {
		sn = s->tab[i];
		for (k = 0; k < sn->nev; k++)
			if (sn->ev[k].kind == SUSPECT_EARLY &&
			    !sn->ev[k].confirmed &&
			    now_ms - sn->ev[k].time_ms > s->o.confirm_ms)
				break;
		if (k == sn->nev)
			continue;
		next = *sn;
		prune(&s->o, &next, now_ms);
		if (suspect_save(s, sn, &next, &err) == -1)
			log_warnx("node %s: %s", sn->name, err.text);
	}
}

int
suspect_resume(struct suspect *s, const char *node, int64_t now_ms,
    struct cerr *err)
{
	struct suspect_node *sn, next;
	size_t k, j;
	bool found;

	suspect_index(s, node, &found);
	if (!found)
		return 0;
	sn = suspect_node_get(s, node, err);
	next = *sn;
	next.reason[0] = '\0';
	next.drained_ms = 0;
	next.cleared_ms = now_ms;
	/* Early and slow evidence goes (the admin fixed what failed the
	 * jobs or slowed them); hardware evidence stays for the lemon
	 * rule. */
	for (k = j = 0; k < next.nev; k++)
		if (next.ev[k].kind != SUSPECT_EARLY &&
		    next.ev[k].kind != SUSPECT_SLOW)
			next.ev[j++] = next.ev[k];
	next.nev = j;
	return suspect_save(s, sn, &next, err);
}

int
suspect_exempt(struct suspect *s, const char *node, bool on, int64_t now_ms,
    struct cerr *err)
{
	struct suspect_node *sn, next;

	if ((sn = suspect_node_get(s, node, err)) == NULL)
		return -1;
	if (sn->exempt == on)
		return 0;
	next = *sn;
	next.exempt = on;
	prune(&s->o, &next, now_ms);
	return suspect_save(s, sn, &next, err);
}

bool
suspect_recent(const struct suspect *s, const char *node, int64_t now_ms)
{
	const struct suspect_node *sn = suspect_get(s, node);
	size_t i;

	if (sn == NULL)
		return false;
	for (i = 0; i < sn->nev; i++)
		if (sn->ev[i].time_ms >= sn->cleared_ms &&
		    now_ms - sn->ev[i].time_ms <= s->o.recent_ms)
			return true;
	return false;
}

bool
suspect_failed_here(const struct suspect *s, uint64_t job_id,
    const char *node)
{
	const struct suspect_node *sn = suspect_get(s, node);
	size_t i;

	for (i = 0; sn != NULL && i < sn->nev; i++)
		if (sn->ev[i].kind == SUSPECT_EARLY && !sn->ev[i].confirmed &&
		    sn->ev[i].job_id == job_id)
			return true;
	return false;
}

void
suspect_describe(const struct suspect *s, const char *node, char *buf,
    size_t len)
{
	describe(suspect_get(s, node), buf, len);
}

static void
describe(const struct suspect_node *sn, char *buf, size_t len)
{
	const struct suspect_evidence *e;
	char when[32];
	size_t i, at = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (i = sn != NULL ? sn->nev : 0; i > 0; i--) {
		e = &sn->ev[i - 1];
		time_utc(e->time_ms, when, sizeof(when));
		cat(buf, len, &at, "%s%s", at > 0 ? ", " : "",
		    suspect_kind_name(e->kind));
		if (e->job_id != 0)
			cat(buf, len, &at, " job %" PRIu64, e->job_id);
		if (e->user[0] != '\0')
			cat(buf, len, &at, " (%s)", e->user);
		cat(buf, len, &at, " at %s%s", when,
		    e->kind == SUSPECT_EARLY && !e->confirmed ?
		    " (unconfirmed)" : e->time_ms < sn->cleared_ms ?
		    " (before resume)" : "");
	}
}

unsigned long
suspect_crossings(const struct suspect *s)
{
	return s != NULL ? s->crossings : 0;
}
