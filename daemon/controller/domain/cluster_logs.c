/* Task logs read through the agents (cohort logs): which node holds a
 * rank's log of which attempt and stream, and where a job that writes
 * its output to files (-o/-e) has put it instead; and srun's input,
 * written the same way to its step's task 0. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "daemon/controller/domain/cluster_int.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/outpat.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/steps.h"

/* The placement in pl (n of them) of the node that runs rank (NULL
 * when none does). */
static const struct placement *
rank_place(const struct job *job, const struct placement *pl, size_t n,
    unsigned rank)
{
	unsigned node_rank = job->spec.batch ? 0 :
	    rank / job->spec.tasks_per_node;
	size_t i;

	for (i = 0; i < n; i++)
		if (pl[i].node_rank == node_rank)
			return &pl[i];
	return NULL;
}

/* The stream goes to a file on the node: ERR_NOT_FOUND saying which,
 * expanded as the agent expands it (outpat.h), so that the user is not
 * handed an empty log. 0 when it is in the spool. */
static int
log_in_file(const struct job *job, const struct log_read *r,
    const struct placement *p, struct cerr *err)
{
	const struct job_spec *s = &job->spec;
	const char *pat = outpat_for(s->output, s->error, r->is_stderr);
	struct outpat_vars v = { 0 };
	char path[4096];
	bool rel, with_out;

	if (pat == NULL)
		return 0;
	v.job_id = job->id;
	v.array_id = job->array_id;
	v.array_task = job->array_task;
	v.rank = r->rank;
	v.node_rank = p->node_rank;
	v.node = p->node;
	v.name = s->name;
	v.user = job->user;
	if (outpat_expand(pat, &v, path, sizeof(path)) == -1)
		return cerr_set(err, ERR_NOT_FOUND, "job %" PRIu64 " writes "
		    "rank %u's %s to a file (%s '%s'), not to cohort logs",
		    job->id, r->rank, r->is_stderr ? "stderr" : "output",
		    pat == s->error ? "--error" : "--output", pat);
	rel = path[0] != '/';
	with_out = r->is_stderr && pat != s->error;
	return cerr_set(err, ERR_NOT_FOUND, "job %" PRIu64 " rank %u's %s is "
	    "in %s%s%s on node %s (%s)", job->id, r->rank,
	    r->is_stderr ? "stderr" : "output",
	    rel && s->workdir != NULL ? s->workdir : "",
	    rel && s->workdir != NULL ? "/" : "", path, p->node,
	    with_out ? "with its output: --output without --error" :
	    r->is_stderr ? "--error" : "--output");
}

/* A step task's log: on the node that holds it in the step, of the
 * job's current run (steps of earlier runs are gone with them). */
static int
cluster_read_step_log(struct cluster *cl, const struct job *job,
    struct log_read *r, int64_t now, outbox_log_done cb, void *arg,
    struct cerr *err)
{
	const char *node;
	struct node *n;

	if (r->attempt != 0 && r->attempt != job->attempt)
		return cerr_set(err, ERR_NOT_FOUND, "the steps of job %" PRIu64
		    " attempt %u are gone with it", job->id, r->attempt);
	if (steps_task_node(cl, job->id, r->step, r->rank, &node, err) == -1)
		return -1;
	r->attempt = job->attempt;
	if ((n = nodes_get(cl->ns, node)) == NULL || n->conn_id == 0)
		return cerr_set(err, ERR_UNAVAILABLE, "node %s of task %u is "
		    "not connected; its log cannot be read now", node,
		    r->rank);
	snprintf(r->node, sizeof(r->node), "%s", n->name);
	if (cl->out.ops->read_log(cl->out.ctx, n->conn_id, r->job_id,
	    r->attempt, r->step, r->rank, r->is_stderr, r->offset, r->max,
	    now, cb, arg) == -1)
		return cerr_set(err, ERR_UNAVAILABLE, "cannot reach node %s",
		    n->name);
	return 0;
}

int
cluster_read_log(struct cluster *cl, struct log_read *r, int64_t now,
    outbox_log_done cb, void *arg, struct cerr *err)
{
	const struct job *job = jobs_get(cl->js, r->job_id);
	const struct placement *p;
	struct node *n;
	size_t nranks;

	if (job == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "no job %" PRIu64,
		    r->job_id);
	if (job->nplace == 0 || job->attempt == 0)
		return cerr_set(err, ERR_CONFLICT,
		    "job %" PRIu64 " has not started; it has no output yet",
		    r->job_id);
	if (r->has_step)
		return cluster_read_step_log(cl, job, r, now, cb, arg, err);
	nranks = job_nranks(job);
	if (r->rank >= nranks)
		return cerr_set(err, ERR_INVALID, "job %" PRIu64 " has ranks "
		    "0..%zu", r->job_id, nranks - 1);
	if (r->attempt > job->attempt)
		return cerr_set(err, ERR_INVALID, "job %" PRIu64 " has "
		    "attempts 1..%" PRIu32, r->job_id, job->attempt);
	if (r->attempt == 0)
		r->attempt = job->attempt;
	/* The attempt before a restart ran where the gang was then (a
	 * restart may move a rank, e.g. off a node it failed early on);
	 * other attempts are asked of the node that holds the rank now. */
	p = NULL;
	if (r->attempt + 1 == job->attempt && job->nprev > 0)
		p = rank_place(job, job->prev_place, job->nprev, r->rank);
	if (p == NULL)
		p = rank_place(job, job->place, job->nplace, r->rank);
	if (p != NULL && log_in_file(job, r, p, err) == -1)
		return -1;
	if (p == NULL || (n = nodes_get(cl->ns, p->node)) == NULL ||
	    n->conn_id == 0)
		return cerr_set(err, ERR_UNAVAILABLE, "node %s of rank %u is "
		    "not connected; its log cannot be read now",
		    p != NULL ? p->node : "?", r->rank);
	snprintf(r->node, sizeof(r->node), "%s", n->name);
	if (cl->out.ops->read_log(cl->out.ctx, n->conn_id, r->job_id,
	    r->attempt, -1, r->rank, r->is_stderr, r->offset, r->max, now, cb,
	    arg) == -1)
		return cerr_set(err, ERR_UNAVAILABLE, "cannot reach node %s",
		    n->name);
	return 0;
}

int
cluster_step_input(struct cluster *cl, uint64_t job_id, uint32_t step,
    const struct step_input *in, int64_t now, outbox_input_done cb,
    void *arg, struct cerr *err)
{
	const struct job *job = jobs_get(cl->js, job_id);
	const struct step *s;
	const char *node;
	struct node *n;

	if (job == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "no job %" PRIu64, job_id);
	if ((s = steps_get(cl, job_id, step)) == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "step %" PRIu64 ".%u is not "
		    "known (steps of a job's current run only)", job_id, step);
	if (s->state != JOB_RUNNING)
		return cerr_set(err, ERR_CONFLICT, "step %" PRIu64 ".%u has "
		    "ended", job_id, step);
	if (!s->input)
		return cerr_set(err, ERR_CONFLICT, "step %" PRIu64 ".%u reads "
		    "no input (srun -i none)", job_id, step);
	if (in->rows > 0 && !s->pty)
		return cerr_set(err, ERR_CONFLICT, "step %" PRIu64 ".%u has "
		    "no terminal to resize (srun --pty makes one)", job_id,
		    step);
	if (cl->out.ops->write_stdin == NULL)
		return cerr_set(err, ERR_UNAVAILABLE, "this controller "
		    "forwards no input");
	if (steps_task_node(cl, job_id, step, 0, &node, err) == -1)
		return -1;
	if ((n = nodes_get(cl->ns, node)) == NULL || n->conn_id == 0)
		return cerr_set(err, ERR_UNAVAILABLE, "node %s of task 0 is "
		    "not connected; its input cannot be written now", node);
	cl->stats.input_bytes += in->len;
	if (cl->out.ops->write_stdin(cl->out.ctx, n->conn_id, job_id,
	    s->attempt, step, 0, in, now, cb, arg) == -1)
		return cerr_set(err, ERR_UNAVAILABLE, "cannot reach node %s",
		    n->name);
	return 0;
}
