/* daemon/sched/: randomized runs that drive the core forward in virtual
 * time, with nodes and GPUs failing, jobs restarting on what is left of
 * their gangs and hot spares in the cluster: invariants after every
 * pass, reservations never delayed by backfill, and the same decisions
 * for the same seed. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check_sched.h"

#define SIM_JOBS 4096

struct simjob {
	struct sched_job spec;
	int64_t end;		/* limit-based, while running */
	int64_t real_end;	/* when it really ends (<= end) */
	int64_t promised;	/* earliest reservation start; -1: none */
	int state;		/* 0 unborn, 1 pending, 2 running, 3 done */
	uint32_t gang[64];	/* its nodes in rank order, once started */
	uint32_t ngang;
};

struct sim {
	struct cl c;
	struct simjob jobs[SIM_JOBS];
	size_t njobs;
	uint64_t rng;
	int64_t now;
	bool chaos;		/* node and GPU failures come and go */
	bool big;		/* 150 nodes, a leaf of 130 */
	struct sched_job pend[SIM_JOBS];
	size_t map[SIM_JOBS];
	struct sched_running runs[SIM_JOBS];
	uint64_t hash;
	size_t starts, resvs, backfills;
	size_t restarts, kept;	/* restarts; old nodes seen kept */
};

static const char sim_topo[] =
    "SwitchName=leaf0 Nodes=n[000-003]\n"
    "SwitchName=leaf1 Nodes=n[004-007]\n"
    "SwitchName=leaf2 Nodes=n[008-011]\n"
    "SwitchName=leaf3 Nodes=n[012-015]\n"
    "SwitchName=spine0 Switches=leaf[0-1]\n"
    "SwitchName=spine1 Switches=leaf[2-3]\n";
#define SIM_NODES 18		/* two nodes outside the file */

static const char sim_big_topo[] =
    "SwitchName=leaf0 Nodes=n[000-129]\n"
    "SwitchName=leaf1 Nodes=n[130-147]\n"
    "SwitchName=spine0 Switches=leaf[0-1]\n";
#define SIM_BIG_NODES 150	/* two nodes outside the file */

static uint64_t
rnd(struct sim *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

static uint32_t
pick(struct sim *s, uint32_t n)
{
	return (uint32_t)(rnd(s) % n);
}

static void
mix(struct sim *s, uint64_t v)
{
	s->hash = (s->hash ^ v) * 1099511628211ULL;
}

static void
sim_add_job(struct sim *s, int32_t priority)
{
	static const uint32_t gs[] = { 0, 1, 1, 2, 4, 4, 8 };
	static const char *const levels[] = { "leaf", "spine" };
	struct simjob *j;

	if (s->njobs == SIM_JOBS)
		return;
	j = &s->jobs[s->njobs];
	memset(j, 0, sizeof(*j));
	j->spec.id = s->njobs + 1;
	j->spec.priority = priority;
	j->spec.submit = s->now;
	j->spec.nodes_min = 1 + pick(s, pick(s, 4) == 0 ? (s->big ? 60 : 8) :
	    3);
	j->spec.nodes_max = j->spec.nodes_min + (pick(s, 5) == 0 ?
	    pick(s, 4) : 0);
	j->spec.gpus_per_node = gs[pick(s, 7)];
	if (pick(s, 8) == 0)
		j->spec.gpu_type = pick(s, 2) ? "h100" : "A100";
	j->spec.topo_mode = (enum sched_topo_mode)pick(s, 3);
	j->spec.topo_level = levels[pick(s, 2)];
	j->spec.time_limit = pick(s, 6) == 0 ? 0 : 10 + pick(s, 400);
	j->promised = -1;
	j->state = 1;
	s->njobs++;
}

static void
sim_init(struct sim *s, uint64_t seed, bool chaos, bool big)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	s->big = big;
	if (big) {
		cl_init(&s->c, SIM_BIG_NODES, sim_big_topo);
		for (i = 130; i < 148; i++)
			s->c.nodes[i].gpu_model = A100;
		s->c.nodes[7].spare = true;
		s->c.nodes[149].spare = true;
	} else {
		cl_init(&s->c, SIM_NODES, sim_topo);
		for (i = 12; i < 16; i++)
			s->c.nodes[i].gpu_model = A100;
		s->c.nodes[3].spare = true;	/* in leaf0 */
		s->c.nodes[17].spare = true;	/* outside the file */
	}
	s->rng = seed * 2654435761ULL + 1;
	s->chaos = chaos;
	s->hash = 1469598103934665603ULL;
	for (i = 0; i < (big ? 200 : 40); i++)
		sim_add_job(s, (int32_t)(100 + pick(s, 3) * 10));
	for (i = 0; i < s->njobs; i++)
		if (pick(s, 10) == 0)
			s->jobs[i].spec.restarting = true;
}

/* The level-L domain of node i: its leaf's ancestor at L, computed from
 * the topology independently of the core. */
static int32_t
domain_of(const struct cl *c, uint32_t i, unsigned L)
{
	int32_t sw = topo_node_leaf(c->topo, c->names[i]), p;

	if (sw < 0)
		return -1000;	/* the unlisted domain */
	while ((p = topo_switch_parent(c->topo, (size_t)sw)) >= 0 &&
	    topo_switch_level(c->topo, (size_t)p) <= L)
		sw = p;
	return sw;
}

static bool
node_ok(const struct cl *c, uint32_t i, const struct sched_job *jb)
{
	const struct sched_node *n = &c->nodes[i];

	return n->up && !n->drained && n->health != SCHED_HEALTH_FAILED &&
	    sched_gpu_type_match(n->gpu_model, jb->gpu_type);
}

/* Check one placement against the cluster as the test sees it. */
static void
check_place(struct sim *s, const struct sched_job *jb, uint32_t nn,
    const struct sched_place *pl, bool now)
{
	const struct cl *c = &s->c;
	uint8_t seen[MAXN] = { 0 };
	uint32_t k, g, want;
	const struct sched_gpu *gp;
	int lv;

	CHECK(nn >= jb->nodes_min && nn <= jb->nodes_max, "job %llu: %u nodes",
	    (unsigned long long)jb->id, nn);
	for (k = 0; k < nn; k++) {
		CHECK(pl[k].node < c->n, "node %u out of range", pl[k].node);
		CHECK(!seen[pl[k].node], "node twice");
		seen[pl[k].node] = 1;
		CHECK(node_ok(c, pl[k].node, jb),
		    "job %llu on unfit node %u",
		    (unsigned long long)jb->id, pl[k].node);
		CHECK(!c->nodes[pl[k].node].spare || jb->restarting,
		    "job %llu not restarting on spare node %u",
		    (unsigned long long)jb->id, pl[k].node);
		want = jb->gpus_per_node ? jb->gpus_per_node : GPN;
		CHECK(pl[k].ngpus == want, "job %llu: %u GPUs on node %u, "
		    "want %u", (unsigned long long)jb->id, pl[k].ngpus,
		    pl[k].node, want);
		for (g = 0; g < pl[k].ngpus; g++) {
			CHECK(pl[k].gpus[g] < GPN, "GPU %u", pl[k].gpus[g]);
			CHECK(g == 0 || pl[k].gpus[g] > pl[k].gpus[g - 1],
			    "GPUs not ascending");
			gp = &c->gpus[pl[k].node][pl[k].gpus[g]];
			CHECK(gp->health == SCHED_HEALTH_OK, "unhealthy GPU %u "
			    "on node %u", pl[k].gpus[g], pl[k].node);
			if (now)
				CHECK(gp->job == 0, "GPU allocated "
				    "twice: node %u GPU %u to %llu and %llu",
				    pl[k].node, pl[k].gpus[g],
				    (unsigned long long)gp->job,
				    (unsigned long long)jb->id);
		}
		if (jb->topo_mode == SCHED_TOPO_REQUIRED) {
			lv = topo_level_index(c->topo, jb->topo_level);
			CHECK(domain_of(c, pl[k].node, (unsigned)lv) ==
			    domain_of(c, pl[0].node, (unsigned)lv),
			    "job %llu spans %s domains",
			    (unsigned long long)jb->id, jb->topo_level);
		}
	}
}

/* Could node i take job jb now, as keep.c sees it (health OK)? */
static bool
sim_keepable(const struct cl *c, uint32_t i, const struct sched_job *jb)
{
	uint32_t g, nfree = 0;

	if (!node_ok(c, i, jb) || c->nodes[i].health != SCHED_HEALTH_OK)
		return false;
	for (g = 0; g < GPN; g++)
		nfree += c->gpus[i][g].health == SCHED_HEALTH_OK &&
		    c->gpus[i][g].job == 0;
	return jb->gpus_per_node == 0 ? nfree == GPN :
	    nfree >= jb->gpus_per_node;
}

/* A restart keeps its old nodes: those in the new gang keep their old
 * order, and their old ranks when the gang is no smaller than before;
 * without a required level (and outside backfill, where the reserved
 * nodes are off limits) every old node that can take it is kept. */
static void
check_keep(struct sim *s, const struct sched_job *jb,
    const struct sched_start *st)
{
	uint32_t r, k, last = 0;
	bool first = true, in;

	for (r = 0; r < jb->nprev; r++) {
		in = false;
		for (k = 0; k < st->nnodes; k++) {
			if (st->nodes[k].node != jb->prev_nodes[r])
				continue;
			in = true;
			CHECK(first || k > last, "job %llu: old rank %u "
			    "moved before an earlier one",
			    (unsigned long long)jb->id, r);
			CHECK(st->nnodes < jb->nprev || k == r, "job %llu: "
			    "old rank %u now rank %u",
			    (unsigned long long)jb->id, r, k);
			first = false;
			last = k;
			s->kept++;
		}
		if (!in && !st->backfill &&
		    jb->topo_mode != SCHED_TOPO_REQUIRED)
			CHECK(!sim_keepable(&s->c, jb->prev_nodes[r], jb),
			    "job %llu: old node %u fits but was let go",
			    (unsigned long long)jb->id, jb->prev_nodes[r]);
	}
}

static void
sim_pass(struct sim *s)
{
	struct sched_job *pend = s->pend;
	size_t *map = s->map, np = 0, nr = 0, i, k, g;
	struct sched_running *runs = s->runs;
	struct sched_result *res;
	const struct sched_start *st;
	struct simjob *j;

	for (i = 0; i < s->njobs; i++) {
		if (s->jobs[i].state == 1) {
			map[np] = i;
			pend[np++] = s->jobs[i].spec;
		} else if (s->jobs[i].state == 2) {
			runs[nr].id = s->jobs[i].spec.id;
			runs[nr++].end = s->jobs[i].end;
		}
	}
	res = run(&s->c, runs, nr, pend, np, s->now);
	for (k = 0; k < res->nstarts; k++) {
		st = &res->starts[k];
		j = &s->jobs[map[st->pending]];
		CHECK(j->spec.id == st->job, "start names the wrong job");
		CHECK(res->reasons[st->pending] == SCHED_REASON_NONE,
		    "a started job has a reason");
		check_place(s, &j->spec, st->nnodes, st->nodes, true);
		if (j->spec.nprev > 0)
			check_keep(s, &j->spec, st);
		j->ngang = st->nnodes;
		for (i = 0; i < st->nnodes; i++)
			j->gang[i] = st->nodes[i].node;
		/* Apply at once, so a GPU given twice in one pass shows. */
		for (i = 0; i < st->nnodes; i++)
			for (g = 0; g < st->nodes[i].ngpus; g++)
				s->c.gpus[st->nodes[i].node]
				    [st->nodes[i].gpus[g]].job = st->job;
		if (!s->chaos && j->promised >= 0)
			CHECK(s->now <= j->promised, "job %llu "
			    "promised %lld started %lld",
			    (unsigned long long)st->job,
			    (long long)j->promised, (long long)s->now);
		j->state = 2;
		j->end = st->end;
		CHECK(st->end == s->now + (j->spec.time_limit ?
		    j->spec.time_limit : 300), "end %lld", (long long)st->end);
		j->real_end = s->now + 1 + (int64_t)pick(s,
		    (uint32_t)(st->end - s->now));
		s->starts++;
		s->backfills += st->backfill;
		mix(s, st->job);
		for (i = 0; i < st->nnodes; i++)
			mix(s, (uint64_t)st->nodes[i].node << 32 |
			    gpuset(&st->nodes[i]));
	}
	for (k = 0; k < np; k++)
		if (s->jobs[map[k]].state == 1)
			CHECK(res->reasons[k] != SCHED_REASON_NONE,
			    "a waiting job without a reason");
	if (res->has_resv) {
		j = &s->jobs[map[res->resv.pending]];
		CHECK(j->state == 1, "reservation for a job not pending");
		CHECK(res->resv.start >= s->now, "reservation in the past");
		check_place(s, &j->spec, res->resv.nnodes, res->resv.nodes,
		    false);
		/* Backfill may never push a promise later. */
		if (!s->chaos && j->promised >= 0)
			CHECK(res->resv.start <= j->promised, "job %llu "
			    "promised %lld, now reserved at %lld",
			    (unsigned long long)res->resv.job,
			    (long long)j->promised,
			    (long long)res->resv.start);
		if (j->promised < 0 || res->resv.start < j->promised)
			j->promised = res->resv.start;
		s->resvs++;
		mix(s, res->resv.job ^ (uint64_t)res->resv.start << 20);
	}
	sched_result_free(res);
}

/* Job id fails: it frees its GPUs and waits to restart on (as much
 * as it can of) its old gang. */
static void
sim_restart(struct sim *s, uint64_t id)
{
	struct simjob *j = &s->jobs[id - 1];
	size_t n, g;

	if (j->state != 2)
		return;
	for (n = 0; n < s->c.n; n++)
		for (g = 0; g < GPN; g++)
			if (s->c.gpus[n][g].job == id)
				s->c.gpus[n][g].job = 0;
	j->state = 1;
	j->spec.restarting = true;
	j->spec.prev_nodes = j->gang;
	j->spec.nprev = j->ngang;
	j->promised = -1;
	s->restarts++;
}

/* Node i failed (gpu < 0) or one GPU of it: its jobs restart. */
static void
sim_fail(struct sim *s, uint32_t i, int gpu)
{
	uint32_t g;

	for (g = 0; g < GPN; g++)
		if ((gpu < 0 || (int)g == gpu) && s->c.gpus[i][g].job != 0)
			sim_restart(s, s->c.gpus[i][g].job);
}

static void
sim_chaos(struct sim *s)
{
	uint32_t i = pick(s, (uint32_t)s->c.n), g;

	switch (pick(s, 7)) {
	case 0:
		s->c.nodes[i].drained = !s->c.nodes[i].drained;
		break;
	case 1:
		s->c.nodes[i].up = !s->c.nodes[i].up;
		if (!s->c.nodes[i].up)
			sim_fail(s, i, -1);
		break;
	case 2:
		s->c.nodes[i].health = s->c.nodes[i].health ==
		    SCHED_HEALTH_OK ? SCHED_HEALTH_FAILED : SCHED_HEALTH_OK;
		if (s->c.nodes[i].health == SCHED_HEALTH_FAILED)
			sim_fail(s, i, -1);
		break;
	case 3:
		g = pick(s, GPN);
		s->c.gpus[i][g].health = (enum sched_health)pick(s, 3);
		if (s->c.gpus[i][g].health == SCHED_HEALTH_FAILED)
			sim_fail(s, i, (int)g);
		break;
	case 4:
		/* A task fails on a healthy node: the whole gang comes
		 * back. */
		for (g = 0; g < GPN; g++)
			if (s->c.gpus[i][g].job != 0) {
				sim_restart(s, s->c.gpus[i][g].job);
				break;
			}
		break;
	default:
		break;
	}
}

/* Advance to the next event: a job's real end or an arrival. */
static void
sim_step(struct sim *s)
{
	int64_t next = s->now + 1 + (int64_t)pick(s, 60);
	size_t i, n, g;
	struct simjob *j;

	for (i = 0; i < s->njobs; i++)
		if (s->jobs[i].state == 2 && s->jobs[i].real_end < next)
			next = s->jobs[i].real_end;
	s->now = next;
	for (i = 0; i < s->njobs; i++) {
		j = &s->jobs[i];
		if (j->state != 2 || j->real_end > s->now)
			continue;
		j->state = 3;
		for (n = 0; n < s->c.n; n++)
			for (g = 0; g < GPN; g++)
				if (s->c.gpus[n][g].job == j->spec.id)
					s->c.gpus[n][g].job = 0;
	}
	/* Newcomers queue behind everyone (same low priority, later
	 * submit), so they may not take a promise away. */
	if (pick(s, 3) == 0)
		sim_add_job(s, 100);
	if (s->chaos && pick(s, 2) == 0)
		sim_chaos(s);
}

static uint64_t
sim_run(uint64_t seed, bool chaos, bool big, size_t steps, struct sim *s)
{
	size_t i;

	sim_init(s, seed, chaos, big);
	for (i = 0; i < steps; i++) {
		sim_pass(s);
		sim_step(s);
	}
	cl_free(&s->c);
	return s->hash;
}

/* Thousands of passes with nodes and GPUs failing and coming back: no
 * GPU given twice, no partial gang, nothing on a bad node (checked in
 * sim_pass after every pass). */
START_TEST(test_random_invariants)
{
	struct sim *s = malloc(sizeof(*s));

	ck_assert_ptr_nonnull(s);
	sim_run(7 + (uint64_t)_i, true, _i == 2, _i == 2 ? 800 : 2500, s);
	ck_assert_uint_gt(s->restarts, 20);
	ck_assert_uint_gt(s->kept, 20);
	ck_assert_uint_gt(s->starts, 200);
	ck_assert_uint_gt(s->resvs, 50);
	ck_assert_uint_gt(s->backfills, 10);
	free(s);
}
END_TEST

/* Many random workloads without failures: a job never starts later than
 * the first reservation it was given, and later passes never move it
 * back. */
START_TEST(test_backfill_never_delays)
{
	struct sim *s = malloc(sizeof(*s));
	size_t i, kept = 0;

	ck_assert_ptr_nonnull(s);
	sim_run(1000 + (uint64_t)_i, false, _i % 8 == 7, 400, s);
	for (i = 0; i < s->njobs; i++)
		if (s->jobs[i].promised >= 0 && s->jobs[i].state >= 2)
			kept++;
	ck_assert_uint_gt(kept, 3);
	ck_assert_uint_gt(s->backfills, 0);
	free(s);
}
END_TEST

START_TEST(test_deterministic)
{
	struct sim *s = malloc(sizeof(*s));
	uint64_t a, b, c;

	ck_assert_ptr_nonnull(s);
	a = sim_run(42, true, false, 600, s);
	b = sim_run(42, true, false, 600, s);
	c = sim_run(43, true, false, 600, s);
	ck_assert_uint_eq(a, b);
	ck_assert_uint_ne(a, c);
	free(s);
}
END_TEST

TCase *
sched_sim_tcase(void)
{
	TCase *tr = tcase_create("random");

	tcase_add_loop_test(tr, test_random_invariants, 0, 3);
	tcase_add_loop_test(tr, test_backfill_never_delays, 0, 40);
	tcase_add_test(tr, test_deterministic);
	return tr;
}
