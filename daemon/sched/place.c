/* Placement: which switch domain, which nodes under it, which GPUs on
 * each node. Works on counts of fitting nodes per switch (place_counts,
 * or the reservation's counts of a future state), so choosing a domain
 * never walks the nodes; only the leaves finally used are walked. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sched/sched_int.h"

/* Fitting nodes per leaf of a job with node-level constraints (see
 * quick_walk in state.c for the shortcuts a filter allows); 1 when the
 * shared counts less the left-out nodes are the answer (cnt is then
 * only the corrections, negative). */
static int
counts_walk(struct pass *ps, const struct preq *rq, int32_t *cnt)
{
	struct preq base = *rq;
	bool stat = rq->set == SET_STATIC, out_few;
	uint32_t k;

	base.ok = NULL;
	out_few = rq->ok != NULL && rq->kind == RQ_GPU &&
	    rq->out <= ps->nnodes / 2;
	for (k = 0; k < ps->nnodes; k++) {
		if (rq->ok != NULL && (rq->ok[k] != 0) == out_few)
			continue;
		if (state_fits(ps, k, &base, stat ? ps->nodes[k].full :
		    ps->nodes[k].free))
			cnt[ps->nodes[k].leaf] += out_few ? -1 : 1;
	}
	return out_few;
}

void
place_counts(struct pass *ps, const struct preq *rq, int32_t *cnt)
{
	const struct ptopo *t = &ps->t;
	uint32_t s, e, k;
	int32_t p;

	memset(cnt, 0, (size_t)t->nsw * sizeof(*cnt));
	/* Node-level constraints: count node by node, or correct the
	 * shared counts below. */
	if ((!rq->walk || counts_walk(ps, rq, cnt) == 1) && rq->g < ps->stride)
		for (s = 0; s < t->nsw; s++)
			for (e = ps->leaf_ent_off[s];
			    e < ps->leaf_ent_off[s + 1]; e++)
				if (rq->match[ps->ent_model[e]])
					cnt[s] += (int32_t)state_row(ps, e,
					    rq->set)[rq->g];
	for (k = 0; k < t->nsw; k++) {
		s = t->order[k];
		if ((p = t->parent[s]) >= 0)
			cnt[p] += cnt[s];
	}
}

uint32_t
place_capacity(const struct pass *ps, const struct preq *rq,
    const int32_t *cnt)
{
	const struct ptopo *t = &ps->t;
	uint32_t k, best = 0;

	if (rq->cap >= t->rootlevel)
		return (uint32_t)cnt[t->root];
	for (k = t->dom_off[rq->cap]; k < t->dom_off[rq->cap + 1]; k++)
		if ((uint32_t)cnt[t->dom[k]] > best)
			best = (uint32_t)cnt[t->dom[k]];
	return best;
}

uint32_t
place_domain(const struct pass *ps, uint32_t s, uint32_t cap)
{
	const struct ptopo *t = &ps->t;

	while (t->parent[s] >= 0 && t->level[t->parent[s]] <= cap)
		s = (uint32_t)t->parent[s];
	return s;
}

static int
attr(const struct sched_gpu *gp, int which)
{
	switch (which) {
	case 0:
		return gp->nvlink;
	case 1:
		return gp->pcie;
	default:
		return gp->numa;
	}
}

/* The free GPUs sharing GPU pos's NVLink domain, PCIe switch or NUMA
 * node (which = 0, 1, 2); an unknown (-1) one is a group of its own. */
static uint64_t
group_of(const struct sched_gpu *gpus, uint64_t F, int pos, int which)
{
	int v = attr(&gpus[pos], which), q;
	uint64_t m = 0, rest;

	if (v < 0)
		return 1ULL << pos;
	for (rest = F; rest != 0; rest &= rest - 1) {
		q = __builtin_ctzll(rest);
		if (attr(&gpus[q], which) == v)
			m |= 1ULL << q;
	}
	return m;
}

static uint32_t
nics(const struct sched_gpu *gpus, uint64_t m)
{
	uint32_t n = 0;

	for (; m != 0; m &= m - 1)
		n += gpus[__builtin_ctzll(m)].near_nic;
	return n;
}

/* The group with at least g free GPUs that can give the most GPUs near
 * a NIC, then the smallest (so a 2-GPU job takes a half-used quad
 * before a whole one), then the first; 0 if none. */
static uint64_t
best_group(const struct sched_gpu *gpus, uint64_t F, uint32_t g, int which)
{
	uint64_t rest = F, grp, best = 0;
	uint32_t n, nic, bestn = 65, bestnic = 0;

	while (rest != 0) {
		grp = group_of(gpus, F, __builtin_ctzll(rest), which);
		rest &= ~grp;
		n = (uint32_t)__builtin_popcountll(grp);
		if (n < g)
			continue;
		nic = nics(gpus, grp);
		nic = nic < g ? nic : g;
		if (best == 0 || nic > bestnic || (nic == bestnic &&
		    n < bestn)) {
			best = grp;
			bestn = n;
			bestnic = nic;
		}
	}
	return best;
}

/* g GPUs of F: those near a NIC first, then by index. */
static uint64_t
take_low(const struct sched_gpu *gpus, uint64_t F, uint32_t g)
{
	uint64_t out = 0, rest;
	int pass, q;

	for (pass = 0; pass < 2 && g > 0; pass++)
		for (rest = F; rest != 0 && g > 0; rest &= rest - 1) {
			q = __builtin_ctzll(rest);
			if (gpus[q].near_nic == (pass == 0)) {
				out |= 1ULL << q;
				g--;
			}
		}
	return out;
}

/* No NVLink domain, PCIe switch or NUMA node holds g: span as few NVLink
 * domains as possible, largest first. */
static uint64_t
spread(const struct sched_gpu *gpus, uint64_t F, uint32_t g)
{
	uint64_t out = 0, grp, big, rest;
	uint32_t n, bign;

	while (g > 0 && F != 0) {
		big = 0;
		bign = 0;
		for (rest = F; rest != 0; rest &= ~grp) {
			grp = group_of(gpus, F, __builtin_ctzll(rest), 0);
			n = (uint32_t)__builtin_popcountll(grp);
			if (n > bign) {
				big = grp;
				bign = n;
			}
		}
		n = bign < g ? bign : g;
		out |= take_low(gpus, big, n);
		F &= ~big;
		g -= n;
	}
	return out;
}

uint64_t
place_gpus(const struct pass *ps, uint32_t node, uint64_t F, uint32_t g,
    unsigned *quality)
{
	const struct sched_gpu *gpus = ps->in->nodes[node].gpus;
	uint64_t m;
	unsigned q = 0;
	int which;

	if ((uint32_t)__builtin_popcountll(F) < g) {
		*quality = 0;
		return 0;
	}
	/* Narrow to the best NVLink domain, then inside it the best PCIe
	 * switch, then the best NUMA node, each only when it holds g. */
	for (which = 0; which < 3; which++) {
		if ((m = best_group(gpus, F, g, which)) != 0) {
			F = m;
			q |= 4u >> which;
		}
	}
	*quality = q;
	if (q == 0)
		return spread(gpus, F, g);
	return take_low(gpus, F, g);
}

/* ---- Rails: lining a gang's GPUs up across its nodes ---- */

/* Distinct rail sets tried as the reference. */
#define PLACE_ALIGN_REFS 4

/* What is compared across nodes: the rail, or the GPU's position where
 * the rail is unknown (distinct from every rail). */
static int32_t
rail_key(const struct sched_gpu *gpus, int q)
{
	return gpus[q].rail >= 0 ? gpus[q].rail : -1 - q;
}

/* The sorted rail keys of m into out (at most 64); their number. */
static uint32_t
rail_sig(const struct sched_gpu *gpus, uint64_t m, int32_t *out)
{
	uint32_t n = 0, i;
	int32_t k;

	for (; m != 0; m &= m - 1) {
		k = rail_key(gpus, __builtin_ctzll(m));
		for (i = n++; i > 0 && out[i - 1] > k; i--)
			out[i] = out[i - 1];
		out[i] = k;
	}
	return n;
}

/* place_gpus' quality of mask m: 4 when one NVLink domain holds it, 2
 * one PCIe switch, 1 one NUMA node (a single GPU: all three). */
static unsigned
mask_quality(const struct sched_gpu *gpus, uint64_t m)
{
	unsigned q = 7;
	uint64_t rest;
	int first, p, which;

	if (m == 0 || (m & (m - 1)) == 0)
		return m == 0 ? 0 : 7;
	first = __builtin_ctzll(m);
	for (which = 0; which < 3; which++) {
		if (attr(&gpus[first], which) < 0) {
			q &= ~(4u >> which);
			continue;
		}
		for (rest = m & (m - 1); rest != 0; rest &= rest - 1) {
			p = __builtin_ctzll(rest);
			if (attr(&gpus[p], which) != attr(&gpus[first],
			    which)) {
				q &= ~(4u >> which);
				break;
			}
		}
	}
	return q;
}

/* GPUs of F on the rails of sig[0..n) (sorted keys of the reference
 * mask ref, positions on the reference node): for each, the reference's
 * own position when it is free and on that rail, else a GPU of own (the
 * node's choice) on it, else the lowest free one. 0 when a rail cannot
 * be matched or the result is less well connected, or nearer fewer
 * NICs, than own. */
static uint64_t
align_node(const struct sched_gpu *ref_gpus, uint64_t ref,
    const struct sched_gpu *gpus, uint64_t F, uint64_t own)
{
	uint64_t m = 0, avail, rest, pick;
	int q, p;
	int32_t k;

	for (rest = ref; rest != 0; rest &= rest - 1) {
		q = __builtin_ctzll(rest);
		k = rail_key(ref_gpus, q);
		avail = F & ~m;
		pick = 0;
		if ((avail & (1ULL << q)) && rail_key(gpus, q) == k)
			pick = 1ULL << q;
		for (; pick == 0 && avail != 0; avail &= avail - 1) {
			p = __builtin_ctzll(avail);
			if (rail_key(gpus, p) == k && (own & (1ULL << p)))
				pick = 1ULL << p;
		}
		for (avail = F & ~m; pick == 0 && avail != 0;
		    avail &= avail - 1) {
			p = __builtin_ctzll(avail);
			if (rail_key(gpus, p) == k)
				pick = 1ULL << p;
		}
		if (pick == 0)
			return 0;
		m |= pick;
	}
	if (mask_quality(gpus, m) < mask_quality(gpus, own) ||
	    nics(gpus, m) < nics(gpus, own))
		return 0;
	return m;
}

void
place_align(const struct pass *ps, const struct preq *rq,
    const uint64_t *freev, struct pick *out, uint32_t n)
{
	const struct sched_node *nodes = ps->in->nodes;
	int32_t sig[PLACE_ALIGN_REFS][64], cur[64];
	uint32_t nref = 0, ns[PLACE_ALIGN_REFS], score[PLACE_ALIGN_REFS];
	uint32_t from[PLACE_ALIGN_REFS], i, r, best = 0, len;
	uint64_t F, m;

	if (n < 2 || rq->cpu || rq->g == 0)
		return;
	/* The candidate references: the first distinct rail sets. */
	for (i = 0; i < n && nref < PLACE_ALIGN_REFS; i++) {
		len = rail_sig(nodes[out[i].node].gpus, out[i].mask, cur);
		for (r = 0; r < nref; r++)
			if (ns[r] == len && memcmp(sig[r], cur,
			    len * sizeof(*cur)) == 0)
				break;
		if (r < nref)
			continue;
		memcpy(sig[nref], cur, len * sizeof(*cur));
		ns[nref] = len;
		from[nref++] = i;
	}
	if (nref == 1)
		return;		/* aligned already */
	/* How many nodes have or can give each. */
	for (r = 0; r < nref; r++) {
		score[r] = 0;
		for (i = 0; i < n; i++) {
			len = rail_sig(nodes[out[i].node].gpus, out[i].mask,
			    cur);
			F = freev != NULL ? freev[out[i].node] :
			    ps->nodes[out[i].node].free;
			if ((len == ns[r] && memcmp(sig[r], cur,
			    len * sizeof(*cur)) == 0) ||
			    align_node(nodes[out[from[r]].node].gpus,
			    out[from[r]].mask, nodes[out[i].node].gpus, F,
			    out[i].mask) != 0)
				score[r]++;
		}
		if (score[r] > score[best])
			best = r;
	}
	for (i = 0; i < n; i++) {
		len = rail_sig(nodes[out[i].node].gpus, out[i].mask, cur);
		if (len == ns[best] && memcmp(sig[best], cur,
		    len * sizeof(*cur)) == 0)
			continue;
		F = freev != NULL ? freev[out[i].node] :
		    ps->nodes[out[i].node].free;
		if ((m = align_node(nodes[out[from[best]].node].gpus,
		    out[from[best]].mask, nodes[out[i].node].gpus, F,
		    out[i].mask)) != 0)
			out[i].mask = m;
	}
}

static int
cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static int
cand_node_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->node < y->node ? -1 : x->node > y->node;
}

/* Rank a fitting node: OK health before DEGRADED, for a restart or a
 * large gang nodes without recent failures before suspect ones, other
 * nodes before hot spares (kept for replacements, keep.c), then the connection
 * quality of the GPUs it would give, then GPUs near a NIC, then fewest
 * free GPUs (fill partly used nodes first), then index. */
uint64_t
place_rank(const struct pass *ps, uint32_t node, uint64_t F,
    const struct preq *rq, uint64_t *mask)
{
	const struct pnode *pn = &ps->nodes[node];
	const struct sched_gpu *gpus = ps->in->nodes[node].gpus;
	unsigned q = 7, nic;
	uint64_t key;

	if (rq->cpu)
		*mask = 0;
	else if (rq->g == 0)
		*mask = pn->full;
	else
		*mask = place_gpus(ps, node, F, rq->g, &q);
	nic = nics(gpus, *mask);
	key = (uint64_t)((pn->flags & PN_DEGRADED) != 0) << 63;
	key |= (uint64_t)(rq->clean && (pn->flags & PN_SUSPECT) != 0) << 62;
	key |= (uint64_t)((pn->flags & PN_SPARE) != 0) << 61;
	key |= (uint64_t)(7 - q) << 58;
	key |= (uint64_t)(64 - nic) << 51;
	key |= (uint64_t)__builtin_popcountll(F) << 43;
	return key | node;
}

int
place_take(struct pass *ps, const struct preq *rq, const uint64_t *freev,
    const uint32_t *nodes, uint32_t n, struct cand *cand, uint32_t want,
    struct pick *out, uint32_t *k)
{
	uint32_t i, node, nc = 0;
	uint64_t F;

	for (i = 0; i < n; i++) {
		node = nodes[i];
		F = freev != NULL ? freev[node] : ps->nodes[node].free;
		if (!state_fits(ps, node, rq, F))
			continue;
		cand[nc].node = node;
		cand[nc].key = place_rank(ps, node, F, rq, &cand[nc].mask);
		nc++;
	}
	if (nc < want) {
		errno = EAGAIN;
		return -1;
	}
	if (nc > want)
		qsort(cand, nc, sizeof(*cand), cand_cmp);
	qsort(cand, want, sizeof(*cand), cand_node_cmp);
	for (i = 0; i < want; i++) {
		out[*k].node = cand[i].node;
		out[*k].mask = cand[i].mask;
		(*k)++;
	}
	return 0;
}

/* Take want nodes from leaf s, appending to out[*k]; rank order inside
 * the leaf is node order. */
static int
leaf_take(struct pass *ps, const struct preq *rq, const uint64_t *freev,
    uint32_t s, uint32_t want, struct pick *out, uint32_t *k)
{
	const struct ptopo *t = &ps->t;

	return place_take(ps, rq, freev, t->node + t->node_off[s],
	    t->node_off[s + 1] - t->node_off[s], ps->cand, want, out, k);
}

/* Take want nodes under switch s: the best-fit child when one holds all
 * of them, else the largest child whole, and again for the rest. */
static int
take(struct pass *ps, const struct preq *rq, const int32_t *cnt,
    const uint64_t *freev, uint32_t s, uint32_t want, struct pick *out,
    uint32_t *k)
{
	const struct ptopo *t = &ps->t;
	uint32_t i, c, bf, big;
	int32_t rem = (int32_t)want;

	if (t->child_off[s] == t->child_off[s + 1])
		return leaf_take(ps, rq, freev, s, want, out, k);
	while (rem > 0) {
		bf = big = NO_INDEX;
		for (i = t->child_off[s]; i < t->child_off[s + 1]; i++) {
			c = t->child[i];
			if (ps->used[c] || cnt[c] == 0)
				continue;
			if (cnt[c] >= rem &&
			    (bf == NO_INDEX || cnt[c] < cnt[bf]))
				bf = c;
			if (big == NO_INDEX || cnt[c] > cnt[big])
				big = c;
		}
		if (bf != NO_INDEX)
			big = bf;
		if (big == NO_INDEX) {
			errno = EAGAIN;
			return -1;
		}
		ps->used[big] = 1;
		if (take(ps, rq, cnt, freev, big, (uint32_t)(cnt[big] < rem ?
		    cnt[big] : rem), out, k) == -1)
			return -1;
		rem -= cnt[big];
	}
	return 0;
}

int
place_select(struct pass *ps, const struct preq *rq, const int32_t *cnt,
    const uint64_t *freev, struct pick *out)
{
	const struct ptopo *t = &ps->t;
	uint32_t L, top, k, s, best = NO_INDEX;

	/* Blocks first (block.c); only a preference falls back here. */
	if (rq->bk != BK_NONE && ps->blk != NULL) {
		if (block_select(ps, rq, cnt, freev, out) == 0) {
			place_align(ps, rq, freev, out, rq->n);
			return 0;
		}
		if (rq->bk != BK_PLAIN || errno != EAGAIN)
			return -1;
	}
	/* On a torus, boxes (torus.c); a single node needs none. */
	if (rq->torus != TQ_NONE && ps->tor != NULL &&
	    (rq->n > 1 || rq->torus == TQ_REQUIRED)) {
		if (torus_select(ps, rq, freev, out) == -1)
			return -1;
		if (out != NULL)
			place_align(ps, rq, freev, out, rq->n);
		return 0;
	}
	top = rq->cap < t->rootlevel ? rq->cap : t->rootlevel;
	for (L = 0; L <= top && best == NO_INDEX; L++)
		for (k = t->dom_off[L]; k < t->dom_off[L + 1]; k++) {
			s = t->dom[k];
			if ((uint32_t)cnt[s] >= rq->n && (best == NO_INDEX ||
			    cnt[s] < cnt[best]))
				best = s;
		}
	if (best == NO_INDEX || rq->n == 0) {
		errno = EAGAIN;
		return -1;
	}
	memset(ps->used, 0, t->nsw);
	k = 0;
	if (take(ps, rq, cnt, freev, best, rq->n, out, &k) == -1)
		return -1;
	place_align(ps, rq, freev, out, k);
	return 0;
}
