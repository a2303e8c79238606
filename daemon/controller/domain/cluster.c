/* Scheduling passes, registration and reconciliation of what agents
 * report, task outcomes, cancels, time limits, node timeouts and log
 * reads. Launching and stopping gangs is gang.c's; fault recovery is
 * recovery.c's. */
#include "config.h"

#include <sys/queue.h>
#include <sys/wait.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/alloc.h"
#include "daemon/controller/domain/cluster_int.h"
#include "daemon/controller/domain/gates.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/log.h"
#include "daemon/controller/domain/mail.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/placement.h"
#include "daemon/controller/domain/queues.h"
#include "daemon/controller/domain/steps.h"
#include "daemon/controller/domain/suspect.h"
#include "daemon/sched/topo.h"

static int
cluster_name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void
cluster_changed(struct cluster *cl)
{
	cluster_wake(cl);
}

static int
cluster_refresh_allocations(struct cluster *cl)
{
	const struct job **active;
	size_t n;

	if (jobs_active(cl->js, &active, &n) == -1)
		return -1;
	nodes_set_allocations(cl->ns, active, n);
	free(active);
	return 0;
}

static bool
started(const struct placement_result *res, uint64_t id)
{
	size_t i;

	for (i = 0; i < res->nstarts; i++)
		if (res->starts[i].job_id == id)
			return true;
	return false;
}

/* Leaving nodes out of a restart (a straggler's, one the job failed
 * early on) must never keep the job waiting where it could run: decide
 * again with those nodes allowed for the restarts that did not start,
 * whatever kept them out (topology, constraints, GPU types, other
 * jobs). *ids (sorted, the caller frees) are those restarts. 0, or -1
 * (ENOMEM) with res empty. */
static int
decide_unavoided(struct placement_input *in, struct placement_result *res,
    uint64_t **ids)
{
	size_t i, n = 0;

	if ((*ids = calloc(in->npending + 1, sizeof(**ids))) == NULL) {
		placement_result_free(res);
		return -1;
	}
	for (i = 0; i < in->npending; i++)
		if (placement_avoids(in, in->pending[i]) &&
		    !started(res, in->pending[i]->id))
			(*ids)[n++] = in->pending[i]->id;
	if (n == 0)
		return 0;
	qsort(*ids, n, sizeof(**ids), job_id_cmp);
	in->unavoid = *ids;
	in->nunavoid = n;
	placement_result_free(res);
	return placement_decide(in, res);
}

/* A restart placed only with the nodes it would have left out. */
static void
unavoided_event(struct cluster *cl, const struct job *job, int64_t now)
{
	char detail[400];
	struct cerr err;

	snprintf(detail, sizeof(detail), "no other node could take the "
	    "restart now: it may use the nodes it was to leave out%s%s%s "
	    "rather than wait", job->avoid != NULL ? " (" : "",
	    job->avoid != NULL ? job->avoid : "",
	    job->avoid != NULL ? ")" : "");
	log_warnx("job %" PRIu64 ": %s", job->id, detail);
	if (jobs_event(cl->js, job->id, "", "avoid-lifted", "cohortd",
	    detail, now, &err) == -1)
		log_warnx("job %" PRIu64 ": %s", job->id, err.text);
}

/* The pass proper; cluster_pass wraps it. -1 (ENOMEM): nothing was
 * placed, and the pass is tried again. */
static int
cluster_place(struct cluster *cl, int64_t now)
{
	struct placement_input in;
	struct placement_result res;
	struct jobs_filter f = { .all = false };
	const struct job **pending, *job;
	struct gates *g;
	uint64_t *preempting = NULL, *busy = NULL, *unavoid = NULL;
	struct cerr err;
	size_t npending, i, k;
	bool backing_off = false;
	int rc;

	/* Without an exact view of what is allocated a pass would give
	 * GPUs twice. */
	if (cluster_refresh_allocations(cl) == -1)
		return -1;
	if ((g = gates_begin(cl, now)) == NULL)
		return -1;
	if (jobs_list(cl->js, &f, &pending, &npending) == -1) {
		gates_end(g);
		return -1;
	}
	/* Waiting jobs: pending and restarting ones that hold nothing yet
	 * (those still launching hold their allocation already), except
	 * those whose start back-off runs: they keep their StartBackoff
	 * reason and cost the pass nothing; and those a gate stops (held,
	 * a dependency, an array's limit: gates.h). */
	/* In id order (kept as it is compacted), so that the gates let
	 * through the first of an array's tasks, as Slurm starts them. */
	for (i = 0, k = 0; i < npending; i++) {
		if (jobs_is_active(pending[i]) ||
		    (pending[i]->state != JOB_PENDING &&
		    pending[i]->state != JOB_RESTARTING))
			continue;
		if (jobs_backing_off(pending[i], now)) {
			backing_off = true;
			continue;
		}
		if (!gates_block(g, pending[i]))
			pending[k++] = pending[i];
	}
	npending = k;
	gates_end(g);
	/* A job backing off waits too: growth would take its nodes. */
	if (npending == 0) {
		free(pending);
		if (!backing_off)
			recovery_grow(cl, now);
		return 0;
	}
	in.nodes = nodes_all(cl->ns, &in.nnodes);
	if (jobs_active(cl->js, &in.active, &in.nactive) == -1) {
		free(pending);
		return -1;
	}
	in.topo = cl->o.topo;
	in.pending = pending;
	in.npending = npending;
	in.now_ms = now;
	in.default_limit_s = cl->o.default_limit_s;
	in.queue_order = cl->o.queue_order;
	in.queue_aging = cl->o.queue_aging;
	in.starve_s = cl->o.starve_s;
	in.starve_min_gpus = cl->o.starve_min_gpus;
	in.queues = cl->o.queues;
	in.suspect = cl->o.suspect;
	in.unavoid = NULL;
	in.nunavoid = 0;
	rc = -1;
	if (preemption_ids(cl, &preempting, &in.npreempting) == 0 &&
	    recovery_evac_ids(cl, &busy, &in.nbusy) == 0) {
		in.preempting = preempting;
		in.busy = busy;
		rc = placement_decide(&in, &res);
		if (rc == 0)
			rc = decide_unavoided(&in, &res, &unavoid);
	}
	free(preempting);
	free(busy);
	free(in.active);
	if (rc == -1) {
		free(unavoid);
		free(pending);
		return -1;
	}
	cl->stats.backfilled += res.backfilled;
	for (i = 0; i < res.nstarts; i++) {
		job = jobs_get(cl->js, res.starts[i].job_id);
		if (jobs_allocate(cl->js, res.starts[i].job_id,
		    res.starts[i].place, res.starts[i].nplace, now,
		    &err) == -1) {
			log_warnx("job %" PRIu64 ": %s", res.starts[i].job_id,
			    err.text);
			continue;
		}
		cl->stats.started++;
		log_debug("job %" PRIu64 ": placed by a pass of %zu pending",
		    job->id, npending);
		if (in.nunavoid > 0 && bsearch(&job->id, unavoid,
		    in.nunavoid, sizeof(*unavoid), job_id_cmp) != NULL)
			unavoided_event(cl, job, now);
		preemption_forget(cl, job->id);
		nodes_add_allocation(cl->ns, job);
		gang_launch(cl, job, now);
	}
	preemption_after_pass(cl);
	for (i = 0; i < res.npreempts; i++)
		preemption_apply(cl, &res.preempts[i], now);
	/* A launch that failed at once released its GPUs again: recompute
	 * once rather than per start (out of memory, the next pass does). */
	if (res.nstarts > 0 && cluster_refresh_allocations(cl) == -1)
		cluster_wake(cl);
	/* Pending jobs are not freed during a pass (only finished ones
	 * are, by retention), so the pass's pointers still hold. */
	for (i = 0; i < res.nreasons; i++)
		jobs_set_waiting(cl->js, res.reasons[i].job,
		    res.reasons[i].reason, res.reasons[i].start_ms);
	if (res.nstarts > 0)
		log_info("pass: %zu pending, %zu started (%zu backfilled)",
		    npending, res.nstarts, res.backfilled);
	/* Capacity no waiting job can use goes to elastic jobs below their
	 * maximum; growth never competes with a waiting job. */
	if (res.nreasons == 0 && !backing_off)
		recovery_grow(cl, now);
	placement_result_free(&res);
	free(unavoid);
	free(pending);
	return 0;
}

void
cluster_pass(struct cluster *cl, int64_t now)
{
	cl->dirty = false;
	cl->stats.passes++;
	cl->in_pass = true;
	if (cluster_place(cl, now) == -1) {
		log_warnx("scheduling pass failed: out of memory; trying again");
		cl->dirty = true;
	}
	cl->in_pass = false;
	/* What the pass itself changed (a launch that failed at once, a
	 * job moved for growth) is asked for once it has ended. */
	if (cl->dirty)
		cl->out.ops->pass_wanted(cl->out.ctx);
}

struct cluster_down {
	struct cluster *cl;
	int64_t now;
};

/* A node went DOWN: the jobs on it restart elsewhere, and what it was
 * stopping is not waited for (it reports its tasks when it is back). */
static void
cluster_node_down_cb(struct node *n, void *arg)
{
	struct cluster_down *d = arg;
	char cause[256];

	snprintf(cause, sizeof(cause), "node %s went DOWN (%s)", n->name,
	    n->reason);
	/* An admin's drain first means planned work on the node. */
	if (!n->drained || strcmp(n->drain_actor, "health") == 0)
		cluster_suspect_hw(d->cl, n->name, SUSPECT_DOWN, 0, n->reason,
		    d->now);
	gang_node_lost(d->cl, n->name, d->now);
	goodput_rates_failure(&d->cl->rates, d->now);
	if (gang_fail_over_node(d->cl, n->name, -1, cause, true,
	    d->now) == -1)
		log_warnx("node %s: out of memory: its jobs fail over at the "
		    "next tick", n->name);
}

static void
cluster_check_limits(struct cluster *cl, int64_t now)
{
	const struct job **active;
	const struct job *job;
	char reason[96];
	struct cerr err;
	size_t i, n;

	if (jobs_active(cl->js, &active, &n) == -1)
		return;
	for (i = 0; i < n; i++) {
		job = active[i];
		mail_time_limit(&cl->out, job, cl->limits_ms, now);
		if (job->state != JOB_RUNNING || job->spec.time_limit_s == 0 ||
		    now < job->start_ms +
		    (int64_t)job->spec.time_limit_s * 1000)
			continue;
		snprintf(reason, sizeof(reason), "time limit of %" PRIu64
		    " s reached", job->spec.time_limit_s);
		gang_stop(cl, job, reason, now);
		if (jobs_end(cl->js, job->id, JOB_TIMEOUT, reason, now,
		    &err) == -1)
			log_warnx("job %" PRIu64 ": %s", job->id, err.text);
		cluster_wake(cl);
	}
	free(active);
	cl->limits_ms = now;
}

/* Running jobs on a node that is DOWN: their fail over at the DOWN was
 * lost (no memory to list the jobs, a write the database refused), or
 * the controller restarted in between. Each tick catches up, so no job
 * is left on a dead node. The DOWN nodes' allocations (gpu_job[], as of
 * the latest pass) name the candidates, checked against the job's own
 * placement: a tick costs a look at each node, not at every job. */
/* The CPU-only jobs on DOWN node n hold no GPU, so gpu_job[] does not
 * name them: look for them among the active jobs (only for a node that
 * had some, or an exclusive job, at the latest pass). */
static void
cluster_sweep_cpu(struct cluster *cl, const struct node *n, int64_t now)
{
	const struct job **active;
	const struct job *job;
	char cause[256];
	size_t i, na;

	if (jobs_active(cl->js, &active, &na) == -1)
		return;
	snprintf(cause, sizeof(cause), "node %s is DOWN", n->name);
	for (i = 0; i < na; i++) {
		job = active[i];
		if (!job->spec.cpu_only || (job->state != JOB_RUNNING &&
		    job->state != JOB_RESIZING) ||
		    job_node_placement(job, n->name) == NULL)
			continue;
		gang_fail_over(cl, job, cause, true, now, now);
	}
	free(active);
}

static void
cluster_sweep_down(struct cluster *cl, int64_t now)
{
	struct node **all;
	const struct job *job;
	char cause[256];
	size_t i, nn;
	unsigned g, ngpus;
	uint64_t tried;

	all = nodes_all(cl->ns, &nn);
	for (i = 0; i < nn; i++) {
		if (all[i]->state != NODE_DOWN)
			continue;
		ngpus = all[i]->inv->ngpus < INV_MAX_GPUS ? all[i]->inv->ngpus :
		    INV_MAX_GPUS;
		/* tried: the job just failed over here (0: a free GPU), so
		 * that a refused write is not tried again for each of its
		 * GPUs in the same tick. */
		for (g = 0, tried = 0; g < ngpus; g++) {
			if (all[i]->gpu_job[g] == tried)
				continue;
			job = all[i]->gpu_job[g] != 0 ?
			    jobs_get(cl->js, all[i]->gpu_job[g]) : NULL;
			if (job == NULL || (job->state != JOB_RUNNING &&
			    job->state != JOB_RESIZING) ||
			    job_node_placement(job, all[i]->name) == NULL)
				continue;
			snprintf(cause, sizeof(cause), "node %s is DOWN",
			    all[i]->name);
			tried = job->id;
			gang_fail_over(cl, job, cause, true, now, now);
		}
		if (all[i]->cpu_jobs > 0 || all[i]->exclusive)
			cluster_sweep_cpu(cl, all[i], now);
	}
}

/* Fair share: every running job's GPUs are charged to its queue and user
 * for the time since the last tick. */
static void
cluster_charge(struct cluster *cl, int64_t now)
{
	const struct job **active;
	const struct job *job;
	int64_t from;
	size_t i, n;
	int q;

	if (cl->o.queues == NULL || now <= cl->charged_ms ||
	    jobs_active(cl->js, &active, &n) == -1)
		return;
	for (i = 0; i < n; i++) {
		job = active[i];
		if (job->state != JOB_RUNNING || job->start_ms >= now ||
		    (q = queues_job_queue(cl->o.queues, job)) < 0)
			continue;
		from = job->start_ms > cl->charged_ms ? job->start_ms :
		    cl->charged_ms;
		if (queues_charge(cl->o.queues, (size_t)q, job->user,
		    (double)job_gpus(job) * (double)(now - from), now) == -1)
			log_warnx("job %" PRIu64 ": out of memory to charge "
			    "its use to queue %s", job->id, job->spec.queue);
	}
	free(active);
	cl->charged_ms = now;
}

/* Give a running job's nodes its new advice: each agent rewrites the
 * advice file of its ranks. Fire and forget; a node that misses it gets
 * the next. */
static void
cluster_advise(struct cluster *cl, const struct job *job, uint32_t advice_s)
{
	const struct node *n;
	size_t i;

	if (cl->out.ops->advise == NULL)
		return;
	for (i = 0; i < job->nplace; i++)
		if ((n = nodes_get(cl->ns, job->place[i].node)) != NULL &&
		    n->conn_id != 0)
			(void)cl->out.ops->advise(cl->out.ctx, n->conn_id,
			    job->id, job->attempt, advice_s);
}

/* The nodes in service count towards the failure rates, and every live
 * job's checkpoint advice follows them, its size and its measured
 * checkpoint cost. A running job's nodes are told when it moves
 * materially, or at all within a bounded period (goodput_advice_renew),
 * so that a failure history or a cost that changes reaches the job's
 * advice file without a message a tick. */
static void
cluster_goodput_tick(struct cluster *cl, int64_t now)
{
	const struct job **active;
	const struct job *job;
	struct node **all;
	size_t i, n;
	uint32_t a;
	unsigned up = 0;

	all = nodes_all(cl->ns, &n);
	for (i = 0; i < n; i++)
		up += all[i]->state != NODE_DOWN;
	goodput_rates_tick(&cl->rates, up, now);
	if (jobs_active(cl->js, &active, &n) == -1)
		return;
	for (i = 0; i < n; i++) {
		job = active[i];
		a = goodput_advice_s(&cl->rates, job);
		/* Not running anywhere: nothing to tell (the launch carries
		 * it). A resizing job keeps ranks running: told as well. */
		if ((job->state != JOB_RUNNING &&
		    job->state != JOB_RESIZING) || job->nplace == 0) {
			jobs_set_ckpt_advice(cl->js, job->id, a, now);
			continue;
		}
		if (!goodput_advice_renew(job->ckpt_advice_s,
		    job->ckpt_advice_ms, a, now))
			continue;
		jobs_set_ckpt_advice(cl->js, job->id, a, now);
		cluster_advise(cl, job, a);
	}
	free(active);
}

void
cluster_tick(struct cluster *cl, int64_t now)
{
	struct cluster_down d = { cl, now };

	nodes_check_timeouts(cl->ns, now, cl->o.node_timeout_ms,
	    cluster_node_down_cb, &d);
	cluster_sweep_down(cl, now);
	cluster_check_limits(cl, now);
	recovery_tick(cl, now);
	straggler_tick(cl, now);
	preemption_tick(cl, now);
	cluster_charge(cl, now);
	cluster_goodput_tick(cl, now);
	gang_tick(cl, now);
	cluster_suspect_tick(cl, now);
	alloc_tick(cl, now);
	steps_tick(cl, now);
	jobs_retention_tick(cl->js, now);
	/* Time alone can make room (reservations, limits): pass anyway. */
	cluster_wake(cl);
}

/* Jobs caught launching by a controller restart start over: their
 * launch state was in memory only, and launches are idempotent per
 * attempt, so a new attempt is clean. Jobs caught resizing lost their
 * wait for a checkpoint (in memory too): they move now, as at its
 * deadline. */
static int
cluster_reset_launching(struct cluster *cl, int64_t now)
{
	const struct job **active;
	struct cerr err;
	size_t i, n;

	if (jobs_active(cl->js, &active, &n) == -1)
		return -1;
	for (i = 0; i < n; i++)
		if (active[i]->state == JOB_RESIZING)
			gang_fail_over(cl, active[i], "the controller "
			    "restarted while it was resizing", false, now, now);
		else if ((active[i]->state == JOB_PENDING ||
		    active[i]->state == JOB_RESTARTING) &&
		    jobs_start_failed(cl->js, active[i]->id, START_RETRY,
		    "the controller restarted while it was launching",
		    now, &err) == -1)
			log_warnx("job %" PRIu64 ": %s", active[i]->id,
			    err.text);
	free(active);
	return 0;
}

/* Nodes in the database that may no longer register (the topology or
 * the nodes list changed): say so, so that an admin deletes them. */
static void
cluster_warn_unknown(struct cluster *cl)
{
	struct node **all;
	size_t i, n, unknown = 0;

	all = nodes_all(cl->ns, &n);
	for (i = 0; i < n; i++) {
		if (cluster_node_known(cl, all[i]->name))
			continue;
		if (++unknown <= 10)
			log_warnx("node %s is in the database but neither in the "
			    "topology nor in 'nodes': it cannot register again "
			    "(cohort node delete %s removes it once DOWN)",
			    all[i]->name, all[i]->name);
	}
	if (unknown > 10)
		log_warnx("%zu nodes in the database cannot register again",
		    unknown);
}

struct cluster *
cluster_create(struct jobs *js, struct nodes *ns, const struct outbox *out,
    const struct cluster_opts *o, int64_t now, struct cerr *err)
{
	struct cluster *cl;

	if ((cl = calloc(1, sizeof(*cl))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	cl->js = js;
	cl->ns = ns;
	cl->out = *out;
	cl->o = *o;
	cl->created_ms = now;
	cl->limits_ms = now;
	TAILQ_INIT(&cl->gangs);
	TAILQ_INIT(&cl->stopping);
	TAILQ_INIT(&cl->evacs);
	TAILQ_INIT(&cl->preemptions);
	TAILQ_INIT(&cl->step_jobs);
	cl->charged_ms = now;
	goodput_rates_init(&cl->rates, GOODPUT_WINDOW_H);
	goodput_rates_tick(&cl->rates, 0, now);
	jobs_set_outbox(js, &cl->out);
	if ((cl->sg = straggler_create(&o->straggler)) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		free(cl);
		return NULL;
	}
	if (cluster_reset_launching(cl, now) == -1) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		straggler_destroy(cl->sg);
		free(cl);
		return NULL;
	}
	if (jobs_steps_orphaned(js, now, err) == -1) {
		straggler_destroy(cl->sg);
		free(cl);
		return NULL;
	}
	cluster_warn_unknown(cl);
	cluster_wake(cl);
	return cl;
}

void
cluster_destroy(struct cluster *cl)
{
	if (cl == NULL)
		return;
	jobs_set_outbox(cl->js, NULL);	/* it goes with cl */
	gang_destroy_all(cl);
	recovery_evac_destroy_all(cl);
	preemption_destroy_all(cl);
	steps_destroy_all(cl);
	straggler_destroy(cl->sg);
	alloc_destroy_all(cl);
	free(cl);
}

/* A task of a job the controller has no record of (its database was
 * restored from an older copy): keep its id from being handed out again. */
static void
cluster_foreign_id(struct cluster *cl, uint64_t id)
{
	struct cerr err;

	if (jobs_note_foreign_id(cl->js, id, &err) == -1)
		log_errorx("job %" PRIu64 ": cannot reserve its id: %s", id,
		    err.text);
}

/* Stop commands one message can cause: one per (job, attempt), and no
 * more than this many (the rest follow with the next heartbeat). */
#define CLUSTER_STOPS_MAX 64

/* The running tasks a node reported: what the controller does not expect
 * there is stopped, on that node only, with one command per (job,
 * attempt). A task of a job's current attempt on a node that does not
 * hold its rank is refused (counted); it is stopped only when the node
 * holds no part of that attempt, so that a node lying about its ranks
 * cannot have its own real tasks of the gang stopped either. */
static void
cluster_check_running(struct cluster *cl, struct node *n,
    const struct task_report *tasks, size_t ntasks, int64_t now)
{
	struct {
		uint64_t job_id;
		uint32_t attempt;
	} stops[CLUSTER_STOPS_MAX];
	const struct task_report *r;
	const struct job *job;
	unsigned long left_out;
	size_t i, k, nstops = 0, unwanted = 0;
	char what[160];

	for (i = 0; i < ntasks; i++) {
		r = &tasks[i];
		if (!r->running)
			continue;
		job = jobs_get(cl->js, r->job_id);
		if (job == NULL)
			cluster_foreign_id(cl, r->job_id);
		/* A step task of the job's current run: stopped alone when
		 * its step is over or unknown (a restarted controller). */
		if (r->has_step && job != NULL && jobs_is_active(job) &&
		    r->restart == job->attempt) {
			if (!steps_task_wanted(cl, n, r))
				cl->out.ops->stop_step(cl->out.ctx, n->conn_id,
				    r->job_id, r->restart, r->step,
				    "the step is over");
			continue;
		}
		switch (reports_judge(job, n->name, REPORT_TASK_RUNNING,
		    r->restart, r->rank)) {
		case REPORT_ACCEPT:
			continue;
		case REPORT_FOREIGN:
			snprintf(what, sizeof(what), "job %" PRIu64 " attempt "
			    "%u rank %u runs elsewhere", r->job_id, r->restart,
			    r->rank);
			reports_reject(&cl->reports, &n->report_log, n->name,
			    REPORT_TASK_RUNNING, now, what);
			/* Its own tasks of this attempt are left alone; so
			 * is everything once the searches are used up. */
			if (cl->scans_left == 0)
				continue;
			cl->scans_left--;
			if (job_node_placement(job, n->name) != NULL)
				continue;
			break;
		case REPORT_STALE:
			break;
		}
		for (k = 0; k < nstops; k++)
			if (stops[k].job_id == r->job_id &&
			    stops[k].attempt == r->restart)
				break;
		if (k < nstops)
			continue;
		unwanted++;
		if (nstops == CLUSTER_STOPS_MAX)
			continue;
		stops[nstops].job_id = r->job_id;
		stops[nstops].attempt = r->restart;
		nstops++;
		gang_unwanted(cl, n->name, r->job_id, r->restart, now);
		cl->out.ops->stop(cl->out.ctx, n->conn_id, r->job_id,
		    r->restart, "unknown to the controller");
	}
	if (nstops == 0 || !ratelim_allow(&n->stop_log, now,
	    REPORTS_LOG_BURST, REPORTS_LOG_WINDOW_MS, &left_out))
		return;
	log_info("node %s: tasks not wanted here (job %" PRIu64 " attempt %u"
	    "%s); stopping %zu (job, attempt)%s%s", n->name, stops[0].job_id,
	    stops[0].attempt, unwanted > 1 ? " and others" : "", nstops,
	    unwanted > nstops ? ", the rest with later heartbeats" : "",
	    left_out > 0 ? " (earlier lines like this were left out)" : "");
}

void
cluster_reports_begin(struct cluster *cl)
{
	cl->scans_left = REPORTS_SCANS_MAX;
}

bool
cluster_node_known(const struct cluster *cl, const char *name)
{
	if (cl->o.accept_unknown_nodes)
		return true;
	if (cl->o.topo != NULL && topo_node_leaf(cl->o.topo, name) >= 0)
		return true;
	return cl->o.known_nodes != NULL &&
	    bsearch(&name, cl->o.known_nodes, cl->o.nknown_nodes,
	    sizeof(*cl->o.known_nodes), cluster_name_cmp) != NULL;
}

int
cluster_check_lists(struct cluster *cl, const char *node, unsigned ngpus,
    size_t longest, int64_t now, struct cerr *err)
{
	struct node *n = nodes_get(cl->ns, node);
	size_t max = reports_tasks_max(ngpus);
	char what[160];

	if (longest <= max)
		return 0;
	snprintf(what, sizeof(what), "a message listing %zu tasks or reports; "
	    "a node with %u GPU(s) lists at most %zu", longest, ngpus, max);
	reports_reject(&cl->reports, n != NULL ? &n->report_log : NULL, node,
	    REPORT_TOO_MANY, now, what);
	return cerr_set(err, ERR_LIMIT, "%s", what);
}

int
cluster_check_node(struct cluster *cl, const char *name, int64_t now,
    struct cerr *err)
{
	if (cluster_node_known(cl, name))
		return 0;
	reports_reject(&cl->reports, NULL, name, REPORT_REGISTER, now,
	    "the node is neither in the topology nor in 'nodes'");
	return cerr_set(err, ERR_DENIED, "node '%s' is not known to this "
	    "controller (neither in its topology nor in its 'nodes' list); "
	    "an admin must add it first", name);
}

int
cluster_register(struct cluster *cl, uint64_t conn_id, const char *name,
    const char *address, const struct inventory *inv, bool spare,
    const struct task_report *tasks, size_t ntasks, int64_t now,
    struct cerr *err)
{
	struct node *n;

	if (cluster_check_node(cl, name, now, err) == -1 ||
	    cluster_check_lists(cl, name, inv->ngpus, ntasks, now, err) == -1)
		return -1;
	if (nodes_register(cl->ns, name, address, inv, spare, conn_id, now,
	    err) == -1)
		return -1;
	if ((n = nodes_by_conn(cl->ns, conn_id)) != NULL) {
		gang_node_tasks(cl, n->name, tasks, ntasks, now);
		cluster_check_running(cl, n, tasks, ntasks, now);
	}
	cluster_wake(cl);
	return 0;
}

void
cluster_heartbeat(struct cluster *cl, uint64_t conn_id,
    const struct task_report *tasks, size_t ntasks, int64_t now)
{
	struct node *n;

	if ((n = nodes_heartbeat(cl->ns, conn_id, now)) == NULL)
		return;
	gang_node_tasks(cl, n->name, tasks, ntasks, now);
	cluster_check_running(cl, n, tasks, ntasks, now);
}

int
cluster_task_exit(struct cluster *cl, uint64_t conn_id,
    const struct task_report *r, int64_t now, struct cerr *err)
{
	const struct job *job = jobs_get(cl->js, r->job_id);
	struct node *n = nodes_by_conn(cl->ns, conn_id);
	enum job_state before, after;
	bool permanent, failing, early, early_run;
	char reason[160];
	uint64_t lost;

	if (n == NULL)
		return cerr_set(err, ERR_PROTOCOL, "register first");
	if (r->has_step)
		return steps_task_exit(cl, n, r, now, err);
	switch (reports_judge(job, n->name, REPORT_TASK_EXIT, r->restart,
	    r->rank)) {
	case REPORT_STALE:
		/* Another attempt, an ended job, or one the controller never
		 * had (a database restored from an older copy): nothing to
		 * record; acknowledge, so that the agent can forget it. A
		 * task told to stop is gone: its GPUs may be used again. */
		if (job == NULL)
			cluster_foreign_id(cl, r->job_id);
		gang_task_gone(cl, n->name, r->job_id, r->restart, now);
		return 0;
	case REPORT_FOREIGN:
		snprintf(reason, sizeof(reason), "job %" PRIu64 " attempt %u "
		    "rank %u runs elsewhere", r->job_id, r->restart, r->rank);
		reports_reject(&cl->reports, &n->report_log, n->name,
		    REPORT_TASK_EXIT, now, reason);
		return cerr_set(err, ERR_DENIED, "node %s does not hold rank "
		    "%u of job %" PRIu64 " attempt %u; its exit is not "
		    "recorded", n->name, r->rank, r->job_id, r->restart);
	case REPORT_ACCEPT:
		break;
	}
	before = job->state;
	lost = job->lost_work_ms;
	snprintf(reason, sizeof(reason), "rank %u failed", r->rank);
	permanent = r->permanent && r->why[0] != '\0';
	/* A failed task fails the gang: the rest of it is stopped (and
	 * waited for) while its placement is known, since a restart
	 * releases it; this rank is gone already. */
	failing = !permanent && jobs_is_active(job) &&
	    !(WIFEXITED(r->wait_status) && WEXITSTATUS(r->wait_status) == 0) &&
	    !jobs_rank_ended(cl->js, job, r->rank);
	early = failing && cluster_suspect_early(cl, job, now);
	early_run = failing && jobs_failed_early(cl->js, job, now);
	if (failing) {
		gang_stop(cl, job, reason, now);
		gang_task_gone(cl, n->name, r->job_id, r->restart, now);
	}
	/* A task that can never start as given fails the job now: restarts
	 * would fail the same way. */
	if (permanent) {
		if (jobs_task_start_failed(cl->js, r->job_id, r->restart,
		    r->rank, r->wait_status, r->why, now, &after, err) == -1)
			return -1;
	} else if (jobs_task_exit(cl->js, r->job_id, r->restart, r->rank,
	    r->wait_status, r->why, now, &after, err) == -1)
		return -1;
	if (after == before)
		return 0;
	cluster_suspect_exit(cl, job, n->name, early, after, now);
	if (early_run)
		recovery_early_again(cl, job, n->name, r->rank, now);
	if (failing) {
		cl->stats.failures++;
		cl->stats.lost_work_ms += job->lost_work_ms - lost;
	} else if (after == JOB_FAILED ||
	    (job->spec.batch && job_state_is_final(after)))
		/* A batch job ends with its script: its steps' tasks
		 * may still run on any of its nodes. */
		gang_stop(cl, job, after == JOB_FAILED ? reason :
		    "the batch script ended", now);
	cluster_wake(cl);
	return 0;
}

int
cluster_cancel(struct cluster *cl, const struct peer *who, uint64_t id,
    int64_t now, enum job_state *state, struct cerr *err)
{
	const struct job *job = jobs_get(cl->js, id);
	bool active = job != NULL && jobs_is_active(job);

	if (jobs_cancel(cl->js, who, id, now, state, err) == -1)
		return -1;
	if (active)
		gang_stop(cl, job, "cancelled", now);
	cluster_wake(cl);
	return 0;
}

int
cluster_requeue(struct cluster *cl, const struct peer *who, uint64_t id,
    int64_t now, struct cerr *err)
{
	const struct job *job;
	char cause[PEER_NAME_MAX + 32];

	if (recovery_evacuating(cl, id))
		return cerr_set(err, ERR_CONFLICT, "job %" PRIu64 " is already "
		    "being checkpointed to move or to be preempted", id);
	if (jobs_requeue(cl->js, who, id, now, err) == -1)
		return -1;
	job = jobs_get(cl->js, id);
	snprintf(cause, sizeof(cause), "%s%s", JOBS_REQUEUED_PREFIX,
	    who->name);
	/* The preemption path: its checkpoint signal, up to its
	 * --checkpoint-signal SECS for a newer LATEST, stop, PENDING, not
	 * counted as a restart. Without a checkpoint directory there is
	 * nothing to wait for. */
	if (job->spec.checkpoint_dir != NULL)
		recovery_preempt(cl, job, cause, job->spec.ckpt_secs, now);
	else
		gang_preempt(cl, job, cause, now, now);
	cluster_wake(cl);
	return 0;
}

int
cluster_cancel_array(struct cluster *cl, const struct peer *who,
    uint64_t array_id, int64_t now, size_t *ncancelled, struct cerr *err)
{
	struct job *const *t;
	const struct job **run = NULL;
	size_t n, i, nrun = 0;

	/* Which tasks hold an allocation, before they are cancelled. */
	if ((n = jobs_array_tasks(cl->js, array_id, &t)) > 0 &&
	    (run = calloc(n, sizeof(*run))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	for (i = 0; i < n; i++)
		if (jobs_is_active(t[i]))
			run[nrun++] = t[i];
	if (jobs_array_cancel(cl->js, who, array_id, now, ncancelled,
	    err) == -1) {
		free(run);
		return -1;
	}
	for (i = 0; i < nrun; i++)
		gang_stop(cl, run[i], "cancelled", now);
	free(run);
	cluster_wake(cl);
	return 0;
}

void
cluster_conn_closed(struct cluster *cl, uint64_t conn_id)
{
	nodes_disconnected(cl->ns, conn_id);
}

int
cluster_delete_node(struct cluster *cl, const struct peer *who,
    const char *name, int64_t now, struct cerr *err)
{
	struct node *n = nodes_get(cl->ns, name);
	const struct job **active;
	uint64_t holder = 0;
	size_t i, na;

	if (n == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "no node '%s'", name);
	if (jobs_active(cl->js, &active, &na) == -1)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	for (i = 0; i < na && holder == 0; i++)
		if (job_node_placement(active[i], name) != NULL)
			holder = active[i]->id;
	free(active);
	if (holder != 0)
		return cerr_set(err, ERR_CONFLICT, "node %s is still allocated "
		    "to job %" PRIu64 "; it can be deleted once no job holds "
		    "it", name, holder);
	if (nodes_delete(cl->ns, n, who->name, now, err) == -1)
		return -1;
	cluster_wake(cl);
	return 0;
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void
cluster_stats(const struct cluster *cl, struct cluster_stats *st)
{
	uint64_t sorted[CLUSTER_RECOVERY_SAMPLES];
	size_t n = cl->nrecovery < CLUSTER_RECOVERY_SAMPLES ? cl->nrecovery :
	    CLUSTER_RECOVERY_SAMPLES;

	*st = cl->stats;
	st->stopping = gang_stopping_count(cl);
	steps_counts(cl, &st->steps_running, &st->sessions);
	memcpy(st->reports_rejected, cl->reports.rejected,
	    sizeof(st->reports_rejected));
	if (n == 0)
		return;
	memcpy(sorted, cl->recovery_ms, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), u64_cmp);
	st->recovery_ms_p50 = sorted[(n - 1) / 2];
	st->recovery_ms_p99 = sorted[(n * 99 + 99) / 100 - 1];
}

const struct topo *
cluster_topo(const struct cluster *cl)
{
	return cl->o.topo;
}

int64_t
cluster_started_ms(const struct cluster *cl)
{
	return cl->created_ms;
}
