#include "config.h"

#include <sys/queue.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <event2/event.h>

#include "lib/clock.h"
#include "cluster_int.h"
#include "jobs.h"
#include "lib/log.h"
#include "nodes.h"
#include "placement.h"
#include "daemon/sched/topo.h"

struct gang;

/* One node's launch of a gang: the argument of its callback, so that a
 * failure names the node. */
struct gang_node {
	struct gang *g;
	unsigned node_rank;
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
	bool over;		/* running, or failed and undone */
	struct gang_node *nodes;	/* nnodes of them */
	TAILQ_ENTRY(gang) entry;
};


static int
cluster_name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A pass soon after any change, but paced: the next one starts no sooner
 * after the last ended than that one took, so that passes take at most
 * half of the loop while submits, heartbeats and replies stream in (at
 * 10,000 nodes a pass takes ~10 ms, and a change per loop round would
 * otherwise mean a pass per round). */
static void
cluster_schedule_pass(struct cluster *cl)
{
	uint64_t now = clock_mono_us(), ready;
	struct timeval tv;

	ready = cl->pass_end_us + cl->stats.last_pass_us;
	if (now < ready) {
		tv.tv_sec = (time_t)((ready - now) / 1000000);
		tv.tv_usec = (suseconds_t)((ready - now) % 1000000);
		if (event_add(cl->pass_ev, &tv) == 0)
			return;
	}
	event_active(cl->pass_ev, EV_TIMEOUT, 0);
}

void
cluster_changed(struct cluster *cl)
{
	if (cl->dirty)
		return;
	cl->dirty = true;
	/* A change made by the pass itself (a launch that failed at once, a
	 * job moved for growth) is scheduled once the pass has ended, so
	 * that it is paced too. */
	if (!cl->in_pass)
		cluster_schedule_pass(cl);
}

/* Tell every node of job's placement to stop its tasks of the current
 * attempt. Nodes that are not connected stop them when they come back
 * (registration reconciles). */
void
cluster_stop_gang(struct cluster *cl, const struct job *job,
    const char *reason)
{
	struct node *n;
	size_t i;

	for (i = 0; i < job->nplace; i++) {
		n = nodes_get(cl->ns, job->place[i].node);
		if (n != NULL && n->conn_id != 0)
			agentcmd_stop(cl->ac, n->conn_id, job->id,
			    job->attempt, reason);
	}
}

static void
gang_release(struct gang *g)
{
	if (g->outstanding == 0 && g->over) {
		TAILQ_REMOVE(&g->cl->gangs, g, entry);
		free(g->nodes);
		free(g);
	}
}

/* A start failed on one node (gn; NULL: not a node's doing): undo it on
 * all, all or nothing. How the node refused says what comes next
 * (jobs_start_failure_class): a refusal that would come again ends the
 * job, anything else backs off, so that a start refused on every try
 * is not retried as fast as the loop turns. */
static void
gang_fail(struct gang *g, const struct gang_node *gn, const struct cerr *why)
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
	cluster_stop_gang(cl, job, "the gang could not start");
	if (jobs_start_failed(cl->js, g->job_id,
	    jobs_start_failure_class(why->code), reason, clock_now_ms(),
	    &err) == -1)
		log_warnx("job %" PRIu64 ": %s", g->job_id, err.text);
	cluster_changed(cl);
}

static void
gang_launched_cb(void *arg, const struct cerr *err)
{
	struct gang_node *gn = arg;
	struct gang *g = gn->g;
	struct cerr e;

	g->outstanding--;
	if (!g->over) {
		if (err != NULL) {
			gang_fail(g, gn, err);
		} else if (++g->acked == g->nnodes) {
			g->over = true;
			if (jobs_mark_running(g->cl->js, g->job_id,
			    clock_now_ms(), &e) == -1)
				log_warnx("job %" PRIu64 ": %s", g->job_id,
				    e.text);
			else
				recovery_job_running(g->cl,
				    jobs_get(g->cl->js, g->job_id));
		}
	}
	gang_release(g);
}

/* Send the launch to every node of a freshly allocated job. */
static void
cluster_launch(struct cluster *cl, const struct job *job)
{
	struct launch_cmd lc;
	const char **nodelist;
	struct node *n, *rank0;
	struct gang *g;
	struct cerr err;
	size_t i;

	nodelist = calloc(job->nplace, sizeof(*nodelist));
	g = calloc(1, sizeof(*g));
	if (g != NULL)
		g->nodes = calloc(job->nplace, sizeof(*g->nodes));
	if (nodelist == NULL || g == NULL || g->nodes == NULL) {
		free(nodelist);
		if (g != NULL)
			free(g->nodes);
		free(g);
		cerr_set(&err, ERR_INTERNAL, "out of memory");
		jobs_start_failed(cl->js, job->id, START_TRANSIENT, err.text,
		    clock_now_ms(), &err);
		return;
	}
	for (i = 0; i < job->nplace; i++)
		nodelist[job->place[i].node_rank] = job->place[i].node;
	g->cl = cl;
	g->job_id = job->id;
	g->attempt = job->attempt;
	g->nnodes = job->nplace;
	TAILQ_INSERT_TAIL(&cl->gangs, g, entry);
	rank0 = nodes_get(cl->ns, nodelist[0]);
	lc.job = job;
	lc.nodelist = nodelist;
	lc.nnodes = job->nplace;
	lc.master_addr = rank0 != NULL ? rank0->address : nodelist[0];
	/* Spread masters over a range so that gangs sharing a rank-0 node
	 * do not collide. */
	lc.master_port = 20000 + (unsigned)((job->id * 131 + job->attempt) %
	    20000);
	log_info("job %" PRIu64 ": launching on %zu node(s), attempt %u",
	    job->id, job->nplace, job->attempt);
	for (i = 0; i < job->nplace; i++) {
		g->nodes[i].g = g;
		g->nodes[i].node_rank = job->place[i].node_rank;
		snprintf(g->nodes[i].node, sizeof(g->nodes[i].node), "%s",
		    job->place[i].node);
	}
	for (i = 0; i < job->nplace && !g->over; i++) {
		n = nodes_get(cl->ns, job->place[i].node);
		lc.place = &job->place[i];
		if (n == NULL || agentcmd_launch(cl->ac, n->conn_id, &lc,
		    clock_now_ms(), gang_launched_cb, &g->nodes[i]) == -1) {
			cerr_set(&err, ERR_UNAVAILABLE, "the node is not "
			    "reachable");
			gang_fail(g, &g->nodes[i], &err);
			break;
		}
		g->outstanding++;
	}
	free(nodelist);
	gang_release(g);
}

/* 0, or -1 (ENOMEM) with the nodes' allocations left as they were:
 * never recomputed from an empty list, which would free every GPU. */
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

static void
cluster_pass(struct cluster *cl)
{
	struct placement_input in;
	struct placement_result res;
	struct jobs_filter f = { .all = false };
	const struct job **pending, *job;
	struct cerr err;
	size_t npending, i;
	int64_t now = clock_now_ms();
	int rc;

	cl->dirty = false;
	cl->stats.passes++;
	/* Without memory for the lists the pass cannot know what is free:
	 * it skips, and the next tick's pass tries again. */
	if (cluster_refresh_allocations(cl) == -1 ||
	    jobs_list(cl->js, &f, &pending, &npending) == -1) {
		log_warnx("scheduling pass skipped: out of memory");
		return;
	}
	/* Waiting jobs: pending and restarting ones that hold nothing yet
	 * (those still launching hold their allocation already), except
	 * those whose start back-off runs: they keep their StartBackoff
	 * reason and cost the pass nothing. */
	for (i = 0; i < npending;) {
		if (jobs_is_active(pending[i]) ||
		    (pending[i]->state != JOB_PENDING &&
		    pending[i]->state != JOB_RESTARTING) ||
		    jobs_backing_off(pending[i], now))
			pending[i] = pending[--npending];
		else
			i++;
	}
	if (npending == 0) {
		free(pending);
		recovery_grow(cl);
		return;
	}
	in.nodes = nodes_all(cl->ns, &in.nnodes);
	if (jobs_active(cl->js, &in.active, &in.nactive) == -1) {
		log_warnx("scheduling pass skipped: out of memory");
		free(pending);
		return;
	}
	in.topo = cl->o.topo;
	in.pending = pending;
	in.npending = npending;
	in.now_ms = now;
	in.default_limit_s = cl->o.default_limit_s;
	in.queue_order = cl->o.queue_order;
	in.queue_aging = cl->o.queue_aging;
	rc = placement_decide(&in, &res);
	free(in.active);
	if (rc == -1) {
		log_warnx("scheduling pass failed: out of memory");
		free(pending);
		return;
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
		nodes_add_allocation(cl->ns, job);
		cluster_launch(cl, job);
	}
	/* A launch that failed at once released its GPUs again: recompute
	 * once rather than per start. */
	if (res.nstarts > 0 && cluster_refresh_allocations(cl) == -1)
		log_warnx("allocations not recomputed: out of memory (GPUs "
		    "of a failed launch stay taken until the next pass)");
	for (i = 0; i < res.nreasons; i++)
		jobs_set_pending_reason(cl->js, res.reasons[i].job_id,
		    res.reasons[i].reason);
	if (res.nstarts > 0)
		log_info("pass: %zu pending, %zu started (%zu backfilled)",
		    npending, res.nstarts, res.backfilled);
	/* Capacity no waiting job can use goes to elastic jobs below their
	 * maximum; growth never competes with a waiting job. */
	if (res.nreasons == 0)
		recovery_grow(cl);
	placement_result_free(&res);
	free(pending);
}

static void
cluster_pass_cb(evutil_socket_t fd, short what, void *arg)
{
	struct cluster *cl = arg;
	uint64_t t0 = clock_mono_us();

	cl->in_pass = true;
	cluster_pass(cl);
	cl->in_pass = false;
	cl->pass_end_us = clock_mono_us();
	cl->stats.last_pass_us = cl->pass_end_us - t0;
	cl->stats.total_pass_us += cl->stats.last_pass_us;
	if (cl->dirty)
		cluster_schedule_pass(cl);
}

void
cluster_fail_over(struct cluster *cl, const struct job *job,
    const char *cause, bool counted, int64_t failure_ms)
{
	enum job_state state;
	struct cerr err;
	uint64_t lost = job->lost_work_ms;

	cluster_stop_gang(cl, job, cause);
	cl->stats.failures++;
	if (jobs_fail_over(cl->js, job->id, cause, counted, failure_ms,
	    clock_now_ms(), &state, &err) == -1)
		log_warnx("job %" PRIu64 ": %s", job->id, err.text);
	cl->stats.lost_work_ms += job->lost_work_ms - lost;
	cluster_changed(cl);
}

void
cluster_fail_over_node(struct cluster *cl, const char *node, int gpu,
    const char *cause, bool counted)
{
	const struct job **active;
	const struct placement *p;
	size_t i, j, g, na;
	bool hit;

	if (jobs_active(cl->js, &active, &na) == -1) {
		log_warnx("node %s: its jobs cannot be listed to fail them "
		    "over (out of memory): %s", node, cause);
		return;
	}
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
		if (hit)
			cluster_fail_over(cl, active[i], cause, counted,
			    clock_now_ms());
	}
	free(active);
}

/* A node went DOWN: the jobs on it restart elsewhere. */
static void
cluster_node_down_cb(struct node *n, void *arg)
{
	char cause[256];

	snprintf(cause, sizeof(cause), "node %s went DOWN (%s)", n->name,
	    n->reason);
	cluster_fail_over_node(arg, n->name, -1, cause, true);
}

static void
cluster_check_limits(struct cluster *cl, int64_t now)
{
	const struct job **active;
	const struct job *job;
	char reason[96];
	struct cerr err;
	size_t i, n;

	/* Out of memory: the limits are checked again at the next tick. */
	if (jobs_active(cl->js, &active, &n) == -1) {
		log_warnx("time limits not checked: out of memory");
		return;
	}
	for (i = 0; i < n; i++) {
		job = active[i];
		if (job->state != JOB_RUNNING || job->spec.time_limit_s == 0 ||
		    now < job->start_ms +
		    (int64_t)job->spec.time_limit_s * 1000)
			continue;
		snprintf(reason, sizeof(reason), "time limit of %" PRIu64
		    " s reached", job->spec.time_limit_s);
		cluster_stop_gang(cl, job, reason);
		if (jobs_end(cl->js, job->id, JOB_TIMEOUT, reason, now,
		    &err) == -1)
			log_warnx("job %" PRIu64 ": %s", job->id, err.text);
		cluster_changed(cl);
	}
	free(active);
}

/* The tick's work runs one loop round later: a zero timeout becomes
 * active only after the next poll for I/O, behind the read callbacks of
 * data that arrived while the loop was busy. So a heartbeat that reached
 * the controller is always seen before its node is timed out. */
static void
cluster_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct cluster *cl = arg;
	struct timeval zero = { 0, 0 };

	evtimer_add(cl->check_ev, &zero);
}

static void
cluster_check_cb(evutil_socket_t fd, short what, void *arg)
{
	struct cluster *cl = arg;
	int64_t now = clock_now_ms();

	nodes_check_timeouts(cl->ns, now, cl->o.node_timeout_ms,
	    cluster_node_down_cb, cl);
	cluster_check_limits(cl, now);
	recovery_tick(cl, now);
	agentcmd_expire(cl->ac, now);
	/* Time alone can make room (reservations, limits): pass anyway. */
	cluster_changed(cl);
}

/* Jobs caught launching by a controller restart start over: their
 * launch state was in memory only, and launches are idempotent per
 * attempt, so a new attempt is clean. */
static int
cluster_reset_launching(struct cluster *cl)
{
	const struct job **active;
	struct cerr err;
	size_t i, n;

	if (jobs_active(cl->js, &active, &n) == -1)
		return -1;
	for (i = 0; i < n; i++)
		if ((active[i]->state == JOB_PENDING ||
		    active[i]->state == JOB_RESTARTING) &&
		    jobs_start_failed(cl->js, active[i]->id, START_RETRY,
		    "the controller restarted while it was launching",
		    clock_now_ms(), &err) == -1)
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
cluster_create(struct event_base *base, struct jobs *js, struct nodes *ns,
    struct agentcmd *ac, const struct cluster_opts *o, struct cerr *err)
{
	struct cluster *cl;
	struct timeval tv = { o->tick_ms / 1000, (o->tick_ms % 1000) * 1000 };

	if ((cl = calloc(1, sizeof(*cl))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	cl->base = base;
	cl->js = js;
	cl->ns = ns;
	cl->ac = ac;
	cl->o = *o;
	TAILQ_INIT(&cl->gangs);
	TAILQ_INIT(&cl->evacs);
	cl->pass_ev = event_new(base, -1, 0, cluster_pass_cb, cl);
	cl->tick_ev = event_new(base, -1, EV_PERSIST, cluster_tick_cb, cl);
	cl->check_ev = evtimer_new(base, cluster_check_cb, cl);
	if (cl->pass_ev == NULL || cl->tick_ev == NULL || cl->check_ev == NULL ||
	    event_add(cl->tick_ev, &tv) == -1) {
		cerr_set(err, ERR_INTERNAL, "cannot create timers");
		cluster_destroy(cl);
		return NULL;
	}
	/* Jobs left "Launching" would hold their GPUs for good: a start
	 * without memory for the list fails instead. */
	if (cluster_reset_launching(cl) == -1) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		cluster_destroy(cl);
		return NULL;
	}
	cluster_warn_unknown(cl);
	cluster_changed(cl);
	return cl;
}

void
cluster_destroy(struct cluster *cl)
{
	struct gang *g;

	if (cl == NULL)
		return;
	while ((g = TAILQ_FIRST(&cl->gangs)) != NULL) {
		TAILQ_REMOVE(&cl->gangs, g, entry);
		free(g->nodes);
		free(g);
	}
	recovery_evac_destroy_all(cl);
	if (cl->pass_ev != NULL)
		event_free(cl->pass_ev);
	if (cl->tick_ev != NULL)
		event_free(cl->tick_ev);
	if (cl->check_ev != NULL)
		event_free(cl->check_ev);
	free(cl);
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
		agentcmd_stop(cl->ac, n->conn_id, r->job_id, r->restart,
		    "unknown to the controller");
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
	if ((n = nodes_by_conn(cl->ns, conn_id)) != NULL)
		cluster_check_running(cl, n, tasks, ntasks, now);
	cluster_changed(cl);
	return 0;
}

void
cluster_heartbeat(struct cluster *cl, uint64_t conn_id,
    const struct task_report *tasks, size_t ntasks, int64_t now)
{
	struct node *n;

	if ((n = nodes_heartbeat(cl->ns, conn_id, now)) == NULL)
		return;
	cluster_check_running(cl, n, tasks, ntasks, now);
}

int
cluster_task_exit(struct cluster *cl, uint64_t conn_id,
    const struct task_report *r, int64_t now, struct cerr *err)
{
	const struct job *job = jobs_get(cl->js, r->job_id);
	struct node *n = nodes_by_conn(cl->ns, conn_id);
	enum job_state before, after;
	char reason[160];

	if (n == NULL)
		return cerr_set(err, ERR_PROTOCOL, "register first");
	switch (reports_judge(job, n->name, REPORT_TASK_EXIT, r->restart,
	    r->rank)) {
	case REPORT_STALE:
		/* Another attempt, an ended job, or one the controller never
		 * had (a database restored from an older copy): nothing to
		 * record; acknowledge, so that the agent can forget it. */
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
	/* A task that can never start as given fails the job now: restarts
	 * would fail the same way. */
	if (r->permanent && r->why[0] != '\0') {
		if (jobs_task_start_failed(cl->js, r->job_id, r->restart,
		    r->rank, r->wait_status, r->why, now, &after, err) == -1)
			return -1;
	} else if (jobs_task_exit(cl->js, r->job_id, r->restart, r->rank,
	    r->wait_status, r->why, now, &after, err) == -1)
		return -1;
	if (after == before)
		return 0;
	if (after == JOB_FAILED) {
		snprintf(reason, sizeof(reason), "rank %u failed", r->rank);
		cluster_stop_gang(cl, job, reason);
	}
	cluster_changed(cl);
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
		cluster_stop_gang(cl, job, "cancelled");
	cluster_changed(cl);
	return 0;
}

void
cluster_conn_closed(struct cluster *cl, uint64_t conn_id)
{
	agentcmd_conn_closed(cl->ac, conn_id);
	nodes_disconnected(cl->ns, conn_id);
}

int
cluster_read_log(struct cluster *cl, uint64_t job_id, unsigned rank,
    uint64_t offset, uint32_t max, int64_t now, agentcmd_log_done cb,
    void *arg, struct cerr *err)
{
	const struct job *job = jobs_get(cl->js, job_id);
	const struct placement *p = NULL;
	struct node *n;
	unsigned node_rank;
	size_t i;

	if (job == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "no job %" PRIu64, job_id);
	if (job->nplace == 0)
		return cerr_set(err, ERR_CONFLICT,
		    "job %" PRIu64 " has not started; it has no output yet",
		    job_id);
	if (rank >= job->nplace * job->spec.tasks_per_node)
		return cerr_set(err, ERR_INVALID, "job %" PRIu64 " has ranks "
		    "0..%zu", job_id,
		    job->nplace * job->spec.tasks_per_node - 1);
	node_rank = rank / job->spec.tasks_per_node;
	for (i = 0; i < job->nplace; i++)
		if (job->place[i].node_rank == node_rank)
			p = &job->place[i];
	if (p == NULL || (n = nodes_get(cl->ns, p->node)) == NULL ||
	    n->conn_id == 0)
		return cerr_set(err, ERR_UNAVAILABLE, "node %s of rank %u is "
		    "not connected; its log cannot be read now",
		    p != NULL ? p->node : "?", rank);
	if (agentcmd_read_log(cl->ac, n->conn_id, job_id, job->attempt, rank,
	    offset, max, now, cb, arg) == -1)
		return cerr_set(err, ERR_UNAVAILABLE, "cannot reach node %s",
		    n->name);
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
	memcpy(st->reports_rejected, cl->reports.rejected,
	    sizeof(st->reports_rejected));
	if (n == 0)
		return;
	memcpy(sorted, cl->recovery_ms, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), u64_cmp);
	st->recovery_ms_p50 = sorted[(n - 1) / 2];
	st->recovery_ms_p99 = sorted[(n * 99 + 99) / 100 - 1];
}
