/* daemon/controller/rpc/agentcmd.c: commands to agents and their answers.
 * A command is tracked before it is sent, so that an agent never runs a
 * launch the controller believes failed; every tracked command is
 * answered exactly once (reply, error, disconnect, timeout). calloc is
 * wrapped (-Wl,--wrap=calloc) to fail on demand. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/rpc/agentcmd.h"
#include "lib/job.h"

void *__real_calloc(size_t, size_t);
void *__wrap_calloc(size_t n, size_t size);

static int fail_callocs;	/* the next calloc fails when > 0 */

void *
__wrap_calloc(size_t n, size_t size)
{
	if (fail_callocs > 0) {
		fail_callocs--;
		return NULL;
	}
	return __real_calloc(n, size);
}

static size_t sent;
static uint64_t last_id;
static bool send_fails;
static bool last_prepare;	/* the last launch sent had prepare_image */

static int
record_send(void *ctx, uint64_t conn_id, Cohort__V1__Envelope *env)
{
	if (send_fails)
		return -1;
	sent++;
	last_id = env->id;
	if (env->body_case == COHORT__V1__ENVELOPE__BODY_LAUNCH)
		last_prepare = env->launch->has_prepare_image &&
		    env->launch->prepare_image;
	return 0;
}

static int answers;
static enum err_code last_code;

static void
done(void *arg, const struct cerr *err, int64_t now)
{
	answers++;
	last_code = err != NULL ? err->code : ERR_NONE;
}

static struct image_ready last_ready;

static void
prepared(void *arg, const struct image_ready *r, const struct cerr *err,
    int64_t now)
{
	answers++;
	last_code = err != NULL ? err->code : ERR_NONE;
	ck_assert((r == NULL) == (err != NULL));
	if (r != NULL)
		last_ready = *r;
}

static struct job job;
static struct placement place;
static struct launch_cmd lc;
static const char *nodelist[] = { "node01" };

static void
setup(void)
{
	static char *argv[] = { "true" };

	memset(&job, 0, sizeof(job));
	job_spec_init(&job.spec);
	job.spec.argv = argv;
	job.spec.argc = 1;
	job.id = 7;
	job.attempt = 1;
	job.user = "alice";
	memset(&place, 0, sizeof(place));
	strcpy(place.node, "node01");
	place.ngpus = 1;
	lc.job = &job;
	lc.place = &place;
	lc.nodelist = nodelist;
	lc.nnodes = 1;
	lc.master_addr = "127.0.0.1";
	lc.master_port = 20000;
	sent = 0;
	answers = 0;
	last_prepare = false;
	send_fails = false;
	fail_callocs = 0;
}

static void
reply(struct agentcmd *ac, uint64_t conn, uint64_t id,
    Cohort__V1__Envelope__BodyCase body)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__LaunchReply lr = COHORT__V1__LAUNCH_REPLY__INIT;
	Cohort__V1__Error e = COHORT__V1__ERROR__INIT;

	env.id = id;
	env.body_case = body;
	if (body == COHORT__V1__ENVELOPE__BODY_LAUNCH_REPLY)
		env.launch_reply = &lr;
	else {
		e.code = COHORT__V1__ERROR_CODE__ERROR_UNAVAILABLE;
		e.text = "busy";
		env.error = &e;
	}
	ck_assert(agentcmd_on_reply(ac, conn, &env));
}

/* The finding: a launch was sent, then tracked; when tracking failed
 * the caller undid a launch the agent had received. */
START_TEST(test_track_before_send)
{
	struct agentcmd *ac = agentcmd_create(record_send, NULL, 1000);

	fail_callocs = 1;
	ck_assert_int_eq(agentcmd_launch(ac, 5, &lc, 0, done, NULL), -1);
	ck_assert_uint_eq(sent, 0);
	ck_assert_uint_eq(agentcmd_pending(ac), 0);
	agentcmd_destroy(ac);
	ck_assert_int_eq(answers, 0);
}
END_TEST

/* A send that fails forgets the command: its callback never runs. */
START_TEST(test_failed_send_forgotten)
{
	struct agentcmd *ac = agentcmd_create(record_send, NULL, 1000);

	send_fails = true;
	ck_assert_int_eq(agentcmd_launch(ac, 5, &lc, 0, done, NULL), -1);
	ck_assert_uint_eq(agentcmd_pending(ac), 0);
	agentcmd_conn_closed(ac, 5);
	agentcmd_expire(ac, 1000000);
	agentcmd_destroy(ac);
	ck_assert_int_eq(answers, 0);
}
END_TEST

START_TEST(test_answered_once)
{
	struct agentcmd *ac = agentcmd_create(record_send, NULL, 1000);
	uint64_t id;

	ck_assert_int_eq(agentcmd_launch(ac, 5, &lc, 0, done, NULL), 0);
	ck_assert_uint_eq(sent, 1);
	id = last_id;
	/* From another connection: not ours to answer. */
	reply(ac, 6, id, COHORT__V1__ENVELOPE__BODY_LAUNCH_REPLY);
	ck_assert_int_eq(answers, 0);
	reply(ac, 5, id, COHORT__V1__ENVELOPE__BODY_LAUNCH_REPLY);
	ck_assert_int_eq(answers, 1);
	ck_assert_int_eq(last_code, ERR_NONE);
	/* A repeat matches nothing. */
	reply(ac, 5, id, COHORT__V1__ENVELOPE__BODY_LAUNCH_REPLY);
	agentcmd_conn_closed(ac, 5);
	ck_assert_int_eq(answers, 1);
	/* An error reply, a disconnect, a timeout. */
	ck_assert_int_eq(agentcmd_launch(ac, 5, &lc, 0, done, NULL), 0);
	reply(ac, 5, last_id, COHORT__V1__ENVELOPE__BODY_ERROR);
	ck_assert_int_eq(answers, 2);
	ck_assert_int_eq(last_code, ERR_UNAVAILABLE);
	ck_assert_int_eq(agentcmd_launch(ac, 5, &lc, 0, done, NULL), 0);
	agentcmd_conn_closed(ac, 5);
	ck_assert_int_eq(answers, 3);
	ck_assert_int_eq(agentcmd_launch(ac, 5, &lc, 0, done, NULL), 0);
	agentcmd_expire(ac, 1000);
	ck_assert_int_eq(answers, 3);
	agentcmd_expire(ac, 1001);
	ck_assert_int_eq(answers, 4);
	ck_assert_uint_eq(agentcmd_pending(ac), 0);
	/* Shutting down answers what is left. */
	ck_assert_int_eq(agentcmd_launch(ac, 5, &lc, 0, done, NULL), 0);
	agentcmd_destroy(ac);
	ck_assert_int_eq(answers, 5);
}
END_TEST

/* A preparation goes as a launch with prepare_image, never expires, and
 * is answered once: the image's time and cache from the reply, or the
 * error, or the disconnect. */
START_TEST(test_prepare)
{
	struct agentcmd *ac = agentcmd_create(record_send, NULL, 1000);
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__LaunchReply lr = COHORT__V1__LAUNCH_REPLY__INIT;
	Cohort__V1__ImagePrepared img = COHORT__V1__IMAGE_PREPARED__INIT;

	ck_assert_int_eq(agentcmd_prepare(ac, 5, &lc, 0, NULL, NULL), -1);
	ck_assert_int_eq(agentcmd_prepare(ac, 5, &lc, 0, prepared, NULL), 0);
	ck_assert(last_prepare);
	agentcmd_expire(ac, 10000000);
	ck_assert_int_eq(answers, 0);
	img.has_ms = img.has_cached = 1;
	img.ms = 1234;
	img.cached = true;
	lr.image = &img;
	env.id = last_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_LAUNCH_REPLY;
	env.launch_reply = &lr;
	ck_assert(agentcmd_on_reply(ac, 5, &env));
	ck_assert_int_eq(answers, 1);
	ck_assert_int_eq(last_code, ERR_NONE);
	ck_assert_int_eq(last_ready.ms, 1234);
	ck_assert(last_ready.cached);
	ck_assert(agentcmd_on_reply(ac, 5, &env));
	ck_assert_int_eq(answers, 1);
	/* An error, a disconnect. */
	ck_assert_int_eq(agentcmd_prepare(ac, 5, &lc, 0, prepared, NULL), 0);
	reply(ac, 5, last_id, COHORT__V1__ENVELOPE__BODY_ERROR);
	ck_assert_int_eq(answers, 2);
	ck_assert_int_eq(last_code, ERR_UNAVAILABLE);
	ck_assert_int_eq(agentcmd_prepare(ac, 5, &lc, 0, prepared, NULL), 0);
	agentcmd_conn_closed(ac, 5);
	ck_assert_int_eq(answers, 3);
	/* A plain launch after it is no preparation. */
	ck_assert_int_eq(agentcmd_launch(ac, 5, &lc, 0, done, NULL), 0);
	ck_assert(!last_prepare);
	agentcmd_destroy(ac);
	ck_assert_int_eq(answers, 4);
}
END_TEST

static Suite *
agentcmd_suite(void)
{
	Suite *s = suite_create("agentcmd");
	TCase *tc = tcase_create("commands");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_track_before_send);
	tcase_add_test(tc, test_failed_send_forgotten);
	tcase_add_test(tc, test_answered_once);
	tcase_add_test(tc, test_prepare);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(agentcmd_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
