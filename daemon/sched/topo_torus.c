/* Torus and Dragonfly+ statements of the topology file (topo_torus.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/sched/htab.h"
#include "daemon/sched/topo.h"
#include "daemon/sched/topo_torus.h"
#include "lib/hostlist.h"

struct tcoord {
	char *name;
	uint32_t c[3];
	unsigned line;
	unsigned nc;		/* numbers given in Coord= */
};

struct topo_torus {
	char *name;
	unsigned line;		/* of TorusName=; 0: none yet */
	unsigned ndims;
	uint32_t dims[3];
	bool wrap[3];
	char *nodes;		/* Nodes= hostlist, or NULL */
	struct tcoord *co;	/* NodeCoord= lines, then Nodes= placed */
	size_t nco, capco;
	unsigned first_coord_line;
	struct htab *map;	/* node name -> index into co */
	size_t bytes;
};

static int	terr(const char *, unsigned, char *, size_t, const char *,
		    ...) __attribute__((format(printf, 5, 6)));

static int
terr(const char *file, unsigned line, char *err, size_t errlen,
    const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = topo_verrf(file, line, err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

enum topo_torus_stmt
topo_torus_kind(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\v' ||
	    *s == '\f')
		s++;
	if (strncasecmp(s, "TorusName=", 10) == 0 ||
	    strncasecmp(s, "NodeCoord=", 10) == 0)
		return TOPO_TORUS_TORUS;
	if (strncasecmp(s, "GroupName=", 10) == 0)
		return TOPO_TORUS_GROUP;
	return TOPO_TORUS_NONE;
}

/* A decimal in [lo, hi], the whole of [p, p + len). */
static int
number(const char *p, size_t len, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0 || len > 10)
		return -1;
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)p[i]))
			return -1;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	if (v < lo || v > hi)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* "a", "axb" or "axbxc" (sep 'x'), or "a,b,c" (sep ','); returns the
 * count, or -1. */
static int
numbers(const char *v, char sep, uint32_t lo, uint32_t hi, uint32_t out[3])
{
	const char *p = v, *e;
	int n = 0;

	for (;;) {
		e = strchr(p, sep);
		if (n == 3 || number(p, e != NULL ? (size_t)(e - p) :
		    strlen(p), lo, hi, &out[n]) == -1)
			return -1;
		n++;
		if (e == NULL)
			return n;
		p = e + 1;
	}
}

static int
yesno(const char *p, size_t len, bool *out)
{
	if ((len == 3 && strncasecmp(p, "yes", 3) == 0) ||
	    (len == 4 && strncasecmp(p, "true", 4) == 0) ||
	    (len == 1 && p[0] == '1'))
		*out = true;
	else if ((len == 2 && strncasecmp(p, "no", 2) == 0) ||
	    (len == 5 && strncasecmp(p, "false", 5) == 0) ||
	    (len == 1 && p[0] == '0'))
		*out = false;
	else
		return -1;
	return 0;
}

static int
wraps(const char *v, bool out[3])
{
	const char *p = v, *e;
	int n = 0;

	for (;;) {
		e = strchr(p, ',');
		if (n == 3 || yesno(p, e != NULL ? (size_t)(e - p) :
		    strlen(p), &out[n]) == -1)
			return -1;
		n++;
		if (e == NULL)
			return n;
		p = e + 1;
	}
}

static bool
good_name(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' &&
		    *s != '.')
			return false;
	return true;
}

static int
add_coord(struct topo_torus *tp, const char *name, const uint32_t c[3],
    unsigned line)
{
	struct tcoord *n;
	size_t cap;

	if (tp->nco == tp->capco) {
		cap = tp->capco ? tp->capco * 2 : 64;
		if ((n = realloc(tp->co, cap * sizeof(*n))) == NULL)
			return -1;
		tp->co = n;
		tp->capco = cap;
	}
	if ((tp->co[tp->nco].name = strdup(name)) == NULL)
		return -1;
	memcpy(tp->co[tp->nco].c, c, sizeof(tp->co[tp->nco].c));
	tp->co[tp->nco].line = line;
	tp->co[tp->nco].nc = 0;
	tp->nco++;
	return 0;
}

/* Split a line into at most 8 KEY=VALUE tokens; keys are checked by
 * the caller. Returns the count or -1 (a token without '='). */
static int
tokens(const char *file, unsigned line, char *s, char **key, char **val,
    char *err, size_t errlen)
{
	char *tok, *save = NULL, *eq;
	int n = 0, i;

	for (tok = strtok_r(s, " \t\r\v\f", &save); tok != NULL;
	    tok = strtok_r(NULL, " \t\r\v\f", &save)) {
		if ((eq = strchr(tok, '=')) == NULL)
			return terr(file, line, err, errlen, "expected "
			    "KEY=VALUE, got \"%.80s\"", tok);
		*eq++ = '\0';
		if (n == 8)
			return terr(file, line, err, errlen, "too many keys");
		for (i = 0; i < n; i++)
			if (strcasecmp(key[i], tok) == 0)
				return terr(file, line, err, errlen,
				    "%s= given twice", tok);
		if (*eq == '\0')
			return terr(file, line, err, errlen, "%s= has no "
			    "value", tok);
		key[n] = tok;
		val[n++] = eq;
	}
	return n;
}

static int
torus_stmt(struct topo_torus *tp, const char *file, unsigned line,
    char **key, char **val, int n, char *err, size_t errlen)
{
	const char *dims = NULL, *wrap = NULL, *nodes = NULL;
	uint32_t d[3];
	bool w[3];
	uint64_t cells;
	int i, nd, nw;

	for (i = 1; i < n; i++) {
		if (strcasecmp(key[i], "Dims") == 0)
			dims = val[i];
		else if (strcasecmp(key[i], "Wrap") == 0)
			wrap = val[i];
		else if (strcasecmp(key[i], "Nodes") == 0)
			nodes = val[i];
		else
			return terr(file, line, err, errlen, "unknown key "
			    "\"%.80s\" in a TorusName= line", key[i]);
	}
	if (tp->line != 0)
		return terr(file, line, err, errlen, "a second TorusName= "
		    "(torus %s is at line %u; one torus per file)", tp->name,
		    tp->line);
	if (!good_name(val[0]))
		return terr(file, line, err, errlen, "bad torus name "
		    "\"%.80s\"", val[0]);
	if (dims == NULL)
		return terr(file, line, err, errlen, "torus %s has no Dims=",
		    val[0]);
	if ((nd = numbers(dims, 'x', 1, TOPO_NODES_MAX, d)) < 0)
		return terr(file, line, err, errlen, "Dims=%.80s: expected 1 "
		    "to 3 sizes from 1 to %d joined by 'x' (16x16x40)", dims,
		    TOPO_NODES_MAX);
	for (cells = 1, i = 0; i < nd; i++)
		cells *= d[i];
	if (cells > TOPO_NODES_MAX)
		return terr(file, line, err, errlen, "Dims=%s holds more than "
		    "%d nodes", dims, TOPO_NODES_MAX);
	for (i = 0; i < 3; i++)
		w[i] = true;
	if (wrap != NULL) {
		if ((nw = wraps(wrap, w)) < 0 || (nw != 1 && nw != nd))
			return terr(file, line, err, errlen, "Wrap=%.80s: "
			    "expected yes or no, once or once per dimension",
			    wrap);
		if (nw == 1)
			w[1] = w[2] = w[0];
	}
	if ((tp->name = strdup(val[0])) == NULL ||
	    (nodes != NULL && (tp->nodes = strdup(nodes)) == NULL))
		return -1;
	tp->line = line;
	tp->ndims = (unsigned)nd;
	for (i = 0; i < 3; i++) {
		tp->dims[i] = i < nd ? d[i] : 1;
		tp->wrap[i] = i < nd ? w[i] : false;
	}
	return 0;
}

static int
coord_stmt(struct topo_torus *tp, const char *file, unsigned line,
    char **key, char **val, int n, char *err, size_t errlen)
{
	uint32_t c[3] = { 0, 0, 0 };
	const char *co = NULL;
	int i, nc;

	for (i = 1; i < n; i++) {
		if (strcasecmp(key[i], "Coord") == 0)
			co = val[i];
		else
			return terr(file, line, err, errlen, "unknown key "
			    "\"%.80s\" in a NodeCoord= line", key[i]);
	}
	if (!good_name(val[0]))
		return terr(file, line, err, errlen, "bad node name "
		    "\"%.80s\" in NodeCoord=", val[0]);
	if (co == NULL)
		return terr(file, line, err, errlen, "NodeCoord=%s has no "
		    "Coord=", val[0]);
	if ((nc = numbers(co, ',', 0, TOPO_NODES_MAX, c)) < 0)
		return terr(file, line, err, errlen, "Coord=%.80s: expected 1 "
		    "to 3 numbers joined by ',' (3,0,7)", co);
	/* The count is checked against Dims= once the torus is known. */
	if (tp->first_coord_line == 0)
		tp->first_coord_line = line;
	if (add_coord(tp, val[0], c, line) == -1)
		return -1;
	tp->co[tp->nco - 1].nc = (unsigned)nc;
	return 0;
}

int
topo_torus_line(struct topo_torus **tpp, const char *file, unsigned line,
    char *s, char *err, size_t errlen)
{
	char *key[8], *val[8];
	int n;

	if ((n = tokens(file, line, s, key, val, err, errlen)) < 0)
		return -1;
	if (*tpp == NULL && (*tpp = calloc(1, sizeof(**tpp))) == NULL)
		return -1;
	if (n > 0 && strcasecmp(key[0], "TorusName") == 0)
		return torus_stmt(*tpp, file, line, key, val, n, err, errlen);
	if (n > 0 && strcasecmp(key[0], "NodeCoord") == 0)
		return coord_stmt(*tpp, file, line, key, val, n, err, errlen);
	return terr(file, line, err, errlen, "TorusName= or NodeCoord= must "
	    "come first on its line");
}

void
topo_torus_group_free(struct topo_torus_group *g)
{
	size_t k;

	if (g == NULL)
		return;
	free(g->name);
	for (k = 0; k < g->nrouters; k++) {
		free(g->rname[k]);
		free(g->rnodes[k]);
	}
	free(g->rname);
	free(g->rnodes);
	memset(g, 0, sizeof(*g));
}

int
topo_torus_group(const char *file, unsigned line, char *s, size_t max,
    struct topo_torus_group *g, char *err, size_t errlen)
{
	char *key[8], *val[8], **names = NULL, msg[300], rn[300];
	const char *nodes = NULL, *per = NULL;
	uint32_t npr = 0;
	size_t count = 0, k, nr, take;
	int n, i;

	memset(g, 0, sizeof(*g));
	if ((n = tokens(file, line, s, key, val, err, errlen)) < 0)
		return -1;
	if (n == 0 || strcasecmp(key[0], "GroupName") != 0)
		return terr(file, line, err, errlen, "GroupName= must come "
		    "first on its line");
	for (i = 1; i < n; i++) {
		if (strcasecmp(key[i], "Nodes") == 0)
			nodes = val[i];
		else if (strcasecmp(key[i], "NodesPerRouter") == 0)
			per = val[i];
		else if (strcasecmp(key[i], "LinkSpeed") == 0)
			continue;
		else
			return terr(file, line, err, errlen, "unknown key "
			    "\"%.80s\" in a GroupName= line", key[i]);
	}
	if (!good_name(val[0]) || strlen(val[0]) > 200)
		return terr(file, line, err, errlen, "bad group name "
		    "\"%.80s\"", val[0]);
	if (nodes == NULL)
		return terr(file, line, err, errlen, "group %s has no Nodes=",
		    val[0]);
	if (per != NULL && number(per, strlen(per), 1, TOPO_NODES_MAX,
	    &npr) == -1)
		return terr(file, line, err, errlen, "NodesPerRouter=%.80s: "
		    "expected a number from 1 to %d", per, TOPO_NODES_MAX);
	if (hostlist_expand(nodes, max < TOPO_NODES_MAX ? max :
	    TOPO_NODES_MAX, &names, &count, msg, sizeof(msg)) == -1) {
		if (errno == E2BIG)
			return terr(file, line, err, errlen, "more than %d "
			    "nodes in the file (group %s)", TOPO_NODES_MAX,
			    val[0]);
		if (errno == EINVAL)
			return terr(file, line, err, errlen, "Nodes=: %s",
			    msg);
		return -1;
	}
	if (npr == 0 || npr > count)
		npr = (uint32_t)count;
	nr = (count + npr - 1) / npr;
	if (nr > TOPO_SWITCHES_MAX) {
		hostlist_free(names, count);
		return terr(file, line, err, errlen, "group %s needs more "
		    "than %d routers", val[0], TOPO_SWITCHES_MAX);
	}
	if ((g->name = strdup(val[0])) == NULL ||
	    (g->rname = calloc(nr, sizeof(char *))) == NULL ||
	    (g->rnodes = calloc(nr, sizeof(char *))) == NULL)
		goto nomem;
	for (k = 0; k < nr; k++) {
		take = count - k * npr < npr ? count - k * npr : npr;
		snprintf(rn, sizeof(rn), "%s-r%zu", val[0], k);
		if ((g->rname[k] = strdup(rn)) == NULL)
			goto nomem;
		g->nrouters = k + 1;
		if ((g->rnodes[k] = hostlist_compress(names + k * npr,
		    take)) == NULL) {
			if (errno == EINVAL) {
				hostlist_free(names, count);
				topo_torus_group_free(g);
				return terr(file, line, err, errlen, "group "
				    "%s: a node name cannot be a switch's "
				    "node", val[0]);
			}
			goto nomem;
		}
	}
	g->nnodes = count;
	hostlist_free(names, count);
	return 0;
nomem:
	hostlist_free(names, count);
	topo_torus_group_free(g);
	errno = ENOMEM;
	return -1;
}

static uint64_t
cell_of(const struct topo_torus *tp, const uint32_t c[3])
{
	return ((uint64_t)c[2] * tp->dims[1] + c[1]) * tp->dims[0] + c[0];
}

int
topo_torus_finish(struct topo_torus *tp, const char *file, char *err,
    size_t errlen)
{
	struct htab *cells = NULL;
	char **names = NULL, msg[300], cname[32];
	size_t count = 0, k, explicit, total;
	uint64_t next = 0, ncell;
	uint32_t c[3];
	unsigned nc, line;
	int64_t prev;
	int rc = -1;

	if (tp == NULL)
		return 0;
	if (tp->line == 0)
		return terr(file, tp->first_coord_line, err,
		    errlen, "NodeCoord= without a TorusName= line");
	ncell = (uint64_t)tp->dims[0] * tp->dims[1] * tp->dims[2];
	explicit = tp->nco;
	if ((cells = htab_create(explicit + 16, false)) == NULL)
		return -1;
	for (k = 0; k < explicit; k++) {
		nc = tp->co[k].nc;
		line = tp->co[k].line;
		if (nc != tp->ndims) {
			terr(file, line, err, errlen, "Coord= of %s has %u "
			    "numbers but torus %s has %u dimensions",
			    tp->co[k].name, nc, tp->name, tp->ndims);
			goto out;
		}
		for (nc = 0; nc < 3; nc++)
			if (tp->co[k].c[nc] >= tp->dims[nc]) {
				terr(file, line, err, errlen, "Coord= of %s is "
				    "outside Dims= (%u in dimension %u of size "
				    "%u)", tp->co[k].name, tp->co[k].c[nc],
				    nc + 1, tp->dims[nc]);
				goto out;
			}
		snprintf(cname, sizeof(cname), "%llu",
		    (unsigned long long)cell_of(tp, tp->co[k].c));
		if ((prev = htab_put(cells, cname, (int64_t)k)) !=
		    (int64_t)k) {
			terr(file, line, err, errlen, "%s and %s (line %u) "
			    "are both at that coordinate", tp->co[k].name,
			    tp->co[prev].name, tp->co[prev].line);
			goto out;
		}
	}
	if (tp->nodes != NULL) {
		if (hostlist_expand(tp->nodes, TOPO_NODES_MAX, &names, &count,
		    msg, sizeof(msg)) == -1) {
			if (errno == EINVAL)
				terr(file, tp->line, err, errlen, "Nodes=: %s",
				    msg);
			else if (errno == E2BIG)
				terr(file, tp->line, err, errlen, "more than "
				    "%d nodes in torus %s", TOPO_NODES_MAX,
				    tp->name);
			goto out;
		}
		if (count + explicit > ncell) {
			terr(file, tp->line, err, errlen, "torus %s: %zu nodes "
			    "but Dims= holds %llu", tp->name, count + explicit,
			    (unsigned long long)ncell);
			goto out;
		}
		for (k = 0; k < count; k++) {
			/* The next cell no NodeCoord= line took. */
			for (;; next++) {
				snprintf(cname, sizeof(cname), "%llu",
				    (unsigned long long)next);
				if (explicit == 0 || htab_get(cells, cname) < 0)
					break;
			}
			c[0] = (uint32_t)(next % tp->dims[0]);
			c[1] = (uint32_t)(next / tp->dims[0] % tp->dims[1]);
			c[2] = (uint32_t)(next / tp->dims[0] / tp->dims[1]);
			next++;
			if (add_coord(tp, names[k], c, tp->line) == -1)
				goto out;
		}
	}
	total = tp->nco;
	if ((tp->map = htab_create(total, false)) == NULL)
		goto out;
	for (k = 0; k < total; k++) {
		prev = htab_put(tp->map, tp->co[k].name, (int64_t)k);
		if (prev == (int64_t)k)
			continue;
		if (tp->co[k].line == tp->line && tp->co[prev].line ==
		    tp->line)
			terr(file, tp->line, err, errlen, "node %s listed "
			    "twice in Nodes= of torus %s", tp->co[k].name,
			    tp->name);
		else
			terr(file, tp->co[prev].line == tp->line ?
			    tp->co[prev].line : tp->co[k].line, err, errlen,
			    "node %s given twice (also at line %u)",
			    tp->co[k].name, tp->co[prev].line == tp->line ?
			    tp->co[k].line : tp->co[prev].line);
		goto out;
	}
	tp->bytes = sizeof(*tp) + tp->capco * sizeof(*tp->co) +
	    htab_bytes(tp->map);
	for (k = 0; k < total; k++)
		tp->bytes += strlen(tp->co[k].name) + 1;
	rc = 0;
out:
	hostlist_free(names, count);
	htab_destroy(cells);
	return rc;
}

void
topo_torus_free(struct topo_torus *tp)
{
	size_t k;

	if (tp == NULL)
		return;
	for (k = 0; k < tp->nco; k++)
		free(tp->co[k].name);
	free(tp->co);
	free(tp->name);
	free(tp->nodes);
	htab_destroy(tp->map);
	free(tp);
}

size_t
topo_torus_bytes(const struct topo_torus *tp)
{
	return tp != NULL ? tp->bytes : 0;
}

unsigned
topo_torus_dims(const struct topo_torus *tp, uint32_t dims[3],
    bool wrap[3])
{
	unsigned i;

	if (tp == NULL || tp->map == NULL)
		return 0;
	for (i = 0; i < 3; i++) {
		dims[i] = tp->dims[i];
		wrap[i] = tp->wrap[i];
	}
	return tp->ndims;
}

const char *
topo_torus_name(const struct topo_torus *tp)
{
	return tp != NULL ? tp->name : NULL;
}

size_t
topo_torus_nnodes(const struct topo_torus *tp)
{
	return tp != NULL && tp->map != NULL ? tp->nco : 0;
}

int
topo_torus_coord(const struct topo_torus *tp, const char *node,
    uint32_t c[3])
{
	int64_t i;

	if (tp == NULL || tp->map == NULL || node == NULL ||
	    (i = htab_get(tp->map, node)) < 0) {
		errno = ENOENT;
		return -1;
	}
	memcpy(c, tp->co[i].c, sizeof(tp->co[i].c));
	return 0;
}
