/* Dependencies (sbatch --dependency) as the jobs table sees them: the
 * jobs a dependency names must exist and be the submitter's to name;
 * what became of them, for the gate (gates.c) that evaluates it with
 * lib/depend.c; and ending a job whose dependency never can hold. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/jobs_int.h"
#include "lib/depend.h"
#include "lib/log.h"

/* Check one item of who's dependency against the table. */
static int
jobs_depend_item(const struct jobs *js, const struct peer *who,
    const struct job_spec *spec, const struct depend_item *it,
    struct cerr *err)
{
	const struct job *job;
	char text[64];

	if (it->type == DEPEND_SINGLETON)
		return 0;
	depend_item_format(it, text, sizeof(text));
	if ((job = jobs_get(js, it->id)) == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "--dependency %s: no job "
		    "%" PRIu64, text, it->id);
	if (!jobs_may(js, who, job, JOBS_ACT_DEPEND_ON, NULL))
		return cerr_set(err, ERR_DENIED, "--dependency %s: job %" PRIu64
		    " belongs to %s; a job may depend on its owner's jobs "
		    "only (an admin's on anyone's)", text, it->id, job->user);
	if ((it->has_task || it->type == DEPEND_AFTERCORR) &&
	    job->array_id != job->id)
		return cerr_set(err, ERR_INVALID, "--dependency %s: job %" PRIu64
		    " is not an array", text, it->id);
	if (it->has_task && jobs_array_task(js, it->id, it->task) == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "--dependency %s: array %"
		    PRIu64 " has no task %u", text, it->id, it->task);
	(void)spec;
	return 0;
}

int
jobs_depend_check(const struct jobs *js, const struct peer *who,
    const struct job_spec *spec, struct cerr *err)
{
	struct depend d;
	size_t i;
	int rc = 0;

	if (spec->dependency == NULL)
		return 0;
	if (depend_parse(spec->dependency, &d, err) == -1)
		return -1;
	for (i = 0; i < d.n && rc == 0; i++)
		rc = jobs_depend_item(js, who, spec, &d.items[i], err);
	depend_clear(&d);
	return rc;
}

static void
jobs_depend_add(struct depend_status *st, const struct job *job)
{
	bool ended = job_state_is_final(job->state);

	st->n++;
	st->started += ended || job->start_ms > 0;
	st->ended += ended;
	st->ok += job->state == JOB_COMPLETED;
}

int
jobs_depend_lookup(const struct jobs *js, uint64_t id, bool has_task,
    uint32_t task, struct depend_status *st)
{
	struct job *const *t;
	const struct job *job;
	size_t n, i;

	memset(st, 0, sizeof(*st));
	if ((job = jobs_get(js, id)) == NULL)
		return -1;
	if (has_task) {
		/* A task the array does not have: none to wait for. */
		if ((job = jobs_array_task(js, id, task)) != NULL)
			jobs_depend_add(st, job);
		return 0;
	}
	/* An array's id names all its tasks; a task's own id, that task. */
	if (job->array_id == job->id) {
		n = jobs_array_tasks(js, id, &t);
		for (i = 0; i < n; i++)
			jobs_depend_add(st, t[i]);
		return 0;
	}
	jobs_depend_add(st, job);
	return 0;
}

int
jobs_depend_never(struct jobs *js, uint64_t id, const char *why,
    int64_t now_ms, struct cerr *err)
{
	struct job *job, next;
	char detail[160];

	if ((job = jobs_find(js, id, err)) == NULL)
		return -1;
	if (job_state_is_final(job->state))
		return cerr_set(err, ERR_CONFLICT, "job %" PRIu64
		    " already ended (%s)", id, job_state_name(job->state));
	snprintf(detail, sizeof(detail), "%s: %s can never hold",
	    JOBS_DEPEND_NEVER, why);
	if (jobs_next(job, JOB_CANCELLED, JOBS_DEPEND_NEVER, NULL, 0, now_ms,
	    &next, err) == -1 || jobs_apply(js, job, &next, now_ms,
	    "dependency", "cohortd", detail, err) == -1)
		return -1;
	log_info("job %" PRIu64 ": cancelled: its dependency %s can never "
	    "hold", id, why);
	return 0;
}
