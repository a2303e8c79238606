/* Gangs: a job's tasks launched on all its nodes at once (all or
 * nothing), stopped together, and restarted after a failure. Shared by
 * cluster.c (passes, exits, cancels, time limits) and recovery.c (health,
 * drains, hangs, growth); neither calls the other for it.
 *
 * Tasks told to stop are remembered until their exit is seen (an exit
 * report of that attempt, or a heartbeat that no longer lists it): a
 * launch whose GPUs they still hold waits for them, holding its
 * allocation, so that a restart keeps its kept and replacement nodes
 * while the old tasks go, and two processes never share a GPU's memory.
 * Tasks that do not go within stop_timeout drain their node (Slurm's
 * UnkillableStepTimeout), and launches waiting for them start over
 * elsewhere.
 *
 * A job in a container image has the image prepared on its nodes first,
 * in parallel (outbox prepare: answered when a node has it), waiting as
 * "ImagePull: K of N nodes ready"; the launch goes once every node has
 * it, so that no rank starts before the last node's unpack is done and
 * the job's time limit starts with its ranks. */
#include "config.h"

#include <sys/queue.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/cluster_int.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/log.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/steps.h"
#include "daemon/controller/domain/suspect.h"

/* One node's launch of a gang: the argument of its callback, so that a
 * failure names the node. */
struct gang_node {
	struct gang *g;
	unsigned node_rank;
	bool sent;		/* its launch went out */
	bool ready;		/* its image is ready (a job in an image) */
	char node[PEER_NAME_MAX + 1];
};

/* A gang being launched: it is RUNNING once every node has answered. */
struct gang {
	struct cluster *cl;
	uint64_t job_id;
	uint32_t attempt;
	size_t nnodes;
	size_t acked;
	size_t outstanding;	/* launch callbacks still to come */
	bool sent;		/* false: waiting for stopping tasks */
	bool over;		/* running, or failed and undone */
	/* A job in a container image: its image is prepared on its nodes
	 * first, and the launch goes once every node has it. */
	size_t ready;		/* nodes whose image is ready */
	int64_t sent_ms;	/* when the gang could go (not waiting for
				 * stopping tasks) */
	struct gang_node *nodes;	/* nnodes of them */
	TAILQ_ENTRY(gang) entry;
};

/* Tasks of (job, attempt) on node, told to stop, not yet seen gone. */
struct stopping {
	char node[PEER_NAME_MAX + 1];
	uint64_t job_id;
	uint32_t attempt;
	uint64_t gpus;		/* bit i: GPU i; GANG_ALL_GPUS: not known */
	unsigned left;		/* exits still to come; 0: not counted */
	int64_t deadline_ms;
	TAILQ_ENTRY(stopping) entry;
};

#define GANG_ALL_GPUS UINT64_MAX

static void gang_send(struct gang *, int64_t);
static void gang_running(struct gang *, int64_t);
static void gang_stop_some(struct cluster *, const struct job *,
    const char *, const struct gang *, const struct gang_node *, int64_t);

static uint64_t
gang_mask(const struct placement *p)
{
	uint64_t m = 0;
	size_t i;

	for (i = 0; i < p->ngpus; i++)
		if (p->gpus[i] < 64)
			m |= 1ULL << p->gpus[i];
	return m;
}

static void
gang_free(struct cluster *cl, struct gang *g)
{
	TAILQ_REMOVE(&cl->gangs, g, entry);
	free(g->nodes);
	free(g);
}

static void
gang_release(struct gang *g)
{
	if (g->outstanding == 0 && g->over)
		gang_free(g->cl, g);
}

/* ---- Stopping tasks --------------------------------------------------- */

static struct stopping *
gang_stopping_find(struct cluster *cl, const char *node, uint64_t job_id,
    uint32_t attempt)
{
	struct stopping *s;

	TAILQ_FOREACH(s, &cl->stopping, entry)
		if (s->job_id == job_id && s->attempt == attempt &&
		    strcmp(s->node, node) == 0)
			return s;
	return NULL;
}

/* Remember that node runs tasks of (job, attempt) on gpus, told to stop.
 * Out of memory, nothing is remembered: the launch that follows is not
 * held (as before this existed), which is logged. */
static void
gang_stopping_add(struct cluster *cl, const char *node, uint64_t job_id,
    uint32_t attempt, uint64_t gpus, unsigned left, int64_t now)
{
	struct stopping *s;

	if ((s = gang_stopping_find(cl, node, job_id, attempt)) != NULL) {
		s->gpus |= gpus;
		if (left > s->left)
			s->left = left;
		return;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		log_warnx("node %s: out of memory: not waiting for job %"
		    PRIu64 "'s tasks to stop", node, job_id);
		return;
	}
	snprintf(s->node, sizeof(s->node), "%s", node);
	s->job_id = job_id;
	s->attempt = attempt;
	s->gpus = gpus;
	s->left = left;
	s->deadline_ms = now + cl->o.stop_timeout_ms;
	TAILQ_INSERT_TAIL(&cl->stopping, s, entry);
}

/* A gang's launch may go once none of its GPUs is held by stopping
 * tasks. The job's GPUs on a stopping task's node are read from the
 * node's allocation (gpu_job[], exact for an active job: a pass
 * recomputes it before it places, and a start adds its own), so the
 * check costs one lookup per stopping task. Comparing every placement
 * with every stopping task cost a 2,048-node restart 4 million strcmp
 * per check, once per old task's exit: seconds of the event loop. */
static const struct stopping *
gang_blocked(const struct cluster *cl, const struct job *job)
{
	const struct stopping *s;
	const struct node *n;
	uint64_t mine;
	unsigned i, ngpus;

	TAILQ_FOREACH(s, &cl->stopping, entry) {
		if ((n = nodes_get(cl->ns, s->node)) == NULL)
			continue;
		ngpus = n->inv->ngpus < INV_MAX_GPUS ? n->inv->ngpus :
		    INV_MAX_GPUS;
		mine = 0;
		for (i = 0; i < ngpus && i < 64; i++)
			if (n->gpu_job[i] == job->id)
				mine |= 1ULL << i;
		if ((s->gpus & mine) != 0)
			return s;
	}
	return NULL;
}

/* Launches that waited for stopping tasks go if they may now. */
static void
gang_send_ready(struct cluster *cl, int64_t now)
{
	struct gang *g, *next;
	const struct job *job;

	for (g = TAILQ_FIRST(&cl->gangs); g != NULL; g = next) {
		next = TAILQ_NEXT(g, entry);
		if (g->sent || g->over)
			continue;
		job = jobs_get(cl->js, g->job_id);
		if (job == NULL || !jobs_is_active(job) ||
		    job->attempt != g->attempt) {
			g->over = true;
			gang_release(g);
			continue;
		}
		if (gang_blocked(cl, job) == NULL)
			gang_send(g, now);
	}
}

static void
gang_stopping_gone(struct cluster *cl, struct stopping *s, int64_t now)
{
	TAILQ_REMOVE(&cl->stopping, s, entry);
	free(s);
	gang_send_ready(cl, now);
}

void
gang_task_gone(struct cluster *cl, const char *node, uint64_t job_id,
    uint32_t attempt, int64_t now)
{
	struct stopping *s = gang_stopping_find(cl, node, job_id, attempt);

	/* Tasks not counted (unknown to the controller: any number of
	 * them) are gone only when a heartbeat no longer lists them. */
	if (s == NULL || s->left == 0)
		return;
	if (s->left > 1) {
		s->left--;
		return;
	}
	gang_stopping_gone(cl, s, now);
}

/* Is (job, attempt) among the running tasks of a report? */
static bool
gang_listed(const struct task_report *tasks, size_t ntasks, uint64_t job_id,
    uint32_t attempt)
{
	size_t i;

	for (i = 0; i < ntasks; i++)
		if (tasks[i].running && tasks[i].job_id == job_id &&
		    tasks[i].restart == attempt)
			return true;
	return false;
}

void
gang_node_tasks(struct cluster *cl, const char *node,
    const struct task_report *tasks, size_t ntasks, int64_t now)
{
	struct stopping *s, *next;
	bool gone = false;

	for (s = TAILQ_FIRST(&cl->stopping); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (strcmp(s->node, node) != 0 ||
		    gang_listed(tasks, ntasks, s->job_id, s->attempt))
			continue;
		TAILQ_REMOVE(&cl->stopping, s, entry);
		free(s);
		gone = true;
	}
	if (gone)
		gang_send_ready(cl, now);
}

void
gang_unwanted(struct cluster *cl, const char *node, uint64_t job_id,
    uint32_t attempt, int64_t now)
{
	/* Which GPUs a task the controller does not know holds is not
	 * known: it holds the whole node until it is gone. Tasks it told
	 * to stop itself are known already. */
	if (gang_stopping_find(cl, node, job_id, attempt) == NULL)
		gang_stopping_add(cl, node, job_id, attempt, GANG_ALL_GPUS, 0,
		    now);
}

void
gang_node_lost(struct cluster *cl, const char *node, int64_t now)
{
	gang_node_tasks(cl, node, NULL, 0, now);
}

size_t
gang_stopping_count(const struct cluster *cl)
{
	const struct stopping *s;
	size_t n = 0;

	TAILQ_FOREACH(s, &cl->stopping, entry)
		n++;
	return n;
}

/* ---- Launching -------------------------------------------------------- */

/* A job reached RUNNING: record its failure-to-running time. */
static void
gang_record_running(struct cluster *cl, const struct job *job)
{
	uint64_t ms;

	if (job == NULL || job->restarts == 0 || job->last_failure_ms == 0 ||
	    job->last_restart_ms < job->last_failure_ms)
		return;
	ms = (uint64_t)(job->last_restart_ms - job->last_failure_ms);
	cl->stats.restarts++;
	cl->stats.recovery_ms_sum += ms;
	cl->recovery_ms[cl->nrecovery++ % CLUSTER_RECOVERY_SAMPLES] = ms;
	log_info("job %" PRIu64 ": running again %" PRIu64 " ms after the "
	    "failure (restart %u, %" PRIu64 " ms of work lost so far)",
	    job->id, ms, job->restarts, job->lost_work_ms);
}

/* A start failed on one node (gn; NULL: not a node's doing): undo it on
 * all, all or nothing. How the node refused says what comes next
 * (jobs_start_failure_class): a refusal that would come again ends the
 * job, anything else backs off, so that a start refused on every try
 * is not retried as fast as the loop turns. */
static void
gang_fail(struct gang *g, const struct gang_node *gn, const struct cerr *why,
    int64_t now)
{
	struct cluster *cl = g->cl;
	const struct job *job = jobs_get(cl->js, g->job_id);
	struct cerr err;
	char reason[640];

	g->over = true;
	if (job == NULL || !jobs_is_active(job) || job->attempt != g->attempt)
		return;
	if (gn != NULL)
		snprintf(reason, sizeof(reason), "rank %u on %s: %s",
		    gn->node_rank, gn->node, why->text);
	else
		snprintf(reason, sizeof(reason), "%s", why->text);
	/* Only nodes that got the launch and did not refuse it may run
	 * its tasks: the others are not waited for. */
	if (g->sent)
		gang_stop_some(cl, job, "the gang could not start", g, gn,
		    now);
	if (jobs_start_failed(cl->js, g->job_id,
	    jobs_start_failure_class(why->code), reason, now, &err) == -1)
		log_warnx("job %" PRIu64 ": %s", g->job_id, err.text);
	cluster_wake(cl);
}

/* A gang whose job moved on (failed over, ended, launched again as a
 * new attempt) is over: its answers are not the job's. */
static bool
gang_still_on(struct gang *g, const struct job *job)
{
	if (!g->over && (job == NULL || !jobs_is_active(job) ||
	    job->attempt != g->attempt))
		g->over = true;
	return !g->over;
}

static void
gang_launched_cb(void *arg, const struct cerr *err, int64_t now)
{
	struct gang_node *gn = arg;
	struct gang *g = gn->g;
	const struct job *job = jobs_get(g->cl->js, g->job_id);

	g->outstanding--;
	if (gang_still_on(g, job)) {
		if (err != NULL)
			gang_fail(g, gn, err, now);
		else if (++g->acked == g->nnodes)
			gang_running(g, now);
	}
	gang_release(g);
}

/* Every node of the gang started its tasks: the job is RUNNING. */
static void
gang_running(struct gang *g, int64_t now)
{
	struct cerr e;

	g->over = true;
	if (jobs_mark_running(g->cl->js, g->job_id, now, &e) == -1)
		log_warnx("job %" PRIu64 ": %s", g->job_id, e.text);
	else
		gang_record_running(g->cl, jobs_get(g->cl->js, g->job_id));
}

static void gang_prepared_cb(void *, const struct image_ready *,
    const struct cerr *, int64_t);

/* Send to every node of the gang's job its launch or, with prepare, to
 * every node not ready yet the preparation of the job's image. A node
 * that cannot be reached fails the gang. The caller releases g. */
static void
gang_send_each(struct gang *g, bool prepare, int64_t now)
{
	struct cluster *cl = g->cl;
	const struct job *job = jobs_get(cl->js, g->job_id);
	struct launch_cmd lc;
	const char **nodelist;
	struct node *n, *rank0;
	struct cerr err;
	size_t i;
	int rc;

	if ((nodelist = calloc(job->nplace, sizeof(*nodelist))) == NULL) {
		cerr_set(&err, ERR_INTERNAL, "out of memory");
		gang_fail(g, NULL, &err, now);
		return;
	}
	for (i = 0; i < job->nplace; i++)
		nodelist[job->place[i].node_rank] = job->place[i].node;
	rank0 = nodes_get(cl->ns, nodelist[0]);
	memset(&lc, 0, sizeof(lc));
	lc.job = job;
	lc.nodelist = nodelist;
	lc.nnodes = job->nplace;
	lc.master_addr = rank0 != NULL ? rank0->address : nodelist[0];
	/* Spread masters over a range so that gangs sharing a rank-0 node
	 * do not collide. */
	lc.master_port = 20000 + (unsigned)((job->id * 131 + job->attempt) %
	    20000);
	for (i = 0; i < job->nplace && !g->over; i++) {
		if (prepare && g->nodes[i].ready)
			continue;
		n = nodes_get(cl->ns, job->place[i].node);
		lc.place = &job->place[i];
		if (n == NULL || n->conn_id == 0)
			rc = -1;
		else if (prepare)
			rc = cl->out.ops->prepare(cl->out.ctx, n->conn_id, &lc,
			    now, gang_prepared_cb, &g->nodes[i]);
		else
			rc = cl->out.ops->launch(cl->out.ctx, n->conn_id, &lc,
			    now, gang_launched_cb, &g->nodes[i]);
		if (rc == -1) {
			cerr_set(&err, ERR_UNAVAILABLE, "the node is not "
			    "reachable");
			gang_fail(g, &g->nodes[i], &err, now);
			break;
		}
		g->nodes[i].sent = true;
		g->outstanding++;
	}
	free(nodelist);
}

/* ---- Images ----------------------------------------------------------- */

/* Say how far the gang's images are: the job's reason, while it waits. */
static void
gang_image_progress(struct gang *g)
{
	char reason[96];

	snprintf(reason, sizeof(reason), "ImagePull: %zu of %zu nodes ready",
	    g->ready, g->nnodes);
	jobs_set_launch_reason(g->cl->js, g->job_id, reason);
}

/* Record an image event of the gang's job (node NULL: the job's). */
static void
gang_image_event(struct gang *g, const char *node, const char *detail,
    int64_t now)
{
	struct cerr err;

	if (jobs_event(g->cl->js, g->job_id, node, "image", "cohortd", detail,
	    now, &err) == -1)
		log_warnx("job %" PRIu64 ": %s", g->job_id, err.text);
}

/* Before its launch, the image of a job in one is prepared on every node
 * that starts tasks (a batch job's other nodes start none), in parallel:
 * true when g waits for that (the preparations are out, or failed the
 * gang), false when the launch may go now. */
static bool
gang_image_start(struct gang *g, const struct job *job, int64_t now)
{
	char detail[CTR_TEXT_MAX + 64];
	size_t i;

	if (job->spec.ctr.image == NULL || g->cl->out.ops->prepare == NULL)
		return false;
	for (i = 0; i < g->nnodes; i++)
		if (job->spec.batch && g->nodes[i].node_rank != 0) {
			g->nodes[i].ready = true;
			g->ready++;
		}
	snprintf(detail, sizeof(detail), "preparing image %s on %zu node(s)",
	    job->spec.ctr.image, g->nnodes - g->ready);
	gang_image_event(g, NULL, detail, now);
	log_info("job %" PRIu64 ": %s", g->job_id, detail);
	gang_image_progress(g);
	gang_send_each(g, true, now);
	return true;
}

/* Node gn has the image: when it is the last, the gang's launch goes. */
static void
gang_image_ready(struct gang *g, struct gang_node *gn, const struct job *job,
    const struct image_ready *r, int64_t now)
{
	const char *digest = ctr_digest_valid(r->digest) ? r->digest : "";
	char detail[CTR_TEXT_MAX + 160];

	if (gn->ready)
		return;
	gn->ready = true;
	g->ready++;
	snprintf(detail, sizeof(detail), "image %s ready in %" PRId64
	    " ms (%s%s%s)", job->spec.ctr.image, r->ms, r->cached ?
	    "cached" : "unpacked", digest[0] != '\0' ? ", " : "", digest);
	jobs_set_image_digest(g->cl->js, g->job_id, digest);
	gang_image_event(g, gn->node, detail, now);
	log_info("job %" PRIu64 ": node %s: %s", g->job_id, gn->node, detail);
	if (g->ready < g->nnodes) {
		gang_image_progress(g);
		return;
	}
	log_info("job %" PRIu64 ": image ready on every node %" PRId64
	    " ms after the allocation; launching", g->job_id,
	    now - g->sent_ms);
	jobs_set_launch_reason(g->cl->js, g->job_id, "Launching");
	gang_send_each(g, false, now);
}

static void
gang_prepared_cb(void *arg, const struct image_ready *r,
    const struct cerr *err, int64_t now)
{
	struct gang_node *gn = arg;
	struct gang *g = gn->g;
	const struct job *job = jobs_get(g->cl->js, g->job_id);

	g->outstanding--;
	if (gang_still_on(g, job)) {
		if (err != NULL)
			gang_fail(g, gn, err, now);
		else
			gang_image_ready(g, gn, job, r, now);
	}
	gang_release(g);
}

/* The gang's job may start: its image prepared first where it has one,
 * then the launch to every node. */
static void
gang_send(struct gang *g, int64_t now)
{
	const struct job *job = jobs_get(g->cl->js, g->job_id);

	g->sent = true;
	g->sent_ms = now;
	log_info("job %" PRIu64 ": launching on %zu node(s), attempt %u",
	    job->id, job->nplace, job->attempt);
	if (!gang_image_start(g, job, now))
		gang_send_each(g, false, now);
	gang_release(g);
}

void
gang_launch(struct cluster *cl, const struct job *job, int64_t now)
{
	const struct stopping *s;
	struct gang *g;
	struct cerr err;
	size_t i;

	if ((g = calloc(1, sizeof(*g))) == NULL ||
	    (g->nodes = calloc(job->nplace, sizeof(*g->nodes))) == NULL) {
		free(g);
		cerr_set(&err, ERR_INTERNAL, "out of memory");
		if (jobs_start_failed(cl->js, job->id, START_TRANSIENT,
		    err.text, now, &err) == -1)
			log_warnx("job %" PRIu64 ": %s", job->id, err.text);
		cluster_wake(cl);
		return;
	}
	/* The launch carries the checkpoint interval advised for the
	 * gang's size now. */
	jobs_set_ckpt_advice(cl->js, job->id, goodput_advice_s(&cl->rates,
	    job), now);
	g->cl = cl;
	g->job_id = job->id;
	g->attempt = job->attempt;
	g->nnodes = job->nplace;
	for (i = 0; i < job->nplace; i++) {
		g->nodes[i].g = g;
		g->nodes[i].node_rank = job->place[i].node_rank;
		snprintf(g->nodes[i].node, sizeof(g->nodes[i].node), "%s",
		    job->place[i].node);
	}
	TAILQ_INSERT_TAIL(&cl->gangs, g, entry);
	if ((s = gang_blocked(cl, job)) == NULL) {
		gang_send(g, now);
		return;
	}
	log_info("job %" PRIu64 ": attempt %u waits for job %" PRIu64
	    " attempt %u to stop on %s", job->id, job->attempt, s->job_id,
	    s->attempt, s->node);
}

/* ---- Stopping and restarting ------------------------------------------ */

void
gang_stop(struct cluster *cl, const struct job *job, const char *reason,
    int64_t now)
{
	gang_stop_some(cl, job, reason, NULL, NULL, now);
}

/* gang_stop; with g (the job's gang being launched, its nodes in
 * job->place order), only nodes whose launch went out, other than the
 * one that refused it (except), are waited for. */
static void
gang_stop_some(struct cluster *cl, const struct job *job, const char *reason,
    const struct gang *g, const struct gang_node *except, int64_t now)
{
	const struct placement *p;
	struct node *n;
	unsigned r, left, first, nranks;
	/* Step tasks are not counted: with steps (a batch job may have
	 * some that a restarted controller does not know), a node's part
	 * is gone once a heartbeat lists none of the attempt's tasks. */
	bool counted = !job->spec.batch && steps_running(cl, job->id) == 0;
	size_t i;

	steps_job_ending(cl, job, false, reason, now);
	for (i = 0; i < job->nplace; i++) {
		p = &job->place[i];
		n = nodes_get(cl->ns, p->node);
		left = 0;
		nranks = job_node_ranks(job, p->node_rank, &first);
		for (r = 0; r < nranks; r++)
			left += !jobs_rank_ended(cl->js, job, first + r);

		/* A gang still waiting to launch has no tasks anywhere; a
		 * DOWN node's tasks are not waited for (it lists them when
		 * it registers again). */
		if ((left > 0 || !counted) && gang_launch_sent(cl, job) &&
		    (n == NULL || n->state != NODE_DOWN) &&
		    (g == NULL || (i < g->nnodes && g->nodes[i].sent &&
		    &g->nodes[i] != except)))
			gang_stopping_add(cl, p->node, job->id, job->attempt,
			    gang_mask(p), counted ? left : 0, now);
		if (n != NULL && n->conn_id != 0)
			cl->out.ops->stop(cl->out.ctx, n->conn_id, job->id,
			    job->attempt, reason);
	}
}

bool
gang_launch_sent(const struct cluster *cl, const struct job *job)
{
	const struct gang *g;

	TAILQ_FOREACH(g, &cl->gangs, entry)
		if (g->job_id == job->id && g->attempt == job->attempt)
			return g->sent;
	/* No gang: launched and acknowledged (or the controller restarted
	 * since, and its agents may run it). */
	return true;
}

void
gang_fail_over(struct cluster *cl, const struct job *job, const char *cause,
    bool counted, int64_t failure_ms, int64_t now)
{
	enum job_state state;
	struct cerr err;
	uint64_t lost = job->lost_work_ms;

	gang_stop(cl, job, cause, now);
	cl->stats.failures++;
	if (jobs_fail_over(cl->js, job->id, cause, counted, failure_ms, now,
	    &state, &err) == -1)
		log_warnx("job %" PRIu64 ": %s", job->id, err.text);
	cl->stats.lost_work_ms += job->lost_work_ms - lost;
	cluster_wake(cl);
}

void
gang_preempt(struct cluster *cl, const struct job *job, const char *cause,
    int64_t failure_ms, int64_t now)
{
	struct cerr err;
	uint64_t lost = 0;

	gang_stop(cl, job, cause, now);
	if (jobs_preempt(cl->js, job->id, cause, failure_ms, now, &lost,
	    &err) == -1) {
		log_warnx("job %" PRIu64 ": %s", job->id, err.text);
		cluster_wake(cl);
		return;
	}
	/* cohort requeue takes this path too, and is no preemption. */
	if (strncmp(cause, JOBS_REQUEUED_PREFIX,
	    strlen(JOBS_REQUEUED_PREFIX)) != 0) {
		cl->stats.preemptions++;
		cl->stats.preempt_lost_ms += lost;
	}
	cluster_wake(cl);
}

int
gang_fail_over_node(struct cluster *cl, const char *node, int gpu,
    const char *cause, bool counted, int64_t now)
{
	const struct job **active;
	const struct placement *p;
	size_t i, j, g, na;
	bool hit;

	if (jobs_active(cl->js, &active, &na) == -1)
		return -1;
	for (i = 0; i < na; i++) {
		hit = false;
		for (j = 0; j < active[i]->nplace && !hit; j++) {
			p = &active[i]->place[j];
			if (strcmp(p->node, node) != 0)
				continue;
			if (gpu < 0)
				hit = true;
			for (g = 0; g < p->ngpus && !hit; g++)
				hit = p->gpus[g] == (unsigned)gpu;
		}
		if (!hit)
			continue;
		steps_node_failed(cl, active[i], node, cause, now);
		gang_fail_over(cl, active[i], cause, counted, now, now);
	}
	free(active);
	return 0;
}

/* Tasks past stop_timeout: their node is drained, and launches waiting
 * for them start over (on other nodes, the drained one being out). */
void
gang_tick(struct cluster *cl, int64_t now)
{
	struct stopping *s, *next;
	struct gang *g, *gnext;
	const struct job *job;
	struct node *n;
	char reason[320];
	struct cerr err;

	for (s = TAILQ_FIRST(&cl->stopping); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (now < s->deadline_ms)
			continue;
		snprintf(reason, sizeof(reason), "tasks of job %" PRIu64
		    " attempt %u did not stop within %" PRId64 " s", s->job_id,
		    s->attempt, cl->o.stop_timeout_ms / 1000);
		log_warnx("node %s: %s: draining it", s->node, reason);
		n = nodes_get(cl->ns, s->node);
		if (n != NULL && !n->drained && nodes_drain(cl->ns, n, reason,
		    "cohortd", false, now, &err) == -1)
			log_warnx("node %s: %s", s->node, err.text);
		cluster_suspect_hw(cl, s->node, SUSPECT_STOP, s->job_id,
		    reason, now);
		for (g = TAILQ_FIRST(&cl->gangs); g != NULL; g = gnext) {
			gnext = TAILQ_NEXT(g, entry);
			if (g->sent || g->over ||
			    (job = jobs_get(cl->js, g->job_id)) == NULL ||
			    job_node_placement(job, s->node) == NULL)
				continue;
			cerr_set(&err, ERR_UNAVAILABLE, "%s", reason);
			gang_fail(g, NULL, &err, now);
			gang_release(g);
		}
		TAILQ_REMOVE(&cl->stopping, s, entry);
		free(s);
		cluster_wake(cl);
	}
}

void
gang_destroy_all(struct cluster *cl)
{
	struct stopping *s;

	while (!TAILQ_EMPTY(&cl->gangs))
		gang_free(cl, TAILQ_FIRST(&cl->gangs));
	while ((s = TAILQ_FIRST(&cl->stopping)) != NULL) {
		TAILQ_REMOVE(&cl->stopping, s, entry);
		free(s);
	}
}
