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
	/* Files are read as the job's user (nobody, under root), who must
	 * be able to reach them. */
	ck_assert_int_eq(chmod(tmpdir, 0755), 0);
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

/* COHORT_STEP_FILE: "STEP COMPUTE_MS", one line; anything else (half
 * written, a third field, a time past 32 bits) is no report. */
START_TEST(test_parse_step)
{
	static const char *const bad[] = { "", "12", "12 ", " 12 5", "12 x",
	    "12 5 6", "12 5\n\n", "-1 5", "12 4294967296",
	    "99999999999999999999 5", "12\n5" };
	uint64_t step = 9;
	uint32_t ms = 9;
	size_t i;

	ck_assert_int_eq(watch_parse_step("120 250\n", strlen("120 250\n"),
	    &step, &ms), 0);
	ck_assert_uint_eq(step, 120);
	ck_assert_uint_eq(ms, 250);
	ck_assert_int_eq(watch_parse_step("7\t 0\r\n", strlen("7\t 0\r\n"),
	    &step, &ms), 0);
	ck_assert_uint_eq(step, 7);
	ck_assert_uint_eq(ms, 0);
	ck_assert_int_eq(watch_parse_step("1 4294967295",
	    strlen("1 4294967295"), &step, &ms), 0);
	ck_assert_uint_eq(ms, 4294967295u);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		step = 9;
		ms = 9;
		ck_assert_msg(watch_parse_step(bad[i], strlen(bad[i]), &step,
		    &ms) == -1, "'%s' parsed", bad[i]);
		ck_assert_uint_eq(step, 9);
		ck_assert_uint_eq(ms, 9);
	}
}
END_TEST

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

/* Reads as the process itself: what a non-root agent does, and what a
 * root agent's job running as root would be (never: refused). */
static struct watch_cred self;

static void
self_setup(void)
{
	self.uid = geteuid();
	self.gid = getegid();
	self.groups = NULL;
	self.ngroups = 0;
}

/* The account tasks run as under a root agent in these tests. */
static struct watch_cred
nobody_cred(void)
{
	struct watch_cred c = { 0 };
	struct passwd *pw = getpwnam("nobody");

	ck_assert_ptr_nonnull(pw);
	c.uid = pw->pw_uid;
	c.gid = pw->pw_gid;
	return c;
}

/* The uid a test's job runs as: nobody under root, else ourselves. */
static struct watch_cred
job_cred(void)
{
	return geteuid() == 0 ? nobody_cred() : self;
}

static void
chown_to(const char *path, const struct watch_cred *c)
{
	if (geteuid() == 0)
		ck_assert_int_eq(lchown(path, c->uid, c->gid), 0);
}

START_TEST(test_read_latest)
{
	char path[WATCH_PATH_MAX], dir[PATH_MAX + 16], file[PATH_MAX + 16];
	struct watch_cred c = job_cred();
	uint64_t step;
	int64_t mtime = 0;

	self_setup();
	c = job_cred();
	/* No checkpoint yet: ENOENT, for a directory that does not exist
	 * too. */
	ck_assert_int_eq(watch_read_latest(tmpdir, &c, &step, path,
	    sizeof(path), NULL), -1);
	ck_assert_int_eq(errno, ENOENT);
	snprintf(dir, sizeof(dir), "%s/nope", tmpdir);
	ck_assert_int_eq(watch_read_latest(dir, &c, &step, path,
	    sizeof(path), NULL), -1);
	ck_assert_int_eq(errno, ENOENT);

	snprintf(file, sizeof(file), "%s/LATEST", tmpdir);
	write_latest(tmpdir, "100 /ckpt/step-100\n");
	chown_to(file, &c);
	ck_assert_int_eq(watch_read_latest(tmpdir, &c, &step, path,
	    sizeof(path), &mtime), 0);
	ck_assert_uint_eq(step, 100);
	ck_assert_str_eq(path, "/ckpt/step-100");
	ck_assert_int_gt(mtime, 0);
	/* The next one replaces it by rename: seen at the next read. */
	write_latest(tmpdir, "200 /ckpt/step 200\n");
	chown_to(file, &c);
	ck_assert_int_eq(watch_read_latest(tmpdir, &c, &step, path,
	    sizeof(path), NULL), 0);
	ck_assert_uint_eq(step, 200);
	ck_assert_str_eq(path, "/ckpt/step 200");
}
END_TEST

/* Expect dir/LATEST refused with e, and nothing written. */
static void
latest_refused(const char *dir, const struct watch_cred *c, int e)
{
	char path[WATCH_PATH_MAX] = "untouched";
	uint64_t step = 12345;

	errno = 0;
	ck_assert_int_eq(watch_read_latest(dir, c, &step, path, sizeof(path),
	    NULL), -1);
	ck_assert_msg(errno == e, "errno %d (%s), expected %d (%s)", errno,
	    strerror(errno), e, strerror(e));
	ck_assert_uint_eq(step, 12345);
	ck_assert_str_eq(path, "untouched");
}

START_TEST(test_read_latest_bad)
{
	char file[PATH_MAX + 16], *big;
	struct watch_cred c;
	size_t n = WATCH_LATEST_MAX + 1;

	self_setup();
	c = job_cred();
	snprintf(file, sizeof(file), "%s/LATEST", tmpdir);
	/* Written in place and caught half way. */
	write_file(file, "300", 3);
	chown_to(file, &c);
	latest_refused(tmpdir, &c, EBADMSG);
	/* Far too long to be a checkpoint line: refused before reading. */
	ck_assert_ptr_nonnull(big = malloc(n));
	memset(big, 'a', n);
	big[0] = '1';
	big[1] = ' ';
	write_file(file, big, n);
	free(big);
	chown_to(file, &c);
	latest_refused(tmpdir, &c, EFBIG);
	/* Not a regular file: a directory, and a FIFO (which must not block
	 * the agent). */
	ck_assert_int_eq(unlink(file), 0);
	ck_assert_int_eq(mkdir(file, 0755), 0);
	chown_to(file, &c);
	latest_refused(tmpdir, &c, EINVAL);
	ck_assert_int_eq(rmdir(file), 0);
	ck_assert_int_eq(mkfifo(file, 0666), 0);
	chown_to(file, &c);
	latest_refused(tmpdir, &c, EINVAL);
	ck_assert_int_eq(unlink(file), 0);
}
END_TEST

/* A LATEST that is a symbolic link is never followed, wherever it
 * points: to a good checkpoint of the job's own, or to another's file. */
START_TEST(test_read_latest_symlink)
{
	char file[PATH_MAX + 16], target[PATH_MAX + 16];
	struct watch_cred c;

	self_setup();
	c = job_cred();
	snprintf(file, sizeof(file), "%s/LATEST", tmpdir);
	snprintf(target, sizeof(target), "%s/real", tmpdir);
	write_file(target, "9 /ckpt/9\n", 10);
	chown_to(target, &c);
	ck_assert_int_eq(symlink(target, file), 0);
	chown_to(file, &c);
	latest_refused(tmpdir, &c, ELOOP);
	ck_assert_int_eq(unlink(file), 0);
	ck_assert_int_eq(symlink("/etc/passwd", file), 0);
	latest_refused(tmpdir, &c, ELOOP);
}
END_TEST

/* A magic /proc link on the way (a process's cwd, here our own) is not
 * followed: it would reach directories of whoever that process is. */
START_TEST(test_read_latest_magic_link)
{
	char file[PATH_MAX + 16], old[PATH_MAX];
	struct watch_cred c;

	self_setup();
	c = job_cred();
	snprintf(file, sizeof(file), "%s/LATEST", tmpdir);
	write_file(file, "9 /ckpt/9\n", 10);
	chown_to(file, &c);
	ck_assert_ptr_nonnull(getcwd(old, sizeof(old)));
	ck_assert_int_eq(chdir(tmpdir), 0);
	/* Readable by its plain path ... */
	latest_refused("/proc/self/cwd/.", &c, ELOOP);
	ck_assert_int_eq(chdir(old), 0);
	{
		uint64_t step;
		char path[WATCH_PATH_MAX];

		ck_assert_int_eq(watch_read_latest(tmpdir, &c, &step, path,
		    sizeof(path), NULL), 0);
		ck_assert_uint_eq(step, 9);
	}
}
END_TEST

/* What LATEST names must be there for the job's user: a file, a
 * directory, a symbolic link to one; not a missing name, one under a
 * directory the user may not search, nor one reached through a magic
 * link. A URI or relative name is the job's own to resolve. */
START_TEST(test_path_reachable)
{
	char file[PATH_MAX + 32], dir[PATH_MAX + 32], link[PATH_MAX + 32];
	char missing[PATH_MAX + 32], hidden[PATH_MAX + 64], old[PATH_MAX];
	struct watch_cred c;

	self_setup();
	c = job_cred();
	snprintf(file, sizeof(file), "%s/step-30", tmpdir);
	snprintf(dir, sizeof(dir), "%s/step-40", tmpdir);
	snprintf(link, sizeof(link), "%s/latest-ckpt", tmpdir);
	snprintf(missing, sizeof(missing), "%s/step-50", tmpdir);
	write_file(file, "30\n", 3);
	ck_assert_int_eq(chmod(file, 0600), 0);	/* no read right needed */
	chown_to(file, &c);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	chown_to(dir, &c);
	ck_assert_int_eq(symlink(dir, link), 0);
	ck_assert_int_eq(watch_path_reachable(file, &c), 0);
	ck_assert_int_eq(watch_path_reachable(dir, &c), 0);
	ck_assert_int_eq(watch_path_reachable(link, &c), 0);
	errno = 0;
	ck_assert_int_eq(watch_path_reachable(missing, &c), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(watch_path_reachable("s3://bucket/step-50", &c), 0);
	ck_assert_int_eq(watch_path_reachable("ckpt/step-50", &c), 0);
	if (geteuid() == 0) {
		/* Under a directory only root may search: the agent could
		 * reach it, the job's user cannot. */
		snprintf(hidden, sizeof(hidden), "%s/private/step-60", tmpdir);
		snprintf(dir, sizeof(dir), "%s/private", tmpdir);
		ck_assert_int_eq(mkdir(dir, 0700), 0);
		write_file(hidden, "60\n", 3);
		chown_to(hidden, &c);
		errno = 0;
		ck_assert_int_eq(watch_path_reachable(hidden, &c), -1);
		ck_assert_int_eq(errno, EACCES);
	}
	/* Through the agent's own cwd: a magic link, never followed. */
	ck_assert_ptr_nonnull(getcwd(old, sizeof(old)));
	ck_assert_int_eq(chdir(tmpdir), 0);
	errno = 0;
	ck_assert_int_eq(watch_path_reachable("/proc/self/cwd/step-30", &c),
	    -1);
	ck_assert_int_eq(errno, ELOOP);
	ck_assert_int_eq(chdir(old), 0);
}
END_TEST

/* Owned by another uid than the job's: refused, even when readable. */
START_TEST(test_read_latest_wrong_owner)
{
	char buf[64];
	struct watch_cred c;
	size_t len;

	self_setup();
	if (geteuid() == 0) {
		char file[PATH_MAX + 16];

		c = nobody_cred();
		snprintf(file, sizeof(file), "%s/LATEST", tmpdir);
		write_file(file, "9 /ckpt/9\n", 10);
		ck_assert_int_eq(chmod(file, 0644), 0);
		/* root's (the test's), world-readable. */
		latest_refused(tmpdir, &c, EPERM);
		/* A job running as root (never: tasks are not run as root)
		 * reads nothing either. */
		ck_assert_int_eq(watch_read_latest(tmpdir, &self,
		    &(uint64_t){ 0 }, buf, sizeof(buf), NULL), -1);
		ck_assert_int_eq(errno, EPERM);
	}
	/* As anyone: a file that is root's. */
	c = self;
	if (geteuid() == 0)
		c = nobody_cred();
	ck_assert_int_eq(watch_read_file("/etc", "passwd", &c, buf,
	    sizeof(buf), &len, NULL), -1);
	/* The owner is checked before the size. */
	ck_assert_int_eq(errno, EPERM);
	ck_assert_uint_eq(len, 0);
}
END_TEST

/* Read as the job's user: a directory the user may not search keeps its
 * files closed, even one the user owns (root only). */
START_TEST(test_read_as_user)
{
	char priv[PATH_MAX + 16], file[PATH_MAX + 48], buf[64];
	struct watch_cred c;
	uint64_t step;
	size_t len;

	if (geteuid() != 0)
		return;	/* tasks run as the agent, who reads as itself */
	c = nobody_cred();
	snprintf(priv, sizeof(priv), "%s/private", tmpdir);
	ck_assert_int_eq(mkdir(priv, 0700), 0);
	ck_assert_int_eq(chmod(priv, 0700), 0);
	snprintf(file, sizeof(file), "%s/LATEST", priv);
	write_file(file, "77 /secret\n", 11);
	chown_to(file, &c);
	ck_assert_int_eq(chmod(tmpdir, 0755), 0);
	latest_refused(priv, &c, EACCES);
	/* Once the user may search it, the same file is read. */
	ck_assert_int_eq(chmod(priv, 0711), 0);
	ck_assert_int_eq(watch_read_latest(priv, &c, &step, buf, sizeof(buf),
	    NULL), 0);
	ck_assert_uint_eq(step, 77);
	/* A file of the user's it may not read (mode 0): refused. */
	ck_assert_int_eq(chmod(file, 0), 0);
	latest_refused(priv, &c, EACCES);
	/* And the agent is itself again afterwards: root reads it. */
	c = self;
	ck_assert_int_eq(chmod(file, 0600), 0);
	ck_assert_int_eq(lchown(file, 0, 0), 0);
	ck_assert_int_eq(geteuid(), 0);
	{
		int fd = open(file, O_RDONLY);

		ck_assert_int_ge(fd, 0);
		close(fd);
	}
	/* Via the groups too: nothing of root's group leaks. */
	ck_assert_int_eq(chmod(file, 0640), 0);
	c = nobody_cred();
	ck_assert_int_eq(watch_read_file(priv, "LATEST", &c, buf, sizeof(buf),
	    &len, NULL), -1);
	ck_assert_int_eq(errno, EACCES);
}
END_TEST

START_TEST(test_progress_mtime)
{
	char file[PATH_MAX + 16], link[PATH_MAX + 16];
	struct watch_cred c;
	struct timespec ts[2];
	struct timeval before;
	int64_t t, b;

	self_setup();
	c = job_cred();
	snprintf(file, sizeof(file), "%s/progress", tmpdir);
	ck_assert_int_eq(watch_progress_changed(file, c.uid, &t), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(t, 0);
	ck_assert_int_eq(watch_progress_changed(NULL, c.uid, &t), -1);
	write_file(file, "", 0);
	chown_to(file, &c);
	/* A known mtime, to the millisecond. */
	ts[0].tv_sec = ts[1].tv_sec = 1700000000;
	ts[0].tv_nsec = ts[1].tv_nsec = 123456789;
	ck_assert_int_eq(utimensat(AT_FDCWD, file, ts, 0), 0);
	ck_assert_int_eq(watch_progress_changed(file, c.uid, &t), 0);
	ck_assert_int_eq(t, 1700000000123LL);
	/* The job writes its step: the time moves to now. */
	gettimeofday(&before, NULL);
	b = (int64_t)before.tv_sec * 1000 + before.tv_usec / 1000;
	write_file(file, "57\n", 3);
	ck_assert_int_eq(watch_progress_changed(file, c.uid, &t), 0);
	/* Allow for a coarse file system clock. */
	ck_assert_int_ge(t, b - 20);
	ck_assert_int_le(t, b + 5000);
	/* Another uid's: refused. */
	ck_assert_int_eq(watch_progress_changed(file, c.uid + 1, &t), -1);
	ck_assert_int_eq(errno, EPERM);
	/* A link is not followed, a FIFO not opened. */
	snprintf(link, sizeof(link), "%s/plink", tmpdir);
	ck_assert_int_eq(symlink(file, link), 0);
	ck_assert_int_eq(watch_progress_changed(link, c.uid, &t), -1);
	ck_assert_int_eq(errno, ELOOP);
	ck_assert_int_eq(unlink(file), 0);
	ck_assert_int_eq(mkfifo(file, 0666), 0);
	chown_to(file, &c);
	ck_assert_int_eq(watch_progress_changed(file, c.uid, &t), -1);
	ck_assert_int_eq(errno, EINVAL);
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

/* Counts the agent's "a checkpoint to report" calls. */
static void
count_cb(void *arg)
{
	(*(int *)arg)++;
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
	char step4[PATH_MAX + 32], step8[PATH_MAX + 32], text[PATH_MAX + 64];
	const char *nodes[] = { "node01" };
	char *argv[3];
	int fired = 0;
	size_t n;

	snprintf(spool, sizeof(spool), "%s/spool", tmpdir);
	snprintf(ckdir, sizeof(ckdir), "%s/ckpt", tmpdir);
	snprintf(ready, sizeof(ready), "%s/ready", ckdir);
	snprintf(got, sizeof(got), "%s/got-usr1", ckdir);
	make_dirs(spool, ckdir);
	/* A job that writes progress, waits for SIGUSR1, checkpoints and
	 * ends. */
	snprintf(script, sizeof(script),
	    "trap 'touch \"$COHORT_CHECKPOINT_DIR/step-8\" && "
	    "echo 8 1234 > \"$COHORT_CHECKPOINT_DIR/C.tmp\" && "
	    "mv \"$COHORT_CHECKPOINT_DIR/C.tmp\" "
	    "\"$COHORT_CHECKPOINT_DIR/CKPT_MS\" && "
	    "echo 8 \"$COHORT_CHECKPOINT_DIR/step-8\" > "
	    "\"$COHORT_CHECKPOINT_DIR/L.tmp\" && "
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
	l.ckpt_advice_s = 600;

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

	/* LATEST naming a checkpoint that is not there (its write
	 * failed): none yet. Once it is there, it is the checkpoint. */
	snprintf(step4, sizeof(step4), "%s/step-4", ckdir);
	snprintf(step8, sizeof(step8), "%s/step-8", ckdir);
	snprintf(text, sizeof(text), "4 %s\n", step4);
	write_latest(ckdir, text);
	{
		struct watch_cred c;
		char f[PATH_MAX + 32];

		self_setup();
		c = job_cred();
		snprintf(f, sizeof(f), "%s/LATEST", ckdir);
		chown_to(f, &c);
	}
	ck_assert_ptr_null(agent_checkpoints(a, &n));
	write_file(step4, "4\n", 2);
	/* A CKPT_MS that is a symbolic link is not followed: no cost. */
	snprintf(text, sizeof(text), "%s/cost", tmpdir);
	write_file(text, "4 999\n", 6);
	snprintf(script, sizeof(script), "%s/CKPT_MS", ckdir);
	ck_assert_int_eq(symlink(text, script), 0);
	ck_assert_ptr_nonnull(ck = agent_checkpoints(a, &n));
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ck[0].job_id, 42);
	ck_assert_uint_eq(ck[0].restart, 1);
	ck_assert_uint_eq(ck[0].step, 4);
	ck_assert_str_eq(ck[0].path, step4);
	ck_assert_int_gt(ck[0].time_ms, 0);
	ck_assert_uint_eq(ck[0].cost_ms, 0);
	free(ck);
	ck_assert_int_eq(unlink(script), 0);
	/* A CKPT_MS renamed after its LATEST is still read: at the watch's
	 * next look (which calls back, as for a new checkpoint), once; one
	 * naming another step is no cost of this one. */
	agent_set_checkpoint_cb(a, count_cb, &fired);
	write_file(script, "3 100\n", 6);
	{
		struct watch_cred c = job_cred();

		chown_to(script, &c);
		agent_watch_checkpoints(a);
		ck_assert_int_eq(fired, 0);
		snprintf(text, sizeof(text), "%s/C.tmp", ckdir);
		write_file(text, "4 250\n", 6);
		chown_to(text, &c);
		ck_assert_int_eq(rename(text, script), 0);
	}
	agent_watch_checkpoints(a);
	ck_assert_int_eq(fired, 1);
	agent_watch_checkpoints(a);
	ck_assert_int_eq(fired, 1);
	ck_assert_ptr_nonnull(ck = agent_checkpoints(a, &n));
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ck[0].step, 4);
	ck_assert_uint_eq(ck[0].cost_ms, 250);
	free(ck);
	agent_set_checkpoint_cb(a, NULL, NULL);
	ck_assert_int_eq(unlink(script), 0);

	/* The advice file, as the launch wrote it, then replaced while the
	 * start runs (its owner kept); another start's is refused. */
	snprintf(script, sizeof(script), "%s/jobs/42.1/checkpoint-advice",
	    spool);
	{
		char buf[32];
		struct stat st0, st1;
		FILE *f;

		ck_assert_int_eq(lstat(script, &st0), 0);
		ck_assert_int_eq(agent_advise(a, 42, 1, 321), 0);
		ck_assert_int_eq(lstat(script, &st1), 0);
		ck_assert(S_ISREG(st1.st_mode));
		ck_assert_uint_eq(st1.st_uid, st0.st_uid);
		ck_assert_uint_eq(st1.st_mode & 07777, 0400);
		ck_assert_ptr_nonnull(f = fopen(script, "r"));
		ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
		fclose(f);
		ck_assert_str_eq(buf, "321\n");
		ck_assert_int_eq(agent_advise(a, 42, 2, 300), -1);
		ck_assert_int_eq(errno, ENOENT);
		ck_assert_int_eq(agent_advise(a, 42, 1, 0), -1);
		ck_assert_int_eq(errno, EINVAL);
	}
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
	ck_assert_uint_eq(agent_signal(a, 42, 2, NULL, AGENT_SCOPE_ALL, SIGUSR1), 0);
	ck_assert_uint_eq(agent_signal(a, 42, 1, NULL, AGENT_SCOPE_ALL, SIGUSR1), 1);
	run_until_exit(base, &ex);
	ck_assert_int_eq(access(got, F_OK), 0);
	ck_assert(!ex.last.running);
	ck_assert_int_eq(ex.last.wait_status, 0);
	/* The checkpoint written on the signal is still reported after
	 * the end, until the controller has the exit; progress is not. */
	ck_assert_ptr_nonnull(ck = agent_checkpoints(a, &n));
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ck[0].step, 8);
	ck_assert_str_eq(ck[0].path, step8);
	/* CKPT_MS, written before LATEST, says what it took. */
	ck_assert_uint_eq(ck[0].cost_ms, 1234);
	free(ck);
	ck_assert_ptr_null(agent_progress(a, &n));
	/* The start has ended here: no advice for it. */
	ck_assert_int_eq(agent_advise(a, 42, 1, 300), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_uint_eq(agent_signal(a, 42, 1, NULL, AGENT_SCOPE_ALL, SIGUSR1), 0);

	/* A restarted agent adopts the start and still watches it. */
	agent_destroy(a);
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	ck_assert_ptr_nonnull(ck = agent_checkpoints(a, &n));
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ck[0].step, 8);
	free(ck);
	/* A spool an older agent wrote: its "watch" names no user; the
	 * progress file's owner (the agent gave it to the task's account)
	 * says whose files they are. */
	agent_destroy(a);
	snprintf(script, sizeof(script), "%s/jobs/42.1/watch", spool);
	snprintf(text, sizeof(text), "%s\n", ckdir);
	write_file(script, text, strlen(text));
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	ck_assert_ptr_nonnull(ck = agent_checkpoints(a, &n));
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ck[0].step, 8);
	free(ck);
	agent_exit_acked(a, 42, 1, NULL, 0);
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
	agent_exit_acked(a, 43, 1, NULL, 1);
	agent_destroy(a);
	event_base_free(base);
}
END_TEST

/* Advice that reaches the node while its launch waits for its image
 * (no rank started yet) is kept, the latest of it, and is what the
 * advice file holds when the ranks start (here: a runtime that copies
 * the file, in place of runc). */
START_TEST(test_agent_advice_before_start)
{
	struct agent_config cfg;
	struct event_base *base;
	struct agent *a;
	struct exits ex = { 0 };
	struct job_spec spec;
	struct launch l;
	struct cerr err;
	char spool[PATH_MAX + 16], ckdir[PATH_MAX + 16], img[PATH_MAX + 16];
	char rt[PATH_MAX + 16], seen[PATH_MAX + 32], cmd[4 * PATH_MAX];
	char buf[32];
	const char *nodes[] = { "node01" };
	char *argv[] = { "/bin/true" };
	FILE *f;

	snprintf(spool, sizeof(spool), "%s/spool", tmpdir);
	snprintf(ckdir, sizeof(ckdir), "%s/ckpt", tmpdir);
	snprintf(img, sizeof(img), "%s/img.sqsh", tmpdir);
	snprintf(rt, sizeof(rt), "%s/runtime", tmpdir);
	snprintf(seen, sizeof(seen), "%s/seen", ckdir);
	make_dirs(spool, ckdir);
	if (geteuid() != 0 || system("command -v mksquashfs unsquashfs "
	    ">/dev/null") != 0)
		return;		/* images are root's, and need squashfs */
	snprintf(cmd, sizeof(cmd), "mkdir %s/root && mksquashfs %s/root %s "
	    "-quiet -no-progress >/dev/null", tmpdir, tmpdir, img);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "#!/bin/sh\ncat %s/jobs/44.1/"
	    "checkpoint-advice > %s\n", spool, seen);
	write_file(rt, cmd, strlen(cmd));
	ck_assert_int_eq(chmod(rt, 0755), 0);
	memset(&cfg, 0, sizeof(cfg));
	cfg.spool = spool;
	cfg.kill_wait_ms = 1000;
	cfg.ctr_enabled = true;
	cfg.ctr_runtime = rt;
	cfg.ctr_cache_max = (uint64_t)1 << 30;
	cfg.ctr_prepare_timeout_ms = 60000;
	memset(&spec, 0, sizeof(spec));
	spec.name = "advised";
	spec.nodes_min = spec.nodes_max = 1;
	spec.tasks_per_node = 1;
	spec.workdir = ckdir;
	spec.argv = argv;
	spec.argc = 1;
	spec.ctr.image = img;
	memset(&l, 0, sizeof(l));
	l.job_id = 44;
	l.restart = 1;
	l.user = task_user();
	l.spec = &spec;
	l.nodelist = nodes;
	l.nnodes = 1;
	l.master_addr = "127.0.0.1";
	l.master_port = 29500;
	l.ckpt_advice_s = 600;
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	ck_assert_int_eq(agent_advise(a, 44, 1, 77), 0);
	ck_assert_int_eq(agent_advise(a, 44, 1, 88), 0);
	ck_assert_int_eq(agent_advise(a, 44, 2, 99), -1);
	ck_assert_int_eq(errno, ENOENT);
	run_until_exit(base, &ex);
	ck_assert_msg(ex.last.wait_status == 0, "status 0x%x",
	    (unsigned)ex.last.wait_status);
	ck_assert_ptr_nonnull(f = fopen(seen, "r"));
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_str_eq(buf, "88\n");
	agent_exit_acked(a, 44, 1, NULL, 0);
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
	tcase_add_test(tc, test_parse_step);
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
	tcase_add_test(tc, test_read_latest_symlink);
	tcase_add_test(tc, test_read_latest_magic_link);
	tcase_add_test(tc, test_path_reachable);
	tcase_add_test(tc, test_read_latest_wrong_owner);
	tcase_add_test(tc, test_read_as_user);
	tcase_add_test(tc, test_progress_mtime);
	suite_add_tcase(s, tc);

	tc = tcase_create("agent");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_agent_reports);
	tcase_add_test(tc, test_agent_unwatched);
	tcase_add_test(tc, test_agent_advice_before_start);
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
