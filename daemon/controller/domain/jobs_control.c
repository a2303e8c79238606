/* Control of existing jobs (Slurm's scontrol hold, release,
 * requeue and update): holds, the check and event of a requeue (the
 * checkpoint and stop are the preemption path's, control.c), updates of
 * a job's spec, and the back-off of early failures. */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/jobs_int.h"
#include "lib/log.h"
#include "daemon/controller/domain/queues.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/store/txq.h"

void
jobs_set_early_fail_window(struct jobs *js, int64_t window_ms)
{
	js->early_fail_ms = window_ms > 0 ? window_ms : 0;
}

int64_t
jobs_early_backoff(const struct jobs *js, const struct job *job,
    int64_t now_ms, int64_t *ran_ms)
{
	/* A task that ended before every rank had started (still
	 * launching) ran no time at all. */
	*ran_ms = job->state == JOB_RUNNING && job->start_ms > 0 &&
	    now_ms > job->start_ms ? now_ms - job->start_ms : 0;
	if (js->early_fail_ms == 0 || *ran_ms >= js->early_fail_ms)
		return 0;
	return jobs_backoff_next(job->early_backoff_ms);
}

bool
jobs_ran_under(const struct job *job, int64_t now_ms, int64_t window_ms)
{
	return window_ms > 0 && job != NULL && !job->spec.service &&
	    job->state == JOB_RUNNING && job->start_ms > 0 &&
	    now_ms >= job->start_ms && now_ms - job->start_ms < window_ms;
}

bool
jobs_failed_early(const struct jobs *js, const struct job *job,
    int64_t now_ms)
{
	return jobs_ran_under(job, now_ms, js->early_fail_ms);
}

bool
jobs_early_again(struct jobs *js, uint64_t id, const char *node)
{
	struct job *job = (struct job *)jobs_get(js, id);
	bool again;

	if (job == NULL)
		return false;
	/* Consecutive attempts: a run in between that failed otherwise
	 * (a node lost, a move) or a launch that did not start breaks
	 * the streak. */
	again = job->early_node[0] != '\0' && job->attempt > 0 &&
	    job->early_attempt + 1 == job->attempt &&
	    strcmp(job->early_node, node) == 0;
	snprintf(job->early_node, sizeof(job->early_node), "%s", node);
	job->early_attempt = job->attempt;
	return again;
}

static bool
jobs_held_waiting(const struct job *job)
{
	return (job->state == JOB_PENDING || job->state == JOB_RESTARTING) &&
	    !jobs_is_active(job);
}

int
jobs_hold(struct jobs *js, const struct peer *who, uint64_t id, bool release,
    int64_t now_ms, struct cerr *err)
{
	struct job *job, next;
	enum job_hold hold;
	const char *what = release ? "release" : "hold";
	char detail[96];

	cerr_clear(err);
	if ((job = jobs_find(js, id, err)) == NULL ||
	    jobs_authorize(js, who, job, release ? JOBS_ACT_RELEASE :
	    JOBS_ACT_HOLD, NULL, err) == -1)
		return -1;
	if (!jobs_held_waiting(job))
		return cerr_set(err, ERR_CONFLICT, "job %" PRIu64 " is %s%s; "
		    "only a pending job may be %s", id,
		    job_state_name(job->state), jobs_is_active(job) &&
		    !job_state_is_final(job->state) ? " (starting)" : "",
		    release ? "released" : "held");
	if (release) {
		if (job->hold == JOB_HOLD_NONE)
			return cerr_set(err, ERR_CONFLICT, "job %" PRIu64
			    " is not held", id);
		if (job->hold == JOB_HOLD_ADMIN && !jobs_may(js, who, job,
		    JOBS_ACT_RELEASE_ADMIN, NULL))
			return cerr_set(err, ERR_DENIED, "job %" PRIu64 " is "
			    "held by an admin (JobHeldAdmin); only an admin "
			    "may release it", id);
		hold = JOB_HOLD_NONE;
	} else {
		hold = who->role == ROLE_ADMIN ? JOB_HOLD_ADMIN :
		    JOB_HOLD_USER;
		/* An admin's hold is not weakened by the user's. */
		if (job->hold >= hold)
			return 0;
	}
	snprintf(detail, sizeof(detail), "%s", hold == JOB_HOLD_ADMIN ?
	    "JobHeldAdmin" : hold == JOB_HOLD_USER ? "JobHeldUser" :
	    job->hold == JOB_HOLD_ADMIN ? "was JobHeldAdmin" :
	    "was JobHeldUser");
	next = *job;
	next.hold = hold;
	if (jobs_apply(js, job, &next, now_ms, what, who->name, detail,
	    err) == -1)
		return -1;
	log_info("job %" PRIu64 ": %s by %s (%s)", id, release ? "released" :
	    "held", who->name, detail);
	return 1;
}

int
jobs_requeue(struct jobs *js, const struct peer *who, uint64_t id,
    int64_t now_ms, struct cerr *err)
{
	struct job *job;

	cerr_clear(err);
	if ((job = jobs_find(js, id, err)) == NULL ||
	    jobs_authorize(js, who, job, JOBS_ACT_REQUEUE, NULL, err) == -1)
		return -1;
	/* As scontrol requeue: a job that does not run has nothing to
	 * stop; saying so beats a silent no-op the user took for done. */
	if (job->state != JOB_RUNNING)
		return cerr_set(err, ERR_CONFLICT, "job %" PRIu64 " is %s%s; "
		    "only a running job may be requeued", id,
		    job_state_name(job->state), job->state == JOB_PENDING &&
		    jobs_is_active(job) ? " (starting)" : "");
	return jobs_write(js, job, false, now_ms, "requeue", who->name,
	    job->spec.checkpoint_dir != NULL ? "checkpoint, stop, back to "
	    "PENDING" : "stop, back to PENDING (no checkpoint directory: it "
	    "starts over)", err);
}

/* ---- cohort update ---- */

/* old->new of one field, appended to the text in b. */
struct changes {
	char *buf;
	size_t len;
	size_t used;
	bool any;
};

static void
changes_add(struct changes *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
changes_add(struct changes *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	c->any = true;
	if (c->len == 0 || c->used >= c->len)
		return;
	if (c->used > 0)
		c->used += (size_t)snprintf(c->buf + c->used, c->len - c->used,
		    ", ");
	if (c->used >= c->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(c->buf + c->used, c->len - c->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		c->used += (size_t)n;
}

/* Replace *dst with a copy of src. 0 or -1 (err). */
static int
update_str(char **dst, const char *src, struct cerr *err)
{
	char *p;

	if ((p = strdup(src)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	free(*dst);
	*dst = p;
	return 0;
}

static bool
str_differs(const char *a, const char *b)
{
	return (a == NULL) != (b == NULL) || (a != NULL && strcmp(a, b) != 0);
}

/* The max_time of job's queue; 0: none (or no queues). */
static uint64_t
jobs_queue_max_time(const struct jobs *js, const struct job *job)
{
	int q;

	if (js->queues == NULL || (q = queues_job_queue(js->queues, job)) < 0)
		return 0;
	return queues_def(js->queues, (size_t)q)->max_time_s;
}

/* A running job's --time: anyone allowed to update it may lower it; a
 * raise (or none) is the table's to allow, and above the queue's
 * max_time only a cluster admin's. */
static int
update_live_time(const struct jobs *js, const struct job *job,
    const struct peer *who, uint64_t t, struct job_spec *sp,
    struct cerr *err)
{
	uint64_t max = jobs_queue_max_time(js, job);
	bool raise = t == 0 || (sp->time_limit_s != 0 && t > sp->time_limit_s);

	if (raise && !jobs_may(js, who, job, JOBS_ACT_RAISE_TIME, NULL))
		return t == 0 ? cerr_set(err, ERR_DENIED, "--time: users may "
		    "only lower the time limit of a running job; none is no "
		    "lower") : cerr_set(err, ERR_DENIED, "--time: users may "
		    "only lower the time limit of a running job (now %" PRIu64
		    " s); an admin may raise it", sp->time_limit_s);
	if (sp->service && t != 0)
		return cerr_set(err, ERR_INVALID, "--time: a service has no "
		    "time limit");
	if (raise && max != 0 && (t == 0 || t > max) &&
	    !jobs_may(js, who, job, JOBS_ACT_PASS_QUEUE_LIMITS, NULL))
		return cerr_set(err, ERR_DENIED, "--time: %s is above queue "
		    "%s's max_time of %" PRIu64 " s; only a cluster admin may "
		    "raise a job past its queue's limit", t == 0 ? "none" :
		    "the time asked", job->spec.queue, max);
	sp->time_limit_s = t;
	return 0;
}

/* A running (or restarting, resizing, starting) job: only the time
 * limit and the priority; raising either is the table's to allow. */
static int
update_live(const struct jobs *js, const struct job *job,
    const struct peer *who, const struct job_update *u,
    struct job_spec *sp, struct cerr *err)
{
	const char *bad = u->name != NULL ? "--name" : u->has_nodes ?
	    "--nodes" : u->has_gpus_per_node ? "--gpus-per-node" :
	    u->has_tasks_per_node ? "--tasks-per-node" : u->has_cpu_only ?
	    "--gpus-per-node" : u->gpu_type != NULL ?
	    "--gpu-type" : u->queue != NULL ? "--queue" : u->has_max_restarts ?
	    "--max-restarts" : NULL;

	if (bad != NULL)
		return cerr_set(err, ERR_CONFLICT, "%s: job %" PRIu64 " is %s; "
		    "only a pending job may change it (a running job: --time "
		    "and --priority)", bad, job->id,
		    job_state_name(job->state));
	if (u->has_time && update_live_time(js, job, who, u->time_limit_s, sp,
	    err) == -1)
		return -1;
	if (u->has_priority) {
		if (u->priority < 0 || u->priority > JOB_PRIORITY_MAX)
			return cerr_set(err, ERR_INVALID, "--priority: %d is "
			    "out of 0..%d", (int)u->priority,
			    JOB_PRIORITY_MAX);
		if (u->priority > sp->priority && !jobs_may(js, who, job,
		    JOBS_ACT_RAISE_PRIORITY, NULL))
			return cerr_set(err, ERR_DENIED, "--priority: users "
			    "may only lower the priority of a running job "
			    "(now %d); an admin may raise it",
			    (int)sp->priority);
		sp->priority = u->priority;
	}
	return 0;
}

/* The fields set in u, into sp. 0 or -1 (err: out of memory). */
static int
update_fields(const struct job_update *u, struct job_spec *sp,
    struct cerr *err)
{
	if (u->has_time)
		sp->time_limit_s = u->time_limit_s;
	if (u->has_priority)
		sp->priority = u->priority;
	if (u->name != NULL && update_str(&sp->name, u->name, err) == -1)
		return -1;
	if (u->has_nodes) {
		sp->nodes_min = u->nodes_min;
		sp->nodes_max = u->nodes_max;
	}
	if (u->has_gpus_per_node)
		sp->gpus_per_node = u->gpus_per_node;
	if (u->has_cpu_only)
		sp->cpu_only = u->cpu_only;
	if (u->has_tasks_per_node)
		sp->tasks_per_node = u->tasks_per_node;
	if (u->gpu_type != NULL) {
		if (u->gpu_type[0] == '\0') {
			free(sp->gpu_type);
			sp->gpu_type = NULL;
		} else if (update_str(&sp->gpu_type, u->gpu_type, err) == -1)
			return -1;
	}
	if (u->queue != NULL && update_str(&sp->queue, u->queue, err) == -1)
		return -1;
	if (u->has_max_restarts)
		sp->max_restarts = u->max_restarts;
	return 0;
}

/* May who give job (pending) the priority in sp? A priority above the
 * default, or above the job's own in the queue it stays in, is a raise:
 * the table asks for rights in the queue the job is to run in, so a
 * priority granted in one queue does not travel to another. */
static int
update_priority_check(const struct jobs *js, const struct job *job,
    const struct peer *who, const struct job_update *u,
    const struct job_spec *sp, struct cerr *err)
{
	bool moves = str_differs(sp->queue, job->spec.queue);
	int32_t floor = JOB_DEFAULT_PRIORITY;

	if (!moves && job->spec.priority > floor)
		floor = job->spec.priority;
	if (sp->priority <= floor || jobs_may(js, who, job,
	    JOBS_ACT_RAISE_PRIORITY, sp->queue))
		return 0;
	if (!u->has_priority)
		return cerr_set(err, ERR_DENIED, "--queue: job %" PRIu64 "'s "
		    "priority %d is above the default; in queue %s only an "
		    "admin or an admin of that queue may give it that (add "
		    "--priority %d or lower)", job->id, (int)sp->priority,
		    sp->queue, JOB_DEFAULT_PRIORITY);
	return jobs_authorize(js, who, job, JOBS_ACT_RAISE_PRIORITY, sp->queue,
	    err);
}

/* A pending job: the fields set in u; who's rights on the job as it
 * would be (its queue may change); then the whole spec checked as a
 * submit of its owner would be, in the queue it is to run in. */
static int
update_pending(struct jobs *js, const struct job *job,
    const struct peer *who, const struct job_update *u,
    struct job_spec *sp, struct cerr *err)
{
	struct peer owner;
	int32_t asked;
	int rc;

	if (update_fields(u, sp, err) == -1 ||
	    jobs_authorize(js, who, job, JOBS_ACT_UPDATE, sp->queue,
	    err) == -1 ||
	    update_priority_check(js, job, who, u, sp, err) == -1)
		return -1;
	/* The priority was judged above, by the table: the checks below
	 * see it as the default, and it is put back after. */
	asked = sp->priority;
	if (sp->priority > JOB_DEFAULT_PRIORITY)
		sp->priority = JOB_DEFAULT_PRIORITY;
	rc = job_spec_validate(sp, who->role, &js->limits, err);
	if (rc == 0 && js->queues != NULL) {
		/* The owner must be among the queue's users; a cluster
		 * admin may place anyone's job in any queue. */
		memset(&owner, 0, sizeof(owner));
		snprintf(owner.name, sizeof(owner.name), "%s", job->user);
		owner.role = who->role == ROLE_ADMIN ? ROLE_ADMIN : ROLE_USER;
		rc = queues_admit(js->queues, &owner, sp, err);
	}
	sp->priority = asked;
	return rc;
}


/* What differs between the job's spec and sp, as "field old->new". */
static void
update_describe(const struct job_spec *o, const struct job_spec *n,
    struct changes *c)
{
	if (o->time_limit_s != n->time_limit_s)
		changes_add(c, "time_limit_s %" PRIu64 "->%" PRIu64,
		    o->time_limit_s, n->time_limit_s);
	if (o->priority != n->priority)
		changes_add(c, "priority %d->%d", (int)o->priority,
		    (int)n->priority);
	if (str_differs(o->name, n->name))
		changes_add(c, "name %s->%s", o->name, n->name);
	if (o->nodes_min != n->nodes_min || o->nodes_max != n->nodes_max)
		changes_add(c, "nodes %u:%u->%u:%u", o->nodes_min,
		    o->nodes_max, n->nodes_min, n->nodes_max);
	if (o->gpus_per_node != n->gpus_per_node)
		changes_add(c, "gpus_per_node %u->%u", o->gpus_per_node,
		    n->gpus_per_node);
	if (o->cpu_only != n->cpu_only)
		changes_add(c, "cpu_only %s->%s", o->cpu_only ? "yes" : "no",
		    n->cpu_only ? "yes" : "no");
	if (o->tasks_per_node != n->tasks_per_node)
		changes_add(c, "tasks_per_node %u->%u", o->tasks_per_node,
		    n->tasks_per_node);
	if (str_differs(o->gpu_type, n->gpu_type))
		changes_add(c, "gpu_type %s->%s", o->gpu_type ? o->gpu_type :
		    "any", n->gpu_type ? n->gpu_type : "any");
	if (str_differs(o->queue, n->queue))
		changes_add(c, "queue %s->%s", o->queue ? o->queue : "-",
		    n->queue ? n->queue : "-");
	if (o->max_restarts != n->max_restarts)
		changes_add(c, "max_restarts %u->%u", o->max_restarts,
		    n->max_restarts);
}

/* Write job with spec sp and the "update" event in the shared
 * transaction: all or nothing. */
static int
update_write(struct jobs *js, const struct job *job,
    const struct job_spec *sp, int64_t now_ms, const char *actor,
    const char *detail, struct cerr *err)
{
	struct job tmp = *job;

	tmp.spec = *sp;
	if (txq_join(js->q, err) == -1 || store_mark(js->st, err) == -1)
		return -1;
	if (store_job_update_spec(js->st, &tmp, err) == -1 ||
	    store_event_append(js->st, now_ms, job->id, NULL, "update", actor,
	    detail, err) == -1 || store_keep(js->st, err) == -1) {
		store_undo(js->st);
		return -1;
	}
	return 0;
}

int
jobs_update(struct jobs *js, const struct peer *who, uint64_t id,
    const struct job_update *u, int64_t now_ms, char *changes, size_t len,
    struct cerr *err)
{
	struct job *job;
	struct job_spec sp;
	struct changes c = { changes, len, 0, false };
	int rc;

	cerr_clear(err);
	if (len > 0)
		changes[0] = '\0';
	if ((job = jobs_find(js, id, err)) == NULL ||
	    jobs_authorize(js, who, job, JOBS_ACT_UPDATE, NULL, err) == -1)
		return -1;
	if (job_state_is_final(job->state))
		return cerr_set(err, ERR_CONFLICT, "job %" PRIu64 " already "
		    "ended (%s)", id, job_state_name(job->state));
	if (job_spec_copy(&sp, &job->spec) == -1)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	rc = job->state == JOB_PENDING && !jobs_is_active(job) ?
	    update_pending(js, job, who, u, &sp, err) :
	    update_live(js, job, who, u, &sp, err);
	if (rc == -1) {
		job_spec_clear(&sp);
		return -1;
	}
	update_describe(&job->spec, &sp, &c);
	if (!c.any) {
		job_spec_clear(&sp);
		return 0;
	}
	if (update_write(js, job, &sp, now_ms, who->name, changes,
	    err) == -1) {
		job_spec_clear(&sp);
		return -1;
	}
	job_spec_clear(&job->spec);
	job->spec = sp;
	log_info("job %" PRIu64 ": updated by %s: %s", id, who->name, changes);
	return 0;
}

/* ---- cohort cancel with filters ---- */

static bool
jobs_selected(const struct jobs *js, const struct peer *who,
    const struct jobs_select *sel, const struct job *job)
{
	const char *user = sel->user;
	size_t i;
	bool ok;

	if (job_state_is_final(job->state))
		return false;
	/* A user's filters mean their own jobs unless they name another
	 * user (then those of that user's jobs they may cancel). */
	if (user == NULL && who->role != ROLE_ADMIN)
		user = who->name;
	if (user != NULL && strcmp(job->user, user) != 0)
		return false;
	if (sel->name != NULL && strcmp(job->spec.name, sel->name) != 0)
		return false;
	if (sel->nstates > 0) {
		for (ok = false, i = 0; i < sel->nstates && !ok; i++)
			ok = job->state == sel->states[i];
		if (!ok)
			return false;
	}
	return jobs_may(js, who, job, JOBS_ACT_CANCEL, NULL);
}

size_t
jobs_select(const struct jobs *js, const struct peer *who,
    const struct jobs_select *sel, uint64_t *ids, size_t max, bool *more)
{
	size_t i, n = 0;

	*more = false;
	for (i = 0; i < js->n; i++) {
		if (!jobs_selected(js, who, sel, js->tab[i]))
			continue;
		if (n == max) {
			*more = true;
			break;
		}
		ids[n++] = js->tab[i]->id;
	}
	return n;
}
