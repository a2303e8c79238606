/* The restart policy of a failing job (daemon/controller/domain/jobs.c)
 * in virtual time: --max-restarts and the reason a job gives up with,
 * the restart count each run is launched with, the back-off that
 * doubles per failure within early_fail_window, a failure after a
 * longer run restarting at once, a start that can never succeed
 * failing without a restart, and a restart that leaves a node where the
 * job failed early in two runs in a row. On the real domain with an
 * in-memory store and a recording outbox (tests/domain/domain.h). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/recovery.h"
#include "daemon/controller/store/store.h"
#include "tests/domain/domain.h"

#define EXIT(code) ((code) << 8)
/* The window cohort-local's clusters were given for these rules. */
#define WINDOW_MS 2000

static struct domain D;
static const struct peer admin = { "root", ROLE_ADMIN };

static void
setup(void)
{
	struct cerr err;

	ck_assert_msg(domain_open(&D, NULL, &err) == 0, "domain_open: %s",
	    err.text);
	ck_assert_msg(domain_add_nodes(&D, 3, 2, &err) == 0, "add nodes: %s",
	    err.text);
	jobs_set_early_fail_window(D.js, WINDOW_MS);
}

static void
teardown(void)
{
	domain_close(&D);
}

/* Submit a one-node job with max_restarts (-1: 0). */
static uint64_t
submit(int max_restarts)
{
	struct domain_spec o = { .max_restarts = max_restarts };
	struct cerr err;
	uint64_t id;

	id = domain_submit(&D, "alice", 1, 1, domain_spec_apply, &o, &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	return id;
}

/* A pass at the current time launches job's next run (answered): its
 * attempt. The job's restart count at that launch, which the agent
 * hands the tasks as COHORT_RESTART_COUNT, is *restarts. */
static uint32_t
launch(uint64_t id, uint32_t *restarts)
{
	const struct domain_cmd *c;
	size_t mark = D.ncmds;

	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, mark), 1);
	c = domain_last(&D, DOMAIN_LAUNCH, id);
	*restarts = domain_job(&D, id)->restarts;
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	return c->attempt;
}

/* Rank 0 of (id, attempt) exits with code now. */
static void
exit_rank0(uint64_t id, uint32_t attempt, int code)
{
	struct cerr err;

	ck_assert_msg(domain_exit(&D, domain_rank_node(domain_job(&D, id), 0),
	    id, attempt, 0, EXIT(code), &err) == 0, "exit: %s", err.text);
}

struct evs {
	const char *kind;
	size_t n;
	char detail[8][400];
	int64_t time_ms[8];
};

static int
ev_cb(const struct store_event *ev, void *arg)
{
	struct evs *e = arg;

	if (strcmp(ev->kind, e->kind) != 0)
		return 0;
	if (e->n < 8) {
		snprintf(e->detail[e->n], sizeof(e->detail[0]), "%s",
		    ev->detail != NULL ? ev->detail : "");
		e->time_ms[e->n] = ev->time_ms;
	}
	e->n++;
	return 0;
}

/* The job's events of kind, oldest first (cohort events --job). */
static struct evs
events(uint64_t id, const char *kind)
{
	struct evs e;
	struct cerr err;

	memset(&e, 0, sizeof(e));
	e.kind = kind;
	ck_assert_int_eq(store_events_list(D.st, 0, id, NULL, kind, 0, 0,
	    ev_cb, &e, &err), 0);
	return e;
}

/* A job whose task fails at once, --max-restarts 3: each restart waits
 * 1 s, 2 s, then 4 s (the restart event says so, and no pass starts it
 * a millisecond sooner), then it is FAILED with restarts 3 and a reason
 * that names the limit and the last failure. */
START_TEST(test_early_fail_backs_off_1_2_4)
{
	static const int64_t want[] = { 1000, 2000, 4000 };
	const struct job *job;
	struct evs restart, alloc;
	char said[32];
	uint32_t attempt, restarts;
	uint64_t id;
	size_t i, mark;

	id = submit(3);
	attempt = launch(id, &restarts);
	for (i = 0; i < 3; i++) {
		exit_rank0(id, attempt, 1);
		job = domain_job(&D, id);
		ck_assert_int_eq(job->state, JOB_RESTARTING);
		ck_assert_int_eq(job->not_before_ms - D.now, want[i]);
		restart = events(id, "restart");
		ck_assert_uint_eq(restart.n, i + 1);
		snprintf(said, sizeof(said), "retry in %d s",
		    (int)(want[i] / 1000));
		ck_assert_msg(strstr(restart.detail[i], "FailedEarly: rank 0 "
		    "exited with 1") != NULL && strstr(restart.detail[i],
		    said) != NULL, "restart %zu: %s", i + 1,
		    restart.detail[i]);
		/* Not a millisecond before its back-off. */
		mark = D.ncmds;
		domain_advance(&D, want[i] - 1);
		domain_pass(&D);
		ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, mark), 0);
		domain_advance(&D, 1);
		attempt = launch(id, &restarts);
		ck_assert_uint_eq(restarts, i + 1);
	}
	exit_rank0(id, attempt, 1);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_FAILED);
	ck_assert_uint_eq(job->restarts, 3);
	ck_assert_str_eq(job->reason, "max restarts (3) reached; last "
	    "failure: rank 0 exited with 1");
	/* The events tell the same story: each start (allocate) after
	 * a restart comes its back-off later. */
	restart = events(id, "restart");
	alloc = events(id, "allocate");
	ck_assert_uint_eq(restart.n, 3);
	ck_assert_uint_eq(alloc.n, 4);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(alloc.time_ms[i + 1] - restart.time_ms[i],
		    want[i]);
	/* Nothing more runs. */
	mark = D.ncmds;
	domain_advance(&D, 60000);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, mark), 0);
}
END_TEST

/* A task that always fails, --max-restarts 2: three runs, launched
 * with restart counts 0, 1, 2 (COHORT_RESTART_COUNT), two restart
 * events, then FAILED with restarts 2, the task's exit code and a
 * reason that says the limit was reached. */
START_TEST(test_max_restarts_two)
{
	const struct job *job;
	uint32_t attempt, restarts;
	uint64_t id;
	unsigned run;

	id = submit(2);
	for (run = 0; run < 3; run++) {
		if (run > 0) {
			job = domain_job(&D, id);
			ck_assert_int_eq(job->state, JOB_RESTARTING);
			domain_advance(&D, job->not_before_ms - D.now);
		}
		attempt = launch(id, &restarts);
		ck_assert_uint_eq(restarts, run);
		exit_rank0(id, attempt, 1);
	}
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_FAILED);
	ck_assert_uint_eq(job->restarts, 2);
	ck_assert(job->has_exit);
	ck_assert_int_eq(job->exit_code, 1);
	ck_assert_msg(strstr(job->reason, "max restarts (2) reached") != NULL,
	    "reason %s", job->reason);
	ck_assert_uint_eq(events(id, "restart").n, 2);
}
END_TEST

/* --max-restarts 0: the first failure is final, with its exit code. */
START_TEST(test_max_restarts_zero)
{
	const struct job *job;
	uint32_t attempt, restarts;
	uint64_t id;
	size_t mark;

	id = submit(-1);
	attempt = launch(id, &restarts);
	ck_assert_uint_eq(restarts, 0);
	exit_rank0(id, attempt, 3);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_FAILED);
	ck_assert_uint_eq(job->restarts, 0);
	ck_assert(job->has_exit);
	ck_assert_int_eq(job->exit_code, 3);
	ck_assert_uint_eq(events(id, "restart").n, 0);
	mark = D.ncmds;
	domain_advance(&D, 60000);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, mark), 0);
}
END_TEST

/* A run longer than the window (3 s of 2 s) that fails restarts at
 * once: no back-off, no FailedEarly in the reason or the event. */
START_TEST(test_late_failure_restarts_at_once)
{
	const struct job *job;
	struct evs restart;
	uint32_t attempt, restarts;
	uint64_t id;

	id = submit(1);
	attempt = launch(id, &restarts);
	domain_advance(&D, 3000);
	exit_rank0(id, attempt, 1);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RESTARTING);
	ck_assert_msg(strstr(job->reason, "rank 0 exited with 1") != NULL &&
	    strstr(job->reason, "FailedEarly") == NULL, "reason %s",
	    job->reason);
	restart = events(id, "restart");
	ck_assert_uint_eq(restart.n, 1);
	ck_assert_msg(strstr(restart.detail[0], "rank 0 exited with 1") !=
	    NULL && strstr(restart.detail[0], "FailedEarly") == NULL,
	    "restart: %s", restart.detail[0]);
	/* Launched again in the same millisecond. */
	attempt = launch(id, &restarts);
	ck_assert_uint_eq(restarts, 1);
	/* Its last failure, early or not, is final. */
	exit_rank0(id, attempt, 1);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_FAILED);
}
END_TEST

/* A start the agent reports as never possible (a command, or a
 * script's interpreter, that does not exist): FAILED at once although
 * --max-restarts 3, restarts 0, the reason saying it could not start. */
START_TEST(test_cannot_start_fails_at_once)
{
	struct task_report r;
	const struct job *job;
	struct cerr err;
	uint32_t attempt, restarts;
	uint64_t id;
	size_t mark;

	id = submit(3);
	attempt = launch(id, &restarts);
	memset(&r, 0, sizeof(r));
	r.job_id = id;
	r.restart = attempt;
	r.rank = 0;
	r.wait_status = EXIT(127);
	r.permanent = true;
	snprintf(r.why, sizeof(r.why), "cannot run the command: "
	    "/bin/no-such-shell: No such file or directory");
	ck_assert_int_eq(domain_task_exit(&D,
	    domain_rank_node(domain_job(&D, id), 0), &r, &err), 0);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_FAILED);
	ck_assert_uint_eq(job->restarts, 0);
	ck_assert_msg(strstr(job->reason, "rank 0 could not start: cannot "
	    "run the command") != NULL, "reason %s", job->reason);
	mark = D.ncmds;
	domain_advance(&D, 60000);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, mark), 0);
}
END_TEST

/* ---- Restarts off a node that fails the same job early twice ---- */

/* A 2-node job (2 GPUs a node, whole nodes) with max_restarts,
 * launched and running: its attempt. */
static uint64_t
submit_gang(int max_restarts, uint32_t *attempt)
{
	struct domain_spec o = { .max_restarts = max_restarts };
	struct cerr err;
	size_t mark = D.ncmds;
	uint64_t id;

	id = domain_submit(&D, "alice", 2, 2, domain_spec_apply, &o, &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, mark), 2);
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	*attempt = domain_job(&D, id)->attempt;
	return id;
}

/* Rank 0 of (id, attempt) exits with 1 after ms of its run, on its
 * node, which goes into node (PEER_NAME_MAX + 1 bytes). */
static void
fail_rank0_after(uint64_t id, uint32_t attempt, int64_t ms, char *node)
{
	snprintf(node, PEER_NAME_MAX + 1, "%s",
	    domain_rank_node(domain_job(&D, id), 0));
	domain_advance(&D, ms);
	exit_rank0(id, attempt, 1);
}

/* The restarting job id starts again once its back-off is over and its
 * old tasks are gone: the new attempt, running. */
static uint32_t
relaunch(uint64_t id)
{
	const struct job *job = domain_job(&D, id);
	size_t mark;

	ck_assert_int_eq(job->state, JOB_RESTARTING);
	if (job->not_before_ms > D.now)
		domain_advance(&D, job->not_before_ms - D.now);
	mark = D.ncmds;
	domain_settle(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, mark), 2);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	return job->attempt;
}

static void
add_spare(void)
{
	struct cerr err;

	ck_assert_msg(domain_add_node(&D, "spare01", 2, true, &err) != 0,
	    "spare: %s", err.text);
}

static void
assert_none_drained(void)
{
	size_t i;

	for (i = 0; i < D.nnodes; i++)
		ck_assert_msg(!nodes_get(D.ns, D.nodes[i].name)->drained,
		    "%s drained", D.nodes[i].name);
}

/* Rank 0 of a 2-node job fails early on node X twice in a row (a black
 * hole): the second restart leaves X out, rank 0 goes to the hot spare,
 * rank 1 keeps its node; an event says so, and X is not drained. */
START_TEST(test_early_twice_moves_to_spare)
{
	char bad[PEER_NAME_MAX + 1], other[PEER_NAME_MAX + 1];
	const struct job *job;
	struct cerr err;
	struct evs ev;
	uint32_t attempt;
	uint64_t id;

	add_spare();
	id = submit_gang(10, &attempt);
	snprintf(other, sizeof(other), "%s",
	    domain_rank_node(domain_job(&D, id), 1));
	fail_rank0_after(id, attempt, 1000, bad);
	attempt = relaunch(id);
	job = domain_job(&D, id);
	ck_assert_str_eq(domain_rank_node(job, 0), bad);
	ck_assert_uint_eq(events(id, "early-again").n, 0);
	fail_rank0_after(id, attempt, 1000, bad);
	attempt = relaunch(id);
	job = domain_job(&D, id);
	ck_assert_str_eq(domain_rank_node(job, 0), "spare01");
	ck_assert_str_eq(domain_rank_node(job, 1), other);
	ck_assert_uint_eq(job->restarts, 2);
	ev = events(id, "early-again");
	ck_assert_uint_eq(ev.n, 1);
	ck_assert_msg(strstr(ev.detail[0], "rank 0 failed early on") !=
	    NULL && strstr(ev.detail[0], bad) != NULL &&
	    strstr(ev.detail[0], "moves its share") != NULL &&
	    strstr(ev.detail[0], "not drained") != NULL, "event: %s",
	    ev.detail[0]);
	assert_none_drained();
	/* It runs fine there: past the window, then done. */
	domain_advance(&D, WINDOW_MS + 1000);
	ck_assert_int_eq(domain_exit(&D, "spare01", id, attempt, 0, 0, &err),
	    0);
	ck_assert_int_eq(domain_exit(&D, other, id, attempt, 1, 0, &err), 0);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_COMPLETED);
}
END_TEST

/* One early failure restarts in place (a job's own bug fails anywhere);
 * so does an early failure after a run that failed late, however often
 * the same node saw failures before: only two early failures in
 * consecutive runs move it. */
START_TEST(test_early_once_restarts_in_place)
{
	char bad[PEER_NAME_MAX + 1], node[PEER_NAME_MAX + 1];
	uint32_t attempt;
	uint64_t id;

	add_spare();
	id = submit_gang(10, &attempt);
	fail_rank0_after(id, attempt, 1000, bad);
	attempt = relaunch(id);
	/* Late (3 s of a 2 s window): restarts in place at once. */
	fail_rank0_after(id, attempt, 3000, node);
	ck_assert_str_eq(node, bad);
	attempt = relaunch(id);
	fail_rank0_after(id, attempt, 1000, node);
	ck_assert_str_eq(node, bad);
	attempt = relaunch(id);
	ck_assert_str_eq(domain_rank_node(domain_job(&D, id), 0), bad);
	ck_assert_uint_eq(events(id, "early-again").n, 0);
	/* The next early failure there is the second in a row. */
	fail_rank0_after(id, attempt, 1000, node);
	attempt = relaunch(id);
	ck_assert_str_eq(domain_rank_node(domain_job(&D, id), 0), "spare01");
	ck_assert_uint_eq(events(id, "early-again").n, 1);
	assert_none_drained();
}
END_TEST

/* A job whose own code fails early wherever it runs (rank 0 exits 1
 * after 1 s, every run), --max-restarts 7: rank 0's share moves after
 * every second failure (to the spare, then to a free node, ...), rank 1
 * stays, no node is ever drained, and it ends FAILED at its limit. */
START_TEST(test_fails_everywhere_moves_never_drains)
{
	char seen[8][PEER_NAME_MAX + 1], other[PEER_NAME_MAX + 1];
	const struct job *job;
	uint32_t attempt;
	uint64_t id;
	int run;

	add_spare();
	id = submit_gang(7, &attempt);
	snprintf(other, sizeof(other), "%s",
	    domain_rank_node(domain_job(&D, id), 1));
	for (run = 0; run < 8; run++) {
		if (run > 0)
			attempt = relaunch(id);
		ck_assert_str_eq(domain_rank_node(domain_job(&D, id), 1),
		    other);
		fail_rank0_after(id, attempt, 1000, seen[run]);
		assert_none_drained();
		if (run % 2 == 1)
			ck_assert_str_eq(seen[run], seen[run - 1]);
		else if (run > 0)
			ck_assert_str_ne(seen[run], seen[run - 1]);
	}
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_FAILED);
	ck_assert_msg(strstr(job->reason, "max restarts (7) reached") != NULL,
	    "reason %s", job->reason);
	/* After runs 2, 4 and 6; the 8th failure is final. */
	ck_assert_uint_eq(events(id, "early-again").n, 3);
	domain_run_for(&D, 60000, 2000);
	assert_none_drained();
}
END_TEST

/* No spare and no free node (the third node drained by an admin): the
 * second early failure on X keeps X rather than leave the job waiting,
 * and the event says why. */
START_TEST(test_early_twice_no_room_stays)
{
	char bad[PEER_NAME_MAX + 1];
	struct cerr err;
	struct evs ev;
	uint32_t attempt;
	uint64_t id;

	id = submit_gang(10, &attempt);
	ck_assert_msg(recovery_drain(D.cl, &admin, "node03", "maintenance",
	    false, D.now, &err) == 0, "drain: %s", err.text);
	fail_rank0_after(id, attempt, 1000, bad);
	attempt = relaunch(id);
	fail_rank0_after(id, attempt, 1000, bad);
	attempt = relaunch(id);
	ck_assert_str_eq(domain_rank_node(domain_job(&D, id), 0), bad);
	ev = events(id, "early-again");
	ck_assert_uint_eq(ev.n, 1);
	ck_assert_msg(strstr(ev.detail[0], "no spare or free node") != NULL &&
	    strstr(ev.detail[0], "keeps it") != NULL, "event: %s",
	    ev.detail[0]);
	ck_assert(!nodes_get(D.ns, bad)->drained);
}
END_TEST

static Suite *
restarts_suite(void)
{
	Suite *s = suite_create("restarts");
	TCase *tc = tcase_create("restarts");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_early_fail_backs_off_1_2_4);
	tcase_add_test(tc, test_max_restarts_two);
	tcase_add_test(tc, test_max_restarts_zero);
	tcase_add_test(tc, test_late_failure_restarts_at_once);
	tcase_add_test(tc, test_cannot_start_fails_at_once);
	tcase_add_test(tc, test_early_twice_moves_to_spare);
	tcase_add_test(tc, test_early_once_restarts_in_place);
	tcase_add_test(tc, test_fails_everywhere_moves_never_drains);
	tcase_add_test(tc, test_early_twice_no_room_stays);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(restarts_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
