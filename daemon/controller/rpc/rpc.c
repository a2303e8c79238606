/* Requests in, replies out: decode → check role → act through the domain
 * modules → reply. Handlers see protobuf only to read the request and
 * build the reply; the work is done on the project's own structs. */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "daemon/controller/domain/feasible.h"
#include "daemon/controller/domain/goodput.h"
#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/queues.h"
#include "daemon/controller/domain/straggler.h"
#include "lib/frame.h"
#include "lib/log.h"
#include "lib/wire.h"
#include "daemon/controller/rpc/rpc_int.h"
#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/rpc/agentcmd.h"
#include "daemon/controller/rpc/server.h"
#include "daemon/controller/store/txq.h"

/* Replies can be much larger than requests (a listing of every job). */
#define RPC_REPLY_MAX (64u * 1024 * 1024)

typedef void (*rpc_fn)(struct rpc *, struct conn *,
    const Cohort__V1__Envelope *);

struct rpc_handler {
	Cohort__V1__Envelope__BodyCase body;
	int roles;		/* who may send it */
	rpc_fn fn;
};

/* A reply waiting for the commit that covers what it reports. */
struct rpc_reply {
	struct rpc *rpc;
	uint64_t conn_id;
	uint64_t req_id;
	uint8_t *frame;
	size_t len;
	bool close_after;
	bool reserved;		/* counted by conn_reserve */
	struct rpc_timing timing;	/* type 0: not timed */
};

static void
rpc_observe(struct rpc *rpc, const struct rpc_timing *t)
{
	if (t->type == 0 || t->type > RPC_NTYPES)
		return;
	histogram_observe(&rpc->latency[t->type - 1],
	    (double)(clock_mono_us() - t->t0_us) / 1e6);
}

struct rpc_timing
rpc_timing_take(struct rpc *rpc)
{
	struct rpc_timing t = rpc->cur;

	rpc->cur.type = 0;
	return t;
}

struct rpc_timing
rpc_timing_swap(struct rpc *rpc, struct rpc_timing t)
{
	struct rpc_timing old = rpc->cur;

	rpc->cur = t;
	return old;
}

static void
rpc_reply_cb(void *arg, bool committed)
{
	struct rpc_reply *r = arg;
	struct conn *c = r->rpc->srv != NULL ?
	    server_conn(r->rpc->srv, r->conn_id) : NULL;

	/* Queued now, after the commit it waited for: its request's
	 * latency ends here (even when its peer has gone meanwhile). */
	rpc_observe(r->rpc, &r->timing);
	if (c != NULL) {
		if (r->reserved)
			server_conn_release(c, r->len);
		if (committed)
			server_conn_send_frame(c, r->frame, r->len);
		else
			server_conn_send_error(c, r->req_id, ERR_INTERNAL,
			    "the controller could not save the change; "
			    "nothing was done");
		if (r->close_after)
			server_conn_close(c);
	}
	free(r->frame);
	free(r);
}

/* A reply that will not be sent after all. */
static void
rpc_reply_drop(struct rpc_reply *r)
{
	struct conn *c;

	if (r->reserved && r->rpc->srv != NULL &&
	    (c = server_conn(r->rpc->srv, r->conn_id)) != NULL)
		server_conn_release(c, r->len);
	free(r->frame);
	free(r);
}

static struct rpc_reply *
rpc_reply_new(struct rpc *rpc, uint64_t cid, const Cohort__V1__Envelope *env,
    bool close_after)
{
	struct rpc_reply *r;
	struct conn *c;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->rpc = rpc;
	r->conn_id = cid;
	r->req_id = env->id;
	r->close_after = close_after;
	/* The first reply to a request ends its latency; more replies
	 * (acknowledgements inside a heartbeat) are not timed. */
	r->timing = rpc_timing_take(rpc);
	r->frame = frame_pack(env, RPC_REPLY_MAX, &r->len);
	if (r->frame == NULL) {
		/* Too large: say so instead. */
		Cohort__V1__Envelope e;
		Cohort__V1__Error er;

		wire_error(&e, &er, env->id, ERR_TOO_LARGE,
		    "the reply is too large; narrow the request");
		if ((r->frame = frame_pack(&e, RPC_REPLY_MAX, &r->len)) ==
		    NULL) {
			free(r);
			return NULL;
		}
	}
	/* Owed until rpc_reply_cb sends it: counts toward the peer's limits
	 * on replies in flight and output, even while it waits for a commit. */
	if (rpc->srv != NULL && (c = server_conn(rpc->srv, cid)) != NULL) {
		server_conn_reserve(c, r->len);
		r->reserved = true;
	}
	return r;
}

void
rpc_send_to(struct rpc *rpc, uint64_t cid, const Cohort__V1__Envelope *env)
{
	struct rpc_reply *r;

	if ((r = rpc_reply_new(rpc, cid, env, false)) == NULL) {
		log_warnx("conn %" PRIu64 ": out of memory for a reply", cid);
		return;
	}
	if (rpc->txq == NULL)
		rpc_reply_cb(r, true);
	else if (txq_defer(rpc->txq, rpc_reply_cb, r) == -1)
		rpc_reply_drop(r);
}

void
rpc_error_to(struct rpc *rpc, uint64_t cid, uint64_t req_id,
    enum err_code code, const char *text)
{
	Cohort__V1__Envelope env;
	Cohort__V1__Error e;

	wire_error(&env, &e, req_id, code, text);
	rpc_send_to(rpc, cid, &env);
}

void
rpc_send(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *env,
    bool close_after)
{
	struct rpc_reply *r;

	if ((r = rpc_reply_new(rpc, server_conn_id(c), env,
	    close_after)) == NULL)
		goto fail;
	/* A replica that does not lead has no store: nothing to wait for. */
	if (rpc->txq == NULL) {
		rpc_reply_cb(r, true);
		return;
	}
	if (txq_defer(rpc->txq, rpc_reply_cb, r) == 0)
		return;
	rpc_reply_drop(r);
fail:
	log_warnx("conn %" PRIu64 ": out of memory for a reply",
	    server_conn_id(c));
	server_conn_close(c);
}

void
rpc_error(struct rpc *rpc, struct conn *c, uint64_t req_id,
    enum err_code code, const char *text, bool close_after)
{
	Cohort__V1__Envelope env;
	Cohort__V1__Error e;

	wire_error(&env, &e, req_id, code, text);
	rpc_send(rpc, c, &env, close_after);
}

static void
rpc_hello(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__HelloReply hr = COHORT__V1__HELLO_REPLY__INIT;
	const struct peer *p = server_conn_peer(c);
	struct cerr err;
	char text[160];

	if (req->hello->major != WIRE_MAJOR) {
		snprintf(text, sizeof(text), "protocol version %u.%u is not "
		    "supported; this controller speaks %d.%d",
		    req->hello->major, req->hello->minor, WIRE_MAJOR,
		    WIRE_MINOR);
		log_info("conn %" PRIu64 " (%s): %s", server_conn_id(c),
		    p->name, text);
		rpc_error(rpc, c, req->id, ERR_VERSION, text, true);
		return;
	}
	/* An agent certificate for a node this controller does not know
	 * gets no session at all (not only no registration). */
	cerr_clear(&err);
	if (p->role == ROLE_AGENT && cluster_check_node(rpc->cluster, p->name,
	    clock_now_ms(), &err) == -1) {
		rpc_error(rpc, c, req->id, err.code, err.text, true);
		return;
	}
	server_conn_set_hello_done(c);
	hr.major = WIRE_MAJOR;
	hr.minor = WIRE_MINOR;
	hr.software = PACKAGE_STRING;
	hr.identity = (char *)p->name;
	hr.role = (char *)role_name(p->role);
	/* So that cohort-mux refuses an oversized request itself instead of
	 * letting it close the connection it shares between clients. */
	hr.has_max_frame = true;
	hr.max_frame = (uint32_t)server_max_frame(rpc->srv);
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_HELLO_REPLY;
	env.hello_reply = &hr;
	rpc_send(rpc, c, &env, false);
}

/* Could spec ever run on the nodes the controller knows (feasible.h)? */
static int
rpc_submit_feasible(const struct rpc *rpc, const struct job_spec *spec,
    struct cerr *err)
{
	struct feasible_input in;
	struct feasible_node *fn;
	const char **feat;
	struct node **all;
	size_t i, n;
	unsigned g;
	int rc;

	all = nodes_all(rpc->nodes, &n);
	if (n == 0)
		return 0;
	fn = calloc(n, sizeof(*fn));
	feat = calloc(n * FEATURES_MAX + 1, sizeof(*feat));
	if (fn == NULL || feat == NULL) {
		free(fn);
		free(feat);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	for (i = 0; i < n; i++) {
		const struct inventory *inv = all[i]->inv;

		fn[i].name = all[i]->name;
		fn[i].ngpus = inv->ngpus;
		fn[i].model = inv->ngpus > 0 ? inv->gpus[0].model : NULL;
		fn[i].ncpus = inv->ncpus;
		fn[i].memory_mb = inv->memory_mb;
		for (g = 0; g < inv->ngpus; g++)
			if (g == 0 || inv->gpus[g].memory_mb <
			    fn[i].gpu_memory_mb)
				fn[i].gpu_memory_mb = inv->gpus[g].memory_mb;
		fn[i].features = feat + i * FEATURES_MAX;
		fn[i].nfeatures = node_features(all[i], feat + i *
		    FEATURES_MAX);
	}
	in.nodes = fn;
	in.nnodes = n;
	in.topo = rpc->topo;
	rc = feasible_check(&in, spec, err);
	free(fn);
	free(feat);
	return rc;
}

/* The commit that made a submitted job durable, for a launch path's
 * timeline (tests/bench/timeline.sh); the id rides in the pointer. */
static void
rpc_submit_committed_cb(void *arg, bool committed)
{
	if (committed)
		log_debug("job %" PRIu64 ": submit committed",
		    (uint64_t)(uintptr_t)arg);
}

/* Only at debug level: the wait costs a queued item per submit. */
static void
rpc_submit_log_commit(struct rpc *rpc, uint64_t id)
{
	if (log_get_level() < LOG_LEVEL_DEBUG || rpc->txq == NULL ||
	    sizeof(uintptr_t) < sizeof(id))
		return;
	(void)txq_defer(rpc->txq, rpc_submit_committed_cb,
	    (void *)(uintptr_t)id);
}

static void
rpc_submit(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__SubmitReply sr = COHORT__V1__SUBMIT_REPLY__INIT;
	struct job_spec spec;
	struct cerr err;
	uint64_t id;

	cerr_clear(&err);
	if (wire_spec_from_pb(req->submit->spec, &spec, &err) == -1)
		goto fail;
	if (spec.idem_key != NULL) {
		if (wire_spec_fingerprint(req->submit->spec,
		    spec.idem_fp) == -1) {
			job_spec_clear(&spec);
			cerr_set(&err, ERR_INTERNAL, "out of memory");
			goto fail;
		}
		spec.has_idem_fp = true;
	}
	/* A submit sent again (its key already made a job, for the same
	 * request) is answered as the first was, whatever changed since
	 * (nodes, limits). */
	switch (jobs_submit_existing(rpc->jobs, server_conn_peer(c), &spec,
	    &id, &err)) {
	case 1:
		job_spec_clear(&spec);
		sr.has_existing = sr.existing = true;
		goto reply;
	case -1:
		job_spec_clear(&spec);
		goto fail;
	}
	if (rpc_submit_feasible(rpc, &spec, &err) == -1) {
		job_spec_clear(&spec);
		goto fail;
	}
	if (jobs_submit(rpc->jobs, server_conn_peer(c), &spec, clock_now_ms(),
	    &id, &err) == -1)
		goto fail;
	rpc_submit_log_commit(rpc, id);
	cluster_changed(rpc->cluster);
reply:
	sr.job_id = id;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_SUBMIT_REPLY;
	env.submit_reply = &sr;
	rpc_send(rpc, c, &env, false);
	return;
fail:
	rpc_error(rpc, c, req->id, err.code, err.text, false);
}

bool
rpc_may_see_private(const struct rpc *rpc, const struct peer *who,
    const struct job *job)
{
	return !rpc->private_data || who->role == ROLE_ADMIN ||
	    strcmp(who->name, job->user) == 0;
}

/* How many items a listing request may get: its limit, if any, within
 * the controller's page size. */
size_t
rpc_page_max(const struct rpc *rpc, bool has_limit, uint32_t limit)
{
	size_t max = rpc->page_size > 0 ? rpc->page_size : 1;

	return has_limit && limit > 0 && limit < max ? limit : max;
}

static void
rpc_list_jobs(struct rpc *rpc, struct conn *c,
    const Cohort__V1__Envelope *req)
{
	const Cohort__V1__ListJobsRequest *lr = req->list_jobs;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__ListJobsReply reply = COHORT__V1__LIST_JOBS_REPLY__INIT;
	Cohort__V1__Job *pbs = NULL, **ptrs = NULL;
	Cohort__V1__JobSpec *specs = NULL;
	Cohort__V1__Goodput *gps = NULL;
	struct job_goodput_view gv;
	int64_t now = clock_now_ms();
	struct jobs_filter f = { 0 };
	const struct job **list = NULL;
	size_t i, n = 0, max, sz, bytes = 0;
	uint64_t next = 0;
	bool more, cut = false;
	char text[160];

	f.all = lr->has_all && lr->all;
	f.user = lr->user;
	f.array_id = lr->has_array_id ? lr->array_id : 0;
	if (lr->has_state) {
		if (wire_state_from_pb(lr->state, &f.state) == -1) {
			rpc_error(rpc, c, req->id, ERR_INVALID,
			    "unknown job state in filter", false);
			return;
		}
		f.has_state = true;
	}
	if (rpc_list_history(lr, &f, text, sizeof(text)) == -1) {
		rpc_error(rpc, c, req->id, ERR_INVALID, text, false);
		return;
	}
	max = rpc_page_max(rpc, lr->has_limit, lr->limit);
	if ((list = calloc(max, sizeof(*list))) == NULL ||
	    (pbs = calloc(max, sizeof(*pbs))) == NULL ||
	    (specs = calloc(max, sizeof(*specs))) == NULL ||
	    (gps = calloc(max, sizeof(*gps))) == NULL ||
	    (ptrs = calloc(max, sizeof(*ptrs))) == NULL) {
		rpc_error(rpc, c, req->id, ERR_INTERNAL, "out of memory", false);
		goto out;
	}
	n = jobs_page(rpc->jobs, &f, lr->has_after_id ? lr->after_id : 0,
	    list, max, max * JOBS_PAGE_SCAN_PER_ITEM, &more, &next);
	for (i = 0; i < n; i++) {
		if (wire_job_to_pb(list[i], &pbs[i], &specs[i]) == -1) {
			rpc_error(rpc, c, req->id, ERR_INTERNAL,
			    "out of memory", false);
			n = i;
			goto out;
		}
		goodput_view(list[i], now, &gv);
		wire_goodput_to_pb(&gv, &gps[i]);
		pbs[i].goodput = &gps[i];
		if (!rpc_may_see_private(rpc, server_conn_peer(c), list[i]))
			wire_job_redact(&pbs[i]);
		/* A page also stops at a few MiB: jobs with big scripts
		 * come fewer at a time. */
		sz = protobuf_c_message_get_packed_size(&pbs[i].base);
		if (i > 0 && bytes + sz > RPC_PAGE_BYTES) {
			wire_job_pb_release(&pbs[i]);
			n = i;
			more = cut = true;
			break;
		}
		bytes += sz;
		ptrs[i] = &pbs[i];
	}
	reply.n_jobs = n;
	reply.jobs = ptrs;
	reply.has_has_more = 1;
	reply.has_more = more;
	/* After a page cut at RPC_PAGE_BYTES, the last job it holds; after
	 * one cut by the scan bound (even empty), the last job examined. */
	if (cut)
		next = list[n - 1]->id;
	reply.has_next_after = n > 0 || more;
	reply.next_after = next;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_LIST_JOBS_REPLY;
	env.list_jobs_reply = &reply;
	rpc_send(rpc, c, &env, false);
out:
	for (i = 0; i < n && pbs != NULL; i++)
		wire_job_pb_release(&pbs[i]);
	free(ptrs);
	free(specs);
	free(gps);
	free(pbs);
	free(list);
}

static void
rpc_get_job(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__GetJobReply reply = COHORT__V1__GET_JOB_REPLY__INIT;
	Cohort__V1__Straggler sg[STRAGGLER_FOUND_MAX];
	Cohort__V1__Straggler *sgp[STRAGGLER_FOUND_MAX];
	const struct straggler_found *f = NULL;
	Cohort__V1__Job pb;
	Cohort__V1__JobSpec spec;
	Cohort__V1__Goodput gpb;
	struct job_goodput_view gv;
	const struct job *job;
	char text[64];
	size_t i, nf = 0;

	if ((job = jobs_get(rpc->jobs, req->get_job->job_id)) == NULL) {
		snprintf(text, sizeof(text), "no job %" PRIu64,
		    req->get_job->job_id);
		rpc_error(rpc, c, req->id, ERR_NOT_FOUND, text, false);
		return;
	}
	if (wire_job_to_pb(job, &pb, &spec) == -1) {
		rpc_error(rpc, c, req->id, ERR_INTERNAL, "out of memory", false);
		return;
	}
	goodput_view(job, clock_now_ms(), &gv);
	wire_goodput_to_pb(&gv, &gpb);
	pb.goodput = &gpb;
	if (!rpc_may_see_private(rpc, server_conn_peer(c), job))
		wire_job_redact(&pb);
	else if (job->image_digest[0] != '\0')
		pb.image_digest = (char *)job->image_digest;
	/* Slow ranks found (straggler.c): public, as nodes are. */
	if (rpc->cluster != NULL)
		f = straggler_list(rpc->cluster, job->id, &nf);
	for (i = 0; i < nf && i < STRAGGLER_FOUND_MAX; i++) {
		cohort__v1__straggler__init(&sg[i]);
		sg[i].rank = f[i].rank;
		sg[i].node = (char *)f[i].node;
		sg[i].has_attempt = true;
		sg[i].attempt = f[i].attempt;
		sg[i].has_median_ms = true;
		sg[i].median_ms = f[i].median_ms;
		sg[i].has_peers_ms = true;
		sg[i].peers_ms = f[i].peers_ms;
		sg[i].has_time_ms = true;
		sg[i].time_ms = f[i].time_ms;
		sg[i].has_replaced = true;
		sg[i].replaced = f[i].replaced;
		sgp[i] = &sg[i];
	}
	pb.n_stragglers = i;
	pb.stragglers = sgp;
	reply.job = &pb;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_GET_JOB_REPLY;
	env.get_job_reply = &reply;
	rpc_send(rpc, c, &env, false);
	pb.n_stragglers = 0;
	pb.stragglers = NULL;
	pb.image_digest = NULL;
	wire_job_pb_release(&pb);
}

/* `cohort queues`: the tree, from the jobs holding GPUs and those
 * waiting. Anyone may see it: names and counts, nothing private. */
static void
rpc_queues(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__QueuesReply reply = COHORT__V1__QUEUES_REPLY__INIT;
	Cohort__V1__QueueRow *pbs = NULL, **ptrs = NULL;
	const struct jobs_filter live = { .all = false };
	const struct job **list = NULL;
	struct queue_row *rows = NULL;
	size_t i, n = 0, nrows = 0;

	if (rpc->queues == NULL) {
		rpc_error(rpc, c, req->id, ERR_UNAVAILABLE,
		    "this controller has no queues", false);
		return;
	}
	if (jobs_list(rpc->jobs, &live, &list, &n) == -1 ||
	    queues_report_live(rpc->queues, list, n, nodes_max_gpus(rpc->nodes),
	    clock_now_ms(), &rows, &nrows) == -1 ||
	    (pbs = calloc(nrows, sizeof(*pbs))) == NULL ||
	    (ptrs = calloc(nrows, sizeof(*ptrs))) == NULL)
		goto nomem;
	for (i = 0; i < nrows; i++) {
		Cohort__V1__QueueRow *p = &pbs[i];

		cohort__v1__queue_row__init(p);
		p->name = rows[i].name;
		p->parent = rows[i].parent[0] ? rows[i].parent : NULL;
		p->has_depth = p->has_nominal_unlimited = p->has_used = 1;
		p->depth = rows[i].depth;
		p->nominal_unlimited = rows[i].nominal == SCHED_UNLIMITED;
		p->has_nominal = !p->nominal_unlimited;
		p->nominal = p->has_nominal ? rows[i].nominal : 0;
		p->used = rows[i].used;
		p->has_borrowed = p->has_lent = p->has_pending = 1;
		p->borrowed = rows[i].borrowed;
		p->lent = rows[i].lent;
		p->pending = rows[i].pending;
		p->has_running_jobs = p->has_pending_jobs = 1;
		p->running_jobs = rows[i].running_jobs;
		p->pending_jobs = rows[i].pending_jobs;
		p->has_weight = p->has_factor = p->has_from_above = 1;
		p->weight = rows[i].weight;
		p->factor = rows[i].factor;
		p->from_above = rows[i].from_above;
		ptrs[i] = p;
	}
	reply.n_queues = nrows;
	reply.queues = ptrs;
	reply.has_configured = 1;
	reply.configured = queues_configured(rpc->queues);
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_QUEUES_REPLY;
	env.queues_reply = &reply;
	rpc_send(rpc, c, &env, false);
	goto out;
nomem:
	rpc_error(rpc, c, req->id, ERR_INTERNAL, "out of memory", false);
out:
	free(ptrs);
	free(pbs);
	free(rows);
	free(list);
}

#define ANYONE (ROLE_USER | ROLE_ADMIN | ROLE_AGENT | ROLE_CONTROLLER)
#define PEOPLE (ROLE_USER | ROLE_ADMIN)

static const struct rpc_handler rpc_handlers[] = {
	{ COHORT__V1__ENVELOPE__BODY_HELLO, ANYONE, rpc_hello },
	{ COHORT__V1__ENVELOPE__BODY_SUBMIT, PEOPLE, rpc_submit },
	{ COHORT__V1__ENVELOPE__BODY_LIST_JOBS, PEOPLE, rpc_list_jobs },
	{ COHORT__V1__ENVELOPE__BODY_GET_JOB, PEOPLE, rpc_get_job },
	{ COHORT__V1__ENVELOPE__BODY_CANCEL, PEOPLE, rpc_cancel },
	{ COHORT__V1__ENVELOPE__BODY_LOGS, PEOPLE, rpc_logs },
	{ COHORT__V1__ENVELOPE__BODY_LIST_NODES, PEOPLE, rpc_list_nodes },
	{ COHORT__V1__ENVELOPE__BODY_GET_NODE, PEOPLE, rpc_get_node },
	{ COHORT__V1__ENVELOPE__BODY_DRAIN, ROLE_ADMIN, rpc_drain },
	{ COHORT__V1__ENVELOPE__BODY_RESUME, ROLE_ADMIN, rpc_resume },
	{ COHORT__V1__ENVELOPE__BODY_DELETE_NODE, ROLE_ADMIN,
	  rpc_delete_node },
	{ COHORT__V1__ENVELOPE__BODY_EVENTS, PEOPLE, rpc_events },
	{ COHORT__V1__ENVELOPE__BODY_QUEUES, PEOPLE, rpc_queues },
	{ COHORT__V1__ENVELOPE__BODY_HOLD, PEOPLE, rpc_hold },
	{ COHORT__V1__ENVELOPE__BODY_REQUEUE, PEOPLE, rpc_requeue },
	{ COHORT__V1__ENVELOPE__BODY_UPDATE, PEOPLE, rpc_update },
	{ COHORT__V1__ENVELOPE__BODY_USAGE, PEOPLE, rpc_usage },
	{ COHORT__V1__ENVELOPE__BODY_STEP_CREATE, PEOPLE, rpc_step_create },
	{ COHORT__V1__ENVELOPE__BODY_STEP_STATUS, PEOPLE, rpc_step_status },
	{ COHORT__V1__ENVELOPE__BODY_STEP_SIGNAL, PEOPLE, rpc_step_signal },
	{ COHORT__V1__ENVELOPE__BODY_LIST_STEPS, PEOPLE, rpc_list_steps },
	{ COHORT__V1__ENVELOPE__BODY_ALLOC, PEOPLE, rpc_alloc },
	{ COHORT__V1__ENVELOPE__BODY_STEP_INPUT, PEOPLE, rpc_step_input },
	{ COHORT__V1__ENVELOPE__BODY_REGISTER, ROLE_AGENT, rpc_register },
	{ COHORT__V1__ENVELOPE__BODY_HEARTBEAT, ROLE_AGENT, rpc_heartbeat },
	{ COHORT__V1__ENVELOPE__BODY_TASK_EXIT, ROLE_AGENT, rpc_task_exit },
	{ COHORT__V1__ENVELOPE__BODY_MEMBERS, ROLE_ADMIN | ROLE_CONTROLLER,
	  rpc_members },
	{ COHORT__V1__ENVELOPE__BODY_BACKUP, ROLE_ADMIN | ROLE_CONTROLLER,
	  rpc_backup },
};
_Static_assert(sizeof(rpc_handlers) / sizeof(rpc_handlers[0]) == RPC_NTYPES,
    "RPC_NTYPES (rpc.h) counts the handler table's entries");

/* A line about a refused request: a peer may send as many as it likes,
 * so at most RPC_REFUSAL_LINES per 10 s, then one that counts the rest. */
#define RPC_REFUSAL_LINES 20

static void
rpc_log_refusal(struct rpc *rpc, struct conn *c, const char *text)
{
	unsigned long left_out;

	if (!ratelim_allow(&rpc->refusal_log, clock_now_ms(),
	    RPC_REFUSAL_LINES, 10000, &left_out))
		return;
	if (left_out > 0)
		log_info("conn %" PRIu64 " (%s): request refused: %s (and %lu "
		    "more refusals not logged)", server_conn_id(c),
		    server_conn_peer(c)->name, text, left_out);
	else
		log_info("conn %" PRIu64 " (%s): request refused: %s",
		    server_conn_id(c), server_conn_peer(c)->name, text);
}

const char *
rpc_type_name(size_t i)
{
	return i < RPC_NTYPES ? wire_body_name(rpc_handlers[i].body) : NULL;
}

const struct histogram *
rpc_latency(const struct rpc *rpc, size_t i)
{
	return &rpc->latency[i];
}

static void
rpc_dispatch_one(struct rpc *rpc, struct conn *c,
    const Cohort__V1__Envelope *env)
{
	const struct peer *p = server_conn_peer(c);
	const struct rpc_handler *h = NULL;
	const char *what;
	char text[160];
	size_t i;

	/* A string that is not text (lib/frame.c took the body away). */
	if ((what = frame_refusal(env)) != NULL) {
		rpc_log_refusal(rpc, c, what);
		rpc_error(rpc, c, env->id, ERR_INVALID, what, false);
		return;
	}
	what = wire_body_name(env->body_case);
	/* Answers to the controller's own commands come from agents. */
	if (p->role == ROLE_AGENT && server_conn_hello_done(c) &&
	    agentcmd_on_reply(rpc->agentcmd, server_conn_id(c), env))
		return;
	for (i = 0; i < sizeof(rpc_handlers) / sizeof(rpc_handlers[0]); i++)
		if (rpc_handlers[i].body == env->body_case)
			h = &rpc_handlers[i];
	if (h == NULL) {
		/* A reply type or an unknown body: the peer is confused. */
		snprintf(text, sizeof(text), "unexpected message '%s'", what);
		rpc_error(rpc, c, env->id, ERR_PROTOCOL, text, true);
		return;
	}
	if (p->role == ROLE_NONE) {
		rpc_error(rpc, c, env->id, ERR_DENIED, "not identified", true);
		return;
	}
	/* A replica that does not lead sends everyone to the leader. */
	if (rpc->repl != NULL && !rpc->serving) {
		rpc_not_leader(rpc, c, env->id);
		return;
	}
	/* Another replica's certificate: Hello, Members (--join) and
	 * Backup (cohortd --backup) only. */
	if (p->role == ROLE_CONTROLLER &&
	    env->body_case != COHORT__V1__ENVELOPE__BODY_HELLO &&
	    env->body_case != COHORT__V1__ENVELOPE__BODY_MEMBERS &&
	    env->body_case != COHORT__V1__ENVELOPE__BODY_BACKUP) {
		snprintf(text, sizeof(text), "controller '%s' may not send "
		    "'%s'", p->name, what);
		rpc_error(rpc, c, env->id, ERR_DENIED, text, true);
		return;
	}
	if (!server_conn_hello_done(c) &&
	    env->body_case != COHORT__V1__ENVELOPE__BODY_HELLO) {
		snprintf(text, sizeof(text), "'%s' before hello", what);
		rpc_error(rpc, c, env->id, ERR_PROTOCOL, text, true);
		return;
	}
	if ((h->roles & p->role) == 0) {
		snprintf(text, sizeof(text), "%s '%s' may not send '%s'",
		    role_name(p->role), p->name, what);
		rpc_log_refusal(rpc, c, text);
		rpc_error(rpc, c, env->id, ERR_DENIED, text, false);
		return;
	}
	h->fn(rpc, c, env);
	/* The agent's deadline ends once a node is bound to it. */
	if (env->body_case == COHORT__V1__ENVELOPE__BODY_REGISTER &&
	    nodes_by_conn(rpc->nodes, server_conn_id(c)) != NULL)
		server_conn_set_registered(c);
}

/* Times the request by its type (a bounded set: the table's entries,
 * never a peer's or a job's name). Its first reply ends the time in
 * rpc_reply_cb, after the commit it waits for; a request answered by
 * none (most heartbeats) ends here; one answered later (logs) carries
 * its timing along. Replies from agents to the controller's own
 * commands are not requests and are not timed. */
void
rpc_dispatch(struct conn *c, const Cohort__V1__Envelope *env, void *arg)
{
	struct rpc *rpc = arg;
	struct rpc_timing none = { 0, 0 }, saved;
	size_t i;

	saved = rpc_timing_swap(rpc, none);
	for (i = 0; i < RPC_NTYPES; i++)
		if (rpc_handlers[i].body == env->body_case) {
			rpc->cur.type = (unsigned)i + 1;
			rpc->cur.t0_us = clock_mono_us();
		}
	rpc_dispatch_one(rpc, c, env);
	rpc_observe(rpc, &rpc->cur);
	rpc_timing_swap(rpc, saved);
}

void
rpc_conn_closed(uint64_t cid, void *arg)
{
	struct rpc *rpc = arg;

	agentcmd_conn_closed(rpc->agentcmd, cid);
	cluster_conn_closed(rpc->cluster, cid);
}
