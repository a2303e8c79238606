/* Slow ranks (daemon/controller/domain/straggler.c) in virtual time: a rank at
 * twice its peers' compute time is named after its windows, a job-wide
 * slowdown and noise below the factor name nobody, --on-straggler=
 * replace moves only the slow node at the next checkpoint (the others
 * kept, a hot spare taking its place) and leaves out every node named
 * before the move, report moves nothing, and a
 * report from a node that does not hold the rank is refused. On the
 * real domain (tests/domain/domain.h). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/recovery.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/domain/straggler.h"
#include "tests/domain/domain.h"

static struct domain D;

/* The defaults: 8 reports per window, 3 windows in a row, 1.5×. */
#define ROUNDS_TO_NAME (STRAGGLER_DEFAULT_WINDOW * STRAGGLER_DEFAULT_WINDOWS)

static void
setup(void)
{
	struct cerr err;

	ck_assert_msg(domain_open(&D, NULL, &err) == 0, "domain_open: %s",
	    err.text);
	ck_assert_msg(domain_add_nodes(&D, 4, 4, &err) == 0, "add nodes: %s",
	    err.text);
	ck_assert_uint_ne(domain_add_node(&D, "spare01", 4, true, &err), 0);
}

static void
teardown(void)
{
	domain_close(&D);
}

struct spec {
	struct domain_spec d;
	int on_straggler;
};

static void
spec_fn(struct job_spec *spec, void *arg)
{
	struct spec *o = arg;

	domain_spec_apply(spec, &o->d);
	spec->on_straggler = o->on_straggler;
}

/* Submit and run on `nodes` nodes, 2 tasks each. */
static uint64_t
run(unsigned nodes, int on_straggler)
{
	struct spec o = { .d = { .checkpoint_dir = "/ckpt", .ckpt_secs = 60,
	    .tasks_per_node = 2 }, .on_straggler = on_straggler };
	struct cerr err;
	uint64_t id;

	id = domain_submit(&D, "alice", nodes, 0, spec_fn, &o, &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_uint_eq(domain_job(&D, id)->nplace, nodes);
	return id;
}

/* The names of job id's first n nodes, by node rank, into v. */
static void
node_names(uint64_t id, char (*v)[PEER_NAME_MAX + 1], unsigned n)
{
	unsigned k;

	for (k = 0; k < n; k++)
		snprintf(v[k], sizeof(v[k]), "%s",
		    domain_rank_node(domain_job(&D, id), k));
}

static unsigned long
stragglers(void)
{
	struct cluster_stats st;

	cluster_stats(D.cl, &st);
	return st.stragglers;
}

/* One report of (job's current attempt, rank) from node. */
static void
report(const char *node, uint64_t id, uint32_t rank, uint64_t step,
    uint32_t ms)
{
	struct step_time_report r = { .job_id = id,
	    .attempt = domain_job(&D, id)->attempt, .rank = rank,
	    .step = step, .compute_ms = ms };

	straggler_reports(D.cl, domain_conn(&D, node), &r, 1, D.now);
	domain_commit(&D);
}

/* Rounds of steps [from, to): every rank reports ms(rank, step) from
 * its own node; 100 ms of virtual time per step. */
static void
steps(uint64_t id, uint64_t from, uint64_t to,
    uint32_t (*ms)(uint32_t, uint64_t))
{
	const struct job *job;
	uint64_t s;
	uint32_t r, n;

	for (s = from; s < to; s++) {
		job = domain_job(&D, id);
		n = (uint32_t)job_nranks(job);
		for (r = 0; r < n; r++)
			report(domain_rank_node(job, r / 2), id, r, s,
			    ms(r, s));
		domain_advance(&D, 100);
	}
}

static uint32_t
rank3_twice(uint32_t rank, uint64_t step)
{
	(void)step;
	return rank == 3 ? 200 : 100;
}

struct ev_find {
	const char *kind;
	char node[64];
	char detail[512];
	unsigned n;
};

static int
ev_cb(const struct store_event *ev, void *arg)
{
	struct ev_find *f = arg;

	if (strcmp(ev->kind, f->kind) != 0)
		return 0;
	f->n++;
	snprintf(f->node, sizeof(f->node), "%s", ev->node ? ev->node : "");
	snprintf(f->detail, sizeof(f->detail), "%s", ev->detail);
	return 0;
}

static struct ev_find
events(uint64_t id, const char *kind)
{
	struct ev_find f = { .kind = kind };
	struct cerr err;

	ck_assert_int_eq(store_events_list(D.st, 0, id, NULL, kind, 0, 0,
	    ev_cb, &f, &err), 0);
	return f;
}

/* Rank 3 (node rank 1) at twice its peers' compute time is named once
 * its third slow window ends, not before: an event with node and
 * evidence, the counter, the job's list. With report, nothing moves. */
START_TEST(test_slow_rank_named)
{
	const struct straggler_found *f;
	char slow[PEER_NAME_MAX + 1];
	struct ev_find ev;
	size_t n, mark;
	uint64_t id;

	id = run(3, JOB_STRAGGLER_REPORT);
	snprintf(slow, sizeof(slow), "%s",
	    domain_rank_node(domain_job(&D, id), 1));
	mark = D.ncmds;
	steps(id, 1, ROUNDS_TO_NAME, rank3_twice);
	ck_assert_uint_eq(stragglers(), 0);
	ck_assert_uint_eq(events(id, "straggler").n, 0);
	steps(id, ROUNDS_TO_NAME, ROUNDS_TO_NAME + 1, rank3_twice);
	ck_assert_uint_eq(stragglers(), 1);
	ev = events(id, "straggler");
	ck_assert_uint_eq(ev.n, 1);
	ck_assert_str_eq(ev.node, slow);
	ck_assert_msg(strstr(ev.detail, "rank 3 on ") != NULL &&
	    strstr(ev.detail, "median 200 ms") != NULL &&
	    strstr(ev.detail, "peers' 100 ms (2.0×)") != NULL, "detail %s",
	    ev.detail);
	f = straggler_list(D.cl, id, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(f[0].rank, 3);
	ck_assert_str_eq(f[0].node, slow);
	ck_assert(!f[0].replaced);
	/* Named once per attempt; report moves nothing. */
	steps(id, ROUNDS_TO_NAME + 1, 3 * ROUNDS_TO_NAME, rank3_twice);
	ck_assert_uint_eq(stragglers(), 1);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, id, mark), 0);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, mark), 0);
	domain_run_for(&D, 120000, 2000);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_str_eq(domain_rank_node(domain_job(&D, id), 1), slow);
}
END_TEST

static uint32_t
all_slower(uint32_t rank, uint64_t step)
{
	/* Every rank, rank 0 a little ahead, 2.5× slower halfway. */
	return (step < 30 ? 100 : 250) + (rank == 0 ? 10 : 0);
}

/* A slowdown of the whole job is not a straggler. */
START_TEST(test_job_wide_slowdown)
{
	uint64_t id = run(3, JOB_STRAGGLER_REPLACE);
	size_t n;

	steps(id, 1, 100, all_slower);
	ck_assert_uint_eq(stragglers(), 0);
	(void)straggler_list(D.cl, id, &n);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(events(id, "straggler").n, 0);
}
END_TEST

static uint32_t
noisy(uint32_t rank, uint64_t step)
{
	/* ±30% around 100 ms, and rank 5 steadily 1.4× (below 1.5×). */
	uint32_t base = rank == 5 ? 140 : 100;

	return base + (uint32_t)((step * 37 + rank * 11) % 60) - 30;
}

/* Noise, and a rank slower than its peers by less than the factor,
 * name nobody. */
START_TEST(test_noise_below_factor)
{
	uint64_t id = run(3, JOB_STRAGGLER_REPORT);

	steps(id, 1, 200, noisy);
	ck_assert_uint_eq(stragglers(), 0);
	ck_assert_uint_eq(events(id, "straggler").n, 0);
}
END_TEST

/* replace: the checkpoint signal goes out when the rank is named; at
 * the next checkpoint only the slow node leaves (the hot spare takes
 * its node rank, the others stay at theirs), no restart used. */
START_TEST(test_replace_moves_only_that_node)
{
	char nm[3][PEER_NAME_MAX + 1];
	const char *n0 = nm[0], *slow = nm[1], *n2 = nm[2];
	const struct straggler_found *f;
	const struct job *job;
	size_t mark, n;
	uint64_t id;

	id = run(3, JOB_STRAGGLER_REPLACE);
	node_names(id, nm, 3);
	mark = D.ncmds;
	steps(id, 1, ROUNDS_TO_NAME + 1, rank3_twice);
	ck_assert_uint_eq(stragglers(), 1);
	f = straggler_list(D.cl, id, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert(f[0].replaced);
	ck_assert_msg(strstr(events(id, "straggler").detail,
	    "at the next checkpoint") != NULL, "detail %s",
	    events(id, "straggler").detail);
	/* The checkpoint signal to every node; it runs until LATEST. */
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, id, mark), 3);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, mark), 0);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	domain_checkpoint(&D, n0, id, domain_job(&D, id)->attempt, 40,
	    "/ckpt/40");
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RESTARTING);
	ck_assert_msg(strstr(job->reason, "straggler: rank 3 on ") != NULL &&
	    strstr(job->reason, "2.0× slower") != NULL, "reason %s",
	    job->reason);
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_str_eq(domain_rank_node(job, 0), n0);
	ck_assert_str_eq(domain_rank_node(job, 1), "spare01");
	ck_assert_str_eq(domain_rank_node(job, 2), n2);
	ck_assert_ptr_null(job_node_placement(job, slow));
	ck_assert_uint_eq(job->restarts, 0);
	/* The new attempt starts its comparison over. */
	steps(id, 100, 100 + ROUNDS_TO_NAME, rank3_twice);
	ck_assert_uint_eq(stragglers(), 2);
}
END_TEST

static uint32_t
ranks3_5_twice(uint32_t rank, uint64_t step)
{
	(void)step;
	return rank == 3 || rank == 5 ? 200 : 100;
}

/* Two slow nodes named before the move: the restart leaves both out
 * (one spare and one free node take their shares), so neither comes
 * back in the other's place. */
START_TEST(test_replace_two_at_once)
{
	char nm[3][PEER_NAME_MAX + 1];
	const char *n0 = nm[0], *s1 = nm[1], *s2 = nm[2];
	const struct job *job;
	uint64_t id;
	size_t mark;

	id = run(3, JOB_STRAGGLER_REPLACE);
	node_names(id, nm, 3);
	mark = D.ncmds;
	steps(id, 1, ROUNDS_TO_NAME + 1, ranks3_5_twice);
	ck_assert_uint_eq(stragglers(), 2);
	ck_assert_uint_eq(jobs_avoiding(domain_job(&D, id)), 2);
	/* One checkpoint signal to each node, not one per straggler. */
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, id, mark), 3);
	domain_checkpoint(&D, n0, id, domain_job(&D, id)->attempt, 40,
	    "/ckpt/40");
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESTARTING);
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_uint_eq(job->nplace, 3);
	ck_assert_str_eq(domain_rank_node(job, 0), n0);
	ck_assert_ptr_null(job_node_placement(job, s1));
	ck_assert_ptr_null(job_node_placement(job, s2));
	ck_assert_ptr_nonnull(job_node_placement(job, "spare01"));
}
END_TEST

static uint32_t
node1_both_twice(uint32_t rank, uint64_t step)
{
	(void)step;
	return rank == 2 || rank == 3 ? 200 : 100;
}

struct ev_all {
	unsigned n, no_room;
};

static int
ev_all_cb(const struct store_event *ev, void *arg)
{
	struct ev_all *a = arg;

	if (strcmp(ev->kind, "straggler") != 0)
		return 0;
	a->n++;
	a->no_room += strstr(ev->detail, "no spare or free node") != NULL;
	return 0;
}

/* Both ranks of one node slow, one spare: the node needs one place, not
 * one per rank; both ranks are named, the node moves, its score counts
 * it once. */
START_TEST(test_replace_two_ranks_one_node)
{
	char slow[PEER_NAME_MAX + 1];
	struct ev_all a = { 0 };
	const struct job *job;
	struct cerr err;
	uint64_t id;

	id = run(4, JOB_STRAGGLER_REPLACE);
	job = domain_job(&D, id);
	snprintf(slow, sizeof(slow), "%s", domain_rank_node(job, 1));
	steps(id, 1, ROUNDS_TO_NAME + 1, node1_both_twice);
	ck_assert_uint_eq(stragglers(), 2);
	ck_assert_int_eq(store_events_list(D.st, 0, id, NULL, "straggler", 0,
	    0, ev_all_cb, &a, &err), 0);
	ck_assert_uint_eq(a.n, 2);
	ck_assert_uint_eq(a.no_room, 0);
	ck_assert_uint_eq(jobs_avoiding(domain_job(&D, id)), 1);
	domain_checkpoint(&D, domain_rank_node(job, 0), id,
	    domain_job(&D, id)->attempt, 40, "/ckpt/40");
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_ptr_null(job_node_placement(job, slow));
	ck_assert_ptr_nonnull(job_node_placement(job, "spare01"));
}
END_TEST

/* replace with nowhere to go: reported only, nothing moves. */
START_TEST(test_replace_without_room)
{
	static const struct peer admin = { "root", ROLE_ADMIN };
	struct cerr err;
	size_t mark;
	uint64_t id;

	ck_assert_int_eq(recovery_drain(D.cl, &admin, "spare01", "repair",
	    false, D.now, &err), 0);
	ck_assert_uint_ne(domain_submit(&D, "bob", 2, 0, NULL, NULL, &err),
	    0);
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	id = run(2, JOB_STRAGGLER_REPLACE);
	mark = D.ncmds;
	steps(id, 1, ROUNDS_TO_NAME + 1, rank3_twice);
	ck_assert_uint_eq(stragglers(), 1);
	ck_assert_msg(strstr(events(id, "straggler").detail,
	    "no spare or free node") != NULL, "detail %s",
	    events(id, "straggler").detail);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, id, mark), 0);
}
END_TEST

static void
nodelist_fn(struct job_spec *spec, void *arg)
{
	struct spec *o = arg;

	domain_spec_apply(spec, &o->d);
	spec->on_straggler = o->on_straggler;
	spec->nodelist = strdup("node01,node02,node03");
	ck_assert_ptr_nonnull(spec->nodelist);
}

/* replace where the free nodes counted as room cannot hold the job
 * (here its --nodelist; a constraint, a GPU type or the topology do
 * the same): the restart takes the slow node back rather than wait,
 * and says so. */
START_TEST(test_replace_never_stalls_the_restart)
{
	struct spec o = { .d = { .checkpoint_dir = "/ckpt", .ckpt_secs = 60,
	    .tasks_per_node = 2 }, .on_straggler = JOB_STRAGGLER_REPLACE };
	char slow[PEER_NAME_MAX + 1];
	const struct job *job;
	struct cerr err;
	uint64_t id;

	id = domain_submit(&D, "alice", 3, 0, nodelist_fn, &o, &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	snprintf(slow, sizeof(slow), "%s",
	    domain_rank_node(domain_job(&D, id), 1));
	steps(id, 1, ROUNDS_TO_NAME + 1, rank3_twice);
	ck_assert_uint_eq(stragglers(), 1);
	ck_assert_ptr_nonnull(strstr(events(id, "straggler").detail,
	    "at the next checkpoint"));
	domain_checkpoint(&D, domain_rank_node(domain_job(&D, id), 0), id,
	    domain_job(&D, id)->attempt, 40, "/ckpt/40");
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESTARTING);
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_ptr_nonnull(job_node_placement(job, slow));
	ck_assert_uint_eq(events(id, "avoid-lifted").n, 1);
	ck_assert_msg(strstr(events(id, "avoid-lifted").detail, slow) !=
	    NULL, "detail %s", events(id, "avoid-lifted").detail);
}
END_TEST

/* A rank's time from a node that does not hold it is refused and
 * counted; it does not make the rank a straggler. */
START_TEST(test_foreign_report_refused)
{
	struct cluster_stats st;
	const struct job *job;
	uint64_t id, s;
	uint32_t r;

	id = run(3, JOB_STRAGGLER_REPORT);
	job = domain_job(&D, id);
	for (s = 1; s < 3 * ROUNDS_TO_NAME; s++)
		for (r = 0; r < 6; r++)
			/* Everyone's times from node rank 0's node: only
			 * ranks 0 and 1 are its. */
			report(domain_rank_node(job, 0), id, r, s,
			    r == 3 ? 500 : 100);
	cluster_stats(D.cl, &st);
	ck_assert_uint_eq(st.reports_rejected[REPORT_STEP_TIME],
	    (3 * ROUNDS_TO_NAME - 1) * 4);
	ck_assert_uint_eq(stragglers(), 0);
	/* Another attempt's reports are stale: not refused, not used. */
	straggler_reports(D.cl, domain_conn(&D, domain_rank_node(job, 1)),
	    &(struct step_time_report){ .job_id = id,
	    .attempt = job->attempt + 1, .rank = 3, .step = 1000,
	    .compute_ms = 500 }, 1, D.now);
	cluster_stats(D.cl, &st);
	ck_assert_uint_eq(st.reports_rejected[REPORT_STEP_TIME],
	    (3 * ROUNDS_TO_NAME - 1) * 4);
}
END_TEST

static Suite *
straggler_suite(void)
{
	Suite *s = suite_create("straggler");
	TCase *tc = tcase_create("straggler");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_slow_rank_named);
	tcase_add_test(tc, test_job_wide_slowdown);
	tcase_add_test(tc, test_noise_below_factor);
	tcase_add_test(tc, test_replace_moves_only_that_node);
	tcase_add_test(tc, test_replace_two_at_once);
	tcase_add_test(tc, test_replace_two_ranks_one_node);
	tcase_add_test(tc, test_replace_without_room);
	tcase_add_test(tc, test_replace_never_stalls_the_restart);
	tcase_add_test(tc, test_foreign_report_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(straggler_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
