/* One scheduling pass (see sched.h for the policy): order the queue,
 * settle what can never run, then walk the queue starting what fits,
 * make the reservation for the first job that does not, and backfill
 * around it. state.c keeps the counts, place.c chooses nodes and GPUs,
 * resv.c finds the reservation. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sched/sched_int.h"
#include "daemon/sched/topo.h"

/* With queues, per pending job (in index order): what the order's
 * within-nominal test and the second sort read, so that they need not
 * visit the jobs themselves in queue order. */
struct oaux {
	uint64_t base;		/* its base order's first key: the group */
	uint64_t gmin;		/* sched_min_gpus */
	uint64_t ushare;
	uint32_t queue;
	bool never;		/* job_req gives a reason: counts not */
};

const char *
sched_reason_name(enum sched_reason r)
{
	switch (r) {
	case SCHED_REASON_NONE:
		return "None";
	case SCHED_REASON_RESOURCES:
		return "Resources";
	case SCHED_REASON_PRIORITY:
		return "Priority";
	case SCHED_REASON_TOPOLOGY:
		return "Topology";
	case SCHED_REASON_GPU_TYPE:
		return "GpuType";
	case SCHED_REASON_BAD_CONSTRAINTS:
		return "BadConstraints";
	case SCHED_REASON_QUEUE_QUOTA:
		return "QueueQuota";
	case SCHED_REASON_PREEMPTING:
		return "Preempting";
	}
	return "Unknown";
}

bool
sched_gpu_type_match(const char *model, const char *type)
{
	if (type == NULL)
		return true;
	return model != NULL && strcasestr(model, type) != NULL;
}

static int64_t
sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	return a + b;
}

/* The estimate order's key, in thousandths of a second: estimate * 1000
 * - aging * waited, saturating (so keys of absurd limits or waits still
 * compare in the right direction). */
static int64_t
estimate_key(const struct pass *ps, const struct sched_job *jb)
{
	int64_t est = jb->order_hint > 0 ? jb->order_hint :
	    jb->time_limit > 0 ? jb->time_limit : ps->default_limit;
	int64_t waited = 0, credit, key;

	if (jb->submit < ps->now)
		waited = jb->submit < 0 && ps->now > INT64_MAX + jb->submit ?
		    INT64_MAX : ps->now - jb->submit;
	key = est > INT64_MAX / SCHED_AGING_UNIT ? INT64_MAX :
	    est * SCHED_AGING_UNIT;
	if (ps->aging == 0 || waited == 0)
		return key;
	credit = waited > INT64_MAX / (int64_t)ps->aging ? INT64_MAX :
	    waited * (int64_t)ps->aging;
	/* key >= 0 and credit >= 0: key - credit cannot overflow. */
	return key - credit;
}

static enum sched_reason job_req(struct pass *, size_t, struct preq *);

uint64_t
sched_min_gpus(const struct pass *ps, const struct sched_job *jb)
{
	if (jb->cpu_only && !jb->exclusive)
		return 0;
	return (uint64_t)jb->nodes_min * (jb->gpus_per_node > 0 &&
	    !jb->exclusive ? jb->gpus_per_node : ps->stride - 1);
}

static bool
starved(const struct pass *ps, const struct sched_job *jb)
{
	int64_t s = ps->in->config.starve_s;
	uint32_t min = ps->in->config.starve_min_gpus;

	if (s <= 0 || jb->submit >= ps->now)
		return false;
	if (min > 0 && sched_min_gpus(ps, jb) < min)
		return false;
	/* now - submit > s, without overflow. */
	if (jb->submit < 0 && ps->now > INT64_MAX + jb->submit)
		return true;
	return ps->now - jb->submit > s;
}

/* Job j's place in the base order as radix keys (rsort.c): priority
 * (higher first), preempting first, restarting first, starved first;
 * then the key (0 for every job in FIFO order; not for starved jobs,
 * which keep their age order), submit time, id; ties by index, as the
 * records are in index order. Without queues no job is preempting;
 * without starve_s none is starved. */
static void
base_key(const struct pass *ps, size_t j, struct rrec *r)
{
	const struct sched_job *jb = &ps->in->pending[j];
	uint32_t prio = ~((uint32_t)jb->priority ^ 0x80000000u);
	bool st = starved(ps, jb);
	int64_t key = ps->order == SCHED_ORDER_ESTIMATE ?
	    estimate_key(ps, jb) : 0;

	r->k[0] = (uint64_t)prio << 3 |
	    (uint64_t)!(ps->sq != NULL && jb->preempting) << 2 |
	    (uint64_t)!jb->restarting << 1 | (uint64_t)!st;
	r->k[1] = st ? 0 : (uint64_t)key ^ 1ULL << 63;
	r->k[2] = (uint64_t)jb->submit ^ 1ULL << 63;
	r->k[3] = jb->id;
}

/* The queue order: the base order and, with queues, within each group of
 * jobs equal in priority, preempting, restarting and starved, the jobs
 * within their queues' nominal (in base order) before the borrowing
 * ones, those by queue share, then user share, then base order. A job
 * borrows when, walking the base order and adding each job's minimum
 * GPUs up along its path, its queue passes a nominal; jobs that can
 * never run count not. Returns the pending indices in that order. */
static size_t *
queue_order(struct pass *ps)
{
	const struct sched_input *in = ps->in;
	size_t n = in->npending, j, x, *base, *ord;
	struct rrec *r;
	struct rpair *scratch;
	struct oaux *aux;
	struct preq rq;
	uint64_t group = 0;
	bool borrow;

	if ((r = state_alloc(ps, n + 1, sizeof(*r))) == NULL ||
	    (scratch = state_alloc(ps, RSORT_SCRATCH(n),
	    sizeof(*scratch))) == NULL ||
	    (base = state_alloc(ps, n + 1, sizeof(*base))) == NULL)
		return NULL;
	if (ps->sq == NULL) {
		for (j = 0; j < n; j++)
			base_key(ps, j, &r[j]);
		rsort(r, n, base, scratch);
		return base;
	}
	if ((aux = state_alloc(ps, n + 1, sizeof(*aux))) == NULL ||
	    (ord = state_alloc(ps, n + 1, sizeof(*ord))) == NULL)
		return NULL;
	/* One visit of each job, in index order. */
	for (j = 0; j < n; j++) {
		base_key(ps, j, &r[j]);
		aux[j].base = r[j].k[0];
		aux[j].never = job_req(ps, j, &rq) != SCHED_REASON_NONE;
		aux[j].gmin = sched_min_gpus(ps, &in->pending[j]);
		aux[j].queue = in->pending[j].queue;
		aux[j].ushare = in->pending[j].user_share;
	}
	rsort(r, n, base, scratch);
	/* The second sort's records, by place in the base order. */
	squota_tally_reset(ps->sq);
	for (x = 0; x < n; x++) {
		j = base[x];
		borrow = !aux[j].never &&
		    !squota_tally(ps->sq, aux[j].queue, aux[j].gmin);
		if (x > 0 && aux[j].base != aux[base[x - 1]].base)
			group++;
		memset(&r[x], 0, sizeof(r[x]));
		/* Starved jobs (bit 0 clear) keep their age order. */
		if (borrow && (aux[j].base & 1)) {
			r[x].k[0] = group << 1 | 1;
			r[x].k[1] = in->queues[aux[j].queue].share;
			r[x].k[2] = aux[j].ushare;
		} else
			r[x].k[0] = group << 1;
	}
	rsort(r, n, ord, scratch);
	for (x = 0; x < n; x++)
		ord[x] = base[ord[x]];
	return ord;
}

/* Fill rq for job j; returns a reason when the job can never run. */
static enum sched_reason
job_req(struct pass *ps, size_t j, struct preq *rq)
{
	const struct sched_job *jb = &ps->in->pending[j];
	struct preq st;
	enum sched_reason br;
	uint32_t m;
	int lv;
	bool any = false;

	memset(rq, 0, sizeof(*rq));
	rq->n = jb->nodes_min;
	rq->g = jb->gpus_per_node;
	/* The row that allows spares, for the GPU-type check below. */
	rq->match = ps->match + ((size_t)ps->jtype[j] * 2 + 1) * ps->nmodels;
	rq->cap = ps->t.rootlevel;
	rq->set = SET_ALL;
	rq->ok = jb->node_ok;
	if (jb->exclusive) {
		rq->kind = RQ_EXCL;
		rq->g = 0;
		rq->gmin = jb->cpu_only ? 0 : jb->gpus_per_node > 0 ?
		    jb->gpus_per_node : 1;
	} else if (jb->cpu_only) {
		rq->kind = RQ_CPU;
		rq->g = 0;
	}
	rq->cpu = jb->cpu_only;
	rq->clean = jb->restarting ||
	    (ps->in->config.suspect_gang_nodes > 0 &&
	    jb->nodes_min >= ps->in->config.suspect_gang_nodes);
	if (rq->ok != NULL)
		rq->out = state_filter_out(ps, rq->ok);
	rq->walk = rq->ok != NULL || rq->kind != RQ_GPU;
	if (jb->nodes_min == 0 || jb->nodes_min > jb->nodes_max ||
	    (!jb->cpu_only && jb->gpus_per_node > SCHED_NODE_GPUS_MAX))
		return SCHED_REASON_BAD_CONSTRAINTS;
	if ((br = block_req(ps, jb, rq)) != SCHED_REASON_NONE)
		return br;
	if (ps->tor != NULL && (jb->topo_mode == SCHED_TOPO_ANY ||
	    torus_is_level(jb->topo_level)))
		rq->torus = jb->topo_mode == SCHED_TOPO_REQUIRED ?
		    TQ_REQUIRED : TQ_PREFER;
	if (jb->topo_mode == SCHED_TOPO_REQUIRED && rq->bk != BK_ONE &&
	    rq->torus == TQ_NONE) {
		if ((lv = topo_level_index(ps->in->topo, jb->topo_level)) < 0)
			return SCHED_REASON_TOPOLOGY;
		rq->cap = (uint32_t)lv < ps->t.rootlevel ? (uint32_t)lv :
		    ps->t.rootlevel - 1;
	}
	if (jb->gpu_type != NULL) {
		for (m = 0; m < ps->nmodels; m++)
			any |= rq->match[m] != 0;
		if (!any)
			return SCHED_REASON_GPU_TYPE;
	}
	if (!jb->restarting)
		rq->match -= ps->nmodels;
	st = *rq;
	st.set = SET_STATIC;
	if (state_quick(ps, &st) < rq->n)
		return SCHED_REASON_BAD_CONSTRAINTS;
	return SCHED_REASON_NONE;
}

/* Could job rq ever fit its required domain, with every node free? */
static bool
topo_possible(struct pass *ps, const struct preq *rq)
{
	struct preq st = *rq;

	st.set = SET_STATIC;
	if (rq->torus == TQ_REQUIRED)
		return torus_select(ps, &st, NULL, NULL) == 0;
	place_counts(ps, &st, ps->cnt);
	if (rq->bk >= BK_SEG)
		return block_capacity(ps, &st, ps->cnt) >= rq->n;
	return place_capacity(ps, &st, ps->cnt) >= rq->n;
}

int
sched_grow_picks(struct pass *ps, size_t more)
{
	struct pick *np;
	size_t cap;

	if (ps->npicks + more <= ps->cappicks)
		return 0;
	cap = ps->cappicks * 2 + more + 16;
	if ((np = realloc(ps->picks, cap * sizeof(*np))) == NULL)
		return -1;
	ps->picks = np;
	ps->cappicks = cap;
	return 0;
}

static int
add_start(struct pass *ps, size_t j, int64_t end, uint32_t n)
{
	struct srec *ns;
	size_t cap, k;

	if (ps->nstarts == ps->capstarts) {
		cap = ps->capstarts * 2 + 16;
		if ((ns = realloc(ps->starts, cap * sizeof(*ns))) == NULL)
			return -1;
		ps->starts = ns;
		ps->capstarts = cap;
	}
	ps->starts[ps->nstarts].pending = j;
	ps->starts[ps->nstarts].end = end;
	ps->starts[ps->nstarts].backfill = ps->has_resv;
	ps->starts[ps->nstarts].first = (uint32_t)ps->npicks;
	ps->starts[ps->nstarts].n = n;
	ps->nstarts++;
	if (ps->sq != NULL) {
		uint64_t g[SCHED_FLAVORS_MAX];

		squota_gpus(ps, ps->picks + ps->npicks, n, g);
		squota_add(ps->sq, ps->in->pending[j].queue, g, 1);
	}
	for (k = ps->npicks; k < ps->npicks + n; k++)
		state_take_job(ps, ps->picks[k].node, ps->picks[k].mask,
		    &ps->in->pending[j]);
	ps->npicks += n;
	return 0;
}

/* With queues: does the placement at picks[npicks ..] of n nodes keep
 * job j within its quota? If not, ps->qhit names the queue at its
 * limit. */
static bool
quota_ok(struct pass *ps, size_t j, uint32_t n)
{
	uint64_t g[SCHED_FLAVORS_MAX];

	if (ps->sq == NULL)
		return true;
	squota_gpus(ps, ps->picks + ps->npicks, n, g);
	ps->qhit = squota_check(ps->sq, ps->in->pending[j].queue, g);
	return ps->qhit == NO_INDEX;
}

/* An elastic job placed at rq->n nodes is over its quota: the largest
 * smaller size in [min, rq->n) whose placement fits it, by bisection
 * (more nodes never take fewer GPUs). Returns the size with its
 * placement at picks[npicks ..], or 0 (ps->qhit from the minimum). */
static uint32_t
shrink(struct pass *ps, size_t j, struct preq *rq)
{
	uint32_t u = rq->seg > 0 ? rq->seg : 1;
	uint32_t lo = ps->in->pending[j].nodes_min / u, hi = (rq->n - 1) / u;
	uint32_t best = 0, mid;

	/* In whole segments: sizes are multiples of the segment. */
	while (lo <= hi && hi > 0) {
		mid = lo + (hi - lo) / 2;
		rq->n = mid * u;
		if (place_select(ps, rq, ps->cnt, NULL,
		    ps->picks + ps->npicks) == 0 && quota_ok(ps, j, mid * u)) {
			best = mid * u;
			lo = mid + 1;
		} else
			hi = mid - 1;
	}
	if (best == 0)
		return 0;
	rq->n = best;
	if (place_select(ps, rq, ps->cnt, NULL, ps->picks + ps->npicks) == -1)
		return 0;
	return best;
}

/* An elastic gang that needs a torus box found none at rq->n nodes: the
 * largest size in [min, rq->n) with a box, by bisection (a box for more
 * nodes holds a box for fewer). Returns the size with its placement at
 * picks[npicks ..], or 0. */
static uint32_t
torus_shrink(struct pass *ps, size_t j, struct preq *rq)
{
	uint32_t lo = ps->in->pending[j].nodes_min, hi = rq->n - 1, mid;
	uint32_t best = 0;

	while (lo <= hi && hi > 0) {
		mid = lo + (hi - lo) / 2;
		rq->n = mid;
		if (torus_select(ps, rq, NULL, NULL) == 0) {
			best = mid;
			lo = mid + 1;
		} else
			hi = mid - 1;
	}
	if (best == 0)
		return 0;
	rq->n = best;
	if (place_select(ps, rq, ps->cnt, NULL, ps->picks + ps->npicks) == -1)
		return 0;
	return best;
}

/* Does job j's minimum (n x g GPUs, flavor 0) break its quota wherever
 * it lands? Sets ps->qhit. */
static bool
torus_over_quota(struct pass *ps, size_t j, const struct preq *rq)
{
	uint64_t g[SCHED_FLAVORS_MAX];

	memset(g, 0, sizeof(g));
	g[0] = (uint64_t)rq->n * rq->g;
	ps->qhit = squota_check(ps->sq, ps->in->pending[j].queue, g);
	return ps->qhit != NO_INDEX;
}

/* Start job j now in set if it fits: the largest size in [min, max].
 * Returns 1 when started, 0 when it does not fit, 2 when it fits but
 * not its quota (ps->qhit), -1 on error. */
static int
try_start(struct pass *ps, size_t j, struct preq *rq, int set, int64_t end)
{
	const struct sched_job *jb = &ps->in->pending[j];
	uint32_t capn, n;
	int rc;

	rq->set = set;
	rq->n = jb->nodes_min;
	if (state_quick(ps, rq) < rq->n)
		return 0;
	/* A torus placement costs a box search: skip it when the job's
	 * GPUs alone already break its quota (flavor 0 is the same
	 * wherever it lands). */
	if (rq->torus != TQ_NONE && ps->sq != NULL && rq->kind == RQ_GPU &&
	    !rq->cpu && rq->g > 0 && torus_over_quota(ps, j, rq))
		return 2;
	place_counts(ps, rq, ps->cnt);
	if ((capn = place_capacity(ps, rq, ps->cnt)) < rq->n)
		return 0;
	/* A block rule may hold fewer (whole segments, one block). */
	if (rq->bk >= BK_SEG) {
		n = block_capacity(ps, rq, ps->cnt);
		if ((capn = n < capn ? n : capn / rq->seg * rq->seg) < rq->n)
			return 0;
	}
	/* A required box is placed afresh: kept nodes would break it. */
	if (jb->nprev > 0 && jb->prev_nodes != NULL &&
	    rq->torus != TQ_REQUIRED) {
		if ((rc = keep_place(ps, j, rq, &n)) == -1)
			return -1;
		/* Kept nodes over the quota (an elastic gang kept at its
		 * old size), or that break the block rule: placed afresh
		 * below, where it may shrink. */
		if (rc == 1 && block_keep_ok(ps, rq, ps->picks + ps->npicks,
		    n) && quota_ok(ps, j, n))
			return add_start(ps, j, end, n) == -1 ? -1 : 1;
	}
	rq->n = capn < jb->nodes_max ? capn : jb->nodes_max;
	if (sched_grow_picks(ps, rq->n) == -1)
		return -1;
	if (place_select(ps, rq, ps->cnt, NULL, ps->picks + ps->npicks) == -1 &&
	    (rq->torus != TQ_REQUIRED || torus_shrink(ps, j, rq) == 0))
		return 0;
	if (!quota_ok(ps, j, rq->n) && (rq->n == jb->nodes_min ||
	    shrink(ps, j, rq) == 0))
		return 2;
	return add_start(ps, j, end, rq->n) == -1 ? -1 : 1;
}

/* Why job rq did not start (it was tried). */
static enum sched_reason
why(struct pass *ps, const struct sched_job *jb, struct preq *rq)
{
	struct preq any = *rq;

	rq->set = SET_ALL;
	rq->n = jb->nodes_min;
	place_counts(ps, rq, ps->cnt);
	if (ps->has_resv && place_capacity(ps, rq, ps->cnt) >= rq->n &&
	    block_capacity(ps, rq, ps->cnt) >= rq->n)
		return SCHED_REASON_PRIORITY;
	if (jb->topo_mode == SCHED_TOPO_REQUIRED || rq->bk >= BK_SEG) {
		any.set = SET_ALL;
		any.n = jb->nodes_min;
		any.cap = ps->t.rootlevel;
		any.bk = BK_NONE;
		if (state_quick(ps, &any) >= any.n)
			return SCHED_REASON_TOPOLOGY;
	}
	return SCHED_REASON_RESOURCES;
}

/* Make the reservation for blocked job j, if it can ever run on the
 * nodes that are eligible now. Returns 0 (made or not possible) or -1. */
static int
reserve(struct pass *ps, size_t j, struct preq *rq, size_t *first)
{
	int64_t start;
	uint32_t k;

	rq->set = SET_ALL;
	rq->n = ps->in->pending[j].nodes_min;
	if (sched_grow_picks(ps, rq->n) == -1)
		return -1;
	if (resv_find(ps, rq, &start, ps->picks + ps->npicks) == -1)
		return errno == EAGAIN ? 0 : -1;
	*first = ps->npicks;
	ps->npicks += rq->n;
	for (k = 0; k < rq->n; k++)
		state_reserve(ps, ps->picks[*first + k].node);
	ps->has_resv = true;
	ps->resv_start = start;
	return 0;
}

/* With queues, job j did not start (try_start's rc): a preempting job
 * waits for its victims, another may plan preemptions, and one blocked
 * by its quota gets QueueQuota; none of them takes the reservation.
 * Returns 1 when decided here, 0 for the usual path (resources), -1. */
static int
queue_blocked(struct pass *ps, size_t j, const struct preq *rq, int rc,
    struct sched_result *res)
{
	int p;

	if (ps->in->pending[j].preempting) {
		res->reasons[j] = SCHED_REASON_PREEMPTING;
		return 1;
	}
	/* Stopping GPU jobs frees no node for a CPU-only job. */
	if (rq->kind == RQ_CPU)
		p = 0;
	else if ((p = preempt_plan(ps, j, rq)) == -1)
		return -1;
	if (p == 1) {
		res->reasons[j] = SCHED_REASON_PREEMPTING;
		return 1;
	}
	if (rc == 2) {
		res->reasons[j] = SCHED_REASON_QUEUE_QUOTA;
		res->quota_queue[j] = ps->qhit;
		return 1;
	}
	return 0;
}

/* A job not tried: QueueQuota when its minimum GPUs (flavor 0; jobs of
 * whole nodes, whose count depends on the nodes, are not judged) already
 * break its quota, wherever it would be placed. */
static void
quota_cheap(struct pass *ps, size_t j, struct sched_result *res)
{
	const struct sched_job *jb = &ps->in->pending[j];
	uint64_t g[SCHED_FLAVORS_MAX];
	uint32_t hit;

	if (jb->gpus_per_node == 0)
		return;
	memset(g, 0, sizeof(g));
	g[0] = (uint64_t)jb->nodes_min * jb->gpus_per_node;
	if ((hit = squota_check(ps->sq, jb->queue, g)) == NO_INDEX)
		return;
	res->reasons[j] = SCHED_REASON_QUEUE_QUOTA;
	res->quota_queue[j] = hit;
}

/* A job the walk does not try: the cheap count's reason, and with
 * queues QueueQuota where its minimum already breaks its quota. */
static void
not_tried(struct pass *ps, size_t j, const struct preq *rq,
    struct sched_result *res)
{
	res->reasons[j] = state_quick(ps, rq) >= rq->n ?
	    SCHED_REASON_PRIORITY : SCHED_REASON_RESOURCES;
	if (ps->sq != NULL)
		quota_cheap(ps, j, res);
}

/* The jobs after the walk's budget (bf_max_job_test past the
 * reservation, or every job once one blocks the rest) are not tried:
 * each gets its reason from the counts, which none of them changes, so
 * they are visited in index order (the input's memory order), not in
 * queue order. done: the jobs the walk saw. */
static void
walk_rest(struct pass *ps, const uint8_t *done, struct sched_result *res)
{
	struct preq rq;
	size_t j;

	for (j = 0; j < ps->in->npending; j++) {
		if (done[j])
			continue;
		res->reasons[j] = job_req(ps, j, &rq);
		if (res->reasons[j] == SCHED_REASON_NONE)
			not_tried(ps, j, &rq, res);
	}
}

/* The main walk. The reservation's job and picks land in *rj, *rfirst. */
static int
walk(struct pass *ps, const size_t *ord, struct sched_result *res,
    size_t *rj, size_t *rfirst)
{
	const struct sched_input *in = ps->in;
	const struct sched_job *jb;
	struct preq rq;
	size_t x, j, tested = 0;
	uint8_t *done;
	int64_t end;
	int rc;

	if ((done = state_alloc(ps, in->npending + 1, 1)) == NULL)
		return -1;
	for (x = 0; x < in->npending; x++) {
		if (ps->blocked || (ps->has_resv && tested >= ps->bf_max)) {
			walk_rest(ps, done, res);
			break;
		}
		j = ord[x];
		done[j] = 1;
		jb = &in->pending[j];
		res->reasons[j] = job_req(ps, j, &rq);
		if (res->reasons[j] != SCHED_REASON_NONE)
			continue;
		/* Past the pass's budget of box searches, a required box
		 * gets the cheap count's reason, like bf_max_job_test's
		 * tail (sched.h, "Torus"). */
		if ((ps->has_resv && tested++ >= ps->bf_max) ||
		    (rq.torus == TQ_REQUIRED &&
		    ps->torus_searches >= SCHED_TORUS_SEARCHES_MAX)) {
			not_tried(ps, j, &rq, res);
			continue;
		}
		res->stats.tried++;
		end = sat_add(ps->now, jb->time_limit > 0 ? jb->time_limit :
		    ps->default_limit);
		rc = try_start(ps, j, &rq, ps->has_resv &&
		    end > ps->resv_start ? SET_UNRES : SET_ALL, end);
		if (rc == -1)
			return -1;
		if (rc == 1) {
			if (ps->has_resv)
				res->stats.backfilled++;
			continue;
		}
		if (ps->sq != NULL &&
		    (rc = queue_blocked(ps, j, &rq, rc, res)) != 0) {
			if (rc == -1)
				return -1;
			continue;
		}
		res->reasons[j] = why(ps, jb, &rq);
		if (ps->has_resv)
			continue;
		if ((jb->topo_mode == SCHED_TOPO_REQUIRED ||
		    rq.bk >= BK_SEG) && !topo_possible(ps, &rq)) {
			res->reasons[j] = SCHED_REASON_TOPOLOGY;
			continue;
		}
		if (reserve(ps, j, &rq, rfirst) == -1)
			return -1;
		if (ps->has_resv)
			*rj = j;
		/* Strict order: whether or not a reservation was possible,
		 * a job that waits for resources blocks the rest. */
		if (ps->no_backfill)
			ps->blocked = true;
	}
	return 0;
}

static int
gpu_index_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Turn picks[first .. first + n) into result places. */
static const struct sched_place *
emit_places(const struct pass *ps, struct sched_result *res, size_t first,
    uint32_t n, size_t *np, size_t *ng)
{
	struct sched_place *pl = res->places_ + *np;
	const struct pick *pk;
	const struct sched_node *nd;
	uint32_t k, c;
	uint64_t m;

	for (k = 0; k < n; k++) {
		pk = &ps->picks[first + k];
		nd = &ps->in->nodes[pk->node];
		pl[k].node = pk->node;
		pl[k].gpus = res->gpus_ + *ng;
		c = 0;
		for (m = pk->mask; m != 0; m &= m - 1)
			res->gpus_[*ng + c++] =
			    nd->gpus[__builtin_ctzll(m)].index;
		qsort(res->gpus_ + *ng, c, sizeof(uint32_t), gpu_index_cmp);
		pl[k].ngpus = c;
		*ng += c;
	}
	*np += n;
	return pl;
}

static int
emit(struct pass *ps, struct sched_result *res, size_t rj, size_t rfirst)
{
	size_t k, np = 0, ng = 0, gpus = 0;
	const struct srec *sr;
	struct sched_start *st;

	for (k = 0; k < ps->npicks; k++)
		gpus += (size_t)__builtin_popcountll(ps->picks[k].mask);
	if ((res->starts = calloc(ps->nstarts + 1, sizeof(*st))) == NULL ||
	    (res->places_ = calloc(ps->npicks + 1,
	    sizeof(*res->places_))) == NULL ||
	    (res->gpus_ = calloc(gpus + 1, sizeof(uint32_t))) == NULL)
		return -1;
	for (k = 0; k < ps->nstarts; k++) {
		sr = &ps->starts[k];
		st = &res->starts[k];
		st->job = ps->in->pending[sr->pending].id;
		st->pending = sr->pending;
		st->end = sr->end;
		st->backfill = sr->backfill;
		st->nnodes = sr->n;
		st->nodes = emit_places(ps, res, sr->first, sr->n, &np, &ng);
	}
	res->nstarts = ps->nstarts;
	if (ps->has_resv) {
		res->has_resv = true;
		res->resv.job = ps->in->pending[rj].id;
		res->resv.pending = rj;
		res->resv.start = ps->resv_start;
		res->resv.nnodes = ps->in->pending[rj].nodes_min;
		res->resv.nodes = emit_places(ps, res, rfirst,
		    res->resv.nnodes, &np, &ng);
	}
	if ((res->preempts = calloc(ps->nprecs + 1,
	    sizeof(*res->preempts))) == NULL ||
	    (res->victims_ = calloc(ps->nvictims + 1,
	    sizeof(*res->victims_))) == NULL)
		return -1;
	if (ps->nvictims > 0)
		memcpy(res->victims_, ps->victims,
		    ps->nvictims * sizeof(*res->victims_));
	for (k = 0; k < ps->nprecs; k++) {
		res->preempts[k].job =
		    ps->in->pending[ps->precs[k].pending].id;
		res->preempts[k].pending = ps->precs[k].pending;
		res->preempts[k].victims = res->victims_ + ps->precs[k].first;
		res->preempts[k].nvictims = ps->precs[k].n;
	}
	res->npreempts = ps->nprecs;
	res->stats.preempt_tried = ps->preempt_tried;
	res->stats.torus_searches = ps->torus_searches;
	res->stats.scratch_bytes = ps->bytes +
	    ps->capstarts * sizeof(*ps->starts) +
	    ps->cappicks * sizeof(*ps->picks) +
	    (ps->nstarts + 1) * sizeof(*st) +
	    (ps->npicks + 1) * sizeof(*res->places_) +
	    (gpus + 1) * sizeof(uint32_t);
	return 0;
}

static bool
input_ok(const struct sched_input *in)
{
	return in != NULL && (in->nodes != NULL || in->nnodes == 0) &&
	    (in->running != NULL || in->nrunning == 0) &&
	    (in->pending != NULL || in->npending == 0);
}

struct sched_result *
sched_run(const struct sched_input *in)
{
	struct pass ps;
	struct sched_result *res;
	size_t *ord, rj = 0, rfirst = 0;
	int saved;

	if (!input_ok(in)) {
		errno = EINVAL;
		return NULL;
	}
	memset(&ps, 0, sizeof(ps));
	if ((res = calloc(1, sizeof(*res))) == NULL)
		return NULL;
	if ((res->reasons = calloc(in->npending + 1,
	    sizeof(*res->reasons))) == NULL)
		goto fail;
	if (state_build(&ps, in) == -1 || torus_build(&ps) == -1 ||
	    squota_build(&ps) == -1)
		goto fail;
	ps.preempt_max = in->config.preempt_max_jobs > 0 ?
	    in->config.preempt_max_jobs : SCHED_PREEMPT_MAX_JOBS;
	if (ps.sq != NULL) {
		if ((res->quota_queue = malloc((in->npending + 1) *
		    sizeof(*res->quota_queue))) == NULL)
			goto fail;
		memset(res->quota_queue, 0xff, (in->npending + 1) *
		    sizeof(*res->quota_queue));
	}
	if ((ord = queue_order(&ps)) == NULL ||
	    walk(&ps, ord, res, &rj, &rfirst) == -1 ||
	    emit(&ps, res, rj, rfirst) == -1)
		goto fail;
	state_free(&ps);
	return res;
fail:
	saved = errno;
	state_free(&ps);
	sched_result_free(res);
	errno = saved;
	return NULL;
}

void
sched_result_free(struct sched_result *res)
{
	if (res == NULL)
		return;
	free(res->starts);
	free(res->places_);
	free(res->gpus_);
	free(res->reasons);
	free(res->quota_queue);
	free(res->preempts);
	free(res->victims_);
	free(res);
}
