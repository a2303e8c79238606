/* Restart placement: a job that names its previous gang (sched_job.
 * prev_nodes) keeps every node of it that still fits, at its old rank,
 * and gets replacements as close to the kept nodes as the tree allows:
 * first the kept nodes' leaves, then their spines, and so on, a hot
 * spare before another node at the same distance. With a required level
 * all nodes stay in one domain at that level: the one holding the most
 * kept nodes that can still hold the gang. When no domain can, or no
 * previous node fits, sched.c places the job afresh.
 *
 * The search grows level by level from the kept nodes and walks only
 * the nodes of the smallest region that holds enough replacements, so a
 * restart that finds its replacement in its own leaf costs the leaf. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sched/sched_int.h"
#include "daemon/sched/topo.h"

/* A previous node kept, with its old rank. */
struct kept {
	uint32_t rank;
	uint32_t node;
};

/* A replacement candidate. */
struct rcand {
	uint32_t dist;		/* level of its nearest switch above a kept
				 * node */
	uint32_t node;
	uint64_t key;		/* place_rank: smaller is better, unique */
	uint64_t mask;
	uint8_t spare;
	uint8_t degraded;
	uint8_t suspect;
};

struct keep {
	uint32_t gen;
	uint32_t *nstamp;	/* [nnodes]: gen while kept */
	uint32_t *above;	/* [nsw]: gen while above a kept node */
	uint32_t *seen;		/* [nsw]: gen of the last region walk */
	uint32_t *nkept;	/* [nsw]: kept nodes per domain */
	uint32_t *region;	/* [nsw] */
	uint32_t *stack;	/* [nsw] */
	struct kept *kept;	/* [nnodes] */
	struct rcand *cand;	/* [nnodes] */
};

static struct keep *
keep_scratch(struct pass *ps)
{
	struct keep *k = ps->keep;
	uint32_t nsw = ps->t.nsw, nn = ps->nnodes;

	if (k != NULL)
		return k;
	if ((k = state_alloc(ps, 1, sizeof(*k))) == NULL ||
	    (k->nstamp = state_alloc(ps, nn + 1, 4)) == NULL ||
	    (k->above = state_alloc(ps, nsw, 4)) == NULL ||
	    (k->seen = state_alloc(ps, nsw, 4)) == NULL ||
	    (k->nkept = state_alloc(ps, nsw, 4)) == NULL ||
	    (k->region = state_alloc(ps, nsw, 4)) == NULL ||
	    (k->stack = state_alloc(ps, nsw, 4)) == NULL ||
	    (k->kept = state_alloc(ps, nn + 1, sizeof(*k->kept))) == NULL ||
	    (k->cand = state_alloc(ps, nn + 1, sizeof(*k->cand))) == NULL)
		return NULL;
	ps->keep = k;
	return k;
}

/* A fresh stamp. A job takes at most a few more than the tree has
 * levels; keep_place starts the stamps over long before they wrap. */
static uint32_t
next_gen(struct keep *k)
{
	return ++k->gen;
}

static int
rcand_cmp(const void *a, const void *b)
{
	const struct rcand *x = a, *y = b;

	/* A node that fails jobs is worse than a farther switch. */
	if (x->suspect != y->suspect)
		return x->suspect < y->suspect ? -1 : 1;
	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	if (x->degraded != y->degraded)
		return x->degraded < y->degraded ? -1 : 1;
	if (x->spare != y->spare)
		return x->spare > y->spare ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* The previous nodes that still fit, in old rank order: up, not
 * drained, health OK (a DEGRADED node is not kept, though it may come
 * back as a replacement), the GPUs the job needs free. A node listed
 * twice or out of range counts once or not at all. */
static uint32_t
collect(struct pass *ps, struct keep *k, const struct sched_job *jb,
    const struct preq *rq, uint32_t gen)
{
	uint32_t r, i, n = 0;

	for (r = 0; r < jb->nprev; r++) {
		i = jb->prev_nodes[r];
		if (i >= ps->nnodes || k->nstamp[i] == gen)
			continue;
		k->nstamp[i] = gen;
		if ((ps->nodes[i].flags & PN_DEGRADED) ||
		    !state_fits(ps, i, rq, ps->nodes[i].free))
			continue;
		k->kept[n].rank = r;
		k->kept[n++].node = i;
	}
	return n;
}

/* The domain at level rq->cap to keep: of those that can hold the
 * job's minimum, the one with the most kept nodes, then the one holding
 * the lowest old rank; NO_INDEX when none can. The kept list is cut to
 * that domain's nodes. */
static uint32_t
choose_domain(struct pass *ps, struct keep *k, const struct sched_job *jb,
    const struct preq *rq, uint32_t *nkept)
{
	const int32_t *cnt = ps->cnt;
	uint32_t x, d, best = NO_INDEX, n = 0, gen = next_gen(k);

	for (x = 0; x < *nkept; x++) {
		d = place_domain(ps, ps->nodes[k->kept[x].node].leaf, rq->cap);
		if (k->seen[d] != gen) {
			k->seen[d] = gen;
			k->nkept[d] = 0;
		}
		k->nkept[d]++;
	}
	for (x = 0; x < *nkept; x++) {
		d = place_domain(ps, ps->nodes[k->kept[x].node].leaf, rq->cap);
		if ((uint32_t)cnt[d] < jb->nodes_min)
			continue;
		if (best == NO_INDEX || k->nkept[d] > k->nkept[best])
			best = d;
	}
	if (best == NO_INDEX)
		return NO_INDEX;
	for (x = 0; x < *nkept; x++) {
		d = place_domain(ps, ps->nodes[k->kept[x].node].leaf, rq->cap);
		if (d == best)
			k->kept[n++] = k->kept[x];
	}
	*nkept = n;
	return best;
}

/* Mark every switch above a kept node. */
static void
mark_above(struct pass *ps, struct keep *k, uint32_t nkept, uint32_t gen)
{
	uint32_t x;
	int32_t s;

	for (x = 0; x < nkept; x++)
		for (s = (int32_t)ps->nodes[k->kept[x].node].leaf;
		    s >= 0 && k->above[s] != gen; s = ps->t.parent[s])
			k->above[s] = gen;
}

/* The domains at level L holding kept nodes into k->region; returns
 * how many, and in *avail the fitting nodes they hold beyond the kept. */
static uint32_t
regions(struct pass *ps, struct keep *k, uint32_t nkept, uint32_t L,
    uint64_t *avail)
{
	uint32_t x, d, nr = 0, gen = next_gen(k);
	uint64_t sum = 0;

	for (x = 0; x < nkept; x++) {
		d = place_domain(ps, ps->nodes[k->kept[x].node].leaf, L);
		if (k->seen[d] == gen)
			continue;
		k->seen[d] = gen;
		k->region[nr++] = d;
		sum += (uint64_t)ps->cnt[d];
	}
	*avail = sum - nkept;
	return nr;
}

/* Add the fitting, not kept nodes under switch s to the candidates. */
static uint32_t
walk_region(struct pass *ps, struct keep *k, const struct preq *rq,
    uint32_t s, uint32_t gen, uint32_t nc)
{
	const struct ptopo *t = &ps->t;
	uint32_t sp = 0, i, node;
	int32_t a;
	struct rcand *rc;

	k->stack[sp++] = s;
	while (sp > 0) {
		s = k->stack[--sp];
		for (i = t->child_off[s]; i < t->child_off[s + 1]; i++)
			k->stack[sp++] = t->child[i];
		for (i = t->node_off[s]; i < t->node_off[s + 1]; i++) {
			node = t->node[i];
			if (k->nstamp[node] == gen ||
			    !state_fits(ps, node, rq, ps->nodes[node].free))
				continue;
			rc = &k->cand[nc++];
			rc->node = node;
			rc->key = place_rank(ps, node, ps->nodes[node].free, rq,
			    &rc->mask);
			rc->spare = (ps->nodes[node].flags & PN_SPARE) != 0;
			rc->degraded =
			    (ps->nodes[node].flags & PN_DEGRADED) != 0;
			rc->suspect =
			    (ps->nodes[node].flags & PN_SUSPECT) != 0;
			for (a = (int32_t)s; a >= 0 && k->above[a] != gen;
			    a = t->parent[a])
				;
			rc->dist = a >= 0 ? t->level[a] : t->rootlevel + 1;
		}
	}
	return nc;
}

/* Choose want replacements under the smallest region around the kept
 * nodes that holds them; they land in k->cand[0 .. want), best first. */
static void
replacements(struct pass *ps, struct keep *k, const struct preq *rq,
    uint32_t nkept, uint32_t want, uint32_t gen, uint32_t top)
{
	uint32_t L, nr = 0, x, nc = 0;
	uint64_t avail = 0;

	mark_above(ps, k, nkept, gen);
	for (L = 0; L <= top; L++) {
		nr = regions(ps, k, nkept, L, &avail);
		if (avail >= want)
			break;
	}
	for (x = 0; x < nr; x++)
		nc = walk_region(ps, k, rq, k->region[x], gen, nc);
	qsort(k->cand, nc, sizeof(*k->cand), rcand_cmp);
}

int
keep_place(struct pass *ps, size_t j, const struct preq *rq, uint32_t *np)
{
	const struct sched_job *jb = &ps->in->pending[j];
	struct keep *k;
	struct pick *out;
	uint32_t nkept, gen, d, n, want, r, kp = 0, rp = 0, o = 0, top;
	unsigned q;

	if ((k = keep_scratch(ps)) == NULL)
		return -1;
	if (k->gen > UINT32_MAX - 4 * (TOPO_LEVELS_MAX + 8)) {
		memset(k->nstamp, 0, (size_t)ps->nnodes * 4);
		memset(k->above, 0, (size_t)ps->t.nsw * 4);
		memset(k->seen, 0, (size_t)ps->t.nsw * 4);
		k->gen = 0;
	}
	gen = next_gen(k);
	if ((nkept = collect(ps, k, jb, rq, gen)) == 0)
		return 0;
	if (rq->cap < ps->t.rootlevel) {
		if ((d = choose_domain(ps, k, jb, rq, &nkept)) == NO_INDEX)
			return 0;
		top = rq->cap;
	} else {
		d = ps->t.root;
		top = ps->t.rootlevel;
	}
	/* The largest size in [min, max] the domain holds; the caller saw
	 * that some domain holds the minimum, choose_domain that this one
	 * does. */
	n = (uint32_t)ps->cnt[d] < jb->nodes_max ? (uint32_t)ps->cnt[d] :
	    jb->nodes_max;
	if (n < jb->nodes_min)
		return 0;
	if (nkept > n)
		nkept = n;
	want = n - nkept;
	/* choose_domain used the stamps of the regions: renew the kept
	 * ones for the walk. */
	gen = next_gen(k);
	for (r = 0; r < nkept; r++)
		k->nstamp[k->kept[r].node] = gen;
	if (want > 0)
		replacements(ps, k, rq, nkept, want, gen, top);
	if (sched_grow_picks(ps, n) == -1)
		return -1;
	out = ps->picks + ps->npicks;
	/* Old ranks in order: a kept node keeps its place, a freed rank
	 * takes the next replacement, a freed rank left over is closed up;
	 * more replacements than freed ranks go last. */
	for (r = 0; r < jb->nprev && o < n; r++) {
		if (kp < nkept && k->kept[kp].rank == r) {
			out[o].node = k->kept[kp++].node;
			out[o].mask = rq->cpu ? 0 : rq->g == 0 ?
			    ps->nodes[out[o].node].full :
			    place_gpus(ps, out[o].node,
			    ps->nodes[out[o].node].free, rq->g, &q);
			o++;
		} else if (rp < want) {
			out[o].node = k->cand[rp].node;
			out[o++].mask = k->cand[rp++].mask;
		}
	}
	while (rp < want) {
		out[o].node = k->cand[rp].node;
		out[o++].mask = k->cand[rp++].mask;
	}
	/* Replacements and kept nodes on the same rails (sched.h). */
	place_align(ps, rq, NULL, out, o);
	*np = o;
	return 1;
}
