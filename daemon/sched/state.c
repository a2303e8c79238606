/* The state of one pass: nodes reduced to free-GPU bit masks, the switch
 * tree with every leaf's nodes, and counts of fitting nodes kept per
 * (leaf, GPU model) and per model, so that asking "how many nodes under
 * each switch could take g GPUs of this job" costs one addition per
 * (leaf, model) pair instead of a walk over every node. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sched/htab.h"
#include "daemon/sched/sched_int.h"
#include "daemon/sched/topo.h"

/* Every scratch allocation of a pass is chained here and freed at once;
 * the running total is the pass's memory figure. */
struct alloc_hdr {
	struct alloc_hdr *next;
	size_t size;
	max_align_t align[];
};

void *
state_alloc(struct pass *ps, size_t n, size_t size)
{
	struct alloc_hdr *h;

	if (size != 0 && n > (SIZE_MAX - sizeof(*h)) / size) {
		errno = ENOMEM;
		return NULL;
	}
	if ((h = calloc(1, sizeof(*h) + n * size)) == NULL)
		return NULL;
	h->next = ps->allocs;
	h->size = n * size;
	ps->allocs = h;
	ps->bytes += sizeof(*h) + n * size;
	return h->align;
}

void
state_free(struct pass *ps)
{
	struct alloc_hdr *h, *next;

	for (h = ps->allocs; h != NULL; h = next) {
		next = h->next;
		free(h);
	}
	ps->allocs = NULL;
	free(ps->starts);
	free(ps->picks);
	free(ps->precs);
	free(ps->victims);
	ps->starts = NULL;
	ps->picks = NULL;
	ps->precs = NULL;
	ps->victims = NULL;
}

static uint32_t *
model_row(const struct pass *ps, uint32_t model, int set)
{
	return ps->model_cnt +
	    ((size_t)set * ps->nmodels + model) * ps->stride;
}

/* Add (delta 1) or remove (delta -1) node i with free mask m in set. */
static void
count(struct pass *ps, uint32_t i, int set, uint64_t m, int delta)
{
	const struct pnode *pn = &ps->nodes[i];
	uint32_t *c = state_row(ps, pn->ent, set);
	uint32_t *mc = model_row(ps, pn->model, set);
	int f = __builtin_popcountll(m), k;

	if (pn->ngpus > 0 && m == pn->full) {
		c[0] += (uint32_t)delta;
		mc[0] += (uint32_t)delta;
	}
	for (k = 1; k <= f; k++) {
		c[k] += (uint32_t)delta;
		mc[k] += (uint32_t)delta;
	}
}

bool
state_fits(const struct pass *ps, uint32_t i, const struct preq *rq,
    uint64_t m)
{
	const struct pnode *pn = &ps->nodes[i];

	if (rq->ok != NULL && !rq->ok[i])
		return false;
	if (rq->set == SET_STATIC) {
		if (!(pn->flags & PN_USABLE))
			return false;
	} else if (!(pn->flags & PN_ELIGIBLE) ||
	    (rq->set == SET_UNRES && (pn->flags & PN_RESERVED)))
		return false;
	if (!rq->match[pn->model])
		return false;
	switch (rq->kind) {
	case RQ_CPU:
		/* No GPU needed: any node no exclusive job holds. */
		return rq->set == SET_STATIC || !(pn->flags & PN_EXCL);
	case RQ_EXCL:
		/* The whole node (every GPU free and OK) and no other job,
		 * CPU-only ones included; a GPU job wants >= gmin GPUs. */
		if (pn->ngpus < rq->gmin)
			return false;
		if (rq->set == SET_STATIC)
			return true;
		return m == pn->full && !(pn->flags & (PN_EXCL | PN_CPU));
	}
	if (rq->g == 0)
		return pn->ngpus > 0 && m == pn->full;
	return (uint32_t)__builtin_popcountll(m) >= rq->g;
}

void
state_take(struct pass *ps, uint32_t i, uint64_t mask)
{
	struct pnode *pn = &ps->nodes[i];
	bool unres = !(pn->flags & PN_RESERVED);

	ps->ver++;
	count(ps, i, SET_ALL, pn->free, -1);
	if (unres)
		count(ps, i, SET_UNRES, pn->free, -1);
	pn->free &= ~mask;
	count(ps, i, SET_ALL, pn->free, 1);
	if (unres)
		count(ps, i, SET_UNRES, pn->free, 1);
}

void
state_take_job(struct pass *ps, uint32_t i, uint64_t mask,
    const struct sched_job *jb)
{
	struct pnode *pn = &ps->nodes[i];

	if (jb->exclusive) {
		/* Nothing else lands here: its free GPUs leave the counts
		 * (the whole node's are in mask) and the flag keeps
		 * CPU-only jobs off. */
		state_take(ps, i, pn->free);
		pn->flags |= PN_EXCL;
		ps->fver++;
		return;
	}
	/* state_take moved ver, which PN_CPU's readers (exclusive jobs'
	 * counts) go by. */
	state_take(ps, i, mask);
	if (jb->cpu_only)
		pn->flags |= PN_CPU;
}

void
state_reserve(struct pass *ps, uint32_t i)
{
	struct pnode *pn = &ps->nodes[i];

	if (pn->flags & PN_RESERVED)
		return;
	ps->ver++;
	ps->fver++;
	if (pn->flags & PN_ELIGIBLE)
		count(ps, i, SET_UNRES, pn->free, -1);
	pn->flags |= PN_RESERVED;
}

/* Node-level constraints: one state_fits per node, or fewer with a
 * filter: a short list (most nodes left out) visits only its nodes; a
 * short exclusion of a GPU job takes the shared counts less the left-out
 * nodes that would fit. Finding which costs one byte per node. */
static uint32_t
quick_walk(struct pass *ps, const struct preq *rq)
{
	struct preq base = *rq;
	uint32_t i, n = 0, out;
	bool stat = rq->set == SET_STATIC;

	base.ok = NULL;
	if (rq->ok == NULL) {
		for (i = 0; i < ps->nnodes; i++)
			n += state_fits(ps, i, rq, stat ? ps->nodes[i].full :
			    ps->nodes[i].free);
		return n;
	}
	out = rq->out;
	if (out > ps->nnodes / 2 || rq->kind != RQ_GPU) {
		for (i = 0; i < ps->nnodes; i++)
			if (rq->ok[i])
				n += state_fits(ps, i, &base, stat ?
				    ps->nodes[i].full : ps->nodes[i].free);
		return n;
	}
	base.walk = false;
	n = state_quick(ps, &base);
	for (i = 0; i < ps->nnodes; i++)
		if (!rq->ok[i])
			n -= state_fits(ps, i, &base, stat ?
			    ps->nodes[i].full : ps->nodes[i].free);
	return n;
}

uint32_t
state_filter_out(const struct pass *ps, const uint8_t *ok)
{
	uint32_t i, out = 0;

	for (i = 0; i < ps->nnodes; i++)
		out += ok[i] == 0;
	return out;
}

static bool
qcache_same(const struct pass *ps, const struct qcache *c,
    const struct preq *rq)
{
	return c->used && c->ok == rq->ok && c->match == rq->match &&
	    c->g == rq->g && c->gmin == rq->gmin && c->kind == rq->kind &&
	    c->cpu == rq->cpu && c->set == rq->set &&
	    (rq->set == SET_STATIC || c->ver == (rq->kind == RQ_CPU ?
	    ps->fver : ps->ver));
}

/* quick_walk, remembered (struct qcache). */
static uint32_t
quick_cached(struct pass *ps, const struct preq *rq)
{
	struct qcache *c;
	uint32_t k, half;

	/* Filtered jobs keep to half the entries: many jobs with filters
	 * of their own would otherwise push out the shared counts. */
	half = rq->ok != NULL ? QCACHE_N / 2 : 0;
	for (k = half; k < half + QCACHE_N / 2; k++)
		if (qcache_same(ps, &ps->qc[k], rq))
			return ps->qc[k].n;
	c = &ps->qc[half + ps->qnext[half != 0]];
	ps->qnext[half != 0] = (ps->qnext[half != 0] + 1) % (QCACHE_N / 2);
	c->ok = rq->ok;
	c->match = rq->match;
	c->g = rq->g;
	c->gmin = rq->gmin;
	c->kind = rq->kind;
	c->cpu = rq->cpu;
	c->set = rq->set;
	c->ver = rq->kind == RQ_CPU ? ps->fver : ps->ver;
	c->used = true;
	c->n = quick_walk(ps, rq);
	return c->n;
}

uint32_t
state_model_fits(const struct pass *ps, const struct preq *rq, uint32_t m)
{
	if (rq->g >= ps->stride || !rq->match[m])
		return 0;
	return model_row(ps, m, rq->set)[rq->g];
}

uint32_t
state_quick(struct pass *ps, const struct preq *rq)
{
	uint32_t m, n = 0;

	if (rq->walk)
		return quick_cached(ps, rq);
	if (rq->g >= ps->stride)
		return 0;
	for (m = 0; m < ps->nmodels; m++)
		if (rq->match[m])
			n += model_row(ps, m, rq->set)[rq->g];
	return n;
}

/* Map each node to the leaf the topology gives it, or the unlisted
 * leaf (or, with blocks, to its piece: block.c), and count the nodes of
 * each; *nchunks gets how many chunk leaves the big ones need (see
 * build_tree). */
static int
map_nodes(struct pass *ps, const struct sched_input *in, uint32_t ntopo,
    uint32_t **per, uint32_t *nchunks)
{
	const struct sched_node *n;
	uint32_t i, s, np = 0;
	int32_t l;

	if ((ps->nodes = state_alloc(ps, ps->nnodes, sizeof(*ps->nodes))) ==
	    NULL)
		return -1;
	for (i = 0; i < ps->nnodes; i++) {
		n = &in->nodes[i];
		l = n->name != NULL ? topo_node_leaf(in->topo, n->name) : -1;
		ps->nodes[i].leaf = l >= 0 ? (uint32_t)l : ntopo;
	}
	if (block_map(ps, ntopo, &np) == -1 ||
	    (*per = state_alloc(ps, ntopo + 1 + np, 4)) == NULL)
		return -1;
	for (i = 0; i < ps->nnodes; i++)
		(*per)[ps->nodes[i].leaf]++;
	*nchunks = 0;
	for (s = 0; s <= ntopo + np; s++)
		if ((*per)[s] > SCHED_CHUNK)
			*nchunks += ((*per)[s] + SCHED_CHUNK - 1) / SCHED_CHUNK;
	return 0;
}

/* The switch tree: topology switches, the unlisted leaf, the pieces of
 * blocks (block.c: level-0 leaves under a leaf, one per block the leaf
 * has nodes of and one for the rest), the root, then chunks. A leaf with more than SCHED_CHUNK nodes gets its nodes split
 * into chunk leaves below it, in node order, so that no placement ranks
 * more than SCHED_CHUNK nodes at once; a chunk sits at level 0 under a
 * level-0 switch, so it is never a domain of its own and topology
 * constraints see the leaf whole. */
static int
build_tree(struct pass *ps, const struct topo *topo, const uint32_t *per,
    uint32_t nchunks)
{
	struct ptopo *t = &ps->t;
	uint32_t ntopo = (uint32_t)topo_nswitches(topo), s, p, L, k, c;
	uint32_t np = block_npieces(ps);
	unsigned h = topo_height(topo);

	t->nsw = ntopo + 2 + np + nchunks;
	t->unlisted = ntopo;
	t->root = ntopo + 1 + np;
	t->rootlevel = h > 0 ? h : 1;
	if ((t->parent = state_alloc(ps, t->nsw, sizeof(int32_t))) == NULL ||
	    (t->level = state_alloc(ps, t->nsw, 1)) == NULL ||
	    (t->child_off = state_alloc(ps, t->nsw + 1, 4)) == NULL ||
	    (t->child = state_alloc(ps, t->nsw, 4)) == NULL ||
	    (t->dom_off = state_alloc(ps, t->rootlevel + 2, 4)) == NULL ||
	    (t->order = state_alloc(ps, t->nsw, 4)) == NULL)
		return -1;
	for (s = 0; s < ntopo; s++) {
		t->level[s] = (uint8_t)topo_switch_level(topo, s);
		t->parent[s] = topo_switch_parent(topo, s);
		if (t->parent[s] < 0)
			t->parent[s] = (int32_t)t->root;
	}
	t->parent[t->unlisted] = (int32_t)t->root;
	for (k = 0; k < np; k++)
		t->parent[ntopo + 1 + k] = (int32_t)block_piece_parent(ps, k);
	t->level[t->root] = (uint8_t)t->rootlevel;
	t->parent[t->root] = -1;
	c = t->root + 1;
	for (s = 0; s < t->root; s++)
		if (per[s] > SCHED_CHUNK)
			for (k = 0; k < per[s]; k += SCHED_CHUNK)
				t->parent[c++] = (int32_t)s;
	/* Children in switch order, by counting. */
	for (s = 0; s < t->nsw; s++)
		if (s != t->root)
			t->child_off[t->parent[s] + 1]++;
	for (s = 0; s < t->nsw; s++)
		t->child_off[s + 1] += t->child_off[s];
	for (s = 0; s < t->nsw; s++) {
		if (s == t->root)
			continue;
		p = (uint32_t)t->parent[s];
		t->child[t->child_off[p] + t->order[p]++] = s;
	}
	/* Domains at each level L, and the bottom-up order: chunks first
	 * (their parents are level 0 too), then pieces (likewise), then
	 * level by level. */
	if ((t->dom = state_alloc(ps, (size_t)t->nsw * (t->rootlevel + 1),
	    4)) == NULL)
		return -1;
	k = 0;
	for (L = 0; L <= t->rootlevel; L++) {
		t->dom_off[L] = k;
		for (s = 0; s < t->nsw; s++)
			if (t->level[s] <= L && (t->parent[s] < 0 ||
			    t->level[t->parent[s]] > L))
				t->dom[k++] = s;
	}
	t->dom_off[t->rootlevel + 1] = k;
	k = 0;
	for (s = t->root + 1; s < t->nsw; s++)
		t->order[k++] = s;
	for (s = t->unlisted + 1; s < t->root; s++)
		t->order[k++] = s;
	for (L = 0; L <= t->rootlevel; L++)
		for (s = 0; s <= t->root; s++)
			if (t->level[s] == L && (s <= t->unlisted ||
			    s == t->root))
				t->order[k++] = s;
	return 0;
}

/* Model classes from the model numbers build_nodes left in pn->model
 * (0: none reported, names in name[]): one class per (model, spare)
 * pair present, numbered in node order. */
static int
build_models(struct pass *ps, const struct sched_input *in,
    const char **name, uint32_t nbase)
{
	uint32_t i, k, *cls;
	bool spare;

	if ((cls = state_alloc(ps, 2 * (size_t)nbase, 4)) == NULL ||
	    (ps->model_name = state_alloc(ps, 2 * (size_t)nbase,
	    sizeof(char *))) == NULL ||
	    (ps->model_spare = state_alloc(ps, 2 * (size_t)nbase, 1)) == NULL)
		return -1;
	memset(cls, 0xff, 2 * (size_t)nbase * sizeof(*cls));
	ps->nmodels = 0;
	for (i = 0; i < ps->nnodes; i++) {
		spare = in->nodes[i].spare;
		k = ps->nodes[i].model * 2 + spare;
		if (cls[k] == NO_INDEX) {
			cls[k] = ps->nmodels;
			ps->model_name[ps->nmodels] = name[ps->nodes[i].model];
			ps->model_spare[ps->nmodels++] = spare;
		}
		ps->nodes[i].model = cls[k];
	}
	return 0;
}

/* Nodes: masks, flags, model classes, and each leaf's node list. */
static int
build_nodes(struct pass *ps, const struct sched_input *in,
    const uint32_t *per)
{
	struct ptopo *t = &ps->t;
	struct htab *models;
	const struct sched_node *n;
	struct pnode *pn;
	uint32_t i, k, g, maxg = 0, *fill, *chunk, c, nbase;
	int64_t m;
	const char *last = NULL, **name;

	if ((name = state_alloc(ps, ps->nnodes + 1, sizeof(char *))) ==
	    NULL || (t->node_off = state_alloc(ps, t->nsw + 1, 4)) == NULL ||
	    (t->node = state_alloc(ps, ps->nnodes, 4)) == NULL ||
	    (fill = state_alloc(ps, t->nsw, 4)) == NULL ||
	    (chunk = state_alloc(ps, t->root, 4)) == NULL)
		return -1;
	/* The first chunk of each chunked leaf. */
	for (c = t->root + 1, k = 0; k < t->root; k++) {
		chunk[k] = c;
		if (per[k] > SCHED_CHUNK)
			c += (per[k] + SCHED_CHUNK - 1) / SCHED_CHUNK;
	}
	if ((models = htab_create(ps->nnodes, false)) == NULL)
		return -1;
	nbase = 1;		/* 0: no model reported */
	for (i = 0; i < ps->nnodes; i++) {
		n = &in->nodes[i];
		pn = &ps->nodes[i];
		if (per[pn->leaf] > SCHED_CHUNK) {
			k = pn->leaf;
			pn->leaf = chunk[k] + fill[k]++ / SCHED_CHUNK;
		}
		pn->model = 0;
		if (n->gpu_model != NULL && n->gpu_model == last) {
			/* Nodes usually share the caller's model string. */
			pn->model = ps->nodes[i - 1].model;
		} else if (n->gpu_model != NULL) {
			m = htab_put(models, n->gpu_model, nbase);
			if (m == nbase)
				name[nbase++] = n->gpu_model;
			pn->model = (uint32_t)m;
		}
		last = n->gpu_model;
		t->node_off[pn->leaf + 1]++;
		if (n->ngpus > SCHED_NODE_GPUS_MAX || (n->ngpus > 0 &&
		    n->gpus == NULL))
			continue;
		pn->flags = PN_USABLE | (n->spare ? PN_SPARE : 0);
		pn->ngpus = (uint8_t)n->ngpus;
		pn->full = n->ngpus == 64 ? ~0ULL : (1ULL << n->ngpus) - 1;
		for (g = 0; g < n->ngpus; g++)
			if (n->gpus[g].health == SCHED_HEALTH_OK &&
			    n->gpus[g].job == 0)
				pn->free |= 1ULL << g;
		if (n->up && !n->drained && n->health != SCHED_HEALTH_FAILED)
			pn->flags |= PN_ELIGIBLE;
		if (n->cpu_jobs > 0)
			pn->flags |= PN_CPU;
		/* An exclusive job's node gives nothing out, even GPUs
		 * its job does not hold (a node with none, say). */
		if (n->exclusive) {
			pn->flags |= PN_EXCL;
			pn->free = 0;
		}
		if (n->health == SCHED_HEALTH_DEGRADED)
			pn->flags |= PN_DEGRADED;
		if (n->suspect)
			pn->flags |= PN_SUSPECT;
		if (n->ngpus > maxg)
			maxg = n->ngpus;
	}
	htab_destroy(models);
	if (build_models(ps, in, name, nbase) == -1)
		return -1;
	ps->stride = maxg + 1;
	for (k = 0; k < t->nsw; k++)
		t->node_off[k + 1] += t->node_off[k];
	memset(fill, 0, (size_t)t->nsw * sizeof(*fill));
	for (i = 0; i < ps->nnodes; i++) {
		k = ps->nodes[i].leaf;
		t->node[t->node_off[k] + fill[k]++] = i;
		if (fill[k] > t->maxleaf)
			t->maxleaf = fill[k];
	}
	return 0;
}

/* One count entry per (leaf, model) pair present; leaves rarely mix
 * models, so the search among a leaf's entries is short. */
static int
build_counts(struct pass *ps)
{
	struct ptopo *t = &ps->t;
	uint32_t s, k, e, i, first;
	struct pnode *pn;

	if ((ps->leaf_ent_off = state_alloc(ps, t->nsw + 1, 4)) == NULL ||
	    (ps->ent_model = state_alloc(ps, ps->nnodes + 1, 4)) == NULL)
		return -1;
	ps->nent = 0;
	for (s = 0; s < t->nsw; s++) {
		ps->leaf_ent_off[s] = first = ps->nent;
		for (k = t->node_off[s]; k < t->node_off[s + 1]; k++) {
			pn = &ps->nodes[t->node[k]];
			for (e = first; e < ps->nent; e++)
				if (ps->ent_model[e] == pn->model)
					break;
			if (e == ps->nent)
				ps->ent_model[ps->nent++] = pn->model;
			pn->ent = e;
		}
	}
	ps->leaf_ent_off[t->nsw] = ps->nent;
	if ((ps->ent_cnt = state_alloc(ps, (size_t)ps->nent * NSETS *
	    ps->stride, 4)) == NULL ||
	    (ps->model_cnt = state_alloc(ps, (size_t)NSETS * ps->nmodels *
	    ps->stride, 4)) == NULL)
		return -1;
	for (i = 0; i < ps->nnodes; i++) {
		pn = &ps->nodes[i];
		if (pn->flags & PN_USABLE)
			count(ps, i, SET_STATIC, pn->full, 1);
		if (pn->flags & PN_ELIGIBLE) {
			count(ps, i, SET_ALL, pn->free, 1);
			count(ps, i, SET_UNRES, pn->free, 1);
		}
	}
	return 0;
}

/* Type classes: one per distinct --gpu-type (ignoring case), class 0 for
 * none; and which model classes each may use, restarting or not. */
static int
build_types(struct pass *ps, const struct sched_input *in)
{
	struct htab *types;
	const char **tname;
	const char *ty, *last = NULL;
	size_t j, ntyped = 0;
	uint32_t t, m;
	int64_t v = 0;
	uint8_t *row;
	bool ok;

	if ((ps->jtype = state_alloc(ps, in->npending + 1, 4)) == NULL ||
	    (tname = state_alloc(ps, in->npending + 1, sizeof(char *))) ==
	    NULL)
		return -1;
	for (j = 0; j < in->npending; j++)
		ntyped += in->pending[j].gpu_type != NULL;
	if ((types = htab_create(ntyped, true)) == NULL)
		return -1;
	ps->ntypes = 1;
	for (j = 0; j < in->npending; j++) {
		ty = in->pending[j].gpu_type;
		if (ty == NULL) {
			ps->jtype[j] = 0;
			continue;
		}
		/* Callers often share one string among many jobs. */
		if (ty == last) {
			ps->jtype[j] = (uint32_t)v;
			continue;
		}
		v = htab_put(types, ty, ps->ntypes);
		if (v == ps->ntypes)
			tname[ps->ntypes++] = ty;
		ps->jtype[j] = (uint32_t)v;
		last = ty;
	}
	htab_destroy(types);
	if ((ps->match = state_alloc(ps, (size_t)ps->ntypes * 2 *
	    ps->nmodels, 1)) == NULL)
		return -1;
	/* Row 2t: jobs of type t that are not restarting, which never get
	 * a spare; row 2t + 1: restarting ones. */
	for (t = 0; t < ps->ntypes; t++)
		for (m = 0; m < ps->nmodels; m++) {
			ok = t == 0 || sched_gpu_type_match(ps->model_name[m],
			    tname[t]);
			row = ps->match + (size_t)t * 2 * ps->nmodels;
			row[m] = ok && !ps->model_spare[m];
			row[ps->nmodels + m] = ok;
		}
	return 0;
}

int
state_build(struct pass *ps, const struct sched_input *in)
{
	uint32_t ntopo, nchunks, *per;

	ps->in = in;
	ps->now = in->now;
	ps->default_limit = in->config.default_limit > 0 ?
	    in->config.default_limit : SCHED_DEFAULT_LIMIT_S;
	ps->bf_max = in->config.bf_max_job_test > 0 ?
	    in->config.bf_max_job_test : SCHED_BF_MAX_JOB_TEST;
	ps->order = in->config.order == SCHED_ORDER_ESTIMATE ?
	    SCHED_ORDER_ESTIMATE : SCHED_ORDER_FIFO;
	ps->aging = in->config.aging;
	ps->no_backfill = in->config.no_backfill;
	if (in->nnodes > UINT32_MAX / 2) {
		errno = EINVAL;
		return -1;
	}
	ps->nnodes = (uint32_t)in->nnodes;
	ntopo = (uint32_t)topo_nswitches(in->topo);
	if (map_nodes(ps, in, ntopo, &per, &nchunks) == -1 ||
	    build_tree(ps, in->topo, per, nchunks) == -1 ||
	    build_nodes(ps, in, per) == -1 || build_counts(ps) == -1 ||
	    build_types(ps, in) == -1)
		return -1;
	if ((ps->qc = state_alloc(ps, QCACHE_N, sizeof(*ps->qc))) == NULL ||
	    (ps->cnt = state_alloc(ps, ps->t.nsw, sizeof(int32_t))) == NULL ||
	    (ps->used = state_alloc(ps, ps->t.nsw, 1)) == NULL ||
	    (ps->cand = state_alloc(ps, ps->t.maxleaf + 1,
	    sizeof(struct cand))) == NULL || block_build(ps) == -1)
		return -1;
	return 0;
}
