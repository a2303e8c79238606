/* Trace replay (not a timed test): a discrete-event simulator that drives
 * the real scheduler core (daemon/sched/) with a job trace in virtual
 * time, and reports what each queue policy does with it.
 *
 *	replay --trace FILE [--from S] [--to S] [--limit-jobs M]
 *	    [--nodes N] [--nodes-per-leaf K] [--topology-leaf]
 *	    [--blocks] [--block-size K] [--topology-block]
 *	    [--torus XxYxZ [--torus-required]]
 *	    [--overestimate F] [--limit-spread S] [--aging A]
 *	    [--bf-max N] [--gpu-links] [--policies fifo,easy,cohort,oracle]
 *	    [--starve S1,S2,...]
 *	    [--big-gangs N [--big-share F] [--big-seed X]]
 *	    [--arrival-scale F]
 *	replay --trace FILE --tenants VCFILE [...] [--grace S] [--ckpt S]
 *	    [--min-runtime S] [--half-life S] [--vc-min-share F]
 *	    [--victim-end-stop]
 *	    [--policies static,pooled,cohort,kueue]
 *
 * The trace is CSV with a header; the columns job_id, submit_time_s,
 * num_gpus and duration_s are found by name (others are ignored). --from
 * and --to keep jobs submitted in [S, E]; --limit-jobs keeps the first M
 * of those (in file order, which must be submit order).
 *
 * The cluster: N nodes of 8 GPUs (one NVLink domain per quad), K nodes
 * per leaf switch, every leaf under one spine; the topology is generated
 * as topology.conf text and parsed with topo_parse. A job of up to 8
 * GPUs asks for one node with that many GPUs; a bigger one for
 * ceil(n / 8) whole nodes, all at once. A job bigger than the cluster
 * (or, with --topology-leaf, a gang bigger than a leaf) is reported and
 * dropped. Time limits are the run time times F (users over-estimate;
 * default 2), at least 60 s; --limit-spread S (default 1: none) draws
 * each job's factor log-uniformly from [F / S, F * S] (at least 1, from
 * a hash of the job id, so every run is the same), for limits that order
 * jobs less well than their run times.
 *
 * Events are arrivals (submit_time_s) and ends (start + run time); after
 * every event time (all events of one time together) one scheduling pass
 * runs at that time and its starts are applied. Between events nothing
 * can change what a pass decides (queue orders do not move with time:
 * see sched.h), so this is exact. It stops when every job has finished.
 *
 * Policies (all in one run, or those --policies names):
 *   fifo    strict FIFO: queue order priority/submit, no backfill, no
 *           topology (one flat domain)
 *   easy    FIFO + EASY backfill, no topology: what Slurm users run
 *   cohort  the controller's default: the estimate order with aging
 *           (--aging A seconds of estimate per second waited; default
 *           SCHED_DEFAULT_AGING), EASY backfill, the generated topology
 *           (--topology-leaf: every multi-node job requires one leaf)
 *   oracle  shortest true run time first (order_hint = run time, no
 *           aging) + EASY backfill on the limits, same topology as
 *           cohort: a bound no deployable scheduler reaches
 *
 * Reported per policy (seconds): avg_jct and p99_jct, job completion
 * time (finish - submit; p99 by nearest rank); avg_wait, queueing delay
 * (start - submit); util, GPU utilization (GPU-seconds run / (GPUs x
 * makespan)); util_a, the same over the arrival window only (first to
 * last submit), which the tail of long jobs after the last submit does
 * not dilute; makespan (first submit to last finish); p99w>=32 and
 * maxw>=32, the p99 and largest queueing delay of the n32 jobs of 32
 * GPUs or more; backfl, starts made after the pass's reservation;
 * xleaf/gng, multi-node starts spread over more than one leaf of the
 * generated tree / all multi-node starts; passes; wall_s, this policy's
 * wall-clock time; maxq, the most jobs pending at once; pmaxms, the
 * slowest pass in milliseconds.
 *
 * --blocks adds NVLink blocks of 18 nodes (a GB200 NVL72 rack;
 * --block-size K: K nodes) to the generated topology, in node order over
 * the leaves: the cohort and oracle runs then place by blocks (one
 * best-fit block, else as few as possible; sched.h). --topology-block
 * makes every multi-node job that fits one block require one
 * (--topology block), the block counterpart of --topology-leaf; larger
 * gangs keep the block preference. With blocks, a last column
 * xblk/fit counts the multi-node starts that fit one block but span more
 * / all multi-node starts that fit one block.
 * --torus XxYxZ adds a torus of that shape over the nodes (their
 * number becomes X*Y*Z, wrap-around in every dimension): multi-node
 * gangs of cohort and oracle go into compact boxes when they can, else
 * the nodes nearest a seed (the default on a torus); --torus-required
 * makes every multi-node gang require a box (--topology torus), so the
 * two runs side by side show what insisting on boxes costs. nonbox/gng
 * (in the xleaf/gng column) then counts multi-node starts whose nodes
 * are not within one box of fewer than twice their cells.
 *
 * --gpu-links gives each node's GPUs an intra-node topology (NVLink
 * quads, PCIe pairs, a NIC beside every even GPU), as bench_sched does;
 * without it every GPU is alike, so on-node placement is pure best fit
 * (the fewest free GPUs), as in the reference replays.
 *
 * Big gangs (replay_big.c): --starve S1,S2,... adds a cohort run per
 * value with sched_config.starve_s = S (named cohort-sS); --gang-starve
 * S1,... adds cohort runs (cohort-gS) where only jobs of >= 32 GPUs
 * starve (starve_min_gpus = 32, the controller's default): once one
 * has waited longer than S it goes first, oldest first, and gets the
 * reservation. --big-gangs N adds N
 * gangs of 32 and 64 GPUs to the trace (see replay_big.c) and
 * --arrival-scale F divides every submit's offset from the first by F
 * (F > 1: the same jobs arrive faster). After the table, a summary gives
 * every run's average JCT against the oracle's, its p99 wait of >= 32-GPU
 * jobs against FIFO's, from the same run, and the average JCT of the jobs
 * under 32 GPUs and of those at or above.
 *
 * Tenants (replay_tenants.c): --tenants VCFILE (columns job_id, vc) gives
 * each job its virtual cluster, each VC a queue with a nominal quota in
 * proportion to its share of the GPU time, and the policies become
 * static, pooled, cohort and kueue; see replay_tenants.c.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/sched/topo.h"
#include "tests/bench/replay.h"

static const char *const policy_name[NPOLICIES] = {
	"fifo", "easy", "cohort", "oracle"
};

void
replay_die(const char *what)
{
	perror(what);
	exit(1);
}

void *
replay_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n > 0 ? n : 1, size);

	if (p == NULL)
		replay_die("replay");
	return p;
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- the trace ---------------------------------------------------- */

/* Split line in place at commas; returns the field count (at most max). */
static size_t
split(char *line, char **f, size_t max)
{
	size_t n = 0;
	char *p = line;

	line[strcspn(line, "\r\n")] = '\0';
	while (n < max) {
		f[n++] = p;
		if ((p = strchr(p, ',')) == NULL)
			break;
		*p++ = '\0';
	}
	return n;
}

static bool
parse_ll(const char *s, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	return errno == 0 && end != s && *end == '\0';
}

/* splitmix64: the per-job factor of --limit-spread, the big gangs. */
uint64_t
replay_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

int64_t
replay_job_limit(const struct opts *o, long long trace_id, int64_t dur)
{
	double f = o->overestimate, u, lim;

	if (o->spread > 1.0) {
		u = (double)(replay_mix((uint64_t)trace_id) >> 11) /
		    (double)(1ULL << 53);
		f *= pow(o->spread, 2.0 * u - 1.0);
		if (f < 1.0)
			f = 1.0;
	}
	lim = ceil((double)dur * f);
	if (lim < MIN_LIMIT)
		lim = MIN_LIMIT;
	return lim > 1e15 ? (int64_t)1e15 : (int64_t)lim;
}

static struct tjob *
load_trace(const struct opts *o, size_t *njobs)
{
	FILE *fp;
	char *line = NULL, *f[64];
	size_t cap = 0, n = 0, jcap = 1024, nf, k;
	ssize_t len;
	int col[4] = { -1, -1, -1, -1 };
	static const char *const want[4] = { "job_id", "submit_time_s",
	    "num_gpus", "duration_s" };
	long long v[4];
	struct tjob *jobs = replay_xcalloc(jcap, sizeof(*jobs));
	size_t lineno = 1, bad = 0;
	int64_t last = INT64_MIN;

	if ((fp = fopen(o->trace, "r")) == NULL)
		replay_die(o->trace);
	if ((len = getline(&line, &cap, fp)) <= 0) {
		fprintf(stderr, "replay: %s: empty\n", o->trace);
		exit(1);
	}
	nf = split(line, f, 64);
	for (k = 0; k < nf; k++) {
		int c;

		for (c = 0; c < 4; c++)
			if (strcmp(f[k], want[c]) == 0)
				col[c] = (int)k;
	}
	for (k = 0; k < 4; k++)
		if (col[k] < 0) {
			fprintf(stderr, "replay: %s: no column %s\n", o->trace,
			    want[k]);
			exit(1);
		}
	while ((len = getline(&line, &cap, fp)) > 0) {
		lineno++;
		if (line[0] == '\n' || line[0] == '\0')
			continue;
		nf = split(line, f, 64);
		for (k = 0; k < 4; k++)
			if ((size_t)col[k] >= nf || !parse_ll(f[col[k]], &v[k]))
				break;
		if (k < 4 || v[2] <= 0 || v[3] < 0 || v[2] > 1 << 20) {
			if (bad++ < 5)
				fprintf(stderr, "replay: %s:%zu: bad row, "
				    "skipped\n", o->trace, lineno);
			continue;
		}
		if (v[1] < o->from || v[1] > o->to)
			continue;
		if (v[1] < last) {
			fprintf(stderr, "replay: %s:%zu: not in submit "
			    "order\n", o->trace, lineno);
			exit(1);
		}
		last = v[1];
		if (o->limit_jobs > 0 && n == o->limit_jobs)
			break;
		if (n == jcap) {
			jcap *= 2;
			if ((jobs = realloc(jobs, jcap * sizeof(*jobs))) ==
			    NULL)
				replay_die("replay");
		}
		memset(&jobs[n], 0, sizeof(jobs[n]));
		jobs[n].trace_id = v[0];
		jobs[n].submit = v[1];
		jobs[n].gpus = (uint32_t)v[2];
		/* A zero run time would end at its start: one second. */
		jobs[n].dur = v[3] > 0 ? v[3] : 1;
		jobs[n].limit = replay_job_limit(o, v[0], jobs[n].dur);
		n++;
	}
	free(line);
	fclose(fp);
	if (bad > 0)
		fprintf(stderr, "replay: %zu bad rows skipped\n", bad);
	*njobs = n;
	return jobs;
}

/* ---- the cluster -------------------------------------------------- */

/* Are a start's nodes (n%05u at index i: x = i % X, y = i / X % Y, z
 * = i / XY) within one box of fewer than 2n cells, wrap-around counted?
 * Per dimension the shortest arc holding every coordinate is found from
 * the largest gap between them. */
static bool
replay_in_box(const struct opts *o, const struct sched_start *st)
{
	uint32_t D[3] = { o->torus[0], o->torus[1], o->torus[2] }, c, k, v;
	uint32_t len[3], i, prev, first, gap;
	uint8_t *seen;
	uint64_t vol = 1;

	for (k = 0; k < 3; k++) {
		seen = replay_xcalloc(D[k], 1);
		for (i = 0; i < st->nnodes; i++) {
			v = st->nodes[i].node;
			c = k == 0 ? v % D[0] : k == 1 ? v / D[0] % D[1] :
			    v / D[0] / D[1];
			seen[c] = 1;
		}
		/* The largest run of unseen coordinates, around the ring. */
		first = prev = UINT32_MAX;
		gap = 0;
		for (c = 0; c < D[k]; c++) {
			if (!seen[c])
				continue;
			if (first == UINT32_MAX)
				first = c;
			else if (c - prev - 1 > gap)
				gap = c - prev - 1;
			prev = c;
		}
		if (D[k] - prev - 1 + first > gap)
			gap = D[k] - prev - 1 + first;
		len[k] = D[k] - gap;
		vol *= len[k];
		free(seen);
	}
	return vol < 2 * (uint64_t)st->nnodes;
}

static void
build_cluster(struct sim *s)
{
	const struct opts *o = s->o;
	size_t i, g, nleaves = (o->nodes + o->per_leaf - 1) / o->per_leaf, l;
	size_t len = 0;
	char *text, err[256];

	s->nodes = replay_xcalloc(o->nodes, sizeof(*s->nodes));
	s->gpus = replay_xcalloc((size_t)o->nodes * GPN, sizeof(*s->gpus));
	s->names = replay_xcalloc(o->nodes, sizeof(*s->names));
	for (i = 0; i < o->nodes; i++) {
		snprintf(s->names[i], sizeof(s->names[i]), "n%05zu", i);
		s->nodes[i].name = s->names[i];
		s->nodes[i].up = true;
		s->nodes[i].gpu_model = "sim";
		s->nodes[i].gpus = &s->gpus[i * GPN];
		s->nodes[i].ngpus = GPN;
		for (g = 0; g < GPN; g++) {
			s->gpus[i * GPN + g].index = (uint32_t)g;
			s->gpus[i * GPN + g].nvlink = o->gpu_links ?
			    (int32_t)(g / 4) : -1;
			s->gpus[i * GPN + g].pcie = o->gpu_links ?
			    (int32_t)(g / 2) : -1;
			s->gpus[i * GPN + g].numa = o->gpu_links ?
			    (int32_t)(g / 4) : -1;
			s->gpus[i * GPN + g].near_nic = o->gpu_links &&
			    g % 2 == 0;
		}
	}
	text = replay_xcalloc(nleaves + 3, 96);
	for (l = 0; l < nleaves; l++) {
		size_t hi = (l + 1) * o->per_leaf;

		len += (size_t)sprintf(text + len,
		    "SwitchName=leaf%zu Nodes=n[%05zu-%05zu]\n", l,
		    l * o->per_leaf, (hi < o->nodes ? hi : o->nodes) - 1);
	}
	len += (size_t)sprintf(text + len,
	    "SwitchName=spine0 Switches=leaf[0-%zu]\n", nleaves - 1);
	if (o->block_size > 0) {
		size_t nb = (o->nodes + o->block_size - 1) / o->block_size;
		/* Room for the blocks, and for a torus line after them. */
		char *bt = realloc(text, len + nb * 64 + 96 + 1);

		if (bt == NULL)
			replay_die("replay");
		text = bt;
		for (l = 0; l < nb; l++) {
			size_t hi = (l + 1) * o->block_size;

			len += (size_t)sprintf(text + len,
			    "BlockName=nvl%zu Nodes=n[%05zu-%05zu]\n", l,
			    l * o->block_size,
			    (hi < o->nodes ? hi : o->nodes) - 1);
		}
	}
	if (o->torus[0] != 0)
		len += (size_t)sprintf(text + len, "TorusName=t Dims=%ux%ux%u "
		    "Nodes=n[00000-%05u]\n", o->torus[0], o->torus[1],
		    o->torus[2], o->nodes - 1);
	s->topo = topo_parse(text, len, "replay", err, sizeof(err));
	if (s->topo == NULL) {
		fprintf(stderr, "replay: %s\n", err);
		exit(1);
	}
	free(text);
}

/* ---- events ------------------------------------------------------- */

static bool
hless(const struct hent *a, const struct hent *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	if (a->kind != b->kind)
		return a->kind < b->kind;
	return a->j < b->j;
}

void
replay_push(struct sim *s, int64_t t, int kind, size_t j)
{
	size_t i, p;
	struct hent e = { t, kind, j, s->jobs[j].gen };

	if (s->nheap == s->cheap) {
		s->cheap *= 2;
		if ((s->heap = realloc(s->heap, s->cheap *
		    sizeof(*s->heap))) == NULL)
			replay_die("replay");
	}
	i = s->nheap++;
	while (i > 0) {
		p = (i - 1) / 2;
		if (!hless(&e, &s->heap[p]))
			break;
		s->heap[i] = s->heap[p];
		i = p;
	}
	s->heap[i] = e;
}

static struct hent
hpop(struct sim *s)
{
	struct hent top = s->heap[0], e = s->heap[--s->nheap];
	size_t i = 0, c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && hless(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!hless(&s->heap[c], &e))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap > 0)
		s->heap[i] = e;
	return top;
}

/* Job j (back) in the pending list. Job ids given to the core: index + 1
 * (0 means a free GPU). A resumed job keeps its submit time (its place
 * in the order) and asks for the rest of its limit. */
void
replay_pend(struct sim *s, int64_t t, size_t j)
{
	struct tjob *tj = &s->jobs[j];
	struct sched_job *sj;
	bool with_topo = s->v->tenants != T_OFF || s->v->base == P_COHORT ||
	    s->v->base == P_ORACLE;

	if (s->npend == s->cpend) {
		s->cpend *= 2;
		if ((s->pend = realloc(s->pend, s->cpend *
		    sizeof(*s->pend))) == NULL ||
		    (s->pidx = realloc(s->pidx, s->cpend *
		    sizeof(*s->pidx))) == NULL ||
		    (s->gone = realloc(s->gone, s->cpend)) == NULL)
			replay_die("replay");
	}
	sj = &s->pend[s->npend];
	memset(sj, 0, sizeof(*sj));
	sj->id = (uint64_t)j + 1;
	sj->priority = 100;
	sj->submit = tj->submit;
	if (tj->gpus <= GPN) {
		sj->nodes_min = sj->nodes_max = 1;
		sj->gpus_per_node = tj->gpus;
	} else {
		sj->nodes_min = sj->nodes_max = (tj->gpus + GPN - 1) / GPN;
		sj->gpus_per_node = 0;
		if (s->o->topo_leaf && with_topo) {
			sj->topo_mode = SCHED_TOPO_REQUIRED;
			sj->topo_level = "leaf";
		}
		if (s->o->topo_block && with_topo &&
		    sj->nodes_min <= s->o->block_size) {
			sj->topo_mode = SCHED_TOPO_REQUIRED;
			sj->topo_level = "block";
		}
		if (s->o->torus_req && with_topo) {
			sj->topo_mode = SCHED_TOPO_REQUIRED;
			sj->topo_level = "torus";
		}
	}
	sj->time_limit = tj->limit - tj->done;
	if (sj->time_limit < MIN_LIMIT)
		sj->time_limit = MIN_LIMIT;
	if (s->v->base == P_ORACLE)
		sj->order_hint = tj->dur - tj->done;
	sj->queue = tj->vc;
	tj->pend_since = t;
	s->pidx[s->npend++] = j;
}

static void
arrive(struct sim *s, size_t j)
{
	const struct tjob *tj = &s->jobs[j];

	if (s->v->tenants != T_OFF)
		replay_tenants_arrive(s, j);
	replay_pend(s, tj->submit, j);
	/* The pass at which it becomes starved: an event of its own. */
	if (s->v->gang_starve > 0 && tj->gpus >= BIG_GANG)
		replay_push(s, tj->submit + s->v->gang_starve + 1, EV_WAKE, j);
}

/* GPU-seconds held in [a, b), all and inside the arrival window. */
static void
held(struct sim *s, uint32_t gpus, int64_t a, int64_t b)
{
	int64_t lo = a > s->t0 ? a : s->t0, hi = b < s->tw ? b : s->tw;

	s->held_gs += (double)gpus * (double)(b - a);
	if (hi > lo)
		s->held_gs_a += (double)gpus * (double)(hi - lo);
}

void
replay_release(struct sim *s, int64_t t, size_t j)
{
	struct tjob *tj = &s->jobs[j];
	size_t k, g, p;

	for (k = 0; k < tj->nplaces; k++)
		for (g = 0; g < GPN; g++)
			if (tj->place_mask[k] >> g & 1) {
				struct sched_gpu *gp =
				    &s->gpus[tj->place_node[k] * GPN + g];

				if (gp->job != (uint64_t)j + 1) {
					fprintf(stderr, "replay: GPU state "
					    "corrupt at job %lld\n",
					    tj->trace_id);
					exit(1);
				}
				gp->job = 0;
			}
	tj->nplaces = 0;
	p = s->runpos[j];
	s->run[p] = s->run[--s->nrun];
	s->runpos[s->run[p].id - 1] = p;
	held(s, tj->gpus, tj->seg, t);
	replay_tenants_account(s, t);
	s->held[tj->vc] -= tj->gpus;
	tj->gen++;
}

static void
finish(struct sim *s, int64_t t, size_t j)
{
	struct tjob *tj = &s->jobs[j];

	replay_release(s, t, j);
	if (tj->stopping) {
		/* It ended in its grace: the preemptor need not wait. */
		tj->stopping = false;
		s->jobs[tj->preemptor].pvict--;
	}
	tj->finish = t;
	s->finished++;
}

static void
apply(struct sim *s, int64_t t, const struct sched_result *res)
{
	const struct sched_start *st;
	struct tjob *tj;
	size_t k, i, g, j;
	uint8_t m;

	for (k = 0; k < res->nstarts; k++) {
		st = &res->starts[k];
		j = s->pidx[st->pending];
		tj = &s->jobs[j];
		if (st->job != (uint64_t)j + 1 || st->nnodes > MAX_GANG ||
		    tj->nplaces != 0 || tj->finish >= 0) {
			fprintf(stderr, "replay: bad start for job %lld\n",
			    tj->trace_id);
			exit(1);
		}
		if (tj->start < 0) {
			tj->start = t;
			if (tj->entitled)
				s->pend_ent[tj->vc] -= tj->gpus;
		}
		tj->waited += t - tj->pend_since;
		tj->seg = t;
		tj->nplaces = st->nnodes;
		for (i = 0; i < st->nnodes; i++) {
			m = 0;
			for (g = 0; g < st->nodes[i].ngpus; g++) {
				struct sched_gpu *gp = &s->gpus[
				    st->nodes[i].node * GPN +
				    st->nodes[i].gpus[g]];

				if (gp->job != 0) {
					fprintf(stderr, "replay: GPU given "
					    "twice (job %lld)\n",
					    tj->trace_id);
					exit(1);
				}
				gp->job = st->job;
				m |= (uint8_t)(1u << st->nodes[i].gpus[g]);
			}
			tj->place_node[i] = st->nodes[i].node;
			tj->place_mask[i] = m;
		}
		if (st->nnodes > 1 && s->o->torus[0] != 0) {
			s->multi++;
			s->spread += !replay_in_box(s->o, st);
		} else if (st->nnodes > 1) {
			s->multi++;
			for (i = 1; i < st->nnodes; i++)
				if (st->nodes[i].node / s->o->per_leaf !=
				    st->nodes[0].node / s->o->per_leaf)
					break;
			if (i < st->nnodes)
				s->spread++;
		}
		if (st->nnodes > 1 && s->o->block_size > 0 &&
		    st->nnodes <= s->o->block_size) {
			s->fitblk++;
			for (i = 1; i < st->nnodes; i++)
				if (st->nodes[i].node / s->o->block_size !=
				    st->nodes[0].node / s->o->block_size)
					break;
			if (i < st->nnodes)
				s->xblk++;
		}
		s->runpos[j] = s->nrun;
		memset(&s->run[s->nrun], 0, sizeof(s->run[s->nrun]));
		s->run[s->nrun].id = st->job;
		s->run[s->nrun].end = st->end;
		s->run[s->nrun].queue = tj->vc;
		s->run[s->nrun].priority = 100;
		s->run[s->nrun++].start = t;
		replay_tenants_account(s, t);
		s->held[tj->vc] += tj->gpus;
		replay_push(s, t + tj->dur - tj->done, EV_END, j);
		if (s->o->min_runtime > 0 && s->v->tenants >= T_COHORT)
			replay_push(s, t + s->o->min_runtime, EV_WAKE, j);
		s->gone[st->pending] = 1;
		if (st->backfill)
			s->backfilled++;
	}
}

static struct sched_input
input(struct sim *s, int64_t t)
{
	struct sched_input in;
	enum policy base = s->v->base;

	memset(&in, 0, sizeof(in));
	in.now = t;
	in.topo = s->v->tenants == T_OFF &&
	    (base == P_FIFO || base == P_EASY) ? NULL : s->topo;
	in.nodes = s->nodes;
	in.nnodes = s->o->nodes;
	in.running = s->run;
	in.nrunning = s->nrun;
	in.pending = s->pend;
	in.npending = s->npend;
	in.config.bf_max_job_test = s->o->bf_max;
	in.config.starve_s = s->v->starve_s;
	/* --gang-starve: the core's rule for gangs of >= BIG_GANG GPUs
	 * only (the controller's default, starve_min_gpus = 32). */
	if (s->v->gang_starve > 0) {
		in.config.starve_s = s->v->gang_starve;
		in.config.starve_min_gpus = BIG_GANG;
	}
	switch (base) {
	case P_FIFO:
		in.config.no_backfill = true;
		break;
	case P_EASY:
		break;
	case P_COHORT:
		in.config.order = SCHED_ORDER_ESTIMATE;
		in.config.aging = (uint32_t)llround(s->o->aging *
		    SCHED_AGING_UNIT);
		break;
	case P_ORACLE:
		in.config.order = SCHED_ORDER_ESTIMATE;
		in.config.aging = 0;
		break;
	case NPOLICIES:
		break;
	}
	if (s->v->tenants != T_OFF)
		replay_tenants_input(s, &in);
	return in;
}

/* ---- figures ------------------------------------------------------ */

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank; sorts v. */
double
replay_pct(double *v, size_t n, double p)
{
	size_t r;

	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), dcmp);
	r = (size_t)ceil(p * (double)n);
	return v[r > 0 ? r - 1 : 0];
}

/* Every job ran its whole run time, from its last start to its end, and
 * no GPU was held twice at once: so utilization stays <= 1. */
static void
check_jobs(const struct sim *s)
{
	size_t j;

	for (j = 0; j < s->njobs; j++) {
		const struct tjob *tj = &s->jobs[j];

		if (tj->finish < 0 || tj->start < tj->submit ||
		    tj->done + (tj->finish - tj->seg) != tj->dur ||
		    tj->seg < tj->start) {
			fprintf(stderr, "replay: job %lld did not run right\n",
			    tj->trace_id);
			exit(1);
		}
	}
}

static void
report(const struct sim *s, double wall_s, struct outcome *out)
{
	size_t j, nbig = 0;
	double *jct = replay_xcalloc(s->njobs, sizeof(double));
	double *bigw = replay_xcalloc(s->njobs, sizeof(double));
	double sj = 0, sq = 0, gs = 0, t0 = (double)s->t0;
	double tend = t0, mk, util, utila, bigmax = 0, tw = (double)s->tw;
	double sbig = 0;

	check_jobs(s);
	for (j = 0; j < s->njobs; j++) {
		const struct tjob *tj = &s->jobs[j];

		jct[j] = (double)(tj->finish - tj->submit);
		sj += jct[j];
		sq += (double)(tj->start - tj->submit);
		gs += (double)tj->gpus * (double)tj->dur;
		if ((double)tj->finish > tend)
			tend = (double)tj->finish;
		if (tj->gpus >= BIG_GANG)
			sbig += jct[j];
		if (tj->gpus >= BIG_GANG) {
			bigw[nbig] = (double)(tj->start - tj->submit);
			if (bigw[nbig] > bigmax)
				bigmax = bigw[nbig];
			nbig++;
		}
	}
	mk = tend - t0;
	util = mk > 0 ? gs / ((double)s->o->nodes * GPN * mk) : 0;
	utila = tw > t0 ? s->held_gs_a / ((double)s->o->nodes * GPN *
	    (tw - t0)) : 0.0;
	if (util > 1.0 + 1e-9 || utila > 1.0 + 1e-9 ||
	    s->held_gs > (double)s->o->nodes * GPN * mk + 1e-3) {
		fprintf(stderr, "replay: utilization above 100%%\n");
		exit(1);
	}
	out->ran = true;
	out->avg_jct = sj / (double)s->njobs;
	out->avg_wait = sq / (double)s->njobs;
	out->p99_bigw = replay_pct(bigw, nbig, 0.99);
	out->jct_small = nbig < s->njobs ? (sj - sbig) /
	    (double)(s->njobs - nbig) : 0.0;
	out->jct_big = nbig > 0 ? sbig / (double)nbig : 0.0;
	out->util_a = utila;
	if (s->v->tenants != T_OFF) {
		free(jct);
		free(bigw);
		return;
	}
	printf("%-14s %6zu %8.0f %8.0f %8.0f %5.1f%% %5.1f%% %8.0f "
	    "%8.0f %8.0f %4zu %6zu %4zu/%-4zu %7zu %6.1f %6zu %6.2f",
	    s->v->name, s->njobs, out->avg_jct,
	    replay_pct(jct, s->njobs, 0.99), out->avg_wait, 100.0 * util,
	    100.0 * utila, mk, out->p99_bigw, bigmax, nbig, s->backfilled,
	    s->spread, s->multi, s->passes, wall_s, s->maxq,
	    s->pass_ms_max);
	if (s->o->block_size > 0)
		printf(" %4zu/%-4zu", s->xblk, s->fitblk);
	printf("\n");
	fflush(stdout);
	free(jct);
	free(bigw);
}

/* ---- one policy --------------------------------------------------- */

/* After a pass: a preemptor whose victims have all stopped and that
 * still did not start plans again (counted as a miss). */
static void
settle_preemptors(struct sim *s)
{
	size_t k;

	for (k = 0; k < s->npend; k++)
		if (!s->gone[k] && s->pend[k].preempting &&
		    s->jobs[s->pidx[k]].pvict == 0) {
			s->pend[k].preempting = false;
			s->misses++;
		}
}

static void
event(struct sim *s, int64_t t, struct hent e)
{
	struct tjob *tj = &s->jobs[e.j];

	if (e.gen != tj->gen || tj->finish >= 0)
		return;			/* stale: it stopped or ended */
	switch (e.kind) {
	case EV_END:
		finish(s, t, e.j);
		break;
	case EV_STOP:
		replay_tenants_stop(s, t, e.j);
		break;
	default:
		break;			/* a wake-up: the pass is the point */
	}
}

static void
simulate(const struct opts *o, const struct variant *v,
    const struct tenants *tn, const struct tjob *trace, size_t njobs,
    struct outcome *out)
{
	struct sim s;
	struct sched_input in;
	struct sched_result *res;
	size_t next = 0, k, n;
	int64_t t;
	double w0 = now_ms(), p0, pm;

	memset(&s, 0, sizeof(s));
	s.o = o;
	s.v = v;
	s.tn = tn;
	s.njobs = njobs;
	s.jobs = replay_xcalloc(njobs, sizeof(*s.jobs));
	memcpy(s.jobs, trace, njobs * sizeof(*s.jobs));
	for (k = 0; k < njobs; k++)
		s.jobs[k].start = s.jobs[k].finish = -1;
	s.t0 = trace[0].submit;
	s.tw = trace[njobs - 1].submit;
	build_cluster(&s);
	s.cpend = njobs;
	s.pend = replay_xcalloc(s.cpend, sizeof(*s.pend));
	s.pidx = replay_xcalloc(s.cpend, sizeof(*s.pidx));
	s.gone = replay_xcalloc(s.cpend, 1);
	s.run = replay_xcalloc(njobs, sizeof(*s.run));
	s.runpos = replay_xcalloc(njobs, sizeof(*s.runpos));
	s.cheap = njobs;
	s.heap = replay_xcalloc(s.cheap, sizeof(*s.heap));
	if (v->tenants != T_OFF)
		replay_tenants_setup(&s);
	while (s.finished < njobs) {
		if (s.nheap > 0 && (next == njobs ||
		    s.heap[0].t <= s.jobs[next].submit))
			t = s.heap[0].t;
		else if (next < njobs)
			t = s.jobs[next].submit;
		else {
			fprintf(stderr, "replay: %s: %zu jobs can never "
			    "start\n", v->name, s.npend);
			exit(1);
		}
		if (v->tenants != T_OFF)
			replay_tenants_owed(&s, t);
		while (s.nheap > 0 && s.heap[0].t == t)
			event(&s, t, hpop(&s));
		while (next < njobs && s.jobs[next].submit == t)
			arrive(&s, next++);
		if (s.npend == 0)
			continue;
		if (s.npend > s.maxq)
			s.maxq = s.npend;
		in = input(&s, t);
		p0 = now_ms();
		if ((res = sched_run(&in)) == NULL)
			replay_die("sched_run");
		pm = now_ms() - p0;
		if (pm > s.pass_ms_max)
			s.pass_ms_max = pm;
		s.passes++;
		memset(s.gone, 0, s.npend);
		apply(&s, t, res);
		if (v->tenants != T_OFF) {
			replay_tenants_preempt(&s, t, res);
			settle_preemptors(&s);
		}
		sched_result_free(res);
		for (k = 0, n = 0; k < s.npend; k++)
			if (!s.gone[k]) {
				s.pend[n] = s.pend[k];
				s.pidx[n++] = s.pidx[k];
			}
		s.npend = n;
	}
	report(&s, (now_ms() - w0) / 1e3, out);
	if (v->tenants != T_OFF)
		replay_tenants_report(&s, (now_ms() - w0) / 1e3);
	free(s.jobs);
	free(s.nodes);
	free(s.gpus);
	free(s.names);
	topo_destroy(s.topo);
	free(s.pend);
	free(s.pidx);
	free(s.gone);
	free(s.run);
	free(s.runpos);
	free(s.heap);
}

/* ---- command line ------------------------------------------------- */

static void
usage(void)
{
	fprintf(stderr, "usage: replay --trace FILE [--from S] [--to S] "
	    "[--limit-jobs M]\n"
	    "    [--nodes N] [--nodes-per-leaf K] [--topology-leaf]\n"
	    "    [--blocks] [--block-size K] [--topology-block]\n"
	    "    [--torus XxYxZ [--torus-required]]\n"
	    "    [--overestimate F] [--limit-spread S] [--aging A] "
	    "[--bf-max N] [--gpu-links]\n"
	    "    [--policies fifo,easy,cohort,oracle] [--starve S1,S2,...]\n"
	    "    [--gang-starve S1,S2,...]\n"
	    "    [--big-gangs N [--big-share F] [--big-seed X]] "
	    "[--arrival-scale F]\n"
	    "    [--tenants VCFILE [--grace S] [--ckpt S] [--min-runtime S]\n"
	    "        [--half-life S] [--vc-min-share F] [--victim-end-stop]\n"
	    "        [--policies static,pooled,cohort,kueue]]\n");
	exit(2);
}

static double
num(const char *s, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= lo && v <= hi))
		usage();
	return v;
}

/* --policies: names of the classic policies or, with --tenants, of the
 * tenant modes (checked once both are known). */
static void
policies(struct opts *o, const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL;
	int p;
	bool found;

	if (copy == NULL)
		replay_die("replay");
	memset(o->want, 0, sizeof(o->want));
	memset(o->twant, 0, sizeof(o->twant));
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		found = false;
		for (p = 0; p < NPOLICIES; p++)
			if (strcmp(tok, policy_name[p]) == 0)
				o->want[p] = found = true;
		for (p = T_STATIC; p < NTMODES; p++)
			if (strcmp(tok, replay_tmode_name[p]) == 0)
				o->twant[p] = found = true;
		if (!found) {
			fprintf(stderr, "replay: unknown policy %s\n", tok);
			usage();
		}
	}
	free(copy);
}

static void
starves(int64_t *v, size_t *n, size_t max, const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL;

	if (copy == NULL)
		replay_die("replay");
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if (*n == max)
			usage();
		v[(*n)++] = (int64_t)num(tok, 1, 1e9);
	}
	free(copy);
}

static bool
option(struct opts *o, const char *a, const char *v)
{
	if (strcmp(a, "--trace") == 0)
		o->trace = v;
	else if (strcmp(a, "--from") == 0)
		o->from = (int64_t)num(v, -1e15, 1e15);
	else if (strcmp(a, "--to") == 0)
		o->to = (int64_t)num(v, -1e15, 1e15);
	else if (strcmp(a, "--limit-jobs") == 0)
		o->limit_jobs = (size_t)num(v, 1, 1e9);
	else if (strcmp(a, "--nodes") == 0)
		o->nodes = (uint32_t)num(v, 1, 100000);
	else if (strcmp(a, "--nodes-per-leaf") == 0)
		o->per_leaf = (uint32_t)num(v, 1, 100000);
	else if (strcmp(a, "--block-size") == 0)
		o->block_size = (uint32_t)num(v, 1, 65536);
	else if (strcmp(a, "--torus") == 0) {
		char *e;
		unsigned long d[3] = { 1, 1, 1 };
		int k;

		for (k = 0, e = (char *)v; k < 3; k++) {
			d[k] = strtoul(e, &e, 10);
			if (d[k] == 0 || d[k] > 1000)
				return false;
			if (*e == '\0')
				break;
			if (*e++ != 'x')
				return false;
		}
		if (k == 3 || d[0] * d[1] * d[2] > 100000)
			return false;
		for (k = 0; k < 3; k++)
			o->torus[k] = (uint32_t)d[k];
	}
	else if (strcmp(a, "--overestimate") == 0)
		o->overestimate = num(v, 1, 1000);
	else if (strcmp(a, "--limit-spread") == 0)
		o->spread = num(v, 1, 1000);
	else if (strcmp(a, "--aging") == 0)
		o->aging = num(v, 0, 1000);
	else if (strcmp(a, "--bf-max") == 0)
		o->bf_max = (uint32_t)num(v, 1, 1e7);
	else if (strcmp(a, "--policies") == 0)
		policies(o, v);
	else if (strcmp(a, "--starve") == 0)
		starves(o->starve, &o->nstarve, (MAX_VARIANTS - NPOLICIES) / 2,
		    v);
	else if (strcmp(a, "--gang-starve") == 0)
		starves(o->gstarve, &o->ngstarve,
		    (MAX_VARIANTS - NPOLICIES) / 2, v);
	else if (strcmp(a, "--big-gangs") == 0)
		o->big_n = (size_t)num(v, 1, 1e6);
	else if (strcmp(a, "--big-share") == 0)
		o->big_share = num(v, 0.001, 0.9);
	else if (strcmp(a, "--big-seed") == 0)
		o->big_seed = (uint64_t)num(v, 0, 1e15);
	else if (strcmp(a, "--arrival-scale") == 0)
		o->arrival_scale = num(v, 0.01, 100);
	else if (strcmp(a, "--tenants") == 0)
		o->vcfile = v;
	else if (strcmp(a, "--grace") == 0)
		o->grace = (int64_t)num(v, 0, 86400);
	else if (strcmp(a, "--ckpt") == 0)
		o->ckpt = (int64_t)num(v, 1, 1e7);
	else if (strcmp(a, "--min-runtime") == 0)
		o->min_runtime = (int64_t)num(v, 0, 1e7);
	else if (strcmp(a, "--half-life") == 0)
		o->half_life = (int64_t)num(v, 1, 1e9);
	else if (strcmp(a, "--vc-min-share") == 0)
		o->vc_min_share = num(v, 0, 0.5);
	else
		return false;
	return true;
}

static void
args(struct opts *o, int argc, char **argv)
{
	int i, p;
	const char *a;
	bool any;

	memset(o, 0, sizeof(*o));
	o->from = INT64_MIN;
	o->to = INT64_MAX;
	o->nodes = 80;
	o->per_leaf = 16;
	o->overestimate = 2.0;
	o->spread = 1.0;
	o->aging = (double)SCHED_DEFAULT_AGING / SCHED_AGING_UNIT;
	o->big_share = 0.25;
	o->big_seed = 1;
	o->arrival_scale = 1.0;
	o->grace = 60;
	o->ckpt = 1800;
	o->half_life = 7 * 86400;
	o->vc_min_share = 0.001;
	for (p = 0; p < NPOLICIES; p++)
		o->want[p] = true;
	for (p = T_STATIC; p < NTMODES; p++)
		o->twant[p] = true;
	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (strcmp(a, "--topology-leaf") == 0) {
			o->topo_leaf = true;
			continue;
		}
		if (strcmp(a, "--blocks") == 0 ||
		    strcmp(a, "--topology-block") == 0) {
			if (o->block_size == 0)
				o->block_size = 18;
			o->topo_block |= a[2] == 't';
			continue;
		}
		if (strcmp(a, "--torus-required") == 0) {
			o->torus_req = true;
			continue;
		}
		if (strcmp(a, "--gpu-links") == 0) {
			o->gpu_links = true;
			continue;
		}
		if (strcmp(a, "--victim-end-stop") == 0) {
			o->victim_end_stop = true;
			continue;
		}
		if (i + 1 >= argc || !option(o, a, argv[i + 1]))
			usage();
		i++;
	}
	if (o->trace == NULL || (o->torus_req && o->torus[0] == 0))
		usage();
	if (o->torus[0] != 0)
		o->nodes = o->torus[0] * o->torus[1] * o->torus[2];
	if (o->vcfile != NULL && o->big_n > 0) {
		fprintf(stderr, "replay: --tenants and --big-gangs do not "
		    "mix (the added gangs have no VC)\n");
		exit(2);
	}
	for (p = 0, any = false; p < NTMODES; p++)
		any |= o->vcfile != NULL ? o->twant[p] : false;
	for (p = 0; p < NPOLICIES; p++)
		any |= o->vcfile == NULL ? o->want[p] : false;
	if (!any) {
		fprintf(stderr, "replay: --policies names none of this "
		    "mode's policies\n");
		exit(2);
	}
}

/* The runs: the classic policies (and cohort with each --starve), or
 * the tenant modes. */
static size_t
variants(const struct opts *o, struct variant *v)
{
	size_t n = 0, k;
	int p;

	if (o->vcfile != NULL) {
		for (p = T_STATIC; p < NTMODES; p++) {
			if (!o->twant[p])
				continue;
			memset(&v[n], 0, sizeof(v[n]));
			snprintf(v[n].name, sizeof(v[n].name), "%s",
			    replay_tmode_name[p]);
			v[n].tenants = (enum tmode)p;
			v[n++].base = p == T_KUEUE ? P_FIFO : P_COHORT;
		}
		return n;
	}
	for (p = 0; p < NPOLICIES; p++) {
		if (!o->want[p])
			continue;
		memset(&v[n], 0, sizeof(v[n]));
		snprintf(v[n].name, sizeof(v[n].name), "%s", policy_name[p]);
		v[n++].base = (enum policy)p;
	}
	for (k = 0; k < o->nstarve; k++) {
		memset(&v[n], 0, sizeof(v[n]));
		snprintf(v[n].name, sizeof(v[n].name), "cohort-s%lld",
		    (long long)o->starve[k]);
		v[n].base = P_COHORT;
		v[n++].starve_s = o->starve[k];
	}
	for (k = 0; k < o->ngstarve; k++) {
		memset(&v[n], 0, sizeof(v[n]));
		snprintf(v[n].name, sizeof(v[n].name), "cohort-g%lld",
		    (long long)o->gstarve[k]);
		v[n].base = P_COHORT;
		v[n++].gang_starve = o->gstarve[k];
	}
	return n;
}

/* Every run against FIFO's big-gang wait and the oracle's JCT. */
static void
summary(const struct variant *v, const struct outcome *out, size_t n)
{
	const struct outcome *fifo = NULL, *oracle = NULL;
	size_t k;

	for (k = 0; k < n; k++) {
		if (v[k].base == P_FIFO)
			fifo = &out[k];
		if (v[k].base == P_ORACLE)
			oracle = &out[k];
	}
	printf("\nsummary: p99w>=32 vs fifo's, avg_jct vs oracle's "
	    "(same run); avg JCT of jobs < 32 and >= 32 GPUs\n"
	    "%-14s %8s %8s %9s %8s %8s %8s\n", "policy", "avg_jct",
	    "/oracle", "p99w>=32", "/fifo", "jct<32", "jct>=32");
	for (k = 0; k < n; k++) {
		printf("%-14s %8.0f ", v[k].name, out[k].avg_jct);
		if (oracle != NULL && oracle->avg_jct > 0)
			printf("%8.3f ", out[k].avg_jct / oracle->avg_jct);
		else
			printf("%8s ", "-");
		printf("%9.0f ", out[k].p99_bigw);
		if (fifo != NULL && fifo->p99_bigw > 0)
			printf("%8.3f ", out[k].p99_bigw / fifo->p99_bigw);
		else
			printf("%8s ", "-");
		printf("%8.0f %8.0f\n", out[k].jct_small, out[k].jct_big);
	}
}

/* Jobs the cluster could never hold: reported and dropped. */
static size_t
drop_unfit(const struct opts *o, struct tjob *jobs, size_t njobs,
    size_t *dropped)
{
	size_t k, n;
	uint32_t maxg;

	for (k = 0, n = 0; k < njobs; k++) {
		maxg = o->nodes * GPN;
		if (o->topo_leaf && jobs[k].gpus > GPN)
			maxg = (o->per_leaf < o->nodes ? o->per_leaf :
			    o->nodes) * GPN;
		if (jobs[k].gpus > maxg ||
		    (jobs[k].gpus + GPN - 1) / GPN > MAX_GANG) {
			if ((*dropped)++ < 10)
				printf("dropped: job %lld (%u GPUs) does not "
				    "fit the cluster\n", jobs[k].trace_id,
				    jobs[k].gpus);
			continue;
		}
		jobs[n++] = jobs[k];
	}
	return n;
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct tjob *jobs;
	struct tenants tn;
	struct variant v[MAX_VARIANTS];
	struct outcome out[MAX_VARIANTS];
	size_t njobs, dropped = 0, nv, k;
	char blocks[64];

	args(&o, argc, argv);
	snprintf(blocks, sizeof(blocks), ", blocks of %u nodes",
	    o.block_size);
	jobs = load_trace(&o, &njobs);
	if (o.big_n > 0 || o.arrival_scale != 1.0)
		jobs = replay_big_add(&o, jobs, &njobs);
	njobs = drop_unfit(&o, jobs, njobs, &dropped);
	if (njobs == 0) {
		fprintf(stderr, "replay: no jobs\n");
		return 1;
	}
	memset(&tn, 0, sizeof(tn));
	if (o.vcfile != NULL)
		replay_tenants_load(&o, jobs, njobs, &tn);
	printf("trace %s: %zu jobs (%zu dropped), submits %lld..%lld; "
	    "cluster %u nodes x %d GPUs, %u nodes per leaf%s%s%s%s%s; limits "
	    "%.2gx run time (spread %.2g), at least %d s; cohort aging "
	    "%.3g\n", o.trace, njobs, dropped,
	    (long long)jobs[0].submit, (long long)jobs[njobs - 1].submit,
	    o.nodes, GPN, o.per_leaf,
	    o.topo_leaf ? ", multi-node jobs require one leaf" : "",
	    o.block_size > 0 ? blocks : "",
	    o.topo_block ? ", multi-node jobs that fit one require one" : "",
	    o.torus[0] != 0 ? ", a torus" : "",
	    o.torus_req ? " (multi-node jobs require a compact box)" : "",
	    o.overestimate, o.spread, MIN_LIMIT, o.aging);
	nv = variants(&o, v);
	memset(out, 0, sizeof(out));
	if (o.vcfile != NULL)
		replay_tenants_header(&o, &tn);
	else
		printf("%-14s %6s %8s %8s %8s %6s %6s %8s %8s %8s %4s %6s "
		    "%9s %7s %6s %6s %6s%s\n", "policy", "jobs", "avg_jct",
		    "p99_jct", "avg_wait", "util", "util_a", "makespan",
		    "p99w>=32", "maxw>=32", "n32", "backfl", "xleaf/gng",
		    "passes", "wall_s", "maxq", "pmaxms", o.block_size > 0 ?
		    "  xblk/fit" : "");
	for (k = 0; k < nv; k++)
		simulate(&o, &v[k], &tn, jobs, njobs, &out[k]);
	if (o.vcfile == NULL && nv > 1)
		summary(v, out, nv);
	free(jobs);
	return 0;
}
