/* Mail (sbatch --mail-type): which of a job's events mail what, and the
 * subjects, in virtual time on the real domain (tests/domain/domain.h,
 * mail.c); the --mail-type and --mail-user checks (lib/job.c); and the
 * mail program runner's bounds (mailer.c) on a real event loop with
 * small scripts. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/domain/mail.h"
#include "daemon/controller/mailer.h"
#include "tests/domain/domain.h"

#define EXIT(code) ((code) << 8)

static struct domain D;
static const struct peer alice = { "alice", ROLE_USER };

/* What a submit asks for: mail_type, mail_user, and the domain's own. */
struct mail_spec {
	struct domain_spec ds;
	uint32_t mail_type;
	const char *mail_user;		/* copied; NULL: none */
};

static void
mail_spec_apply(struct job_spec *spec, void *arg)
{
	const struct mail_spec *m = arg;

	domain_spec_apply(spec, (void *)&m->ds);
	spec->mail_type = m->mail_type;
	if (m->mail_user != NULL)
		spec->mail_user = strdup(m->mail_user);
}

static void
setup(void)
{
	struct cerr err;

	ck_assert_msg(domain_open(&D, NULL, &err) == 0, "domain_open: %s",
	    err.text);
	ck_assert(domain_add_node(&D, "node01", 4, false, &err) != 0);
}

static void
teardown(void)
{
	domain_close(&D);
}

static uint64_t
submit(struct mail_spec *m)
{
	struct cerr err;
	uint64_t id;

	id = domain_submit(&D, "alice", 1, 4, mail_spec_apply, m, &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	return id;
}

/* Pass and answer the launch: RUNNING. */
static void
start(uint64_t id)
{
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
}

/* The n-th mail about job (0 first); fails the test when there is none. */
static const struct domain_cmd *
mail_nth(uint64_t id, size_t n)
{
	size_t i;

	for (i = 0; i < D.ncmds; i++)
		if (D.cmds[i].kind == DOMAIN_MAIL && D.cmds[i].job_id == id &&
		    n-- == 0)
			return &D.cmds[i];
	ck_abort_msg("job %llu: fewer mails than asked for",
	    (unsigned long long)id);
	return NULL;
}

static size_t
mails(uint64_t id)
{
	return domain_count(&D, DOMAIN_MAIL, id, 0);
}

static void
expect_subject(uint64_t id, size_t n, const char *fmt_rest)
{
	char want[400];

	snprintf(want, sizeof(want), "Slurm Job_id=%llu Name=true %s",
	    (unsigned long long)id, fmt_rest);
	ck_assert_str_eq(mail_nth(id, n)->subject, want);
}

/* ---- Events in virtual time ------------------------------------------ */

/* BEGIN and END: "Began" with the time queued when it starts, "Ended"
 * with the run time, state and exit code when it completes; to the
 * address asked for; nothing else. */
START_TEST(test_begin_end)
{
	struct mail_spec m = { .mail_type = JOB_MAIL_BEGIN | JOB_MAIL_END,
	    .mail_user = "x@example.org" };
	struct cerr err;
	uint64_t id = submit(&m);

	domain_advance(&D, 5000);
	start(id);
	ck_assert_uint_eq(mails(id), 1);
	expect_subject(id, 0, "Began, Queued time 00:00:05");
	ck_assert_str_eq(mail_nth(id, 0)->mail_to, "x@example.org");
	ck_assert_int_eq(mail_nth(id, 0)->at_ms, D.now);

	domain_advance(&D, 3723000);
	ck_assert_int_eq(domain_exit(&D, "node01", id, 1, 0, EXIT(0), &err),
	    0);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_COMPLETED);
	ck_assert_uint_eq(mails(id), 2);
	expect_subject(id, 1, "Ended, Run time 01:02:03, COMPLETED, "
	    "ExitCode 0");
	domain_run_for(&D, 10000, 1000);
	ck_assert_uint_eq(mails(id), 2);
}
END_TEST

/* A failure with FAIL: one "Failed" mail (END too does not add one);
 * with END only: "Ended" saying FAILED. Default recipient: the user. */
START_TEST(test_fail_and_end)
{
	struct mail_spec fail = { .ds = { .max_restarts = -1 },
	    .mail_type = JOB_MAIL_FAIL | JOB_MAIL_END };
	struct mail_spec end = { .ds = { .max_restarts = -1 },
	    .mail_type = JOB_MAIL_END };
	struct cerr err;
	uint64_t a, b;

	a = submit(&fail);
	start(a);
	domain_advance(&D, 4000);
	ck_assert_int_eq(domain_exit(&D, "node01", a, 1, 0, EXIT(3), &err),
	    0);
	ck_assert_int_eq(domain_job(&D, a)->state, JOB_FAILED);
	ck_assert_uint_eq(mails(a), 1);
	expect_subject(a, 0, "Failed, Run time 00:00:04, FAILED, ExitCode 3");
	ck_assert_str_eq(mail_nth(a, 0)->mail_to, "alice");

	domain_settle(&D);
	b = submit(&end);
	start(b);
	domain_advance(&D, 2000);
	ck_assert_int_eq(domain_exit(&D, "node01", b, 1, 0, EXIT(3), &err),
	    0);
	ck_assert_uint_eq(mails(b), 1);
	expect_subject(b, 0, "Ended, Run time 00:00:02, FAILED, ExitCode 3");
}
END_TEST

/* No --mail-type: a whole life, a restart and an end, and no mail. */
START_TEST(test_none)
{
	struct mail_spec m = { .mail_user = "x@example.org" };
	struct cerr err;
	uint64_t id = submit(&m);

	start(id);
	ck_assert_int_eq(domain_exit(&D, "node01", id, 1, 0, EXIT(1), &err),
	    0);
	domain_settle(&D);
	domain_run_for(&D, 5000, 1000);
	domain_settle(&D);
	ck_assert_int_eq(cluster_cancel(D.cl, &alice, id, D.now,
	    &(enum job_state){ 0 }, &err), 0);
	domain_commit(&D);
	ck_assert_uint_eq(mails(id), 0);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_MAIL, 0, 0), 0);
}
END_TEST

/* REQUEUE: a failed task's restart mails "Requeued" with the run time;
 * BEGIN mails again when it runs again. */
START_TEST(test_requeue)
{
	struct mail_spec m = { .mail_type = JOB_MAIL_REQUEUE |
	    JOB_MAIL_BEGIN };
	struct cerr err;
	uint64_t id = submit(&m);

	start(id);
	ck_assert_uint_eq(mails(id), 1);
	domain_advance(&D, 61000);
	ck_assert_int_eq(domain_exit(&D, "node01", id, 1, 0, EXIT(1), &err),
	    0);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESTARTING);
	ck_assert_uint_eq(mails(id), 2);
	expect_subject(id, 1, "Requeued, Run time 00:01:01");
	domain_settle(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_uint_eq(mails(id), 3);
	ck_assert(strstr(mail_nth(id, 2)->subject, " Began, Queued time ") !=
	    NULL);
}
END_TEST

/* The time-limit shares, each once and in order as the ticks pass them,
 * then the limit itself, then the end: TIMEOUT is a failure. */
START_TEST(test_time_limits)
{
	struct mail_spec m = { .ds = { .time_limit_s = 100,
	    .max_restarts = -1 }, .mail_type = JOB_MAIL_TIME_LIMIT_50 |
	    JOB_MAIL_TIME_LIMIT_80 | JOB_MAIL_TIME_LIMIT_90 |
	    JOB_MAIL_TIME_LIMIT | JOB_MAIL_FAIL };
	uint64_t id = submit(&m);

	start(id);
	domain_run_for(&D, 49000, 1000);
	ck_assert_uint_eq(mails(id), 0);
	domain_run_for(&D, 1000, 1000);
	ck_assert_uint_eq(mails(id), 1);
	expect_subject(id, 0, "Reached 50% of time limit, Run time 00:00:50");
	domain_run_for(&D, 39000, 1000);
	ck_assert_uint_eq(mails(id), 2);
	expect_subject(id, 1, "Reached 80% of time limit, Run time 00:01:20");
	domain_run_for(&D, 10000, 1000);
	ck_assert_uint_eq(mails(id), 3);
	expect_subject(id, 2, "Reached 90% of time limit, Run time 00:01:30");
	domain_run_for(&D, 20000, 1000);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_TIMEOUT);
	ck_assert_uint_eq(mails(id), 5);
	expect_subject(id, 3, "Reached time limit, Run time 00:01:40");
	expect_subject(id, 4, "Failed, Run time 00:01:40, TIMEOUT, "
	    "ExitCode 0");
}
END_TEST

/* Only the shares asked for; a job ticked past many at once (a tick
 * late) gets each of them once. */
START_TEST(test_time_limit_some)
{
	struct mail_spec m = { .ds = { .time_limit_s = 100 },
	    .mail_type = JOB_MAIL_TIME_LIMIT_80 | JOB_MAIL_TIME_LIMIT_50 };
	struct task_report t = { .restart = 1, .rank = 0, .running = true };
	uint64_t id = submit(&m);

	t.job_id = id;
	start(id);
	domain_advance(&D, 85000);
	domain_heartbeat(&D, "node01", &t, 1);
	domain_tick(&D);
	ck_assert_uint_eq(mails(id), 2);
	expect_subject(id, 0, "Reached 50% of time limit, Run time 00:01:25");
	expect_subject(id, 1, "Reached 80% of time limit, Run time 00:01:25");
	domain_run_for(&D, 10000, 1000);
	ck_assert_uint_eq(mails(id), 2);
}
END_TEST

/* END, cancelled while pending: it never ran. */
START_TEST(test_cancel_pending)
{
	struct mail_spec m = { .ds = { .queue = NULL },
	    .mail_type = JOB_MAIL_ALL };
	struct cerr err;
	uint64_t hog, id;

	hog = submit(&(struct mail_spec){ .mail_type = 0 });
	start(hog);
	id = submit(&m);
	domain_pass(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_PENDING);
	ck_assert_int_eq(cluster_cancel(D.cl, &alice, id, D.now,
	    &(enum job_state){ 0 }, &err), 0);
	domain_commit(&D);
	ck_assert_uint_eq(mails(id), 1);
	expect_subject(id, 0, "Ended, Run time 00:00:00, CANCELLED, "
	    "ExitCode 0");
	ck_assert_uint_eq(mails(hog), 0);
}
END_TEST

/* Slurm's forms: days in a long time, an array task named as one. */
START_TEST(test_subject_forms)
{
	struct job job;
	char buf[MAIL_SUBJECT_MAX];

	memset(&job, 0, sizeof(job));
	job.id = 10;
	job.array_id = 7;
	job.array_task = 3;
	job.spec.name = (char *)"train";
	job.submit_ms = 1000;
	job.start_ms = 1000 + 86401000;
	ck_assert_str_eq(mail_subject(&job, JOB_MAIL_BEGIN, 0, buf,
	    sizeof(buf)), "Slurm Array Task Job_id=7_3 (10) Name=train "
	    "Began, Queued time 1-00:00:01");
	job.array_id = 0;
	job.state = JOB_FAILED;
	job.has_exit = true;
	job.exit_code = 137;
	job.end_ms = job.start_ms + 3 * 86400000LL + 59000;
	ck_assert_str_eq(mail_subject(&job, JOB_MAIL_FAIL, 0, buf,
	    sizeof(buf)), "Slurm Job_id=10 Name=train Failed, Run time "
	    "3-00:00:59, FAILED, ExitCode 137");
	/* Truncated, never overrun. */
	ck_assert_str_eq(mail_subject(&job, JOB_MAIL_FAIL, 0, buf, 12),
	    "Slurm Job_i");
}
END_TEST

/* ---- --mail-type and --mail-user -------------------------------------- */

START_TEST(test_mail_type_parse)
{
	struct cerr err;
	uint32_t bits = 99;

	ck_assert_int_eq(job_mail_type_parse("begin,End", &bits, &err), 0);
	ck_assert_uint_eq(bits, JOB_MAIL_BEGIN | JOB_MAIL_END);
	ck_assert_int_eq(job_mail_type_parse("ALL", &bits, &err), 0);
	ck_assert_uint_eq(bits, JOB_MAIL_BEGIN | JOB_MAIL_END |
	    JOB_MAIL_FAIL | JOB_MAIL_REQUEUE);
	ck_assert_int_eq(job_mail_type_parse("time_limit_80,ARRAY_TASKS,"
	    "TIME_LIMIT", &bits, &err), 0);
	ck_assert_uint_eq(bits, JOB_MAIL_TIME_LIMIT_80 |
	    JOB_MAIL_ARRAY_TASKS | JOB_MAIL_TIME_LIMIT);
	ck_assert_int_eq(job_mail_type_parse("NONE", &bits, &err), 0);
	ck_assert_uint_eq(bits, 0);
	ck_assert_int_eq(job_mail_type_parse("BEGIN,Began", &bits, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_msg(strstr(err.text, "'Began'") != NULL, "%s", err.text);
	ck_assert_int_eq(job_mail_type_parse("END,,BEGIN", &bits, &err), -1);
	ck_assert_int_eq(job_mail_type_parse("", &bits, &err), -1);
	ck_assert_int_eq(job_mail_type_parse("invalid_depend", &bits, &err),
	    -1);
	ck_assert_msg(strstr(err.text, "invalid_depend: not supported") !=
	    NULL, "%s", err.text);
	ck_assert_int_eq(job_mail_type_parse("STAGE_OUT", &bits, &err), -1);
	ck_assert_msg(strstr(err.text, "not supported") != NULL, "%s",
	    err.text);
}
END_TEST

START_TEST(test_mail_user_check)
{
	struct job_spec spec;
	struct cerr err;
	char longest[JOB_MAIL_USER_MAX + 2];

	ck_assert_int_eq(job_mail_user_check("x@example.org", &err), 0);
	ck_assert_int_eq(job_mail_user_check("alice", &err), 0);
	ck_assert_int_eq(job_mail_user_check("_svc+jobs%x@a-b.c", &err), 0);
	/* Never an option of the mail program, never two arguments. */
	ck_assert_int_eq(job_mail_user_check("-oProxyCommand=x", &err), -1);
	ck_assert_int_eq(job_mail_user_check("a b@c", &err), -1);
	ck_assert_int_eq(job_mail_user_check("a;b", &err), -1);
	ck_assert_int_eq(job_mail_user_check("", &err), -1);
	memset(longest, 'a', sizeof(longest));
	longest[JOB_MAIL_USER_MAX] = '\0';
	ck_assert_int_eq(job_mail_user_check(longest, &err), 0);
	longest[JOB_MAIL_USER_MAX] = 'a';
	longest[JOB_MAIL_USER_MAX + 1] = '\0';
	ck_assert_int_eq(job_mail_user_check(longest, &err), -1);
	/* The controller checks every spec's, as received. */
	job_spec_init(&spec);
	spec.mail_user = strdup("--help");
	ck_assert_int_eq(job_spec_check_text(&spec, &err), -1);
	ck_assert_msg(strstr(err.text, "--mail-user") != NULL, "%s",
	    err.text);
	job_spec_clear(&spec);
}
END_TEST

/* ---- The runner ------------------------------------------------------- */

static char tmpdir[64];

static void
runner_setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_mail.XXXXXX");
	ck_assert(mkdtemp(tmpdir) != NULL);
}

static void
runner_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A script in tmpdir with body; its path into path. */
static void
script(const char *name, const char *body, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", tmpdir, name);
	ck_assert((f = fopen(path, "w")) != NULL);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, 0755), 0);
}

/* Run the loop until want programs have ended (sent + failed), for
 * at most about 20 s (a guard against a hang, not a measurement). */
static struct mailer_stats
run_until(struct event_base *base, struct mailer *m, uint64_t want)
{
	struct timeval tick = { 0, 20000 };
	struct mailer_stats st;
	int i;

	for (i = 0; i < 1000; i++) {
		mailer_stats(m, &st);
		if (st.sent + st.failed >= want && st.running == 0)
			break;
		event_base_loopexit(base, &tick);
		event_base_dispatch(base);
	}
	mailer_stats(m, &st);
	return st;
}

/* The program gets -s SUBJECT USER, as separate words (no shell), an
 * empty stdin; a full queue drops the oldest, counted. */
START_TEST(test_runner_argv_and_bounds)
{
	struct mailer_opts o = { .max_running = 1, .max_queued = 3 };
	struct event_base *base = event_base_new();
	struct mailer_stats st;
	struct mailer *m;
	struct cerr err;
	char prog[128], out[128], line[512], subject[128];
	FILE *f;
	int i, n = 0;

	snprintf(out, sizeof(out), "%s/argv", tmpdir);
	script("mail", "out=$(dirname \"$0\")/argv\n"
	    "printf '%s|' \"$@\" >>\"$out\"\n"
	    "if read -r x; then echo stdin >>\"$out\"; fi\n"
	    "echo >>\"$out\"", prog, sizeof(prog));
	o.program = prog;
	ck_assert((m = mailer_create(base, &o, &err)) != NULL);
	for (i = 0; i < 5; i++) {
		snprintf(subject, sizeof(subject), "Slurm Job_id=%d Name=a b "
		    "$(touch x) Began", i);
		mailer_send(m, (uint64_t)i, "x@example.org", subject);
	}
	mailer_stats(m, &st);
	ck_assert_uint_eq(st.queued, 3);
	ck_assert_uint_eq(st.dropped, 2);
	st = run_until(base, m, 3);
	ck_assert_uint_eq(st.sent, 3);
	ck_assert_uint_eq(st.failed, 0);
	ck_assert_uint_eq(st.queued, 0);
	/* The oldest two went; the rest in order, each word whole. */
	ck_assert((f = fopen(out, "r")) != NULL);
	while (fgets(line, sizeof(line), f) != NULL) {
		snprintf(subject, sizeof(subject), "-s|Slurm Job_id=%d Name=a "
		    "b $(touch x) Began|x@example.org|\n", n + 2);
		ck_assert_str_eq(line, subject);
		n++;
	}
	fclose(f);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(access("x", F_OK), -1);
	mailer_destroy(m);
	event_base_free(base);
}
END_TEST

/* A failing program counts as failed; one that runs past the timeout
 * is killed and counts as failed; one that cannot start too. */
START_TEST(test_runner_failures)
{
	struct mailer_opts o = { .max_running = 2, .timeout_ms = 300 };
	struct event_base *base = event_base_new();
	struct mailer_stats st;
	struct mailer *m;
	struct cerr err;
	char prog[128];

	script("fail", "exit 3", prog, sizeof(prog));
	o.program = prog;
	ck_assert((m = mailer_create(base, &o, &err)) != NULL);
	mailer_send(m, 1, "u", "s");
	st = run_until(base, m, 1);
	ck_assert_uint_eq(st.failed, 1);
	ck_assert_uint_eq(st.sent, 0);
	mailer_destroy(m);

	script("hang", "exec sleep 60", prog, sizeof(prog));
	ck_assert((m = mailer_create(base, &o, &err)) != NULL);
	mailer_send(m, 2, "u", "s");
	st = run_until(base, m, 1);
	ck_assert_uint_eq(st.failed, 1);
	ck_assert_uint_eq(st.running, 0);
	mailer_destroy(m);

	snprintf(prog, sizeof(prog), "%s/none", tmpdir);
	ck_assert((m = mailer_create(base, &o, &err)) != NULL);
	mailer_send(m, 3, "u", "s");
	st = run_until(base, m, 1);
	ck_assert_uint_eq(st.failed, 1);
	mailer_destroy(m);
	event_base_free(base);
}
END_TEST

/* No program: nothing runs, nothing is counted. */
START_TEST(test_runner_unset)
{
	struct mailer_opts o = { 0 };
	struct event_base *base = event_base_new();
	struct mailer_stats st;
	struct mailer *m;
	struct cerr err;

	ck_assert((m = mailer_create(base, &o, &err)) != NULL);
	mailer_send(m, 1, "u", "s");
	mailer_send(m, 1, "u", "t");
	mailer_stats(m, &st);
	ck_assert_uint_eq(st.queued + st.sent + st.failed + st.dropped, 0);
	mailer_destroy(m);
	event_base_free(base);
}
END_TEST

static Suite *
mail_suite(void)
{
	Suite *s = suite_create("mail");
	TCase *tc = tcase_create("events");
	TCase *tr = tcase_create("runner");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_begin_end);
	tcase_add_test(tc, test_fail_and_end);
	tcase_add_test(tc, test_none);
	tcase_add_test(tc, test_requeue);
	tcase_add_test(tc, test_time_limits);
	tcase_add_test(tc, test_time_limit_some);
	tcase_add_test(tc, test_cancel_pending);
	tcase_add_test(tc, test_subject_forms);
	tcase_add_test(tc, test_mail_type_parse);
	tcase_add_test(tc, test_mail_user_check);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tr, runner_setup, runner_teardown);
	tcase_set_timeout(tr, 60);
	tcase_add_test(tr, test_runner_argv_and_bounds);
	tcase_add_test(tr, test_runner_failures);
	tcase_add_test(tr, test_runner_unset);
	suite_add_tcase(s, tr);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(mail_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
