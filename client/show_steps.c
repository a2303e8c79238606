/* cohort show's steps: see show_steps.h. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "client/commands.h"
#include "client/show_steps.h"
#include "client/slurm_query.h"
#include "lib/job.h"

int
show_steps_fetch(struct cconn *c, uint64_t id, Cohort__V1__Envelope **rep)
{
	return slurm_steps_fetch("show", c, &id, 1, rep);
}

static size_t
show_steps_n(const Cohort__V1__Envelope *rep)
{
	return rep != NULL && rep->list_steps_reply != NULL ?
	    rep->list_steps_reply->n_steps : 0;
}

int
show_steps_fields(struct output_table *t, const Cohort__V1__Envelope *rep)
{
	struct slurm_step s;
	size_t i, n = show_steps_n(rep);
	int rc = 0;

	if (n == 0)
		return output_fields_addf(t, "Steps", "-");
	for (i = 0; i < n && rc == 0; i++) {
		if (slurm_step_from_pb(rep->list_steps_reply->steps[i],
		    &s) == -1)
			return -1;
		/* "3 train: FAILED, exit 2:0, 8 task(s) on node[01-02],
		 * 8 GPU(s)", as sacct's ExitCode writes code:signal. */
		rc = output_fields_addf(t, i == 0 ? "Steps" : NULL, "%" PRIu32
		    " %s: %s, exit %d:%d, %" PRIu32 " task(s) on %s, %" PRIu32
		    " GPU(s)", s.step_id, s.name[0] ? s.name : "(hidden)",
		    s.node_fail ? "NODE_FAIL" : job_state_name(s.state),
		    s.exit_code, s.exit_signal, s.ntasks, s.nodelist, s.gpus);
	}
	return rc;
}

json_t *
show_steps_json(const Cohort__V1__Envelope *rep)
{
	struct slurm_step s;
	json_t *arr = json_array(), *o;
	size_t i, n = show_steps_n(rep);

	for (i = 0; i < n && arr != NULL; i++) {
		if (slurm_step_from_pb(rep->list_steps_reply->steps[i],
		    &s) == -1 ||
		    (o = json_pack("{s:I, s:s, s:s, s:b, s:i, s:i, s:I, s:s, "
		    "s:I, s:I, s:I}", "step_id", (json_int_t)s.step_id, "name",
		    s.name, "state", job_state_name(s.state), "node_fail",
		    s.node_fail, "exit_code", s.exit_code, "exit_signal",
		    s.exit_signal, "ntasks", (json_int_t)s.ntasks, "nodelist",
		    s.nodelist, "gpus", (json_int_t)s.gpus, "start_ms",
		    (json_int_t)s.start_ms, "end_ms",
		    (json_int_t)s.end_ms)) == NULL ||
		    json_array_append_new(arr, o) == -1) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}
