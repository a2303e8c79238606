/* Victim selection (sched.h, "Preemption"): for a job that cannot start,
 * the running jobs its queue's policy lets it stop, taken whole in order
 * of least lost work until the job fits both placement (on the GPUs free
 * now plus those the victims would free, its topology constraint
 * included) and quota (the victims' usage removed); then the victims not
 * needed are dropped again, most lost work first.
 *
 * Like the reservation (resv.c), the test works on the job's counts of
 * fitting nodes per switch, kept up to date as a victim's GPUs are freed
 * or held again (each GPU costs the depth of the tree), on a private
 * vector of free masks that place_select reads. A test of a job outside
 * a torus box is the counts (per switch, per block) and a quota test on
 * the most GPUs the placement could take; only when that quota test
 * fails, and for the final set, is the placement made (fits). So a
 * planner costs its candidates' GPUs, per node, plus few placements; one
 * for a torus box, one box search per test. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sched/sched_int.h"

/* A candidate victim. */
struct vic {
	int64_t lost;
	int64_t start;
	uint64_t id;
	uint32_t ngpu;
	uint32_t run;		/* index into squota.run */
	uint32_t lca;		/* BORROWERS: the lowest queue shared with
				 * the preemptor; NO_INDEX: LOWER */
	uint8_t on;		/* chosen */
	uint8_t kept;		/* on in the smallest sufficient set found */
};

struct preempt {
	uint64_t *fut;		/* [nnodes]: free masks with victims gone */
	uint8_t *fit;		/* [nnodes]: does the node fit, in fut */
	uint32_t *stamp;	/* [nnodes]: gen once fit is known */
	uint32_t gen;
	uint8_t *fit0;		/* [nnodes]: fit when it became known */
	uint32_t *touched;	/* the nodes whose fit is known, in the
				 * order they became known */
	uint32_t ntouched;
	int32_t *cnt0;		/* [nsw]: the counts before the all-on
				 * test (undo_all) */
	uint8_t *taken;		/* [nrun]: a victim of this pass */
	struct vic *vic;	/* [nrun] */
	struct pick *picks;	/* [nnodes] */
	uint8_t *picked;	/* [nnodes]: in picks (zero between uses) */
	uint32_t *qlca;		/* [nq]: per victim queue, BORROWERS: the
				 * shared queue, or NO_INDEX: not allowed */
	bool lazy;		/* the planned job's fit is read from its
				 * counts (counted) */
	uint64_t per;		/* lazy: most GPUs it takes on a node */
	int64_t ffit[SCHED_FLAVORS_MAX];	/* lazy: fitting nodes (fit)
						 * per flavor */
	bool fresh;		/* fits: picks hold the placement tested */
};

static struct preempt *
scratch(struct pass *ps)
{
	struct preempt *p = ps->pre;
	uint32_t nn = ps->nnodes, nr = ps->sq->nrun;

	if (p != NULL)
		return p;
	if ((p = state_alloc(ps, 1, sizeof(*p))) == NULL ||
	    (p->fut = state_alloc(ps, nn + 1, 8)) == NULL ||
	    (p->fit = state_alloc(ps, nn + 1, 1)) == NULL ||
	    (p->stamp = state_alloc(ps, nn + 1, 4)) == NULL ||
	    (p->fit0 = state_alloc(ps, nn + 1, 1)) == NULL ||
	    (p->touched = state_alloc(ps, nn + 1, 4)) == NULL ||
	    (p->cnt0 = state_alloc(ps, ps->t.nsw + 1, 4)) == NULL ||
	    (p->taken = state_alloc(ps, nr + 1, 1)) == NULL ||
	    (p->vic = state_alloc(ps, nr + 1, sizeof(*p->vic))) == NULL ||
	    (p->picks = state_alloc(ps, nn + 1, sizeof(*p->picks))) == NULL ||
	    (p->picked = state_alloc(ps, nn + 1, 1)) == NULL ||
	    (p->qlca = state_alloc(ps, ps->sq->nq + 1, 4)) == NULL)
		return NULL;
	ps->pre = p;
	return p;
}

/* Least lost work, then fewer GPUs, then the newest start, then id. */
static int
vic_cmp(const void *a, const void *b)
{
	const struct vic *x = a, *y = b;

	if (x->lost != y->lost)
		return x->lost < y->lost ? -1 : 1;
	if (x->ngpu != y->ngpu)
		return x->ngpu < y->ngpu ? -1 : 1;
	if (x->start != y->start)
		return x->start > y->start ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->run < y->run ? -1 : x->run > y->run;
}

/* Can a GPU be given out once its holder stops? */
static bool
releasable(const struct pass *ps, uint32_t node, uint32_t pos)
{
	return (ps->nodes[node].flags & PN_ELIGIBLE) &&
	    ps->in->nodes[node].gpus[pos].health == SCHED_HEALTH_OK;
}

/* Does running job r hold a GPU the job could use? */
static bool
usable(const struct pass *ps, const struct preq *rq, uint32_t r)
{
	const struct squota *sq = ps->sq;
	const struct srun *run = &sq->run[r];
	uint32_t k, node;

	for (k = run->off; k < run->off + run->ngpu; k++) {
		node = (uint32_t)(sq->held[k] >> 8);
		if (releasable(ps, node, (uint32_t)(sq->held[k] & 0xff)) &&
		    rq->match[ps->nodes[node].model] &&
		    (rq->ok == NULL || rq->ok[node]))
			return true;
	}
	return false;
}

/* Free (on) or hold again (!on) victim v's GPUs and usage. A job's held
 * GPUs are listed node by node (squota.c), so each node's GPUs change
 * together: one fit test per node, not per GPU. */
static void
toggle(struct pass *ps, struct preempt *p, const struct preq *rq,
    int32_t *cnt, struct vic *v, bool on)
{
	struct squota *sq = ps->sq;
	const struct srun *run = &sq->run[v->run];
	uint64_t g[SCHED_FLAVORS_MAX], m;
	uint32_t k, end = run->off + run->ngpu, node, pos, f;
	uint8_t now;
	int32_t s;

	for (k = run->off; k < end;) {
		node = (uint32_t)(sq->held[k] >> 8);
		for (m = 0; k < end && (uint32_t)(sq->held[k] >> 8) == node;
		    k++) {
			pos = (uint32_t)(sq->held[k] & 0xff);
			if (releasable(ps, node, pos))
				m |= 1ULL << pos;
		}
		if (m == 0)
			continue;
		if (p->stamp[node] != p->gen) {
			p->stamp[node] = p->gen;
			p->fit[node] = p->fit0[node] = state_fits(ps, node,
			    rq, ps->nodes[node].free);
			p->touched[p->ntouched++] = node;
		}
		if (on)
			p->fut[node] |= m;
		else
			p->fut[node] &= ~m;
		now = state_fits(ps, node, rq, p->fut[node]);
		if (now == p->fit[node])
			continue;
		p->fit[node] = now;
		for (s = (int32_t)ps->nodes[node].leaf; s >= 0;
		    s = ps->t.parent[s])
			cnt[s] += now ? 1 : -1;
		for (f = 0; f < sq->nf; f++)
			if (sq->fl[ps->nodes[node].model] >> f & 1)
				p->ffit[f] += now ? 1 : -1;
	}
	squota_run_gpus(sq, v->run, g);
	squota_add(sq, run->queue, g, on ? -1 : 1);
	v->on = on;
}

/* Hold again every one of the nc candidates, all on: as toggling each
 * off, but by putting back the state saved before they went on (the
 * counts in cnt0 and ffit0, each touched node's mask and fit), so that
 * it costs the nodes, not the GPUs and their fit tests. */
static void
undo_all(struct pass *ps, struct preempt *p, int32_t *cnt,
    const int64_t *ffit0, size_t nc)
{
	struct squota *sq = ps->sq;
	uint64_t g[SCHED_FLAVORS_MAX];
	uint32_t i, node;
	size_t k;

	memcpy(cnt, p->cnt0, ps->t.nsw * sizeof(*cnt));
	memcpy(p->ffit, ffit0, sizeof(p->ffit));
	for (i = 0; i < p->ntouched; i++) {
		node = p->touched[i];
		p->fut[node] = ps->nodes[node].free;
		p->fit[node] = p->fit0[node];
	}
	for (k = 0; k < nc; k++) {
		squota_run_gpus(sq, p->vic[k].run, g);
		squota_add(sq, sq->run[p->vic[k].run].queue, g, 1);
		p->vic[k].on = 0;
	}
}

/* Can whether rq is placed be read from its counts? For a job counted
 * without a walk and not in a torus box, yes: on the tree a placement
 * exists whenever one domain has enough fitting nodes (place_capacity:
 * take() finds them under the counts it is given, and a preferred block
 * falls back to the tree); under a block rule, whenever block_fits. */
static bool
counted(const struct pass *ps, const struct preq *rq)
{
	return (rq->torus == TQ_NONE || ps->tor == NULL) && !rq->walk;
}

/* For a lazy test: the fitting nodes per flavor now (the counts of
 * their model classes) and the most GPUs rq takes on one node. */
static void
lazy_init(const struct pass *ps, struct preempt *p, const struct preq *rq)
{
	const struct squota *sq = ps->sq;
	uint32_t m, f, c;

	p->per = rq->cpu ? 0 : rq->g > 0 ? rq->g : ps->stride - 1;
	memset(p->ffit, 0, sizeof(p->ffit));
	for (m = 0; m < ps->nmodels; m++) {
		c = state_model_fits(ps, rq, m);
		for (f = 0; f < sq->nf; f++)
			if (sq->fl[m] >> f & 1)
				p->ffit[f] += c;
	}
}

/* The most GPUs per flavor a placement of rq can take: rq->n of the
 * fitting nodes, at most p->per GPUs each, so in flavor f at most
 * min(n, fitting nodes of f) nodes' worth. */
static void
gpus_bound(const struct pass *ps, const struct preempt *p,
    const struct preq *rq, uint64_t *g)
{
	uint32_t f;
	int64_t c;

	for (f = 0; f < ps->sq->nf; f++) {
		c = p->ffit[f] < (int64_t)rq->n ? p->ffit[f] : rq->n;
		g[f] = c > 0 ? (uint64_t)c * p->per : 0;
	}
}

/* The quota part of the test for GPUs g per flavor. */
static bool
quota_fits(struct pass *ps, struct preempt *p, size_t j, size_t nv,
    const uint64_t *g)
{
	const struct sched_job *jb = &ps->in->pending[j];
	size_t k;

	if (squota_check(ps->sq, jb->queue, g) != NO_INDEX)
		return false;
	for (k = 0; k < nv; k++)
		if (p->vic[k].on && p->vic[k].lca != NO_INDEX &&
		    !squota_within(ps->sq, jb->queue, g[0], p->vic[k].lca))
			return false;
	return true;
}

/* Does job j fit with the chosen victims gone? p->fresh tells whether
 * p->picks holds the placement: without need, a job whose fit is read
 * from its counts (counted) and whose most GPUs (gpus_bound) pass the
 * quota is known to fit, and the placement, the costly part of a test,
 * is left to the one test that needs it (each quota test passes for
 * fewer GPUs, so the answer is the one the placement would give). */
static bool
fits(struct pass *ps, struct preempt *p, const struct preq *rq,
    const int32_t *cnt, size_t j, size_t nv, bool need)
{
	uint64_t g[SCHED_FLAVORS_MAX];

	p->fresh = false;
	if (place_capacity(ps, rq, cnt) < rq->n)
		return false;
	if (!need && p->lazy) {
		if (rq->bk >= BK_SEG && ps->blk != NULL &&
		    !block_fits(ps, rq, cnt))
			return false;
		gpus_bound(ps, p, rq, g);
		if (quota_fits(ps, p, j, nv, g))
			return true;
	}
	/* A required box's test is a box search: each one counts against
	 * SCHED_PREEMPT_MAX_TRIES. */
	if (rq->torus == TQ_REQUIRED)
		ps->preempt_boxes++;
	if (place_select(ps, rq, cnt, p->fut, p->picks) == -1)
		return false;
	p->fresh = true;
	squota_gpus(ps, p->picks, rq->n, g);
	return quota_fits(ps, p, j, nv, g);
}

/* The running jobs job j's policy lets it stop, in victim order. */
static size_t
candidates(struct pass *ps, struct preempt *p, size_t j,
    const struct preq *rq)
{
	const struct sched_input *in = ps->in;
	const struct sched_job *jb = &in->pending[j];
	const struct squota *sq = ps->sq;
	enum sched_preempt pol = in->queues[jb->queue].preempt;
	const struct sched_running *ir;
	const struct srun *run;
	uint64_t gmin;
	uint32_t r, a, lca;
	size_t nc = 0;
	bool ok;

	gmin = sched_min_gpus(ps, jb);
	/* BORROWERS depends on the victim's queue only: decide it once per
	 * queue, not per running job. */
	for (r = 0; r < sq->nq; r++) {
		p->qlca[r] = NO_INDEX;
		if (!(pol & SCHED_PREEMPT_BORROWERS) || r == jb->queue)
			continue;
		a = squota_lca(sq, jb->queue, r);
		if (squota_borrowing(sq, r, a) &&
		    squota_within(sq, jb->queue, gmin, a))
			p->qlca[r] = a;
	}
	for (r = 0; r < sq->nrun; r++) {
		run = &sq->run[r];
		ir = &in->running[run->in];
		if (p->taken[r] || !ir->preemptible || run->ngpu == 0)
			continue;
		ok = false;
		lca = NO_INDEX;
		if ((pol & SCHED_PREEMPT_LOWER) && run->queue == jb->queue &&
		    ir->priority < jb->priority)
			ok = true;
		else if (p->qlca[run->queue] != NO_INDEX) {
			ok = true;
			lca = p->qlca[run->queue];
		}
		if (!ok || !usable(ps, rq, r))
			continue;
		p->vic[nc].lost = ir->lost;
		p->vic[nc].start = ir->start;
		p->vic[nc].id = ir->id;
		p->vic[nc].ngpu = run->ngpu;
		p->vic[nc].run = r;
		p->vic[nc].lca = lca;
		p->vic[nc].on = 0;
		nc++;
	}
	qsort(p->vic, nc, sizeof(*p->vic), vic_cmp);
	return nc;
}

static int
record(struct pass *ps, struct preempt *p, size_t j, size_t nv)
{
	struct prec *np;
	uint64_t *nvv;
	size_t cap, k, n = 0;

	for (k = 0; k < nv; k++)
		n += p->vic[k].on;
	if (ps->nprecs == ps->capprecs) {
		cap = ps->capprecs * 2 + 8;
		if ((np = realloc(ps->precs, cap * sizeof(*np))) == NULL)
			return -1;
		ps->precs = np;
		ps->capprecs = cap;
	}
	if (ps->nvictims + n > ps->capvictims) {
		cap = ps->capvictims * 2 + n + 16;
		if ((nvv = realloc(ps->victims, cap * sizeof(*nvv))) == NULL)
			return -1;
		ps->victims = nvv;
		ps->capvictims = cap;
	}
	ps->precs[ps->nprecs].pending = j;
	ps->precs[ps->nprecs].first = (uint32_t)ps->nvictims;
	ps->precs[ps->nprecs].n = (uint32_t)n;
	ps->nprecs++;
	for (k = 0; k < nv; k++)
		if (p->vic[k].on) {
			ps->victims[ps->nvictims++] = p->vic[k].id;
			p->taken[p->vic[k].run] = 1;
		}
	return 0;
}

/* Does victim v hold a GPU on a node of the placement in picks (marked
 * in picked)? */
static bool
on_picks(const struct pass *ps, const struct preempt *p,
    const struct vic *v)
{
	const struct srun *run = &ps->sq->run[v->run];
	uint32_t k;

	for (k = run->off; k < run->off + run->ngpu; k++)
		if (p->picked[ps->sq->held[k] >> 8])
			return true;
	return false;
}

/* A required box with the victims on: the placement found (fresh picks)
 * uses some nodes only; the victims on none of them are not needed, and
 * one test checks it (a box search) instead of one per victim. Put back
 * if the test fails (quota). Returns whether the picks are fresh. */
static bool
drop_off_box(struct pass *ps, struct preempt *p, const struct preq *rq,
    int32_t *cnt, size_t j, size_t nv)
{
	size_t k, nd = 0;
	uint32_t i;

	for (i = 0; i < rq->n; i++)
		p->picked[p->picks[i].node] = 1;
	for (k = 0; k < nv; k++) {
		p->vic[k].kept = p->vic[k].on;
		if (p->vic[k].on && !on_picks(ps, p, &p->vic[k])) {
			toggle(ps, p, rq, cnt, &p->vic[k], false);
			nd++;
		}
	}
	for (i = 0; i < rq->n; i++)
		p->picked[p->picks[i].node] = 0;
	if (nd == 0)
		return true;
	if (fits(ps, p, rq, cnt, j, nv, true))
		return true;
	for (k = 0; k < nv; k++)
		if (p->vic[k].kept && !p->vic[k].on)
			toggle(ps, p, rq, cnt, &p->vic[k], true);
	return false;
}

/* The GPUs free now that the planned placement counts on are not given
 * to a later job of this pass. */
static void
hold(struct pass *ps, const struct preempt *p, uint32_t n)
{
	uint32_t k, node;
	uint64_t m;

	for (k = 0; k < n; k++) {
		node = p->picks[k].node;
		if ((m = p->picks[k].mask & ps->nodes[node].free) != 0)
			state_take(ps, node, m);
	}
}

int
preempt_plan(struct pass *ps, size_t j, const struct preq *rq0)
{
	const struct sched_input *in = ps->in;
	const struct sched_job *jb = &in->pending[j];
	struct preempt *p;
	struct vic *v;
	struct preq rq = *rq0;
	int32_t *cnt = ps->cnt;
	int64_t ffit0[SCHED_FLAVORS_MAX];
	size_t nc, k, nv = 0, lo = 0, hi, mid, drops;
	uint32_t i;
	bool ok = false, untested = false, fresh = false;
	int rc = 0;

	if (in->queues[jb->queue].preempt == SCHED_PREEMPT_NEVER ||
	    jb->preempting || ps->nprecs >= ps->preempt_max ||
	    ps->preempt_tried + ps->preempt_boxes >=
	    SCHED_PREEMPT_MAX_TRIES)
		return 0;
	if ((p = scratch(ps)) == NULL)
		return -1;
	/* rq.set stays as try_start left it: after the reservation, a job
	 * that would end after its start looks only at unreserved nodes,
	 * so the GPUs it frees are ones it may start on under backfill. */
	rq.n = jb->nodes_min;
	/* A preferred torus box never decides whether a job fits (the
	 * fallback takes any nodes): plan on the tree's cheaper placement;
	 * the start, in a later pass, takes a box. */
	if (rq.torus == TQ_PREFER)
		rq.torus = TQ_NONE;
	if ((nc = candidates(ps, p, j, &rq)) == 0)
		return 0;
	/* A search with candidates costs placements: those are bounded
	 * (one per search, plus one per box search of a required box). */
	ps->preempt_tried++;
	if ((p->lazy = counted(ps, &rq)))
		lazy_init(ps, p, &rq);
	if (++p->gen == 0) {
		memset(p->stamp, 0, ps->nnodes * sizeof(*p->stamp));
		p->gen = 1;
	}
	p->ntouched = 0;
	for (i = 0; i < ps->nnodes; i++)
		p->fut[i] = ps->nodes[i].free;
	place_counts(ps, &rq, cnt);
	/* It fits without victims: it waits for something else (the
	 * reservation), and stopping jobs would not help it. */
	if (fits(ps, p, &rq, cnt, j, 0, false))
		return 0;
	/* Would it fit with every candidate gone? If not, nothing is
	 * preempted, and the search costs this one placement. */
	memcpy(p->cnt0, cnt, ps->t.nsw * sizeof(*cnt));
	memcpy(ffit0, p->ffit, sizeof(ffit0));
	for (k = 0; k < nc; k++)
		toggle(ps, p, &rq, cnt, &p->vic[k], true);
	ok = fits(ps, p, &rq, cnt, j, 0, false);
	undo_all(ps, p, cnt, ffit0, nc);
	if (!ok)
		return 0;
	ok = false;
	while (nv < nc && !ok) {
		v = &p->vic[nv++];
		/* A borrower is reclaimed only while its queue still
		 * borrows, with the victims before it gone. */
		if (v->lca != NO_INDEX && !squota_borrowing(ps->sq,
		    ps->sq->run[v->run].queue, v->lca))
			continue;
		toggle(ps, p, &rq, cnt, v, true);
		/* A required torus box costs a search per test: test at 1,
		 * 2, 4, ... victims (and all); the bisection and the drops
		 * below take back the ones not needed. */
		untested = !(rq.torus != TQ_REQUIRED || (nv & (nv - 1)) ==
		    0 || nv == nc);
		if (!untested &&
		    !(ok = fits(ps, p, &rq, cnt, j, nv, false)))
			lo = nv;	/* the last failing test */
	}
	/* The last candidates were skipped (their queue no longer
	 * borrows): the set now on was never tested. */
	if (!ok && untested)
		ok = fits(ps, p, &rq, cnt, j, nv, false);
	fresh = ok && p->fresh;
	if (ok && rq.torus == TQ_REQUIRED) {
		/* The smallest sufficient prefix of the set on, between the
		 * last failing power of two (lo) and nv: a bisection, one
		 * box search per step (victims only free GPUs, so a longer
		 * prefix holds a box whenever a shorter one does, quota
		 * aside: the final test decides). */
		for (k = 0; k < nv; k++)
			p->vic[k].kept = p->vic[k].on;
		hi = nv;
		while (hi - lo > 1) {
			mid = lo + (hi - lo) / 2;
			for (k = mid; k < hi; k++)
				if (p->vic[k].on)
					toggle(ps, p, &rq, cnt, &p->vic[k],
					    false);
			if (fits(ps, p, &rq, cnt, j, nv, true)) {
				hi = mid;
				fresh = true;
			} else {
				/* Back to the prefix hi (the picks are
				 * gone with the failed test). */
				for (k = mid; k < hi; k++)
					if (p->vic[k].kept)
						toggle(ps, p, &rq, cnt,
						    &p->vic[k], true);
				lo = mid;
				fresh = false;
			}
		}
		if (fresh || fits(ps, p, &rq, cnt, j, nv, true))
			fresh = drop_off_box(ps, p, &rq, cnt, j, nv);
		else
			ok = false;
	}
	if (ok) {
		/* Drop the victims it does not need, most lost work first;
		 * a required box tries at most SCHED_PREEMPT_BOX_DROPS. */
		for (k = nv, drops = 0; k-- > 0;) {
			if (!p->vic[k].on)
				continue;
			if (rq.torus == TQ_REQUIRED &&
			    drops++ == SCHED_PREEMPT_BOX_DROPS)
				break;
			toggle(ps, p, &rq, cnt, &p->vic[k], false);
			if (fits(ps, p, &rq, cnt, j, nv, false))
				fresh = p->fresh;
			else {
				toggle(ps, p, &rq, cnt, &p->vic[k], true);
				fresh = false;
			}
		}
		/* The placement with the final victims, for hold() below,
		 * unless the last test was of that set. */
		if (!fresh && !fits(ps, p, &rq, cnt, j, nv, true))
			ok = false;
		else if (record(ps, p, j, nv) == -1)
			rc = -1;
		else
			rc = 1;
	}
	/* The victims still run in this pass: give their usage back. */
	for (k = 0; k < nv; k++)
		if (p->vic[k].on)
			toggle(ps, p, &rq, cnt, &p->vic[k], false);
	if (rc == 1)
		hold(ps, p, rq.n);
	return rc;
}
