/* Job steps (daemon/controller/domain/steps.c) and batch jobs in virtual time:
 * a batch job's one task, a step's layout in the allocation, GPUs not
 * shared without --overlap, the steps' ends (exits, -K, node failure, the
 * job's end), who may start and signal them, and their records. On the
 * real domain with an in-memory store and a recording outbox
 * (tests/domain/domain.h). */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/steps.h"
#include "daemon/controller/store/store.h"
#include "tests/domain/domain.h"

static struct domain D;
static const struct peer alice = { "alice", ROLE_USER };
static const struct peer bob = { "bob", ROLE_USER };
static const struct peer root = { "root", ROLE_ADMIN };
static char *const true_argv[] = { "/bin/true", NULL };

#define EXIT(code) ((code) << 8)

static void
setup(void)
{
	struct cerr err;
	char name[16];
	unsigned i;

	ck_assert_msg(domain_open(&D, NULL, &err) == 0, "domain_open: %s",
	    err.text);
	for (i = 1; i <= 4; i++) {
		snprintf(name, sizeof(name), "node%02u", i);
		ck_assert(domain_add_node(&D, name, 4, false, &err) != 0);
	}
}

static void
teardown(void)
{
	domain_close(&D);
}

/* A running batch job of nodes × 4 GPUs, tasks_per_node each. */
static uint64_t
run_batch(unsigned nodes, unsigned tpn)
{
	struct domain_spec o = { .batch = true, .tasks_per_node = tpn,
	    .max_restarts = -1 };
	struct cerr err;
	uint64_t id;

	id = domain_submit(&D, "alice", nodes, 4, domain_spec_apply, &o,
	    &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	return id;
}

static void
req_init(struct step_req *r, uint64_t id)
{
	memset(r, 0, sizeof(*r));
	r->job_id = id;
	r->argv = true_argv;
	r->argc = 1;
}

static const struct step *
create(const struct step_req *r, const struct peer *who)
{
	const struct step *s = NULL;
	struct cerr err;

	cerr_clear(&err);
	ck_assert_msg(steps_create(D.cl, who, r, D.now, &s, &err) == 0,
	    "steps_create: %s", err.text);
	domain_commit(&D);
	return s;
}

static enum err_code
refused(const struct step_req *r, const struct peer *who)
{
	const struct step *s = NULL;
	struct cerr err;

	cerr_clear(&err);
	ck_assert_int_eq(steps_create(D.cl, who, r, D.now, &s, &err), -1);
	domain_commit(&D);
	return err.code;
}

static int
step_exit(const char *node, uint64_t id, uint32_t step, unsigned rank,
    int ws)
{
	struct task_report r;
	struct cerr err;

	memset(&r, 0, sizeof(r));
	r.job_id = id;
	r.restart = domain_job(&D, id)->attempt;
	r.rank = rank;
	r.wait_status = ws;
	r.has_step = true;
	r.step = step;
	return domain_task_exit(&D, node, &r, &err);
}

/* A batch job launches on every node, and only rank 0 counts: its exit
 * ends the job, and the other nodes are told to stop. */
START_TEST(test_batch_one_task)
{
	uint64_t id = run_batch(3, 4);
	const char *n0 = domain_rank_node(domain_job(&D, id), 0);
	struct cerr err;
	size_t mark;

	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, 0), 3);
	ck_assert_uint_eq(job_nranks(domain_job(&D, id)), 1);
	/* Rank 1 is not a task of a batch job: refused from any node. */
	ck_assert_int_eq(domain_exit(&D, domain_rank_node(domain_job(&D, id),
	    1), id, 1, 1, EXIT(0), &err), -1);
	mark = D.ncmds;
	ck_assert_int_eq(domain_exit(&D, n0, id, 1, 0, EXIT(0), &err), 0);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_COMPLETED);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, mark), 3);
}
END_TEST

/* The script's failure is the job's: FAILED with its code, no retry. */
START_TEST(test_batch_exit_code)
{
	uint64_t id = run_batch(2, 1);
	const char *n0 = domain_rank_node(domain_job(&D, id), 0);
	struct cerr err;

	ck_assert_int_eq(domain_exit(&D, n0, id, 1, 0, EXIT(3), &err), 0);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_FAILED);
	ck_assert_int_eq(domain_job(&D, id)->exit_code, 3);
}
END_TEST

/* Without options a step is the job's shape: every node, the job's
 * tasks per node, all its GPUs; launched on each node with its ranks. */
START_TEST(test_step_default_layout)
{
	uint64_t id = run_batch(2, 4);
	const struct domain_cmd *c;
	const struct step *s;
	struct step_req r;
	size_t mark = D.ncmds, i, nl = 0;

	req_init(&r, id);
	s = create(&r, &alice);
	ck_assert_uint_eq(s->id, 0);
	ck_assert_uint_eq(s->nnodes, 2);
	ck_assert_uint_eq(s->ntasks, 8);
	ck_assert_uint_eq(s->gpus, 8);
	ck_assert_int_eq(s->state, JOB_RUNNING);
	for (i = mark; i < D.ncmds; i++) {
		c = &D.cmds[i];
		if (c->kind != DOMAIN_LAUNCH)
			continue;
		ck_assert(c->has_step);
		ck_assert_uint_eq(c->step_ntasks, 4);
		ck_assert_uint_eq(c->step_first_rank, nl * 4);
		ck_assert_uint_eq(c->ngpus, 4);
		nl++;
	}
	ck_assert_uint_eq(nl, 2);
}
END_TEST

/* -n spreads tasks in blocks; -N, -w and -x choose the nodes. */
START_TEST(test_step_shapes)
{
	uint64_t id = run_batch(3, 1);
	const struct job *job = domain_job(&D, id);
	const struct step *s;
	struct step_req r;
	char w[64];

	req_init(&r, id);
	r.ntasks = 5;
	r.no_gpus = true;
	s = create(&r, &alice);
	ck_assert_uint_eq(s->nnodes, 3);
	ck_assert_uint_eq(s->nodes[0].ntasks, 2);
	ck_assert_uint_eq(s->nodes[1].ntasks, 2);
	ck_assert_uint_eq(s->nodes[2].ntasks, 1);
	ck_assert_uint_eq(s->nodes[2].first_rank, 4);
	ck_assert_uint_eq(s->gpus, 0);

	req_init(&r, id);
	r.nodes = 1;
	snprintf(w, sizeof(w), "%s", domain_rank_node(job, 2));
	r.nodelist = w;
	r.overlap = true;
	s = create(&r, &alice);
	ck_assert_uint_eq(s->nnodes, 1);
	ck_assert_str_eq(s->nodenames[0], w);

	req_init(&r, id);
	r.exclude = w;
	r.overlap = true;
	s = create(&r, &alice);
	ck_assert_uint_eq(s->nnodes, 2);
	ck_assert_str_ne(s->nodenames[0], w);
	ck_assert_str_ne(s->nodenames[1], w);

	/* What never fits is refused as invalid. */
	req_init(&r, id);
	r.nodes = 4;
	ck_assert_int_eq(refused(&r, &alice), ERR_INVALID);
	req_init(&r, id);
	r.nodelist = "node99";
	ck_assert_int_eq(refused(&r, &alice), ERR_INVALID);
	req_init(&r, id);
	r.gpus_per_task = 5;
	ck_assert_int_eq(refused(&r, &alice), ERR_INVALID);
	req_init(&r, id);
	r.nodes = 3;
	r.ntasks = 2;
	ck_assert_int_eq(refused(&r, &alice), ERR_INVALID);
	req_init(&r, id);
	r.nodelist = w;
	r.exclude = w;
	ck_assert_int_eq(refused(&r, &alice), ERR_INVALID);
}
END_TEST

/* Steps do not share GPUs unless --overlap: the second waits (BUSY),
 * then starts once the first has ended; --gpus-per-task splits. */
START_TEST(test_step_gpus_not_shared)
{
	uint64_t id = run_batch(1, 1);
	const char *n0 = domain_rank_node(domain_job(&D, id), 0);
	const struct step *s;
	struct step_req r;
	uint32_t first;

	req_init(&r, id);
	r.ntasks = 2;
	r.gpus_per_task = 1;
	s = create(&r, &alice);
	first = s->id;
	ck_assert_uint_eq(s->gpus, 2);
	ck_assert_uint_ne(s->nodes[0].gpus[0], s->nodes[0].gpus[1]);
	/* Two GPUs are left: a step wanting all four waits. */
	req_init(&r, id);
	ck_assert_int_eq(refused(&r, &alice), ERR_BUSY);
	req_init(&r, id);
	r.gpus_per_node = 2;
	s = create(&r, &alice);
	ck_assert_uint_eq(s->gpus, 2);
	req_init(&r, id);
	r.overlap = true;
	s = create(&r, &alice);
	ck_assert_uint_eq(s->gpus, 4);
	/* An exclusive step waits while any step runs on its node. */
	req_init(&r, id);
	r.exclusive = true;
	r.no_gpus = true;
	ck_assert_int_eq(refused(&r, &alice), ERR_BUSY);
	ck_assert_int_eq(step_exit(n0, id, first, 0, EXIT(0)), 0);
	ck_assert_int_eq(step_exit(n0, id, first, 1, EXIT(0)), 0);
	ck_assert_int_eq(steps_get(D.cl, id, first)->state, JOB_COMPLETED);
	req_init(&r, id);
	r.gpus_per_node = 2;
	ck_assert_ptr_nonnull(create(&r, &alice));
}
END_TEST

/* A step ends with its last task: FAILED with the highest code (128+N
 * for a signal); -K stops the rest at the first failure. */
START_TEST(test_step_exits)
{
	uint64_t id = run_batch(2, 1);
	const struct job *job = domain_job(&D, id);
	const struct step *s;
	struct step_req r;
	size_t mark;
	struct cerr err;

	req_init(&r, id);
	r.no_gpus = true;
	s = create(&r, &alice);
	ck_assert_int_eq(step_exit(domain_rank_node(job, 0), id, s->id, 0,
	    EXIT(2)), 0);
	ck_assert_int_eq(s->state, JOB_RUNNING);
	/* Task 1 lives on the second node: the first may not report it. */
	ck_assert_int_eq(step_exit(domain_rank_node(job, 0), id, s->id, 1,
	    EXIT(0)), -1);
	ck_assert_int_eq(step_exit(domain_rank_node(job, 1), id, s->id, 1,
	    SIGKILL), 0);
	ck_assert_int_eq(s->state, JOB_FAILED);
	ck_assert_int_eq(s->exit_code, 128 + SIGKILL);

	req_init(&r, id);
	r.no_gpus = true;
	r.kill_on_bad_exit = true;
	s = create(&r, &alice);
	mark = D.ncmds;
	ck_assert_int_eq(step_exit(domain_rank_node(job, 1), id, s->id, 1,
	    EXIT(1)), 0);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP_STEP, id, mark), 2);
	ck_assert_int_eq(step_exit(domain_rank_node(job, 0), id, s->id, 0,
	    SIGTERM), 0);
	ck_assert_int_eq(s->state, JOB_FAILED);
	/* The job itself runs on: a step's failure is the script's to
	 * judge. */
	ck_assert_int_eq(job->state, JOB_RUNNING);
	(void)err;
}
END_TEST

/* Only the owner starts steps; owner and admins signal them; SIGKILL
 * cancels. */
START_TEST(test_step_who)
{
	uint64_t id = run_batch(1, 1);
	const struct step *s;
	struct step_req r;
	struct cerr err;
	size_t mark;

	req_init(&r, id);
	ck_assert_int_eq(refused(&r, &bob), ERR_DENIED);
	ck_assert_int_eq(refused(&r, &root), ERR_DENIED);
	s = create(&r, &alice);
	ck_assert_int_eq(steps_signal(D.cl, &bob, id, s->id, SIGINT, D.now,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	mark = D.ncmds;
	ck_assert_int_eq(steps_signal(D.cl, &alice, id, s->id, SIGUSR1,
	    D.now, &err), 0);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL_STEP, id, mark), 1);
	ck_assert_int_eq(steps_signal(D.cl, &root, id, s->id, SIGKILL, D.now,
	    &err), 0);
	domain_commit(&D);
	ck_assert_int_eq(s->state, JOB_CANCELLED);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP_STEP, id, mark), 1);
	ck_assert_int_eq(steps_signal(D.cl, &alice, id, s->id, SIGINT, D.now,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
}
END_TEST

static int
count_row(const struct store_step *s, void *arg)
{
	int *states = arg;

	states[s->step_id] = s->state * 10 + s->node_fail;
	return 0;
}

/* The job's end ends its running steps (recorded), a node failure ends
 * those on that node as NODE_FAIL, and a step only starts in a running
 * job. */
START_TEST(test_step_ends_with_job)
{
	uint64_t id = run_batch(2, 1);
	const struct job *job = domain_job(&D, id);
	char n1[PEER_NAME_MAX + 1];
	struct step_req r;
	enum job_state st;
	struct cerr err;
	int states[4] = { 0 };

	snprintf(n1, sizeof(n1), "%s", domain_rank_node(job, 1));
	req_init(&r, id);
	r.nodelist = n1;
	r.overlap = true;
	create(&r, &alice);			/* 0: on the failing node */
	req_init(&r, id);
	r.exclude = n1;
	r.overlap = true;
	create(&r, &alice);			/* 1: elsewhere */
	domain_health(&D, n1, HEALTH_FAILED, -1, "test");
	ck_assert_int_eq(steps_get(D.cl, id, 0) == NULL ||
	    steps_get(D.cl, id, 0)->state != JOB_RUNNING, 1);
	ck_assert_int_ne(job->state, JOB_RUNNING);
	/* The run's steps left memory; their records stay. */
	ck_assert_ptr_null(steps_get(D.cl, id, 1));
	ck_assert_int_eq(jobs_steps_list(D.js, id, 10, count_row, states,
	    &err), 0);
	ck_assert_int_eq(states[0], JOB_FAILED * 10 + 1);
	ck_assert_int_eq(states[1], JOB_CANCELLED * 10);
	/* Not running: no step. */
	req_init(&r, id);
	ck_assert_int_ne(refused(&r, &alice), ERR_NONE);
	(void)st;
}
END_TEST

/* A heartbeat listing a step task that is over (or unknown after a
 * restart) stops that step on that node. */
START_TEST(test_step_unknown_stopped)
{
	uint64_t id = run_batch(1, 1);
	const char *n0 = domain_rank_node(domain_job(&D, id), 0);
	struct task_report t;
	size_t mark = D.ncmds;

	memset(&t, 0, sizeof(t));
	t.job_id = id;
	t.restart = domain_job(&D, id)->attempt;
	t.rank = 0;
	t.running = true;
	t.has_step = true;
	t.step = 7;
	domain_heartbeat(&D, n0, &t, 1);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP_STEP, id, mark), 1);
	ck_assert_uint_eq(domain_last(&D, DOMAIN_STOP_STEP, id)->step, 7);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, mark), 0);
}
END_TEST

static void
scope_spec(struct job_spec *spec, void *arg)
{
	const int *scope = arg;

	spec->batch = scope[0];
	spec->signal_scope = scope[1];
	spec->checkpoint_dir = strdup("/ckpt");
}

/* The checkpoint signal (here: cohort requeue's) reaches what --signal
 * said for a batch job (B: its script, else its steps), and every task
 * of a job that is not one. */
START_TEST(test_signal_scope)
{
	static const int cases[][3] = {
		{ 1, JOB_SIGNAL_BATCH, JOB_SIGNAL_BATCH },
		{ 1, JOB_SIGNAL_STEPS, JOB_SIGNAL_STEPS },
		{ 1, JOB_SIGNAL_ALL, JOB_SIGNAL_ALL },
		{ 0, JOB_SIGNAL_STEPS, JOB_SIGNAL_ALL },
	};
	struct cerr err;
	uint64_t id;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		id = domain_submit(&D, "alice", 1, 4, scope_spec,
		    (void *)cases[i], &err);
		ck_assert_msg(id != 0, "submit: %s", err.text);
		domain_pass(&D);
		domain_answer_launches(&D, NULL);
		ck_assert_int_eq(cluster_requeue(D.cl, &alice, id, D.now,
		    &err), 0);
		domain_commit(&D);
		ck_assert_ptr_nonnull(domain_last(&D, DOMAIN_SIGNAL, id));
		ck_assert_int_eq(domain_last(&D, DOMAIN_SIGNAL, id)->scope,
		    cases[i][2]);
		ck_assert_int_eq(cluster_cancel(D.cl, &alice, id, D.now,
		    &(enum job_state){ 0 }, &err), 0);
		domain_settle(&D);
	}
}
END_TEST

static int
one_row(const struct store_step *s, void *arg)
{
	uint32_t *id = arg;

	*id = s->step_id;
	return 0;
}

/* Many steps, one after another: those ended beyond STEPS_ENDED_KEPT
 * leave memory, a late exit of one of them is acknowledged, and the
 * record of a step beyond the first thousand is found by its id (srun
 * asks for its step so). */
START_TEST(test_step_many)
{
	uint64_t id = run_batch(1, 1);
	const char *n0 = domain_rank_node(domain_job(&D, id), 0);
	const struct step *s;
	struct step_req r;
	struct cerr err;
	uint32_t i, got, n = 1003;

	for (i = 0; i < n; i++) {
		req_init(&r, id);
		r.no_gpus = true;
		s = create(&r, &alice);
		ck_assert_uint_eq(s->id, i);
		domain_answer_launches(&D, NULL);
		ck_assert_int_eq(step_exit(n0, id, i, 0, EXIT(0)), 0);
		domain_commit(&D);
	}
	ck_assert_ptr_null(steps_get(D.cl, id, 0));
	ck_assert_ptr_nonnull(steps_get(D.cl, id, n - 1));
	ck_assert_int_eq(step_exit(n0, id, 0, 0, EXIT(1)), 0);
	got = 0;
	ck_assert_int_eq(jobs_step_get(D.js, id, n - 2, one_row, &got, &err),
	    0);
	ck_assert_uint_eq(got, n - 2);
	got = 0;
	ck_assert_int_eq(jobs_step_get(D.js, id, n + 5, one_row, &got, &err),
	    0);
	ck_assert_uint_eq(got, 0);
}
END_TEST

/* -K stops the step's tasks once, however many of them fail. */
START_TEST(test_step_kill_on_bad_exit_once)
{
	uint64_t id = run_batch(3, 2);
	const struct job *job = domain_job(&D, id);
	const struct step *s;
	struct step_req r;
	size_t mark;
	unsigned i;

	req_init(&r, id);
	r.no_gpus = true;
	r.kill_on_bad_exit = true;
	s = create(&r, &alice);
	ck_assert_uint_eq(s->ntasks, 6);
	mark = D.ncmds;
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(step_exit(domain_rank_node(job, i / 2), id,
		    s->id, i, SIGTERM), 0);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP_STEP, id, mark), 3);
	/* Ranks map to their nodes: rank 5 is the third node's. */
	ck_assert_int_eq(step_exit(domain_rank_node(job, 1), id, s->id, 5,
	    SIGTERM), -1);
	ck_assert_int_eq(step_exit(domain_rank_node(job, 2), id, s->id, 6,
	    SIGTERM), -1);
	ck_assert_int_eq(step_exit(domain_rank_node(job, 2), id, s->id, 4,
	    SIGTERM), 0);
	ck_assert_int_eq(step_exit(domain_rank_node(job, 2), id, s->id, 5,
	    SIGTERM), 0);
	ck_assert_int_eq(s->state, JOB_FAILED);
}
END_TEST

/* More tasks on a node than an agent takes are refused here, not by
 * the agents after the step was launched. */
START_TEST(test_step_tasks_per_node_limit)
{
	uint64_t id = run_batch(2, 1);
	struct step_req r;

	req_init(&r, id);
	r.no_gpus = true;
	r.nodes = 1;
	r.ntasks = JOB_TASKS_PER_NODE_LIMIT + 1;
	ck_assert_int_eq(refused(&r, &alice), ERR_INVALID);
	r.nodes = 2;
	ck_assert_ptr_nonnull(create(&r, &alice));
}
END_TEST

/* A -w list naming every node of the job, in any order. */
START_TEST(test_step_nodelist_all)
{
	uint64_t id = run_batch(3, 1);
	const struct job *job = domain_job(&D, id);
	const struct step *s;
	struct step_req r;
	char w[128];

	snprintf(w, sizeof(w), "%s,%s,%s", domain_rank_node(job, 2),
	    domain_rank_node(job, 0), domain_rank_node(job, 1));
	req_init(&r, id);
	r.nodelist = w;
	r.overlap = true;
	s = create(&r, &alice);
	ck_assert_uint_eq(s->nnodes, 3);
	snprintf(w, sizeof(w), "%s,node77", domain_rank_node(job, 0));
	req_init(&r, id);
	r.nodelist = w;
	ck_assert_int_eq(refused(&r, &alice), ERR_INVALID);
}
END_TEST

/* The steps of a job that ended leave memory when another job starts
 * its first step; their records stay. */
START_TEST(test_step_ended_jobs_dropped)
{
	uint64_t a = run_batch(1, 1), b = run_batch(1, 1);
	const char *na = domain_rank_node(domain_job(&D, a), 0);
	struct step_req r;
	struct cerr err;
	uint32_t got = 99;

	req_init(&r, a);
	r.no_gpus = true;
	create(&r, &alice);
	ck_assert_int_eq(domain_exit(&D, na, a, domain_job(&D, a)->attempt,
	    0, EXIT(0), &err), 0);
	domain_commit(&D);
	ck_assert(job_state_is_final(domain_job(&D, a)->state));
	req_init(&r, b);
	r.no_gpus = true;
	create(&r, &alice);
	ck_assert_ptr_null(steps_get(D.cl, a, 0));
	ck_assert_int_eq(jobs_step_get(D.js, a, 0, one_row, &got, &err), 0);
	ck_assert_uint_eq(got, 0);
	/* A late report of the dropped step is acknowledged. */
	ck_assert_int_eq(step_exit(na, a, 0, 0, EXIT(0)), 0);
}
END_TEST

/* A --pty step no client follows ends after interactive_idle, its
 * tasks stopped; one that is followed runs on, and so does a plain
 * step however long no one asks. The counts say so. */
START_TEST(test_pty_session_idle)
{
	uint64_t id = run_batch(1, 1);
	const struct step *s;
	struct cluster_stats st;
	struct step_req r;
	uint32_t pty, plain;
	size_t mark;

	req_init(&r, id);
	r.no_gpus = true;
	r.input = r.pty = true;
	r.rows = 30;
	r.cols = 100;
	s = create(&r, &alice);
	ck_assert(s->pty && s->rows == 30 && s->cols == 100);
	pty = s->id;
	req_init(&r, id);
	r.no_gpus = true;
	plain = create(&r, &alice)->id;
	cluster_stats(D.cl, &st);
	ck_assert_uint_eq(st.steps_running, 2);
	ck_assert_uint_eq(st.sessions, 1);

	domain_run_for(&D, STEPS_IDLE_DEFAULT_MS - 2000, 1000);
	steps_heard(D.cl, id, pty, D.now);
	domain_run_for(&D, STEPS_IDLE_DEFAULT_MS - 1000, 1000);
	ck_assert_int_eq(steps_get(D.cl, id, pty)->state, JOB_RUNNING);
	mark = D.ncmds;
	domain_run_for(&D, 3000, 1000);
	s = steps_get(D.cl, id, pty);
	ck_assert_int_eq(s->state, JOB_CANCELLED);
	ck_assert_msg(strstr(s->reason, "interactive session silent") != NULL,
	    "reason: %s", s->reason);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP_STEP, id, mark), 1);
	ck_assert_int_eq(steps_get(D.cl, id, plain)->state, JOB_RUNNING);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	cluster_stats(D.cl, &st);
	ck_assert_uint_eq(st.steps_running, 1);
	ck_assert_uint_eq(st.sessions, 0);
	ck_assert_uint_eq(st.sessions_idle_ended, 1);
}
END_TEST

static Suite *
steps_suite(void)
{
	Suite *s = suite_create("steps");
	TCase *tc = tcase_create("steps");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_batch_one_task);
	tcase_add_test(tc, test_batch_exit_code);
	tcase_add_test(tc, test_step_default_layout);
	tcase_add_test(tc, test_step_shapes);
	tcase_add_test(tc, test_step_gpus_not_shared);
	tcase_add_test(tc, test_step_exits);
	tcase_add_test(tc, test_step_who);
	tcase_add_test(tc, test_step_ends_with_job);
	tcase_add_test(tc, test_step_unknown_stopped);
	tcase_add_test(tc, test_signal_scope);
	tcase_add_test(tc, test_step_many);
	tcase_add_test(tc, test_step_kill_on_bad_exit_once);
	tcase_add_test(tc, test_step_tasks_per_node_limit);
	tcase_add_test(tc, test_step_nodelist_all);
	tcase_add_test(tc, test_step_ended_jobs_dropped);
	tcase_add_test(tc, test_pty_session_idle);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(steps_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
