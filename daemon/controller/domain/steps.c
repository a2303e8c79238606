/* Job steps: see steps.h. Their life (created, launched, followed to
 * their end, recorded) is here; their layout in the allocation is in
 * steps_layout.c. */
#include "config.h"

#include <sys/wait.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/cluster_int.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/hostlist.h"
#include "lib/log.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/steps.h"
#include "daemon/controller/domain/steps_int.h"
#include "daemon/controller/store/store.h"


/* What a launch's answer needs to find its step again (the step may be
 * gone by then). */
struct step_launch_arg {
	struct cluster *cl;
	uint64_t job_id;
	uint32_t attempt;
	uint32_t step_id;
	char node[PEER_NAME_MAX + 1];
};

static void steps_end(struct cluster *, struct step *, enum job_state,
    const char *, int64_t);

static struct step_job *
steps_job(const struct cluster *cl, uint64_t job_id)
{
	struct step_job *sj;

	TAILQ_FOREACH(sj, &cl->step_jobs, entry)
		if (sj->job_id == job_id)
			return sj;
	return NULL;
}

static void
step_free(struct step *s)
{
	if (s == NULL)
		return;
	free(s->name);
	free(s->user);
	free(s->nodes);
	hostlist_free(s->nodenames, s->nnodes);
	free(s->status);
	strv_free(s->argv, s->argc);
	strv_free(s->env, s->nenv);
	free(s->workdir);
	ctr_clear(&s->ctr);
	free(s);
}

static void
steps_job_free(struct cluster *cl, struct step_job *sj)
{
	struct step *s;

	while ((s = TAILQ_FIRST(&sj->steps)) != NULL) {
		TAILQ_REMOVE(&sj->steps, s, entry);
		step_free(s);
	}
	TAILQ_REMOVE(&cl->step_jobs, sj, entry);
	free(sj);
}

void
steps_destroy_all(struct cluster *cl)
{
	struct step_job *sj;

	while ((sj = TAILQ_FIRST(&cl->step_jobs)) != NULL)
		steps_job_free(cl, sj);
}

/* Drop the steps of jobs that no longer run (ended, requeued, gone) or
 * of an earlier attempt: the store has their records, and without this
 * every job that ever ran a step kept its table, and each lookup walked
 * them all. The launches still out find their step gone (by id). */
static void
steps_gc(struct cluster *cl, int64_t now)
{
	struct step_job *sj, *next;
	const struct job *job;
	struct step *s;

	for (sj = TAILQ_FIRST(&cl->step_jobs); sj != NULL; sj = next) {
		next = TAILQ_NEXT(sj, entry);
		job = jobs_get(cl->js, sj->job_id);
		if (job != NULL && jobs_is_active(job) &&
		    job->attempt == sj->attempt)
			continue;
		/* Ended with their job as a rule; recorded if not. */
		TAILQ_FOREACH(s, &sj->steps, entry)
			if (s->state == JOB_RUNNING)
				steps_end(cl, s, JOB_CANCELLED, "its job's run "
				    "is over", now);
		steps_job_free(cl, sj);
	}
}

/* The steps of the job's current attempt, made when missing (the tables
 * of jobs that ended, and of earlier attempts, are dropped then). NULL:
 * out of memory. */
static struct step_job *
steps_job_current(struct cluster *cl, const struct job *job, int64_t now)
{
	struct step_job *sj = steps_job(cl, job->id);

	if (sj != NULL && sj->attempt == job->attempt)
		return sj;
	steps_gc(cl, now);
	if ((sj = calloc(1, sizeof(*sj))) == NULL)
		return NULL;
	sj->job_id = job->id;
	sj->attempt = job->attempt;
	TAILQ_INIT(&sj->steps);
	TAILQ_INSERT_TAIL(&cl->step_jobs, sj, entry);
	return sj;
}

static struct step *
steps_find(const struct cluster *cl, uint64_t job_id, uint32_t attempt,
    uint32_t step_id)
{
	struct step_job *sj = steps_job(cl, job_id);
	struct step *s;

	if (sj == NULL || sj->attempt != attempt)
		return NULL;
	TAILQ_FOREACH(s, &sj->steps, entry)
		if (s->id == step_id)
			return s;
	return NULL;
}

const struct step *
steps_get(const struct cluster *cl, uint64_t job_id, uint32_t step_id)
{
	const struct job *job = jobs_get(cl->js, job_id);

	return job != NULL ? steps_find(cl, job_id, job->attempt, step_id) :
	    NULL;
}

size_t
steps_running(const struct cluster *cl, uint64_t job_id)
{
	const struct job *job = jobs_get(cl->js, job_id);
	struct step_job *sj = steps_job(cl, job_id);

	return job != NULL && sj != NULL && sj->attempt == job->attempt ?
	    sj->nrunning : 0;
}

int
steps_may(const struct cluster *cl, const struct peer *who, uint64_t job_id,
    struct cerr *err)
{
	const struct job *job = jobs_get(cl->js, job_id);

	if (job == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "no job %" PRIu64, job_id);
	if ((who->role & ROLE_ADMIN) || strcmp(who->name, job->user) == 0)
		return 0;
	return cerr_set(err, ERR_DENIED, "job %" PRIu64 " is not yours",
	    job_id);
}

/* ---- Records ---------------------------------------------------------- */

/* "a,b,c" and "2,2,1" of the step into buffers of the caller's. */
static int
steps_lists(const struct step *s, char **nodes, char **tpn)
{
	size_t i, nl = 1, tl = 1;
	char *np, *tp;

	for (i = 0; i < s->nnodes; i++) {
		nl += strlen(s->nodenames[i]) + 1;
		tl += 11;
	}
	if ((*nodes = np = malloc(nl)) == NULL ||
	    (*tpn = tp = malloc(tl)) == NULL) {
		free(*nodes);
		return -1;
	}
	*np = *tp = '\0';
	for (i = 0; i < s->nnodes; i++) {
		np += sprintf(np, "%s%s", i ? "," : "", s->nodenames[i]);
		tp += sprintf(tp, "%s%u", i ? "," : "", s->nodes[i].ntasks);
	}
	return 0;
}

static void
steps_record(struct cluster *cl, const struct step *s)
{
	struct store_step row;
	char *nodes, *tpn;
	struct cerr err;

	if (steps_lists(s, &nodes, &tpn) == -1) {
		log_warnx("job %" PRIu64 ": step %u: out of memory", s->job_id,
		    s->id);
		return;
	}
	memset(&row, 0, sizeof(row));
	row.job_id = s->job_id;
	row.attempt = s->attempt;
	row.step_id = s->id;
	row.name = s->name;
	row.state = s->state;
	row.node_fail = s->node_fail;
	row.has_exit = s->has_exit;
	row.exit_code = s->exit_code;
	row.reason = s->reason;
	row.start_ms = s->start_ms;
	row.end_ms = s->end_ms;
	row.nodelist = nodes;
	row.tasks_per_node = tpn;
	row.ntasks = s->ntasks;
	row.gpus = s->gpus;
	cerr_clear(&err);
	if (jobs_step_record(cl->js, &row, &err) == -1)
		log_warnx("job %" PRIu64 ": step %u: %s", s->job_id, s->id,
		    err.text);
	free(nodes);
	free(tpn);
}

/* ---- Ending ----------------------------------------------------------- */

static void
steps_stop_tasks(struct cluster *cl, const struct step *s, const char *why)
{
	const struct node *n;
	size_t i;

	for (i = 0; i < s->nnodes; i++)
		if ((n = nodes_get(cl->ns, s->nodenames[i])) != NULL &&
		    n->conn_id != 0)
			cl->out.ops->stop_step(cl->out.ctx, n->conn_id,
			    s->job_id, s->attempt, s->id, why);
}

/* The step is over: its state, the record, what it held freed. Ended
 * steps beyond STEPS_ENDED_KEPT leave memory (the store has them). */
static void
steps_end(struct cluster *cl, struct step *s, enum job_state state,
    const char *reason, int64_t now)
{
	struct step_job *sj = steps_job(cl, s->job_id);
	struct step *old;

	if (s->state != JOB_RUNNING)
		return;
	s->state = state;
	s->end_ms = now;
	if (reason != NULL && s->reason[0] == '\0')
		snprintf(s->reason, sizeof(s->reason), "%s", reason);
	log_info("job %" PRIu64 ": step %u %s%s%s", s->job_id, s->id,
	    s->node_fail ? "NODE_FAIL" : job_state_name(state),
	    s->reason[0] ? ": " : "", s->reason);
	steps_record(cl, s);
	if (cl->out.ops->step_ended != NULL)
		cl->out.ops->step_ended(cl->out.ctx, s->job_id, s->id);
	strv_free(s->argv, s->argc);
	strv_free(s->env, s->nenv);
	s->argv = s->env = NULL;
	s->argc = s->nenv = 0;
	if (sj == NULL)
		return;
	sj->nrunning--;
	if (++sj->nended <= STEPS_ENDED_KEPT)
		return;
	TAILQ_FOREACH(old, &sj->steps, entry)
		if (old->state != JOB_RUNNING && old->launches_out == 0)
			break;
	if (old != NULL && old != s) {
		TAILQ_REMOVE(&sj->steps, old, entry);
		step_free(old);
		sj->nended--;
	}
}

/* A task's wait status as an exit code: N, or 128+N for signal N. */
static int32_t
steps_code(int ws)
{
	if (WIFEXITED(ws))
		return WEXITSTATUS(ws);
	if (WIFSIGNALED(ws))
		return 128 + WTERMSIG(ws);
	return 1;
}

void
steps_job_ending(struct cluster *cl, const struct job *job, bool node_fail,
    const char *reason, int64_t now)
{
	struct step_job *sj = steps_job(cl, job->id);
	struct step *s;
	struct cerr err;

	if (sj != NULL && sj->attempt == job->attempt)
		TAILQ_FOREACH(s, &sj->steps, entry) {
			if (s->state != JOB_RUNNING)
				continue;
			s->node_fail = node_fail;
			steps_end(cl, s, node_fail ? JOB_FAILED :
			    JOB_CANCELLED, reason, now);
		}
	/* Steps a restarted controller does not know of. */
	cerr_clear(&err);
	if (job->spec.batch && jobs_steps_end_running(cl->js, job->id,
	    job->attempt, node_fail, reason, now, &err) == -1)
		log_warnx("job %" PRIu64 ": %s", job->id, err.text);
	/* The run is over: its steps leave memory (the store has them; a
	 * launch still answering finds none and is dropped). */
	if (sj != NULL && sj->attempt == job->attempt)
		steps_job_free(cl, sj);
}

void
steps_node_failed(struct cluster *cl, const struct job *job,
    const char *node, const char *cause, int64_t now)
{
	struct step_job *sj = steps_job(cl, job->id);
	struct step *s;
	size_t i;

	if (sj == NULL || sj->attempt != job->attempt)
		return;
	TAILQ_FOREACH(s, &sj->steps, entry) {
		if (s->state != JOB_RUNNING)
			continue;
		for (i = 0; i < s->nnodes; i++)
			if (strcmp(s->nodenames[i], node) == 0)
				break;
		if (i == s->nnodes)
			continue;
		s->node_fail = true;
		steps_end(cl, s, JOB_FAILED, cause, now);
	}
}

/* ---- Launching -------------------------------------------------------- */

static void
steps_launched_cb(void *arg, const struct cerr *err, int64_t now)
{
	struct step_launch_arg *a = arg;
	struct step *s = steps_find(a->cl, a->job_id, a->attempt, a->step_id);
	char why[sizeof(s->reason)];

	if (s != NULL && s->launches_out > 0)
		s->launches_out--;
	if (s != NULL && err != NULL && s->state == JOB_RUNNING) {
		snprintf(why, sizeof(why), "could not start on %s: %.100s",
		    a->node, err->text);
		s->has_exit = true;
		s->exit_code = 1;
		steps_stop_tasks(a->cl, s, why);
		steps_end(a->cl, s, JOB_FAILED, why, now);
	}
	free(a);
}

/* Send the step's launches; 0, or -1 with err (nothing was sent that is
 * not stopped again). */
static int
steps_send(struct cluster *cl, const struct job *job, struct step *s,
    int64_t now, struct cerr *err)
{
	const char **nodelist;
	struct step_launch_arg *a;
	struct launch_cmd lc;
	const struct node *n, *first;
	size_t i;

	if ((nodelist = calloc(job->nplace, sizeof(*nodelist))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	for (i = 0; i < job->nplace; i++)
		if (job->place[i].node_rank < job->nplace)
			nodelist[job->place[i].node_rank] = job->place[i].node;
	first = nodes_get(cl->ns, s->nodenames[0]);
	memset(&lc, 0, sizeof(lc));
	lc.job = job;
	lc.nodelist = nodelist;
	lc.nnodes = job->nplace;
	lc.master_addr = lc.step_master_addr = first != NULL &&
	    first->address[0] != '\0' ? first->address : s->nodenames[0];
	lc.master_port = s->master_port;
	lc.step = s;
	for (i = 0; i < s->nnodes; i++) {
		n = nodes_get(cl->ns, s->nodenames[i]);
		lc.place = &job->place[s->nodes[i].place];
		lc.snode = &s->nodes[i];
		lc.snode_index = (unsigned)i;
		if (n == NULL || n->conn_id == 0 ||
		    (a = calloc(1, sizeof(*a))) == NULL) {
			cerr_set(err, ERR_UNAVAILABLE, "node %s is not "
			    "reachable", s->nodenames[i]);
			break;
		}
		a->cl = cl;
		a->job_id = s->job_id;
		a->attempt = s->attempt;
		a->step_id = s->id;
		snprintf(a->node, sizeof(a->node), "%s", s->nodenames[i]);
		if (cl->out.ops->launch(cl->out.ctx, n->conn_id, &lc, now,
		    steps_launched_cb, a) == -1) {
			free(a);
			cerr_set(err, ERR_UNAVAILABLE, "node %s is not "
			    "reachable", s->nodenames[i]);
			break;
		}
		s->launches_out++;
	}
	free(nodelist);
	return i == s->nnodes ? 0 : -1;
}

/* A port for the step's rendezvous, apart from the job's and from the
 * other running steps' (gang.c spreads jobs over 20000-39999). */
static unsigned
steps_port(const struct job *job, const struct step_job *sj, uint32_t id)
{
	const struct step *s;
	unsigned port, tries;
	bool taken;

	for (tries = 0; tries < 1000; tries++) {
		port = 20000 + (unsigned)((job->id * 131 + job->attempt +
		    7919ULL * (id + 1 + tries)) % 20000);
		taken = false;
		TAILQ_FOREACH(s, &sj->steps, entry)
			taken |= s->state == JOB_RUNNING &&
			    s->master_port == port;
		if (!taken)
			return port;
	}
	return port;
}

static int
steps_copy_req(struct step *s, const struct job *job,
    const struct step_req *r)
{
	const char *base;

	if (r->name != NULL && r->name[0] != '\0')
		base = r->name;
	else if ((base = strrchr(r->argv[0], '/')) != NULL && base[1] != '\0')
		base++;
	else
		base = r->argv[0];
	if ((s->name = strndup(base, JOB_NAME_MAX)) == NULL ||
	    (s->user = strdup(job->user)) == NULL ||
	    strv_copy(&s->argv, &s->argc, r->argv, r->argc) == -1 ||
	    strv_copy(&s->env, &s->nenv, r->env, r->nenv) == -1 ||
	    (r->workdir != NULL && (s->workdir = strdup(r->workdir)) == NULL) ||
	    ctr_copy(&s->ctr, &r->ctr) == -1)
		return -1;
	return 0;
}

static int
steps_check_req(const struct step_req *r, struct cerr *err)
{
	if (r->argc == 0 || r->argv[0] == NULL || r->argv[0][0] == '\0')
		return cerr_set(err, ERR_INVALID, "a step needs a command");
	if ((r->gpus_per_task > 0) + (r->gpus_per_node > 0) + (r->gpus > 0) +
	    r->no_gpus > 1)
		return cerr_set(err, ERR_INVALID, "give one of --gpus, "
		    "--gpus-per-node and --gpus-per-task");
	if (r->overlap && r->exclusive)
		return cerr_set(err, ERR_INVALID, "--overlap and --exclusive "
		    "exclude each other");
	if (r->gpus_per_task > PLACE_MAX_GPUS ||
	    r->gpus_per_node > PLACE_MAX_GPUS ||
	    r->nodes > JOB_NODES_LIMIT || r->ntasks > STEPS_TASKS_MAX ||
	    r->ntasks_per_node > JOB_TASKS_PER_NODE_LIMIT ||
	    r->cpus_per_task > JOB_CPUS_PER_NODE_MAX)
		return cerr_set(err, ERR_INVALID, "a step option is beyond "
		    "its limit");
	return 0;
}

int
steps_create(struct cluster *cl, const struct peer *who,
    const struct step_req *r, int64_t now, const struct step **out,
    struct cerr *err)
{
	const struct job *job = jobs_get(cl->js, r->job_id);
	struct step_job *sj;
	struct step *s;

	if (job == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "no job %" PRIu64,
		    r->job_id);
	if (strcmp(who->name, job->user) != 0)
		return cerr_set(err, ERR_DENIED, "only the owner of job %"
		    PRIu64 " may start steps in it", job->id);
	if (job->state != JOB_RUNNING)
		return cerr_set(err, job->state == JOB_PENDING ? ERR_BUSY :
		    ERR_CONFLICT, "job %" PRIu64 " is %s: steps start only "
		    "while it runs", job->id, job_state_name(job->state));
	if (steps_check_req(r, err) == -1)
		return -1;
	if ((sj = steps_job_current(cl, job, now)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	if (sj->nrunning >= STEPS_RUNNING_MAX)
		return cerr_set(err, ERR_BUSY, "job %" PRIu64 " runs %u steps "
		    "already, the most at once", job->id, sj->nrunning);
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	s->job_id = job->id;
	s->attempt = job->attempt;
	s->id = sj->next_id;
	s->state = JOB_RUNNING;
	s->start_ms = now;
	s->overlap = r->overlap;
	s->exclusive = r->exclusive;
	s->kill_on_bad_exit = r->kill_on_bad_exit;
	s->input = r->input;
	s->pty = r->pty;
	s->seen_ms = now;
	s->rows = r->rows;
	s->cols = r->cols;
	s->gpus_per_task = r->gpus_per_task;
	s->cpus_per_task = r->cpus_per_task;
	if (steps_copy_req(s, job, r) == -1) {
		step_free(s);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	if (steps_layout(job, sj, r, s, err) == -1) {
		step_free(s);
		return -1;
	}
	s->master_port = steps_port(job, sj, s->id);
	sj->next_id++;
	sj->nrunning++;
	TAILQ_INSERT_TAIL(&sj->steps, s, entry);
	steps_record(cl, s);
	log_info("job %" PRIu64 ": step %u: %u task(s) on %zu node(s)",
	    job->id, s->id, s->ntasks, s->nnodes);
	if (steps_send(cl, job, s, now, err) == -1) {
		s->has_exit = true;
		s->exit_code = 1;
		steps_stop_tasks(cl, s, "could not start");
		steps_end(cl, s, JOB_FAILED, err->text, now);
		return -1;
	}
	*out = s;
	return 0;
}

/* ---- Interactive sessions ------------------------------------------ */

void
steps_heard(struct cluster *cl, uint64_t job_id, uint32_t step_id,
    int64_t now)
{
	const struct job *job = jobs_get(cl->js, job_id);
	struct step *s;

	if (job != NULL &&
	    (s = steps_find(cl, job_id, job->attempt, step_id)) != NULL &&
	    s->seen_ms < now)
		s->seen_ms = now;
}

void
steps_tick(struct cluster *cl, int64_t now)
{
	int64_t idle = cl->o.interactive_idle_ms > 0 ?
	    cl->o.interactive_idle_ms : STEPS_IDLE_DEFAULT_MS;
	struct step_job *sj;
	struct step *s, *next;

	TAILQ_FOREACH(sj, &cl->step_jobs, entry) {
		if (sj->nrunning == 0)
			continue;
		for (s = TAILQ_FIRST(&sj->steps); s != NULL; s = next) {
			/* steps_end may free an older ended step, never s
			 * nor the ones after it. */
			next = TAILQ_NEXT(s, entry);
			if (s->state != JOB_RUNNING || !s->pty ||
			    now - s->seen_ms < idle)
				continue;
			snprintf(s->reason, sizeof(s->reason), "interactive "
			    "session silent for %" PRId64 " s (no srun or "
			    "cohort attach asked)", (now - s->seen_ms) / 1000);
			steps_stop_tasks(cl, s, s->reason);
			s->has_exit = true;
			s->exit_code = 128 + SIGKILL;
			cl->stats.sessions_idle_ended++;
			steps_end(cl, s, JOB_CANCELLED, NULL, now);
		}
	}
}

void
steps_counts(const struct cluster *cl, size_t *running, size_t *sessions)
{
	const struct step_job *sj;
	const struct step *s;

	*running = *sessions = 0;
	TAILQ_FOREACH(sj, &cl->step_jobs, entry) {
		*running += sj->nrunning;
		if (sj->nrunning == 0)
			continue;
		TAILQ_FOREACH(s, &sj->steps, entry)
			*sessions += s->state == JOB_RUNNING && s->pty;
	}
}

/* ---- Signals and reports ------------------------------------------- */

int
steps_signal(struct cluster *cl, const struct peer *who, uint64_t job_id,
    uint32_t step_id, int sig, int64_t now, struct cerr *err)
{
	const struct job *job = jobs_get(cl->js, job_id);
	struct step *s;
	const struct node *n;
	size_t i;

	if (steps_may(cl, who, job_id, err) == -1)
		return -1;
	if ((s = steps_find(cl, job_id, job->attempt, step_id)) == NULL ||
	    s->state != JOB_RUNNING)
		return cerr_set(err, s == NULL ? ERR_NOT_FOUND : ERR_CONFLICT,
		    "step %" PRIu64 ".%u is not running", job_id, step_id);
	if (sig == SIGKILL) {
		snprintf(s->reason, sizeof(s->reason), "cancelled by %s",
		    who->name);
		steps_stop_tasks(cl, s, s->reason);
		s->has_exit = true;
		s->exit_code = 128 + SIGKILL;
		steps_end(cl, s, JOB_CANCELLED, NULL, now);
		return 0;
	}
	for (i = 0; i < s->nnodes; i++)
		if ((n = nodes_get(cl->ns, s->nodenames[i])) != NULL &&
		    n->conn_id != 0)
			cl->out.ops->signal_step(cl->out.ctx, n->conn_id,
			    job_id, s->attempt, s->id, sig);
	return 0;
}

/* The index in s of the node holding rank, or -1. The nodes hold
 * consecutive ranks in order: a binary search, as every task report
 * (exits, heartbeats) asks it. */
static long
steps_rank_node(const struct step *s, unsigned rank)
{
	size_t lo = 0, hi = s->nnodes, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (rank < s->nodes[mid].first_rank)
			hi = mid;
		else if (rank - s->nodes[mid].first_rank >=
		    s->nodes[mid].ntasks)
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}

bool
steps_task_wanted(const struct cluster *cl, const struct node *n,
    const struct task_report *r)
{
	const struct step *s = steps_find(cl, r->job_id, r->restart, r->step);
	long i;

	if (s == NULL || s->state != JOB_RUNNING ||
	    (i = steps_rank_node(s, r->rank)) < 0)
		return false;
	return strcmp(s->nodenames[i], n->name) == 0;
}

int
steps_task_node(const struct cluster *cl, uint64_t job_id, uint32_t step_id,
    unsigned rank, const char **node, struct cerr *err)
{
	const struct step *s = steps_get(cl, job_id, step_id);
	long i;

	if (s == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "step %" PRIu64 ".%u is not "
		    "known (steps of a job's current run only)", job_id,
		    step_id);
	if ((i = steps_rank_node(s, rank)) < 0)
		return cerr_set(err, ERR_INVALID, "step %" PRIu64 ".%u has "
		    "tasks 0..%u", job_id, step_id, s->ntasks - 1);
	*node = s->nodenames[i];
	return 0;
}

int
steps_task_exit(struct cluster *cl, struct node *n,
    const struct task_report *r, int64_t now, struct cerr *err)
{
	const struct job *job = jobs_get(cl->js, r->job_id);
	struct step *s;
	long i;
	int32_t code;

	if (job == NULL || !jobs_is_active(job) || r->restart != job->attempt ||
	    (s = steps_find(cl, r->job_id, r->restart, r->step)) == NULL)
		return 0;
	if ((i = steps_rank_node(s, r->rank)) < 0 ||
	    strcmp(s->nodenames[i], n->name) != 0)
		return cerr_set(err, ERR_DENIED, "node %s does not hold task "
		    "%u of step %" PRIu64 ".%u", n->name, r->rank, r->job_id,
		    r->step);
	if (s->state != JOB_RUNNING || s->status[r->rank] != -1)
		return 0;
	s->status[r->rank] = r->wait_status;
	code = steps_code(r->wait_status);
	if (!s->has_exit || code > s->exit_code)
		s->exit_code = code;
	s->has_exit = true;
	if (code != 0 && s->reason[0] == '\0')
		snprintf(s->reason, sizeof(s->reason), "task %u %s %d%s%.120s",
		    r->rank, WIFSIGNALED(r->wait_status) ? "killed by signal" :
		    "exited with", WIFSIGNALED(r->wait_status) ?
		    WTERMSIG(r->wait_status) : code, r->why[0] ? ": " : "",
		    r->why);
	/* Once: a stop reaches every node of the step, and every task
	 * that it kills reports a failure too. */
	if (code != 0 && s->kill_on_bad_exit && !s->stopping &&
	    s->ndone + 1 < s->ntasks) {
		s->stopping = true;
		steps_stop_tasks(cl, s, "a task failed (--kill-on-bad-exit)");
	}
	if (++s->ndone < s->ntasks)
		return 0;
	steps_end(cl, s, s->exit_code == 0 ? JOB_COMPLETED : JOB_FAILED, NULL,
	    now);
	return 0;
}
