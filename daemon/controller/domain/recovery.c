/* Fault recovery (docs/SPEC.md "Health", docs/design/recovery.md): what the
 * controller does with a node's health, XIDs, drains, checkpoints and
 * progress. A FAILED node or GPU is drained and its jobs restart from
 * their last checkpoint elsewhere; a DEGRADED node (or drain --now) gets
 * its jobs checkpointed first, then moved; a job whose progress file
 * stops changing for its --hang-timeout is restarted. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/cluster_int.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/log.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/recovery.h"
#include "daemon/controller/domain/suspect.h"

static void
recovery_evac_free(struct cluster *cl, struct evac *ev)
{
	TAILQ_REMOVE(&cl->evacs, ev, entry);
	free(ev);
}

void
recovery_evac_destroy_all(struct cluster *cl)
{
	while (!TAILQ_EMPTY(&cl->evacs))
		recovery_evac_free(cl, TAILQ_FIRST(&cl->evacs));
}

/* Finish a move: stop the gang and restart it elsewhere, or for a
 * preemption requeue it. Neither uses up the job's restarts. The work
 * lost is counted from when the checkpoint was asked for: what ran
 * after it is not saved anywhere either. */
static void
recovery_evac_done(struct cluster *cl, struct evac *ev, const char *why,
    int64_t now)
{
	const struct job *job = jobs_get(cl->js, ev->job_id);
	char cause[400];

	if (job != NULL && jobs_is_active(job) &&
	    job->attempt == ev->attempt) {
		snprintf(cause, sizeof(cause), "%s (%s)", ev->cause, why);
		if (ev->preempt)
			gang_preempt(cl, job, cause, now, now);
		else
			gang_fail_over(cl, job, cause, false, ev->failure_ms,
			    now);
	}
	recovery_evac_free(cl, ev);
}

bool
recovery_evacuating(const struct cluster *cl, uint64_t job_id)
{
	const struct evac *ev;

	TAILQ_FOREACH(ev, &cl->evacs, entry)
		if (ev->job_id == job_id)
			return true;
	return false;
}

int
recovery_evac_ids(const struct cluster *cl, uint64_t **ids, size_t *n)
{
	const struct evac *ev;
	size_t k = 0;

	*n = 0;
	TAILQ_FOREACH(ev, &cl->evacs, entry)
		k++;
	if ((*ids = calloc(k + 1, sizeof(**ids))) == NULL)
		return -1;
	TAILQ_FOREACH(ev, &cl->evacs, entry)
		(*ids)[(*n)++] = ev->job_id;
	qsort(*ids, *n, sizeof(**ids), job_id_cmp);
	return 0;
}

/* Ask job's tasks to checkpoint (its --checkpoint-signal) and move it
 * (or requeue it: preempt) once LATEST is newer, or after secs. A job
 * without a checkpoint directory has nothing to write: it moves at once;
 * preempted, it runs until the grace and restarts from the beginning. */
static void
recovery_evacuate_for(struct cluster *cl, const struct job *job,
    const char *cause, bool preempt, uint32_t secs, int64_t now)
{
	struct evac *ev;
	struct node *n;
	size_t i;

	TAILQ_FOREACH(ev, &cl->evacs, entry)
		if (ev->job_id == job->id && ev->attempt == job->attempt)
			return;
	if ((!preempt && job->spec.checkpoint_dir == NULL) ||
	    (job->state != JOB_RUNNING && job->state != JOB_RESIZING) ||
	    (ev = calloc(1, sizeof(*ev))) == NULL) {
		if (preempt)
			gang_preempt(cl, job, cause, now, now);
		else
			gang_fail_over(cl, job, cause, false, now, now);
		return;
	}
	ev->job_id = job->id;
	ev->attempt = job->attempt;
	ev->failure_ms = now;
	ev->preempt = preempt;
	ev->deadline_ms = now + (int64_t)secs * 1000;
	ev->had_ckpt = job->has_ckpt;
	ev->step_before = job->ckpt_step;
	snprintf(ev->cause, sizeof(ev->cause), "%s", cause);
	TAILQ_INSERT_TAIL(&cl->evacs, ev, entry);
	/* The new LATEST measures the job's checkpoint cost. */
	if (job->spec.checkpoint_dir != NULL)
		jobs_ckpt_asked(cl->js, job->id, job->attempt, now);
	/* No checkpoint directory: no checkpoint contract either, and the
	 * signal's default action may kill it. It runs until the grace. */
	for (i = 0; job->spec.checkpoint_dir != NULL && i < job->nplace;
	    i++) {
		n = nodes_get(cl->ns, job->place[i].node);
		if (n != NULL && n->conn_id != 0)
			cl->out.ops->signal(cl->out.ctx, n->conn_id, job->id,
			    job->attempt, job->spec.ckpt_signal,
			    job->spec.batch ? job->spec.signal_scope :
			    JOB_SIGNAL_ALL);
	}
	log_info("job %" PRIu64 ": signal %d sent, waiting up to %u s for a "
	    "checkpoint before %s it: %s", job->id, job->spec.ckpt_signal,
	    secs, preempt ? "preempting" : "moving", cause);
}

static void
recovery_evacuate(struct cluster *cl, const struct job *job,
    const char *cause, int64_t now)
{
	recovery_evacuate_for(cl, job, cause, false, job->spec.ckpt_secs, now);
}

void
recovery_preempt(struct cluster *cl, const struct job *job,
    const char *cause, uint32_t grace_s, int64_t now)
{
	recovery_evacuate_for(cl, job, cause, true, grace_s, now);
}

void
recovery_replace(struct cluster *cl, const struct job *job,
    const char *cause, int64_t now)
{
	recovery_evacuate(cl, job, cause, now);
}

/* A job restarted in place after each failure goes back to the node
 * that failed it: a node whose tasks all die soon after they start (a
 * broken mount or library: a black hole) while it looks healthy would
 * fail the same job until its restarts run out. Two early failures in a
 * row with the failing rank on the same node move that node's share to
 * a spare or a free node; one alone restarts in place, since a job's
 * own bug fails everywhere and moving it buys nothing. Nothing here
 * drains: the node is only left out of this restart (the suspect code
 * judges nodes across jobs, and counts this failure once the job runs
 * fine elsewhere). */
void
recovery_early_again(struct cluster *cl, const struct job *job,
    const char *node, unsigned rank, int64_t now)
{
	char detail[400];
	struct cerr err;
	bool room;

	if (job->state != JOB_RESTARTING ||
	    !jobs_early_again(cl->js, job->id, node))
		return;
	room = (jobs_avoids(job, node) ||
	    cluster_room_elsewhere(cl, job->prev_place, job->nprev, node,
	    jobs_avoiding(job) + 1)) &&
	    jobs_avoid_node(cl->js, job->id, node) == 0;
	snprintf(detail, sizeof(detail), "rank %u failed early on %s in "
	    "attempts %u and %u: %s; %s not drained", rank, node,
	    job->attempt - 1, job->attempt, room ? "the restart moves its "
	    "share to a spare or free node" : "no spare or free node could "
	    "take its share: the restart keeps it rather than wait", node);
	log_warnx("job %" PRIu64 ": %s", job->id, detail);
	if (jobs_event(cl->js, job->id, node, "early-again", "cohortd",
	    detail, now, &err) == -1)
		log_warnx("job %" PRIu64 ": %s", job->id, err.text);
}

/* Checkpoint and move every job running on node. */
static int
recovery_evacuate_node(struct cluster *cl, const char *node,
    const char *cause, int64_t now)
{
	const struct job **active;
	size_t i, j, n;

	if (jobs_active(cl->js, &active, &n) == -1)
		return -1;
	for (i = 0; i < n; i++)
		for (j = 0; j < active[i]->nplace; j++)
			if (strcmp(active[i]->place[j].node, node) == 0) {
				recovery_evacuate(cl, active[i], cause, now);
				break;
			}
	free(active);
	return 0;
}

void
recovery_health(struct cluster *cl, uint64_t conn_id,
    const struct node_health *h, int64_t now)
{
	struct node *n = nodes_by_conn(cl->ns, conn_id);
	char cause[400];
	struct cerr err;
	unsigned i;

	if (n == NULL || !nodes_set_health(cl->ns, n, h, now))
		return;
	cluster_wake(cl);
	if (h->health == HEALTH_FAILED) {
		goodput_rates_failure(&cl->rates, now);
		snprintf(cause, sizeof(cause), "node %s health FAILED: %s",
		    n->name, h->reason);
		if ((!n->drained || !n->drain_health) &&
		    nodes_drain(cl->ns, n, cause, "health", true, now,
		    &err) == -1)
			log_warnx("node %s: %s", n->name, err.text);
		cluster_suspect_hw(cl, n->name, SUSPECT_HEALTH, 0, h->reason,
		    now);
		if (gang_fail_over_node(cl, n->name, -1, cause, true,
		    now) == -1)
			log_warnx("node %s: out of memory: its jobs are not "
			    "moved", n->name);
		return;
	}
	/* A FAILED GPU on a node still in service: only its jobs go. */
	for (i = 0; i < h->ngpus; i++) {
		if (h->gpus[i].health != HEALTH_FAILED)
			continue;
		goodput_rates_failure(&cl->rates, now);
		snprintf(cause, sizeof(cause), "node %s gpu %u FAILED: %s",
		    n->name, h->gpus[i].index, h->gpus[i].reason);
		cluster_suspect_hw(cl, n->name, SUSPECT_HEALTH, 0, cause,
		    now);
		if (gang_fail_over_node(cl, n->name, (int)h->gpus[i].index,
		    cause, true, now) == -1)
			log_warnx("node %s: out of memory: the jobs of gpu %u "
			    "are not moved", n->name, h->gpus[i].index);
	}
	if (h->health == HEALTH_DEGRADED) {
		snprintf(cause, sizeof(cause), "node %s DEGRADED: %s",
		    n->name, h->reason);
		if (!n->drained && nodes_drain(cl->ns, n, cause, "health",
		    true, now, &err) == -1)
			log_warnx("node %s: %s", n->name, err.text);
		if (recovery_evacuate_node(cl, n->name, cause, now) == -1)
			log_warnx("node %s: out of memory: its jobs are not "
			    "moved", n->name);
	}
}

void
recovery_xids(struct cluster *cl, uint64_t conn_id,
    const struct xid_report *x, size_t nx, int64_t now)
{
	struct node *n = nodes_by_conn(cl->ns, conn_id);
	bool hit[INV_MAX_GPUS] = { false };
	uint32_t first_xid[INV_MAX_GPUS];
	const struct job **active;
	const struct placement *p;
	unsigned long left_out = 0;
	unsigned ngpus, nhit = 0;
	size_t i, j, g, na, cap;
	char cause[160];
	bool any;

	if (n == NULL || nx == 0)
		return;
	ngpus = n->inv->ngpus < INV_MAX_GPUS ? n->inv->ngpus : INV_MAX_GPUS;
	cap = (size_t)ngpus * REPORTS_XIDS_PER_GPU;
	if (nx > cap) {
		snprintf(cause, sizeof(cause), "%zu XIDs in one heartbeat; "
		    "a node with %u GPU(s) lists at most %zu", nx, ngpus, cap);
		reports_reject(&cl->reports, &n->report_log, n->name,
		    REPORT_TOO_MANY, now, cause);
		nx = cap;
	}
	for (i = 0; i < nx; i++) {
		if (x[i].gpu >= ngpus) {
			snprintf(cause, sizeof(cause), "xid=%u on gpu %u; the "
			    "node has %u GPU(s)", x[i].xid, x[i].gpu, ngpus);
			reports_reject(&cl->reports, &n->report_log, n->name,
			    REPORT_XID, now, cause);
			continue;
		}
		if (!hit[x[i].gpu]) {
			hit[x[i].gpu] = true;
			first_xid[x[i].gpu] = x[i].xid;
			nhit++;
		}
	}
	if (nhit == 0)
		return;
	goodput_rates_failure(&cl->rates, now);
	for (g = 0; g < ngpus && !hit[g]; g++)
		;
	snprintf(cause, sizeof(cause), "gpu %zu xid=%u", g, first_xid[g]);
	cluster_suspect_hw(cl, n->name, SUSPECT_XID, 0, cause, now);
	/* One pass: each active job on a GPU named fails over once. */
	if (jobs_active(cl->js, &active, &na) == -1) {
		log_warnx("node %s: out of memory: XIDs not acted on", n->name);
		return;
	}
	for (i = 0; i < na; i++) {
		any = false;
		for (j = 0; j < active[i]->nplace && !any; j++) {
			p = &active[i]->place[j];
			if (strcmp(p->node, n->name) != 0)
				continue;
			for (g = 0; g < p->ngpus && !any; g++)
				if (p->gpus[g] < ngpus && hit[p->gpus[g]]) {
					snprintf(cause, sizeof(cause),
					    "node %s gpu %u xid=%u (fail-job)",
					    n->name, p->gpus[g],
					    first_xid[p->gpus[g]]);
					any = true;
				}
		}
		if (any)
			gang_fail_over(cl, active[i], cause, true, now, now);
	}
	free(active);
	/* A line per message at most, within the node's report budget. */
	for (g = 0; g < ngpus && !hit[g]; g++)
		;
	if (!ratelim_allow(&n->report_log, now, REPORTS_LOG_BURST,
	    REPORTS_LOG_WINDOW_MS, &left_out))
		return;
	if (left_out > 0)
		log_warnx("node %s gpu %zu xid=%u (fail-job), %u GPU(s) in "
		    "this heartbeat (and %lu more lines not logged)", n->name,
		    g, first_xid[g], nhit, left_out);
	else
		log_warnx("node %s gpu %zu xid=%u (fail-job), %u GPU(s) in "
		    "this heartbeat", n->name, g, first_xid[g], nhit);
}

/* One job's checkpoint from node n (the one it listed last, at the
 * highest step). */
static void
recovery_checkpoint(struct cluster *cl, struct node *n,
    const struct checkpoint_report *ck, int64_t now)
{
	uint64_t job_id = ck->job_id, step = ck->step;
	uint32_t attempt = ck->attempt;
	struct evac *ev, *next;
	struct cerr err;
	char what[160];
	int rc;

	switch (reports_judge(jobs_get(cl->js, job_id), n->name,
	    REPORT_CHECKPOINT, attempt, 0)) {
	case REPORT_STALE:
		return;
	case REPORT_FOREIGN:
		/* The path the next start resumes from: only rank 0's node
		 * watches LATEST, so only it may name one. */
		snprintf(what, sizeof(what), "job %" PRIu64 " attempt %u: "
		    "not the node of rank 0", job_id, attempt);
		reports_reject(&cl->reports, &n->report_log, n->name,
		    REPORT_CHECKPOINT, now, what);
		return;
	case REPORT_ACCEPT:
		break;
	}
	if (ck->cost_ms > 0)
		jobs_ckpt_cost(cl->js, job_id, attempt, step, ck->cost_ms,
		    now);
	rc = jobs_checkpoint(cl->js, job_id, attempt, step, ck->path,
	    ck->time_ms, now, &err);
	if (rc == -1)
		log_warnx("job %" PRIu64 ": %s", job_id, err.text);
	if (rc != 1)
		return;
	for (ev = TAILQ_FIRST(&cl->evacs); ev != NULL; ev = next) {
		next = TAILQ_NEXT(ev, entry);
		if (ev->job_id == job_id && ev->attempt == attempt &&
		    (!ev->had_ckpt || step != ev->step_before))
			recovery_evac_done(cl, ev, "checkpoint written", now);
	}
}

/* By job, then step, then place in the message. */
static int
recovery_ckpt_cmp(const void *a, const void *b)
{
	const struct checkpoint_report *x = *(const struct checkpoint_report *
	    const *)a, *y = *(const struct checkpoint_report *const *)b;

	if (x->job_id != y->job_id)
		return x->job_id < y->job_id ? -1 : 1;
	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return x < y ? -1 : x > y;
}

void
recovery_checkpoints(struct cluster *cl, uint64_t conn_id,
    const struct checkpoint_report *r, size_t nr, int64_t now)
{
	struct node *n = nodes_by_conn(cl->ns, conn_id);
	const struct checkpoint_report **by;
	size_t i;

	if (n == NULL || nr == 0)
		return;
	if (nr == 1) {
		recovery_checkpoint(cl, n, &r[0], now);
		return;
	}
	/* Several for one job: only the last at the highest step counts
	 * (one row, one event, one line per job and message). */
	if ((by = calloc(nr, sizeof(*by))) == NULL) {
		log_warnx("node %s: out of memory for %zu checkpoints",
		    n->name, nr);
		return;
	}
	for (i = 0; i < nr; i++)
		by[i] = &r[i];
	qsort(by, nr, sizeof(*by), recovery_ckpt_cmp);
	for (i = 0; i < nr; i++)
		if (i + 1 == nr || by[i + 1]->job_id != by[i]->job_id)
			recovery_checkpoint(cl, n, by[i], now);
	free(by);
}

/* Does n hold GPUs of job_id (its allocations, as of the latest pass or
 * start)? A quick yes for the node's own reports. */
static bool
recovery_node_has_job(const struct node *n, uint64_t job_id)
{
	unsigned i;

	for (i = 0; i < n->inv->ngpus && i < INV_MAX_GPUS; i++)
		if (n->gpu_job[i] == job_id)
			return true;
	return false;
}

void
recovery_progress(struct cluster *cl, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, int64_t changed_ms, int64_t now)
{
	struct node *n = nodes_by_conn(cl->ns, conn_id);
	const struct job *job = jobs_get(cl->js, job_id);
	enum report_verdict v;
	char what[160];

	if (n == NULL)
		return;
	/* gpu_job[] is exact for active jobs (a job's placement only goes
	 * away with it inactive, and passes recompute it before placing),
	 * so it answers the common case without searching the gang. */
	if (job == NULL || job->nplace == 0 || job_state_is_final(job->state) ||
	    job->attempt != attempt)
		v = REPORT_STALE;
	else if (recovery_node_has_job(n, job_id) || ((n->cpu_jobs > 0 ||
	    n->exclusive) && job->spec.cpu_only &&
	    job_node_placement(job, n->name) != NULL))
		v = REPORT_ACCEPT;
	else if (cl->scans_left > 0) {
		cl->scans_left--;
		v = reports_judge(job, n->name, REPORT_PROGRESS, attempt, 0);
	} else
		v = REPORT_FOREIGN;
	switch (v) {
	case REPORT_STALE:
		return;
	case REPORT_FOREIGN:
		/* Progress keeps a hung job from being restarted. */
		snprintf(what, sizeof(what), "job %" PRIu64 " attempt %u: "
		    "not one of its nodes", job_id, attempt);
		reports_reject(&cl->reports, &n->report_log, n->name,
		    REPORT_PROGRESS, now, what);
		return;
	case REPORT_ACCEPT:
		break;
	}
	jobs_progress(cl->js, job_id, attempt, changed_ms);
}

/* Jobs with --hang-timeout whose progress file has not changed for that
 * long (counting from their start when it never changed) restart. What
 * was seen before this controller started is not known: the wait counts
 * from its start at the earliest. */
static void
recovery_check_hangs(struct cluster *cl, int64_t now)
{
	const struct job **active;
	const struct job *job;
	char cause[160];
	int64_t last;
	size_t i, n;

	if (jobs_active(cl->js, &active, &n) == -1)
		return;
	for (i = 0; i < n; i++) {
		job = active[i];
		if (job->state != JOB_RUNNING || job->spec.hang_timeout_s == 0)
			continue;
		last = jobs_last_progress(cl->js, job->id);
		if (last < job->start_ms)
			last = job->start_ms;
		if (last < cl->created_ms)
			last = cl->created_ms;
		if (now - last <= (int64_t)job->spec.hang_timeout_s * 1000)
			continue;
		snprintf(cause, sizeof(cause), "no progress for %" PRId64
		    " s (hang-timeout %" PRIu64 " s)", (now - last) / 1000,
		    job->spec.hang_timeout_s);
		gang_fail_over(cl, job, cause, true, now, now);
	}
	free(active);
}

void
recovery_tick(struct cluster *cl, int64_t now)
{
	struct evac *ev, *next;

	for (ev = TAILQ_FIRST(&cl->evacs); ev != NULL; ev = next) {
		next = TAILQ_NEXT(ev, entry);
		if (now >= ev->deadline_ms)
			recovery_evac_done(cl, ev,
			    "no new checkpoint before the deadline", now);
	}
	recovery_check_hangs(cl, now);
}

int
recovery_drain(struct cluster *cl, const struct peer *who, const char *name,
    const char *reason, bool now_flag, int64_t now, struct cerr *err)
{
	struct node *n = nodes_get(cl->ns, name);
	char cause[400];

	if (n == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "no node '%s'", name);
	if (nodes_drain(cl->ns, n, reason, who->name, false, now, err) == -1)
		return -1;
	if (now_flag) {
		snprintf(cause, sizeof(cause), "node %s drained by %s: %s",
		    name, who->name, reason);
		if (recovery_evacuate_node(cl, name, cause, now) == -1)
			log_warnx("node %s: out of memory: its jobs are not "
			    "moved now (drained: they end there)", name);
	}
	cluster_wake(cl);
	return 0;
}

int
recovery_resume(struct cluster *cl, const struct peer *who, const char *name,
    int64_t now, struct cerr *err)
{
	struct node *n = nodes_get(cl->ns, name);

	if (n == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "no node '%s'", name);
	if (nodes_resume(cl->ns, n, who->name, now, err) == -1)
		return -1;
	cluster_suspect_resumed(cl, n->name, now);
	cluster_wake(cl);
	return 0;
}

/* The nodes of names[0..n) into a new array; ERR_NOT_FOUND naming the
 * first unknown one. */
static struct node **
recovery_nodes(struct cluster *cl, char *const *names, size_t n,
    struct cerr *err)
{
	struct node **v;
	size_t i;

	if ((v = calloc(n + 1, sizeof(*v))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	for (i = 0; i < n; i++)
		if ((v[i] = nodes_get(cl->ns, names[i])) == NULL) {
			cerr_set(err, ERR_NOT_FOUND, "no node '%s'", names[i]);
			free(v);
			return NULL;
		}
	return v;
}

int
recovery_drain_nodes(struct cluster *cl, const struct peer *who,
    char *const *names, size_t n, const char *reason, bool now_flag,
    bool force, int64_t now, size_t *changed, struct cerr *err)
{
	struct node **v;
	char cause[400];
	size_t i;

	*changed = 0;
	if ((v = recovery_nodes(cl, names, n, err)) == NULL)
		return -1;
	if (nodes_drain_many(cl->ns, v, n, reason, who->name, false, force,
	    now, changed, err) == -1) {
		free(v);
		return -1;
	}
	for (i = 0; now_flag && i < n; i++) {
		snprintf(cause, sizeof(cause), "node %s drained by %s: %s",
		    v[i]->name, who->name, v[i]->drain_reason);
		if (recovery_evacuate_node(cl, v[i]->name, cause, now) == -1)
			log_warnx("node %s: out of memory: its jobs are not "
			    "moved now (drained: they end there)", v[i]->name);
	}
	free(v);
	cluster_wake(cl);
	return 0;
}

int
recovery_resume_nodes(struct cluster *cl, const struct peer *who,
    char *const *names, size_t n, int64_t now, size_t *changed,
    struct cerr *err)
{
	struct node **v;
	size_t i;
	int rc;

	*changed = 0;
	if ((v = recovery_nodes(cl, names, n, err)) == NULL)
		return -1;
	rc = nodes_resume_many(cl->ns, v, n, who->name, now, changed, err);
	for (i = 0; rc == 0 && i < n; i++)
		cluster_suspect_resumed(cl, v[i]->name, now);
	free(v);
	if (rc == 0)
		cluster_wake(cl);
	return rc;
}

/* True when growing job_id from this many nodes was already tried with
 * this many idle nodes; otherwise remember this try. */
static bool
recovery_grow_tried(struct cluster *cl, uint64_t job_id, size_t nodes,
    size_t idle)
{
	size_t i, n = cl->ngrown < CLUSTER_GROW_MEMORY ? cl->ngrown :
	    CLUSTER_GROW_MEMORY;

	for (i = 0; i < n; i++) {
		if (cl->grown[i].job_id != job_id)
			continue;
		if (cl->grown[i].nodes == nodes && cl->grown[i].idle == idle)
			return true;
		cl->grown[i].nodes = nodes;
		cl->grown[i].idle = idle;
		return false;
	}
	i = cl->ngrown++ % CLUSTER_GROW_MEMORY;
	cl->grown[i].job_id = job_id;
	cl->grown[i].nodes = nodes;
	cl->grown[i].idle = idle;
	return false;
}

static bool
recovery_node_idle(const struct node *n)
{
	return n->state == NODE_UP && n->conn_id != 0 && !n->drained &&
	    !n->spare && n->health->health == HEALTH_OK &&
	    n->health->ngpus == 0 && n->inv->ngpus > 0 &&
	    node_gpus_free(n) == n->inv->ngpus;
}

void
recovery_grow(struct cluster *cl, int64_t now)
{
	const struct job **active;
	const struct job *job;
	struct node **all;
	size_t i, n, nn, idle = 0;
	char cause[160];
	struct cerr err;

	if (jobs_active(cl->js, &active, &n) == -1)
		return;
	/* Every pass comes here: the nodes are counted only when a job
	 * could grow (most clusters have no elastic job below its size). */
	for (i = 0; i < n; i++)
		if (active[i]->state == JOB_RUNNING &&
		    active[i]->nplace < active[i]->spec.nodes_max)
			break;
	if (i < n) {
		all = nodes_all(cl->ns, &nn);
		for (i = 0; i < nn; i++)
			idle += recovery_node_idle(all[i]);
	}
	if (idle == 0) {
		free(active);
		return;
	}
	for (i = 0; i < n; i++) {
		job = active[i];
		if (job->state != JOB_RUNNING ||
		    job->nplace >= job->spec.nodes_max ||
		    recovery_grow_tried(cl, job->id, job->nplace, idle))
			continue;
		snprintf(cause, sizeof(cause), "growing from %zu toward %u "
		    "nodes", job->nplace, job->spec.nodes_max);
		if (jobs_begin_resize(cl->js, job->id, cause, now,
		    &err) == -1) {
			log_warnx("job %" PRIu64 ": %s", job->id, err.text);
			continue;
		}
		recovery_evacuate(cl, job, cause, now);
		/* One at a time: the next pass sees what is left. */
		break;
	}
	free(active);
}
