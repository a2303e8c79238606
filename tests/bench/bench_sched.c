/* Scheduler core benchmark (not a timed test): a synthetic cluster of
 * N nodes x 8 GPUs, 32 nodes per leaf switch, 8 leaves per spine, filled
 * to about 85% with a mix of jobs placed by the core itself, then K
 * scheduling passes over M pending gang jobs of 1-1,024 GPUs while time
 * advances, jobs end and new ones arrive. Prints the median and p99 pass
 * time, one 1,024-GPU placement alone, and the core's memory per GPU.
 * Then (not with --smoke) the same number of passes again with queues
 * (a small tree with quotas, borrowing and preemption; each job's queue
 * follows from its id, so the random stream is that of the passes
 * before): their median and p99, preemptions planned and victims.
 *
 *	bench_sched [--nodes N] [--pending M] [--passes K] [--seed S]
 *	    [--flat]			(no topology: one flat domain)
 *	    [--no-queues]		(skip the queues+preemption passes)
 *	    [--constrained K]		(every K-th job by id has a node
 *					 filter of its own, is CPU-only or
 *					 exclusive, in turn; no random
 *					 number drawn)
 *	    [--blocks]			(NVL72-like: NVLink blocks of 18
 *					 nodes in node order; of the
 *					 multi-node jobs a fifth require
 *					 one block, a fifth ask segments
 *					 of min(nodes, 16), instead of the
 *					 leaf/spine requests)
 *	    [--torus]			(a 20x20x25 torus of 10,000 nodes
 *					 instead of the tree: 2 jobs in 10
 *					 require a compact box, 2 prefer
 *					 one, the rest take the default,
 *					 boxes then nearest nodes)
 *	    [--cpu-time]		(times in the thread's CPU time,
 *					 not the wall clock's: for a
 *					 shared machine)
 *	bench_sched --smoke		(tiny: for make check)
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/sched/sched.h"
#include "daemon/sched/sched_int.h"
#include "daemon/sched/topo.h"

#define GPN 8
#define PER_LEAF 32
#define LEAVES_PER_SPINE 8
#define NQUEUES 5
#define BLOCK 18		/* --blocks: nodes per NVLink block */

/* Jobs go to the leaf queues 1, 2, 3, 4 by id. */
static uint32_t
queue_of(uint64_t id)
{
	return (uint32_t)(id % 4) + 1;
}

static const char *const flavors[] = { NULL, "A100" };

struct rjob {
	uint64_t id;
	int64_t end;
	uint32_t queue;
	int32_t priority;
	int64_t start;
	uint32_t nplaces;
	struct pick *places;
};

struct bench {
	size_t nnodes, npending_target, passes;
	bool flat;		/* no topology: one domain */
	bool blocks;		/* --blocks */
	bool smoke;
	bool no_queues;
	bool queues;		/* the queues+preemption passes */
	struct sched_queue q[NQUEUES];
	uint64_t rng;
	struct sched_node *nodes;
	struct sched_gpu *gpus;
	char (*names)[24];
	struct topo *topo;
	struct rjob *run;
	size_t nrun, caprun;
	struct sched_job *pend;
	size_t npend;
	uint64_t next_id;
	int64_t now;
	size_t constrained;	/* every K-th job: node constraints */
	bool rails;		/* a NIC (rail) per GPU pair, so the core
				 * lines gangs up (place_align) */
	uint32_t torus[3];	/* --torus: its dimensions; [0] 0: none */
};

static uint64_t
rnd(struct bench *b)
{
	b->rng ^= b->rng << 13;
	b->rng ^= b->rng >> 7;
	b->rng ^= b->rng << 17;
	return b->rng;
}

static uint32_t
pick(struct bench *b, uint32_t n)
{
	return (uint32_t)(rnd(b) % n);
}

/* --cpu-time: times are the thread's CPU time, not the wall clock's (on
 * a shared machine, what the core itself spent). */
static clockid_t clock_id = CLOCK_MONOTONIC;

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(clock_id, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n > 0 ? n : 1, size);

	if (p == NULL) {
		perror("bench_sched");
		exit(1);
	}
	return p;
}

static void
build_cluster(struct bench *b)
{
	size_t i, g, nleaves = (b->nnodes + PER_LEAF - 1) / PER_LEAF, l, len;
	size_t nspines = (nleaves + LEAVES_PER_SPINE - 1) / LEAVES_PER_SPINE;
	char *text, err[256];
	double t0;

	b->nodes = xcalloc(b->nnodes, sizeof(*b->nodes));
	b->gpus = xcalloc(b->nnodes * GPN, sizeof(*b->gpus));
	b->names = xcalloc(b->nnodes, sizeof(*b->names));
	for (i = 0; i < b->nnodes; i++) {
		snprintf(b->names[i], sizeof(b->names[i]), "gpu%05zu", i);
		b->nodes[i].name = b->names[i];
		b->nodes[i].up = true;
		/* One leaf in sixteen has another model, for --gpu-type. */
		b->nodes[i].gpu_model = (i / PER_LEAF) % 16 == 15 ?
		    "NVIDIA A100-SXM4-80GB" : "NVIDIA H100 80GB HBM3";
		b->nodes[i].gpus = &b->gpus[i * GPN];
		b->nodes[i].ngpus = GPN;
		for (g = 0; g < GPN; g++) {
			b->gpus[i * GPN + g].index = (uint32_t)g;
			b->gpus[i * GPN + g].nvlink = (int32_t)(g / 4);
			b->gpus[i * GPN + g].pcie = (int32_t)(g / 2);
			b->gpus[i * GPN + g].numa = (int32_t)(g / 4);
			b->gpus[i * GPN + g].near_nic = g % 2 == 0;
			b->gpus[i * GPN + g].rail = b->rails ?
			    (int32_t)(g / 2) : 0;
		}
		/* A few drained and down nodes, as in any real cluster. */
		if (pick(b, 200) == 0)
			b->nodes[i].drained = true;
		else if (pick(b, 400) == 0)
			b->nodes[i].up = false;
	}
	text = xcalloc(nleaves + nspines + 1 + (b->blocks ?
	    b->nnodes / BLOCK + 1 : 0), 96);
	len = 0;
	if (b->torus[0] != 0) {
		len = (size_t)sprintf(text, "TorusName=t0 Dims=%ux%ux%u "
		    "Wrap=yes Nodes=gpu[00000-%05zu]\n", b->torus[0],
		    b->torus[1], b->torus[2], b->nnodes - 1);
		nleaves = nspines = 0;
	}
	for (l = 0; l < nleaves; l++) {
		size_t hi = (l + 1) * PER_LEAF;

		len += (size_t)sprintf(text + len,
		    "SwitchName=leaf%zu Nodes=gpu[%05zu-%05zu]\n", l,
		    l * PER_LEAF, (hi < b->nnodes ? hi : b->nnodes) - 1);
	}
	for (l = 0; l < nspines; l++) {
		size_t hi = (l + 1) * LEAVES_PER_SPINE;

		len += (size_t)sprintf(text + len,
		    "SwitchName=spine%zu Switches=leaf[%zu-%zu]\n", l,
		    l * LEAVES_PER_SPINE,
		    (hi < nleaves ? hi : nleaves) - 1);
	}
	for (l = 0; b->blocks && l * BLOCK < b->nnodes; l++) {
		size_t hi = (l + 1) * BLOCK;

		len += (size_t)sprintf(text + len,
		    "BlockName=nvl%zu Nodes=gpu[%05zu-%05zu]\n", l,
		    l * BLOCK, (hi < b->nnodes ? hi : b->nnodes) - 1);
	}
	t0 = now_ms();
	b->topo = topo_parse(text, len, "bench", err, sizeof(err));
	if (b->topo == NULL) {
		fprintf(stderr, "bench_sched: %s\n", err);
		exit(1);
	}
	if (b->torus[0] != 0)
		printf("topology: a %ux%ux%u torus, parsed in %.2f ms\n",
		    b->torus[0], b->torus[1], b->torus[2], now_ms() - t0);
	else
		printf("topology: %zu leaves, %zu spines, %zu blocks, parsed in "
		    "%.2f ms\n", nleaves, nspines, topo_nblocks(b->topo),
		    now_ms() - t0);
	free(text);
}

/* A pending gang: 1-1,024 GPUs, log-uniform over powers of two; 8 GPUs
 * or more means whole nodes. Some require one leaf, some prefer one
 * spine, a few want the other model or are elastic. */
static struct sched_job
gen_job(struct bench *b, int64_t submit)
{
	struct sched_job j;
	uint32_t gpus = 1u << pick(b, 11), r;

	memset(&j, 0, sizeof(j));
	j.id = b->next_id++;
	j.priority = 100 * (int32_t)(1 + pick(b, 5));
	j.submit = submit;
	j.restarting = pick(b, 100) == 0;
	if (gpus < GPN) {
		j.nodes_min = 1;
		j.gpus_per_node = gpus;
	} else {
		j.nodes_min = gpus / GPN;
		j.gpus_per_node = 0;
	}
	j.nodes_max = j.nodes_min;
	if (j.nodes_min >= 4 && pick(b, 10) == 0)
		j.nodes_max = j.nodes_min * 2;
	r = pick(b, 10);
	if (b->blocks && j.nodes_min >= 2) {
		/* NVL72: a fifth want one block, a fifth segments. */
		if (r < 2 && j.nodes_max <= BLOCK) {
			j.topo_mode = SCHED_TOPO_REQUIRED;
			j.topo_level = "block";
		} else if (r < 4)
			j.segment = j.nodes_min < 16 ? j.nodes_min : 16;
	} else if (b->torus[0] != 0) {
		if (r < 4 && j.nodes_min > 1) {
			j.topo_mode = r < 2 ? SCHED_TOPO_REQUIRED :
			    SCHED_TOPO_PREFERRED;
			j.topo_level = "torus";
		}
	} else if (r < 2 && j.nodes_max <= PER_LEAF) {
		j.topo_mode = SCHED_TOPO_REQUIRED;
		j.topo_level = "leaf";
	} else if (r < 4) {
		j.topo_mode = SCHED_TOPO_PREFERRED;
		j.topo_level = "spine";
	}
	if (pick(b, 20) == 0)
		j.gpu_type = "A100";
	j.time_limit = pick(b, 20) == 0 ? 0 : 600 + pick(b, 86400 - 600);
	/* Queue fields use no random numbers: without queues the core
	 * ignores them, so the passes without queues are unchanged. */
	j.queue = queue_of(j.id);
	j.user_share = (j.id * 2654435761u) % 1000;
	if (b->constrained > 0 && j.id % b->constrained == 0) {
		switch (j.id / b->constrained % 3) {
		case 0:
			/* Its own filter, as the controller gives each job
			 * (the core cannot share its counts): 8 nodes left
			 * out (an --exclude of bad nodes); or, for every
			 * other such job, a list of 64 nodes. Never
			 * freed. */
			{
				uint8_t *ok = xcalloc(b->nnodes, 1);
				size_t k;

				if (j.id / b->constrained % 2 == 0) {
					memset(ok, 1, b->nnodes);
					for (k = 0; k < 8; k++)
						ok[(j.id + k * 13) % b->nnodes] = 0;
				} else
					for (k = 0; k < 64; k++)
						ok[(j.id + k * 7) % b->nnodes] = 1;
				j.node_ok = ok;
			}
			break;
		case 1:
			j.cpu_only = true;
			j.gpus_per_node = 0;
			break;
		default:
			j.exclusive = true;
		}
	}
	return j;
}

static struct sched_running *
running_list(struct bench *b)
{
	struct sched_running *r = xcalloc(b->nrun, sizeof(*r));
	size_t i;

	for (i = 0; i < b->nrun; i++) {
		r[i].id = b->run[i].id;
		r[i].end = b->run[i].end;
		r[i].queue = b->run[i].queue;
		r[i].priority = b->run[i].priority;
		r[i].start = b->run[i].start;
		/* Checkpoints every hour; not preempted in its first 10
		 * minutes. */
		r[i].lost = (b->now - b->run[i].start) % 3600;
		r[i].preemptible = b->now - b->run[i].start >= 600;
	}
	return r;
}

static void
apply(struct bench *b, const struct sched_result *res,
    const struct sched_job *pend, uint8_t *gone)
{
	const struct sched_start *st;
	struct rjob *rj;
	size_t k, i, g;
	uint64_t m;

	for (k = 0; k < res->nstarts; k++) {
		st = &res->starts[k];
		if (b->nrun == b->caprun) {
			b->caprun = b->caprun * 2 + 1024;
			b->run = realloc(b->run, b->caprun * sizeof(*b->run));
			if (b->run == NULL)
				exit(1);
		}
		rj = &b->run[b->nrun++];
		rj->id = st->job;
		rj->queue = pend[st->pending].queue;
		rj->priority = pend[st->pending].priority;
		rj->start = b->now;
		/* Jobs end somewhere before their limit. */
		rj->end = b->now + 1 + (int64_t)pick(b,
		    (uint32_t)(st->end - b->now));
		rj->nplaces = st->nnodes;
		rj->places = xcalloc(st->nnodes, sizeof(*rj->places));
		for (i = 0; i < st->nnodes; i++) {
			m = 0;
			for (g = 0; g < st->nodes[i].ngpus; g++) {
				m |= 1ULL << st->nodes[i].gpus[g];
				b->gpus[st->nodes[i].node * GPN +
				    st->nodes[i].gpus[g]].job = st->job;
			}
			rj->places[i].node = st->nodes[i].node;
			rj->places[i].mask = m;
		}
		gone[st->pending] = 1;
	}
}

/* Free running job i's GPUs and drop it. */
static void
end_job(struct bench *b, size_t i)
{
	struct rjob *rj = &b->run[i];
	size_t k, g;

	for (k = 0; k < rj->nplaces; k++)
		for (g = 0; g < GPN; g++)
			if (rj->places[k].mask >> g & 1)
				b->gpus[rj->places[k].node * GPN + g].job = 0;
	free(rj->places);
	b->run[i] = b->run[--b->nrun];
}

/* End every job whose time has come; returns how many ended. */
static size_t
finish(struct bench *b)
{
	size_t i, n = 0;

	for (i = 0; i < b->nrun;) {
		if (b->run[i].end > b->now) {
			i++;
			continue;
		}
		end_job(b, i);
		n++;
	}
	return n;
}

/* The preemptions of a pass: the victims stop (at once, here), their
 * preemptors are marked preempting. Returns the victims stopped. */
static size_t
preempt(struct bench *b, const struct sched_result *res)
{
	size_t k, v, i, n = 0;

	for (k = 0; k < res->npreempts; k++) {
		b->pend[res->preempts[k].pending].preempting = true;
		for (v = 0; v < res->preempts[k].nvictims; v++)
			for (i = 0; i < b->nrun; i++)
				if (b->run[i].id == res->preempts[k].victims[v]) {
					end_job(b, i);
					n++;
					break;
				}
	}
	return n;
}

/* Quotas in GPUs: org (half, of which each of its two teams has a
 * quarter, one keeping half of it) and two more top queues (30% and 10%)
 * that may borrow 5% each, the last with a quarter of the jobs, so its
 * quota binds; it also caps its A100s. */
static void
build_queues(struct bench *b)
{
	uint32_t total = (uint32_t)(b->nnodes * GPN), f, k;

	for (k = 0; k < NQUEUES; k++) {
		memset(&b->q[k], 0, sizeof(b->q[k]));
		for (f = 0; f < SCHED_FLAVORS_MAX; f++)
			b->q[k].nominal[f] = SCHED_UNLIMITED;
		b->q[k].parent = -1;
		b->q[k].borrow_limit = SCHED_UNLIMITED;
		b->q[k].lend_limit = SCHED_UNLIMITED;
		b->q[k].share = k * 10;
	}
	b->q[0].nominal[0] = total / 2;
	b->q[1].parent = 0;
	b->q[1].nominal[0] = total / 4;
	b->q[1].preempt = SCHED_PREEMPT_BOTH;
	b->q[2].parent = 0;
	b->q[2].nominal[0] = total / 4;
	b->q[2].lend_limit = total / 8;
	b->q[3].nominal[0] = total * 3 / 10;
	b->q[3].borrow_limit = total / 20;
	b->q[3].preempt = SCHED_PREEMPT_BORROWERS;
	b->q[4].nominal[0] = total / 10;
	b->q[4].nominal[1] = total / 100;
	b->q[4].borrow_limit = total / 20;
	b->q[4].preempt = SCHED_PREEMPT_LOWER;
}

static struct sched_input
input(struct bench *b, const struct sched_running *r,
    const struct sched_job *pend, size_t npend)
{
	struct sched_input in;

	memset(&in, 0, sizeof(in));
	in.now = b->now;
	in.topo = b->flat ? NULL : b->topo;
	in.nodes = b->nodes;
	in.nnodes = b->nnodes;
	in.running = r;
	in.nrunning = b->nrun;
	in.pending = pend;
	in.npending = npend;
	in.config.default_limit = 4 * 3600;
	if (b->queues) {
		in.queues = b->q;
		in.nqueues = NQUEUES;
		in.flavors = flavors;
		in.nflavors = 2;
		in.config.starve_s = 6 * 3600;
	}
	return in;
}

static double
used_share(const struct bench *b)
{
	size_t i, used = 0;

	for (i = 0; i < b->nnodes * GPN; i++)
		used += b->gpus[i].job != 0;
	return (double)used / (double)(b->nnodes * GPN);
}

/* Fill to about 85% with small and mid-sized jobs placed by the core:
 * their GPUs add up to that share, so one pass starts nearly all. */
static void
fill(struct bench *b)
{
	size_t cap = b->nnodes * 2 + 16, n = 0, want, have = 0;
	struct sched_job *q = xcalloc(cap, sizeof(*q));
	uint8_t *gone;
	struct sched_input in;
	struct sched_result *res;
	double t0, ms;

	want = b->nnodes * GPN * 85 / 100;
	while (have < want && n < cap) {
		static const uint32_t g[] = { 1, 2, 4, 8, 8, 16, 32, 64, 128 };
		uint32_t x = g[pick(b, 9)];

		memset(&q[n], 0, sizeof(q[n]));
		q[n].id = b->next_id++;
		q[n].queue = queue_of(q[n].id);
		q[n].priority = 100;
		q[n].nodes_min = q[n].nodes_max = x < GPN ? 1 : x / GPN;
		q[n].gpus_per_node = x < GPN ? x : 0;
		q[n].time_limit = 600 + pick(b, 86400);
		have += x;
		n++;
	}
	gone = xcalloc(n, 1);
	in = input(b, NULL, q, n);
	t0 = now_ms();
	res = sched_run(&in);
	ms = now_ms() - t0;
	if (res == NULL) {
		perror("sched_run");
		exit(1);
	}
	apply(b, res, q, gone);
	printf("fill: one pass started %zu of %zu jobs in %.1f ms; "
	    "%.1f%% of GPUs in use\n", res->nstarts, n, ms,
	    100.0 * used_share(b));
	sched_result_free(res);
	free(gone);
	free(q);
}

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
percentile(double *v, size_t n, double p)
{
	size_t i;

	qsort(v, n, sizeof(*v), dcmp);
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

/* The core's internal calls on a built pass state, for timing one
 * placement or one reservation alone. */
struct probe {
	struct pass ps;
	struct sched_running *r;
	struct sched_job j;
	struct sched_input in;
	struct preq rq;
	uint8_t *match;
};

static void
probe_init(struct bench *b, struct probe *p, uint32_t nodes)
{
	memset(p, 0, sizeof(*p));
	p->r = running_list(b);
	p->j = gen_job(b, b->now);
	p->j.nodes_min = p->j.nodes_max = nodes;
	p->j.gpus_per_node = 0;
	p->j.topo_mode = SCHED_TOPO_ANY;
	p->j.gpu_type = NULL;
	p->in = input(b, p->r, &p->j, 1);
	if (state_build(&p->ps, &p->in) == -1 || torus_build(&p->ps) == -1) {
		perror("state_build");
		exit(1);
	}
	p->match = xcalloc(p->ps.nmodels, 1);
	memset(p->match, 1, p->ps.nmodels);
	p->rq.n = nodes;
	p->rq.match = p->match;
	p->rq.cap = p->ps.t.rootlevel;
	p->rq.set = SET_ALL;
	/* On a torus: boxes, as for a job without --topology. */
	p->rq.torus = p->ps.tor != NULL ? TQ_PREFER : TQ_NONE;
}

static void
probe_free(struct probe *p)
{
	state_free(&p->ps);
	free(p->match);
	free(p->r);
}

/* One 1,024-GPU gang (128 whole nodes) placed alone: the counts per
 * switch, the domain choice, the node and GPU choice. */
static void
time_place(struct bench *b)
{
	struct probe p;
	struct pick *out = xcalloc(128, sizeof(*out));
	struct sched_result *res;
	double t0, t[64];
	int ok = 0, k;

	probe_init(b, &p, 128);
	for (k = 0; k < 64; k++) {
		t0 = now_ms();
		place_counts(&p.ps, &p.rq, p.ps.cnt);
		if (place_capacity(&p.ps, &p.rq, p.ps.cnt) >= p.rq.n)
			ok = place_select(&p.ps, &p.rq, p.ps.cnt, NULL,
			    out) == 0;
		t[k] = now_ms() - t0;
	}
	printf("1,024-GPU gang (128 nodes) at %.1f%% in use: %s, median "
	    "%.3f ms, max %.3f ms (64 runs)\n", 100.0 * used_share(b),
	    ok ? "placed" : "does not fit", percentile(t, 64, 0.5),
	    percentile(t, 64, 1.0));
	/* The same gang alone through sched_run: the pass state is built
	 * from the snapshot every time, so this is what one pass costs. */
	for (k = 0; k < 16; k++) {
		t0 = now_ms();
		res = sched_run(&p.in);
		t[k] = now_ms() - t0;
		if (res == NULL) {
			perror("sched_run");
			exit(1);
		}
		ok = res->nstarts == 1;
		sched_result_free(res);
	}
	printf("the same gang as the only job of a pass: %s, median %.3f ms "
	    "(16 runs, building the pass state included)\n",
	    ok ? "started" : "not started", percentile(t, 16, 0.5));
	probe_free(&p);
	free(out);
}

/* With --rails: the largest gang of 4 GPUs a node (at most 1,000
 * nodes, half of what fits) on free masks where every other node has
 * only its GPUs 4-7, placed alone, twice: with the rails, so that the
 * other nodes are lined up on 4-7 too (place_align), and with every GPU
 * on one rail, where the alignment has nothing to do. */
static void
time_rails(struct bench *b)
{
	struct probe p;
	struct pick *out = xcalloc(1000, sizeof(*out));
	uint64_t *freev;
	double t0, t[32], med[2];
	int ok = 1, k, pass;
	uint32_t i, moved[2] = { 0, 0 }, cap = 0;
	size_t g;

	probe_init(b, &p, 1000);
	p.rq.g = 4;
	freev = xcalloc(p.ps.nnodes, sizeof(*freev));
	for (i = 0; i < p.ps.nnodes; i++) {
		freev[i] = p.ps.nodes[i].free & (i % 2 ? 0xf0 : ~0ULL);
		cap += state_fits(&p.ps, i, &p.rq, freev[i]);
	}
	/* Well below what fits, so that the counts of now (which do not
	 * see the masks taken away) send it to no leaf short of nodes. */
	cap /= 2;
	p.rq.n = cap < 1000 ? cap : 1000;
	for (pass = 0; pass < 2 && ok && p.rq.n > 1; pass++) {
		/* The core reads the rails from the snapshot, b->gpus. */
		for (g = 0; pass == 1 && g < b->nnodes * GPN; g++)
			b->gpus[g].rail = 0;
		for (k = 0; k < 32 && ok; k++) {
			t0 = now_ms();
			place_counts(&p.ps, &p.rq, p.ps.cnt);
			ok = place_select(&p.ps, &p.rq, p.ps.cnt, freev,
			    out) == 0;
			t[k] = now_ms() - t0;
		}
		med[pass] = percentile(t, 32, 0.5);
		for (i = 1; ok && i < p.rq.n; i++)
			moved[pass] += out[i].mask != out[0].mask;
	}
	for (g = 0; g < b->nnodes * GPN; g++)
		b->gpus[g].rail = (int32_t)(g % GPN / 2);
	if (ok && p.rq.n > 1)
		printf("rails: %u-node x 4-GPU gang, every other node with "
		    "GPUs 4-7 only: median %.3f ms lined up (%u nodes off "
		    "node 0's GPUs), %.3f ms on one rail (%u off)\n", p.rq.n,
		    med[0], moved[0], med[1], moved[1]);
	else
		printf("rails: %u-node x 4-GPU gang: does not fit\n", p.rq.n);
	free(freev);
	probe_free(&p);
	free(out);
}

/* The reservation replay for a blocked gang of n nodes. */
static void
time_resv(struct bench *b, uint32_t n)
{
	struct probe p;
	struct pick *out = xcalloc(n, sizeof(*out));
	int64_t start = 0;
	double t0, rt;
	int ok;

	probe_init(b, &p, n);
	/* On a torus, a required box: the replay's bisection. */
	if (p.rq.torus != TQ_NONE)
		p.rq.torus = TQ_REQUIRED;
	t0 = now_ms();
	ok = resv_find(&p.ps, &p.rq, &start, out) == 0;
	rt = now_ms() - t0;
	if (ok)
		printf("reservation for a %u-node gang%s (replaying %zu "
		    "running jobs): at now+%llds, found in %.3f ms\n", n,
		    p.rq.torus != TQ_NONE ? " in a required box" : "",
		    b->nrun, (long long)(start - b->now), rt);
	else
		printf("reservation for a %u-node gang: none possible "
		    "(%.3f ms)\n", n, rt);
	probe_free(&p);
	free(out);
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench_sched [--nodes N] [--pending M] "
	    "[--passes K] [--seed S] [--flat] [--no-queues] [--smoke]\n"
	    "       [--constrained K] [--rails] [--blocks] [--torus] "
	    "[--cpu-time]\n");
	exit(2);
}

static void
args(struct bench *b, int argc, char **argv)
{
	int i;
	char *end;
	unsigned long long v;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--flat") == 0) {
			b->flat = true;
			continue;
		}
		if (strcmp(argv[i], "--blocks") == 0) {
			b->blocks = true;
			continue;
		}
		if (strcmp(argv[i], "--no-queues") == 0) {
			b->no_queues = true;
			continue;
		}
		if (strcmp(argv[i], "--rails") == 0) {
			b->rails = true;
			continue;
		}
		if (strcmp(argv[i], "--cpu-time") == 0) {
			clock_id = CLOCK_THREAD_CPUTIME_ID;
			continue;
		}
		if (strcmp(argv[i], "--torus") == 0) {
			b->torus[0] = 1;	/* sized after the options */
			continue;
		}
		if (strcmp(argv[i], "--smoke") == 0) {
			b->smoke = true;
			b->nnodes = 64;
			b->npending_target = 200;
			b->passes = 5;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		errno = 0;
		v = strtoull(argv[i + 1], &end, 10);
		if (errno != 0 || *end != '\0' || v == 0 || v > 10000000)
			usage();
		if (strcmp(argv[i], "--nodes") == 0)
			b->nnodes = v;
		else if (strcmp(argv[i], "--pending") == 0)
			b->npending_target = v;
		else if (strcmp(argv[i], "--passes") == 0)
			b->passes = v;
		else if (strcmp(argv[i], "--seed") == 0)
			b->rng = v;
		else if (strcmp(argv[i], "--constrained") == 0)
			b->constrained = v;
		else
			usage();
		i++;
	}
}

struct prun {
	size_t starts, bf, ended, peak, npre, victims, tried, quota;
	uint64_t digest;	/* of every decision: see mix() */
};

/* FNV-1a over v's bytes: a digest of the passes' decisions (starts with
 * their nodes and GPUs, reservations, preemptions with their victims,
 * every job's reason and quota queue, the planners and box searches
 * made), so that a change meant to make passes faster
 * can show it changed no decision. */
static void
mix(uint64_t *h, uint64_t v)
{
	int k;

	for (k = 0; k < 8; k++, v >>= 8) {
		*h ^= v & 0xff;
		*h *= 1099511628211ULL;
	}
}

static void
digest(uint64_t *h, const struct sched_result *res, size_t npend)
{
	size_t k, i, g, v;

	for (k = 0; k < res->nstarts; k++) {
		mix(h, res->starts[k].job);
		for (i = 0; i < res->starts[k].nnodes; i++) {
			mix(h, res->starts[k].nodes[i].node);
			for (g = 0; g < res->starts[k].nodes[i].ngpus; g++)
				mix(h, res->starts[k].nodes[i].gpus[g]);
		}
	}
	if (res->has_resv) {
		mix(h, res->resv.job);
		mix(h, (uint64_t)res->resv.start);
		for (i = 0; i < res->resv.nnodes; i++)
			mix(h, res->resv.nodes[i].node);
	}
	for (k = 0; k < res->npreempts; k++) {
		mix(h, res->preempts[k].job);
		for (v = 0; v < res->preempts[k].nvictims; v++)
			mix(h, res->preempts[k].victims[v]);
	}
	for (k = 0; k < npend; k++) {
		mix(h, (uint64_t)res->reasons[k]);
		if (res->quota_queue != NULL)
			mix(h, res->quota_queue[k]);
	}
	mix(h, res->stats.preempt_tried);
	mix(h, res->stats.torus_searches);
}

/* b->passes passes, each time in ms[]; the started leave the queue, new
 * jobs top it up, time moves on 30 s. */
static int
run_passes(struct bench *b, double *ms, uint8_t *gone, struct prun *pr)
{
	struct sched_running *r;
	struct sched_input in;
	struct sched_result *res;
	double t0;
	size_t p, k, n;

	memset(pr, 0, sizeof(*pr));
	pr->digest = 14695981039346656037ULL;
	for (p = 0; p < b->passes; p++) {
		r = running_list(b);
		in = input(b, r, b->pend, b->npend);
		t0 = now_ms();
		res = sched_run(&in);
		ms[p] = now_ms() - t0;
		if (res == NULL) {
			perror("sched_run");
			return -1;
		}
		digest(&pr->digest, res, b->npend);
		memset(gone, 0, b->npend);
		apply(b, res, b->pend, gone);
		pr->victims += preempt(b, res);
		pr->npre += res->npreempts;
		pr->tried += res->stats.preempt_tried;
		for (k = 0; k < b->npend; k++)
			pr->quota += res->reasons[k] ==
			    SCHED_REASON_QUEUE_QUOTA;
		pr->starts += res->nstarts;
		pr->bf += res->stats.backfilled;
		if (res->stats.scratch_bytes > pr->peak)
			pr->peak = res->stats.scratch_bytes;
		sched_result_free(res);
		free(r);
		/* Drop the started, top the queue up, move time on. */
		for (k = 0, n = 0; k < b->npend; k++)
			if (!gone[k])
				b->pend[n++] = b->pend[k];
		for (b->npend = n; b->npend < b->npending_target; b->npend++)
			b->pend[b->npend] = gen_job(b, b->now);
		b->now += 30;
		pr->ended += finish(b);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct bench b;
	struct prun pr;
	uint8_t *gone;
	double *ms, mem;
	size_t k, peak = 0;

	memset(&b, 0, sizeof(b));
	b.nnodes = 10000;
	b.npending_target = 10000;
	b.passes = 50;
	b.rng = 88172645463325252ULL;
	b.next_id = 1;
	args(&b, argc, argv);
	if (b.torus[0] != 0) {
		b.torus[0] = b.smoke ? 4 : 20;
		b.torus[1] = b.smoke ? 4 : 20;
		b.torus[2] = b.smoke ? 4 : 25;
		b.nnodes = (size_t)b.torus[0] * b.torus[1] * b.torus[2];
	}
	b.now = 1000000;
	printf("cluster: %zu nodes x %d GPUs = %zu GPUs; %zu pending; "
	    "%zu passes\n", b.nnodes, GPN, b.nnodes * GPN,
	    b.npending_target, b.passes);
	build_cluster(&b);
	fill(&b);
	time_place(&b);
	if (b.rails)
		time_rails(&b);
	b.pend = xcalloc(b.npending_target, sizeof(*b.pend));
	for (b.npend = 0; b.npend < b.npending_target; b.npend++)
		b.pend[b.npend] = gen_job(&b, b.now - pick(&b, 3600));
	ms = xcalloc(b.passes, sizeof(*ms));
	gone = xcalloc(b.npending_target, 1);
	if (run_passes(&b, ms, gone, &pr) == -1)
		return 1;
	peak = pr.peak;
	printf("passes: median %.2f ms, p99 %.2f ms, max %.2f ms; %zu "
	    "starts (%zu backfilled), %zu ends; %.1f%% of GPUs in use; "
	    "decisions %016llx\n",
	    percentile(ms, b.passes, 0.5), percentile(ms, b.passes, 0.99),
	    percentile(ms, b.passes, 1.0), pr.starts, pr.bf, pr.ended,
	    100.0 * used_share(&b), (unsigned long long)pr.digest);
	time_resv(&b, 128);
	time_resv(&b, (uint32_t)(b.nnodes * 9 / 10));
	/* What the core needs per GPU: its input snapshot (nodes, GPUs,
	 * names), the topology, and the most one pass allocated. */
	mem = (double)(b.nnodes * (sizeof(struct sched_node) + 16) +
	    b.nnodes * GPN * sizeof(struct sched_gpu));
	printf("memory per GPU: snapshot %.0f B, topology %.0f B, pass "
	    "scratch peak %.0f B, total %.0f B\n",
	    mem / (double)(b.nnodes * GPN),
	    (double)topo_bytes(b.topo) / (double)(b.nnodes * GPN),
	    (double)peak / (double)(b.nnodes * GPN),
	    (mem + (double)topo_bytes(b.topo) + (double)peak) /
	    (double)(b.nnodes * GPN));
	if (!b.smoke && !b.no_queues) {
		/* The same again with queues, from where the passes left
		 * the cluster (about full, so there is something to
		 * preempt). */
		build_queues(&b);
		b.queues = true;
		if (run_passes(&b, ms, gone, &pr) == -1)
			return 1;
		printf("queues+preemption passes: median %.2f ms, p99 %.2f "
		    "ms, max %.2f ms; %zu starts, %zu preemptions (%zu "
		    "victims, %zu planners tried), %zu QueueQuota "
		    "reasons; %.1f%% of GPUs in use; decisions %016llx\n",
		    percentile(ms, b.passes, 0.5),
		    percentile(ms, b.passes, 0.99),
		    percentile(ms, b.passes, 1.0), pr.starts, pr.npre,
		    pr.victims, pr.tried, pr.quota, 100.0 * used_share(&b),
		    (unsigned long long)pr.digest);
	}
	for (k = 0; k < b.nrun; k++)
		free(b.run[k].places);
	free(b.run);
	free(b.pend);
	free(gone);
	free(ms);
	free(b.nodes);
	free(b.gpus);
	free(b.names);
	topo_destroy(b.topo);
	return 0;
}
