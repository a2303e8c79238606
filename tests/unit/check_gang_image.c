/* Jobs in a container image (daemon/controller/domain/gang.c) in virtual
 * time: every node answers the launch at once and prepares the image on
 * its own; the job stays PENDING with reason "ImagePull: K of N nodes
 * ready" (its time limit and goodput's run time not running) until every
 * node has its ranks running, with an "image" event per node; a node
 * whose preparation fails fails the job at once; a batch job waits for
 * its first node only. On the real domain (tests/domain/domain.h). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/store/store.h"
#include "tests/domain/domain.h"

#define IMAGE "/shared/images/pt.sqsh"

static struct domain D;

static void
setup(void)
{
	struct cerr err;
	char name[16];
	unsigned i;

	ck_assert_msg(domain_open(&D, NULL, &err) == 0, "domain_open: %s",
	    err.text);
	for (i = 1; i <= 3; i++) {
		snprintf(name, sizeof(name), "node%02u", i);
		ck_assert_msg(domain_add_node(&D, name, 4, false, &err) != 0,
		    "add %s: %s", name, err.text);
	}
}

static void
teardown(void)
{
	domain_close(&D);
}

struct spec {
	struct domain_spec d;
	bool image;
};

static void
spec_fn(struct job_spec *spec, void *arg)
{
	struct spec *o = arg;

	domain_spec_apply(spec, &o->d);
	if (o->image)
		ck_assert_ptr_nonnull(spec->ctr.image = strdup(IMAGE));
}

/* A job of nodes nodes (in IMAGE when image), placed and its launch
 * answered by every node. */
static uint64_t
launched(unsigned nodes, bool image, const struct domain_spec *d)
{
	struct spec o = { .image = image };
	struct cerr err;
	uint64_t id;

	if (d != NULL)
		o.d = *d;
	id = domain_submit(&D, "alice", nodes, 1, spec_fn, &o, &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, 0), nodes);
	ck_assert_uint_eq(domain_answer_launches(&D, NULL), nodes);
	return id;
}

/* Heartbeats from every node but quiet (NULL: none): those of running[]
 * (node ranks of job id's current attempt, one task each) list their
 * rank, the others nothing. */
static void
beat_but(uint64_t id, const unsigned *running, size_t n, const char *quiet)
{
	const struct job *job = domain_job(&D, id);
	struct task_report r;
	const char *node;
	size_t i, k;
	bool listed;

	for (i = 0; i < D.nnodes; i++) {
		if (quiet != NULL && strcmp(D.nodes[i].name, quiet) == 0)
			continue;
		listed = false;
		for (k = 0; k < n; k++) {
			node = domain_rank_node(job, running[k]);
			if (node == NULL || strcmp(node, D.nodes[i].name) != 0)
				continue;
			memset(&r, 0, sizeof(r));
			r.job_id = id;
			r.restart = job->attempt;
			r.rank = running[k];
			r.running = true;
			domain_heartbeat(&D, D.nodes[i].name, &r, 1);
			listed = true;
		}
		if (!listed)
			domain_heartbeat(&D, D.nodes[i].name, NULL, 0);
	}
}

static void
beat(uint64_t id, const unsigned *running, size_t n)
{
	beat_but(id, running, n, NULL);
}

struct ev_find {
	size_t n;
	char node[PEER_NAME_MAX + 1];
	char detail[512];
};

static int
ev_cb(const struct store_event *ev, void *arg)
{
	struct ev_find *f = arg;

	f->n++;
	snprintf(f->node, sizeof(f->node), "%s", ev->node ? ev->node : "");
	snprintf(f->detail, sizeof(f->detail), "%s", ev->detail);
	return 0;
}

/* The job's "image" events: how many, and the last. */
static struct ev_find
image_events(uint64_t id)
{
	struct ev_find f;
	struct cerr err;

	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(store_events_list(D.st, 0, id, NULL, "image", 0, 0,
	    ev_cb, &f, &err), 0);
	return f;
}

/* The job waits, saying how many nodes are ready, past its time limit;
 * it runs (and its limit starts) once the last node's ranks run. */
START_TEST(test_waits_for_every_node)
{
	struct domain_spec minute = { .time_limit_s = 60 };
	const unsigned first[] = { 0 }, both[] = { 0, 1 };
	const struct job *job;
	struct ev_find ev;
	int64_t t, ready_ms;
	char node1[PEER_NAME_MAX + 1];
	uint64_t id;

	id = launched(2, true, &minute);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_PENDING);
	ck_assert_str_eq(job->reason, "ImagePull: 0 of 2 nodes ready");
	ck_assert_int_eq(job->start_ms, 0);
	ev = image_events(id);
	ck_assert_uint_eq(ev.n, 1);
	ck_assert_str_eq(ev.detail, "preparing image " IMAGE " on 2 node(s)");

	domain_advance(&D, 3000);
	beat(id, first, 1);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_PENDING);
	ck_assert_str_eq(job->reason, "ImagePull: 1 of 2 nodes ready");
	ev = image_events(id);
	ck_assert_uint_eq(ev.n, 2);
	ck_assert_str_eq(ev.node, domain_rank_node(job, 0));
	ck_assert_str_eq(ev.detail, "image " IMAGE " ready, ranks started "
	    "3000 ms after the launch");

	/* Twice the time limit preparing on the other node: no timeout,
	 * no stop, nothing of goodput's run time. */
	for (t = 0; t < 120000; t += 5000) {
		domain_advance(&D, 5000);
		beat(id, first, 1);
		domain_tick(&D);
	}
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_PENDING);
	ck_assert_str_eq(job->reason, "ImagePull: 1 of 2 nodes ready");
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, 0), 0);
	ck_assert_int_eq(job->gp.first_start_ms, 0);

	snprintf(node1, sizeof(node1), "%s", domain_rank_node(job, 1));
	beat(id, both, 2);
	ready_ms = D.now;
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_str_eq(job->reason, "");
	ck_assert_int_eq(job->start_ms, ready_ms);
	ck_assert_int_eq(job->gp.first_start_ms, ready_ms);
	ev = image_events(id);
	ck_assert_uint_eq(ev.n, 3);
	ck_assert_str_eq(ev.node, node1);
	/* Later heartbeats change nothing more. */
	beat(id, both, 2);
	ck_assert_uint_eq(image_events(id).n, 3);

	/* The limit runs from the start. */
	for (t = 0; t < 55000; t += 5000) {
		domain_advance(&D, 5000);
		beat(id, both, 2);
		domain_tick(&D);
	}
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	domain_advance(&D, 5000);
	beat(id, both, 2);
	domain_tick(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_TIMEOUT);
}
END_TEST

/* A rank that started and ended before any heartbeat listed it (even
 * before the other node answered the launch) says its node's image was
 * ready. */
START_TEST(test_exit_counts_as_ready)
{
	const unsigned first[] = { 0 };

	struct spec o = { .image = true };
	char node1[PEER_NAME_MAX + 1];
	const struct job *job;
	struct cerr err;
	uint64_t id;

	id = domain_submit(&D, "alice", 2, 1, spec_fn, &o, &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	domain_pass(&D);
	job = domain_job(&D, id);
	snprintf(node1, sizeof(node1), "%s", domain_rank_node(job, 1));
	/* Rank 1's node answers, runs and ends it (a cached image) before
	 * rank 0's node answers the launch. */
	ck_assert_uint_eq(domain_answer_job(&D, id, node1, NULL), 1);
	ck_assert_int_eq(domain_exit(&D, node1, id, 1, 1, 0, &err), 0);
	ck_assert_uint_eq(domain_answer_launches(&D, NULL), 1);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_PENDING);
	ck_assert_str_eq(job->reason, "ImagePull: 1 of 2 nodes ready");
	beat(id, first, 1);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_int_eq(domain_exit(&D, domain_rank_node(job, 0), id, 1, 0,
	    0, &err), 0);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_COMPLETED);
}
END_TEST

/* A node that cannot prepare the image fails the job at once, naming
 * it; the other node is told to stop; later reports change nothing. */
START_TEST(test_failure_fails_at_once)
{
	const unsigned first[] = { 0 };
	struct task_report r;
	const struct job *job;
	struct cerr err;
	uint64_t id;

	id = launched(2, true, NULL);
	beat(id, first, 1);
	job = domain_job(&D, id);
	memset(&r, 0, sizeof(r));
	r.job_id = id;
	r.restart = 1;
	r.rank = 1;
	r.wait_status = 127 << 8;
	r.permanent = true;
	snprintf(r.why, sizeof(r.why), "image %s: No such file or directory",
	    IMAGE);
	ck_assert_int_eq(domain_task_exit(&D, domain_rank_node(job, 1), &r,
	    &err), 0);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_FAILED);
	ck_assert_uint_eq(job->restarts, 0);
	ck_assert_msg(strstr(job->reason, IMAGE) != NULL, "reason %s",
	    job->reason);
	ck_assert_uint_ge(domain_count(&D, DOMAIN_STOP, id, 0), 1);
	domain_tick(&D);
	beat(id, first, 1);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_FAILED);
	ck_assert_uint_eq(image_events(id).n, 2);
}
END_TEST

/* The node still preparing goes DOWN: the job restarts elsewhere (a
 * new attempt, preparing again, once its old rank is gone) and runs once
 * both nodes of the new attempt have their ranks running. */
START_TEST(test_node_lost_while_pulling)
{
	const unsigned first[] = { 0 }, both[] = { 0, 1 };
	char lost[PEER_NAME_MAX + 1];
	const struct job *job;
	int64_t t;
	uint64_t id;

	id = launched(2, true, NULL);
	beat(id, first, 1);
	job = domain_job(&D, id);
	snprintf(lost, sizeof(lost), "%s", domain_rank_node(job, 1));
	for (t = 0; t < 30000 && domain_job(&D, id)->attempt == 1; t += 2000) {
		domain_advance(&D, 2000);
		beat_but(id, first, 1, lost);
		domain_tick(&D);
		domain_pass(&D);
	}
	job = domain_job(&D, id);
	ck_assert_uint_eq(job->attempt, 2);
	ck_assert_ptr_null(job_node_placement(job, lost));
	/* The launch goes once the old rank is seen gone. */
	beat_but(id, NULL, 0, lost);
	ck_assert_uint_eq(domain_answer_launches(&D, NULL), 2);
	job = domain_job(&D, id);
	ck_assert_int_ne(job->state, JOB_RUNNING);
	ck_assert_str_eq(job->reason, "ImagePull: 0 of 2 nodes ready");
	beat_but(id, both, 2, lost);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
}
END_TEST

/* Cancelled while its image is prepared: the nodes are told to stop,
 * and the ranks a node starts later are stopped as unknown. */
START_TEST(test_cancel_while_pulling)
{
	static const struct peer alice = { "alice", ROLE_USER };
	const unsigned first[] = { 0 };
	enum job_state st;
	struct cerr err;
	size_t stops;
	uint64_t id;

	id = launched(2, true, NULL);
	ck_assert_int_eq(cluster_cancel(D.cl, &alice, id, D.now, &st, &err),
	    0);
	domain_commit(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_CANCELLED);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, 0), 2);
	domain_tick(&D);
	stops = domain_count(&D, DOMAIN_STOP, id, 0);
	beat(id, first, 1);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_CANCELLED);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, 0), stops + 1);
	ck_assert_uint_eq(image_events(id).n, 1);
}
END_TEST

/* A batch job's script runs on its first node only: the others have
 * nothing to prepare. A job without an image runs once answered. */
START_TEST(test_batch_and_plain)
{
	struct domain_spec batch = { .batch = true };
	const unsigned first[] = { 0 };
	uint64_t id, plain;

	id = launched(2, true, &batch);
	ck_assert_str_eq(domain_job(&D, id)->reason,
	    "ImagePull: 1 of 2 nodes ready");
	beat(id, first, 1);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);

	plain = launched(1, false, NULL);
	ck_assert_int_eq(domain_job(&D, plain)->state, JOB_RUNNING);
	ck_assert_uint_eq(image_events(plain).n, 0);
}
END_TEST

static Suite *
gang_image_suite(void)
{
	Suite *s = suite_create("gang_image");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_waits_for_every_node);
	tcase_add_test(tc, test_exit_counts_as_ready);
	tcase_add_test(tc, test_failure_fails_at_once);
	tcase_add_test(tc, test_node_lost_while_pulling);
	tcase_add_test(tc, test_cancel_while_pulling);
	tcase_add_test(tc, test_batch_and_plain);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(gang_image_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
