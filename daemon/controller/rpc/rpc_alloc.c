/* salloc and srun --jobid at the RPC edge: AllocRequest, decoded and
 * handed to the domain (alloc.h); the step credential it hands out is
 * made here (stepcred.h), for the job's owner only, while it runs. */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "daemon/controller/domain/alloc.h"
#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/clock.h"
#include "lib/wire.h"
#include "daemon/controller/rpc/rpc_int.h"
#include "daemon/controller/rpc/server.h"
#include "daemon/controller/rpc/stepcred.h"

void
rpc_alloc(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__AllocRequest *q = req->alloc;
	const struct peer *who = server_conn_peer(c);
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__AllocReply rep = COHORT__V1__ALLOC_REPLY__INIT;
	uint8_t cred[STEPCRED_LEN];
	const struct job *job = NULL;
	enum job_state state = JOB_PENDING;
	struct cerr err;
	int rc;

	cerr_clear(&err);
	switch (q->op) {
	case COHORT__V1__ALLOC_REQUEST__OP__CRED:
		if ((rc = alloc_keepalive(rpc->cluster, who, q->job_id, true,
		    clock_now_ms(), &job, &err)) == 0 &&
		    (rpc->stepcred == NULL || (rc = stepcred_make(rpc->stepcred,
		    job->id, job->attempt, job->user, cred)) == -1))
			rc = cerr_set(&err, ERR_INTERNAL, "the step key cannot "
			    "be read");
		if (rc == 0) {
			rep.has_cred = 1;
			rep.cred.data = cred;
			rep.cred.len = sizeof(cred);
			state = job->state;
		}
		break;
	case COHORT__V1__ALLOC_REQUEST__OP__KEEPALIVE:
		if ((rc = alloc_keepalive(rpc->cluster, who, q->job_id, false,
		    clock_now_ms(), &job, &err)) == 0)
			state = job->state;
		break;
	case COHORT__V1__ALLOC_REQUEST__OP__STATE:
		if ((rc = alloc_job(rpc->cluster, who, q->job_id, false, &job,
		    &err)) == 0)
			state = job->state;
		break;
	case COHORT__V1__ALLOC_REQUEST__OP__RELEASE:
		rc = alloc_release(rpc->cluster, who, q->job_id,
		    q->has_exit_code ? q->exit_code : 0, clock_now_ms(), &state,
		    &err);
		break;
	default:
		rc = cerr_set(&err, ERR_INVALID, "unknown allocation request");
		break;
	}
	if (rc == -1) {
		rpc_error(rpc, c, req->id, err.code, err.text, false);
		return;
	}
	rep.state = wire_state_to_pb(state);
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_ALLOC_REPLY;
	env.alloc_reply = &rep;
	rpc_send(rpc, c, &env, false);
	explicit_bzero(cred, sizeof(cred));
}
