/* Slurm topology/block statements (see topo.h): BlockName=NAME
 * Nodes=HOSTLIST lines, each one NVLink domain spanning several nodes
 * (a GB200 NVL72 rack: 18 nodes), and one optional BlockSizes= line.
 * Lines are collected first; topo_block_finish expands the node lists
 * and checks the whole, reporting the line of the statement at fault. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/sched/htab.h"
#include "daemon/sched/topo.h"
#include "daemon/sched/topo_block.h"
#include "lib/hostlist.h"

struct tblock {
	char *name;
	char *expr;		/* Nodes= as written */
	unsigned line;
	size_t first, n;	/* its nodes: topo_blocks.nodes[first ..] */
};

struct topo_blocks {
	struct tblock *b;
	size_t nb, capb;
	uint32_t sizes[TOPO_BLOCK_SIZES_MAX];
	size_t nsizes;
	unsigned sizes_line;	/* 0: BlockSizes= not given */
	char **nodes;		/* block order, then file order */
	int32_t *node_block;
	size_t nnodes;
	struct htab *bmap;	/* block name -> index */
	struct htab *nodemap;	/* node name -> index into nodes */
};

static int	berr(const char *, unsigned, char *, size_t, const char *, ...)
	    __attribute__((format(printf, 5, 6)));

static int
berr(const char *file, unsigned line, char *err, size_t errlen,
    const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = topo_verrf(file, line, err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

bool
topo_block_is(const char *s)
{
	const char *p = s;
	size_t n;

	for (;;) {
		p += strspn(p, " \t\r\v\f");
		if (*p == '\0')
			return false;
		n = strcspn(p, " \t\r\v\f");
		if ((n >= 10 && strncasecmp(p, "BlockName=", 10) == 0) ||
		    (n >= 11 && strncasecmp(p, "BlockSizes=", 11) == 0))
			return true;
		p += n;
	}
}

void
topo_block_free(struct topo_blocks *bs)
{
	size_t i;

	if (bs == NULL)
		return;
	for (i = 0; i < bs->nb; i++) {
		free(bs->b[i].name);
		free(bs->b[i].expr);
	}
	free(bs->b);
	hostlist_free(bs->nodes, bs->nnodes);
	free(bs->node_block);
	htab_destroy(bs->bmap);
	htab_destroy(bs->nodemap);
	free(bs);
}

/* BlockSizes=18,36,72: positive, increasing, each a multiple of the
 * first (the base block size). */
static int
parse_sizes(struct topo_blocks *bs, const char *file, unsigned line,
    const char *v, char *err, size_t errlen)
{
	const char *p = v;
	char *end;
	unsigned long n;

	if (bs->sizes_line != 0)
		return berr(file, line, err, errlen, "BlockSizes= given again "
		    "(first at line %u)", bs->sizes_line);
	bs->sizes_line = line;
	for (;;) {
		if (*p < '0' || *p > '9')
			return berr(file, line, err, errlen, "BlockSizes=: "
			    "expected a number at \"%.40s\"", p);
		errno = 0;
		n = strtoul(p, &end, 10);
		if (errno != 0 || n == 0 || n > TOPO_BLOCK_NODES_MAX)
			return berr(file, line, err, errlen, "BlockSizes=: "
			    "%.20s is not a size from 1 to %d", p,
			    TOPO_BLOCK_NODES_MAX);
		if (bs->nsizes == TOPO_BLOCK_SIZES_MAX)
			return berr(file, line, err, errlen, "BlockSizes= has "
			    "more than %d sizes", TOPO_BLOCK_SIZES_MAX);
		if (bs->nsizes > 0 && n <= bs->sizes[bs->nsizes - 1])
			return berr(file, line, err, errlen, "BlockSizes=: "
			    "%lu is not above %u (sizes must increase)", n,
			    bs->sizes[bs->nsizes - 1]);
		if (bs->nsizes > 0 && n % bs->sizes[0] != 0)
			return berr(file, line, err, errlen, "BlockSizes=: "
			    "%lu is not a multiple of the base block size %u",
			    n, bs->sizes[0]);
		bs->sizes[bs->nsizes++] = (uint32_t)n;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return berr(file, line, err, errlen, "BlockSizes=: "
			    "unexpected \"%.20s\"", end);
		p = end + 1;
	}
}

static int
take_val(const char *file, unsigned line, char *err, size_t errlen,
    const char *key, char **slot, const char *v)
{
	if (*slot != NULL)
		return berr(file, line, err, errlen, "%s= given twice", key);
	if (*v == '\0')
		return berr(file, line, err, errlen, "%s= has no value", key);
	if ((*slot = strdup(v)) == NULL)
		return -1;
	return 0;
}

int
topo_block_line(struct topo_blocks **bp, const char *file, unsigned line,
    char *s, char *err, size_t errlen)
{
	struct topo_blocks *bs = *bp;
	struct tblock *nb;
	char *tok, *save = NULL, *eq, *name = NULL, *nodes = NULL;
	char *sizes = NULL;
	size_t cap;
	int rc = -1;

	if (bs == NULL) {
		if ((bs = calloc(1, sizeof(*bs))) == NULL)
			return -1;
		*bp = bs;
	}
	for (tok = strtok_r(s, " \t\r\v\f", &save); tok != NULL;
	    tok = strtok_r(NULL, " \t\r\v\f", &save)) {
		if ((eq = strchr(tok, '=')) == NULL) {
			berr(file, line, err, errlen, "expected KEY=VALUE, "
			    "got \"%.80s\"", tok);
			goto out;
		}
		*eq++ = '\0';
		if (strcasecmp(tok, "BlockName") == 0)
			rc = take_val(file, line, err, errlen, "BlockName",
			    &name, eq);
		else if (strcasecmp(tok, "Nodes") == 0)
			rc = take_val(file, line, err, errlen, "Nodes", &nodes,
			    eq);
		else if (strcasecmp(tok, "BlockSizes") == 0)
			rc = take_val(file, line, err, errlen, "BlockSizes",
			    &sizes, eq);
		else
			rc = berr(file, line, err, errlen, "unknown key "
			    "\"%.80s\" in a block statement", tok);
		if (rc == -1)
			goto out;
	}
	rc = -1;
	if (sizes != NULL) {
		if (name != NULL || nodes != NULL)
			berr(file, line, err, errlen, "BlockSizes= must be "
			    "alone on its line");
		else
			rc = parse_sizes(bs, file, line, sizes, err, errlen);
		goto out;
	}
	if (nodes == NULL) {
		berr(file, line, err, errlen, "block %s has no Nodes=", name);
		goto out;
	}
	if (bs->nb == TOPO_BLOCKS_MAX) {
		berr(file, line, err, errlen, "more than %d blocks",
		    TOPO_BLOCKS_MAX);
		goto out;
	}
	if (bs->nb == bs->capb) {
		cap = bs->capb ? bs->capb * 2 : 16;
		if ((nb = realloc(bs->b, cap * sizeof(*nb))) == NULL)
			goto out;
		bs->b = nb;
		bs->capb = cap;
	}
	memset(&bs->b[bs->nb], 0, sizeof(bs->b[bs->nb]));
	bs->b[bs->nb].name = name;
	bs->b[bs->nb].expr = nodes;
	bs->b[bs->nb].line = line;
	bs->nb++;
	name = nodes = NULL;
	rc = 0;
out:
	free(name);
	free(nodes);
	free(sizes);
	return rc;
}

static int
expand(struct topo_blocks *bs, const char *file, size_t i, char *err,
    size_t errlen)
{
	struct tblock *b = &bs->b[i];
	char **names = NULL, msg[300], **nn;
	size_t count = 0, k;
	int32_t *nbk;

	if (hostlist_expand(b->expr, TOPO_NODES_MAX - bs->nnodes, &names,
	    &count, msg, sizeof(msg)) == -1) {
		if (errno == E2BIG)
			return berr(file, b->line, err, errlen, "more than %d "
			    "nodes in the blocks", TOPO_NODES_MAX);
		if (errno == EINVAL)
			return berr(file, b->line, err, errlen, "Nodes=: %s",
			    msg);
		return -1;
	}
	if ((nn = realloc(bs->nodes, (bs->nnodes + count + 1) *
	    sizeof(*nn))) == NULL)
		goto nomem;
	bs->nodes = nn;
	if ((nbk = realloc(bs->node_block, (bs->nnodes + count + 1) *
	    sizeof(*nbk))) == NULL)
		goto nomem;
	bs->node_block = nbk;
	b->first = bs->nnodes;
	b->n = count;
	for (k = 0; k < count; k++) {
		bs->nodes[bs->nnodes] = names[k];
		bs->node_block[bs->nnodes++] = (int32_t)i;
	}
	free(names);
	return 0;
nomem:
	hostlist_free(names, count);
	return -1;
}

int
topo_block_finish(struct topo_blocks *bs, const char *file, char *err,
    size_t errlen)
{
	size_t i, most = 0;
	int64_t v, prev;
	uint32_t base;
	const struct tblock *a, *b;

	if (bs == NULL)
		return 0;
	if (bs->nb == 0)
		return berr(file, bs->sizes_line, err, errlen, "BlockSizes= "
		    "given but no BlockName= statement");
	if ((bs->bmap = htab_create(bs->nb, false)) == NULL)
		return -1;
	for (i = 0; i < bs->nb; i++) {
		v = htab_put(bs->bmap, bs->b[i].name, (int64_t)i);
		if (v != (int64_t)i)
			return berr(file, bs->b[i].line, err, errlen, "block "
			    "%s already defined at line %u", bs->b[i].name,
			    bs->b[v].line);
		if (expand(bs, file, i, err, errlen) == -1)
			return -1;
		if (bs->b[i].n > TOPO_BLOCK_NODES_MAX)
			return berr(file, bs->b[i].line, err, errlen, "block "
			    "%s has %zu nodes, more than %d", bs->b[i].name,
			    bs->b[i].n, TOPO_BLOCK_NODES_MAX);
		if (bs->b[i].n > most)
			most = bs->b[i].n;
	}
	if ((bs->nodemap = htab_create(bs->nnodes, false)) == NULL)
		return -1;
	for (i = 0; i < bs->nnodes; i++) {
		prev = htab_put(bs->nodemap, bs->nodes[i], (int64_t)i);
		if (prev == (int64_t)i)
			continue;
		a = &bs->b[bs->node_block[prev]];
		b = &bs->b[bs->node_block[i]];
		if (a == b)
			return berr(file, b->line, err, errlen, "node %s "
			    "listed twice in block %s", bs->nodes[i], b->name);
		return berr(file, b->line, err, errlen, "node %s is already "
		    "in block %s (line %u)", bs->nodes[i], a->name, a->line);
	}
	/* The base block size: BlockSizes='s first, else the largest
	 * block (a smaller one is a block with nodes missing). */
	if (bs->nsizes > 0) {
		base = bs->sizes[0];
		for (i = 0; i < bs->nb; i++)
			if (bs->b[i].n > base)
				return berr(file, bs->b[i].line, err, errlen,
				    "block %s has %zu nodes, more than the "
				    "base block size %u (BlockSizes= at line "
				    "%u)", bs->b[i].name, bs->b[i].n, base,
				    bs->sizes_line);
		return 0;
	}
	/* Default: the base and its power-of-two multiples up to the
	 * number of blocks. */
	base = (uint32_t)most;
	bs->sizes[bs->nsizes++] = base;
	for (i = 2; i <= bs->nb && bs->nsizes < TOPO_BLOCK_SIZES_MAX &&
	    (uint64_t)base * i <= UINT32_MAX; i *= 2)
		bs->sizes[bs->nsizes++] = base * (uint32_t)i;
	return 0;
}

size_t
topo_block_bytes(const struct topo_blocks *bs)
{
	size_t b, i;

	if (bs == NULL)
		return 0;
	b = sizeof(*bs) + bs->capb * sizeof(*bs->b);
	for (i = 0; i < bs->nb; i++)
		b += strlen(bs->b[i].name) + strlen(bs->b[i].expr) + 2;
	for (i = 0; i < bs->nnodes; i++)
		b += strlen(bs->nodes[i]) + 1 + sizeof(char *) +
		    sizeof(int32_t);
	return b + htab_bytes(bs->bmap) + htab_bytes(bs->nodemap);
}

size_t
topo_block_count(const struct topo_blocks *bs)
{
	return bs != NULL ? bs->nb : 0;
}

const char *
topo_block_name_of(const struct topo_blocks *bs, size_t b)
{
	return bs->b[b].name;
}

size_t
topo_block_nnodes_of(const struct topo_blocks *bs, size_t b)
{
	return bs->b[b].n;
}

int32_t
topo_block_of(const struct topo_blocks *bs, const char *node)
{
	int64_t i;

	if (bs == NULL || bs->nodemap == NULL || node == NULL)
		return -1;
	if ((i = htab_get(bs->nodemap, node)) < 0)
		return -1;
	return bs->node_block[i];
}

uint32_t
topo_block_sizes_of(const struct topo_blocks *bs, size_t i)
{
	return bs->sizes[i];
}

size_t
topo_block_nsizes_of(const struct topo_blocks *bs)
{
	return bs != NULL ? bs->nsizes : 0;
}
