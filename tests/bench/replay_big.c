/* The trace replay's big-gang workload (big gangs must not starve):
 * Philly has 34 jobs of >= 32 GPUs in Oct-Nov 2017, 2% of its
 * GPU time; a site's trace has 260 carrying a quarter. This
 * resamples Philly into that shape:
 *
 * --big-gangs N adds N gangs. Gang i draws three numbers from
 * splitmix64 of (seed, i) (--big-seed, default 1): its size, 64 GPUs
 * with probability 1/3 and 32 otherwise; its run time, that of a trace
 * job of >= 8 GPUs drawn uniformly (the trace's own multi-GPU run-time
 * distribution, 1 s to weeks); and its submit time, that of a trace job
 * drawn uniformly (so the gangs arrive with the trace's own bursts).
 * Every run time is then scaled by one factor so that the added gangs
 * carry --big-share (default 0.25) of all the GPU time; their limits
 * follow the same rule as the trace's. They are merged in submit order
 * (after trace jobs of the same second).
 *
 * --arrival-scale F then divides every submit's offset from the first
 * by F: the same jobs, arriving F times as fast.
 *
 * It prints what it built: the gangs, the factor, the share of >= 32-GPU
 * jobs, the mean offered load against the cluster's GPUs and how many
 * days' submissions alone exceed a day of the whole cluster. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/bench/replay.h"

static int
submit_cmp(const void *a, const void *b)
{
	const struct tjob *x = a, *y = b;

	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	/* Trace jobs before added ones; each in its own order. */
	if (x->synthetic != y->synthetic)
		return x->synthetic ? 1 : -1;
	return x->trace_id < y->trace_id ? -1 : x->trace_id > y->trace_id;
}

static void
add_gangs(const struct opts *o, struct tjob *jobs, size_t n0)
{
	size_t i, npool = 0, n64 = 0;
	int64_t *pool = replay_xcalloc(n0, sizeof(*pool));
	double base = 0, raw = 0, k, big = 0, tot;
	uint64_t h;

	for (i = 0; i < n0; i++) {
		base += (double)jobs[i].gpus * (double)jobs[i].dur;
		if (jobs[i].gpus >= GPN)
			pool[npool++] = jobs[i].dur;
	}
	if (npool == 0)
		for (i = 0; i < n0; i++)
			pool[npool++] = jobs[i].dur;
	for (i = 0; i < o->big_n; i++) {
		struct tjob *g = &jobs[n0 + i];

		memset(g, 0, sizeof(*g));
		h = replay_mix(o->big_seed * 0x100000001b3ULL + i);
		g->gpus = h % 3 == 2 ? 64 : 32;
		n64 += g->gpus == 64;
		h = replay_mix(h);
		g->dur = pool[h % npool];
		h = replay_mix(h);
		g->submit = jobs[h % n0].submit;
		g->trace_id = 1000000000LL + (long long)i;
		g->synthetic = true;
		raw += (double)g->gpus * (double)g->dur;
	}
	k = o->big_share / (1.0 - o->big_share) * base / raw;
	for (i = 0; i < o->big_n; i++) {
		struct tjob *g = &jobs[n0 + i];

		g->dur = llround((double)g->dur * k);
		if (g->dur < 1)
			g->dur = 1;
		g->limit = replay_job_limit(o, g->trace_id, g->dur);
	}
	for (i = 0, tot = 0; i < n0 + o->big_n; i++) {
		tot += (double)jobs[i].gpus * (double)jobs[i].dur;
		if (jobs[i].gpus >= BIG_GANG)
			big += (double)jobs[i].gpus * (double)jobs[i].dur;
	}
	printf("big gangs: %zu added (%zu of 32 GPUs, %zu of 64; seed "
	    "%llu), run times of the trace's %zu jobs of >= %d GPUs x %.3f; "
	    "jobs of >= %d GPUs now carry %.1f%% of the GPU time\n",
	    o->big_n, o->big_n - n64, n64, (unsigned long long)o->big_seed,
	    npool, GPN, k, BIG_GANG, 100.0 * big / tot);
	free(pool);
}

/* Mean offered load and the days whose submissions exceed a day of the
 * cluster. */
static void
load(const struct opts *o, const struct tjob *jobs, size_t n)
{
	int64_t t0 = jobs[0].submit, span = jobs[n - 1].submit - t0;
	size_t ndays = (size_t)(span / 86400) + 1, d, over = 0;
	double *day = replay_xcalloc(ndays, sizeof(*day)), tot = 0;
	double cap = (double)o->nodes * GPN;

	for (size_t i = 0; i < n; i++) {
		double gs = (double)jobs[i].gpus * (double)jobs[i].dur;

		day[(jobs[i].submit - t0) / 86400] += gs;
		tot += gs;
	}
	for (d = 0; d < ndays; d++)
		over += day[d] > cap * 86400.0;
	printf("offered load: %.0f GPUs on average over the submits "
	    "(cluster %.0f GPUs: %.2fx); %zu of %zu days submit more than "
	    "a day of the whole cluster\n", span > 0 ? tot / (double)span :
	    0.0, cap, span > 0 ? tot / (double)span / cap : 0.0, over,
	    ndays);
	free(day);
}

struct tjob *
replay_big_add(const struct opts *o, struct tjob *jobs, size_t *njobs)
{
	size_t n0 = *njobs, n = n0 + o->big_n, i;
	int64_t t0;

	if (n0 == 0)
		return jobs;
	if ((jobs = realloc(jobs, n * sizeof(*jobs))) == NULL)
		replay_die("replay");
	if (o->big_n > 0)
		add_gangs(o, jobs, n0);
	qsort(jobs, n, sizeof(*jobs), submit_cmp);
	t0 = jobs[0].submit;
	if (o->arrival_scale != 1.0)
		for (i = 0; i < n; i++)
			jobs[i].submit = t0 + llround((double)(jobs[i].submit -
			    t0) / o->arrival_scale);
	load(o, jobs, n);
	*njobs = n;
	return jobs;
}
