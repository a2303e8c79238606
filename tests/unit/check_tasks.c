/* daemon/agent/tasks.c with real processes: output and exit status, the
 * environment, scripts, workdirs, commands that cannot run, signals to
 * the whole process group, a supervisor that outlives its agent, and,
 * when run as root, the user a task runs as and, on a writable cgroup v2
 * hierarchy, the cgroup a task is born in. Every test has its own
 * spool; waits are bounded polls. */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/agent/cgroup.h"
#include "daemon/agent/tasks.h"
#include "daemon/agent/tasks_int.h"
#include "daemon/agent/tasks_spool.h"

#define JOB	42
#define WAIT_MS	15000	/* generous: CI machines and valgrind are slow */

static char spool[PATH_MAX];
static bool root;
static bool have_pidfd;	/* valgrind 3.19 lacks pidfd_open: tasks.h
			 * allows a pidfd of -1 then */
static char *const envp_default[] = { "PATH=/usr/bin:/bin", "HOME=/",
	"COHORT_JOB_ID=42", NULL };

/* Tasks a test started, stopped for good in teardown. */
static struct task started[8];
static size_t nstarted;

static void
ms_sleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* snprintf that fails the test rather than truncate. */
static void
fmt(char *buf, size_t len, const char *f, ...)
    __attribute__((format(printf, 3, 4)));

static void
fmt(char *buf, size_t len, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(buf, len, f, ap);
	va_end(ap);
	ck_assert(n >= 0 && (size_t)n < len);
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

static void
setup(void)
{
	char tmpl[] = "/tmp/check_tasks.XXXXXX";
	int fd;

	root = geteuid() == 0;
	if ((fd = pidfd_open(getpid(), 0)) != -1) {
		have_pidfd = true;
		close(fd);
	}
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	ck_assert_ptr_nonnull(realpath(tmpl, spool));
	/* Tasks run as "nobody" when we are root: they must reach their
	 * script and workdir through the spool. */
	ck_assert_int_eq(chmod(spool, 0711), 0);
	nstarted = 0;
}

static void
teardown(void)
{
	long deadline = now_ms() + WAIT_MS;
	size_t i;
	int st;

	/* Stop what is left and let the supervisors write their last file
	 * before the spool goes. */
	for (i = 0; i < nstarted; i++)
		tasks_signal(&started[i], SIGKILL);
	for (i = 0; i < nstarted; i++) {
		while ((tasks_result(&started[i], &st, NULL, 0, NULL) == -1 &&
		    errno == ENOENT) || tasks_alive(&started[i])) {
			if (now_ms() > deadline)
				break;
			ms_sleep(10);
		}
		if (started[i].pidfd != -1)
			close(started[i].pidfd);
	}
	nftw(spool, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void
launch_init(struct task_launch *l, const char *const *argv, size_t argc)
{
	memset(l, 0, sizeof(*l));
	l->job_id = JOB;
	l->argv = argv;
	l->argc = argc;
	l->envp = envp_default;
	l->workdir = "/";
	l->user = "nobody";
}

/* Start l and remember the task for teardown. */
static struct task *
start(const struct task_launch *l)
{
	struct task *t;
	struct cerr err;

	ck_assert_uint_lt(nstarted, sizeof(started) / sizeof(started[0]));
	t = &started[nstarted];
	ck_assert_msg(tasks_start(spool, l, t, &err) == 0, "tasks_start: %s",
	    err.text);
	nstarted++;
	ck_assert_int_gt(t->pgid, 1);
	ck_assert_int_gt(t->supervisor, 1);
	ck_assert_int_ne(t->pgid, t->supervisor);
	return t;
}

static struct task *
start_cmd(const char *const *argv, size_t argc)
{
	struct task_launch l;

	launch_init(&l, argv, argc);
	return start(&l);
}

/* tasks_result once it stops saying ENOENT; its return in *rc. */
static int
wait_result(const struct task *t, int *rc)
{
	long deadline = now_ms() + WAIT_MS;
	int status = -1;

	for (;;) {
		*rc = tasks_result(t, &status, NULL, 0, NULL);
		if (*rc == 0 || errno != ENOENT)
			return status;
		ck_assert_msg(now_ms() < deadline, "task did not end");
		ms_sleep(10);
	}
}

static int
wait_exit(const struct task *t)
{
	int rc, status = wait_result(t, &rc);

	ck_assert_int_eq(rc, 0);
	return status;
}

/* The whole file at path, NUL-terminated (malloc'd). */
static char *
slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r"), *m = open_memstream(&buf, &len);
	int c;

	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	ck_assert_ptr_nonnull(m);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	return buf;
}

static char *
rank_log(unsigned rank)
{
	char path[PATH_MAX];

	ck_assert_int_eq(tasks_spool_log_path(spool, JOB, 0, rank, false, path,
	    sizeof(path)), 0);
	return slurp(path);
}

/* The rank's stderr log in the spool. */
static char *
rank_err(unsigned rank)
{
	char path[PATH_MAX];

	ck_assert_int_eq(tasks_spool_log_path(spool, JOB, 0, rank, true, path,
	    sizeof(path)), 0);
	return slurp(path);
}

static void
assert_log_has(unsigned rank, const char *want)
{
	char *log = rank_log(rank);

	ck_assert_msg(strstr(log, want) != NULL, "log of rank %u lacks "
	    "'%s': '%s'", rank, want, log);
	free(log);
}

static void
assert_err_has(unsigned rank, const char *want)
{
	char *log = rank_err(rank);

	ck_assert_msg(strstr(log, want) != NULL, "stderr log of rank %u lacks "
	    "'%s': '%s'", rank, want, log);
	free(log);
}

static void
write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
}

/* Processes in group pgid (zombies too: they keep the group alive), and
 * how many of them are named comm. */
static int
group_count(pid_t pgid, const char *comm, int *ncomm)
{
	char path[64], buf[512], *rp, name[64];
	struct dirent *de;
	int n = 0, pg, len;
	DIR *d = opendir("/proc");
	FILE *f;

	ck_assert_ptr_nonnull(d);
	*ncomm = 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		fmt(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		len = fgets(buf, sizeof(buf), f) == NULL ? 0 : 1;
		fclose(f);
		/* "pid (comm) state ppid pgrp ...": comm may hold spaces. */
		if (len == 0 || (rp = strrchr(buf, ')')) == NULL ||
		    sscanf(rp + 2, "%*c %*d %d", &pg) != 1 || pg != pgid)
			continue;
		n++;
		fmt(name, sizeof(name), "(%s)", comm);
		if (strncmp(strchr(buf, '('), name, strlen(name)) == 0)
			(*ncomm)++;
	}
	closedir(d);
	return n;
}

START_TEST(test_output_to_log)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "echo out; echo err >&2; read x; echo \"read=$?\"" };
	char path[PATH_MAX], want[64], *pids, *log;
	struct pollfd pfd;
	struct task *t = start_cmd(argv, 3);
	int status = wait_exit(t);

	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	assert_log_has(0, "out\n");
	assert_err_has(0, "err\n");
	/* Kept apart: neither stream is in the other's log. */
	log = rank_log(0);
	ck_assert_msg(strstr(log, "err") == NULL, "stdout log: '%s'", log);
	free(log);
	log = rank_err(0);
	ck_assert_str_eq(log, "err\n");
	free(log);
	/* stdin is /dev/null: read meets end of file at once. */
	assert_log_has(0, "read=1\n");

	fmt(path, sizeof(path), "%s/jobs/42.0", spool);
	ck_assert_str_eq(t->dir, path);
	fmt(path, sizeof(path), "%s/rank-0.pid", t->dir);
	pids = slurp(path);
	fmt(want, sizeof(want), "%d %d\n", (int)t->supervisor,
	    (int)t->pgid);
	ck_assert_str_eq(pids, want);
	free(pids);

	/* The outcome is written before the supervisor exits. */
	if (have_pidfd) {
		ck_assert_int_ge(t->pidfd, 0);
		pfd.fd = t->pidfd;
		pfd.events = POLLIN;
		ck_assert_int_eq(poll(&pfd, 1, WAIT_MS), 1);
		ck_assert_int_eq(tasks_result(t, &status, NULL, 0, NULL), 0);
		ck_assert_int_eq(kill(t->supervisor, 0), -1);
	}
}
END_TEST

START_TEST(test_exit_code)
{
	static const char *const argv[] = { "/bin/sh", "-c", "exit 3" };
	struct task *t = start_cmd(argv, 3);
	int status = wait_exit(t);

	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 3);
}
END_TEST

/* The task sees envp and nothing of the agent's own environment. */
START_TEST(test_env)
{
	static const char *const argv[] = { "env" };
	char *log;
	struct task *t;

	ck_assert_int_eq(setenv("CHECK_TASKS_AGENT_ONLY", "1", 1), 0);
	t = start_cmd(argv, 1);
	ck_assert_int_eq(wait_exit(t), 0);
	assert_log_has(0, "COHORT_JOB_ID=42\n");
	log = rank_log(0);
	ck_assert_ptr_null(strstr(log, "CHECK_TASKS_AGENT_ONLY"));
	free(log);
}
END_TEST

/* A bare command name is looked up in the task's PATH, not ours. */
START_TEST(test_path_from_envp)
{
	static const char *const argv[] = { "cohort-hello", "x" };
	char bin[PATH_MAX], cmd[PATH_MAX + 16], pathvar[PATH_MAX + 32];
	char *envp[] = { pathvar, NULL };
	struct task_launch l;

	fmt(bin, sizeof(bin), "%s/bin", spool);
	ck_assert_int_eq(mkdir(bin, 0755), 0);
	ck_assert_int_eq(chmod(bin, 0755), 0);
	fmt(cmd, sizeof(cmd), "%s/cohort-hello", bin);
	write_file(cmd, "#!/bin/sh\necho \"hello $1 from $0\"\n", 0755);
	fmt(pathvar, sizeof(pathvar), "PATH=/nonexistent:%s:/bin", bin);
	launch_init(&l, argv, 2);
	l.envp = envp;
	ck_assert_int_eq(wait_exit(start(&l)), 0);
	fmt(pathvar, sizeof(pathvar), "hello x from %s\n", cmd);
	assert_log_has(0, pathvar);
}
END_TEST

/* Two ranks share one script; each gets the arguments. */
START_TEST(test_script_args)
{
	static const char script[] = "#!/bin/sh\n"
	    "echo \"args:$#:$1:$2 rank:$RANK\"\n";
	static const char *const argv[] = { "a", "b c" };
	char path[PATH_MAX];
	struct task_launch l;
	struct task *t0, *t1;
	struct stat sb;
	char *text;

	launch_init(&l, argv, 2);
	l.script = script;
	l.script_len = sizeof(script) - 1;
	t0 = start(&l);
	l.rank = 1;
	l.local_rank = 1;
	t1 = start(&l);
	ck_assert_int_eq(wait_exit(t0), 0);
	ck_assert_int_eq(wait_exit(t1), 0);
	assert_log_has(0, "args:2:a:b c rank:\n");
	assert_log_has(1, "args:2:a:b c rank:\n");

	/* Private to the task's user: the script, its log, the start's
	 * directory (searched, not listed). */
	fmt(path, sizeof(path), "%s/script", t0->dir);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0700);
	text = slurp(path);
	ck_assert_str_eq(text, script);
	free(text);
	ck_assert_int_eq(stat(t0->dir, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0711);
	fmt(path, sizeof(path), "%s/rank-0.log", t0->dir);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0600);
}
END_TEST

START_TEST(test_workdir)
{
	static const char *const argv[] = { "/bin/sh", "-c", "pwd" };
	char wd[PATH_MAX], want[PATH_MAX + 64], why[256];
	struct task_launch l;
	struct task *t;
	bool perm = true;
	int status;

	fmt(wd, sizeof(wd), "%s/wd", spool);
	ck_assert_int_eq(mkdir(wd, 0755), 0);
	ck_assert_int_eq(chmod(wd, 0755), 0);
	launch_init(&l, argv, 3);
	l.workdir = wd;
	ck_assert_int_eq(wait_exit(t = start(&l)), 0);
	fmt(want, sizeof(want), "%s\n", wd);
	assert_log_has(0, want);
	/* It started: nothing to say. */
	ck_assert_int_eq(tasks_result(t, &status, why, sizeof(why), &perm),
	    0);
	ck_assert_str_eq(why, "");
	ck_assert(!perm);

	/* A workdir that is not there: the shell's 127, and why, in the
	 * log and for the job's reason. */
	fmt(wd, sizeof(wd), "%s/missing", spool);
	l.rank = 1;
	status = wait_exit(t = start(&l));
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 127);
	fmt(want, sizeof(want), "cohort: cannot change directory to "
	    "'%s': No such file or directory\n", wd);
	assert_err_has(1, want);
	ck_assert_int_eq(tasks_result(t, &status, why, sizeof(why), &perm),
	    0);
	/* The reason, which every user sees, does not name the path. */
	ck_assert_str_eq(why, "cannot change directory to the working "
	    "directory: No such file or directory");
	/* It would fail the same way every time. */
	ck_assert(perm);
}
END_TEST

/* The task gets 0-2 and none of the agent's other descriptors. */
START_TEST(test_no_fd_leak)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "ls /proc/$$/fd" };
	char *log;
	int fd;

	ck_assert_int_ge(fd = open("/dev/null", O_RDONLY), 0);
	ck_assert_int_eq(wait_exit(start_cmd(argv, 3)), 0);
	log = rank_log(0);
	ck_assert_str_eq(log, "0\n1\n2\n");
	free(log);
	close(fd);
}
END_TEST

/* A directory anyone may write in, for the output files of a task that
 * runs as nobody when the tests run as root. */
static void
open_dir(char *dir, size_t len, const char *name)
{
	fmt(dir, len, "%s/%s", spool, name);
	ck_assert_int_eq(mkdir(dir, 0777), 0);
	ck_assert_int_eq(chmod(dir, 0777), 0);
}

/* -o and -e: each stream to its file, relative to the workdir, owned by
 * the task's user; the spool logs stay empty. The first attempt
 * truncates, a later one appends. */
START_TEST(test_output_files)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "echo out $RANK_T; echo err >&2" };
	static const char *const argv1[] = { "/bin/sh", "-c",
	    "echo second; echo err2 >&2" };
	char wd[PATH_MAX], out[PATH_MAX], errf[PATH_MAX], *text;
	struct task_launch l;
	struct stat sb;

	open_dir(wd, sizeof(wd), "files");
	fmt(out, sizeof(out), "%s/o.txt", wd);
	fmt(errf, sizeof(errf), "%s/e.txt", wd);
	/* Left by an earlier job: the user's file, truncated. */
	write_file(out, "stale\n", 0644);
	if (root)
		ck_assert_int_eq(chown(out, getpwnam("nobody")->pw_uid,
		    getpwnam("nobody")->pw_gid), 0);
	launch_init(&l, argv, 3);
	l.workdir = wd;
	l.out_file = "o.txt";
	l.err_file = "e.txt";
	l.out_trunc = l.err_trunc = true;
	ck_assert_int_eq(wait_exit(start(&l)), 0);
	text = slurp(out);
	ck_assert_str_eq(text, "out\n");
	free(text);
	text = slurp(errf);
	ck_assert_str_eq(text, "err\n");
	free(text);
	ck_assert_int_eq(stat(out, &sb), 0);
	ck_assert_uint_eq(sb.st_uid, root ? getpwnam("nobody")->pw_uid :
	    getuid());
	text = rank_log(0);
	ck_assert_str_eq(text, "");
	free(text);
	text = rank_err(0);
	ck_assert_str_eq(text, "");
	free(text);

	/* A restart appends to both. */
	launch_init(&l, argv1, 3);
	l.rank = 1;
	l.workdir = wd;
	l.out_file = "o.txt";
	l.err_file = "e.txt";
	ck_assert_int_eq(wait_exit(start(&l)), 0);
	text = slurp(out);
	ck_assert_str_eq(text, "out\nsecond\n");
	free(text);
	text = slurp(errf);
	ck_assert_str_eq(text, "err\nerr2\n");
	free(text);
}
END_TEST

/* -o without -e (the same file for both): one file, both streams in
 * the order written. -e alone: stdout stays in the spool. */
START_TEST(test_output_one_file)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "echo a; echo b >&2; echo c" };
	char wd[PATH_MAX], out[PATH_MAX], *text;
	struct task_launch l;

	open_dir(wd, sizeof(wd), "one");
	fmt(out, sizeof(out), "%s/both", wd);
	launch_init(&l, argv, 3);
	l.out_file = l.err_file = out;
	ck_assert_int_eq(wait_exit(start(&l)), 0);
	text = slurp(out);
	ck_assert_str_eq(text, "a\nb\nc\n");
	free(text);

	fmt(out, sizeof(out), "%s/err-only", wd);
	launch_init(&l, argv, 3);
	l.rank = 1;
	l.err_file = out;
	ck_assert_int_eq(wait_exit(start(&l)), 0);
	text = slurp(out);
	ck_assert_str_eq(text, "b\n");
	free(text);
	assert_log_has(1, "a\nc\n");
}
END_TEST

/* The task starts with the submitter's umask, whatever the agent's (set
 * here to 0 so that it cannot be the one that makes a file private):
 * its -o file and what it creates follow it; none sent is 0077. */
START_TEST(test_output_umask)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "echo x; : >made" };
	static const struct {
		bool has;
		mode_t umask, want;
	} c[] = {
		{ true, 077, 0600 },
		{ true, 022, 0644 },
		{ false, 0, 0600 },
	};
	char wd[PATH_MAX], path[PATH_MAX], name[32];
	struct task_launch l;
	struct stat sb;
	mode_t old;
	size_t i;

	old = umask(0);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(name, sizeof(name), "umask%zu", i);
		open_dir(wd, sizeof(wd), name);
		launch_init(&l, argv, 3);
		l.rank = (unsigned)i;
		l.workdir = wd;
		l.out_file = "o.txt";
		l.has_umask = c[i].has;
		l.umask = c[i].umask;
		ck_assert_int_eq(wait_exit(start(&l)), 0);
		fmt(path, sizeof(path), "%s/o.txt", wd);
		ck_assert_int_eq(stat(path, &sb), 0);
		ck_assert_msg((sb.st_mode & 07777) == c[i].want, "case %zu: "
		    "-o file mode %04o, not %04o", i,
		    (unsigned)(sb.st_mode & 07777), (unsigned)c[i].want);
		fmt(path, sizeof(path), "%s/made", wd);
		ck_assert_int_eq(stat(path, &sb), 0);
		ck_assert_msg((sb.st_mode & 07777) == c[i].want, "case %zu: "
		    "created file mode %04o, not %04o", i,
		    (unsigned)(sb.st_mode & 07777), (unsigned)c[i].want);
	}
	umask(old);
}
END_TEST

/* A file that cannot be opened: the task does not run, and the start
 * failure is permanent, told in the spool's stderr and for the reason.
 * As root, a directory only root may write proves the open is the
 * user's. */
START_TEST(test_output_open_fails)
{
	static const char *const argv[] = { "/bin/sh", "-c", "echo ran" };
	char ro[PATH_MAX], bad[PATH_MAX], want[PATH_MAX + 128], why[512];
	struct task_launch l;
	struct task *t;
	bool perm = false;
	int status;

	fmt(bad, sizeof(bad), "%s/no-such-dir/out", spool);
	launch_init(&l, argv, 3);
	l.out_file = bad;
	status = wait_exit(t = start(&l));
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 127);
	fmt(want, sizeof(want), "cannot open the output file '%s': No such "
	    "file or directory", bad);
	assert_err_has(0, want);
	ck_assert_int_eq(tasks_result(t, &status, why, sizeof(why), &perm),
	    0);
	ck_assert_str_eq(why, "cannot open the output file (its path is in "
	    "the task's log): No such file or directory");
	ck_assert(perm);
	ck_assert(tasks_child_failure_permanent(TASK_STAGE_OUTPUT, EACCES));
	ck_assert(!tasks_child_failure_permanent(TASK_STAGE_OUTPUT, ENOSPC));
	ck_assert(!tasks_child_failure_permanent(TASK_STAGE_OUTPUT, EMFILE));

	if (!root)
		return;
	fmt(ro, sizeof(ro), "%s/root-only", spool);
	ck_assert_int_eq(mkdir(ro, 0755), 0);
	fmt(bad, sizeof(bad), "%s/err", ro);
	launch_init(&l, argv, 3);
	l.rank = 1;
	l.err_file = bad;
	status = wait_exit(t = start(&l));
	ck_assert_int_eq(WEXITSTATUS(status), 127);
	fmt(want, sizeof(want), "cannot open the error file '%s': Permission "
	    "denied", bad);
	assert_err_has(1, want);
	ck_assert_int_eq(access(bad, F_OK), -1);
}
END_TEST

START_TEST(test_missing_command)
{
	static const char *const argv[] = { "cohort-no-such-command", "x" };
	static const char *const abs[] = { "/nonexistent/cmd" };
	struct task_launch l;
	int status;

	status = wait_exit(start_cmd(argv, 2));
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 127);
	assert_err_has(0, "cohort: cannot run 'cohort-no-such-command': "
	    "No such file or directory\n");

	launch_init(&l, abs, 1);
	l.rank = 1;
	status = wait_exit(start(&l));
	ck_assert_int_eq(WEXITSTATUS(status), 127);
	assert_err_has(1, "cohort: cannot run '/nonexistent/cmd': "
	    "No such file or directory\n");
}
END_TEST

/* A command that is not there is a permanent failure, told with why. */
START_TEST(test_missing_command_permanent)
{
	static const char *const argv[] = { "cohort-no-such-command" };
	char why[256];
	struct task *t;
	bool perm = false;
	int status;

	status = wait_exit(t = start_cmd(argv, 1));
	ck_assert_int_eq(WEXITSTATUS(status), 127);
	ck_assert_int_eq(tasks_result(t, &status, why, sizeof(why), &perm),
	    0);
	/* The reason is public: it does not name the command (the task's
	 * log, private, does: see above). */
	ck_assert_str_eq(why, "cannot run the command: No such file or "
	    "directory");
	ck_assert(perm);
}
END_TEST

/* Which failures to start would come again on every try. */
START_TEST(test_failure_class)
{
	/* The job's: restarting cannot help. */
	ck_assert(tasks_child_failure_permanent(TASK_STAGE_EXEC, ENOENT));
	ck_assert(tasks_child_failure_permanent(TASK_STAGE_EXEC, EACCES));
	ck_assert(tasks_child_failure_permanent(TASK_STAGE_EXEC, ENOEXEC));
	ck_assert(tasks_child_failure_permanent(TASK_STAGE_EXEC, ENOTDIR));
	ck_assert(tasks_child_failure_permanent(TASK_STAGE_WORKDIR, ENOENT));
	ck_assert(tasks_child_failure_permanent(TASK_STAGE_WORKDIR, EACCES));
	ck_assert(tasks_child_failure_permanent(TASK_STAGE_WORKDIR, ENOTDIR));
	ck_assert(tasks_child_failure_permanent(TASK_STAGE_USER, EPERM));
	ck_assert(tasks_child_failure_permanent(TASK_STAGE_USER, EINVAL));
	/* What may pass: resources, busy files, file system trouble. */
	ck_assert(!tasks_child_failure_permanent(TASK_STAGE_EXEC, ETXTBSY));
	ck_assert(!tasks_child_failure_permanent(TASK_STAGE_EXEC, ENOMEM));
	ck_assert(!tasks_child_failure_permanent(TASK_STAGE_EXEC, EAGAIN));
	ck_assert(!tasks_child_failure_permanent(TASK_STAGE_EXEC, EIO));
	ck_assert(!tasks_child_failure_permanent(TASK_STAGE_EXEC, EMFILE));
	ck_assert(!tasks_child_failure_permanent(TASK_STAGE_WORKDIR, EIO));
	ck_assert(!tasks_child_failure_permanent(TASK_STAGE_WORKDIR, ESTALE));
	ck_assert(!tasks_child_failure_permanent(TASK_STAGE_WORKDIR, ETIMEDOUT));
	ck_assert(!tasks_child_failure_permanent(TASK_STAGE_USER, EAGAIN));
	ck_assert(!tasks_child_failure_permanent(TASK_STAGE_USER, ENOMEM));
}
END_TEST

/* SIGTERM reaches every process of the group, not just its leader. */
START_TEST(test_signal_group)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "sleep 100 & sleep 100" };
	long deadline = now_ms() + WAIT_MS;
	struct task *t;
	int nsleep, status;

	/* An agent's ignored signals must not reach its tasks. */
	signal(SIGTERM, SIG_IGN);
	t = start_cmd(argv, 3);

	/* Both sleeps must be running, or the test proves nothing. */
	while (group_count(t->pgid, "sleep", &nsleep) > 0 && nsleep < 2) {
		ck_assert_msg(now_ms() < deadline, "sleeps did not start");
		ms_sleep(10);
	}
	ck_assert_int_eq(nsleep, 2);
	ck_assert(tasks_alive(t));
	ck_assert_int_eq(tasks_signal(t, SIGTERM), 0);

	status = wait_exit(t);
	ck_assert(WIFSIGNALED(status));
	ck_assert_int_eq(WTERMSIG(status), SIGTERM);
	while (tasks_alive(t)) {
		ck_assert_msg(now_ms() < deadline, "group still alive");
		ms_sleep(10);
	}
	ck_assert_int_eq(group_count(t->pgid, "sleep", &nsleep), 0);
	ck_assert_int_eq(tasks_signal(t, SIGTERM), -1);
	ck_assert_int_eq(errno, ESRCH);
}
END_TEST

struct found {
	struct task t[4];
	size_t n;
};

static int
collect(struct task *t, void *arg)
{
	struct found *f = arg;

	ck_assert_uint_lt(f->n, 4);
	f->t[f->n++] = *t;
	return 0;
}

/* The agent dies right after starting the task: the task runs on, a
 * new agent finds it in the spool and can stop it and read its end. */
START_TEST(test_survives_agent)
{
	static const char *const argv[] = { "sleep", "100" };
	struct task_launch l;
	struct found f = { .n = 0 };
	struct cerr err;
	struct task t;
	pid_t agent;
	int st, status, rc;

	/* Orphans come to us rather than to an init that may be slow to
	 * reap them, so the supervisor's end can be observed. */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	launch_init(&l, argv, 2);
	l.rank = 3;
	if ((agent = fork()) == 0)
		_exit(tasks_start(spool, &l, &t, &err) == 0 ? 0 : 1);
	ck_assert_int_gt(agent, 0);
	ck_assert_int_eq(waitpid(agent, &st, 0), agent);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	ck_assert_int_eq(tasks_spool_adopt(spool, collect, &f, &err), 0);
	ck_assert_uint_eq(f.n, 1);
	started[nstarted++] = f.t[0];
	ck_assert_uint_eq(f.t[0].job_id, JOB);
	ck_assert_uint_eq(f.t[0].restart, 0);
	ck_assert_uint_eq(f.t[0].rank, 3);
	ck_assert(!have_pidfd || f.t[0].pidfd >= 0);
	ck_assert(tasks_alive(&f.t[0]));
	ck_assert_int_eq(tasks_result(&f.t[0], &status, NULL, 0, NULL), -1);
	ck_assert_int_eq(errno, ENOENT);

	ck_assert_int_eq(tasks_signal(&f.t[0], SIGKILL), 0);
	status = wait_result(&f.t[0], &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert(WIFSIGNALED(status));
	ck_assert_int_eq(WTERMSIG(status), SIGKILL);
}
END_TEST

/* --cpus-per-task: the task runs bound to the set (its status says so),
 * the set is kept in rank-R.cpus and comes back with adoption; with
 * cgroup_join (the fallback) the supervisor writes its pid into the
 * task's cgroup.procs (a regular file standing in for it) before it
 * forks the task. */
START_TEST(test_cpus_and_cgroup)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "grep Cpus_allowed_list /proc/self/status" };
	char procs[PATH_MAX], want[64], *txt;
	struct found f = { .n = 0 };
	struct task_launch l;
	struct cerr err;
	struct task *t;
	cpu_set_t cpus;
	int fd;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	fmt(procs, sizeof(procs), "%s/cgroup.procs", spool);
	ck_assert_int_ge(fd = open(procs, O_WRONLY | O_CREAT, 0644), 0);
	close(fd);
	launch_init(&l, argv, 3);
	l.cpus = &cpus;
	l.cgroup = spool;
	l.cgroup_join = true;
	t = start(&l);
	ck_assert(t->bound);
	ck_assert(CPU_EQUAL(&t->cpus, &cpus));
	ck_assert_int_eq(wait_exit(t), 0);
	assert_log_has(0, "Cpus_allowed_list:\t0\n");
	txt = slurp(procs);
	fmt(want, sizeof(want), "%d", (int)t->supervisor);
	ck_assert_str_eq(txt, want);
	free(txt);
	ck_assert_int_eq(tasks_spool_adopt(spool, collect, &f, &err), 0);
	ck_assert_uint_eq(f.n, 1);
	ck_assert(f.t[0].bound);
	ck_assert(CPU_EQUAL(&f.t[0].cpus, &cpus));
	if (f.t[0].pidfd >= 0)
		close(f.t[0].pidfd);
	/* A cgroup that cannot be joined fails the start, with nothing
	 * left running. */
	fmt(procs, sizeof(procs), "%s/no-such-cgroup", spool);
	l.cgroup = procs;
	l.rank = 1;
	ck_assert_int_eq(tasks_start(spool, &l, &started[nstarted], &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "no-such-cgroup/cgroup.procs"));
}
END_TEST

/* The v2 path (after "0::") in /proc/PID/cgroup into out ("" if none). */
static void
proc_cgroup(pid_t pid, char *out, size_t len)
{
	char path[64], *txt, *v2;

	fmt(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	txt = slurp(path);
	out[0] = '\0';
	if ((v2 = strstr(txt, "0::/")) != NULL) {
		v2 += 3;
		v2[strcspn(v2, "\n")] = '\0';
		fmt(out, len, "%s", v2);
	}
	free(txt);
}

/* A task's cgroup on the real hierarchy (root, cgroup v2 writable: else
 * skipped, said on stderr). The task's first act is to print its own
 * /proc/self/cgroup: its cgroup from birth, on both paths. Created in
 * it (clone3), the task is there and its supervisor is not, as nobody
 * moved anyone; with cgroup_join (the fallback, as with
 * COHORT_AGENT_NO_CLONE3 or a kernel without clone3) the supervisor
 * moved itself in before forking. Under valgrind, whose clone3 says
 * ENOSYS, only the fallback runs. */
static void
cgroup_birth(bool join)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "sed -n 's/^0:://p' /proc/self/cgroup; exec sleep 100" };
	char why[512], job[PATH_MAX], dir[PATH_MAX], want[PATH_MAX + 2],
	    sup[PATH_MAX], *log;
	const char *mount, *w;
	struct task_launch l;
	struct cgroup *cg;
	struct cerr err;
	struct task *t;
	long deadline;
	int i;

	cg = cgroup_create(AGENT_CGROUP_AUTO, NULL, "tasks", spool, why,
	    sizeof(why));
	if (cg == NULL) {
		fprintf(stderr, "check_tasks: cgroup part skipped: %s\n", why);
		return;
	}
	if (!join && !cgroup_clone_into_ok(cg, &w)) {
		fprintf(stderr, "check_tasks: clone3 part skipped: %s\n", w);
		cgroup_destroy(cg);
		return;
	}
	ck_assert_int_eq(cgroup_job_create(cg, spool, JOB, 0, 0, job, &err),
	    0);
	ck_assert_int_eq(cgroup_task_create(job, 0, dir, &err), 0);
	/* The cgroup's path as /proc shows it: less the mount. */
	mount = strncmp(dir, "/sys/fs/cgroup/unified/", 23) == 0 ?
	    "/sys/fs/cgroup/unified" : "/sys/fs/cgroup";
	fmt(want, sizeof(want), "%s\n", dir + strlen(mount));

	launch_init(&l, argv, 3);
	l.cgroup = dir;
	l.cgroup_join = join;
	t = start(&l);
	deadline = now_ms() + WAIT_MS;
	for (;;) {
		log = rank_log(0);
		if (log[0] != '\0')
			break;
		free(log);
		ck_assert_msg(now_ms() < deadline, "the task printed nothing");
		ms_sleep(10);
	}
	ck_assert_str_eq(log, want);
	free(log);
	proc_cgroup(t->supervisor, sup, sizeof(sup));
	if (join)
		ck_assert_str_eq(sup, dir + strlen(mount));
	else
		ck_assert_msg(strcmp(sup, dir + strlen(mount)) != 0,
		    "the supervisor was moved into the task's cgroup %s", sup);

	ck_assert_int_eq(tasks_signal(t, SIGKILL), 0);
	(void)wait_exit(t);
	/* Killed, and (the fallback) the supervisor gone: the cgroup
	 * goes. */
	ck_assert_int_ge(cgroup_job_end(cg, job, NULL), 0);
	for (i = 0; i < 40 && access(job, F_OK) == 0; i++) {
		ms_sleep(25);
		cgroup_sweep(cg);
	}
	ck_assert_int_eq(access(job, F_OK), -1);
	cgroup_destroy(cg);
}

START_TEST(test_cgroup_clone)
{
	cgroup_birth(false);
}
END_TEST

START_TEST(test_cgroup_join)
{
	cgroup_birth(true);
}
END_TEST

/* A supervisor killed before the task ends leaves no status: EIO, and
 * the task counts as killed. */
START_TEST(test_supervisor_killed)
{
	static const char *const argv[] = { "sleep", "100" };
	struct task *t = start_cmd(argv, 2);
	int rc, status;

	ck_assert_int_eq(kill(t->supervisor, SIGKILL), 0);
	status = wait_result(t, &rc);
	ck_assert_int_eq(rc, -1);
	ck_assert_int_eq(errno, EIO);
	ck_assert(WIFSIGNALED(status));
	ck_assert_int_eq(WTERMSIG(status), SIGKILL);
	/* The task itself is still there to be stopped. */
	ck_assert(tasks_alive(t));
}
END_TEST

/* Ended tasks are found too, and removal takes the whole start. */
START_TEST(test_adopt_ended_and_remove)
{
	static const char *const argv[] = { "/bin/sh", "-c", "exit 5" };
	struct found f = { .n = 0 };
	struct task_launch l;
	struct cerr err;
	struct stat sb;
	char jobs[PATH_MAX + 8];
	int status;

	fmt(jobs, sizeof(jobs), "%s/jobs", spool);
	ck_assert_int_eq(tasks_spool_adopt(spool, collect, &f, &err), 0);
	ck_assert_uint_eq(f.n, 0);
	launch_init(&l, argv, 3);
	wait_exit(start(&l));
	l.restart = 1;
	wait_exit(start(&l));
	ck_assert_int_eq(tasks_spool_adopt(spool, collect, &f, &err), 0);
	ck_assert_uint_eq(f.n, 2);
	ck_assert_int_eq(f.t[0].pidfd, -1);
	ck_assert_int_eq(tasks_result(&f.t[0], &status, NULL, 0, NULL), 0);
	ck_assert_int_eq(WEXITSTATUS(status), 5);

	ck_assert_int_eq(tasks_spool_remove(spool, JOB, 0), 0);
	ck_assert_int_eq(stat(started[0].dir, &sb), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(stat(started[1].dir, &sb), 0);
	ck_assert_int_eq(tasks_spool_remove(spool, JOB, 0), 0);
	ck_assert_int_eq(tasks_spool_remove(spool, JOB, 1), 0);
	ck_assert_int_eq(stat(jobs, &sb), 0);
	f.n = 0;
	ck_assert_int_eq(tasks_spool_adopt(spool, collect, &f, &err), 0);
	ck_assert_uint_eq(f.n, 0);
}
END_TEST

/* The same rank of the same start twice would run the task twice. */
START_TEST(test_conflict)
{
	static const char *const argv[] = { "sleep", "100" };
	struct task_launch l;
	struct cerr err;
	struct task t2;
	struct stat sb;
	char path[PATH_MAX];

	launch_init(&l, argv, 2);
	start(&l);
	ck_assert_int_eq(tasks_start(spool, &l, &t2, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_int_eq(tasks_spool_log_path(spool, JOB, 0, 0, false, path,
	    sizeof(path)),
	    0);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert(tasks_alive(&started[0]));
}
END_TEST

START_TEST(test_no_such_user)
{
	static const char *const argv[] = { "/bin/sh", "-c", "exit 0" };
	struct task_launch l;
	struct cerr err;
	struct task t;
	struct stat sb;
	char path[PATH_MAX + 8];

	if (!root) {
		fprintf(stderr, "test_no_such_user: skipped, not root\n");
		return;
	}
	launch_init(&l, argv, 3);
	l.user = "cohort-no-such-user";
	ck_assert_int_eq(tasks_start(spool, &l, &t, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_str_eq(err.text, "user 'cohort-no-such-user' does not exist "
	    "on this node");
	/* Nothing ran, nothing is left. */
	fmt(path, sizeof(path), "%s/jobs", spool);
	ck_assert_int_eq(stat(path, &sb), -1);
	ck_assert_int_eq(t.pidfd, -1);

	l.user = "root";
	ck_assert_int_eq(tasks_start(spool, &l, &t, &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_ptr_nonnull(strstr(err.text, "refusing to run a task as "
	    "root"));
	ck_assert_int_eq(stat(path, &sb), -1);
}
END_TEST

START_TEST(test_runs_as_user)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "id -u; id -g; id -G; touch /root/cohort-check-tasks 2>&1 ||"
	    " echo denied" };
	struct passwd *pw;
	char want[64], path[PATH_MAX];
	struct stat sb;
	struct task *t;

	if (!root) {
		fprintf(stderr, "test_runs_as_user: skipped, not root\n");
		return;
	}
	ck_assert_ptr_nonnull(pw = getpwnam("nobody"));
	t = start_cmd(argv, 3);
	ck_assert_int_eq(wait_exit(t), 0);
	fmt(want, sizeof(want), "%u\n%u\n", (unsigned)pw->pw_uid,
	    (unsigned)pw->pw_gid);
	assert_log_has(0, want);
	assert_log_has(0, "denied\n");
	/* The user owns their log. */
	fmt(path, sizeof(path), "%s/rank-0.log", t->dir);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_uint_eq(sb.st_uid, pw->pw_uid);
}
END_TEST

/* Not root: l->user is not ours to use; the task runs as us. */
/* An identity the caller looked up (the agent, once per start) is used
 * as given: no user database lookup, which here would fail (no such
 * user), and the groups and home are the given ones. Root is refused
 * even so. */
START_TEST(test_given_user)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "id -u; id -G; pwd" };
	static const gid_t groups[] = { 65534, 4242 };
	struct task_user who = {
		.name = "cohort-no-such-user", .uid = 65534, .gid = 65534,
		.groups = groups, .ngroups = 2, .home = "/tmp",
	};
	struct task_launch l;
	struct cerr err;
	struct task *t, t2;

	if (!root) {
		fprintf(stderr, "test_given_user: skipped, not root\n");
		return;
	}
	launch_init(&l, argv, 3);
	l.user = who.name;
	l.who = &who;
	l.workdir = NULL;
	t = start(&l);
	ck_assert_int_eq(wait_exit(t), 0);
	assert_log_has(0, "65534\n65534 4242\n/tmp\n");

	who.uid = 0;
	l.rank = 1;
	ck_assert_int_eq(tasks_start(spool, &l, &t2, &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
}
END_TEST

START_TEST(test_not_root_ignores_user)
{
	static const char *const argv[] = { "/bin/sh", "-c", "id -u" };
	struct task_launch l;
	char want[32];

	if (root) {
		fprintf(stderr, "test_not_root_ignores_user: skipped, root\n");
		return;
	}
	launch_init(&l, argv, 3);
	l.user = "cohort-no-such-user";
	ck_assert_int_eq(wait_exit(start(&l)), 0);
	fmt(want, sizeof(want), "%u\n", (unsigned)getuid());
	assert_log_has(0, want);
}
END_TEST

static Suite *
tasks_suite(void)
{
	Suite *s = suite_create("tasks");
	TCase *tc;

	tc = tcase_create("run");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_output_to_log);
	tcase_add_test(tc, test_exit_code);
	tcase_add_test(tc, test_cpus_and_cgroup);
	tcase_add_test(tc, test_cgroup_clone);
	tcase_add_test(tc, test_cgroup_join);
	tcase_add_test(tc, test_env);
	tcase_add_test(tc, test_path_from_envp);
	tcase_add_test(tc, test_script_args);
	tcase_add_test(tc, test_workdir);
	tcase_add_test(tc, test_missing_command);
	tcase_add_test(tc, test_missing_command_permanent);
	tcase_add_test(tc, test_failure_class);
	tcase_add_test(tc, test_no_fd_leak);
	tcase_add_test(tc, test_output_files);
	tcase_add_test(tc, test_output_one_file);
	tcase_add_test(tc, test_output_umask);
	tcase_add_test(tc, test_output_open_fails);
	suite_add_tcase(s, tc);

	tc = tcase_create("control");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_signal_group);
	tcase_add_test(tc, test_survives_agent);
	tcase_add_test(tc, test_supervisor_killed);
	tcase_add_test(tc, test_adopt_ended_and_remove);
	tcase_add_test(tc, test_conflict);
	suite_add_tcase(s, tc);

	tc = tcase_create("user");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_no_such_user);
	tcase_add_test(tc, test_runs_as_user);
	tcase_add_test(tc, test_given_user);
	tcase_add_test(tc, test_not_root_ignores_user);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(tasks_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
