/* Starting, watching and finding the tasks of a job on this node; the
 * contract and the spool layout are in tasks.h.
 *
 * Process tree: agent -> supervisor -> task. The supervisor starts its
 * own session (so signals to the agent's group or a hang-up of its
 * terminal do not reach it), becomes a child subreaper (so the task's
 * orphans are reaped while it runs instead of piling up as zombies that
 * keep the group "alive"), forks the task into a new process group,
 * records "SUPERVISOR_PID TASK_PGID" in rank-R.pid, tells the agent the
 * task's pid over a pipe, waits for the task and writes its wait status
 * to rank-R.exit. It then exits, so the pidfd the agent holds on it
 * becomes readable exactly when the outcome is on disk.
 *
 * Between fork and exec the children call only async-signal-safe
 * functions: every string, path and vector is prepared before forking,
 * because the agent may have threads (NVML starts some) whose locks a
 * forked child would inherit held.
 *
 * The supervisor is the agent's child, so the agent must reap it:
 * task_result does so without blocking (through the pidfd, so a reused
 * pid is never waited for; an adopted supervisor is not our child and
 * is left to init). Calling task_result once the pidfd is readable is
 * enough. An agent that reaps children elsewhere, e.g. with
 * waitpid(-1), loses nothing: the outcome lives in rank-R.exit.
 *
 * The children run as root only until the task drops to the user; the
 * log is opened and chowned by the agent and inherited, so the user
 * needs no write access to the spool, but must be able to search the
 * spool directory to run a batch script from it (mode 0711 or more). */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/tasks.h"

#define DEFAULT_PATH	"/usr/local/bin:/usr/bin:/bin"
#define SUP_FD		3	/* the supervisor's end of the report pipe */

/* What the supervisor tells the agent once: the task's pid, or the step
 * that failed and its errno. */
enum sup_stage { SUP_OK, SUP_FDS, SUP_FORK, SUP_PIDFILE };
struct sup_msg {
	int stage;
	int err;
	pid_t pid;
};

/* Everything the children need, prepared before the first fork. */
struct launch {
	char dir[PATH_MAX];
	char log[PATH_MAX];
	char pid[PATH_MAX], pidtmp[PATH_MAX];
	char exit[PATH_MAX], exittmp[PATH_MAX];
	char error[PATH_MAX], errortmp[PATH_MAX];
	char script[PATH_MAX], scripttmp[PATH_MAX];
	char *user;		/* for messages; NULL when not root */
	char *workdir;
	const char *name;	/* the command as given, for messages */
	char **cands;		/* paths to try execve on, in order */
	size_t ncands;
	const char **argv;	/* NULL-terminated */
	const char **shargv;	/* "/bin/sh" CAND ARGS..., for ENOEXEC */
	char *const *envp;
	int drop;		/* change to uid/gid/groups */
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	int ngroups;
	int logfd, nullfd;
};

/* ---- async-signal-safe helpers, used in the children ---- */

static int
write_all(int fd, const char *buf, size_t len)
{
	ssize_t w;

	while (len > 0) {
		if ((w = write(fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Decimal of v into buf (at least 24 bytes); returns the length. */
static size_t
fmt_int(char *buf, long long v)
{
	char tmp[24];
	unsigned long long u = v < 0 ? -(unsigned long long)v :
	    (unsigned long long)v;
	size_t n = 0, len = 0;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (v < 0)
		buf[len++] = '-';
	while (n > 0)
		buf[len++] = tmp[--n];
	return len;
}

/* Write buf to tmp (with exactly mode), then rename it over path, so
 * that a reader sees the whole file or none. */
static int
write_atomic(const char *tmp, const char *path, const char *buf, size_t len,
    mode_t mode)
{
	int fd, e;

	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, mode)) == -1)
		return -1;
	if (fchmod(fd, mode) == -1 || write_all(fd, buf, len) == -1 ||
	    close(fd) == -1) {
		e = errno;
		close(fd);
		unlink(tmp);
		errno = e;
		return -1;
	}
	if (rename(tmp, path) == -1) {
		e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

/* The supervisor's end of a close-on-exec pipe: what child_fail says
 * reaches it, and an exec that works closes it with nothing said. */
static int child_why_fd = -1;

static size_t
cat_str(char *buf, size_t at, size_t len, const char *s)
{
	size_t n = strlen(s);

	if (n > len - 1 - at)
		n = len - 1 - at;
	memcpy(buf + at, s, n);
	return at + n;
}

bool
task_failure_permanent(enum task_stage stage, int e)
{
	switch (stage) {
	case TASK_STAGE_USER:
		/* EAGAIN: the user is at RLIMIT_NPROC for now. */
		return e != EAGAIN && e != ENOMEM && e != EINTR;
	case TASK_STAGE_WORKDIR:
		return e == ENOENT || e == ENOTDIR || e == EACCES ||
		    e == ELOOP || e == ENAMETOOLONG || e == EPERM;
	case TASK_STAGE_EXEC:
		return e == ENOENT || e == ENOTDIR || e == EACCES ||
		    e == EPERM || e == ENOEXEC || e == ELOOP ||
		    e == ENAMETOOLONG || e == EISDIR || e == E2BIG ||
		    e == ELIBBAD || e == EINVAL;
	}
	return false;
}

/* "WHAT 'ARG': REASON" on the task's stderr (its log, after "cohort: ")
 * and to the supervisor, which keeps it in rank-R.error for the job's
 * reason, after "P " (permanent) or "T " (may pass); then the shell's
 * exit status for a command that could not be run. The reason is shown
 * to every user: when ARG is private (the command line), it says "WHAT
 * the command: REASON" there, and the log, which only the job's owner
 * and admins read, names it. The message table strerrordesc_np reads is
 * static and untranslated, unlike strerror's, so it is safe here. */
static void __attribute__((noreturn))
child_fail(enum task_stage stage, const char *what, const char *arg,
    bool arg_private, int e)
{
	const char *desc = strerrordesc_np(e);
	char msg[512];
	size_t n = 0, at;

	if (desc == NULL)
		desc = "Unknown error";
	n = cat_str(msg, n, sizeof(msg),
	    task_failure_permanent(stage, e) ? "P " : "T ");
	n = cat_str(msg, n, sizeof(msg), what);
	at = n;
	n = cat_str(msg, n, sizeof(msg), " '");
	n = cat_str(msg, n, sizeof(msg), arg);
	n = cat_str(msg, n, sizeof(msg), "': ");
	n = cat_str(msg, n, sizeof(msg), desc);
	write_all(2, "cohort: ", 8);
	write_all(2, msg + 2, n - 2);
	write_all(2, "\n", 1);
	if (arg_private) {
		n = cat_str(msg, at, sizeof(msg), " the command: ");
		n = cat_str(msg, n, sizeof(msg), desc);
	}
	if (child_why_fd != -1)
		write_all(child_why_fd, msg, n);
	_exit(127);
}

static void
sig_set(int sig, void (*handler)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* Dispositions set to "ignore" survive exec, as does a blocked mask
 * (cleared by the caller): the task must not start with the agent's. */
static void
sig_reset(void)
{
	int sig;

	/* Some fail (SIGKILL, SIGSTOP, libc's own): nothing to reset. */
	for (sig = 1; sig < NSIG; sig++)
		sig_set(sig, SIG_DFL);
}

/* The task: its own group, the target user, the workdir, then exec. */
static void __attribute__((noreturn))
run_task(struct launch *L)
{
	int e = ENOENT, eacces = 0;
	size_t i;

	setpgid(0, 0);
	close(SUP_FD);
	sig_set(SIGPIPE, SIG_DFL);
	sig_set(SIGHUP, SIG_DFL);

	if (L->drop) {
		if (setgroups((size_t)L->ngroups, L->groups) == -1)
			child_fail(TASK_STAGE_USER,
			    "cannot set the groups of user", L->user, false,
			    errno);
		if (setgid(L->gid) == -1)
			child_fail(TASK_STAGE_USER,
			    "cannot set the group of user", L->user, false,
			    errno);
		if (setuid(L->uid) == -1)
			child_fail(TASK_STAGE_USER, "cannot become user",
			    L->user, false, errno);
		/* setuid from root sets every uid; check that none is left
		 * that would let the task take root back. */
		if (setuid(0) != -1 || geteuid() != L->uid ||
		    getuid() != L->uid || getegid() != L->gid)
			child_fail(TASK_STAGE_USER,
			    "cannot drop root privileges for user", L->user,
			    false, EPERM);
	}
	if (chdir(L->workdir) == -1)
		child_fail(TASK_STAGE_WORKDIR, "cannot change directory to",
		    L->workdir, false, errno);

	/* execvp's search, over the PATH of the task's envp rather than
	 * the agent's own, which is what execvpe would use. */
	for (i = 0; i < L->ncands; i++) {
		execve(L->cands[i], (char *const *)L->argv, L->envp);
		switch ((e = errno)) {
		case EACCES:
			eacces = 1;
			/* FALLTHROUGH */
		case ENOENT:
		case ENOTDIR:
		case ESTALE:
		case ENODEV:
		case ETIMEDOUT:
			continue;
		case ENOEXEC:
			/* A script without "#!": run it with the shell. */
			L->shargv[1] = L->cands[i];
			execve("/bin/sh", (char *const *)L->shargv, L->envp);
			e = errno;
			break;
		default:
			break;
		}
		break;
	}
	if (i == L->ncands && eacces)
		e = EACCES;
	/* argv is private data: its name stays in the task's log. */
	child_fail(TASK_STAGE_EXEC, "cannot run", L->name, true, e);
}

static void
sup_report(int stage, int err, pid_t pid)
{
	struct sup_msg m;

	memset(&m, 0, sizeof(m));
	m.stage = stage;
	m.err = err;
	m.pid = pid;
	write_all(SUP_FD, (const char *)&m, sizeof(m));
	close(SUP_FD);
}

static void __attribute__((noreturn))
supervise(struct launch *L, int wfd)
{
	sigset_t none;
	char buf[64], msg[512];
	size_t len;
	ssize_t n;
	pid_t task, w;
	int st, e, why[2];

	setsid();
	sig_reset();
	/* If the agent is gone before the report, the write must fail
	 * rather than kill us with the task already started; a hang-up is
	 * not ours to act on either. run_task restores both. */
	sig_set(SIGPIPE, SIG_IGN);
	sig_set(SIGHUP, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	/* The report pipe at a known place, then stdin from /dev/null and
	 * stdout and stderr to the log, which the task inherits. fd_high
	 * put all three above SUP_FD before the fork. */
	if (dup3(wfd, SUP_FD, O_CLOEXEC) == -1)
		_exit(1);
	if (dup2(L->nullfd, 0) == -1 || dup2(L->logfd, 1) == -1 ||
	    dup2(L->logfd, 2) == -1) {
		sup_report(SUP_FDS, errno, 0);
		_exit(1);
	}
	/* The agent's TLS socket and the rest must not reach the task: no
	 * task without that. */
	if (close_range(SUP_FD + 1, ~0U, 0) == -1) {
		sup_report(SUP_FDS, errno, 0);
		_exit(1);
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

	/* Why the task could not start, if it could not. */
	if (pipe2(why, O_CLOEXEC) == -1)
		why[0] = why[1] = -1;
	child_why_fd = why[1];
	if ((task = fork()) == -1) {
		sup_report(SUP_FORK, errno, 0);
		_exit(1);
	}
	if (task == 0)
		run_task(L);
	if (why[1] != -1)
		close(why[1]);
	/* The task does this too; whichever runs first, the group exists
	 * before anyone is told its id. */
	setpgid(task, task);

	len = fmt_int(buf, getpid());
	buf[len++] = ' ';
	len += fmt_int(buf + len, task);
	buf[len++] = '\n';
	if (write_atomic(L->pidtmp, L->pid, buf, len, 0644) == -1) {
		e = errno;
		kill(-task, SIGKILL);
		kill(task, SIGKILL);
		while (waitpid(task, &st, 0) == -1 && errno == EINTR)
			;
		sup_report(SUP_PIDFILE, e, 0);
		_exit(1);
	}
	sup_report(SUP_OK, 0, task);

	/* Until the exec (the pipe closes) or the child's failure. */
	if (why[0] != -1) {
		len = 0;
		while ((n = read(why[0], msg + len, sizeof(msg) - 1 - len)) > 0 ||
		    (n == -1 && errno == EINTR))
			if (n > 0 && (len += (size_t)n) == sizeof(msg) - 1)
				break;
		close(why[0]);
		if (len > 0)
			write_atomic(L->errortmp, L->error, msg, len, 0644);
	}

	/* As a subreaper we also collect the task's orphans; only the
	 * task's own status is the outcome. */
	for (;;) {
		w = waitpid(-1, &st, 0);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1 || w == task)
			break;
	}
	if (w == task) {
		len = fmt_int(buf, st);
		buf[len++] = '\n';
		write_atomic(L->exittmp, L->exit, buf, len, 0644);
	}
	/* Collect what has already died; live leftovers of the group go to
	 * init, and the agent stops them with the group. */
	while (waitpid(-1, &st, WNOHANG) > 0)
		;
	_exit(0);
}

/* ---- the agent's side ---- */

static void
launch_free(struct launch *L)
{
	size_t i;

	if (L == NULL)
		return;
	if (L->logfd != -1)
		close(L->logfd);
	if (L->nullfd != -1)
		close(L->nullfd);
	for (i = 0; i < L->ncands; i++)
		free(L->cands[i]);
	free(L->cands);
	free(L->argv);
	free(L->shargv);
	free(L->groups);
	free(L->user);
	free(L->workdir);
	free(L);
}

static const char *
envp_get(char *const *envp, const char *key)
{
	size_t klen = strlen(key);

	for (; envp != NULL && *envp != NULL; envp++)
		if (strncmp(*envp, key, klen) == 0 && (*envp)[klen] == '=')
			return *envp + klen + 1;
	return NULL;
}

/* getpwnam_r or getpwuid_r (name NULL) into a growing buffer. 0 with
 * *found NULL when there is no such user, or -1 with errno. */
static int
pw_lookup(const char *name, uid_t uid, struct passwd *pw, char **buf,
    struct passwd **found)
{
	size_t len = 4096;
	char *nb;
	int rc;

	for (;;) {
		if ((nb = realloc(*buf, len)) == NULL)
			return -1;
		*buf = nb;
		rc = name != NULL ? getpwnam_r(name, pw, *buf, len, found) :
		    getpwuid_r(uid, pw, *buf, len, found);
		if (rc != ERANGE)
			break;
		if (len >= (1U << 20)) {
			errno = ERANGE;
			return -1;
		}
		len *= 2;
	}
	/* Some libcs report "no such user" as ENOENT and the like. */
	if (rc != 0 && rc != ENOENT && rc != ESRCH && rc != EBADF &&
	    rc != EPERM) {
		errno = rc;
		return -1;
	}
	if (rc != 0)
		*found = NULL;
	return 0;
}

/* Who the task runs as, and where it starts when no workdir is given. */
static int
resolve_user(struct launch *L, const struct task_launch *l,
    struct cerr *err)
{
	struct passwd pw, *found = NULL;
	const char *home = NULL;
	char *buf = NULL;
	gid_t *g;
	int ng = 16, rc = -1;

	if (geteuid() != 0) {
		/* Not root: run as ourselves; l->user is not ours to use. */
		if (pw_lookup(NULL, geteuid(), &pw, &buf, &found) == 0 &&
		    found != NULL)
			home = pw.pw_dir;
		else
			home = envp_get(l->envp, "HOME");
		goto workdir;
	}
	if (l->user == NULL || l->user[0] == '\0') {
		cerr_set(err, ERR_INVALID, "no user to run the task as");
		goto out;
	}
	if (pw_lookup(l->user, 0, &pw, &buf, &found) == -1) {
		cerr_set(err, ERR_INTERNAL, "cannot look up user '%s': %s",
		    l->user, strerror(errno));
		goto out;
	}
	if (found == NULL) {
		cerr_set(err, ERR_INVALID, "user '%s' does not exist on this "
		    "node", l->user);
		goto out;
	}
	if (pw.pw_uid == 0) {
		cerr_set(err, ERR_DENIED, "refusing to run a task as root "
		    "(user '%s')", l->user);
		goto out;
	}
	for (;;) {
		if ((g = reallocarray(L->groups, (size_t)ng,
		    sizeof(*g))) == NULL) {
			cerr_set(err, ERR_INTERNAL, "out of memory");
			goto out;
		}
		L->groups = g;
		if (getgrouplist(pw.pw_name, pw.pw_gid, L->groups, &ng) != -1)
			break;
		if (ng > 65536) {
			cerr_set(err, ERR_INTERNAL, "user '%s' has too many "
			    "groups", l->user);
			goto out;
		}
	}
	L->ngroups = ng;
	L->drop = 1;
	L->uid = pw.pw_uid;
	L->gid = pw.pw_gid;
	home = pw.pw_dir;
	if ((L->user = strdup(l->user)) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
workdir:
	if (l->workdir != NULL)
		home = l->workdir;
	else if (home == NULL || home[0] == '\0')
		home = "/";
	if ((L->workdir = strdup(home)) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

static int
path_fmt(char *buf, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
path_fmt(char *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static int
start_dir(char *buf, const char *spool, uint64_t job_id, uint32_t restart)
{
	return path_fmt(buf, "%s/jobs/%" PRIu64 ".%" PRIu32, spool, job_id,
	    restart);
}

static int
launch_paths(struct launch *L, const char *spool, const struct task_launch *l)
{
	const char *d = L->dir;
	unsigned r = l->rank;

	if (start_dir(L->dir, spool, l->job_id, l->restart) == -1 ||
	    path_fmt(L->log, "%s/rank-%u.log", d, r) == -1 ||
	    path_fmt(L->pid, "%s/rank-%u.pid", d, r) == -1 ||
	    path_fmt(L->pidtmp, "%s/rank-%u.pid.tmp", d, r) == -1 ||
	    path_fmt(L->exit, "%s/rank-%u.exit", d, r) == -1 ||
	    path_fmt(L->exittmp, "%s/rank-%u.exit.tmp", d, r) == -1 ||
	    path_fmt(L->error, "%s/rank-%u.error", d, r) == -1 ||
	    path_fmt(L->errortmp, "%s/rank-%u.error.tmp", d, r) == -1 ||
	    path_fmt(L->script, "%s/script", d) == -1 ||
	    path_fmt(L->scripttmp, "%s/script.tmp.%u", d, r) == -1)
		return -1;
	return 0;
}

static int
cand_add(struct launch *L, const char *dir, size_t dlen, const char *file)
{
	char **nc, *c;

	if (dlen == 0)
		c = strdup(file);	/* an empty PATH entry: the workdir */
	else if (asprintf(&c, "%.*s/%s", (int)dlen, dir, file) == -1)
		c = NULL;
	if (c == NULL)
		return -1;
	if ((nc = reallocarray(L->cands, L->ncands + 1, sizeof(*nc))) ==
	    NULL) {
		free(c);
		return -1;
	}
	nc[L->ncands++] = c;
	L->cands = nc;
	return 0;
}

/* The argv and the list of paths execve will try. */
static int
launch_exec(struct launch *L, const struct task_launch *l)
{
	const char *file, *path, *p, *colon;
	size_t n, i, j = 0;

	n = l->argc + (l->script != NULL ? 1 : 0);
	if ((L->argv = calloc(n + 1, sizeof(*L->argv))) == NULL ||
	    (L->shargv = calloc(n + 2, sizeof(*L->shargv))) == NULL)
		return -1;
	if (l->script != NULL)
		L->argv[j++] = L->script;
	for (i = 0; i < l->argc; i++)
		L->argv[j++] = l->argv[i];
	L->shargv[0] = "/bin/sh";
	for (i = 1; i < n; i++)
		L->shargv[i + 1] = L->argv[i];

	file = L->name = L->argv[0];
	if (file[0] == '\0')
		return 0;	/* no candidate: ENOENT, as execvp says */
	if (strchr(file, '/') != NULL)
		return cand_add(L, NULL, 0, file);
	if ((path = envp_get(L->envp, "PATH")) == NULL)
		path = DEFAULT_PATH;
	for (p = path;; p = colon + 1) {
		colon = strchrnul(p, ':');
		if (cand_add(L, p, (size_t)(colon - p), file) == -1)
			return -1;
		if (*colon == '\0')
			break;
	}
	return 0;
}

/* mkdir that accepts an existing directory; a new one gets exactly mode,
 * whatever the umask, because the task user must be able to reach its
 * script through it. *made says whether it is new. */
static int
mkdir_mode(const char *path, mode_t mode, int *made)
{
	*made = 0;
	if (mkdir(path, mode) == -1)
		return errno == EEXIST ? 0 : -1;
	*made = 1;
	return chmod(path, mode);
}

/* The batch script, once per start directory: ranks sharing it find it
 * there already. Written under a per-rank name and renamed, so that no
 * rank ever runs half a script; readable by all, as the task user must
 * run it. */
static int
write_script(struct launch *L, const struct task_launch *l, int *made)
{
	*made = 0;
	if (access(L->script, F_OK) == 0)
		return 0;
	if (write_atomic(L->scripttmp, L->script, l->script, l->script_len,
	    0755) == -1)
		return -1;
	*made = 1;
	return 0;
}

/* Move fd above the standard descriptors, so that the supervisor's dup2
 * onto 0-2 cannot overwrite one it still needs. */
static int
fd_high(int *fd)
{
	int nfd;

	if (*fd > SUP_FD)
		return 0;
	if ((nfd = fcntl(*fd, F_DUPFD_CLOEXEC, SUP_FD + 1)) == -1)
		return -1;
	close(*fd);
	*fd = nfd;
	return 0;
}

static int
open_fds(struct launch *L)
{
	if ((L->nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1 ||
	    fd_high(&L->nullfd) == -1)
		return -1;
	if ((L->logfd = open(L->log, O_WRONLY | O_CREAT | O_APPEND |
	    O_CLOEXEC | O_NOFOLLOW, 0640)) == -1 || fd_high(&L->logfd) == -1)
		return -1;
	/* The task writes to it only through the inherited fd, but the
	 * user should be able to read their own log. */
	if (fchmod(L->logfd, 0640) == -1 ||
	    (L->drop && fchown(L->logfd, L->uid, L->gid) == -1))
		return -1;
	return 0;
}

/* Fork the supervisor and read its report. 0 with t's pids set. */
static int
spawn(struct launch *L, struct task *t, struct cerr *err)
{
	struct sup_msg m;
	sigset_t all, old;
	size_t got = 0;
	ssize_t r;
	pid_t sup;
	int p[2], st, e;

	if (pipe2(p, O_CLOEXEC) == -1)
		return cerr_set(err, ERR_INTERNAL, "pipe: %s",
		    strerror(errno));
	if (fd_high(&p[1]) == -1) {
		cerr_set(err, ERR_INTERNAL, "fcntl: %s", strerror(errno));
		goto fail;
	}
	/* No handler of the agent's may run in the supervisor before it
	 * has reset them all: block everything across the fork. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	if ((sup = fork()) == 0)
		supervise(L, p[1]);
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (sup == -1) {
		cerr_set(err, ERR_INTERNAL, "fork: %s", strerror(e));
		goto fail;
	}
	close(p[1]);
	p[1] = -1;

	/* Blocks for a fork and a small file write in the supervisor. */
	while (got < sizeof(m)) {
		r = read(p[0], (char *)&m + got, sizeof(m) - got);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(p[0]);
	p[0] = -1;
	if (got < sizeof(m) || m.stage != SUP_OK) {
		while (waitpid(sup, &st, 0) == -1 && errno == EINTR)
			;
		if (got < sizeof(m))
			return cerr_set(err, ERR_INTERNAL,
			    "the task supervisor died before starting it");
		return cerr_set(err, ERR_INTERNAL, "%s: %s",
		    m.stage == SUP_FDS ? "cannot set up the task's fds" :
		    m.stage == SUP_FORK ? "fork" : "cannot write the pid file",
		    strerror(m.err));
	}
	t->supervisor = sup;
	t->pgid = m.pid;
	/* Opened while the supervisor is our unreaped child, so the pidfd
	 * names it even if it has already exited. */
	t->pidfd = pidfd_open(sup, 0);
	return 0;
fail:
	close(p[0]);
	if (p[1] != -1)
		close(p[1]);
	return -1;
}

int
task_start(const char *spool, const struct task_launch *l, struct task *t,
    struct cerr *err)
{
	struct launch *L;
	char jobs[PATH_MAX];
	size_t i;
	int made_jobs, made_dir = 0, made_script = 0, files = 0, e;

	cerr_clear(err);
	memset(t, 0, sizeof(*t));
	t->pidfd = -1;
	if (l->argc == 0 && l->script == NULL)
		return cerr_set(err, ERR_INVALID, "no command to run");
	for (i = 0; i < l->argc; i++)
		if (l->argv[i] == NULL)
			return cerr_set(err, ERR_INVALID, "argument %zu is "
			    "missing", i);
	if ((L = calloc(1, sizeof(*L))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	L->logfd = L->nullfd = -1;
	L->envp = l->envp;

	if (resolve_user(L, l, err) == -1)
		goto fail;
	if (launch_paths(L, spool, l) == -1 ||
	    path_fmt(jobs, "%s/jobs", spool) == -1) {
		cerr_set(err, ERR_INVALID, "spool path too long");
		goto fail;
	}
	if (launch_exec(L, l) == -1) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	/* A pid file means this rank of this start already ran: starting
	 * it again would run the task twice. */
	if (access(L->pid, F_OK) == 0) {
		cerr_set(err, ERR_CONFLICT, "rank %u of job %" PRIu64
		    " (start %" PRIu32 ") is already started on this node",
		    l->rank, l->job_id, l->restart);
		goto fail;
	}
	if (mkdir_mode(jobs, 0755, &made_jobs) == -1 ||
	    mkdir_mode(L->dir, 0755, &made_dir) == -1) {
		cerr_set(err, ERR_INTERNAL, "cannot create %s: %s", L->dir,
		    strerror(errno));
		goto fail;
	}
	files = 1;
	if (l->script != NULL && write_script(L, l, &made_script) == -1) {
		cerr_set(err, ERR_INTERNAL, "cannot write %s: %s", L->script,
		    strerror(errno));
		goto fail;
	}
	if (open_fds(L) == -1) {
		cerr_set(err, ERR_INTERNAL, "cannot open %s: %s", L->log,
		    strerror(errno));
		goto fail;
	}
	/* Records a forgotten earlier run may have left (task_forget drops
	 * the pid record first): not this run's outcome. */
	unlink(L->exit);
	unlink(L->error);
	if (spawn(L, t, err) == -1)
		goto fail;

	t->job_id = l->job_id;
	t->restart = l->restart;
	t->rank = l->rank;
	memcpy(t->dir, L->dir, sizeof(t->dir));
	launch_free(L);
	return 0;
fail:
	e = errno;
	if (files) {
		unlink(L->log);
		unlink(L->pid);
		unlink(L->pidtmp);
		unlink(L->exit);
		unlink(L->exittmp);
		unlink(L->error);
		unlink(L->errortmp);
		if (made_script)
			unlink(L->script);
		if (made_dir)
			rmdir(L->dir);
	}
	launch_free(L);
	memset(t, 0, sizeof(*t));
	t->pidfd = -1;
	errno = e;
	return -1;
}

int
task_signal(const struct task *t, int sig)
{
	/* A pgid of 0 or 1 would signal our own group or everyone. */
	if (t->pgid <= 1) {
		errno = ESRCH;
		return -1;
	}
	return kill(-t->pgid, sig);
}

bool
task_alive(const struct task *t)
{
	if (t->pgid <= 1)
		return false;
	return kill(-t->pgid, 0) == 0 || errno == EPERM;
}

/* Reap the supervisor if it is our child and has ended, waiting up to
 * wait_ms for it to end. Through the pidfd when there is one, as a pid
 * may have been reused since; an adopted supervisor is not our child and
 * waitid says ECHILD. */
static void
reap(const struct task *t, int wait_ms)
{
	struct pollfd pfd;
	siginfo_t si;
	int st;

	if (t->pidfd >= 0) {
		pfd.fd = t->pidfd;
		pfd.events = POLLIN;
		if (wait_ms > 0)
			poll(&pfd, 1, wait_ms);
		waitid(P_PIDFD, (id_t)t->pidfd, &si, WEXITED | WNOHANG);
	} else if (t->supervisor > 1)
		waitpid(t->supervisor, &st, WNOHANG);
}

/* Whether the supervisor has ended (and reap it). */
static bool
supervisor_gone(const struct task *t)
{
	struct pollfd pfd;
	int st;

	if (t->pidfd >= 0) {
		reap(t, 0);
		pfd.fd = t->pidfd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		return poll(&pfd, 1, 0) > 0;
	}
	if (t->supervisor <= 1 ||
	    waitpid(t->supervisor, &st, WNOHANG) == t->supervisor)
		return true;
	/* Without a pidfd the pid may have been reused; a supervisor leads
	 * its own session, which a stranger with that pid rarely does. */
	return getsid(t->supervisor) != t->supervisor;
}

/* The wait status in rank-R.exit: 0, or -1 with errno (ENOENT: none). */
static int
read_exit(const struct task *t, int *status)
{
	char path[PATH_MAX], buf[32], *end;
	ssize_t n;
	long v;
	int fd;

	if (path_fmt(path, "%s/rank-%u.exit", t->dir, t->rank) == -1)
		return -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		errno = EIO;
		return -1;
	}
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno != 0 || end == buf || (*end != '\n' && *end != '\0') ||
	    v < INT_MIN || v > INT_MAX) {
		errno = EIO;
		return -1;
	}
	*status = (int)v;
	return 0;
}

/* Why the task could not start (rank-R.error), or "" when it started or
 * there is no record; *permanent from its "P " or "T " (a record without
 * either, from an older agent, is not permanent). */
static void
read_error(const struct task *t, char *why, size_t len, bool *permanent)
{
	char path[PATH_MAX], buf[600];
	const char *msg = buf;
	ssize_t n;
	int fd;

	*permanent = false;
	if (why != NULL && len > 0)
		why[0] = '\0';
	if (path_fmt(path, "%s/rank-%u.error", t->dir, t->rank) == -1 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if ((buf[0] == 'P' || buf[0] == 'T') && buf[1] == ' ') {
		*permanent = buf[0] == 'P';
		msg = buf + 2;
	}
	if (why != NULL && len > 0)
		snprintf(why, len, "%s", msg);
}

int
task_result(const struct task *t, int *status, char *why, size_t len,
    bool *permanent)
{
	bool perm;

	if (permanent == NULL)
		permanent = &perm;
	*permanent = false;
	if (why != NULL && len > 0)
		why[0] = '\0';
	if (read_exit(t, status) == 0) {
		if (why != NULL)
			read_error(t, why, len, permanent);
		/* The supervisor exits right after writing it: reap it now
		 * rather than leave a zombie until the next call. */
		reap(t, 100);
		return 0;
	}
	if (errno != ENOENT)
		return -1;
	if (!supervisor_gone(t)) {
		errno = ENOENT;
		return -1;
	}
	/* It may have written the file just before we looked at it. */
	if (read_exit(t, status) == 0) {
		if (why != NULL)
			read_error(t, why, len, permanent);
		return 0;
	}
	/* Killed without a word: report it the way a SIGKILL'd task would
	 * look, so that the caller treats it as killed. */
	*status = SIGKILL;
	errno = EIO;
	return -1;
}

int
task_forget(const struct task *t)
{
	char path[PATH_MAX];

	/* The pid record goes first: without it adoption skips the rank
	 * (and task_start removes what is left of the others). */
	if (path_fmt(path, "%s/rank-%u.pid", t->dir, t->rank) == -1 ||
	    (unlink(path) == -1 && errno != ENOENT))
		return -1;
	if (path_fmt(path, "%s/rank-%u.exit", t->dir, t->rank) == -1 ||
	    (unlink(path) == -1 && errno != ENOENT))
		return -1;
	if (path_fmt(path, "%s/rank-%u.error", t->dir, t->rank) == -1 ||
	    (unlink(path) == -1 && errno != ENOENT))
		return -1;
	return 0;
}

/* The "SUPERVISOR_PID TASK_PGID" of rank-R.pid. */
static int
read_pids(const char *path, pid_t *sup, pid_t *pgid)
{
	char buf[64];
	ssize_t n;
	int fd, a, b;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%d %d", &a, &b) != 2 || a <= 1 || b <= 1)
		return -1;
	*sup = a;
	*pgid = b;
	return 0;
}

/* Every rank-R.pid of one start directory. */
static int
adopt_dir(const char *jobs, const char *name, uint64_t job_id,
    uint32_t restart, int (*cb)(struct task *, void *), void *arg,
    struct cerr *err)
{
	struct dirent *de;
	struct task t;
	char path[PATH_MAX];
	unsigned rank;
	DIR *d;
	int rc = 0, st, end;

	memset(&t, 0, sizeof(t));
	if (path_fmt(t.dir, "%s/%s", jobs, name) == -1)
		return 0;
	if ((d = opendir(t.dir)) == NULL)
		return errno == ENOENT || errno == ENOTDIR ? 0 :
		    cerr_set(err, ERR_INTERNAL, "cannot read %s: %s", t.dir,
		    strerror(errno));
	while (rc == 0 && (de = readdir(d)) != NULL) {
		end = 0;
		if (sscanf(de->d_name, "rank-%u.pid%n", &rank, &end) != 1 ||
		    end == 0 || de->d_name[end] != '\0')
			continue;
		if (path_fmt(path, "%s/%s", t.dir, de->d_name) == -1 ||
		    read_pids(path, &t.supervisor, &t.pgid) == -1)
			continue;	/* not a record we wrote */
		t.job_id = job_id;
		t.restart = restart;
		t.rank = rank;
		t.pidfd = -1;
		/* An ended task's pids may belong to strangers by now. */
		if (read_exit(&t, &st) == -1 && errno == ENOENT &&
		    (t.pidfd = pidfd_open(t.supervisor, 0)) != -1 &&
		    getsid(t.supervisor) != t.supervisor) {
			close(t.pidfd);
			t.pidfd = -1;
		}
		if (cb(&t, arg) != 0)
			rc = cerr_set(err, ERR_INTERNAL, "adopting rank %u of "
			    "job %" PRIu64 " failed", t.rank, job_id);
	}
	closedir(d);
	return rc;
}

int
tasks_adopt(const char *spool, int (*cb)(struct task *t, void *arg),
    void *arg, struct cerr *err)
{
	char jobs[PATH_MAX];
	struct dirent *de;
	uint64_t job_id;
	uint32_t restart;
	DIR *d;
	int rc = 0, end;

	cerr_clear(err);
	if (path_fmt(jobs, "%s/jobs", spool) == -1)
		return cerr_set(err, ERR_INVALID, "spool path too long");
	if ((d = opendir(jobs)) == NULL) {
		if (errno == ENOENT)
			return 0;	/* nothing ever started here */
		return cerr_set(err, ERR_INTERNAL, "cannot read %s: %s", jobs,
		    strerror(errno));
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		/* Only start directories, as start_dir names them. */
		end = 0;
		if (sscanf(de->d_name, "%" SCNu64 ".%" SCNu32 "%n", &job_id,
		    &restart, &end) != 2 || de->d_name[end] != '\0' ||
		    !isdigit((unsigned char)de->d_name[0]))
			continue;
		rc = adopt_dir(jobs, de->d_name, job_id, restart, cb, arg,
		    err);
	}
	closedir(d);
	return rc;
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path) == -1 && errno != ENOENT ? -1 : 0;
}

int
tasks_remove(const char *spool, uint64_t job_id, uint32_t restart)
{
	char dir[PATH_MAX];
	struct stat sb;

	if (start_dir(dir, spool, job_id, restart) == -1)
		return -1;
	if (lstat(dir, &sb) == -1)
		return errno == ENOENT ? 0 : -1;
	/* Depth first, without following links a task may have left. */
	return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

int
task_log_path(const char *spool, uint64_t job_id, uint32_t restart,
    unsigned rank, char *buf, size_t len)
{
	int n;

	n = snprintf(buf, len, "%s/jobs/%" PRIu64 ".%" PRIu32 "/rank-%u.log",
	    spool, job_id, restart, rank);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}
