/* Fault recovery (daemon/controller/domain/recovery.c) in virtual time: health
 * verdicts, XIDs, checkpoints, drains and resumes, evacuation, spares,
 * elastic shrink and growth, hangs and the restart budget. On the real
 * domain with an in-memory store and a recording outbox
 * (tests/domain/domain.h). */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/recovery.h"
#include "daemon/controller/store/store.h"
#include "tests/domain/domain.h"

/* The node of a job's node rank (tests/domain/domain.h). */
static const char *(*const rank_node)(const struct job *, unsigned) =
    domain_rank_node;
static struct domain D;
static const struct peer admin = { "root", ROLE_ADMIN };

#define EXIT(code) ((code) << 8)

static void
add_nodes(unsigned n)
{
	struct cerr err;

	ck_assert_msg(domain_add_nodes(&D, n, 4, &err) == 0, "add nodes: %s",
	    err.text);
}

static void
setup(void)
{
	struct cerr err;

	ck_assert_msg(domain_open(&D, NULL, &err) == 0, "domain_open: %s",
	    err.text);
	add_nodes(4);
}

static void
teardown(void)
{
	domain_close(&D);
}

static uint64_t
submit(unsigned nodes, unsigned gpus, struct domain_spec *o)
{
	struct cerr err;
	uint64_t id;

	id = domain_submit(&D, "alice", nodes, gpus,
	    o != NULL ? domain_spec_apply : NULL, o, &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	return id;
}

/* Submit, pass, answer every launch: RUNNING on `nodes` nodes. */
static uint64_t
run_spec(unsigned nodes, unsigned gpus, struct domain_spec *o)
{
	uint64_t id = submit(nodes, gpus, o);

	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_uint_eq(domain_job(&D, id)->nplace, nodes);
	return id;
}

static struct cluster_stats
stats(void)
{
	struct cluster_stats cs;

	cluster_stats(D.cl, &cs);
	return cs;
}

/* A node of the cluster that job does not use. */
static const char *
outsider(const struct job *job)
{
	size_t i;

	for (i = 0; i < D.nnodes; i++)
		if (job_node_placement(job, D.nodes[i].name) == NULL)
			return D.nodes[i].name;
	return NULL;
}

/* ---- Health ----------------------------------------------------------- */

/* A FAILED node is drained and its job restarts keeping its healthy
 * nodes at their ranks; the failed rank gets the free node. */
START_TEST(test_health_failed_node)
{
	const struct job *job;
	char r0[PEER_NAME_MAX + 1], r1[PEER_NAME_MAX + 1],
	    r2[PEER_NAME_MAX + 1], free_node[PEER_NAME_MAX + 1];
	const struct node *n;
	size_t mark;
	uint64_t id;

	id = run_spec(3, 0, NULL);
	job = domain_job(&D, id);
	snprintf(r0, sizeof(r0), "%s", rank_node(job, 0));
	snprintf(r1, sizeof(r1), "%s", rank_node(job, 1));
	snprintf(r2, sizeof(r2), "%s", rank_node(job, 2));
	snprintf(free_node, sizeof(free_node), "%s", outsider(job));
	mark = D.ncmds;
	domain_health(&D, r1, HEALTH_FAILED, -1, "ecc errors");
	n = nodes_get(D.ns, r1);
	ck_assert(n->drained);
	ck_assert(n->drain_health);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RESTARTING);
	ck_assert_uint_eq(job->restarts, 1);
	ck_assert_msg(strstr(job->reason, "health FAILED: ecc errors") != NULL,
	    "reason %s", job->reason);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, mark), 3);
	/* The same verdict again changes nothing. */
	domain_health(&D, r1, HEALTH_FAILED, -1, "ecc errors");
	ck_assert_uint_eq(stats().failures, 1);
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_uint_eq(job->attempt, 2);
	ck_assert_str_eq(rank_node(job, 0), r0);
	ck_assert_str_eq(rank_node(job, 1), free_node);
	ck_assert_str_eq(rank_node(job, 2), r2);
}
END_TEST

/* Two jobs share a node; one of its GPUs FAILS: only the job on that GPU
 * moves, the node stays in service, the GPU is not given out again. */
START_TEST(test_health_failed_gpu)
{
	const struct job *a, *b;
	char node[PEER_NAME_MAX + 1];
	unsigned bad, g;
	uint64_t ia, ib;
	size_t i;

	ia = run_spec(1, 2, NULL);
	ib = run_spec(1, 2, NULL);
	a = domain_job(&D, ia);
	b = domain_job(&D, ib);
	ck_assert_str_eq(a->place[0].node, b->place[0].node);
	snprintf(node, sizeof(node), "%s", a->place[0].node);
	bad = a->place[0].gpus[1];
	domain_health(&D, node, HEALTH_FAILED, (int)bad, "xid=79");
	ck_assert(!nodes_get(D.ns, node)->drained);
	ck_assert_int_eq(domain_job(&D, ia)->state, JOB_RESTARTING);
	ck_assert_int_eq(domain_job(&D, ib)->state, JOB_RUNNING);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, ib, 0), 0);
	domain_settle(&D);
	a = domain_job(&D, ia);
	ck_assert_int_eq(a->state, JOB_RUNNING);
	/* The node has one good free GPU left: a moves elsewhere. */
	ck_assert_str_ne(a->place[0].node, node);
	/* A 1-GPU job lands on the node's good GPU, never the failed one. */
	ia = run_spec(1, 1, NULL);
	a = domain_job(&D, ia);
	for (i = 0; i < a->nplace; i++)
		for (g = 0; g < a->place[i].ngpus; g++)
			ck_assert(strcmp(a->place[i].node, node) != 0 ||
			    a->place[i].gpus[g] != bad);
}
END_TEST

static struct domain_spec ckpt = { .checkpoint_dir = "/ckpt", .ckpt_secs = 30 };

/* A DEGRADED node: drained, its jobs asked to checkpoint (their signal
 * to every node), and moved once a newer checkpoint shows, without
 * using up a restart; the restart resumes from it elsewhere. */
START_TEST(test_degraded_checkpoint_then_move)
{
	const struct domain_cmd *c;
	const struct job *job;
	char r0[PEER_NAME_MAX + 1], r1[PEER_NAME_MAX + 1];
	size_t mark;
	uint64_t id;

	id = run_spec(2, 0, &ckpt);
	job = domain_job(&D, id);
	snprintf(r0, sizeof(r0), "%s", rank_node(job, 0));
	snprintf(r1, sizeof(r1), "%s", rank_node(job, 1));
	/* An older checkpoint is known already. */
	domain_checkpoint(&D, r0, id, 1, 50, "/ckpt/step50");
	ck_assert_uint_eq(domain_job(&D, id)->ckpt_step, 50);
	domain_advance(&D, 2000);
	mark = D.ncmds;
	domain_health(&D, r1, HEALTH_DEGRADED, -1, "fan slow");
	ck_assert(nodes_get(D.ns, r1)->drained);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, id, mark), 2);
	c = domain_last(&D, DOMAIN_SIGNAL, id);
	ck_assert_int_eq(c->sig, SIGUSR1);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, mark), 0);
	/* LATEST repeated: not newer, the job stays. */
	domain_checkpoint(&D, r0, id, 1, 50, "/ckpt/step50");
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	domain_advance(&D, 1000);
	domain_checkpoint(&D, r0, id, 1, 60, "/ckpt/step60");
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RESTARTING);
	ck_assert_uint_eq(job->restarts, 0);
	ck_assert_msg(strstr(job->reason, "checkpoint written") != NULL,
	    "reason %s", job->reason);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, mark), 2);
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_ptr_null(job_node_placement(job, r1));
	ck_assert_str_eq(rank_node(job, 0), r0);
	ck_assert_str_eq(domain_last(&D, DOMAIN_LAUNCH, id)->resume,
	    "/ckpt/step60");
	/* The move ended: no deadline fires later. */
	domain_run_for(&D, 40000, 5000);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_uint_eq(domain_job(&D, id)->attempt, 2);
}
END_TEST

/* No new checkpoint: the job moves at the deadline (--checkpoint-secs). */
START_TEST(test_degraded_deadline)
{
	const struct job *job;
	char r1[PEER_NAME_MAX + 1];
	uint64_t id;

	id = run_spec(2, 0, &ckpt);
	snprintf(r1, sizeof(r1), "%s", rank_node(domain_job(&D, id), 1));
	domain_health(&D, r1, HEALTH_DEGRADED, -1, "fan slow");
	domain_run_for(&D, 29000, 1000);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	domain_run_for(&D, 1000, 1000);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RESTARTING);
	ck_assert_uint_eq(job->restarts, 0);
	ck_assert_msg(strstr(job->reason, "deadline") != NULL, "reason %s",
	    job->reason);
}
END_TEST

/* A job without a checkpoint directory has nothing to wait for. */
START_TEST(test_degraded_without_checkpoints_moves_at_once)
{
	char r0[PEER_NAME_MAX + 1];
	uint64_t id;

	id = run_spec(1, 0, NULL);
	snprintf(r0, sizeof(r0), "%s", rank_node(domain_job(&D, id), 0));
	domain_health(&D, r0, HEALTH_DEGRADED, -1, "fan slow");
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESTARTING);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, id, 0), 0);
	domain_settle(&D);
	ck_assert_str_ne(rank_node(domain_job(&D, id), 0), r0);
}
END_TEST

/* A move already under way is not asked for twice (a DEGRADED node then
 * drain --now); a job still launching has no tasks to checkpoint: it
 * moves at once. */
START_TEST(test_evacuation_once_and_launching)
{
	char r0[PEER_NAME_MAX + 1], r1[PEER_NAME_MAX + 1];
	struct cerr err;
	uint64_t id, launching;
	size_t mark;

	id = run_spec(2, 0, &ckpt);
	snprintf(r0, sizeof(r0), "%s", rank_node(domain_job(&D, id), 0));
	snprintf(r1, sizeof(r1), "%s", rank_node(domain_job(&D, id), 1));
	mark = D.ncmds;
	domain_health(&D, r1, HEALTH_DEGRADED, -1, "fan slow");
	ck_assert_int_eq(recovery_drain(D.cl, &admin, r0, "also", true, D.now,
	    &err), 0);
	domain_commit(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, id, mark), 2);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	/* A 1-node job placed but not yet answered. */
	launching = submit(1, 0, &ckpt);
	domain_pass(&D);
	ck_assert_uint_eq(domain_job(&D, launching)->nplace, 1);
	mark = D.ncmds;
	ck_assert_int_eq(recovery_drain(D.cl, &admin,
	    domain_job(&D, launching)->place[0].node, "now", true, D.now, &err),
	    0);
	domain_commit(&D);
	ck_assert_int_eq(domain_job(&D, launching)->state, JOB_RESTARTING);
	ck_assert_uint_eq(domain_job(&D, launching)->restarts, 0);
	ck_assert_uint_eq(domain_job(&D, launching)->nplace, 0);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, launching, mark), 0);
}
END_TEST

/* A DEGRADED GPU moves nothing (it is just not given out again). */
START_TEST(test_degraded_gpu_moves_nothing)
{
	char r0[PEER_NAME_MAX + 1];
	uint64_t id;

	id = run_spec(1, 2, NULL);
	snprintf(r0, sizeof(r0), "%s", rank_node(domain_job(&D, id), 0));
	domain_health(&D, r0, HEALTH_DEGRADED,
	    (int)domain_job(&D, id)->place[0].gpus[0], "ecc corrected");
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert(!nodes_get(D.ns, r0)->drained);
	ck_assert_uint_eq(stats().failures, 0);
}
END_TEST

/* ---- Drain, resume ---------------------------------------------------- */

/* drain --now: like DEGRADED, a planned move (no restart used, even
 * with none allowed). */
START_TEST(test_drain_now)
{
	struct domain_spec o = { .checkpoint_dir = "/ckpt", .ckpt_secs = 30,
	    .max_restarts = -1 };
	const struct job *job;
	char r0[PEER_NAME_MAX + 1];
	struct cerr err;
	size_t mark;
	uint64_t id;

	id = run_spec(2, 0, &o);
	job = domain_job(&D, id);
	snprintf(r0, sizeof(r0), "%s", rank_node(job, 0));
	mark = D.ncmds;
	ck_assert_int_eq(recovery_drain(D.cl, &admin, r0, "maintenance", true,
	    D.now, &err), 0);
	domain_commit(&D);
	ck_assert(nodes_get(D.ns, r0)->drained);
	ck_assert_str_eq(nodes_get(D.ns, r0)->drain_reason, "maintenance");
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, id, mark), 2);
	domain_checkpoint(&D, r0, id, 1, 7, "/ckpt/7");
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RESTARTING);
	ck_assert_msg(strstr(job->reason, "drained by root: maintenance") !=
	    NULL, "reason %s", job->reason);
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_ptr_null(job_node_placement(job, r0));
	ck_assert_uint_eq(job->restarts, 0);
}
END_TEST

/* A plain drain lets jobs finish there and places nothing new; resume
 * gives the node back. */
/* drain --now under a 2-node job that checkpoints only on its signal
 * (USR1, 60 s of grace): both ranks are signalled; the checkpoint comes
 * a second later and the job moves then, not at the deadline, with the
 * node's drain in its reason; it resumes elsewhere from that checkpoint,
 * no restart counted; the node is DRAINED once empty, with its reason,
 * and an admin's resume puts it back. */
START_TEST(test_drain_now_moves_on_checkpoint)
{
	struct domain_spec o = { .checkpoint_dir = "/ckpt", .ckpt_secs = 60 };
	const struct domain_cmd *c;
	const struct job *job;
	char r0[PEER_NAME_MAX + 1];
	struct cerr err;
	size_t mark, i, usr1;
	uint64_t id;

	id = run_spec(2, 0, &o);
	job = domain_job(&D, id);
	snprintf(r0, sizeof(r0), "%s", rank_node(job, 0));
	mark = D.ncmds;
	ck_assert_int_eq(recovery_drain(D.cl, &admin, r0, "maint", true,
	    D.now, &err), 0);
	domain_commit(&D);
	for (i = mark, usr1 = 0; i < D.ncmds; i++)
		usr1 += D.cmds[i].kind == DOMAIN_SIGNAL &&
		    D.cmds[i].job_id == id && D.cmds[i].sig == SIGUSR1;
	ck_assert_uint_eq(usr1, 2);
	ck_assert_str_eq(node_drain_state(nodes_get(D.ns, r0)), "DRAINING");
	domain_advance(&D, 1000);
	domain_pass(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	domain_checkpoint(&D, r0, id, 1, 42, "/ckpt/42");
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RESTARTING);
	ck_assert_msg(strstr(job->reason, "drained by root: maint") != NULL &&
	    strstr(job->reason, "checkpoint written") != NULL, "reason %s",
	    job->reason);
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_ptr_null(job_node_placement(job, r0));
	ck_assert_uint_eq(job->restarts, 0);
	c = domain_last(&D, DOMAIN_LAUNCH, id);
	ck_assert_str_eq(c->resume, "/ckpt/42");
	ck_assert_str_eq(node_drain_state(nodes_get(D.ns, r0)), "DRAINED");
	ck_assert_str_eq(nodes_get(D.ns, r0)->drain_reason, "maint");
	ck_assert_int_eq(recovery_resume(D.cl, &admin, r0, D.now, &err), 0);
	domain_commit(&D);
	ck_assert(!nodes_get(D.ns, r0)->drained);
}
END_TEST

START_TEST(test_drain_and_resume)
{
	char r0[PEER_NAME_MAX + 1];
	struct cerr err;
	uint64_t id, next;
	size_t mark;

	id = run_spec(1, 0, NULL);
	snprintf(r0, sizeof(r0), "%s", rank_node(domain_job(&D, id), 0));
	mark = D.ncmds;
	ck_assert_int_eq(recovery_drain(D.cl, &admin, r0, "later", false,
	    D.now, &err), 0);
	domain_commit(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, id, mark), 0);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, mark), 0);
	ck_assert_str_eq(node_drain_state(nodes_get(D.ns, r0)), "DRAINING");
	ck_assert_int_eq(domain_exit(&D, r0, id, 1, 0, 0, &err), 0);
	/* The node's GPUs are free again once the pass that follows has
	 * recomputed the allocations. */
	domain_pass(&D);
	ck_assert_str_eq(node_drain_state(nodes_get(D.ns, r0)), "DRAINED");
	/* Four whole nodes: one is drained, so the job waits. */
	next = submit(4, 0, NULL);
	domain_pass(&D);
	ck_assert_uint_eq(domain_job(&D, next)->nplace, 0);
	ck_assert_int_eq(recovery_resume(D.cl, &admin, r0, D.now, &err), 0);
	domain_commit(&D);
	ck_assert(!nodes_get(D.ns, r0)->drained);
	domain_pass(&D);
	ck_assert_uint_eq(domain_job(&D, next)->nplace, 4);
	/* Unknown nodes. */
	ck_assert_int_eq(recovery_drain(D.cl, &admin, "nope", "x", false,
	    D.now, &err), -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	ck_assert_int_eq(recovery_resume(D.cl, &admin, "nope", D.now, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
}
END_TEST

/* A drain that came from health is resumed only once the node reports
 * healthy. */
START_TEST(test_resume_after_health)
{
	struct cerr err;

	domain_health(&D, "node02", HEALTH_FAILED, -1, "psu");
	ck_assert(nodes_get(D.ns, "node02")->drained);
	ck_assert_int_eq(recovery_resume(D.cl, &admin, "node02", D.now, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert(nodes_get(D.ns, "node02")->drained);
	domain_health(&D, "node02", HEALTH_OK, -1, "");
	ck_assert_int_eq(recovery_resume(D.cl, &admin, "node02", D.now, &err),
	    0);
	domain_commit(&D);
	ck_assert(!nodes_get(D.ns, "node02")->drained);
}
END_TEST

/* ---- XIDs ------------------------------------------------------------- */

START_TEST(test_xids)
{
	struct xid_report x[17];
	const struct job *a, *b;
	char node[PEER_NAME_MAX + 1];
	struct cluster_stats cs;
	uint64_t ia, ib;
	size_t i;

	ia = run_spec(1, 2, NULL);
	ib = run_spec(1, 2, NULL);
	a = domain_job(&D, ia);
	b = domain_job(&D, ib);
	ck_assert_str_eq(a->place[0].node, b->place[0].node);
	snprintf(node, sizeof(node), "%s", a->place[0].node);
	/* A GPU the node does not have: refused, nothing moves. */
	x[0].gpu = 7;
	x[0].xid = 79;
	domain_xids(&D, node, x, 1);
	cs = stats();
	ck_assert_uint_eq(cs.reports_rejected[REPORT_XID], 1);
	ck_assert_uint_eq(cs.failures, 0);
	ck_assert_int_eq(domain_job(&D, ia)->state, JOB_RUNNING);
	/* Both of a's GPUs, one twice: a fails over once; b runs on. */
	x[0].gpu = a->place[0].gpus[0];
	x[0].xid = 79;
	x[1].gpu = a->place[0].gpus[1];
	x[1].xid = 48;
	x[2] = x[0];
	domain_xids(&D, node, x, 3);
	cs = stats();
	ck_assert_uint_eq(cs.failures, 1);
	a = domain_job(&D, ia);
	ck_assert_int_eq(a->state, JOB_RESTARTING);
	ck_assert_uint_eq(a->restarts, 1);
	ck_assert_msg(strstr(a->reason, "xid=79 (fail-job)") != NULL,
	    "reason %s", a->reason);
	ck_assert_int_eq(domain_job(&D, ib)->state, JOB_RUNNING);
	/* More than 4 per GPU: the rest of the list is refused once. */
	for (i = 0; i < 17; i++) {
		x[i].gpu = 7;
		x[i].xid = 13;
	}
	domain_xids(&D, node, x, 17);
	cs = stats();
	ck_assert_uint_eq(cs.reports_rejected[REPORT_TOO_MANY], 1);
	ck_assert_uint_eq(cs.reports_rejected[REPORT_XID], 17);
	ck_assert_int_eq(domain_job(&D, ib)->state, JOB_RUNNING);
}
END_TEST

/* ---- Checkpoints ------------------------------------------------------ */

START_TEST(test_checkpoints)
{
	struct checkpoint_report r[3];
	const struct job *job;
	char r0[PEER_NAME_MAX + 1], r1[PEER_NAME_MAX + 1];
	uint64_t id;

	id = run_spec(2, 0, &ckpt);
	job = domain_job(&D, id);
	snprintf(r0, sizeof(r0), "%s", rank_node(job, 0));
	snprintf(r1, sizeof(r1), "%s", rank_node(job, 1));
	/* Only rank 0's node names the checkpoint. */
	domain_checkpoint(&D, r1, id, 1, 10, "/ckpt/evil");
	ck_assert(!domain_job(&D, id)->has_ckpt);
	ck_assert_uint_eq(stats().reports_rejected[REPORT_CHECKPOINT], 1);
	/* Another attempt: ignored, not refused. */
	domain_checkpoint(&D, r0, id, 0, 10, "/ckpt/old");
	ck_assert(!domain_job(&D, id)->has_ckpt);
	ck_assert_uint_eq(stats().reports_rejected[REPORT_CHECKPOINT], 1);
	domain_checkpoint(&D, r0, id, 1, 10, "/ckpt/10");
	job = domain_job(&D, id);
	ck_assert(job->has_ckpt);
	ck_assert_uint_eq(job->ckpt_step, 10);
	/* Several in one message: the highest step counts. */
	domain_advance(&D, 1000);
	memset(r, 0, sizeof(r));
	r[0] = (struct checkpoint_report){ id, 1, 30, "/ckpt/30", D.now, 0 };
	r[1] = (struct checkpoint_report){ id, 1, 50, "/ckpt/50", D.now, 0 };
	r[2] = (struct checkpoint_report){ id, 1, 40, "/ckpt/40", D.now, 0 };
	recovery_checkpoints(D.cl, domain_conn(&D, r0), r, 3, D.now);
	domain_commit(&D);
	ck_assert_uint_eq(domain_job(&D, id)->ckpt_step, 50);
	ck_assert_str_eq(domain_job(&D, id)->ckpt_path, "/ckpt/50");
	/* Two jobs in one message, each judged on its own. */
	{
		uint64_t other = run_spec(1, 0, &ckpt);
		const char *n = rank_node(domain_job(&D, other), 0);

		r[0] = (struct checkpoint_report){ other, 1, 3, "/ckpt/o3",
		    D.now, 0 };
		r[1] = (struct checkpoint_report){ id, 1, 55, "/ckpt/55",
		    D.now, 0 };
		recovery_checkpoints(D.cl, domain_conn(&D, n), r, 2, D.now);
		domain_commit(&D);
		ck_assert_uint_eq(domain_job(&D, other)->ckpt_step, 3);
		ck_assert_uint_eq(domain_job(&D, id)->ckpt_step, 50);
		ck_assert_uint_eq(stats().reports_rejected[REPORT_CHECKPOINT],
		    2);
	}
	/* At most one update a second; a later repeat is taken. */
	domain_advance(&D, 500);
	domain_checkpoint(&D, r0, id, 1, 60, "/ckpt/60");
	ck_assert_uint_eq(domain_job(&D, id)->ckpt_step, 50);
	domain_advance(&D, 500);
	domain_checkpoint(&D, r0, id, 1, 60, "/ckpt/60");
	ck_assert_uint_eq(domain_job(&D, id)->ckpt_step, 60);
	/* One held back is not lost when the job fails: the restart resumes
	 * from it. */
	domain_advance(&D, 200);
	domain_checkpoint(&D, r0, id, 1, 70, "/ckpt/70");
	ck_assert_uint_eq(domain_job(&D, id)->ckpt_step, 60);
	domain_health(&D, r1, HEALTH_FAILED, -1, "gone");
	ck_assert_uint_eq(domain_job(&D, id)->ckpt_step, 70);
	domain_settle(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_str_eq(domain_last(&D, DOMAIN_LAUNCH, id)->resume,
	    "/ckpt/70");
}
END_TEST

/* ---- Spares, elastic -------------------------------------------------- */

/* A hot spare is never given to a fresh job; a restart prefers it as the
 * replacement over a free ordinary node. */
START_TEST(test_spare_replacement)
{
	const struct job *job;
	char r0[PEER_NAME_MAX + 1], r1[PEER_NAME_MAX + 1];
	struct cerr err;
	uint64_t id, big;

	ck_assert_uint_ne(domain_add_node(&D, "spare01", 4, true, &err), 0);
	big = submit(5, 0, NULL);
	domain_pass(&D);
	ck_assert_uint_eq(domain_job(&D, big)->nplace, 0);
	ck_assert_int_eq(cluster_cancel(D.cl, &admin, big, D.now,
	    &(enum job_state){ 0 }, &err), 0);
	id = run_spec(2, 0, NULL);
	job = domain_job(&D, id);
	ck_assert_ptr_null(job_node_placement(job, "spare01"));
	snprintf(r0, sizeof(r0), "%s", rank_node(job, 0));
	snprintf(r1, sizeof(r1), "%s", rank_node(job, 1));
	domain_health(&D, r1, HEALTH_FAILED, -1, "gone");
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_str_eq(rank_node(job, 0), r0);
	ck_assert_str_eq(rank_node(job, 1), "spare01");
}
END_TEST

/* An elastic job that loses a node with no replacement restarts on its
 * survivors when they are at least its minimum. */
/* A hot spare is never given to a job that is not restarting: with the
 * other nodes full, a whole-node job waits (a pass known to have run,
 * and time passing) rather than take it. A gang one of whose nodes
 * loses a GPU restarts keeping its healthy node and taking the spare,
 * though a node that is no spare is free too. */
START_TEST(test_spare_only_for_restarts)
{
	const struct job *job;
	char r0[PEER_NAME_MAX + 1], r1[PEER_NAME_MAX + 1];
	struct cerr err;
	uint64_t fill[5], id;
	unsigned i;

	ck_assert_uint_ne(domain_add_node(&D, "spare01", 4, true, &err), 0);
	for (i = 0; i < 5; i++)
		fill[i] = submit(1, 4, NULL);
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	for (i = 0; i < 4; i++) {
		job = domain_job(&D, fill[i]);
		ck_assert_int_eq(job->state, JOB_RUNNING);
		ck_assert_ptr_null(job_node_placement(job, "spare01"));
	}
	domain_run_for(&D, 5000, 1000);
	domain_pass(&D);
	ck_assert_int_eq(domain_job(&D, fill[4])->state, JOB_PENDING);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, fill[4], 0), 0);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(cluster_cancel(D.cl, &admin, fill[i], D.now,
		    &(enum job_state){ 0 }, &err), 0);
	domain_commit(&D);
	domain_settle(&D);
	/* The gang: not on the spare; GPU 0 of rank 1's node fails. */
	id = run_spec(2, 4, NULL);
	job = domain_job(&D, id);
	ck_assert_ptr_null(job_node_placement(job, "spare01"));
	snprintf(r0, sizeof(r0), "%s", rank_node(job, 0));
	snprintf(r1, sizeof(r1), "%s", rank_node(job, 1));
	domain_health(&D, r1, HEALTH_FAILED, 0, "xid=79");
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESTARTING);
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_uint_eq(job->restarts, 1);
	ck_assert_str_eq(rank_node(job, 0), r0);
	ck_assert_str_eq(rank_node(job, 1), "spare01");
}
END_TEST

START_TEST(test_elastic_shrink)
{
	struct domain_spec elastic = { .nodes_min = 2 };
	const struct job *job;
	char r0[PEER_NAME_MAX + 1], r1[PEER_NAME_MAX + 1],
	    r2[PEER_NAME_MAX + 1];
	uint64_t other, id;

	other = run_spec(1, 0, NULL);
	id = run_spec(3, 0, &elastic);
	job = domain_job(&D, id);
	snprintf(r0, sizeof(r0), "%s", rank_node(job, 0));
	snprintf(r1, sizeof(r1), "%s", rank_node(job, 1));
	snprintf(r2, sizeof(r2), "%s", rank_node(job, 2));
	domain_health(&D, r1, HEALTH_FAILED, -1, "gone");
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_uint_eq(job->nplace, 2);
	ck_assert_str_eq(rank_node(job, 0), r0);
	ck_assert_str_eq(rank_node(job, 1), r2);
	ck_assert_uint_eq(domain_last(&D, DOMAIN_LAUNCH, id)->nnodes, 2);
	ck_assert_int_eq(domain_job(&D, other)->state, JOB_RUNNING);
}
END_TEST

/* Whole nodes standing idle with nothing waiting: a running elastic job
 * below its maximum checkpoints, then restarts bigger, keeping its
 * nodes; not while a job waits. */
struct kinds {
	char k[32][16];
	size_t n;
};

static int
kinds_cb(const struct store_event *ev, void *arg)
{
	struct kinds *ks = arg;

	if (ks->n < 32)
		snprintf(ks->k[ks->n++], sizeof(ks->k[0]), "%s", ev->kind);
	return 0;
}

/* The index of kind in ks from from on, or -1. */
static int
kind_at(const struct kinds *ks, const char *kind, size_t from)
{
	size_t i;

	for (i = from; i < ks->n; i++)
		if (strcmp(ks->k[i], kind) == 0)
			return (int)i;
	return -1;
}

/* An elastic 1:3 job on the only three free nodes: one node FAILs and
 * the job restarts at once on the two left, from its checkpoint, rather
 * than wait; it checkpoints at that size; once the node is healed and
 * resumed, the job grows back to three (RESIZING, a checkpoint, a
 * restart that is not counted), from that checkpoint. Its events tell
 * restart, running, resize, running. */
START_TEST(test_elastic_shrink_then_grow_back)
{
	struct domain_spec elastic = { .nodes_min = 1,
	    .checkpoint_dir = "/ckpt", .ckpt_secs = 30 };
	const struct job *job;
	char r0[PEER_NAME_MAX + 1], lost[PEER_NAME_MAX + 1];
	struct kinds ks;
	struct cerr err;
	uint64_t other, id;
	size_t mark;
	int r, z;

	other = run_spec(1, 0, NULL);
	id = run_spec(3, 0, &elastic);
	ck_assert_uint_eq(domain_last(&D, DOMAIN_LAUNCH, id)->nnodes, 3);
	job = domain_job(&D, id);
	snprintf(r0, sizeof(r0), "%s", rank_node(job, 0));
	snprintf(lost, sizeof(lost), "%s", rank_node(job, 2));
	domain_advance(&D, 1000);
	domain_checkpoint(&D, r0, id, 1, 10, "/ckpt/10");
	domain_health(&D, lost, HEALTH_FAILED, -1, "elastic test");
	ck_assert(nodes_get(D.ns, lost)->drained);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESTARTING);
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_uint_eq(job->nplace, 2);
	ck_assert_uint_eq(job->restarts, 1);
	ck_assert_ptr_null(job_node_placement(job, lost));
	ck_assert_str_eq(rank_node(job, 0), r0);
	ck_assert_uint_eq(domain_last(&D, DOMAIN_LAUNCH, id)->nnodes, 2);
	ck_assert_str_eq(domain_last(&D, DOMAIN_LAUNCH, id)->resume,
	    "/ckpt/10");
	/* It runs, and checkpoints, at two. */
	domain_advance(&D, 1000);
	domain_checkpoint(&D, r0, id, 2, 20, "/ckpt/20");
	ck_assert_uint_eq(domain_job(&D, id)->ckpt_step, 20);
	mark = D.ncmds;
	domain_pass(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, id, mark), 0);
	/* Healed and resumed: it grows back, after a checkpoint. */
	domain_health(&D, lost, HEALTH_OK, -1, "");
	ck_assert_int_eq(recovery_resume(D.cl, &admin, lost, D.now, &err), 0);
	domain_commit(&D);
	domain_pass(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESIZING);
	ck_assert_uint_gt(domain_count(&D, DOMAIN_SIGNAL, id, mark), 0);
	domain_advance(&D, 1000);
	domain_checkpoint(&D, r0, id, 2, 30, "/ckpt/30");
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_uint_eq(job->nplace, 3);
	ck_assert_uint_eq(job->restarts, 1);
	ck_assert_uint_eq(domain_last(&D, DOMAIN_LAUNCH, id)->nnodes, 3);
	ck_assert_str_eq(domain_last(&D, DOMAIN_LAUNCH, id)->resume,
	    "/ckpt/30");
	ck_assert_int_eq(domain_job(&D, other)->state, JOB_RUNNING);
	memset(&ks, 0, sizeof(ks));
	ck_assert_int_eq(store_events_list(D.st, 0, id, NULL, NULL, 0, 0,
	    kinds_cb, &ks, &err), 0);
	r = kind_at(&ks, "restart", 0);
	ck_assert_int_ge(r, 0);
	z = kind_at(&ks, "resize", (size_t)r);
	ck_assert_int_gt(z, r);
	ck_assert_int_gt(kind_at(&ks, "running", (size_t)r), r);
	ck_assert_int_lt(kind_at(&ks, "running", (size_t)r), z);
	ck_assert_int_gt(kind_at(&ks, "running", (size_t)z), z);
}
END_TEST

START_TEST(test_elastic_grow)
{
	struct domain_spec elastic = { .nodes_min = 1,
	    .checkpoint_dir = "/ckpt", .ckpt_secs = 30 };
	const struct job *job;
	char r0[PEER_NAME_MAX + 1], r1[PEER_NAME_MAX + 1];
	struct cerr err;
	uint64_t blocker, id, waiting;
	size_t mark;

	blocker = run_spec(2, 0, NULL);
	id = submit(4, 0, &elastic);		/* 1..4 nodes */
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_uint_eq(job->nplace, 2);
	snprintf(r0, sizeof(r0), "%s", rank_node(job, 0));
	snprintf(r1, sizeof(r1), "%s", rank_node(job, 1));
	/* The blocker ends while a 3-node job waits: it starts, nothing
	 * grows... */
	waiting = submit(3, 0, NULL);
	domain_pass(&D);
	ck_assert_uint_eq(domain_job(&D, waiting)->nplace, 0);
	ck_assert_int_eq(domain_exit(&D, rank_node(domain_job(&D, blocker),
	    0), blocker, 1, 0, 0, &err), 0);
	ck_assert_int_eq(domain_exit(&D, rank_node(domain_job(&D, blocker),
	    1), blocker, 1, 1, 0, &err), 0);
	ck_assert_int_eq(domain_job(&D, blocker)->state, JOB_COMPLETED);
	mark = D.ncmds;
	domain_pass(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, id, mark), 0);
	/* ...until it is cancelled: then the idle nodes go to the elastic
	 * job, after a checkpoint. */
	ck_assert_int_eq(cluster_cancel(D.cl, &admin, waiting, D.now,
	    &(enum job_state){ 0 }, &err), 0);
	domain_commit(&D);
	domain_pass(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESIZING);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, id, mark), 2);
	domain_advance(&D, 1000);
	domain_checkpoint(&D, r0, id, 1, 5, "/ckpt/5");
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RESTARTING);
	ck_assert_uint_eq(job->restarts, 0);
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_uint_eq(job->nplace, 4);
	ck_assert_str_eq(rank_node(job, 0), r0);
	ck_assert_str_eq(rank_node(job, 1), r1);
	ck_assert_str_eq(domain_last(&D, DOMAIN_LAUNCH, id)->resume,
	    "/ckpt/5");
	/* At its maximum: no more growth. */
	mark = D.ncmds;
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, id, mark), 0);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
}
END_TEST

/* An elastic job grows one idle node at a time as nodes come free: a
 * growth already tried with this many idle nodes is not tried again,
 * but once the job has grown, a node idle again is a new chance. */
START_TEST(test_elastic_grows_again)
{
	struct domain_spec elastic = { .nodes_min = 1 };
	const struct job *job;
	uint64_t b1, b2, id;
	struct cerr err;

	b1 = run_spec(1, 0, NULL);
	b2 = run_spec(1, 0, NULL);
	id = submit(4, 0, &elastic);	/* 1..4 nodes, no checkpoints */
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	ck_assert_uint_eq(domain_job(&D, id)->nplace, 2);
	/* b1 ends: one node idle, the job restarts on 3 at once. */
	ck_assert_int_eq(domain_exit(&D, rank_node(domain_job(&D, b1), 0),
	    b1, 1, 0, 0, &err), 0);
	domain_pass(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RESTARTING);
	ck_assert_uint_eq(job->restarts, 0);
	domain_settle(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_uint_eq(domain_job(&D, id)->nplace, 3);
	/* Nothing idle: passes leave it. */
	domain_pass(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	/* b2 ends: one node idle again, for a job of 3 now. */
	ck_assert_int_eq(domain_exit(&D, rank_node(domain_job(&D, b2), 0),
	    b2, 1, 0, 0, &err), 0);
	domain_pass(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESTARTING);
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_uint_eq(job->nplace, 4);
}
END_TEST

/* An idle node the job cannot use (too few GPUs) costs one try, not a
 * restart per pass. */
START_TEST(test_elastic_grow_tried_once)
{
	struct domain_spec elastic = { .nodes_min = 1 };
	struct cerr err;
	uint64_t id;
	int i;

	run_spec(1, 0, NULL);
	run_spec(1, 0, NULL);
	ck_assert_uint_ne(domain_add_node(&D, "small", 2, false, &err), 0);
	id = submit(4, 4, &elastic);
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	ck_assert_uint_eq(domain_job(&D, id)->nplace, 2);
	/* "small" stands idle: the next pass tries to grow the job once;
	 * it restarts on its 2 nodes, "small" being too small. */
	domain_pass(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESTARTING);
	domain_settle(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_uint_eq(domain_job(&D, id)->nplace, 2);
	for (i = 0; i < 3; i++)
		domain_pass(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_uint_le(domain_job(&D, id)->attempt, 2);
}
END_TEST

/* A job whose start is backing off is waiting too: idle nodes it will
 * need are not given to an elastic job's growth meanwhile. */
START_TEST(test_no_growth_while_a_start_backs_off)
{
	struct domain_spec elastic = { .nodes_min = 1 };
	struct cerr err, busy;
	uint64_t b, id, w;

	b = run_spec(2, 0, NULL);
	id = submit(4, 0, &elastic);
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	ck_assert_uint_eq(domain_job(&D, id)->nplace, 2);
	/* b ends and w arrives at once: w is placed on the free nodes, but
	 * a node refuses, for now. */
	ck_assert_int_eq(domain_exit(&D, rank_node(domain_job(&D, b), 0), b,
	    1, 0, 0, &err), 0);
	ck_assert_int_eq(domain_exit(&D, rank_node(domain_job(&D, b), 1), b,
	    1, 1, 0, &err), 0);
	w = submit(2, 0, NULL);
	domain_pass(&D);
	ck_assert_uint_eq(domain_job(&D, w)->nplace, 2);
	cerr_set(&busy, ERR_UNAVAILABLE, "busy");
	domain_answer_job(&D, w, NULL, &busy);
	ck_assert(jobs_backing_off(domain_job(&D, w), D.now));
	/* Passes during its back-off leave the elastic job alone. */
	domain_pass(&D);
	domain_pass(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_uint_eq(domain_job(&D, id)->attempt, 1);
	/* Its back-off over, it starts on them. */
	domain_advance(&D, 1000);
	domain_settle(&D);
	ck_assert_int_eq(domain_job(&D, w)->state, JOB_RUNNING);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
}
END_TEST

/* The controller restarts while an elastic job waits for its checkpoint
 * to grow (that wait was in memory): it must not stay RESIZING for
 * good, out of reach of time limits, hangs and growth. */
START_TEST(test_restart_while_resizing)
{
	struct domain_spec elastic = { .nodes_min = 1,
	    .checkpoint_dir = "/ckpt", .ckpt_secs = 30 };
	struct cerr err;
	uint64_t b, id;
	size_t i;

	b = run_spec(2, 0, NULL);
	id = submit(4, 0, &elastic);
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(domain_exit(&D, rank_node(domain_job(&D, b), 0), b,
	    1, 0, 0, &err), 0);
	ck_assert_int_eq(domain_exit(&D, rank_node(domain_job(&D, b), 1), b,
	    1, 1, 0, &err), 0);
	domain_pass(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESIZING);
	ck_assert_msg(domain_restart(&D, &err) == 0, "restart: %s", err.text);
	for (i = 0; i < D.nnodes; i++)
		ck_assert_uint_ne(domain_reconnect(&D, D.nodes[i].name, NULL,
		    0, &err), 0);
	domain_run_for(&D, 31000, 1000);
	domain_settle(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_uint_eq(domain_job(&D, id)->nplace, 4);
	ck_assert_uint_eq(domain_job(&D, id)->restarts, 0);
}
END_TEST

/* ---- Hangs, restart budget -------------------------------------------- */

START_TEST(test_hang_detection)
{
	struct domain_spec hang = { .hang_timeout_s = 30 };
	const struct job *job;
	char r1[PEER_NAME_MAX + 1], out[PEER_NAME_MAX + 1];
	uint64_t id;

	id = run_spec(2, 0, &hang);
	job = domain_job(&D, id);
	snprintf(r1, sizeof(r1), "%s", rank_node(job, 1));
	snprintf(out, sizeof(out), "%s", outsider(job));
	domain_run_for(&D, 20000, 5000);
	domain_progress(&D, r1, id, 1);
	domain_run_for(&D, 25000, 5000);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	/* Progress from a node that is not the job's keeps nothing alive. */
	domain_progress(&D, out, id, 1);
	ck_assert_uint_eq(stats().reports_rejected[REPORT_PROGRESS], 1);
	/* Nor does an old attempt's (ignored, not refused). */
	domain_progress(&D, r1, id, 0);
	ck_assert_uint_eq(stats().reports_rejected[REPORT_PROGRESS], 1);
	domain_run_for(&D, 5000, 5000);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	domain_run_for(&D, 1000, 1000);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RESTARTING);
	ck_assert_uint_eq(job->restarts, 1);
	ck_assert_msg(strstr(job->reason, "no progress for 31 s") != NULL,
	    "reason %s", job->reason);
}
END_TEST

/* A job that never reports progress counts from its start. */
START_TEST(test_hang_without_progress)
{
	struct domain_spec hang = { .hang_timeout_s = 10 };
	uint64_t id;

	id = run_spec(1, 0, &hang);
	domain_run_for(&D, 10000, 1000);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	domain_run_for(&D, 1000, 1000);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESTARTING);
}
END_TEST

/* A controller restart forgets when progress was last seen (memory):
 * the first tick, before any agent is back, must not take a job that
 * started long ago for hung; a job that really is hung is still caught,
 * a hang timeout after the restart. */
START_TEST(test_hang_after_controller_restart)
{
	struct domain_spec hang = { .hang_timeout_s = 30 };
	char r0[PEER_NAME_MAX + 1];
	struct cerr err;
	uint64_t id;
	int i;

	id = run_spec(1, 0, &hang);
	snprintf(r0, sizeof(r0), "%s", rank_node(domain_job(&D, id), 0));
	for (i = 0; i < 6; i++) {
		domain_run_for(&D, 10000, 5000);
		domain_progress(&D, r0, id, 1);
	}
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_msg(domain_restart(&D, &err) == 0, "restart: %s", err.text);
	domain_advance(&D, 1000);
	domain_tick(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	/* Its node is back, but the progress file stopped changing. */
	ck_assert_uint_ne(domain_reconnect(&D, r0, NULL, 0, &err), 0);
	domain_run_for(&D, 29000, 1000);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	domain_run_for(&D, 2000, 1000);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESTARTING);
}
END_TEST

START_TEST(test_max_restarts)
{
	struct domain_spec once = { .max_restarts = 1 };
	const struct job *job;
	char r0[PEER_NAME_MAX + 1];
	size_t mark;
	uint64_t id;

	id = run_spec(1, 0, &once);
	snprintf(r0, sizeof(r0), "%s", rank_node(domain_job(&D, id), 0));
	domain_health(&D, r0, HEALTH_FAILED, -1, "first");
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESTARTING);
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	snprintf(r0, sizeof(r0), "%s", rank_node(job, 0));
	mark = D.ncmds;
	domain_health(&D, r0, HEALTH_FAILED, -1, "second");
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_FAILED);
	ck_assert_uint_eq(job->restarts, 1);
	ck_assert_msg(strstr(job->reason, "max restarts (1) reached") != NULL &&
	    strstr(job->reason, "second") != NULL, "reason %s", job->reason);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, mark), 1);
	ck_assert_uint_eq(stats().failures, 2);
	domain_settle(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, mark), 0);
}
END_TEST

static Suite *
recovery_suite(void)
{
	Suite *s = suite_create("recovery");
	TCase *tc = tcase_create("recovery");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_health_failed_node);
	tcase_add_test(tc, test_health_failed_gpu);
	tcase_add_test(tc, test_degraded_checkpoint_then_move);
	tcase_add_test(tc, test_degraded_deadline);
	tcase_add_test(tc, test_degraded_without_checkpoints_moves_at_once);
	tcase_add_test(tc, test_drain_now);
	tcase_add_test(tc, test_drain_now_moves_on_checkpoint);
	tcase_add_test(tc, test_evacuation_once_and_launching);
	tcase_add_test(tc, test_degraded_gpu_moves_nothing);
	tcase_add_test(tc, test_drain_and_resume);
	tcase_add_test(tc, test_resume_after_health);
	tcase_add_test(tc, test_xids);
	tcase_add_test(tc, test_checkpoints);
	tcase_add_test(tc, test_spare_replacement);
	tcase_add_test(tc, test_spare_only_for_restarts);
	tcase_add_test(tc, test_elastic_shrink);
	tcase_add_test(tc, test_elastic_grow);
	tcase_add_test(tc, test_elastic_shrink_then_grow_back);
	tcase_add_test(tc, test_elastic_grows_again);
	tcase_add_test(tc, test_elastic_grow_tried_once);
	tcase_add_test(tc, test_no_growth_while_a_start_backs_off);
	tcase_add_test(tc, test_restart_while_resizing);
	tcase_add_test(tc, test_hang_detection);
	tcase_add_test(tc, test_hang_without_progress);
	tcase_add_test(tc, test_hang_after_controller_restart);
	tcase_add_test(tc, test_max_restarts);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(recovery_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
