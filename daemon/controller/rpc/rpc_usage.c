/* History at the RPC edge: `cohort usage` (UsageRequest), and the
 * history filters of `cohort jobs` (ListJobsRequest 6-9).
 *
 * Who sees what: docs/SPEC.md's security model lets every user see every job
 * (and each job's gpu_ms is on the wire to all), and keeps private only
 * environments, command lines, scripts and logs. GPU time is none of
 * those, so usage is shown to everyone, as sreport does by default:
 * hiding it would hide nothing a listing does not already show. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "lib/clock.h"
#include "lib/wire.h"
#include "daemon/controller/rpc/rpc_int.h"

int
rpc_list_history(const Cohort__V1__ListJobsRequest *lr,
    struct jobs_filter *f, char *text, size_t len)
{
	enum job_state st;
	size_t i;

	f->since_ms = lr->has_since_ms ? lr->since_ms : 0;
	f->until_ms = lr->has_until_ms ? lr->until_ms : 0;
	if (f->since_ms < 0 || f->until_ms < 0 || (f->until_ms > 0 &&
	    f->until_ms <= f->since_ms)) {
		snprintf(text, len, "the listing's window must be positive "
		    "and end after it starts");
		return -1;
	}
	for (i = 0; i < lr->n_states; i++) {
		if (wire_state_from_pb(lr->states[i], &st) == -1) {
			snprintf(text, len, "unknown job state in filter");
			return -1;
		}
		f->states |= 1u << st;
	}
	if (lr->name != NULL && strlen(lr->name) > JOB_NAME_MAX) {
		snprintf(text, len, "a job name is at most %d bytes",
		    JOB_NAME_MAX);
		return -1;
	}
	f->name = lr->name;
	return 0;
}

/* The request as the domain's query. 0, or -1 with why in text. */
static int
rpc_usage_query(const Cohort__V1__UsageRequest *ur, int64_t now,
    struct jobs_usage_query *q, char *text, size_t len)
{
	memset(q, 0, sizeof(*q));
	q->since_ms = ur->has_since_ms ? ur->since_ms : 0;
	q->until_ms = ur->has_until_ms ? ur->until_ms : now;
	if (q->since_ms < 0 || q->until_ms <= q->since_ms) {
		snprintf(text, len, "the usage window must be positive and "
		    "end after it starts");
		return -1;
	}
	switch (ur->has_by ? ur->by : COHORT__V1__USAGE_BY__USAGE_BY_USER) {
	case COHORT__V1__USAGE_BY__USAGE_BY_USER:
		q->by = JOBS_USAGE_USER;
		break;
	case COHORT__V1__USAGE_BY__USAGE_BY_QUEUE:
		q->by = JOBS_USAGE_QUEUE;
		break;
	case COHORT__V1__USAGE_BY__USAGE_BY_STATE:
		q->by = JOBS_USAGE_STATE;
		break;
	case COHORT__V1__USAGE_BY__USAGE_BY_DAY:
		q->by = JOBS_USAGE_DAY;
		break;
	default:
		snprintf(text, len, "unknown usage grouping %d", (int)ur->by);
		return -1;
	}
	if ((ur->user != NULL && strlen(ur->user) > PEER_NAME_MAX) ||
	    (ur->queue != NULL && strlen(ur->queue) > JOB_QUEUE_MAX)) {
		snprintf(text, len, "a user name is at most %d bytes, a queue "
		    "name at most %d", PEER_NAME_MAX, JOB_QUEUE_MAX);
		return -1;
	}
	q->user = ur->user;
	q->queue = ur->queue;
	return 0;
}

void
rpc_usage(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__UsageReply reply = COHORT__V1__USAGE_REPLY__INIT;
	Cohort__V1__UsageRow *pbs = NULL, **ptrs = NULL;
	struct jobs_usage_query q;
	struct jobs_usage_row *rows = NULL;
	struct cerr err;
	size_t i, n = 0;
	int64_t now = clock_now_ms();
	char text[160];

	cerr_clear(&err);
	if (rpc_usage_query(req->usage, now, &q, text, sizeof(text)) == -1) {
		rpc_error(rpc, c, req->id, ERR_INVALID, text, false);
		return;
	}
	if (jobs_account_usage(rpc->jobs, &q, now, &rows, &n, &err) == -1) {
		rpc_error(rpc, c, req->id, err.code, err.text, false);
		return;
	}
	if (n > 0 && ((pbs = calloc(n, sizeof(*pbs))) == NULL ||
	    (ptrs = calloc(n, sizeof(*ptrs))) == NULL)) {
		rpc_error(rpc, c, req->id, ERR_INTERNAL, "out of memory",
		    false);
		goto out;
	}
	for (i = 0; i < n; i++) {
		cohort__v1__usage_row__init(&pbs[i]);
		if (q.by == JOBS_USAGE_DAY) {
			pbs[i].has_day_ms = 1;
			pbs[i].day_ms = rows[i].day_ms;
		} else
			pbs[i].key = rows[i].key;
		pbs[i].gpu_ms = rows[i].gpu_ms;
		pbs[i].wasted_gpu_ms = rows[i].wasted_gpu_ms;
		pbs[i].has_runs = 1;
		pbs[i].runs = rows[i].runs;
		reply.gpu_ms += rows[i].gpu_ms;
		reply.wasted_gpu_ms += rows[i].wasted_gpu_ms;
		ptrs[i] = &pbs[i];
	}
	reply.n_rows = n;
	reply.rows = ptrs;
	reply.since_ms = q.since_ms;
	reply.until_ms = q.until_ms;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_USAGE_REPLY;
	env.usage_reply = &reply;
	rpc_send(rpc, c, &env, false);
out:
	free(ptrs);
	free(pbs);
	free(rows);
}
