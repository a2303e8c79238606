/* Queue quotas of one pass (sched.h, "Queues, quotas and preemption"):
 * the queue tree with its nominal, cap and guarantee per flavor, the
 * usage of every queue counted from the GPUs the listed running jobs
 * hold, and the admission test a placed job must pass. Usage moves as
 * the pass starts jobs (squota_add) and as preempt.c tries victims
 * (squota_add with sign -1, then back).
 *
 * Per queue q and flavor f the pass keeps U(q, f), the GPUs of q's
 * subtree, and S(q, f) = own(q, f) + sum over q's children c of
 * max(U(c, f), G(c, f)): what q must hold when every child keeps its
 * guarantee. Adding g GPUs to a job of queue L raises S(L) by g and, at
 * each step up, the parent's S by how much max(U, G) of the child grew,
 * so a test or an update costs the depth of the tree per flavor. The
 * virtual root is index nq. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sched/htab.h"
#include "daemon/sched/sched_int.h"

#define UNL UINT64_MAX

static uint64_t
umax(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Parents must form a forest and every index must be in range. */
static int
check_input(struct pass *ps, struct squota *sq)
{
	const struct sched_input *in = ps->in;
	uint8_t *mark;
	uint32_t q, p, top, *stack, n;
	size_t k;

	if ((mark = state_alloc(ps, sq->nq + 1, 1)) == NULL ||
	    (stack = state_alloc(ps, sq->nq + 1, 4)) == NULL)
		return -1;
	for (q = 0; q < sq->nq; q++) {
		if (in->queues[q].parent < -1 ||
		    in->queues[q].parent >= (int32_t)sq->nq)
			goto inval;
		sq->par[q] = in->queues[q].parent < 0 ? sq->nq :
		    (uint32_t)in->queues[q].parent;
	}
	sq->par[sq->nq] = NO_INDEX;
	sq->depth[sq->nq] = 0;
	mark[sq->nq] = 2;
	/* 0: not seen, 1: on the current walk up, 2: depth known. */
	for (q = 0; q < sq->nq; q++) {
		n = 0;
		for (p = q; mark[p] == 0; p = sq->par[p]) {
			mark[p] = 1;
			stack[n++] = p;
		}
		if (mark[p] == 1)
			goto inval;	/* a cycle */
		top = p;
		while (n > 0) {
			p = stack[--n];
			sq->depth[p] = sq->depth[top] + 1;
			mark[p] = 2;
			top = p;
		}
	}
	for (k = 0; k < in->nrunning; k++)
		if (in->running[k].queue >= sq->nq)
			goto inval;
	for (k = 0; k < in->npending; k++)
		if (in->pending[k].queue >= sq->nq)
			goto inval;
	return 0;
inval:
	errno = EINVAL;
	return -1;
}

/* Nominal, cap and guarantee; an inner queue with an unlimited nominal
 * takes the sum of its children's limited nominals (if any is). */
static int
build_limits(struct pass *ps, struct squota *sq)
{
	const struct sched_input *in = ps->in;
	uint32_t q, f, nf = sq->nf, *ord, d, maxd = 0, k = 0;
	uint64_t *sum, n, b, l;
	uint8_t *has;

	if ((ord = state_alloc(ps, sq->nq + 1, 4)) == NULL ||
	    (sum = state_alloc(ps, (size_t)(sq->nq + 1) * nf, 8)) == NULL ||
	    (has = state_alloc(ps, (size_t)(sq->nq + 1) * nf, 1)) == NULL)
		return -1;
	for (q = 0; q < sq->nq; q++)
		if (sq->depth[q] > maxd)
			maxd = sq->depth[q];
	/* Deepest first, so children are done before their parent. */
	for (d = maxd; d >= 1; d--)
		for (q = 0; q < sq->nq; q++)
			if (sq->depth[q] == d)
				ord[k++] = q;
	for (k = 0; k < sq->nq; k++) {
		q = ord[k];
		for (f = 0; f < nf; f++) {
			n = in->queues[q].nominal[f] == SCHED_UNLIMITED ? UNL :
			    in->queues[q].nominal[f];
			if (n == UNL && has[q * nf + f])
				n = sum[q * nf + f];
			b = in->queues[q].borrow_limit;
			l = in->queues[q].lend_limit;
			SQ(sq, N, q, f) = n;
			SQ(sq, C, q, f) = n == UNL ||
			    b == SCHED_UNLIMITED ? UNL : n + b;
			SQ(sq, G, q, f) = n == UNL || l == SCHED_UNLIMITED ?
			    0 : l >= n ? 0 : n - l;
			if (n != UNL && sq->par[q] != sq->nq) {
				sum[sq->par[q] * nf + f] += n;
				has[sq->par[q] * nf + f] = 1;
			}
		}
	}
	return 0;
}

/* The flavors each model class counts in (bit 0: every GPU). */
static void
build_flavors(struct pass *ps, struct squota *sq)
{
	const struct sched_input *in = ps->in;
	uint32_t m, f;

	for (m = 0; m < ps->nmodels; m++) {
		sq->fl[m] = 1;
		for (f = 1; f < sq->nf; f++)
			if (sched_gpu_type_match(ps->model_name[m],
			    in->flavors[f]))
				sq->fl[m] |= (uint8_t)(1u << f);
	}
}

/* The running table (first entry of a repeated id wins) and each one's
 * GPUs: per flavor, and listed for preempt.c. GPUs held by unlisted ids
 * count nowhere. */
static int
build_runs(struct pass *ps, struct squota *sq)
{
	const struct sched_input *in = ps->in;
	struct htab *ids;
	const struct sched_gpu *gp;
	uint32_t i, pos, f, nf = sq->nf, *fill;
	int64_t v, lastv = -1;
	uint64_t last = 0;
	size_t k, nheld = 0, pass;
	struct srun *r;

	if ((sq->run = state_alloc(ps, in->nrunning + 1,
	    sizeof(*sq->run))) == NULL)
		return -1;
	if ((ids = htab_create(in->nrunning, false)) == NULL)
		return -1;
	for (k = 0; k < in->nrunning; k++) {
		v = htab_put_u64(ids, in->running[k].id, sq->nrun);
		if (v != sq->nrun)
			continue;
		r = &sq->run[sq->nrun++];
		r->in = (uint32_t)k;
		r->queue = in->running[k].queue;
	}
	if ((sq->rg = state_alloc(ps, (size_t)sq->nrun * nf + 1, 4)) ==
	    NULL || (fill = state_alloc(ps, sq->nrun + 1, 4)) == NULL) {
		htab_destroy(ids);
		return -1;
	}
	/* Pass 0 counts, pass 1 lists. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < ps->nnodes; i++)
			for (pos = 0; pos < ps->nodes[i].ngpus; pos++) {
				gp = &in->nodes[i].gpus[pos];
				if (gp->job == 0)
					continue;
				if (gp->job != last) {
					last = gp->job;
					lastv = htab_get_u64(ids, gp->job);
				}
				if (lastv < 0)
					continue;
				r = &sq->run[lastv];
				if (pass == 1) {
					sq->held[r->off + fill[lastv]++] =
					    (uint64_t)i << 8 | pos;
					continue;
				}
				r->ngpu++;
				nheld++;
				for (f = 0; f < nf; f++) {
					if (!(sq->fl[ps->nodes[i].model] >> f &
					    1))
						continue;
					sq->rg[(size_t)lastv * nf + f]++;
					if (!(ps->nodes[i].flags &
					    PN_ELIGIBLE) || gp->health !=
					    SCHED_HEALTH_OK)
						sq->stuck[f]++;
				}
			}
		if (pass == 0) {
			if ((sq->held = state_alloc(ps, nheld + 1, 8)) ==
			    NULL) {
				htab_destroy(ids);
				return -1;
			}
			for (k = 0, nheld = 0; k < sq->nrun; k++) {
				sq->run[k].off = (uint32_t)nheld;
				nheld += sq->run[k].ngpu;
			}
			last = 0;
			lastv = -1;
		}
	}
	htab_destroy(ids);
	return 0;
}

static uint64_t
ok_gpus(const struct pass *ps, uint32_t i)
{
	const struct sched_node *nd = &ps->in->nodes[i];
	uint32_t g;
	uint64_t n = 0;

	for (g = 0; g < ps->nodes[i].ngpus; g++)
		n += nd->gpus[g].health == SCHED_HEALTH_OK;
	return n;
}

/* Usage and S from the running jobs; the root's cap: the OK GPUs of the
 * eligible nodes in each flavor, plus those running jobs hold elsewhere
 * (they are in the usage). */
static void
build_usage(struct pass *ps, struct squota *sq)
{
	uint32_t q, f, nf = sq->nf, i, rt = sq->nq, d, maxd = 0;
	size_t k;
	int64_t g[SCHED_FLAVORS_MAX];
	const struct pnode *pn;

	for (i = 0; i < ps->nnodes; i++) {
		pn = &ps->nodes[i];
		if (!(pn->flags & PN_ELIGIBLE))
			continue;
		for (f = 0; f < nf; f++)
			if (sq->fl[pn->model] >> f & 1)
				SQ(sq, C, rt, f) += ok_gpus(ps, i);
	}
	for (f = 0; f < nf; f++) {
		SQ(sq, C, rt, f) += sq->stuck[f];
		SQ(sq, N, rt, f) = SQ(sq, C, rt, f);
		SQ(sq, G, rt, f) = 0;
	}
	/* Own usage first, then children into parents, deepest first. */
	for (k = 0; k < sq->nrun; k++) {
		for (f = 0; f < nf; f++) {
			g[f] = sq->rg[k * nf + f];
			SQ(sq, U, sq->run[k].queue, f) += (uint64_t)g[f];
			SQ(sq, S, sq->run[k].queue, f) += (uint64_t)g[f];
		}
	}
	for (q = 0; q < sq->nq; q++)
		if (sq->depth[q] > maxd)
			maxd = sq->depth[q];
	for (d = maxd; d >= 1; d--)
		for (q = 0; q < sq->nq; q++) {
			if (sq->depth[q] != d)
				continue;
			for (f = 0; f < nf; f++) {
				SQ(sq, U, sq->par[q], f) += SQ(sq, U, q, f);
				SQ(sq, S, sq->par[q], f) +=
				    umax(SQ(sq, U, q, f), SQ(sq, G, q, f));
			}
		}
}

int
squota_build(struct pass *ps)
{
	const struct sched_input *in = ps->in;
	struct squota *sq;
	size_t cells;

	ps->sq = NULL;
	if (in->nflavors > SCHED_FLAVORS_MAX ||
	    (in->nflavors > 1 && in->flavors == NULL) ||
	    (in->nqueues > 0 && in->queues == NULL) ||
	    in->nqueues >= UINT32_MAX / 2) {
		errno = EINVAL;
		return -1;
	}
	if (in->nqueues == 0)
		return 0;
	if ((sq = state_alloc(ps, 1, sizeof(*sq))) == NULL)
		return -1;
	sq->nq = (uint32_t)in->nqueues;
	sq->nf = in->nflavors > 1 ? (uint32_t)in->nflavors : 1;
	cells = (size_t)(sq->nq + 1) * sq->nf;
	if ((sq->par = state_alloc(ps, sq->nq + 1, 4)) == NULL ||
	    (sq->depth = state_alloc(ps, sq->nq + 1, 4)) == NULL ||
	    (sq->v = state_alloc(ps, cells * SQ_NV, 8)) == NULL ||
	    (sq->fl = state_alloc(ps, ps->nmodels + 1, 1)) == NULL ||
	    (sq->tally = state_alloc(ps, sq->nq + 1, 8)) == NULL)
		return -1;
	if (check_input(ps, sq) == -1 || build_limits(ps, sq) == -1)
		return -1;
	build_flavors(ps, sq);
	if (build_runs(ps, sq) == -1)
		return -1;
	build_usage(ps, sq);
	ps->sq = sq;
	return 0;
}

void
squota_gpus(const struct pass *ps, const struct pick *pk, uint32_t n,
    uint64_t *g)
{
	const struct squota *sq = ps->sq;
	uint32_t k, f;
	uint64_t c;

	memset(g, 0, sq->nf * sizeof(*g));
	for (k = 0; k < n; k++) {
		c = (uint64_t)__builtin_popcountll(pk[k].mask);
		for (f = 0; f < sq->nf; f++)
			if (sq->fl[ps->nodes[pk[k].node].model] >> f & 1)
				g[f] += c;
	}
}

uint32_t
squota_check(const struct squota *sq, uint32_t queue, const uint64_t *g)
{
	uint64_t d[SCHED_FLAVORS_MAX], u, c;
	uint32_t q = queue, f, prev = queue;

	memcpy(d, g, sq->nf * sizeof(*d));
	for (;;) {
		for (f = 0; f < sq->nf; f++) {
			if (g[f] == 0)
				continue;
			u = SQ(sq, U, q, f);
			c = SQ(sq, C, q, f);
			if (c != UNL && (u + g[f] > c ||
			    SQ(sq, S, q, f) + d[f] > c))
				return q == sq->nq ? prev : q;
			d[f] = umax(u + g[f], SQ(sq, G, q, f)) -
			    umax(u, SQ(sq, G, q, f));
		}
		if (q == sq->nq)
			return NO_INDEX;
		prev = q;
		q = sq->par[q];
	}
}

void
squota_add(struct squota *sq, uint32_t queue, const uint64_t *g, int sign)
{
	uint64_t d[SCHED_FLAVORS_MAX], u, nu, gq;
	uint32_t q = queue, f;
	bool up;

	memcpy(d, g, sq->nf * sizeof(*d));
	for (;;) {
		for (f = 0; f < sq->nf; f++) {
			u = SQ(sq, U, q, f);
			gq = SQ(sq, G, q, f);
			/* Both are changes of non-negative sums: they undo
			 * exactly what an add of the same g did. */
			if (sign > 0) {
				nu = u + g[f];
				SQ(sq, S, q, f) += d[f];
				d[f] = umax(nu, gq) - umax(u, gq);
			} else {
				nu = u - g[f];
				SQ(sq, S, q, f) -= d[f];
				d[f] = umax(u, gq) - umax(nu, gq);
			}
			SQ(sq, U, q, f) = nu;
		}
		up = q != sq->nq;
		if (!up)
			return;
		q = sq->par[q];
	}
}

void
squota_run_gpus(const struct squota *sq, uint32_t r, uint64_t *g)
{
	uint32_t f;

	for (f = 0; f < sq->nf; f++)
		g[f] = sq->rg[(size_t)r * sq->nf + f];
}

bool
squota_within(const struct squota *sq, uint32_t queue, uint64_t g0,
    uint32_t stop)
{
	uint32_t q;
	uint64_t n;

	for (q = queue; q != sq->nq && q != stop; q = sq->par[q]) {
		n = SQ(sq, N, q, 0);
		if (n != UNL && SQ(sq, U, q, 0) + g0 > n)
			return false;
	}
	return true;
}

bool
squota_borrowing(const struct squota *sq, uint32_t queue, uint32_t stop)
{
	uint32_t q, f;
	uint64_t n;

	for (q = queue; q != sq->nq && q != stop; q = sq->par[q])
		for (f = 0; f < sq->nf; f++) {
			n = SQ(sq, N, q, f);
			if (n != UNL && SQ(sq, U, q, f) > n)
				return true;
		}
	return false;
}

uint32_t
squota_lca(const struct squota *sq, uint32_t a, uint32_t b)
{
	while (sq->depth[a] > sq->depth[b])
		a = sq->par[a];
	while (sq->depth[b] > sq->depth[a])
		b = sq->par[b];
	while (a != b) {
		a = sq->par[a];
		b = sq->par[b];
	}
	return a;
}

void
squota_tally_reset(struct squota *sq)
{
	uint32_t q;

	for (q = 0; q < sq->nq; q++)
		sq->tally[q] = SQ(sq, U, q, 0);
}

bool
squota_tally(struct squota *sq, uint32_t queue, uint64_t g0)
{
	uint32_t q;
	uint64_t n;
	bool within = true;

	for (q = queue; q != sq->nq; q = sq->par[q]) {
		n = SQ(sq, N, q, 0);
		if (n != UNL && sq->tally[q] + g0 > n)
			within = false;
		sq->tally[q] += g0;
	}
	return within;
}
