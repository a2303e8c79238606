/* What the agent reads of a running job (daemon/agent/watch.c): the
 * checkpoint contract's LATEST ("STEP PATH", written by rename) and the
 * progress file's mtime; and, through agent.c, the reports a heartbeat
 * carries and the checkpoint signal. */
#include "config.h"

#include <sys/stat.h>
#include <sys/time.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/agent/agent.h"
#include "daemon/agent/agent_config.h"
#include "daemon/agent/watch.h"

static char tmpdir[PATH_MAX];

static void
tmp_setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_watch.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void
tmp_teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

static void
write_file(const char *path, const char *text, size_t len)
{
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(text, 1, len, fp), len);
	ck_assert_int_eq(fclose(fp), 0);
}

/* As the contract says: write a temporary file, then rename it. */
static void
write_latest(const char *dir, const char *text)
{
	char tmp[PATH_MAX + 16], path[PATH_MAX + 16];

	snprintf(tmp, sizeof(tmp), "%s/LATEST.tmp", dir);
	snprintf(path, sizeof(path), "%s/LATEST", dir);
	write_file(tmp, text, strlen(text));
	ck_assert_int_eq(rename(tmp, path), 0);
}

/* Parse s; expect path and step. */
static void
parses(const char *s, uint64_t want_step, const char *want_path)
{
	char path[WATCH_PATH_MAX];
	uint64_t step = 12345;

	ck_assert_msg(watch_parse_latest(s, strlen(s), &step, path,
	    sizeof(path)) == 0, "'%s' did not parse", s);
	ck_assert_uint_eq(step, want_step);
	ck_assert_str_eq(path, want_path);
}

static void
refused(const char *s, size_t len)
{
	char path[WATCH_PATH_MAX] = "untouched";
	uint64_t step = 12345;

	errno = 0;
	ck_assert_msg(watch_parse_latest(s, len, &step, path,
	    sizeof(path)) == -1, "'%.*s' parsed", (int)len, s);
	ck_assert_int_eq(errno, EINVAL);
	/* Nothing is written on failure. */
	ck_assert_uint_eq(step, 12345);
	ck_assert_str_eq(path, "untouched");
}
#define REFUSED(s) refused(s, sizeof(s) - 1)

START_TEST(test_parse_good)
{
	parses("120 /ckpt/step-120\n", 120, "/ckpt/step-120");
	/* No newline at the end: the writer's choice. */
	parses("7 /a", 7, "/a");
	parses("0 /ckpt/0\n", 0, "/ckpt/0");
	/* Several blanks between; CRLF from a Windows editor. */
	parses("42 \t /x/y\r\n", 42, "/x/y");
	/* Relative paths are the job's business. */
	parses("3 ckpt-3", 3, "ckpt-3");
}
END_TEST

START_TEST(test_parse_spaces_in_path)
{
	parses("5 /ckpt/my run/step 5\n", 5, "/ckpt/my run/step 5");
	parses("6 /a b  c\n", 6, "/a b  c");
}
END_TEST

START_TEST(test_parse_missing_path)
{
	REFUSED("7");
	REFUSED("7\n");
	REFUSED("7 \n");
	REFUSED("7 \t ");
}
END_TEST

START_TEST(test_parse_bad_step)
{
	REFUSED("abc /x\n");
	REFUSED("-1 /x\n");
	REFUSED("+1 /x\n");
	REFUSED(" 7 /x\n");
	REFUSED("7x /x\n");
	REFUSED("0x10 /x\n");
	REFUSED("/x\n");
}
END_TEST

START_TEST(test_parse_empty)
{
	REFUSED("");
	REFUSED("\n");
	REFUSED("\r\n");
	refused(NULL, 0);
}
END_TEST

START_TEST(test_parse_huge_step)
{
	parses("18446744073709551615 /max\n", UINT64_MAX, "/max");
	REFUSED("18446744073709551616 /over\n");
	REFUSED("99999999999999999999999999 /over\n");
}
END_TEST

START_TEST(test_parse_not_one_line)
{
	REFUSED("5 /a\n6 /b\n");
	REFUSED("5 /a\n\n");
	/* A NUL byte is no part of a path. */
	refused("5 /a\0b\n", 7);
}
END_TEST

START_TEST(test_parse_path_too_long)
{
	char path[4];
	uint64_t step;

	ck_assert_int_eq(watch_parse_latest("5 /abc", 6, &step, path,
	    sizeof(path)), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(watch_parse_latest("5 /ab", 5, &step, path,
	    sizeof(path)), 0);
	ck_assert_str_eq(path, "/ab");
}
END_TEST

START_TEST(test_read_latest)
{
	char path[WATCH_PATH_MAX], dir[PATH_MAX + 16];
	uint64_t step;

	/* No checkpoint yet: ENOENT, for a directory that does not exist
	 * too. */
	ck_assert_int_eq(watch_read_latest(tmpdir, &step, path, sizeof(path)),
	    -1);
	ck_assert_int_eq(errno, ENOENT);
	snprintf(dir, sizeof(dir), "%s/nope", tmpdir);
	ck_assert_int_eq(watch_read_latest(dir, &step, path, sizeof(path)),
	    -1);
	ck_assert_int_eq(errno, ENOENT);

	write_latest(tmpdir, "100 /ckpt/step-100\n");
	ck_assert_int_eq(watch_read_latest(tmpdir, &step, path, sizeof(path)),
	    0);
	ck_assert_uint_eq(step, 100);
	ck_assert_str_eq(path, "/ckpt/step-100");
	/* The next one replaces it by rename: seen at the next read. */
	write_latest(tmpdir, "200 /ckpt/step 200\n");
	ck_assert_int_eq(watch_read_latest(tmpdir, &step, path, sizeof(path)),
	    0);
	ck_assert_uint_eq(step, 200);
	ck_assert_str_eq(path, "/ckpt/step 200");
}
END_TEST

START_TEST(test_read_latest_bad)
{
	char path[WATCH_PATH_MAX], file[PATH_MAX + 16], *big;
	uint64_t step;
	size_t n = WATCH_PATH_MAX + 100;

	snprintf(file, sizeof(file), "%s/LATEST", tmpdir);
	/* Written in place and caught half way. */
	write_file(file, "300", 3);
	ck_assert_int_eq(watch_read_latest(tmpdir, &step, path, sizeof(path)),
	    -1);
	ck_assert_int_eq(errno, EINVAL);
	/* Far too long to be a checkpoint line. */
	ck_assert_ptr_nonnull(big = malloc(n));
	memset(big, 'a', n);
	big[0] = '1';
	big[1] = ' ';
	write_file(file, big, n);
	free(big);
	ck_assert_int_eq(watch_read_latest(tmpdir, &step, path, sizeof(path)),
	    -1);
	ck_assert_int_eq(errno, EINVAL);
	/* Not a regular file: a directory, and a FIFO (which must not block
	 * the agent). */
	ck_assert_int_eq(unlink(file), 0);
	ck_assert_int_eq(mkdir(file, 0755), 0);
	ck_assert_int_eq(watch_read_latest(tmpdir, &step, path, sizeof(path)),
	    -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(rmdir(file), 0);
	ck_assert_int_eq(mkfifo(file, 0644), 0);
	ck_assert_int_eq(watch_read_latest(tmpdir, &step, path, sizeof(path)),
	    -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(test_progress_mtime)
{
	char file[PATH_MAX + 16];
	struct timespec ts[2];
	struct timeval before;
	int64_t t, b;

	snprintf(file, sizeof(file), "%s/progress", tmpdir);
	ck_assert_int_eq(watch_progress_changed(file), 0);
	ck_assert_int_eq(watch_progress_changed(NULL), 0);
	write_file(file, "", 0);
	/* A known mtime, to the millisecond. */
	ts[0].tv_sec = ts[1].tv_sec = 1700000000;
	ts[0].tv_nsec = ts[1].tv_nsec = 123456789;
	ck_assert_int_eq(utimensat(AT_FDCWD, file, ts, 0), 0);
	ck_assert_int_eq(watch_progress_changed(file), 1700000000123LL);
	/* The job writes its step: the time moves to now. */
	gettimeofday(&before, NULL);
	b = (int64_t)before.tv_sec * 1000 + before.tv_usec / 1000;
	write_file(file, "57\n", 3);
	t = watch_progress_changed(file);
	/* Allow for a coarse file system clock. */
	ck_assert_int_ge(t, b - 20);
	ck_assert_int_le(t, b + 5000);
}
END_TEST

/* ---- through the agent ---- */

struct exits {
	int n;
	struct task_report last;
};

static void
exit_cb(const struct task_report *r, void *arg)
{
	struct exits *e = arg;

	e->n++;
	e->last = *r;
}

static void
stop_cb(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(arg);
}

/* Run the loop until the task has ended (bounded). */
static void
run_until_exit(struct event_base *base, struct exits *e)
{
	struct timeval tv = { 0, 50000 };
	struct event *ev = event_new(base, -1, EV_PERSIST, stop_cb, base);
	int i;

	ck_assert_ptr_nonnull(ev);
	event_add(ev, &tv);
	for (i = 0; i < 200 && e->n == 0; i++)
		event_base_dispatch(base);
	event_free(ev);
	ck_assert_int_eq(e->n, 1);
}

static void
wait_for_file(const char *path)
{
	int i;

	for (i = 0; i < 500 && access(path, F_OK) == -1; i++)
		usleep(10000);
	ck_assert_int_eq(access(path, F_OK), 0);
}

/* Run as root, the agent runs tasks as "nobody": they reach their
 * directories through tmpdir, and may write the checkpoint directory. */
static const char *
task_user(void)
{
	struct passwd *pw;

	if (geteuid() == 0)
		return "nobody";
	ck_assert_ptr_nonnull(pw = getpwuid(geteuid()));
	return pw->pw_name;
}

static void
make_dirs(const char *spool, const char *ckdir)
{
	ck_assert_int_eq(chmod(tmpdir, 0711), 0);
	ck_assert_int_eq(mkdir(spool, 0755), 0);
	ck_assert_int_eq(mkdir(ckdir, 0755), 0);
	ck_assert_int_eq(chmod(ckdir, 0777), 0);
}

START_TEST(test_agent_reports)
{
	struct agent_config cfg;
	struct event_base *base;
	struct agent *a;
	struct exits ex = { 0 };
	struct job_spec spec;
	struct launch l;
	struct ckpt_report *ck;
	struct progress_report *pr;
	struct cerr err;
	char spool[PATH_MAX + 16], ckdir[PATH_MAX + 16], ready[PATH_MAX + 48];
	char got[PATH_MAX + 48], script[3 * PATH_MAX];
	const char *nodes[] = { "node01" };
	char *argv[3];
	size_t n;

	snprintf(spool, sizeof(spool), "%s/spool", tmpdir);
	snprintf(ckdir, sizeof(ckdir), "%s/ckpt", tmpdir);
	snprintf(ready, sizeof(ready), "%s/ready", ckdir);
	snprintf(got, sizeof(got), "%s/got-usr1", ckdir);
	make_dirs(spool, ckdir);
	/* A job that writes progress, waits for SIGUSR1, checkpoints and
	 * ends. */
	snprintf(script, sizeof(script),
	    "trap 'echo 8 /ckpt/8 > \"$COHORT_CHECKPOINT_DIR/L.tmp\" && "
	    "mv \"$COHORT_CHECKPOINT_DIR/L.tmp\" "
	    "\"$COHORT_CHECKPOINT_DIR/LATEST\"; touch %s; exit 0' USR1; "
	    "echo 5 > \"$COHORT_PROGRESS_FILE\"; touch %s; "
	    "i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; "
	    "exit 3", got, ready);
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = script;

	memset(&cfg, 0, sizeof(cfg));
	cfg.spool = spool;
	cfg.kill_wait_ms = 1000;
	memset(&spec, 0, sizeof(spec));
	spec.name = "ckpt";
	spec.nodes_min = spec.nodes_max = 1;
	spec.tasks_per_node = 1;
	spec.checkpoint_dir = ckdir;
	spec.workdir = ckdir;
	spec.argv = argv;
	spec.argc = 3;
	memset(&l, 0, sizeof(l));
	l.job_id = 42;
	l.restart = 1;
	l.user = task_user();
	l.spec = &spec;
	l.nodelist = nodes;
	l.nnodes = 1;
	l.master_addr = "127.0.0.1";
	l.master_port = 29500;
	l.watch_checkpoints = true;

	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	/* Nothing to report before a launch. */
	ck_assert_ptr_null(agent_checkpoints(a, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(agent_progress(a, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	wait_for_file(ready);

	/* Running, no checkpoint yet; progress written just now. */
	ck_assert_ptr_null(agent_checkpoints(a, &n));
	ck_assert_ptr_nonnull(pr = agent_progress(a, &n));
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(pr[0].job_id, 42);
	ck_assert_uint_eq(pr[0].restart, 1);
	ck_assert_int_gt(pr[0].changed_ms, 0);
	free(pr);

	write_latest(ckdir, "4 /ckpt/4\n");
	ck_assert_ptr_nonnull(ck = agent_checkpoints(a, &n));
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ck[0].job_id, 42);
	ck_assert_uint_eq(ck[0].restart, 1);
	ck_assert_uint_eq(ck[0].step, 4);
	ck_assert_str_eq(ck[0].path, "/ckpt/4");
	ck_assert_int_gt(ck[0].time_ms, 0);
	free(ck);
	/* A half-written file in place is not a checkpoint: the last good
	 * one stays. */
	snprintf(script, sizeof(script), "%s/LATEST", ckdir);
	write_file(script, "5", 1);
	ck_assert_ptr_nonnull(ck = agent_checkpoints(a, &n));
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ck[0].step, 4);
	free(ck);

	/* The checkpoint signal reaches the task (a wrong start does
	 * not). */
	ck_assert_uint_eq(agent_signal(a, 42, 2, SIGUSR1), 0);
	ck_assert_uint_eq(agent_signal(a, 42, 1, SIGUSR1), 1);
	run_until_exit(base, &ex);
	ck_assert_int_eq(access(got, F_OK), 0);
	ck_assert(!ex.last.running);
	ck_assert_int_eq(ex.last.wait_status, 0);
	/* The checkpoint written on the signal is still reported after
	 * the end, until the controller has the exit; progress is not. */
	ck_assert_ptr_nonnull(ck = agent_checkpoints(a, &n));
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ck[0].step, 8);
	ck_assert_str_eq(ck[0].path, "/ckpt/8");
	free(ck);
	ck_assert_ptr_null(agent_progress(a, &n));
	ck_assert_uint_eq(agent_signal(a, 42, 1, SIGUSR1), 0);

	/* A restarted agent adopts the start and still watches it. */
	agent_destroy(a);
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	ck_assert_ptr_nonnull(ck = agent_checkpoints(a, &n));
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ck[0].step, 8);
	free(ck);
	agent_exit_acked(a, 42, 1, 0);
	ck_assert_ptr_null(agent_checkpoints(a, &n));
	agent_destroy(a);
	event_base_free(base);
}
END_TEST

START_TEST(test_agent_unwatched)
{
	struct agent_config cfg;
	struct event_base *base;
	struct agent *a;
	struct exits ex = { 0 };
	struct job_spec spec;
	struct launch l;
	struct cerr err;
	char spool[PATH_MAX + 16], ckdir[PATH_MAX + 16];
	const char *nodes[] = { "node01", "node02" };
	char *argv[] = { "/bin/sh", "-c", "exit 0" };
	size_t n;

	snprintf(spool, sizeof(spool), "%s/spool", tmpdir);
	snprintf(ckdir, sizeof(ckdir), "%s/ckpt", tmpdir);
	make_dirs(spool, ckdir);
	write_latest(ckdir, "4 /ckpt/4\n");
	memset(&cfg, 0, sizeof(cfg));
	cfg.spool = spool;
	cfg.kill_wait_ms = 1000;
	memset(&spec, 0, sizeof(spec));
	spec.name = "rank1";
	spec.nodes_min = spec.nodes_max = 2;
	spec.tasks_per_node = 1;
	spec.checkpoint_dir = ckdir;
	spec.workdir = ckdir;
	spec.argv = argv;
	spec.argc = 3;
	memset(&l, 0, sizeof(l));
	l.job_id = 43;
	l.restart = 1;
	l.user = task_user();
	l.spec = &spec;
	l.node_rank = 1;
	l.nodelist = nodes;
	l.nnodes = 2;
	l.master_addr = "127.0.0.1";
	l.master_port = 29500;
	/* Node rank 1: the controller did not ask this node to watch. */
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	ck_assert_ptr_null(agent_checkpoints(a, &n));
	ck_assert_uint_eq(n, 0);
	run_until_exit(base, &ex);
	agent_exit_acked(a, 43, 1, 1);
	agent_destroy(a);
	event_base_free(base);
}
END_TEST

static Suite *
watch_suite(void)
{
	Suite *s = suite_create("watch");
	TCase *tc;

	tc = tcase_create("latest");
	tcase_add_test(tc, test_parse_good);
	tcase_add_test(tc, test_parse_spaces_in_path);
	tcase_add_test(tc, test_parse_missing_path);
	tcase_add_test(tc, test_parse_bad_step);
	tcase_add_test(tc, test_parse_empty);
	tcase_add_test(tc, test_parse_huge_step);
	tcase_add_test(tc, test_parse_not_one_line);
	tcase_add_test(tc, test_parse_path_too_long);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_add_test(tc, test_read_latest);
	tcase_add_test(tc, test_read_latest_bad);
	tcase_add_test(tc, test_progress_mtime);
	suite_add_tcase(s, tc);

	tc = tcase_create("agent");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_agent_reports);
	tcase_add_test(tc, test_agent_unwatched);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(watch_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
