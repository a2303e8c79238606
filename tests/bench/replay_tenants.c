/* The trace replay's tenants (docs/BENCHMARKS.md, "Tenants on the Philly
 * trace").
 *
 * --tenants VCFILE (CSV with columns job_id and vc, found by name) gives
 * each trace job its virtual cluster. Every VC carrying at least
 * --vc-min-share (default 0.001) of the replayed jobs' GPU time gets a
 * queue; the others, and jobs the file does not list, are folded into
 * one queue "other". Nominal quotas (flavor 0, GPUs) share the cluster's
 * GPUs in proportion to each queue's GPU time (largest remainder), but
 * never below the GPUs of the queue's largest job, so that every job can
 * run under static partitions (such queues get exactly that, and the
 * rest is shared among the others); the nominals add up to the cluster.
 *
 * Policies (one run each, --policies picks some):
 *   static  each queue capped at its nominal (borrow_limit 0): static
 *           partitions; the cohort order and EASY backfill inside;
 *   pooled  one queue (nqueues 0): today's controller, cohort order;
 *   cohort  quotas with unlimited borrowing of idle nominal, reclaim by
 *           preemption (preempt = borrowers), fair share between
 *           borrowing queues (decayed GPU-seconds over nominal, half-life
 *           --half-life, default 7 days, as Slurm's default), cohort
 *           order and EASY backfill; victims get the checkpoint signal,
 *           checkpoint and stop at the grace (--grace, default 60 s):
 *           they keep their GPUs for the grace and lose the grace's GPU
 *           time, no work before the signal;
 *   kueue   Kueue-like: the same quotas, borrowing and reclaim, but FIFO
 *           order without backfill (sched_config.no_backfill) and no
 *           fair share; victims are stopped at once and lose the work
 *           since their last periodic checkpoint.
 * Every job checkpoints every --ckpt seconds of its run (default 1,800),
 * counted from each (re)start; sched_running.lost is the time since the
 * last one. A stopped victim goes back to pending with its submit time
 * (its place in the order) and the rest of its run time and limit. With
 * --min-runtime S a job is not a victim before it has run S seconds.
 * A stopping victim is passed to the core with its expected end at start
 * + limit, as the controller (placement.c) passes every running job;
 * --victim-end-stop passes its stop (signal + grace) instead, which is
 * when its GPUs come back.
 * All four use the same cluster and topology (placement is not what is
 * compared).
 *
 * Figures, per queue: nominal GPUs, jobs, average JCT, average queueing
 * (all the time it spent pending, over its first wait and every wait
 * after a preemption), the p99 (nearest rank) and largest time to
 * entitled capacity, the count of entitled jobs, the average bounded
 * slowdown (max(1, JCT / max(run time, 10 s))) and the queue's slowdown
 * as a ratio, its jobs' JCTs over their run times (sums; a few short
 * jobs that waited long move it less). A job is entitled when,
 * at its submit, its queue's running GPUs plus the GPUs of the queue's
 * earlier entitled jobs still pending plus its own stay within the
 * queue's nominal; its time to entitled capacity is its first start minus
 * its submit. Its owed time is the part of that wait during which its
 * queue held few enough GPUs that it would have fit within the nominal
 * (what reclaim is for; the rest is its own queue's use of its nominal,
 * by jobs its queue order put first): P99_OWED, MAX_OWED. Overall: util_a, GPUs held (running or in a grace) over the
 * arrival window; good_a, the same less the GPU time lost to preemption;
 * preemptions; misses, preemptors whose victims all stopped and that
 * still did not start in the next pass (they may plan again); GPU-hours
 * lost; Jain's index over the queues' average bounded slowdowns
 * ((sum x)^2 / (n sum x^2): 1 when every queue is slowed alike), and
 * JAIN_R, the same over the ratio slowdowns. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/bench/replay.h"

const char *const replay_tmode_name[NTMODES] = {
	"-", "static", "pooled", "cohort", "kueue"
};

#define SLOWDOWN_TAU 10.0

/* ---- the sidecar -------------------------------------------------- */

struct vcrow {
	long long id;
	char vc[16];
};

static int
row_cmp(const void *a, const void *b)
{
	const struct vcrow *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static struct vcrow *
read_vcs(const char *path, size_t *nrows)
{
	FILE *fp;
	char *line = NULL, *p, *f[16];
	size_t cap = 0, n = 0, rcap = 1024, nf, k, lineno = 1, bad = 0;
	int cid = -1, cvc = -1;
	struct vcrow *rows = replay_xcalloc(rcap, sizeof(*rows));
	long long id;
	char *end;

	if ((fp = fopen(path, "r")) == NULL)
		replay_die(path);
	if (getline(&line, &cap, fp) <= 0) {
		fprintf(stderr, "replay: %s: empty\n", path);
		exit(1);
	}
	line[strcspn(line, "\r\n")] = '\0';
	for (nf = 0, p = line; nf < 16 && p != NULL; nf++) {
		f[nf] = p;
		if ((p = strchr(p, ',')) != NULL)
			*p++ = '\0';
	}
	for (k = 0; k < nf; k++) {
		if (strcmp(f[k], "job_id") == 0)
			cid = (int)k;
		if (strcmp(f[k], "vc") == 0)
			cvc = (int)k;
	}
	if (cid < 0 || cvc < 0) {
		fprintf(stderr, "replay: %s: needs columns job_id and vc\n",
		    path);
		exit(1);
	}
	while (getline(&line, &cap, fp) > 0) {
		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '\0')
			continue;
		for (nf = 0, p = line; nf < 16 && p != NULL; nf++) {
			f[nf] = p;
			if ((p = strchr(p, ',')) != NULL)
				*p++ = '\0';
		}
		errno = 0;
		id = (size_t)cid < nf ? strtoll(f[cid], &end, 10) : 0;
		if ((size_t)cid >= nf || (size_t)cvc >= nf || errno != 0 ||
		    end == f[cid] || *end != '\0' || f[cvc][0] == '\0' ||
		    strlen(f[cvc]) >= sizeof(rows[0].vc)) {
			if (bad++ < 5)
				fprintf(stderr, "replay: %s:%zu: bad row, "
				    "skipped\n", path, lineno);
			continue;
		}
		if (n == rcap) {
			rcap *= 2;
			if ((rows = realloc(rows, rcap * sizeof(*rows))) ==
			    NULL)
				replay_die("replay");
		}
		rows[n].id = id;
		snprintf(rows[n].vc, sizeof(rows[n].vc), "%s", f[cvc]);
		n++;
	}
	free(line);
	fclose(fp);
	qsort(rows, n, sizeof(*rows), row_cmp);
	*nrows = n;
	return rows;
}

/* ---- queues and quotas -------------------------------------------- */

struct vcsum {
	char name[16];
	double gs;
	uint32_t maxjob;
	size_t njobs;
};

static int
vcsum_cmp(const void *a, const void *b)
{
	const struct vcsum *x = a, *y = b;

	if (x->gs != y->gs)
		return x->gs > y->gs ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Nominals in proportion to share, at least maxjob, adding up to total
 * (largest remainder). */
static void
nominals(struct tenants *tn, uint32_t total)
{
	bool fixed[MAX_TENANTS] = { false }, changed = true;
	double raw[MAX_TENANTS], r = 0, sh = 0;
	uint32_t sum = 0;
	size_t i, best;

	while (changed) {
		changed = false;
		r = total;
		sh = 0;
		for (i = 0; i < tn->n; i++) {
			if (fixed[i])
				r -= tn->maxjob[i];
			else
				sh += tn->share[i];
		}
		for (i = 0; i < tn->n; i++) {
			if (fixed[i])
				continue;
			raw[i] = sh > 0 ? tn->share[i] / sh * r : 0;
			if (raw[i] < tn->maxjob[i]) {
				fixed[i] = changed = true;
				break;
			}
		}
	}
	if (r < 0) {
		fprintf(stderr, "replay: the queues' largest jobs need more "
		    "than the cluster's %u GPUs\n", total);
		exit(1);
	}
	for (i = 0; i < tn->n; i++) {
		tn->nominal[i] = fixed[i] ? tn->maxjob[i] :
		    (uint32_t)floor(raw[i]);
		sum += tn->nominal[i];
	}
	while (sum < total) {
		for (i = 0, best = tn->n; i < tn->n; i++)
			if (!fixed[i] && (best == tn->n || raw[i] -
			    floor(raw[i]) > raw[best] - floor(raw[best])))
				best = i;
		if (best == tn->n)
			best = 0;
		tn->nominal[best]++;
		raw[best] = floor(raw[best]);	/* one extra GPU each */
		sum++;
	}
}

void
replay_tenants_load(const struct opts *o, struct tjob *jobs, size_t njobs,
    struct tenants *tn)
{
	size_t nrows, i, k, nv = 0, missing = 0;
	struct vcrow *rows = read_vcs(o->vcfile, &nrows), key, *r;
	struct vcsum *vs = replay_xcalloc(nrows + 1, sizeof(*vs));
	double tot = 0;
	int other = -1;

	/* Sum GPU time per VC name ("" for jobs the file lacks). */
	for (i = 0; i < njobs; i++) {
		const char *name = "";

		key.id = jobs[i].trace_id;
		r = bsearch(&key, rows, nrows, sizeof(*rows), row_cmp);
		if (r != NULL)
			name = r->vc;
		else
			missing++;
		for (k = 0; k < nv; k++)
			if (strcmp(vs[k].name, name) == 0)
				break;
		if (k == nv)
			snprintf(vs[nv++].name, sizeof(vs[0].name), "%s", name);
		vs[k].gs += (double)jobs[i].gpus * (double)jobs[i].dur;
		if (jobs[i].gpus > vs[k].maxjob)
			vs[k].maxjob = jobs[i].gpus;
		vs[k].njobs++;
		tot += (double)jobs[i].gpus * (double)jobs[i].dur;
	}
	qsort(vs, nv, sizeof(*vs), vcsum_cmp);
	memset(tn, 0, sizeof(*tn));
	for (k = 0; k < nv; k++) {
		bool own = vs[k].name[0] != '\0' &&
		    vs[k].gs >= o->vc_min_share * tot &&
		    tn->n < MAX_TENANTS - 1;
		size_t q;

		if (own) {
			q = tn->n++;
			snprintf(tn->name[q], sizeof(tn->name[q]), "%s",
			    vs[k].name);
		} else {
			if (other < 0)
				other = MAX_TENANTS - 1;
			q = (size_t)other;
			if (vs[k].name[0] != '\0')
				tn->folded++;
		}
		tn->share[q] += tot > 0 ? vs[k].gs / tot : 0;
		if (vs[k].maxjob > tn->maxjob[q])
			tn->maxjob[q] = vs[k].maxjob;
		tn->njobs[q] += vs[k].njobs;
	}
	if (other >= 0) {
		size_t q = tn->n++;

		snprintf(tn->name[q], sizeof(tn->name[q]), "other");
		tn->share[q] = tn->share[other];
		tn->maxjob[q] = tn->maxjob[other];
		tn->njobs[q] = tn->njobs[other];
		if (q != (size_t)other) {
			tn->share[other] = 0;
			tn->maxjob[other] = 0;
			tn->njobs[other] = 0;
		}
		tn->other = true;
	}
	nominals(tn, o->nodes * GPN);
	/* Each job's queue. */
	for (i = 0; i < njobs; i++) {
		const char *name = "";

		key.id = jobs[i].trace_id;
		r = bsearch(&key, rows, nrows, sizeof(*rows), row_cmp);
		if (r != NULL)
			name = r->vc;
		for (k = 0; k < tn->n - (tn->other ? 1 : 0); k++)
			if (strcmp(tn->name[k], name) == 0)
				break;
		jobs[i].vc = (uint32_t)k;
	}
	if (missing > 0)
		printf("tenants: %zu jobs without a VC in %s go to "
		    "\"other\"\n", missing, o->vcfile);
	free(vs);
	free(rows);
}

void
replay_tenants_header(const struct opts *o, const struct tenants *tn)
{
	size_t q;

	printf("tenants from %s: %zu queues%s (%zu VCs folded into other; "
	    "nominal in proportion to GPU time, at least the largest job); "
	    "checkpoint every %lld s, grace %lld s, min_runtime %lld s, "
	    "fair-share half-life %lld s\n", o->vcfile, tn->n,
	    tn->other ? " (the last is other)" : "", tn->folded,
	    (long long)o->ckpt, (long long)o->grace,
	    (long long)o->min_runtime, (long long)o->half_life);
	printf("queue     nominal  share   jobs  maxjob\n");
	for (q = 0; q < tn->n; q++)
		printf("%-8s %8u %5.1f%% %6zu %7u\n", tn->name[q],
		    tn->nominal[q], 100.0 * tn->share[q], tn->njobs[q],
		    tn->maxjob[q]);
	printf("# vc  POLICY QUEUE NOMINAL JOBS AVG_JCT AVG_WAIT P99_ENT "
	    "MAX_ENT N_ENT AVG_SLOWDOWN SLOWDOWN_R P99_OWED MAX_OWED\n"
	    "# all POLICY JOBS AVG_JCT AVG_WAIT P99_ENT MAX_ENT UTIL_A "
	    "GOOD_A PREEMPTIONS MISSES LOST_GPUH JAIN JAIN_R BACKFILLED PASSES "
	    "WALL_S P99_OWED MAX_OWED\n");
}

/* ---- one run ------------------------------------------------------ */

void
replay_tenants_setup(struct sim *s)
{
	const struct tenants *tn = s->tn;
	enum tmode m = s->v->tenants;
	size_t q;

	s->nqueues = m == T_POOLED ? 0 : tn->n;
	for (q = 0; q < tn->n; q++) {
		memset(&s->queues[q], 0, sizeof(s->queues[q]));
		s->queues[q].parent = -1;
		s->queues[q].nominal[0] = tn->nominal[q];
		s->queues[q].borrow_limit = m == T_STATIC ? 0 :
		    SCHED_UNLIMITED;
		s->queues[q].lend_limit = SCHED_UNLIMITED;
		s->queues[q].preempt = m == T_STATIC ? SCHED_PREEMPT_NEVER :
		    SCHED_PREEMPT_BORROWERS;
	}
	s->usage_t = s->t0;
	s->owed_t = s->t0;
}

/* Decayed usage up to t (cohort's fair share): the GPUs held since the
 * last pass, then the decay. Between passes only event times change what
 * is held, and a pass follows every event time. */
static void
account(struct sim *s, int64_t t)
{
	double dt = (double)(t - s->usage_t), f;
	size_t q;

	if (dt <= 0)
		return;
	f = exp2(-dt / (double)s->o->half_life);
	for (q = 0; q < s->tn->n; q++)
		s->usage[q] = s->usage[q] * f + (double)s->held[q] * dt;
	s->usage_t = t;
}

void
replay_tenants_input(struct sim *s, struct sched_input *in)
{
	size_t k, q;
	int64_t t = in->now, ran;
	struct tjob *tj;

	if (s->nqueues == 0)
		return;
	in->queues = s->queues;
	in->nqueues = s->nqueues;
	for (k = 0; k < s->nrun; k++) {
		tj = &s->jobs[s->run[k].id - 1];
		ran = t - tj->seg;
		s->run[k].preemptible = !tj->stopping &&
		    ran >= s->o->min_runtime;
		s->run[k].lost = ran % s->o->ckpt;
		s->run[k].start = tj->seg;
	}
	if (s->v->tenants != T_COHORT)
		return;
	/* Held GPUs changed at t's events: the time before counts what was
	 * held after the previous pass, kept in usage's last update. */
	account(s, t);
	for (q = 0; q < s->nqueues; q++) {
		double key = s->usage[q] / (double)(s->tn->nominal[q] > 0 ?
		    s->tn->nominal[q] : 1);

		s->queues[q].share = key >= 1.8e19 ? UINT64_MAX :
		    (uint64_t)key;
	}
}

void
replay_tenants_arrive(struct sim *s, size_t j)
{
	struct tjob *tj = &s->jobs[j];
	uint32_t q = tj->vc;

	if ((uint64_t)s->held[q] + s->pend_ent[q] + tj->gpus <=
	    s->tn->nominal[q]) {
		tj->entitled = true;
		s->pend_ent[q] += tj->gpus;
	}
}

/* What is held and pending does not change between event times, so the
 * state after the last pass holds over [owed_t, t). */
void
replay_tenants_owed(struct sim *s, int64_t t)
{
	size_t k;
	struct tjob *tj;

	for (k = 0; k < s->npend && t > s->owed_t; k++) {
		tj = &s->jobs[s->pidx[k]];
		if (tj->entitled && tj->start < 0 &&
		    (uint64_t)s->held[tj->vc] + tj->gpus <=
		    s->tn->nominal[tj->vc])
			tj->owed += t - s->owed_t;
	}
	s->owed_t = t;
}

void
replay_tenants_preempt(struct sim *s, int64_t t, const struct sched_result *res)
{
	const struct sched_preemption *pr;
	size_t k, v, p, j;
	struct tjob *tj;
	int64_t stop;

	for (k = 0; k < res->npreempts; k++) {
		pr = &res->preempts[k];
		if (pr->pending >= s->npend || s->gone[pr->pending] ||
		    s->pend[pr->pending].preempting || pr->nvictims == 0) {
			fprintf(stderr, "replay: %s: bad preemption at %lld\n",
			    s->v->name, (long long)t);
			exit(1);
		}
		p = s->pidx[pr->pending];
		s->pend[pr->pending].preempting = true;
		for (v = 0; v < pr->nvictims; v++) {
			j = pr->victims[v] - 1;
			tj = &s->jobs[j];
			if (pr->victims[v] == 0 || j >= s->njobs ||
			    tj->nplaces == 0 || tj->stopping) {
				fprintf(stderr, "replay: %s: victim %llu is "
				    "not running\n", s->v->name,
				    (unsigned long long)pr->victims[v]);
				exit(1);
			}
			tj->stopping = true;
			tj->preemptor = p;
			tj->sig = t;
			stop = s->v->tenants == T_COHORT ? t + s->o->grace : t;
			/* As the controller does, its expected end stays start
			 * + limit; --victim-end-stop passes its stop. */
			if (s->o->victim_end_stop)
				s->run[s->runpos[j]].end = stop;
			s->run[s->runpos[j]].preemptible = false;
			s->jobs[p].pvict++;
			s->preemptions++;
			replay_push(s, stop, EV_STOP, j);
		}
	}
}

void
replay_tenants_stop(struct sim *s, int64_t t, size_t j)
{
	struct tjob *tj = &s->jobs[j];
	int64_t ran, saved;

	if (!tj->stopping) {
		fprintf(stderr, "replay: stop of a job not stopping\n");
		exit(1);
	}
	account(s, t);
	ran = t - tj->seg;
	if (s->v->tenants == T_COHORT)
		saved = tj->sig - tj->seg;	/* checkpointed at the signal */
	else
		saved = ran - ran % s->o->ckpt;
	s->lost_gs += (double)tj->gpus * (double)(ran - saved);
	{
		int64_t lo = t - (ran - saved), hi = t < s->tw ? t : s->tw;

		if (lo < s->t0)
			lo = s->t0;
		if (hi > lo)
			s->lost_gs_a += (double)tj->gpus * (double)(hi - lo);
	}
	replay_release(s, t, j);
	tj->done += saved;
	tj->stopping = false;
	tj->npreempt++;
	s->jobs[tj->preemptor].pvict--;
	replay_pend(s, t, j);
}

/* Fair share reads usage as of each held change too. */
void
replay_tenants_account(struct sim *s, int64_t t)
{
	if (s->v->tenants == T_COHORT)
		account(s, t);
}

/* ---- figures ------------------------------------------------------ */

struct qfig {
	size_t n, nent;
	double jct, wait, sd, maxent, run, maxowed;
	double *ent, *owed;
};

void
replay_tenants_report(const struct sim *s, double wall_s)
{
	const struct tenants *tn = s->tn;
	struct qfig f[MAX_TENANTS], all;
	size_t j, q, nq = 0;
	double sx = 0, sx2 = 0, win, jain, rx = 0, rx2 = 0, jain_r;

	memset(f, 0, sizeof(f));
	memset(&all, 0, sizeof(all));
	all.ent = replay_xcalloc(s->njobs, sizeof(double));
	all.owed = replay_xcalloc(s->njobs, sizeof(double));
	for (q = 0; q < tn->n; q++) {
		f[q].ent = replay_xcalloc(tn->njobs[q], sizeof(double));
		f[q].owed = replay_xcalloc(tn->njobs[q], sizeof(double));
	}
	for (j = 0; j < s->njobs; j++) {
		const struct tjob *tj = &s->jobs[j];
		struct qfig *g = &f[tj->vc];
		double jct = (double)(tj->finish - tj->submit), sd;
		double d = (double)tj->dur;

		sd = jct / (d > SLOWDOWN_TAU ? d : SLOWDOWN_TAU);
		sd = sd > 1 ? sd : 1;
		g->n++;
		g->jct += jct;
		g->wait += (double)tj->waited;
		g->sd += sd;
		g->run += d;
		all.n++;
		all.jct += jct;
		all.wait += (double)tj->waited;
		if (tj->entitled) {
			double w = (double)(tj->start - tj->submit);

			g->owed[g->nent] = (double)tj->owed;
			all.owed[all.nent] = (double)tj->owed;
			if ((double)tj->owed > g->maxowed)
				g->maxowed = (double)tj->owed;
			if ((double)tj->owed > all.maxowed)
				all.maxowed = (double)tj->owed;
			g->ent[g->nent++] = w;
			all.ent[all.nent++] = w;
			if (w > g->maxent)
				g->maxent = w;
			if (w > all.maxent)
				all.maxent = w;
		}
	}
	for (q = 0; q < tn->n; q++) {
		struct qfig *g = &f[q];
		double x;

		if (g->n == 0)
			continue;
		x = g->sd / (double)g->n;
		sx += x;
		sx2 += x * x;
		rx += g->jct / g->run;
		rx2 += (g->jct / g->run) * (g->jct / g->run);
		nq++;
		printf("vc  %-7s %-8s %5u %6zu %8.0f %8.0f %8.0f %8.0f %6zu "
		    "%8.2f %7.3f %7.0f %7.0f\n", s->v->name, tn->name[q],
		    tn->nominal[q], g->n, g->jct / (double)g->n,
		    g->wait / (double)g->n,
		    replay_pct(g->ent, g->nent, 0.99), g->maxent, g->nent, x,
		    g->jct / g->run, replay_pct(g->owed, g->nent, 0.99),
		    g->maxowed);
	}
	jain = sx2 > 0 ? sx * sx / ((double)nq * sx2) : 1.0;
	jain_r = rx2 > 0 ? rx * rx / ((double)nq * rx2) : 1.0;
	if (jain <= 0 || jain > 1.0 + 1e-9 || jain_r <= 0 ||
	    jain_r > 1.0 + 1e-9) {
		fprintf(stderr, "replay: Jain's index out of (0, 1]\n");
		exit(1);
	}
	win = (double)(s->tw - s->t0) * (double)s->o->nodes * GPN;
	printf("all %-7s %6zu %8.0f %8.0f %8.0f %8.0f %6.2f%% %6.2f%% %6zu "
	    "%5zu %9.1f %6.3f %6.3f %6zu %7zu %6.1f %7.0f %7.0f\n",
	    s->v->name, all.n,
	    all.jct / (double)all.n, all.wait / (double)all.n,
	    replay_pct(all.ent, all.nent, 0.99), all.maxent,
	    win > 0 ? 100.0 * s->held_gs_a / win : 0.0,
	    win > 0 ? 100.0 * (s->held_gs_a - s->lost_gs_a) / win : 0.0,
	    s->preemptions, s->misses, s->lost_gs / 3600.0, jain, jain_r,
	    s->backfilled, s->passes, wall_s,
	    replay_pct(all.owed, all.nent, 0.99), all.maxowed);
	fflush(stdout);
	for (q = 0; q < tn->n; q++) {
		free(f[q].ent);
		free(f[q].owed);
	}
	free(all.ent);
	free(all.owed);
}
