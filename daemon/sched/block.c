/* Block placement (sched.h, "Blocks"): multi-node NVLink domains from the
 * topology's BlockName= statements. A job with --segment N has its gang
 * cut into segments of N consecutive ranks, each segment's nodes inside
 * one block; --topology block keeps the whole gang in one block; any
 * other GPU job on a topology with blocks prefers one best-fit block,
 * then as few blocks as possible, so that whole blocks stay free.
 *
 * Each leaf of the tree that has block nodes gets its nodes split into
 * pieces (one per block it has nodes of, one for the rest: block_map,
 * before the pass tree is built), so the per-switch counts every
 * placement already has (place_counts, the reservation's and the
 * preemption's replays) give the fitting nodes per block as a sum over
 * its pieces; the choice works on those counts and ranks nodes only
 * inside the blocks it takes. Groups of blocks to try
 * before spreading over the whole cluster: the aggregated block sizes
 * of BlockSizes= (consecutive blocks in file order) and the blocks whose
 * nodes all sit under one switch of the tree. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/sched/sched_int.h"
#include "daemon/sched/topo.h"

struct blocks {
	uint32_t nb;
	uint32_t *node_blk;	/* [nnodes]: its block, or NO_INDEX */
	uint32_t *off, *node;	/* each block's nodes, index order */
	/* Pieces: one per (leaf, block) pair and one per leaf for its
	 * nodes in no block. A leaf with one piece keeps its nodes (the
	 * piece is the leaf); the others become leaves of the pass tree
	 * under it, switch index unlisted + 1 + k for the k-th. */
	uint32_t npc;		/* pieces */
	uint32_t *pleaf;	/* [npc]: its leaf */
	uint32_t *pblk;		/* [npc]: its block, NO_INDEX: the rest */
	uint32_t *psw;		/* [npc]: its switch in the pass tree */
	uint32_t np;		/* pieces that are switches of their own */
	uint32_t *tparent;	/* [np]: the leaf above the k-th */
	uint32_t *poff, *piece;	/* each block's pieces */
	uint32_t ngrp;
	uint32_t *goff, *gblk;	/* groups of blocks (see above) */
	uint8_t *grun;		/* [ngrp]: its blocks are consecutive (the
				 * aggregated sizes, all blocks), so its sum
				 * is a difference of prefix sums */
	uint64_t *pre;		/* scratch: prefix sums of units */
	/* Scratch of block_select: the group's blocks by units, in group
	 * order within each count (bhead/btail [most + 1], bnext [nb]). */
	uint32_t most;		/* nodes of the largest block */
	uint32_t *bhead, *btail, *bnext;
	uint32_t *cnt;		/* scratch: fitting nodes per block */
	uint32_t *units;	/* scratch: segments per block */
	uint8_t *usedb;
	struct cand *cand;	/* [largest block] */
	uint32_t *fc;		/* the reservation's replay: fitting nodes */
	uint64_t funits;	/* its segments over every block */
};

static uint32_t
depth_of(const struct ptopo *t, uint32_t s)
{
	uint32_t d = 0;

	for (; t->parent[s] >= 0; s = (uint32_t)t->parent[s])
		d++;
	return d;
}

static uint32_t
lca(const struct ptopo *t, uint32_t a, uint32_t b)
{
	uint32_t da = depth_of(t, a), db = depth_of(t, b);

	for (; da > db; da--)
		a = (uint32_t)t->parent[a];
	for (; db > da; db--)
		b = (uint32_t)t->parent[b];
	while (a != b) {
		a = (uint32_t)t->parent[a];
		b = (uint32_t)t->parent[b];
	}
	return a;
}

/* Groups: the aggregated sizes, then every switch above two or more
 * blocks (by the lowest switch holding all of a block's nodes), then
 * all blocks. */
static int
build_groups(struct pass *ps, struct blocks *bk)
{
	const struct topo *topo = ps->in->topo;
	const struct ptopo *t = &ps->t;
	uint32_t b, i, s, m, base, n = 0, ng = 0, *low, *per, *fill;
	size_t k, nsz = topo_nblock_sizes(topo), cap;
	int32_t p;

	if ((low = state_alloc(ps, bk->nb + 1, 4)) == NULL ||
	    (per = state_alloc(ps, t->nsw + 1, 4)) == NULL ||
	    (fill = state_alloc(ps, t->nsw + 1, 4)) == NULL)
		return -1;
	for (b = 0; b < bk->nb; b++) {
		low[b] = NO_INDEX;
		for (i = bk->off[b]; i < bk->off[b + 1]; i++) {
			s = ps->nodes[bk->node[i]].leaf;
			low[b] = low[b] == NO_INDEX ? s : lca(t, low[b], s);
		}
		for (p = low[b] == NO_INDEX ? -1 : (int32_t)low[b]; p >= 0 &&
		    (uint32_t)p != t->root; p = t->parent[p])
			per[p]++;
	}
	base = topo_block_size(topo, 0);
	cap = bk->nb + 1;
	for (k = 1; k < nsz; k++)
		cap += bk->nb + 1;
	for (s = 0; s < t->nsw; s++)
		if (per[s] >= 2)
			cap += per[s] + 1;
	if ((bk->goff = state_alloc(ps, cap + 1, 4)) == NULL ||
	    (bk->gblk = state_alloc(ps, cap + 1, 4)) == NULL)
		return -1;
	for (k = 1; k < nsz; k++) {
		m = topo_block_size(topo, k) / base;
		for (b = 0; b < bk->nb; b += m) {
			bk->goff[ng++] = n;
			for (i = b; i < bk->nb && i < b + m; i++)
				bk->gblk[n++] = i;
		}
	}
	/* Switch groups, in switch order; fill[s] is the group's index. */
	for (s = 0; s < t->nsw; s++) {
		fill[s] = NO_INDEX;
		if (per[s] < 2)
			continue;
		fill[s] = ng;
		bk->goff[ng++] = n;
		n += per[s];
	}
	bk->goff[ng] = n;
	memset(per, 0, (size_t)(t->nsw + 1) * 4);
	for (b = 0; b < bk->nb; b++)
		for (p = low[b] == NO_INDEX ? -1 : (int32_t)low[b]; p >= 0 &&
		    (uint32_t)p != t->root; p = t->parent[p])
			if (fill[p] != NO_INDEX)
				bk->gblk[bk->goff[fill[p]] + per[p]++] = b;
	bk->goff[ng++] = n;
	for (b = 0; b < bk->nb; b++)
		bk->gblk[n++] = b;
	bk->goff[ng] = n;
	bk->ngrp = ng;
	if ((bk->grun = state_alloc(ps, ng + 1, 1)) == NULL ||
	    (bk->pre = state_alloc(ps, bk->nb + 1, 8)) == NULL)
		return -1;
	for (m = 0; m < ng; m++) {
		bk->grun[m] = 1;
		for (i = bk->goff[m] + 1; i < bk->goff[m + 1]; i++)
			if (bk->gblk[i] != bk->gblk[i - 1] + 1)
				bk->grun[m] = 0;
	}
	return 0;
}

int
block_map(struct pass *ps, uint32_t ntopo, uint32_t *npieces)
{
	const struct topo *topo = ps->in->topo;
	struct blocks *bk;
	uint32_t i, b, l, p, *bhead, *pnext, *last, *rest, *pn, *per;
	uint8_t *has;
	int32_t v;

	ps->blk = NULL;
	*npieces = 0;
	if (topo_nblocks(topo) == 0)
		return 0;
	if ((bk = state_alloc(ps, 1, sizeof(*bk))) == NULL)
		return -1;
	bk->nb = (uint32_t)topo_nblocks(topo);
	if ((bk->node_blk = state_alloc(ps, ps->nnodes + 1, 4)) == NULL ||
	    (has = state_alloc(ps, ntopo + 1, 1)) == NULL ||
	    (rest = state_alloc(ps, ntopo + 1, 4)) == NULL ||
	    (bhead = state_alloc(ps, bk->nb + 1, 4)) == NULL ||
	    (last = state_alloc(ps, bk->nb + 1, 4)) == NULL ||
	    (bk->pleaf = state_alloc(ps, ps->nnodes + 1, 4)) == NULL ||
	    (bk->pblk = state_alloc(ps, ps->nnodes + 1, 4)) == NULL ||
	    (pnext = state_alloc(ps, ps->nnodes + 1, 4)) == NULL ||
	    (pn = state_alloc(ps, ps->nnodes + 1, 4)) == NULL ||
	    (per = state_alloc(ps, ntopo + 1, 4)) == NULL)
		return -1;
	for (i = 0; i < ps->nnodes; i++) {
		v = ps->in->nodes[i].name != NULL ?
		    topo_node_block(topo, ps->in->nodes[i].name) : -1;
		bk->node_blk[i] = v >= 0 ? (uint32_t)v : NO_INDEX;
		if (v >= 0)
			has[ps->nodes[i].leaf] = 1;
	}
	memset(rest, 0xff, (size_t)(ntopo + 1) * 4);
	memset(bhead, 0xff, (size_t)(bk->nb + 1) * 4);
	memset(last, 0xff, (size_t)(bk->nb + 1) * 4);
	/* Every node of a leaf that has block nodes goes to a piece; a
	 * block's nodes are usually consecutive, so its last piece is
	 * almost always the one. */
	for (i = 0; i < ps->nnodes; i++) {
		l = ps->nodes[i].leaf;
		if (!has[l])
			continue;
		b = bk->node_blk[i];
		if (b == NO_INDEX)
			p = rest[l];
		else if ((p = last[b]) == NO_INDEX || bk->pleaf[p] != l)
			for (p = bhead[b]; p != NO_INDEX && bk->pleaf[p] != l;
			    p = pnext[p])
				;
		if (p == NO_INDEX) {
			p = bk->npc++;
			per[l]++;
			bk->pleaf[p] = l;
			bk->pblk[p] = b;
			if (b == NO_INDEX)
				rest[l] = p;
			else {
				pnext[p] = bhead[b];
				bhead[b] = p;
			}
		}
		if (b != NO_INDEX)
			last[b] = p;
		pn[i] = p;
	}
	/* Only leaves of several pieces are split. */
	if ((bk->psw = state_alloc(ps, bk->npc + 1, 4)) == NULL ||
	    (bk->tparent = state_alloc(ps, bk->npc + 1, 4)) == NULL)
		return -1;
	for (p = 0; p < bk->npc; p++) {
		l = bk->pleaf[p];
		if (per[l] == 1) {
			bk->psw[p] = l;
			continue;
		}
		bk->tparent[bk->np] = l;
		bk->psw[p] = ntopo + 1 + bk->np++;
	}
	for (i = 0; i < ps->nnodes; i++)
		if (has[ps->nodes[i].leaf])
			ps->nodes[i].leaf = bk->psw[pn[i]];
	ps->blk = bk;
	*npieces = bk->np;
	return 0;
}

uint32_t
block_npieces(const struct pass *ps)
{
	return ps->blk != NULL ? ps->blk->np : 0;
}

uint32_t
block_piece_parent(const struct pass *ps, uint32_t p)
{
	return ps->blk->tparent[p];
}

int
block_build(struct pass *ps)
{
	struct blocks *bk = ps->blk;
	uint32_t i, b, most = 0, *fill;

	if (bk == NULL)
		return 0;
	if ((bk->off = state_alloc(ps, bk->nb + 2, 4)) == NULL ||
	    (bk->node = state_alloc(ps, ps->nnodes + 1, 4)) == NULL ||
	    (bk->poff = state_alloc(ps, bk->nb + 2, 4)) == NULL ||
	    (bk->piece = state_alloc(ps, bk->npc + 1, 4)) == NULL ||
	    (fill = state_alloc(ps, bk->nb + 1, 4)) == NULL ||
	    (bk->cnt = state_alloc(ps, bk->nb + 1, 4)) == NULL ||
	    (bk->units = state_alloc(ps, bk->nb + 1, 4)) == NULL ||
	    (bk->fc = state_alloc(ps, bk->nb + 1, 4)) == NULL ||
	    (bk->usedb = state_alloc(ps, bk->nb + 1, 1)) == NULL)
		return -1;
	for (i = 0; i < ps->nnodes; i++)
		if ((b = bk->node_blk[i]) != NO_INDEX)
			bk->off[b + 1]++;
	for (b = 0; b < bk->nb; b++) {
		if (bk->off[b + 1] > most)
			most = bk->off[b + 1];
		bk->off[b + 1] += bk->off[b];
	}
	for (i = 0; i < ps->nnodes; i++)
		if ((b = bk->node_blk[i]) != NO_INDEX)
			bk->node[bk->off[b] + fill[b]++] = i;
	for (i = 0; i < bk->npc; i++)
		if ((b = bk->pblk[i]) != NO_INDEX)
			bk->poff[b + 1]++;
	for (b = 0; b < bk->nb; b++)
		bk->poff[b + 1] += bk->poff[b];
	memset(fill, 0, (size_t)(bk->nb + 1) * 4);
	for (i = 0; i < bk->npc; i++)
		if ((b = bk->pblk[i]) != NO_INDEX)
			bk->piece[bk->poff[b] + fill[b]++] = bk->psw[i];
	if ((bk->cand = state_alloc(ps, most + 1, sizeof(*bk->cand))) ==
	    NULL || (bk->bhead = state_alloc(ps, most + 1, 4)) == NULL ||
	    (bk->btail = state_alloc(ps, most + 1, 4)) == NULL ||
	    (bk->bnext = state_alloc(ps, bk->nb + 1, 4)) == NULL)
		return -1;
	bk->most = most;
	return build_groups(ps, bk);
}

enum sched_reason
block_req(struct pass *ps, const struct sched_job *jb, struct preq *rq)
{
	bool named = jb->topo_mode != SCHED_TOPO_ANY &&
	    jb->topo_level != NULL && ps->blk != NULL &&
	    strcasecmp(jb->topo_level, "block") == 0;

	rq->seg = 1;
	rq->bk = BK_NONE;
	if (jb->segment > 0) {
		/* Submit refuses these; a topology reloaded without
		 * blocks leaves such a job waiting. */
		if (ps->blk == NULL)
			return SCHED_REASON_TOPOLOGY;
		if (jb->nodes_min % jb->segment != 0 ||
		    jb->nodes_max % jb->segment != 0 ||
		    (jb->topo_mode == SCHED_TOPO_REQUIRED && !named))
			return SCHED_REASON_BAD_CONSTRAINTS;
		rq->seg = jb->segment;
		rq->bk = BK_SEG;
	}
	if (ps->blk == NULL)
		return SCHED_REASON_NONE;
	if (named && jb->topo_mode == SCHED_TOPO_REQUIRED)
		rq->bk = BK_ONE;
	else if (rq->bk == BK_NONE && !jb->cpu_only &&
	    (jb->topo_mode == SCHED_TOPO_ANY || named))
		rq->bk = BK_PLAIN;
	return SCHED_REASON_NONE;
}

/* Fitting nodes per block, from the per-switch counts cnt of rq in the
 * state being placed (place_counts, or a replay's): the sum over the
 * block's pieces. */
static const uint32_t *
counts(struct pass *ps, const int32_t *cnt)
{
	struct blocks *bk = ps->blk;
	uint32_t b, k;
	int32_t c;

	for (b = 0; b < bk->nb; b++) {
		c = 0;
		for (k = bk->poff[b]; k < bk->poff[b + 1]; k++)
			c += cnt[bk->piece[k]];
		bk->cnt[b] = c > 0 ? (uint32_t)c : 0;
	}
	return bk->cnt;
}

static uint32_t
unit_of(const struct preq *rq)
{
	return rq->seg > 0 ? rq->seg : 1;
}

uint32_t
block_capacity(struct pass *ps, const struct preq *rq, const int32_t *cnt)
{
	const uint32_t *c;
	uint32_t b, u = unit_of(rq), best = 0;
	uint64_t sum = 0;

	if (ps->blk == NULL || rq->bk < BK_SEG)
		return UINT32_MAX;
	c = counts(ps, cnt);
	for (b = 0; b < ps->blk->nb; b++) {
		if (c[b] / u * u > best)
			best = c[b] / u * u;
		sum += c[b] / u * u;
	}
	if (rq->bk == BK_ONE)
		return best;
	return sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
}

bool
block_feas_reset(struct pass *ps, const struct preq *rq, const int32_t *cnt)
{
	struct blocks *bk = ps->blk;
	const uint32_t *c = counts(ps, cnt);
	uint32_t b, u = unit_of(rq);
	bool ok = false;

	bk->funits = 0;
	for (b = 0; b < bk->nb; b++) {
		bk->fc[b] = c[b];
		bk->funits += bk->fc[b] / u;
		ok |= bk->fc[b] >= rq->n;
	}
	return rq->bk == BK_ONE ? ok : bk->funits * u >= rq->n;
}

bool
block_feas_add(struct pass *ps, const struct preq *rq, uint32_t node)
{
	struct blocks *bk = ps->blk;
	uint32_t b = bk->node_blk[node], u = unit_of(rq);

	if (b == NO_INDEX)
		return false;
	bk->funits -= bk->fc[b] / u;
	bk->fc[b]++;
	bk->funits += bk->fc[b] / u;
	if (rq->bk == BK_ONE)
		return bk->fc[b] >= rq->n;
	return bk->funits * u >= rq->n;
}

bool
block_keep_ok(const struct pass *ps, const struct preq *rq,
    const struct pick *p, uint32_t n)
{
	const struct blocks *bk = ps->blk;
	uint32_t k, u = rq->bk == BK_ONE ? n : unit_of(rq), b = NO_INDEX;

	if (bk == NULL || rq->bk < BK_SEG)
		return true;
	if (n == 0 || n % unit_of(rq) != 0)
		return false;
	for (k = 0; k < n; k++) {
		if (k % u == 0)
			b = bk->node_blk[p[k].node];
		if (b == NO_INDEX || bk->node_blk[p[k].node] != b)
			return false;
	}
	return true;
}

/* The best want fitting nodes of block b, appended to out[*k] in node
 * order (rank order inside a block is node order, as in a leaf). */
static int
block_take(struct pass *ps, const struct preq *rq, const uint64_t *freev,
    uint32_t b, uint32_t want, struct pick *out, uint32_t *k)
{
	struct blocks *bk = ps->blk;

	return place_take(ps, rq, freev, bk->node + bk->off[b],
	    bk->off[b + 1] - bk->off[b], bk->cand, want, out, k);
}

/* Where rq's block rule would place it given the counts cnt: *one, a
 * block that holds the whole gang (the best fit), else *grp, the
 * smallest group that holds its segments (its blocks' units in
 * bk->units); -1 when neither exists. */
static int
block_choose(struct pass *ps, const struct preq *rq, const int32_t *cnt,
    uint32_t *one, uint32_t *grp)
{
	struct blocks *bk = ps->blk;
	const uint32_t *c;
	uint32_t b, g, i, u = unit_of(rq), need, best = NO_INDEX;
	uint32_t *a = bk->units;
	uint64_t sum, bestsum = 0;

	*one = *grp = NO_INDEX;
	if (rq->n == 0 || rq->n % u != 0)
		return -1;
	c = counts(ps, cnt);
	/* One block: the best fit (fewest fitting nodes that hold it). */
	for (b = 0; b < bk->nb; b++)
		if (c[b] >= rq->n && (best == NO_INDEX || c[b] < c[best]))
			best = b;
	if (best != NO_INDEX) {
		*one = best;
		return 0;
	}
	if (rq->bk == BK_ONE)
		return -1;
	/* Several: the smallest group that holds the segments. */
	need = rq->n / u;
	bk->pre[0] = 0;
	for (b = 0; b < bk->nb; b++) {
		a[b] = c[b] / u;
		bk->pre[b + 1] = bk->pre[b] + a[b];
	}
	for (g = 0; g < bk->ngrp; g++) {
		sum = 0;
		if (bk->goff[g] == bk->goff[g + 1])
			;
		else if (bk->grun[g])
			sum = bk->pre[bk->gblk[bk->goff[g + 1] - 1] + 1] -
			    bk->pre[bk->gblk[bk->goff[g]]];
		else
			for (i = bk->goff[g]; i < bk->goff[g + 1]; i++)
				sum += a[bk->gblk[i]];
		if (sum >= need && (best == NO_INDEX || sum < bestsum)) {
			best = g;
			bestsum = sum;
		}
	}
	if (best == NO_INDEX)
		return -1;
	*grp = best;
	return 0;
}

bool
block_fits(struct pass *ps, const struct preq *rq, const int32_t *cnt)
{
	uint32_t one, grp;

	return block_choose(ps, rq, cnt, &one, &grp) == 0;
}

int
block_select(struct pass *ps, const struct preq *rq, const int32_t *cnt,
    const uint64_t *freev, struct pick *out)
{
	struct blocks *bk = ps->blk;
	uint32_t b, i, u = unit_of(rq), need, best, one, big, v, top;
	uint32_t k = 0, take, *a = bk->units;

	if (block_choose(ps, rq, cnt, &one, &best) == -1) {
		errno = EAGAIN;
		return -1;
	}
	if (one != NO_INDEX)
		return block_take(ps, rq, freev, one, rq->n, out, &k);
	need = rq->n / u;
	/* The largest blocks first, the best fit for the rest: with the
	 * group's blocks bucketed by units (group order inside a bucket),
	 * the largest is the head of the highest bucket, the best fit the
	 * head of the lowest bucket at or above what is left; linear in the
	 * group and the largest block, however many blocks are taken. */
	for (v = 0; v <= bk->most; v++)
		bk->bhead[v] = NO_INDEX;
	top = 0;
	for (i = bk->goff[best]; i < bk->goff[best + 1]; i++) {
		b = bk->gblk[i];
		if ((v = a[b]) == 0)
			continue;
		bk->bnext[b] = NO_INDEX;
		if (bk->bhead[v] == NO_INDEX)
			bk->bhead[v] = b;
		else
			bk->bnext[bk->btail[v]] = b;
		bk->btail[v] = b;
		if (v > top)
			top = v;
	}
	while (need > 0) {
		while (top > 0 && bk->bhead[top] == NO_INDEX)
			top--;
		if (top == 0) {
			errno = EAGAIN;
			return -1;
		}
		v = top;
		if (top >= need)
			for (v = need; bk->bhead[v] == NO_INDEX; v++)
				;
		big = bk->bhead[v];
		bk->bhead[v] = bk->bnext[big];
		take = v < need ? v : need;
		if (block_take(ps, rq, freev, big, take * u, out, &k) == -1)
			return -1;
		need -= take;
	}
	return 0;
}
