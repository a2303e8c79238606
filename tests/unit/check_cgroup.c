/* daemon/agent/cgroup.c: /proc/self/cgroup's v2 line, BASE's name, the
 * job and task directories and the spool record on a temporary
 * directory standing in for a cgroup (the kill falls back to
 * cgroup.procs there, as on a kernel without cgroup.kill), the record
 * refused when it names a cgroup outside BASE; and, where this test can
 * write a real cgroup v2 hierarchy (root), a process cloned into a
 * task's cgroup (or moved there, where the kernel cannot clone) is in
 * it from its first instruction, dies with the job's cgroup, and the
 * directories go; COHORT_AGENT_NO_CLONE3 forces the move. */
#include "config.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <check.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
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

START_TEST(test_canonical)
{
	static const char *const good[] = { "/", "/sys/fs/cgroup",
	    "/sys/fs/cgroup/a..b", "/x/.hidden", "/x/..." };
	static const char *const bad[] = { "", "rel/x", "/a/../b", "/a/./b",
	    "/..", "/.", "//x", "/x//y", "/x/", "/x/.", "/x/.." };
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(cgroup_path_canonical(good[i]), "%s", good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!cgroup_path_canonical(bad[i]), "%s", bad[i]);
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

/* A child cloned into the cgroup dir (cgroup_clone_into): the first
 * thing it does is read its own /proc/self/cgroup, which must end with
 * dir's path on the mount; it tells the parent through a pipe, then
 * sleeps until killed. Its pid, once it has said so. */
static pid_t
born_in(const char *dir)
{
	char self[4096], *v2, c;
	ssize_t n;
	pid_t pid;
	int fd, p[2];

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_ge(fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), 0);
	pid = cgroup_clone_into(fd);
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		int in;

		close(p[0]);
		in = open("/proc/self/cgroup", O_RDONLY);
		n = in == -1 ? -1 : read(in, self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = '\0';
		/* The v2 line ("0::/.../rank-0"): dir is it on the mount. */
		c = 'n';
		if ((v2 = strstr(self, "0::/")) != NULL) {
			v2 += 3;
			v2[strcspn(v2, "\n")] = '\0';
			if (strlen(dir) > strlen(v2) && strcmp(dir +
			    strlen(dir) - strlen(v2), v2) == 0)
				c = 'y';
		}
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		execlp("sleep", "sleep", "100", (char *)NULL);
		_exit(127);
	}
	close(fd);
	close(p[1]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	close(p[0]);
	ck_assert_msg(c == 'y', "a child cloned into %s was born elsewhere",
	    dir);
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
	struct stat sb;
	mode_t old;
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

	/* Under the agent unit's umask 0077 the cgroups are still 0755:
	 * a task reads its own limits (memory.max). */
	old = umask(077);
	ck_assert_int_eq(cgroup_job_create(cg, spool, 7, 1, 512, path, &err),
	    0);
	snprintf(got, sizeof(got), "%s/job-7.1", base);
	ck_assert_str_eq(path, got);
	ck_assert_int_eq(access(path, F_OK), 0);
	ck_assert_int_eq(cgroup_task_create(path, 3, procs, &err), 0);
	umask(old);
	snprintf(rank, sizeof(rank), "%s/rank-3", path);
	ck_assert_str_eq(procs, rank);
	/* A stand-in is no cgroup to clone into. */
	ck_assert(!cgroup_clone_into_ok(cg, NULL));
	ck_assert_int_eq(access(rank, F_OK), 0);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0755);
	ck_assert_int_eq(stat(rank, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0755);

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
	/* An earlier agent's BASE (same name, elsewhere on the mount) is
	 * followed; one named otherwise, or a non-canonical path, is not. */
	ck_assert_ptr_nonnull(fp = fopen(rec, "w"));
	fprintf(fp, "%s/elsewhere/base/job-3.0\n", tmp);
	fclose(fp);
	ck_assert_int_eq(cgroup_job_load(cg, spool, got), 0);
	ck_assert_ptr_nonnull(fp = fopen(rec, "w"));
	fprintf(fp, "%s/elsewhere/based/job-3.0\n", tmp);
	fclose(fp);
	ck_assert_int_eq(cgroup_job_load(cg, spool, got), -1);
	ck_assert_ptr_nonnull(fp = fopen(rec, "w"));
	fprintf(fp, "%s//base/job-3.0\n", tmp);
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
	    pidbuf[32], rec[PATH_MAX + 16];
	const char *w;
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
	if (cgroup_clone_into_ok(cg, &w)) {
		/* Born in the task's cgroup: its first look at
		 * /proc/self/cgroup, before anything else, names it. */
		pid = born_in(procs);
	} else {
		/* valgrind has no clone3 (ENOSYS), nor have kernels before
		 * 5.3: moved in. */
		fprintf(stderr, "check_cgroup: no clone into a cgroup (%s): "
		    "the task is moved in\n", w);
		pid = sleeper();
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
		snprintf(rec, sizeof(rec), "%s/cgroup.procs", procs);
		ck_assert_ptr_nonnull(fp = fopen(rec, "w"));
		ck_assert_int_gt(fputs(pidbuf, fp), -1);
		ck_assert_int_eq(fclose(fp), 0);
	}
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
	snprintf(path, sizeof(path), "%s", cgroup_base(cg));
	cgroup_destroy(cg);
	ck_assert_int_eq(access(path, F_OK), -1);	/* auto's BASE: ours */
	ck_assert_int_eq(mkdir(procs, 0755), 0);
	ck_assert_ptr_nonnull(cg = cgroup_create(AGENT_CGROUP_PATH, procs,
	    "unit", spool, why, sizeof(why)));
	ck_assert_str_eq(cgroup_base(cg), procs);
	cgroup_destroy(cg);
	/* The operator's cgroup is kept (the next agent needs it), and the
	 * next start finds it. */
	ck_assert_int_eq(access(procs, F_OK), 0);
	ck_assert_ptr_nonnull(cg = cgroup_create(AGENT_CGROUP_PATH, procs,
	    "unit", spool, why, sizeof(why)));
	cgroup_destroy(cg);
	ck_assert_int_eq(access(procs, F_OK), 0);
	/* The fallback, forced (as tests of it do): moved in, not cloned,
	 * and the reason given. */
	ck_assert_int_eq(setenv("COHORT_AGENT_NO_CLONE3", "1", 1), 0);
	cg = cgroup_create(AGENT_CGROUP_PATH, procs, "unit", spool, why,
	    sizeof(why));
	unsetenv("COHORT_AGENT_NO_CLONE3");
	ck_assert_msg(cg != NULL, "%s", why);
	ck_assert(!cgroup_clone_into_ok(cg, &w));
	ck_assert_str_eq(w, "COHORT_AGENT_NO_CLONE3 is set");
	cgroup_destroy(cg);
	ck_assert_int_eq(rmdir(procs), 0);
	/* Not canonical: refused, as the config does (a record under it
	 * would never be followed). */
	ck_assert_uint_lt(strlen(procs), sizeof(path) / 2 - 8);
	snprintf(path, sizeof(path) / 2, "%s", procs);
	snprintf(path + strlen(path), sizeof(path) / 2, "/../%s",
	    strrchr(procs, '/') + 1);
	ck_assert_int_eq(mkdir(procs, 0755), 0);
	ck_assert_ptr_null(cgroup_create(AGENT_CGROUP_PATH, path, "unit",
	    spool, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "is not a canonical path"));
	ck_assert_int_eq(rmdir(procs), 0);
	/* Not a cgroup file system: refused, with the reason. */
	ck_assert_ptr_null(cgroup_create(AGENT_CGROUP_PATH, spool, "unit",
	    spool, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "is not on a cgroup v2 file system"));
	rmrf(spool);
}
END_TEST

/* A stand-in cgroup.procs of more than one read's worth: every pid is
 * seen, to the last; only whole lines count, so a pid cut at a buffer's
 * end, a line with more after the digits or an unterminated last line
 * kills nobody. Filler pids are above any pid_max (PID_MAX_LIMIT is
 * 4194304): they exist nowhere. */
static void
procs_file(const char *dir, size_t filler, const char *last)
{
	char path[PATH_MAX + 32];
	size_t n;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	for (n = 0; n + 8 <= filler; n += 8)
		fputs("4194399\n", fp);
	for (; n < filler; n++)
		fputc('\n', fp);
	fputs(last, fp);
	ck_assert_int_eq(fclose(fp), 0);
}

static bool
died(pid_t pid)
{
	int st, i;

	for (i = 0; i < 100; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
		usleep(2000);
	}
	return false;
}

START_TEST(test_kill_whole_file)
{
	char dir[] = "/tmp/check_cgroup_kill.XXXXXX", line[64];
	size_t len;
	pid_t pid;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* The victim after 40000 bytes (ten pages, several reads). */
	pid = sleeper();
	snprintf(line, sizeof(line), "%d\n", (int)pid);
	procs_file(dir, 40000, line);
	ck_assert_uint_eq(cgroup_kill_procs(dir), 1);
	ck_assert_msg(died(pid), "the pid past the first read is not killed");

	/* Cut: the victim's digits are the head of a longer number (one
	 * past any pid), placed where an 8 KiB read would end. */
	pid = sleeper();
	snprintf(line, sizeof(line), "%d", (int)pid);
	len = strlen(line);
	snprintf(line + len, sizeof(line) - len, "0000000\n");
	procs_file(dir, 8191 - len, line);
	ck_assert_uint_eq(cgroup_kill_procs(dir), 0);
	/* More after the digits on its line. */
	snprintf(line, sizeof(line), "%dx\n", (int)pid);
	procs_file(dir, 100, line);
	ck_assert_uint_eq(cgroup_kill_procs(dir), 0);
	/* Unterminated: not a whole line. */
	snprintf(line, sizeof(line), "%d", (int)pid);
	procs_file(dir, 5000, line);
	ck_assert_uint_eq(cgroup_kill_procs(dir), 0);
	ck_assert_int_eq(waitpid(pid, NULL, WNOHANG), 0);	/* alive */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	rmrf(dir);
}
END_TEST

/* A real cgroup (where this test may make one): BASE from auto, a
 * cgroup in it, the mount it is on. NULL when none can be had. */
static struct cgroup *
real_cgroup(const char *spool, char *dir, size_t len)
{
	struct cgroup *cg;
	char why[512];

	if ((cg = cgroup_create(AGENT_CGROUP_AUTO, NULL, "unit", spool, why,
	    sizeof(why))) == NULL) {
		fprintf(stderr, "check_cgroup: real cgroup part skipped: %s\n",
		    why);
		return NULL;
	}
	snprintf(dir, len, "%s/kill.%d", cgroup_base(cg), (int)getpid());
	ck_assert_msg(mkdir(dir, 0755) == 0, "%s: %s", dir, strerror(errno));
	return cg;
}

static unsigned
count_lines(const char *dir, const char *file)
{
	char path[PATH_MAX + 32];
	unsigned n = 0;
	FILE *fp;
	int c;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	while ((c = fgetc(fp)) != EOF)
		n += c == '\n';
	fclose(fp);
	return n;
}

static bool
populated(const char *dir)
{
	char path[PATH_MAX + 32], buf[256];
	size_t n;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	ck_assert_ptr_nonnull(fp = fopen(path, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return strstr(buf, "populated 1") != NULL;
}

/* The fallback kill on a real cgroup of 1000 processes (cgroup.procs
 * is read a page at a time: one read sees some 680 of them): one call
 * kills them all, and leaves the cgroup thawed. */
START_TEST(test_kill_many_real)
{
	char spool[] = "/tmp/check_cgroup_many.XXXXXX", dir[PATH_MAX],
	    procs[PATH_MAX + 32], c;
	struct cgroup *cg;
	int fds[2], i, fd;
	pid_t top;

	ck_assert_ptr_nonnull(mkdtemp(spool));
	if ((cg = real_cgroup(spool, dir, sizeof(dir))) == NULL) {
		rmrf(spool);
		return;
	}
	/* Orphans come back to this process, which reaps them. */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	ck_assert_int_eq(pipe(fds), 0);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	if ((top = fork()) == 0) {
		if ((fd = open(procs, O_WRONLY)) == -1 || write(fd, "0", 1) != 1)
			_exit(1);
		close(fd);
		for (i = 1; i < 1000; i++)
			if (fork() == 0) {
				close(fds[1]);
				pause();
				_exit(0);
			}
		(void)!write(fds[1], "r", 1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	ck_assert_int_eq(read(fds[0], &c, 1), 1);
	close(fds[0]);
	ck_assert_uint_eq(count_lines(dir, "cgroup.procs"), 1000);
	ck_assert_uint_eq(cgroup_kill_procs(dir), 1000);
	for (i = 0; i < 200 && populated(dir); i++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		usleep(10000);
	}
	ck_assert_msg(!populated(dir), "%u processes left in %s",
	    count_lines(dir, "cgroup.procs"), dir);
	if (access("/sys/fs/cgroup/unified/cgroup.freeze", F_OK) == 0 ||
	    count_lines(dir, "cgroup.freeze") > 0) {
		FILE *fp;

		snprintf(procs, sizeof(procs), "%s/cgroup.freeze", dir);
		ck_assert_ptr_nonnull(fp = fopen(procs, "r"));
		ck_assert_int_eq(fgetc(fp), '0');	/* thawed */
		fclose(fp);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	ck_assert_int_eq(rmdir(dir), 0);
	cgroup_destroy(cg);
	rmrf(spool);
}
END_TEST

/* The agent restarted from another cgroup (auto's BASE moves with it):
 * a job's cgroup recorded under the old BASE is still found, its
 * processes killed and the old BASE removed once empty. Records under
 * a BASE not named like ours, or off the cgroup mount, are not. */
START_TEST(test_moved_agent)
{
	char spool[] = "/tmp/check_cgroup_moved.XXXXXX", path[PATH_MAX],
	    other[PATH_MAX], own[PATH_MAX], mount[PATH_MAX],
	    got[PATH_MAX], base1[PATH_MAX], rec[PATH_MAX + 16], buf[8192],
	    why[512];
	struct cgroup *cg, *cg2;
	struct cerr err;
	FILE *fp;
	pid_t pid;
	size_t n;

	ck_assert_ptr_nonnull(mkdtemp(spool));
	if ((cg = real_cgroup(spool, path, sizeof(path))) == NULL) {
		rmrf(spool);
		return;
	}
	ck_assert_int_eq(rmdir(path), 0);
	snprintf(base1, sizeof(base1), "%s", cgroup_base(cg));
	ck_assert_int_eq(cgroup_job_create(cg, spool, 5, 0, 0, path, &err),
	    0);
	ck_assert_int_eq(cgroup_task_create(path, 0, got, &err), 0);
	pid = sleeper();
	write_pid(got, pid);
	cgroup_destroy(cg);		/* the agent stops; the job runs on */
	ck_assert_int_eq(access(path, F_OK), 0);

	/* This process moves to another cgroup and starts again. */
	ck_assert_ptr_nonnull(fp = fopen("/proc/self/cgroup", "r"));
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	ck_assert_int_eq(cgroup_parse_self(buf, own, sizeof(own)), 0);
	/* The mount: BASE less own's path and BASE's name. */
	snprintf(mount, sizeof(mount), "%s", base1);
	*strrchr(mount, '/') = '\0';
	if (strcmp(own, "/") != 0)
		mount[strlen(mount) - strlen(own)] = '\0';
	snprintf(other, sizeof(other), "%s/check-cgroup-other.%d", mount,
	    (int)getpid());
	ck_assert_int_eq(mkdir(other, 0755), 0);
	snprintf(rec, sizeof(rec), "%s/cgroup.procs", other);
	ck_assert_ptr_nonnull(fp = fopen(rec, "w"));
	fputs("0", fp);
	ck_assert_int_eq(fclose(fp), 0);
	cg2 = cgroup_create(AGENT_CGROUP_AUTO, NULL, "unit", spool, why,
	    sizeof(why));
	/* Back where it was, whatever happens next. */
	snprintf(rec, sizeof(rec), "%s%s/cgroup.procs", mount,
	    strcmp(own, "/") == 0 ? "" : own);
	ck_assert_ptr_nonnull(fp = fopen(rec, "w"));
	fputs("0", fp);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_msg(cg2 != NULL, "%s", why);
	ck_assert_str_ne(cgroup_base(cg2), base1);

	ck_assert_msg(cgroup_job_load(cg2, spool, got) == 0,
	    "the record %s under the old BASE is refused", path);
	ck_assert_str_eq(got, path);
	ck_assert_int_ge(cgroup_job_end(cg2, got, spool), 0);
	ck_assert(died(pid));
	for (n = 0; n < 40 && access(path, F_OK) == 0; n++) {
		usleep(25000);
		cgroup_sweep(cg2);
	}
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_int_eq(access(base1, F_OK), -1);	/* old BASE gone */

	/* Not ours: another name, or off the mount. */
	snprintf(rec, sizeof(rec), "%s/cgroup", spool);
	ck_assert_ptr_nonnull(fp = fopen(rec, "w"));
	fprintf(fp, "%s/cohort-unit-00000000/job-5.0\n", other);
	fclose(fp);
	ck_assert_int_eq(cgroup_job_load(cg2, spool, got), -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_ptr_nonnull(fp = fopen(rec, "w"));
	fprintf(fp, "%s/%s/job-5.0\n", spool, strrchr(base1, '/') + 1);
	fclose(fp);
	ck_assert_int_eq(cgroup_job_load(cg2, spool, got), -1);
	ck_assert_int_eq(errno, EPERM);
	cgroup_destroy(cg2);
	ck_assert_int_eq(rmdir(other), 0);
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
	tcase_add_test(tc, test_canonical);
	tcase_add_test(tc, test_base_name);
	tcase_add_test(tc, test_fake_tree);
	tcase_add_test(tc, test_real);
	tcase_add_test(tc, test_kill_whole_file);
	tcase_add_test(tc, test_kill_many_real);
	tcase_add_test(tc, test_moved_agent);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
