/* Job steps as Slurm's commands show them (see slurm_query.h): sacct's
 * step rows (J.batch for a batch job's script, then J.0, J.1 ... from
 * ListSteps) and squeue -s. */
#include "config.h"

#include <sys/wait.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"
#include "client/output.h"
#include "client/slurm_query.h"
#include "lib/frame.h"
#include "lib/hostlist.h"
#include "lib/wire.h"

int
slurm_step_from_pb(const Cohort__V1__Step *pb, struct slurm_step *s)
{
	char *list;
	size_t i;
	int code = 0, sig = 0, ws;

	memset(s, 0, sizeof(*s));
	s->job_id = pb->job_id;
	s->step_id = pb->step_id;
	s->name = pb->name != NULL ? pb->name : "";
	if (wire_state_from_pb(pb->state, &s->state) == -1)
		return -1;
	s->node_fail = pb->has_node_fail && pb->node_fail;
	/* Slurm's ExitCode: the highest code, and the signal that ended a
	 * task. The wait statuses say which; without them the code is
	 * the step's own (a signal shows as 128 + N). */
	for (i = 0; i < pb->n_task_status; i++) {
		if ((ws = pb->task_status[i]) < 0)
			continue;
		if (WIFEXITED(ws) && WEXITSTATUS(ws) > code)
			code = WEXITSTATUS(ws);
		else if (WIFSIGNALED(ws) && sig == 0)
			sig = WTERMSIG(ws);
	}
	if (pb->n_task_status == 0 && pb->has_exit_code)
		code = pb->exit_code;
	s->exit_code = code;
	s->exit_signal = sig;
	s->start_ms = pb->has_start_time_ms ? pb->start_time_ms : 0;
	s->end_ms = pb->has_end_time_ms ? pb->end_time_ms : 0;
	s->nnodes = (uint32_t)pb->n_nodelist;
	if (pb->n_nodelist > 0) {
		if ((list = hostlist_compress(pb->nodelist,
		    pb->n_nodelist)) == NULL)
			return -1;
		snprintf(s->nodelist, sizeof(s->nodelist), "%s", list);
		free(list);
	}
	for (i = 0; i < pb->n_tasks_per_node; i++)
		s->ntasks += pb->tasks_per_node[i];
	if (pb->has_ntasks)
		s->ntasks = pb->ntasks;
	s->cpus = s->ntasks;
	s->gpus = pb->has_gpus ? pb->gpus : 0;
	return 0;
}

void
slurm_step_batch(const struct job *j, struct slurm_step *s)
{
	memset(s, 0, sizeof(*s));
	s->job_id = j->id;
	s->batch = true;
	s->name = "batch";
	s->state = j->state;
	/* Cohort keeps a shell's code, 128 + N for signal N: Slurm's
	 * batch step shows the signal apart. */
	if (j->has_exit && j->exit_code > 128 &&
	    j->state != JOB_COMPLETED && j->state != JOB_FAILED)
		s->exit_signal = j->exit_code - 128;
	else if (j->has_exit)
		s->exit_code = j->exit_code;
	s->start_ms = j->start_ms;
	s->end_ms = j->end_ms;
	if (j->nplace > 0)
		snprintf(s->nodelist, sizeof(s->nodelist), "%s",
		    j->place[0].node);
	s->nnodes = 1;
	s->ntasks = 1;
	/* The batch host's share of the allocation. */
	s->cpus = (uint32_t)(slurm_job_cpus(j) / (j->nplace > 0 ?
	    j->nplace : 1));
	s->gpus = j->nplace > 0 ? j->place[0].ngpus : 0;
}

char *
slurm_step_id(const struct slurm_step *s, const char *rowid, char *buf,
    size_t len)
{
	if (s->batch)
		snprintf(buf, len, "%s.batch", rowid);
	else
		snprintf(buf, len, "%s.%" PRIu32, rowid, s->step_id);
	return buf;
}

int
slurm_steps_fetch(const char *cmd, struct cconn *c, const uint64_t *ids,
    size_t n, Cohort__V1__Envelope **rep)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__ListStepsRequest ls = COHORT__V1__LIST_STEPS_REQUEST__INIT;
	struct cerr err;

	ls.job_ids = (uint64_t *)ids;
	ls.n_job_ids = n;
	req.body_case = COHORT__V1__ENVELOPE__BODY_LIST_STEPS;
	req.list_steps = &ls;
	cerr_clear(&err);
	if ((*rep = cconn_call(c, &req, &err)) == NULL)
		return output_call_error(&err);
	if ((*rep)->body_case == COHORT__V1__ENVELOPE__BODY_LIST_STEPS_REPLY)
		return EXIT_OK;
	/* A controller before steps does not know the request: it has
	 * none to list. */
	if ((*rep)->body_case == COHORT__V1__ENVELOPE__BODY_ERROR &&
	    ((*rep)->error->code == COHORT__V1__ERROR_CODE__ERROR_PROTOCOL ||
	    (*rep)->error->code == COHORT__V1__ERROR_CODE__ERROR_INVALID)) {
		frame_free(*rep);
		*rep = NULL;
		return EXIT_OK;
	}
	(void)output_reply_error(cmd, *rep);
	frame_free(*rep);
	*rep = NULL;
	return EXIT_FAILED;
}

/* The step's state as Slurm names a step's. */
static const char *
slurm_step_state(const struct slurm_step *s)
{
	if (s->node_fail)
		return "NODE_FAIL";
	return slurm_state_name(s->state);
}

static uint64_t
slurm_step_elapsed_s(const struct slurm_step *s, int64_t now)
{
	int64_t to;

	if (s->start_ms <= 0)
		return 0;
	to = s->end_ms > 0 ? s->end_ms : now;
	return to > s->start_ms ? (uint64_t)(to - s->start_ms) / 1000 : 0;
}

const char *
sacct_step_cell(int id, const struct slurm_step *s, const struct job *j,
    const char *rowid, int64_t now, char *buf, size_t len)
{
	char raw[32];

	switch (id) {
	case SA_JOBID:
		return slurm_step_id(s, rowid, buf, len);
	case SA_JOBIDRAW:
		snprintf(raw, sizeof(raw), "%" PRIu64, j->id);
		return slurm_step_id(s, raw, buf, len);
	case SA_JOBNAME:
		return s->name;
	case SA_STATE:
		return slurm_step_state(s);
	case SA_EXITCODE:
		snprintf(buf, len, "%d:%d", s->exit_code, s->exit_signal);
		return buf;
	case SA_ELAPSED:
		return slurm_secs_long(slurm_step_elapsed_s(s, now), buf, len);
	case SA_NODELIST:
		return s->nodelist;
	case SA_START:
	case SA_SUBMIT:
		return slurm_time(s->start_ms, "Unknown", buf, len);
	case SA_END:
		return slurm_time(s->end_ms, "Unknown", buf, len);
	case SA_ALLOCTRES:
		if (s->gpus > 0)
			snprintf(buf, len, "cpu=%" PRIu32 ",gres/gpu=%" PRIu32
			    ",node=%" PRIu32, s->cpus, s->gpus, s->nnodes);
		else
			snprintf(buf, len, "cpu=%" PRIu32 ",node=%" PRIu32,
			    s->cpus, s->nnodes);
		return buf;
	case SA_NNODES:
	case SA_ALLOCNODES:
		snprintf(buf, len, "%" PRIu32, s->nnodes);
		return buf;
	case SA_ALLOCCPUS:
		snprintf(buf, len, "%" PRIu32, s->cpus);
		return buf;
	case SA_PARTITION:	/* a step's row leaves its job's to the job */
	case SA_USER:
	case SA_TIMELIMIT:
	case SA_REASON:
	case SA_ACCOUNT:
	case SA_PRIORITY:
		return "";
	}
	return "";
}

enum {
	SQS_ID, SQS_NAME, SQS_PARTITION, SQS_USER, SQS_TIME, SQS_NODELIST,
};

const struct sfmt_def squeue_step_defs[] = {
	{ 'i', NULL, "STEPID", 0, SQS_ID },
	{ 'j', NULL, "NAME", 0, SQS_NAME },
	{ 'P', NULL, "PARTITION", 0, SQS_PARTITION },
	{ 'u', NULL, "USER", 0, SQS_USER },
	{ 'M', NULL, "TIME", 0, SQS_TIME },
	{ 'N', NULL, "NODELIST", 0, SQS_NODELIST },
};
const size_t squeue_step_ndefs = sizeof(squeue_step_defs) /
    sizeof(squeue_step_defs[0]);

const char *
squeue_step_cell(int id, const struct slurm_step *s, const char *user,
    const char *partition, int64_t now, char *buf, size_t len)
{
	switch (id) {
	case SQS_ID:
		snprintf(buf, len, "%" PRIu64 ".%" PRIu32, s->job_id,
		    s->step_id);
		return buf;
	case SQS_NAME:
		return s->name;
	case SQS_PARTITION:
		return partition != NULL ? partition : "";
	case SQS_USER:
		return user != NULL ? user : "";
	case SQS_TIME:
		return slurm_secs_short(slurm_step_elapsed_s(s, now), buf,
		    len);
	case SQS_NODELIST:
		return s->nodelist;
	}
	return "";
}
