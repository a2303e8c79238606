/* topology.conf parsing (see topo.h). Two phases: the first reads lines
 * into raw switch records, so a Switches= list may name a switch defined
 * further down; the second resolves names, parents and levels and checks
 * the tree, reporting the line of the statement at fault. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/sched/htab.h"
#include "daemon/sched/topo.h"
#include "daemon/sched/topo_block.h"
#include "daemon/sched/topo_torus.h"
#include "lib/hostlist.h"

#define TOPO_FILE_MAX (64 * 1024 * 1024)

struct tswitch {
	char *name;
	char *nodes;		/* Nodes= hostlist, or NULL */
	char *children;		/* Switches= hostlist, or NULL */
	unsigned line;
	int32_t parent;
	unsigned level;
};

struct topo {
	struct tswitch *sw;
	size_t nsw, capsw;
	char **nodes;		/* node names, file order */
	int32_t *node_leaf;
	size_t nnodes;
	struct htab *swmap;	/* switch name -> index */
	struct htab *nodemap;	/* node name -> index into nodes */
	char *levels[TOPO_LEVELS_MAX];	/* LevelNames=, or NULL */
	unsigned nlevels;	/* names given */
	unsigned levels_line;
	unsigned height;
	size_t bytes;
	struct topo_blocks *blk;	/* BlockName= statements, or NULL */
	struct topo_torus *torus;	/* TorusName=, or NULL */
	unsigned group_line;	/* first GroupName= line; 0: none */
	unsigned switch_line;	/* first SwitchName= line; 0: none */
};

/* What one parse needs to report errors. */
struct pctx {
	const char *file;
	char *err;
	size_t errlen;
	size_t gnodes;		/* nodes of the GroupName= lines so far */
};

static const char *const default_levels[] = { "leaf", "spine", "core" };

int
topo_verrf(const char *file, unsigned line, char *err, size_t errlen,
    const char *fmt, va_list ap)
{
	char what[400];

	if (err != NULL && errlen > 0) {
		vsnprintf(what, sizeof(what), fmt, ap);
		snprintf(err, errlen, "%s:%u: %s", file, line, what);
	}
	errno = EINVAL;
	return -1;
}

static int	perr(struct pctx *, unsigned, const char *, ...)
	    __attribute__((format(printf, 3, 4)));

static int
perr(struct pctx *pc, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = topo_verrf(pc->file, line, pc->err, pc->errlen, fmt, ap);
	va_end(ap);
	return rc;
}

void
topo_destroy(struct topo *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nsw; i++) {
		free(t->sw[i].name);
		free(t->sw[i].nodes);
		free(t->sw[i].children);
	}
	free(t->sw);
	hostlist_free(t->nodes, t->nnodes);
	free(t->node_leaf);
	htab_destroy(t->swmap);
	htab_destroy(t->nodemap);
	for (i = 0; i < TOPO_LEVELS_MAX; i++)
		free(t->levels[i]);
	topo_block_free(t->blk);
	topo_torus_free(t->torus);
	free(t);
}

static int
parse_levels(struct topo *t, struct pctx *pc, unsigned line, const char *v)
{
	const char *p = v, *e;
	size_t len;
	unsigned i;

	if (t->levels_line != 0)
		return perr(pc, line, "LevelNames= given again (first at "
		    "line %u)", t->levels_line);
	t->levels_line = line;
	for (;;) {
		e = strchr(p, ',');
		len = e != NULL ? (size_t)(e - p) : strlen(p);
		if (len == 0)
			return perr(pc, line, "empty name in LevelNames=");
		if (t->nlevels == TOPO_LEVELS_MAX)
			return perr(pc, line, "LevelNames= names more than %d "
			    "levels", TOPO_LEVELS_MAX);
		/* --topology torus and --topology block name the torus and
		 * the blocks: a tree level of either name would take such a
		 * job where no torus or blocks are, by other rules. */
		if ((len == 5 && strncasecmp(p, "torus", 5) == 0) ||
		    (len == 5 && strncasecmp(p, "block", 5) == 0))
			return perr(pc, line, "level name \"%.5s\" is "
			    "reserved (--topology torus and block)", p);
		if ((t->levels[t->nlevels] = strndup(p, len)) == NULL)
			return -1;
		for (i = 0; i < t->nlevels; i++)
			if (strcasecmp(t->levels[i],
			    t->levels[t->nlevels]) == 0)
				return perr(pc, line, "level name \"%s\" given "
				    "twice", t->levels[i]);
		t->nlevels++;
		if (e == NULL)
			return 0;
		p = e + 1;
	}
}

/* Copy a value into *slot, refusing a key given twice on one line. */
static int
take(struct pctx *pc, unsigned line, const char *key, char **slot,
    const char *v)
{
	if (*slot != NULL)
		return perr(pc, line, "%s= given twice", key);
	if (*v == '\0')
		return perr(pc, line, "%s= has no value", key);
	if ((*slot = strdup(v)) == NULL)
		return -1;
	return 0;
}

static int
add_switch(struct topo *t, struct tswitch *s)
{
	struct tswitch *n;
	size_t cap;

	if (t->nsw == t->capsw) {
		cap = t->capsw ? t->capsw * 2 : 16;
		if ((n = realloc(t->sw, cap * sizeof(*n))) == NULL)
			return -1;
		t->sw = n;
		t->capsw = cap;
	}
	t->sw[t->nsw++] = *s;
	return 0;
}

/* A Dragonfly+ group (topo_torus.h): its routers as leaf switches, the
 * group as the switch above them. */
static int
parse_group(struct topo *t, struct pctx *pc, unsigned line, char *s)
{
	struct topo_torus_group g;
	struct tswitch sw;
	size_t k, len = 0;
	char *kids;

	if (t->switch_line != 0)
		return perr(pc, line, "GroupName= in a file with SwitchName= "
		    "(line %u): a file describes a tree or Dragonfly+ groups",
		    t->switch_line);
	if (topo_torus_group(pc->file, line, s, TOPO_NODES_MAX - pc->gnodes,
	    &g, pc->err, pc->errlen) == -1)
		return -1;
	pc->gnodes += g.nnodes;
	if (t->nsw + g.nrouters + 1 > TOPO_SWITCHES_MAX) {
		topo_torus_group_free(&g);
		return perr(pc, line, "more than %d switches",
		    TOPO_SWITCHES_MAX);
	}
	for (k = 0; k < g.nrouters; k++)
		len += strlen(g.rname[k]) + 1;
	if ((kids = malloc(len + 1)) == NULL)
		goto nomem;
	kids[0] = '\0';
	for (k = 0; k < g.nrouters; k++) {
		if (k > 0)
			strcat(kids, ",");
		strcat(kids, g.rname[k]);
	}
	for (k = 0; k < g.nrouters; k++) {
		memset(&sw, 0, sizeof(sw));
		sw.line = line;
		sw.parent = -1;
		sw.name = g.rname[k];
		sw.nodes = g.rnodes[k];
		if (add_switch(t, &sw) == -1) {
			free(kids);
			goto nomem;
		}
		g.rname[k] = g.rnodes[k] = NULL;
	}
	memset(&sw, 0, sizeof(sw));
	sw.line = line;
	sw.parent = -1;
	sw.name = g.name;
	sw.children = kids;
	if (add_switch(t, &sw) == -1) {
		free(kids);
		goto nomem;
	}
	g.name = NULL;
	if (t->group_line == 0)
		t->group_line = line;
	topo_torus_group_free(&g);
	return 0;
nomem:
	topo_torus_group_free(&g);
	errno = ENOMEM;
	return -1;
}

/* Parse one line, already cut at its comment, as NUL-terminated text. */
static int
parse_line(struct topo *t, struct pctx *pc, unsigned line, char *s)
{
	struct tswitch sw;
	char *tok, *save = NULL, *eq, *lv = NULL, *speed = NULL;
	int rc = -1;

	/* Block statements have a parser of their own (topo_block.c). */
	if (topo_block_is(s))
		return topo_block_line(&t->blk, pc->file, line, s, pc->err,
		    pc->errlen);
	switch (topo_torus_kind(s)) {
	case TOPO_TORUS_TORUS:
		return topo_torus_line(&t->torus, pc->file, line, s, pc->err,
		    pc->errlen);
	case TOPO_TORUS_GROUP:
		return parse_group(t, pc, line, s);
	default:
		break;
	}
	memset(&sw, 0, sizeof(sw));
	sw.line = line;
	sw.parent = -1;
	for (tok = strtok_r(s, " \t\r\v\f", &save); tok != NULL;
	    tok = strtok_r(NULL, " \t\r\v\f", &save)) {
		if ((eq = strchr(tok, '=')) == NULL) {
			rc = perr(pc, line, "expected KEY=VALUE, got \"%.80s\"",
			    tok);
			goto out;
		}
		*eq++ = '\0';
		if (strcasecmp(tok, "SwitchName") == 0)
			rc = take(pc, line, "SwitchName", &sw.name, eq);
		else if (strcasecmp(tok, "Nodes") == 0)
			rc = take(pc, line, "Nodes", &sw.nodes, eq);
		else if (strcasecmp(tok, "Switches") == 0)
			rc = take(pc, line, "Switches", &sw.children, eq);
		else if (strcasecmp(tok, "LinkSpeed") == 0)
			rc = take(pc, line, "LinkSpeed", &speed, eq);
		else if (strcasecmp(tok, "LevelNames") == 0)
			rc = take(pc, line, "LevelNames", &lv, eq);
		else
			rc = perr(pc, line, "unknown key \"%.80s\"", tok);
		if (rc == -1)
			goto out;
	}
	rc = -1;
	if (lv != NULL) {
		if (sw.name != NULL || sw.nodes != NULL || sw.children != NULL)
			perr(pc, line, "LevelNames= must be alone on its line");
		else
			rc = parse_levels(t, pc, line, lv);
		goto out;
	}
	if (sw.name == NULL) {
		if (sw.nodes == NULL && sw.children == NULL && speed == NULL)
			rc = 0;		/* blank line */
		else
			perr(pc, line, "missing SwitchName=");
		goto out;
	}
	if (sw.nodes != NULL && sw.children != NULL) {
		perr(pc, line, "switch %s has both Nodes= and Switches=",
		    sw.name);
		goto out;
	}
	if (sw.nodes == NULL && sw.children == NULL) {
		perr(pc, line, "switch %s has neither Nodes= nor Switches=",
		    sw.name);
		goto out;
	}
	if (t->nsw == TOPO_SWITCHES_MAX) {
		perr(pc, line, "more than %d switches", TOPO_SWITCHES_MAX);
		goto out;
	}
	if (t->group_line != 0) {
		perr(pc, line, "SwitchName= in a file with GroupName= (line "
		    "%u): a file describes a tree or Dragonfly+ groups",
		    t->group_line);
		goto out;
	}
	if (t->switch_line == 0)
		t->switch_line = line;
	if (add_switch(t, &sw) == -1)
		goto out;
	memset(&sw, 0, sizeof(sw));
	rc = 0;
out:
	free(sw.name);
	free(sw.nodes);
	free(sw.children);
	free(lv);
	free(speed);
	return rc;
}

static int
read_lines(struct topo *t, struct pctx *pc, const char *text, size_t len)
{
	const char *p = text, *end = text + len, *nl;
	char *buf, *hash;
	unsigned line = 0;
	size_t n;

	while (p < end) {
		line++;
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		if (memchr(p, '\0', n) != NULL)
			return perr(pc, line, "NUL byte in the file");
		if ((buf = strndup(p, n)) == NULL)
			return -1;
		if ((hash = strchr(buf, '#')) != NULL)
			*hash = '\0';
		if (parse_line(t, pc, line, buf) == -1) {
			free(buf);
			return -1;
		}
		free(buf);
		p = nl != NULL ? nl + 1 : end;
	}
	return 0;
}

static int
index_switches(struct topo *t, struct pctx *pc)
{
	size_t i;
	int64_t v;

	if ((t->swmap = htab_create(t->nsw, false)) == NULL)
		return -1;
	for (i = 0; i < t->nsw; i++) {
		v = htab_put(t->swmap, t->sw[i].name, (int64_t)i);
		if (v != (int64_t)i)
			return perr(pc, t->sw[i].line, "switch %s already "
			    "defined at line %u", t->sw[i].name,
			    t->sw[v].line);
	}
	return 0;
}

/* Append the nodes of leaf i; duplicates are found once all are in. */
static int
add_nodes(struct topo *t, struct pctx *pc, size_t i)
{
	struct tswitch *s = &t->sw[i];
	char **names = NULL, msg[300], **nn;
	size_t count = 0, k, cap;
	int32_t *nl;

	if (hostlist_expand(s->nodes, TOPO_NODES_MAX - t->nnodes, &names,
	    &count, msg, sizeof(msg)) == -1) {
		if (errno == E2BIG)
			return perr(pc, s->line, "more than %d nodes in the "
			    "file", TOPO_NODES_MAX);
		if (errno == EINVAL)
			return perr(pc, s->line, "Nodes=: %s", msg);
		return -1;
	}
	cap = t->nnodes + count;
	if ((nn = realloc(t->nodes, cap * sizeof(*nn))) == NULL)
		goto nomem;
	t->nodes = nn;
	if ((nl = realloc(t->node_leaf, cap * sizeof(*nl))) == NULL)
		goto nomem;
	t->node_leaf = nl;
	for (k = 0; k < count; k++) {
		t->nodes[t->nnodes] = names[k];
		t->node_leaf[t->nnodes] = (int32_t)i;
		t->nnodes++;
	}
	free(names);
	return 0;
nomem:
	hostlist_free(names, count);
	return -1;
}

/* Map node names to their index, refusing a node under two leaves; the
 * later statement is the one at fault. */
static int
index_nodes(struct topo *t, struct pctx *pc)
{
	size_t i;
	int64_t prev;
	const struct tswitch *a, *b;

	if ((t->nodemap = htab_create(t->nnodes, false)) == NULL)
		return -1;
	for (i = 0; i < t->nnodes; i++) {
		prev = htab_put(t->nodemap, t->nodes[i], (int64_t)i);
		if (prev == (int64_t)i)
			continue;
		a = &t->sw[t->node_leaf[prev]];
		b = &t->sw[t->node_leaf[i]];
		if (a == b)
			return perr(pc, b->line, "node %s listed twice under "
			    "switch %s", t->nodes[i], b->name);
		return perr(pc, b->line, "node %s is already under switch %s "
		    "(line %u)", t->nodes[i], a->name, a->line);
	}
	return 0;
}

/* Set the parent of every switch named in the Switches= of switch i. */
static int
link_children(struct topo *t, struct pctx *pc, size_t i)
{
	struct tswitch *s = &t->sw[i], *c;
	char **names = NULL, msg[300];
	size_t count = 0, k;
	int64_t ci;
	int rc = -1;

	if (hostlist_expand(s->children, TOPO_SWITCHES_MAX, &names, &count,
	    msg, sizeof(msg)) == -1) {
		if (errno == E2BIG)
			return perr(pc, s->line, "more than %d switches",
			    TOPO_SWITCHES_MAX);
		if (errno == EINVAL)
			return perr(pc, s->line, "Switches=: %s", msg);
		return -1;
	}
	for (k = 0; k < count; k++) {
		if ((ci = htab_get(t->swmap, names[k])) < 0) {
			perr(pc, s->line, "unknown switch %s in Switches=",
			    names[k]);
			goto out;
		}
		c = &t->sw[ci];
		if ((size_t)ci == i) {
			perr(pc, s->line, "switch %s lists itself",
			    s->name);
			goto out;
		}
		if (c->parent >= 0) {
			perr(pc, s->line, "switch %s is already under switch "
			    "%s (line %u)", c->name, t->sw[c->parent].name,
			    t->sw[c->parent].line);
			goto out;
		}
		c->parent = (int32_t)i;
	}
	rc = 0;
out:
	hostlist_free(names, count);
	return rc;
}

/* Each switch has at most one parent, so a cycle is a parent chain that
 * comes back; walking at most nsw steps up from each switch finds it. */
static int
check_cycles(struct topo *t, struct pctx *pc)
{
	size_t i, steps;
	int32_t p;

	for (i = 0; i < t->nsw; i++) {
		p = t->sw[i].parent;
		for (steps = 0; p >= 0 && steps <= t->nsw; steps++) {
			if ((size_t)p == i)
				return perr(pc, t->sw[i].line, "switch %s is "
				    "its own ancestor (the Switches= lists "
				    "form a cycle)", t->sw[i].name);
			p = t->sw[p].parent;
		}
	}
	return 0;
}

/* Levels bottom-up: leaves 0, others one above their highest child,
 * found by walking up from every leaf and raising each ancestor. */
static int
compute_levels(struct topo *t, struct pctx *pc)
{
	size_t i;
	int32_t p;
	unsigned lv;

	for (i = 0; i < t->nsw; i++)
		t->sw[i].level = 0;
	for (i = 0; i < t->nsw; i++) {
		if (t->sw[i].nodes == NULL)
			continue;
		lv = 0;
		for (p = t->sw[i].parent; p >= 0; p = t->sw[p].parent) {
			lv++;
			if (t->sw[p].level >= lv)
				break;
			t->sw[p].level = lv;
		}
	}
	/* Every switch has nodes or children and there is no cycle, so
	 * every switch above switches has a leaf below it and level > 0. */
	t->height = 0;
	for (i = 0; i < t->nsw; i++) {
		if (t->sw[i].level >= TOPO_LEVELS_MAX)
			return perr(pc, t->sw[i].line, "switch %s is more "
			    "than %d levels above its leaves", t->sw[i].name,
			    TOPO_LEVELS_MAX - 1);
		if (t->sw[i].level + 1 > t->height)
			t->height = t->sw[i].level + 1;
	}
	if (t->nlevels > 0 && t->nlevels < t->height)
		return perr(pc, t->levels_line, "LevelNames= names %u "
		    "levels but the tree has %u", t->nlevels, t->height);
	return 0;
}

static size_t
account(const struct topo *t)
{
	size_t b = sizeof(*t) + t->capsw * sizeof(*t->sw), i;

	for (i = 0; i < t->nsw; i++)
		b += strlen(t->sw[i].name) + 1;
	for (i = 0; i < t->nnodes; i++)
		b += strlen(t->nodes[i]) + 1 + sizeof(char *) +
		    sizeof(int32_t);
	return b + htab_bytes(t->swmap) + htab_bytes(t->nodemap);
}

struct topo *
topo_parse(const char *text, size_t len, const char *file, char *err,
    size_t errlen)
{
	struct pctx pc = { file != NULL ? file : "topology", err, errlen, 0 };
	struct topo *t;
	size_t i;
	int saved;

	if (text == NULL && len > 0) {
		errno = EINVAL;
		return NULL;
	}
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	if (read_lines(t, &pc, text, len) == -1 ||
	    index_switches(t, &pc) == -1)
		goto fail;
	for (i = 0; i < t->nsw; i++) {
		if (t->sw[i].nodes != NULL && add_nodes(t, &pc, i) == -1)
			goto fail;
		if (t->sw[i].children != NULL &&
		    link_children(t, &pc, i) == -1)
			goto fail;
	}
	if (t->group_line != 0 && t->nlevels == 0) {
		/* Dragonfly+: name the two levels the groups make. */
		if ((t->levels[0] = strdup("router")) == NULL ||
		    (t->levels[1] = strdup("group")) == NULL)
			goto fail;
		t->nlevels = 2;
		t->levels_line = t->group_line;
	}
	if (index_nodes(t, &pc) == -1 || check_cycles(t, &pc) == -1 ||
	    compute_levels(t, &pc) == -1 ||
	    topo_block_finish(t->blk, pc.file, err, errlen) == -1 ||
	    topo_torus_finish(t->torus, pc.file, err, errlen) == -1)
		goto fail;
	t->bytes = account(t) + topo_block_bytes(t->blk) +
	    topo_torus_bytes(t->torus);
	return t;
fail:
	saved = errno;
	topo_destroy(t);
	errno = saved;
	return NULL;
}

struct topo *
topo_load_file(const char *path, char *err, size_t errlen)
{
	struct topo *t;
	struct stat st;
	char *buf;
	size_t got = 0;
	ssize_t n;
	int fd, saved;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		goto syserr;
	if (fstat(fd, &st) == -1 || st.st_size > TOPO_FILE_MAX) {
		if (errno == 0 || st.st_size > TOPO_FILE_MAX)
			errno = EFBIG;
		close(fd);
		goto syserr;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		goto syserr;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	saved = errno;
	close(fd);
	if (got < (size_t)st.st_size) {
		free(buf);
		errno = saved != 0 ? saved : EIO;
		goto syserr;
	}
	t = topo_parse(buf, got, path, err, errlen);
	saved = errno;
	free(buf);
	errno = saved;
	return t;
syserr:
	saved = errno;
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s: %s", path, strerror(saved));
	errno = saved;
	return NULL;
}

size_t
topo_nswitches(const struct topo *t)
{
	return t != NULL ? t->nsw : 0;
}

const char *
topo_switch_name(const struct topo *t, size_t sw)
{
	return t->sw[sw].name;
}

int32_t
topo_switch_parent(const struct topo *t, size_t sw)
{
	return t->sw[sw].parent;
}

unsigned
topo_switch_level(const struct topo *t, size_t sw)
{
	return t->sw[sw].level;
}

unsigned
topo_height(const struct topo *t)
{
	return t != NULL ? t->height : 0;
}

int
topo_level_index(const struct topo *t, const char *name)
{
	unsigned i;
	char *end;
	unsigned long n;

	if (name == NULL)
		return -1;
	if (t != NULL && t->nlevels > 0) {
		for (i = 0; i < t->nlevels; i++)
			if (strcasecmp(t->levels[i], name) == 0)
				return (int)i;
		return -1;
	}
	for (i = 0; i < sizeof(default_levels) / sizeof(*default_levels); i++)
		if (strcasecmp(default_levels[i], name) == 0)
			return (int)i;
	if (strncasecmp(name, "level", 5) == 0 &&
	    isdigit((unsigned char)name[5])) {
		errno = 0;
		n = strtoul(name + 5, &end, 10);
		if (errno == 0 && *end == '\0' && n >= 3 &&
		    n < TOPO_LEVELS_MAX)
			return (int)n;
	}
	return -1;
}

const char *
topo_level_name(const struct topo *t, unsigned level)
{
	static const char *const deep[TOPO_LEVELS_MAX] = {
		"leaf", "spine", "core", "level3", "level4", "level5",
		"level6", "level7", "level8", "level9", "level10", "level11",
		"level12", "level13", "level14", "level15",
	};

	if (t != NULL && level < t->nlevels)
		return t->levels[level];
	return level < TOPO_LEVELS_MAX ? deep[level] : "?";
}

int32_t
topo_node_leaf(const struct topo *t, const char *node)
{
	int64_t i;

	if (t == NULL || t->nodemap == NULL || node == NULL)
		return -1;
	if ((i = htab_get(t->nodemap, node)) < 0)
		return -1;
	return t->node_leaf[i];
}

const struct topo_torus *
topo_torus(const struct topo *t)
{
	return t != NULL ? t->torus : NULL;
}

size_t
topo_nnodes(const struct topo *t)
{
	return t != NULL ? t->nnodes : 0;
}

size_t
topo_bytes(const struct topo *t)
{
	return t != NULL ? t->bytes : 0;
}

size_t
topo_nblocks(const struct topo *t)
{
	return t != NULL ? topo_block_count(t->blk) : 0;
}

const char *
topo_block_name(const struct topo *t, size_t b)
{
	return topo_block_name_of(t->blk, b);
}

size_t
topo_block_nnodes(const struct topo *t, size_t b)
{
	return topo_block_nnodes_of(t->blk, b);
}

int32_t
topo_node_block(const struct topo *t, const char *node)
{
	return t != NULL ? topo_block_of(t->blk, node) : -1;
}

size_t
topo_nblock_sizes(const struct topo *t)
{
	return t != NULL ? topo_block_nsizes_of(t->blk) : 0;
}

uint32_t
topo_block_size(const struct topo *t, size_t i)
{
	return topo_block_sizes_of(t->blk, i);
}
