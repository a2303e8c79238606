/* cohort nodes --state, --summary and --reasons (see nodes_view.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/nodes_view.h"
#include "client/output.h"
#include "lib/constraint.h"
#include "lib/features.h"
#include "lib/hostlist.h"

static const char *const state_names[NODES_VIEW_NSTATES] = {
	"IDLE", "MIXED", "ALLOCATED", "DRAINING", "DRAINED", "DOWN",
};

enum nodes_view_state
nodes_view_state(const struct nodes_view_node *n)
{
	if (!n->up)
		return NODES_VIEW_DOWN;
	if (strcmp(n->drain, "DRAINED") == 0)
		return NODES_VIEW_DRAINED;
	if (n->drain[0] != '\0')
		return NODES_VIEW_DRAINING;
	if (!n->busy && n->gpus_held == 0)
		return NODES_VIEW_IDLE;
	if (n->gpus_held >= n->gpus_total)
		return NODES_VIEW_ALLOCATED;
	return NODES_VIEW_MIXED;
}

const char *
nodes_view_state_name(enum nodes_view_state s)
{
	return (unsigned)s < NODES_VIEW_NSTATES ? state_names[s] : "?";
}

unsigned
nodes_view_bits(const struct nodes_view_node *n)
{
	unsigned bits = 1u << nodes_view_state(n);

	if (n->up)
		bits |= NODES_VIEW_BIT_UP;
	else if (strcmp(n->drain, "DRAINED") == 0)
		bits |= 1u << NODES_VIEW_DRAINED;
	else if (n->drain[0] != '\0')
		bits |= 1u << NODES_VIEW_DRAINING;
	return bits;
}

int
nodes_view_states_parse(const char *arg, unsigned *mask, struct cerr *err)
{
	const char *p = arg, *e;
	size_t len, i;

	for (;; p = e + 1) {
		e = strchr(p, ',');
		len = e != NULL ? (size_t)(e - p) : strlen(p);
		for (i = 0; i < NODES_VIEW_NSTATES; i++)
			if (strlen(state_names[i]) == len &&
			    strncasecmp(p, state_names[i], len) == 0)
				break;
		if (i < NODES_VIEW_NSTATES)
			*mask |= 1u << i;
		else if (len == 2 && strncasecmp(p, "UP", 2) == 0)
			*mask |= NODES_VIEW_BIT_UP;
		else
			return cerr_set(err, ERR_INVALID, "--state: '%.*s' is "
			    "not a node state (UP, DOWN, DRAINING, DRAINED, "
			    "IDLE, MIXED, ALLOCATED)", (int)(len > 32 ? 32 :
			    len), p);
		if (e == NULL)
			return 0;
	}
}

void
nodes_view_gpus(const struct nodes_view_node *n, unsigned *alloc,
    unsigned *idle, unsigned *other)
{
	unsigned held = n->gpus_held < n->gpus_total ? n->gpus_held :
	    n->gpus_total;

	if (!n->up) {
		*alloc = *idle = 0;
		*other = n->gpus_total;
		return;
	}
	*alloc = held;
	*other = n->gpus_unavailable < n->gpus_total - held ?
	    n->gpus_unavailable : n->gpus_total - held;
	*idle = n->gpus_total - held - *other;
}

/* Names, growing. */
struct names {
	char **v;
	size_t n, cap;
};

static int
names_add(struct names *l, const char *name)
{
	char **grown;
	size_t cap;

	if (l->n == l->cap) {
		cap = l->cap ? l->cap * 2 : 8;
		if ((grown = realloc(l->v, cap * sizeof(*grown))) == NULL)
			return -1;
		l->v = grown;
		l->cap = cap;
	}
	if ((l->v[l->n] = strdup(name)) == NULL)
		return -1;
	l->n++;
	return 0;
}

static void
names_clear(struct names *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

struct gcount {
	unsigned long a, i, o, t;
};

struct nodes_view_summary {
	unsigned long nodes[NODES_VIEW_NSTATES];
	struct gcount gpus[NODES_VIEW_NSTATES];
	struct names names[NODES_VIEW_NSTATES];
};

struct nodes_view_summary *
nodes_view_summary_new(void)
{
	return calloc(1, sizeof(struct nodes_view_summary));
}

int
nodes_view_summary_add(struct nodes_view_summary *s,
    const struct nodes_view_node *n)
{
	enum nodes_view_state st = nodes_view_state(n);
	unsigned a, i, o;

	if (names_add(&s->names[st], n->name) == -1)
		return -1;
	nodes_view_gpus(n, &a, &i, &o);
	s->nodes[st]++;
	s->gpus[st].a += a;
	s->gpus[st].i += i;
	s->gpus[st].o += o;
	s->gpus[st].t += n->gpus_total;
	return 0;
}

/* Nodes A/I/O/T and GPUs A/I/O/T over every state. */
static void
summary_totals(const struct nodes_view_summary *s, struct gcount *nodes,
    struct gcount *gpus)
{
	unsigned k;

	memset(nodes, 0, sizeof(*nodes));
	memset(gpus, 0, sizeof(*gpus));
	for (k = 0; k < NODES_VIEW_NSTATES; k++) {
		if (k == NODES_VIEW_IDLE)
			nodes->i += s->nodes[k];
		else if (k == NODES_VIEW_MIXED || k == NODES_VIEW_ALLOCATED)
			nodes->a += s->nodes[k];
		else
			nodes->o += s->nodes[k];
		nodes->t += s->nodes[k];
		gpus->a += s->gpus[k].a;
		gpus->i += s->gpus[k].i;
		gpus->o += s->gpus[k].o;
		gpus->t += s->gpus[k].t;
	}
}

static void
gcount_text(const struct gcount *g, char *buf, size_t len)
{
	snprintf(buf, len, "%lu/%lu/%lu/%lu", g->a, g->i, g->o, g->t);
}

int
nodes_view_summary_print(const struct nodes_view_summary *s, FILE *fp)
{
	static const char *const head[4] = { "STATE", "NODES",
	    "GPUS(A/I/O/T)", "NODELIST" };
	static const char *const tot_head[2] = { "NODES(A/I/O/T)",
	    "GPUS(A/I/O/T)" };
	struct output_table *t = NULL, *tt = NULL;
	struct gcount nodes, gpus;
	char nb[96], gb[96], cnt[24], *list;
	const char *cells[4];
	int rc = -1;
	unsigned k;

	summary_totals(s, &nodes, &gpus);
	gcount_text(&nodes, nb, sizeof(nb));
	gcount_text(&gpus, gb, sizeof(gb));
	cells[0] = nb;
	cells[1] = gb;
	if ((tt = output_table_new(2, tot_head)) == NULL ||
	    output_table_add(tt, cells) == -1 ||
	    (t = output_table_new(4, head)) == NULL)
		goto out;
	/* Worst first, as an operator reads it. */
	for (k = NODES_VIEW_NSTATES; k-- > 0;) {
		if (s->nodes[k] == 0)
			continue;
		if ((list = hostlist_compress(s->names[k].v,
		    s->names[k].n)) == NULL)
			goto out;
		snprintf(cnt, sizeof(cnt), "%lu", s->nodes[k]);
		gcount_text(&s->gpus[k], gb, sizeof(gb));
		cells[0] = state_names[k];
		cells[1] = cnt;
		cells[2] = gb;
		cells[3] = list;
		rc = output_table_add(t, cells);
		free(list);
		if (rc == -1)
			goto out;
	}
	output_table_print(tt, fp);
	fputc('\n', fp);
	output_table_print(t, fp);
	rc = 0;
out:
	output_table_free(t);
	output_table_free(tt);
	return rc;
}

static json_t *
gcount_json(const struct gcount *g)
{
	return json_pack("{s:I, s:I, s:I, s:I}", "allocated", (json_int_t)g->a,
	    "idle", (json_int_t)g->i, "other", (json_int_t)g->o, "total",
	    (json_int_t)g->t);
}

json_t *
nodes_view_summary_json(const struct nodes_view_summary *s)
{
	struct gcount nodes, gpus;
	json_t *states, *one;
	char *list;
	unsigned k;

	if ((states = json_array()) == NULL)
		return NULL;
	for (k = NODES_VIEW_NSTATES; k-- > 0;) {
		if (s->nodes[k] == 0)
			continue;
		if ((list = hostlist_compress(s->names[k].v,
		    s->names[k].n)) == NULL)
			goto nomem;
		one = json_pack("{s:s, s:I, s:o, s:s}", "state",
		    state_names[k], "nodes", (json_int_t)s->nodes[k], "gpus",
		    gcount_json(&s->gpus[k]), "nodelist", list);
		free(list);
		if (json_array_append_new(states, one) == -1)
			goto nomem;
	}
	summary_totals(s, &nodes, &gpus);
	return json_pack("{s:o, s:o, s:o}", "nodes", gcount_json(&nodes),
	    "gpus", gcount_json(&gpus), "states", states);
nomem:
	json_decref(states);
	return NULL;
}

void
nodes_view_summary_free(struct nodes_view_summary *s)
{
	unsigned k;

	if (s == NULL)
		return;
	for (k = 0; k < NODES_VIEW_NSTATES; k++)
		names_clear(&s->names[k]);
	free(s);
}

/* One group of --reasons: nodes with the same reason, actor and second. */
struct rgroup {
	char *reason;
	char *user;		/* NULL: no one (a DOWN node) */
	int64_t ms;		/* the first node's, to the millisecond */
	struct names names;
};

struct nodes_view_reasons {
	struct rgroup *v;
	size_t n, cap;
};

struct nodes_view_reasons *
nodes_view_reasons_new(void)
{
	return calloc(1, sizeof(struct nodes_view_reasons));
}

static bool
str_eq(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

int
nodes_view_reasons_add(struct nodes_view_reasons *r,
    const struct nodes_view_node *n)
{
	const char *reason = n->reason != NULL ? n->reason : "";
	const char *user = n->drain_actor;
	int64_t ms = user != NULL ? n->drain_ms : n->since_ms;
	struct rgroup *g, *grown;
	size_t i, cap;

	if (user == NULL && n->up)
		return 0;
	for (i = 0; i < r->n; i++) {
		g = &r->v[i];
		if (strcmp(g->reason, reason) == 0 && str_eq(g->user, user) &&
		    g->ms / 1000 == ms / 1000)
			return names_add(&g->names, n->name);
	}
	if (r->n == r->cap) {
		cap = r->cap ? r->cap * 2 : 8;
		if ((grown = realloc(r->v, cap * sizeof(*grown))) == NULL)
			return -1;
		r->v = grown;
		r->cap = cap;
	}
	g = &r->v[r->n];
	memset(g, 0, sizeof(*g));
	g->ms = ms;
	if ((g->reason = strdup(reason)) == NULL ||
	    (user != NULL && (g->user = strdup(user)) == NULL) ||
	    names_add(&g->names, n->name) == -1) {
		free(g->reason);
		free(g->user);
		names_clear(&g->names);
		return -1;
	}
	r->n++;
	return 0;
}

static int
rgroup_cmp(const void *a, const void *b)
{
	const struct rgroup *x = a, *y = b;

	if (x->ms != y->ms)
		return x->ms < y->ms ? -1 : 1;
	return strcmp(x->reason, y->reason);
}

int
nodes_view_reasons_print(const struct nodes_view_reasons *r, FILE *fp)
{
	static const char *const head[4] = { "REASON", "USER", "TIMESTAMP",
	    "NODELIST" };
	struct output_table *t;
	char when[OUTPUT_TIME_LEN], *list;
	const char *cells[4];
	size_t i;
	int rc = 0;

	if (r->n > 1)
		qsort(r->v, r->n, sizeof(*r->v), rgroup_cmp);
	if ((t = output_table_new(4, head)) == NULL)
		return -1;
	for (i = 0; i < r->n && rc == 0; i++) {
		if ((list = hostlist_compress(r->v[i].names.v,
		    r->v[i].names.n)) == NULL) {
			rc = -1;
			break;
		}
		cells[0] = r->v[i].reason[0] ? r->v[i].reason : NULL;
		cells[1] = r->v[i].user;
		cells[2] = output_time_local(r->v[i].ms, when, sizeof(when));
		cells[3] = list;
		rc = output_table_add(t, cells);
		free(list);
	}
	if (rc == 0)
		output_table_print(t, fp);
	output_table_free(t);
	return rc;
}

json_t *
nodes_view_reasons_json(const struct nodes_view_reasons *r)
{
	char when[OUTPUT_TIME_LEN], *list;
	json_t *arr, *one, *nodes;
	size_t i, k;

	if (r->n > 1)
		qsort(r->v, r->n, sizeof(*r->v), rgroup_cmp);
	if ((arr = json_array()) == NULL)
		return NULL;
	for (i = 0; i < r->n; i++) {
		if ((nodes = json_array()) == NULL)
			goto nomem;
		for (k = 0; k < r->v[i].names.n; k++)
			if (json_array_append_new(nodes, json_string(
			    r->v[i].names.v[k])) == -1) {
				json_decref(nodes);
				goto nomem;
			}
		if ((list = hostlist_compress(r->v[i].names.v,
		    r->v[i].names.n)) == NULL) {
			json_decref(nodes);
			goto nomem;
		}
		one = json_pack("{s:s, s:o, s:s, s:s, s:o}", "reason",
		    r->v[i].reason, "user", r->v[i].user != NULL ?
		    json_string(r->v[i].user) : json_null(), "time",
		    output_time_utc(r->v[i].ms, when, sizeof(when)),
		    "nodelist", list, "nodes", nodes);
		free(list);
		if (json_array_append_new(arr, one) == -1)
			goto nomem;
	}
	return arr;
nomem:
	json_decref(arr);
	return NULL;
}

void
nodes_view_reasons_free(struct nodes_view_reasons *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n; i++) {
		free(r->v[i].reason);
		free(r->v[i].user);
		names_clear(&r->v[i].names);
	}
	free(r->v);
	free(r);
}

const char *
nodes_view_reason_cell(const struct nodes_view_node *n, char *buf,
    size_t len)
{
	char when[OUTPUT_TIME_LEN];

	if (n->reason == NULL || n->reason[0] == '\0')
		return NULL;
	if (n->drain_actor == NULL)
		return n->reason;
	snprintf(buf, len, "%s (%s, %s)", n->reason, n->drain_actor,
	    output_time_local(n->drain_ms, when, sizeof(when)));
	return buf;
}

/* n's features, configured then derived, in v[0..FEATURES_MAX); how
 * many (a controller sending more than a node can have is cut). */
static size_t
all_features(const struct nodes_view_node *n, const char **v)
{
	size_t i, k = 0;

	for (i = 0; i < n->nfeatures && k < FEATURES_MAX; i++)
		v[k++] = n->features[i];
	for (i = 0; i < n->nderived && k < FEATURES_MAX; i++)
		v[k++] = n->derived[i];
	return k;
}

const char *
nodes_view_features_cell(const struct nodes_view_node *n, char *buf,
    size_t len)
{
	const char *v[FEATURES_MAX];
	size_t k, i, j, at = 0, w;

	k = all_features(n, v);
	if (k == 0 || len == 0)
		return NULL;
	for (i = 0; i < k; i++) {
		for (j = 0; j < i; j++)
			if (strcmp(v[j], v[i]) == 0)
				break;
		if (j < i)
			continue;	/* configured and derived alike */
		w = strlen(v[i]);
		if (at + (at > 0) + w >= len)
			return NULL;
		if (at > 0)
			buf[at++] = ',';
		memcpy(buf + at, v[i], w);
		at += w;
	}
	buf[at] = '\0';
	return buf;
}

int
nodes_view_matches(const struct nodes_view_node *n, const char *expr)
{
	const char *v[FEATURES_MAX];

	return constraint_match(expr, v, all_features(n, v)) == 1;
}
