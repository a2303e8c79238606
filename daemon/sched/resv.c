/* The reservation for the top blocked job: replay the future by releasing
 * running jobs (and jobs started earlier in this pass) in order of
 * expected end, keeping the job's fitting-node counts per switch up to
 * date as nodes free up, and stop at the first end time after which one
 * allowed domain holds the gang. Each release costs the depth of the
 * tree, so the whole replay is linear in the allocated GPUs. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sched/htab.h"
#include "daemon/sched/sched_int.h"

struct run {
	int64_t end;
	uint64_t id;
	uint32_t seq;		/* table order: the last tie-break */
	uint32_t ngpu;
	uint32_t off;		/* its GPUs in replay.held */
};

struct replay {
	struct run *runs;
	uint32_t nruns;
	uint64_t *held;		/* node << 8 | position, grouped by run */
	uint64_t *fut;		/* free masks as the replay goes */
	uint8_t *fit;		/* does the node fit the job in fut */
	int32_t *hold;		/* run holding each listed GPU */
};

static int
run_cmp(const void *a, const void *b)
{
	const struct run *x = a, *y = b;

	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Only GPUs that can ever be given out matter: OK health on an eligible
 * node. A FAILED GPU stays unusable whoever holds it. */
static bool
releasable(const struct pass *ps, uint32_t i, uint32_t pos)
{
	const struct sched_gpu *gp = &ps->in->nodes[i].gpus[pos];

	return (ps->nodes[i].flags & PN_ELIGIBLE) &&
	    gp->health == SCHED_HEALTH_OK;
}

/* The run index of the job holding a GPU: the previous GPU's, when the
 * same job holds both (the common case), else a table lookup. */
static int64_t
holder(const struct htab *ids, uint64_t job, uint64_t *last, int64_t *lastv)
{
	if (job != *last) {
		*last = job;
		*lastv = htab_get_u64(ids, job);
	}
	return *lastv;
}

/* The run table: input running jobs, jobs started in this pass, and a
 * never-ending entry for each job id that holds GPUs without being
 * listed as running. The id table is sized for the running jobs plus
 * the GPUs whose holder is unlisted, found by a first scan. */
static int
build_runs(struct pass *ps, struct replay *r, size_t nheld)
{
	const struct sched_input *in = ps->in;
	size_t cap = in->nrunning + ps->nstarts + nheld, k, unlisted = 0;
	struct htab *ids;
	uint32_t i, pos;
	int64_t v, lastv = -1;
	uint64_t last = 0;
	const struct sched_gpu *gp;

	if ((r->runs = state_alloc(ps, cap + 1, sizeof(*r->runs))) == NULL ||
	    (r->hold = state_alloc(ps, nheld + 1, sizeof(int32_t))) == NULL)
		return -1;
	if ((ids = htab_create(in->nrunning, false)) == NULL)
		return -1;
	r->nruns = 0;
	for (k = 0; k < in->nrunning; k++) {
		v = htab_put_u64(ids, in->running[k].id, r->nruns);
		if (v != r->nruns)
			continue;	/* a repeated id: the first counts */
		r->runs[r->nruns].id = in->running[k].id;
		r->runs[r->nruns++].end = in->running[k].end;
	}
	for (i = 0; i < ps->nnodes; i++)
		for (pos = 0; pos < ps->nodes[i].ngpus; pos++) {
			gp = &in->nodes[i].gpus[pos];
			if (gp->job != 0 && releasable(ps, i, pos) &&
			    holder(ids, gp->job, &last, &lastv) < 0)
				unlisted++;
		}
	if (unlisted > 0) {
		htab_destroy(ids);
		if ((ids = htab_create(in->nrunning + unlisted, false)) == NULL)
			return -1;
		for (k = 0; k < r->nruns; k++)
			htab_put_u64(ids, r->runs[k].id, (int64_t)k);
	}
	k = 0;
	last = 0;
	lastv = -1;
	for (i = 0; i < ps->nnodes; i++)
		for (pos = 0; pos < ps->nodes[i].ngpus; pos++) {
			gp = &in->nodes[i].gpus[pos];
			if (gp->job == 0 || !releasable(ps, i, pos))
				continue;
			if ((v = holder(ids, gp->job, &last, &lastv)) < 0) {
				v = htab_put_u64(ids, gp->job, r->nruns);
				r->runs[r->nruns].id = gp->job;
				r->runs[r->nruns++].end = INT64_MAX;
				lastv = v;
			}
			r->hold[k++] = (int32_t)v;
			r->runs[v].ngpu++;
		}
	htab_destroy(ids);
	for (k = 0; k < ps->nstarts; k++) {
		r->runs[r->nruns].id =
		    ps->in->pending[ps->starts[k].pending].id;
		r->runs[r->nruns++].end = ps->starts[k].end;
	}
	return 0;
}

/* Group every releasable held GPU by the run holding it. */
static int
build_held(struct pass *ps, struct replay *r, size_t nheld)
{
	const struct sched_input *in = ps->in;
	uint32_t i, pos, x, n, first = r->nruns - (uint32_t)ps->nstarts;
	uint32_t *fill;
	size_t k = 0, s, total = nheld;
	uint64_t m;
	const struct srec *sr;
	const struct pick *pk;

	for (s = 0; s < ps->nstarts; s++) {
		sr = &ps->starts[s];
		for (x = 0; x < sr->n; x++)
			r->runs[first + s].ngpu += (uint32_t)
			    __builtin_popcountll(ps->picks[sr->first + x].mask);
		total += r->runs[first + s].ngpu;
	}
	if ((r->held = state_alloc(ps, total + 1, 8)) == NULL ||
	    (fill = state_alloc(ps, r->nruns + 1, 4)) == NULL)
		return -1;
	for (n = 0, x = 0; x < r->nruns; x++) {
		r->runs[x].off = n;
		n += r->runs[x].ngpu;
	}
	for (i = 0; i < ps->nnodes; i++)
		for (pos = 0; pos < ps->nodes[i].ngpus; pos++) {
			if (in->nodes[i].gpus[pos].job == 0 ||
			    !releasable(ps, i, pos))
				continue;
			x = (uint32_t)r->hold[k++];
			r->held[r->runs[x].off + fill[x]++] =
			    (uint64_t)i << 8 | pos;
		}
	for (s = 0; s < ps->nstarts; s++) {
		sr = &ps->starts[s];
		for (x = 0; x < sr->n; x++) {
			pk = &ps->picks[sr->first + x];
			for (m = pk->mask; m != 0; m &= m - 1)
				r->held[r->runs[first + s].off +
				    fill[first + s]++] = (uint64_t)pk->node <<
				    8 | (uint64_t)__builtin_ctzll(m);
		}
	}
	return 0;
}

static bool
feasible(const struct pass *ps, const struct preq *rq, const int32_t *cnt,
    uint32_t node)
{
	uint32_t d;

	if (rq->cap >= ps->t.rootlevel)
		return (uint32_t)cnt[ps->t.root] >= rq->n;
	d = place_domain(ps, ps->nodes[node].leaf, rq->cap);
	return (uint32_t)cnt[d] >= rq->n;
}

/* Release one run's GPUs; returns whether the job now fits. */
static bool
release(struct pass *ps, struct replay *r, const struct preq *rq,
    int32_t *cnt, const struct run *run)
{
	uint32_t k, node;
	int32_t s;
	bool ok = false;

	for (k = run->off; k < run->off + run->ngpu; k++) {
		node = (uint32_t)(r->held[k] >> 8);
		r->fut[node] |= 1ULL << (r->held[k] & 0xff);
		if (r->fit[node] || !state_fits(ps, node, rq, r->fut[node]))
			continue;
		r->fit[node] = 1;
		for (s = (int32_t)ps->nodes[node].leaf; s >= 0;
		    s = ps->t.parent[s])
			cnt[s]++;
		/* A block rule is met by blocks, not switches. */
		if (rq->bk >= BK_SEG ? block_feas_add(ps, rq, node) :
		    feasible(ps, rq, cnt, node))
			ok = true;
	}
	return ok;
}

/* A required torus box (torus.c) needs more than enough nodes, and a
 * box only grows as GPUs are released: replay to the end, noting the
 * group after which each node first fits, then bisect over the groups
 * for the first whose nodes hold a box; replay again up to it for the
 * free masks the placement picks from. */
static int
resv_box(struct pass *ps, struct replay *r, const struct preq *rq,
    int32_t *cnt, int64_t *start, struct pick *out)
{
	uint32_t *ft, *gx, ng = 0, x, i, k, lo, hi, mid, node;
	int64_t *gend, end;
	uint64_t *fv;

	if ((ft = state_alloc(ps, ps->nnodes + 1, 4)) == NULL ||
	    (fv = state_alloc(ps, ps->nnodes + 1, 8)) == NULL ||
	    (gx = state_alloc(ps, r->nruns + 2, 4)) == NULL ||
	    (gend = state_alloc(ps, r->nruns + 2, 8)) == NULL)
		return -1;
	for (i = 0; i < ps->nnodes; i++)
		ft[i] = r->fit[i] ? 0 : UINT32_MAX;
	gx[0] = 0;
	gend[0] = ps->now;
	for (x = 0; x < r->nruns; ) {
		if ((end = r->runs[x].end) == INT64_MAX)
			break;
		ng++;
		for (; x < r->nruns && r->runs[x].end == end; x++) {
			release(ps, r, rq, cnt, &r->runs[x]);
			for (k = r->runs[x].off; k < r->runs[x].off +
			    r->runs[x].ngpu; k++) {
				node = (uint32_t)(r->held[k] >> 8);
				if (r->fit[node] && ft[node] == UINT32_MAX)
					ft[node] = ng;
			}
		}
		gx[ng] = x;
		gend[ng] = end;
	}
	lo = 0;
	hi = ng + 1;		/* ng + 1: never */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		for (i = 0; i < ps->nnodes; i++)
			fv[i] = ft[i] <= mid ? r->fut[i] : 0;
		if (torus_select(ps, rq, fv, NULL) == 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo > ng) {
		errno = EAGAIN;
		return -1;
	}
	for (i = 0; i < ps->nnodes; i++)
		r->fut[i] = ps->nodes[i].free;
	for (x = 0; x < gx[lo]; x++)
		for (k = r->runs[x].off; k < r->runs[x].off + r->runs[x].ngpu;
		    k++)
			r->fut[r->held[k] >> 8] |= 1ULL << (r->held[k] & 0xff);
	*start = gend[lo] > ps->now ? gend[lo] : ps->now;
	return torus_select(ps, rq, r->fut, out);
}

int
resv_find(struct pass *ps, const struct preq *rq, int64_t *start,
    struct pick *out)
{
	struct replay r;
	int32_t *cnt = ps->cnt;
	size_t nheld = 0;
	uint32_t i, pos, x;
	bool ok;
	int64_t end = ps->now;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < ps->nnodes; i++)
		for (pos = 0; pos < ps->nodes[i].ngpus; pos++)
			if (ps->in->nodes[i].gpus[pos].job != 0 &&
			    releasable(ps, i, pos))
				nheld++;
	if (build_runs(ps, &r, nheld) == -1 || build_held(ps, &r, nheld) == -1)
		return -1;
	if ((r.fut = state_alloc(ps, ps->nnodes + 1, 8)) == NULL ||
	    (r.fit = state_alloc(ps, ps->nnodes + 1, 1)) == NULL)
		return -1;
	for (x = 0; x < r.nruns; x++)
		r.runs[x].seq = x;
	/* Each run carries its GPUs' offset, so the table itself sorts. */
	qsort(r.runs, r.nruns, sizeof(*r.runs), run_cmp);
	for (i = 0; i < ps->nnodes; i++) {
		r.fut[i] = ps->nodes[i].free;
		r.fit[i] = state_fits(ps, i, rq, r.fut[i]);
	}
	place_counts(ps, rq, cnt);
	if (rq->torus == TQ_REQUIRED)
		return resv_box(ps, &r, rq, cnt, start, out);
	ok = rq->bk >= BK_SEG ? block_feas_reset(ps, rq, cnt) :
	    place_capacity(ps, rq, cnt) >= rq->n;
	/* Release whole groups of equal end time, so the node set chosen
	 * does not depend on the order among jobs ending together. */
	for (x = 0; x < r.nruns && !ok; ) {
		end = r.runs[x].end;
		if (end == INT64_MAX)
			break;
		for (; x < r.nruns && r.runs[x].end == end; x++)
			if (release(ps, &r, rq, cnt, &r.runs[x]))
				ok = true;
	}
	if (!ok) {
		errno = EAGAIN;
		return -1;
	}
	*start = end > ps->now ? end : ps->now;
	return place_select(ps, rq, cnt, r.fut, out);
}
