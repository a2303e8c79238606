/* Jobs in a container image (daemon/controller/domain/gang.c) in virtual
 * time: the image is prepared on every node in parallel before the
 * gang's launch; the job stays PENDING with reason "ImagePull: K of N
 * nodes ready" (its time limit and goodput's run time not running) until
 * every node has it, with an "image" event per node; a node that cannot
 * prepare it fails the job at once (or backs off, when it may pass); a
 * batch job prepares on its first node only. On the real domain
 * (tests/domain/domain.h). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/store/store.h"
#include "tests/domain/domain.h"

#define IMAGE "/shared/images/pt.sqsh"

static struct domain D;

static void
setup(void)
{
	struct cerr err;

	ck_assert_msg(domain_open(&D, NULL, &err) == 0, "domain_open: %s",
	    err.text);
	ck_assert_msg(domain_add_nodes(&D, 3, 4, &err) == 0, "add nodes: %s",
	    err.text);
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

/* A job of nodes nodes (in IMAGE when image), placed: its image's
 * preparations (or, without one, its launches) out. */
static uint64_t
placed(unsigned nodes, bool image, const struct domain_spec *d)
{
	struct spec o = { .image = image };
	struct cerr err;
	uint64_t id;

	if (d != NULL)
		o.d = *d;
	id = domain_submit(&D, "alice", nodes, 1, spec_fn, &o, &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	domain_pass(&D);
	return id;
}

#define DIGEST "sha256:" \
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* Node rank r's node answers its preparation: ready after ms, known by
 * DIGEST. */
static void
ready(uint64_t id, unsigned r, int64_t ms, bool cached)
{
	struct image_ready ir = { ms, cached, DIGEST };
	char node[PEER_NAME_MAX + 1];

	/* A copy: the answer may release the placement. */
	snprintf(node, sizeof(node), "%s",
	    domain_rank_node(domain_job(&D, id), r));
	ck_assert_uint_eq(domain_answer_prepares(&D, id, node, &ir, NULL), 1);
}

/* Node rank r's node cannot prepare the image: code, why. */
static void
unready(uint64_t id, unsigned r, enum err_code code, const char *why)
{
	char node[PEER_NAME_MAX + 1];
	struct cerr err;

	snprintf(node, sizeof(node), "%s",
	    domain_rank_node(domain_job(&D, id), r));
	cerr_set(&err, code, "%s", why);
	ck_assert_uint_eq(domain_answer_prepares(&D, id, node, NULL, &err),
	    1);
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
 * its launch goes once the last node has the image, and it runs (its
 * limit starting) once every node answered the launch. */
START_TEST(test_waits_for_every_node)
{
	struct domain_spec minute = { .time_limit_s = 60 };
	const unsigned none[] = { 0 };
	char node0[PEER_NAME_MAX + 1], node1[PEER_NAME_MAX + 1];
	const struct job *job;
	struct ev_find ev;
	int64_t t;
	uint64_t id;

	id = placed(2, true, &minute);
	job = domain_job(&D, id);
	snprintf(node0, sizeof(node0), "%s", domain_rank_node(job, 0));
	snprintf(node1, sizeof(node1), "%s", domain_rank_node(job, 1));
	ck_assert_uint_eq(domain_count(&D, DOMAIN_PREPARE, id, 0), 2);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, 0), 0);
	ck_assert_int_eq(job->state, JOB_PENDING);
	ck_assert_str_eq(job->reason, "ImagePull: 0 of 2 nodes ready");
	ev = image_events(id);
	ck_assert_uint_eq(ev.n, 1);
	ck_assert_str_eq(ev.detail, "preparing image " IMAGE " on 2 node(s)");

	domain_advance(&D, 3000);
	ready(id, 0, 2900, false);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_PENDING);
	ck_assert_str_eq(job->reason, "ImagePull: 1 of 2 nodes ready");
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, 0), 0);
	ev = image_events(id);
	ck_assert_uint_eq(ev.n, 2);
	ck_assert_str_eq(ev.node, node0);
	ck_assert_str_eq(ev.detail, "image " IMAGE " ready in 2900 ms "
	    "(unpacked, " DIGEST ")");
	ck_assert_str_eq(domain_job(&D, id)->image_digest, DIGEST);

	/* Twice the time limit unpacking on the other node: no timeout,
	 * no stop, no launch, nothing of goodput's run time. */
	for (t = 0; t < 120000; t += 5000) {
		domain_advance(&D, 5000);
		beat(id, none, 0);
		domain_tick(&D);
	}
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_PENDING);
	ck_assert_str_eq(job->reason, "ImagePull: 1 of 2 nodes ready");
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, 0), 0);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, 0), 0);
	ck_assert_int_eq(job->gp.first_start_ms, 0);

	ready(id, 1, 5, true);
	ev = image_events(id);
	ck_assert_uint_eq(ev.n, 3);
	ck_assert_str_eq(ev.node, node1);
	ck_assert_str_eq(ev.detail, "image " IMAGE " ready in 5 ms (cached, "
	    DIGEST ")");
	job = domain_job(&D, id);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, 0), 2);
	ck_assert_str_eq(job->reason, "Launching");
	ck_assert_int_eq(job->state, JOB_PENDING);
	domain_advance(&D, 10);
	ck_assert_uint_eq(domain_answer_launches(&D, NULL), 2);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_int_eq(job->start_ms, D.now);
	ck_assert_int_eq(job->gp.first_start_ms, D.now);

	/* The limit runs from the start. */
	for (t = 0; t < 55000; t += 5000) {
		domain_advance(&D, 5000);
		beat(id, none, 0);
		domain_tick(&D);
	}
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	domain_advance(&D, 5000);
	beat(id, none, 0);
	domain_tick(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_TIMEOUT);
}
END_TEST

/* An answer without a digest, or with one not well formed, says only
 * the time: nothing is recorded of it. */
START_TEST(test_bad_digest_ignored)
{
	struct image_ready ir = { 7, true, "sha256:XYZ" };
	uint64_t id;

	id = placed(1, true, NULL);
	ck_assert_uint_eq(domain_answer_prepares(&D, id, NULL, &ir, NULL), 1);
	ck_assert_str_eq(image_events(id).detail, "image " IMAGE " ready in "
	    "7 ms (cached)");
	ck_assert_str_eq(domain_job(&D, id)->image_digest, "");
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, 0), 1);
}
END_TEST

/* A node that cannot prepare the image for good fails the job at once,
 * naming it; the nodes are told to stop (the other one's preparation);
 * its answer, coming later, launches nothing. */
START_TEST(test_failure_fails_at_once)
{
	struct image_ready ir = { 10, false, "" };
	const struct job *job;
	uint64_t id;

	id = placed(2, true, NULL);
	unready(id, 1, ERR_NOT_FOUND, "cannot read the container image '"
	    IMAGE "' as the job's user: No such file or directory");
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_FAILED);
	ck_assert_uint_eq(job->restarts, 0);
	ck_assert_msg(strstr(job->reason, IMAGE) != NULL, "reason %s",
	    job->reason);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, 0), 2);
	ck_assert_uint_eq(domain_answer_prepares(&D, id, NULL, &ir, NULL), 1);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, 0), 0);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_FAILED);
	domain_tick(&D);
}
END_TEST

/* One that may pass (the node's agent went away) backs off and prepares
 * again, as a new attempt. */
START_TEST(test_transient_failure_backs_off)
{
	struct image_ready ir = { 10, false, "" };
	char node1[PEER_NAME_MAX + 1];
	const struct job *job;
	uint64_t id;

	id = placed(2, true, NULL);
	snprintf(node1, sizeof(node1), "%s",
	    domain_rank_node(domain_job(&D, id), 1));
	unready(id, 0, ERR_UNAVAILABLE, "the node's agent disconnected");
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_PENDING);
	ck_assert_msg(strncmp(job->reason, "StartBackoff:", 13) == 0,
	    "reason %s", job->reason);
	ck_assert_uint_eq(domain_answer_prepares(&D, id, node1, &ir, NULL),
	    1);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, 0), 0);
	domain_advance(&D, JOBS_BACKOFF_MIN_MS);
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_uint_eq(job->attempt, 2);
	ck_assert_str_eq(job->reason, "ImagePull: 0 of 2 nodes ready");
	ck_assert_uint_eq(domain_count(&D, DOMAIN_PREPARE, id, 0), 4);
}
END_TEST

/* The node still preparing goes quiet: once it is DOWN the job starts
 * again elsewhere (a new attempt, prepared again on its new nodes); the
 * lost node's late answer changes nothing. */
START_TEST(test_node_lost_while_pulling)
{
	const unsigned none[] = { 0 };
	struct image_ready ir = { 10, false, "" };
	char lost[PEER_NAME_MAX + 1];
	const struct job *job;
	size_t prepares;
	int64_t t;
	uint64_t id;

	id = placed(2, true, NULL);
	ready(id, 0, 10, false);
	snprintf(lost, sizeof(lost), "%s",
	    domain_rank_node(domain_job(&D, id), 1));
	for (t = 0; t < 60000 && domain_job(&D, id)->attempt == 1; t += 2000) {
		domain_advance(&D, 2000);
		beat_but(id, none, 0, lost);
		domain_tick(&D);
		domain_pass(&D);
	}
	job = domain_job(&D, id);
	ck_assert_uint_eq(job->attempt, 2);
	ck_assert_ptr_null(job_node_placement(job, lost));
	/* The kept node's nothing-running heartbeat lets the launch go. */
	beat_but(id, none, 0, lost);
	prepares = domain_count(&D, DOMAIN_PREPARE, id, 0);
	ck_assert_uint_eq(prepares, 4);
	ck_assert_str_eq(domain_job(&D, id)->reason,
	    "ImagePull: 0 of 2 nodes ready");
	ck_assert_uint_eq(domain_answer_prepares(&D, id, lost, &ir, NULL), 1);
	ck_assert_str_eq(domain_job(&D, id)->reason,
	    "ImagePull: 0 of 2 nodes ready");
	ck_assert_uint_eq(domain_answer_prepares(&D, id, NULL, &ir, NULL), 2);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, 0), 2);
	ck_assert_uint_eq(domain_answer_launches(&D, NULL), 2);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
}
END_TEST

/* Cancelled while its image is prepared: both nodes are told to stop,
 * and their answers launch nothing. */
START_TEST(test_cancel_while_pulling)
{
	static const struct peer alice = { "alice", ROLE_USER };
	struct image_ready ir = { 10, true, "" };
	enum job_state st;
	struct cerr err;
	uint64_t id;

	id = placed(2, true, NULL);
	ck_assert_int_eq(cluster_cancel(D.cl, &alice, id, D.now, &st, &err),
	    0);
	domain_commit(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_CANCELLED);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, 0), 2);
	ck_assert_uint_eq(domain_answer_prepares(&D, id, NULL, &ir, NULL), 2);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, 0), 0);
	ck_assert_uint_eq(image_events(id).n, 1);
}
END_TEST

/* A batch job's script runs on its first node only: the image is
 * prepared there alone. A job without an image is launched at once. */
START_TEST(test_batch_and_plain)
{
	struct domain_spec batch = { .batch = true };
	uint64_t id, plain;

	id = placed(2, true, &batch);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_PREPARE, id, 0), 1);
	ck_assert_uint_eq(domain_last(&D, DOMAIN_PREPARE, id)->node_rank, 0);
	ck_assert_str_eq(domain_job(&D, id)->reason,
	    "ImagePull: 1 of 2 nodes ready");
	ready(id, 0, 1, true);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, 0), 2);
	ck_assert_uint_eq(domain_answer_launches(&D, NULL), 2);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);

	plain = placed(1, false, NULL);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_PREPARE, plain, 0), 0);
	ck_assert_uint_eq(domain_answer_launches(&D, NULL), 1);
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
	tcase_add_test(tc, test_bad_digest_ignored);
	tcase_add_test(tc, test_failure_fails_at_once);
	tcase_add_test(tc, test_transient_failure_backs_off);
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
