/* daemon/agent/cgroup.c: /proc/self/cgroup's v2 line, BASE's name, the
 * job and task directories and the spool record on a temporary
 * directory standing in for a cgroup (the kill falls back to
 * cgroup.procs there, as on a kernel without cgroup.kill), the record
 * refused when it names a cgroup outside BASE; and, where this test can
 * write a real cgroup v2 hierarchy (root), a process moved into a job's
 * cgroup dies with it and the directories go. */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/cgroup.h"
#include "lib/log.h"

START_TEST(test_parse_self)
{
	char out[64];

	ck_assert_int_eq(cgroup_parse_self("12:memory:/x\n0::/a/b\n", out,
	    sizeof(out)), 0);
	ck_assert_str_eq(out, "/a/b");
	ck_assert_int_eq(cgroup_parse_self("0::/", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/");
	ck_assert_int_eq(cgroup_parse_self("4:memory:/a\n1:cpu:/\n", out,
	    sizeof(out)), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(cgroup_parse_self("", out, sizeof(out)), -1);
	ck_assert_int_eq(cgroup_parse_self("0::relative\n", out,
	    sizeof(out)), -1);
}
END_TEST

START_TEST(test_base_name)
{
	char a[64], b[64], c[64];

	cgroup_base_name("node01", "/var/spool/cohort", a, sizeof(a));
	cgroup_base_name("node01", "/var/spool/cohort", b, sizeof(b));
	cgroup_base_name("node01", "/tmp/t/node01/spool", c, sizeof(c));
	ck_assert_str_eq(a, b);		/* stable across restarts */
	ck_assert_str_ne(a, c);		/* two agents, two BASEs */
	ck_assert_int_eq(strncmp(a, "cohort-node01-", 14), 0);
	ck_assert_uint_eq(strlen(a), 14 + 8);
}
END_TEST

static char tmp[256];

static void
mk(const char *fmt, const char *arg)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), fmt, arg);
	ck_assert_msg(mkdir(path, 0755) == 0, "%s: %s", path,
	    strerror(errno));
}

static void
write_pid(const char *dir, pid_t pid)
{
	char path[PATH_MAX + 32];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	fprintf(fp, "%d\n", (int)pid);
	fclose(fp);
}

static pid_t
sleeper(void)
{
	pid_t pid = fork();

	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		execlp("sleep", "sleep", "100", (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void
rmrf(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* The layout and the record on a stand-in directory; the end kills a
 * pid listed in a task's cgroup.procs (the fallback), and leaves the
 * directory to the sweep while it cannot be removed (here: the regular
 * files a real cgroup would not hold). */
START_TEST(test_fake_tree)
{
	char base[512], spool[512], path[PATH_MAX], procs[PATH_MAX],
	    rank[PATH_MAX + 16], rec[PATH_MAX], got[PATH_MAX + 32];
	struct cgroup *cg;
	struct cerr err;
	FILE *fp;
	pid_t pid;
	int st;

	snprintf(tmp, sizeof(tmp), "/tmp/check_cgroup.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(base, sizeof(base), "%s/base", tmp);
	snprintf(spool, sizeof(spool), "%s/spool", tmp);
	mk("%s", base);
	mk("%s", spool);
	ck_assert_ptr_nonnull(cg = cgroup_create_at(base));
	ck_assert(!cgroup_memory_enforced(cg, NULL));

	/* No context: nothing made, nothing recorded. */
	ck_assert_int_eq(cgroup_job_create(NULL, spool, 7, 1, 0, path, &err),
	    0);
	ck_assert_str_eq(path, "");

	ck_assert_int_eq(cgroup_job_create(cg, spool, 7, 1, 512, path, &err),
	    0);
	snprintf(got, sizeof(got), "%s/job-7.1", base);
	ck_assert_str_eq(path, got);
	ck_assert_int_eq(access(path, F_OK), 0);
	ck_assert_int_eq(cgroup_task_create(path, 3, procs, &err), 0);
	snprintf(rank, sizeof(rank), "%s/rank-3", path);
	snprintf(got, sizeof(got), "%s/cgroup.procs", rank);
	ck_assert_str_eq(procs, got);
	ck_assert_int_eq(access(rank, F_OK), 0);

	/* The record names it; a restarted agent finds it. */
	ck_assert_int_eq(cgroup_job_load(cg, spool, got), 0);
	ck_assert_str_eq(got, path);

	/* A record naming another cgroup is not followed. */
	snprintf(rec, sizeof(rec), "%s/cgroup", spool);
	ck_assert_ptr_nonnull(fp = fopen(rec, "w"));
	fprintf(fp, "%s/../other/job-1.0\n", base);
	fclose(fp);
	ck_assert_int_eq(cgroup_job_load(cg, spool, got), -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_ptr_nonnull(fp = fopen(rec, "w"));
	fprintf(fp, "/sys/fs/cgroup\n");
	fclose(fp);
	ck_assert_int_eq(cgroup_job_load(cg, spool, got), -1);
	ck_assert_ptr_nonnull(fp = fopen(rec, "w"));
	fprintf(fp, "%s\n", path);
	fclose(fp);

	/* The end: the listed process is killed; the directory stays for
	 * the sweep while the stand-in's files are there. */
	pid = sleeper();
	write_pid(rank, pid);
	ck_assert_int_eq(cgroup_job_end(cg, path, spool), 1);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	ck_assert_int_eq(access(rec, F_OK), -1);	/* record gone */
	ck_assert_int_eq(access(path, F_OK), 0);
	snprintf(got, sizeof(got), "%s/cgroup.procs", rank);
	ck_assert_int_eq(unlink(got), 0);
	cgroup_sweep(cg);
	ck_assert_int_eq(access(path, F_OK), -1);
	/* Gone already: fine. */
	ck_assert_int_eq(cgroup_job_end(cg, path, NULL), 0);
	cgroup_destroy(cg);
	rmrf(tmp);
}
END_TEST

/* The real thing, where this test may write a cgroup v2 hierarchy. */
START_TEST(test_real)
{
	char spool[PATH_MAX], path[PATH_MAX], procs[PATH_MAX], why[512],
	    pidbuf[32];
	struct cgroup *cg;
	struct cerr err;
	FILE *fp;
	pid_t pid;
	int st;

	snprintf(spool, sizeof(spool), "/tmp/check_cgroup_real.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(spool));
	cg = cgroup_create(AGENT_CGROUP_AUTO, NULL, "unit", spool, why,
	    sizeof(why));
	if (cg == NULL) {
		fprintf(stderr, "check_cgroup: real cgroup part skipped: %s\n",
		    why);
		rmrf(spool);
		return;
	}
	ck_assert_int_eq(cgroup_job_create(cg, spool, 1, 0, 64, path, &err),
	    0);
	ck_assert_int_eq(cgroup_task_create(path, 0, procs, &err), 0);
	pid = sleeper();
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	ck_assert_ptr_nonnull(fp = fopen(procs, "w"));
	ck_assert_int_gt(fputs(pidbuf, fp), -1);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_int_ge(cgroup_job_end(cg, path, spool), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	/* Removed at once or by the sweep, within a second. */
	for (st = 0; st < 40 && access(path, F_OK) == 0; st++) {
		usleep(25000);
		cgroup_sweep(cg);
	}
	ck_assert_int_eq(access(path, F_OK), -1);
	/* cgroup = PATH: a sibling of auto's BASE, used as it is. */
	snprintf(procs, sizeof(procs), "%s", cgroup_base(cg));
	snprintf(strrchr(procs, '/') + 1, 64, "check-cgroup-path.%d",
	    (int)getpid());
	cgroup_destroy(cg);
	ck_assert_int_eq(mkdir(procs, 0755), 0);
	ck_assert_ptr_nonnull(cg = cgroup_create(AGENT_CGROUP_PATH, procs,
	    "unit", spool, why, sizeof(why)));
	ck_assert_str_eq(cgroup_base(cg), procs);
	cgroup_destroy(cg);		/* empty: removed */
	ck_assert_int_eq(access(procs, F_OK), -1);
	/* Not a cgroup file system: refused, with the reason. */
	ck_assert_ptr_null(cgroup_create(AGENT_CGROUP_PATH, spool, "unit",
	    spool, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "is not on a cgroup v2 file system"));
	rmrf(spool);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc = tcase_create("cgroup");
	SRunner *sr;
	int failed;

	log_init("check_cgroup", true, false);
	tcase_add_test(tc, test_parse_self);
	tcase_add_test(tc, test_base_name);
	tcase_add_test(tc, test_fake_tree);
	tcase_add_test(tc, test_real);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
