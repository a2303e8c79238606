/* Starting and watching the tasks of a job on this node: the runtime;
 * the contract and the spool layout are in tasks.h. A start is
 * prepared in the agent (tasks_prep.c), the supervisor forked here runs
 * tasks_child.c, and the records it leaves are read back through
 * tasks_spool.c.
 *
 * The supervisor is the agent's child, so the agent must reap it:
 * tasks_result does so without blocking (through the pidfd, so a reused
 * pid is never waited for; an adopted supervisor is not our child and
 * is left to init). Calling tasks_result once the pidfd is readable is
 * enough. An agent that reaps children elsewhere, e.g. with
 * waitpid(-1), loses nothing: the outcome lives in rank-R.exit. */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/tasks.h"
#include "daemon/agent/tasks_int.h"

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
	if (tasks_prep_fd_high(&p[1]) == -1) {
		cerr_set(err, ERR_INTERNAL, "fcntl: %s", strerror(errno));
		goto fail;
	}
	/* No handler of the agent's may run in the supervisor before it
	 * has reset them all: block everything across the fork. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	if ((sup = fork()) == 0)
		tasks_child_supervise(L, p[1]);
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
		    m.stage == SUP_FORK ? "fork" : m.stage == SUP_CGROUP ?
		    "cannot join the job's cgroup" : m.stage == SUP_CLONE ?
		    "cannot create the task in the job's cgroup" :
		    "cannot write the pid file",
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
tasks_start(const char *spool, const struct task_launch *l, struct task *t,
    struct cerr *err)
{
	struct launch *L;
	size_t i;
	int e;

	cerr_clear(err);
	memset(t, 0, sizeof(*t));
	t->pidfd = t->stdin_fd = -1;
	if (l->argc == 0 && l->script == NULL)
		return cerr_set(err, ERR_INVALID, "no command to run");
	for (i = 0; i < l->argc; i++)
		if (l->argv[i] == NULL)
			return cerr_set(err, ERR_INVALID, "argument %zu is "
			    "missing", i);
	if ((L = tasks_prep_create(spool, l, err)) == NULL)
		return -1;
	/* Records a forgotten earlier run may have left
	 * (tasks_spool_forget drops the pid record first): not this run's
	 * outcome. */
	unlink(L->exit);
	unlink(L->error);
	if (spawn(L, t, err) == -1) {
		e = errno;
		tasks_prep_undo(L);
		tasks_prep_destroy(L);
		memset(t, 0, sizeof(*t));
		t->pidfd = t->stdin_fd = -1;
		errno = e;
		return -1;
	}
	t->job_id = l->job_id;
	t->restart = l->restart;
	t->rank = l->rank;
	t->has_step = l->has_step;
	t->step_id = l->step_id;
	t->bound = L->bind;
	t->cpus = L->cpus;
	memcpy(t->dir, L->dir, sizeof(t->dir));
	/* Ours now: the read end went to the task with the supervisor and
	 * closes with L. */
	t->stdin_fd = L->stdin_wfd;
	t->pty = L->pty;
	L->stdin_wfd = -1;
	tasks_prep_destroy(L);
	return 0;
}

int
tasks_signal(const struct task *t, int sig)
{
	/* A pgid of 0 or 1 would signal our own group or everyone. */
	if (t->pgid <= 1) {
		errno = ESRCH;
		return -1;
	}
	return kill(-t->pgid, sig);
}

bool
tasks_alive(const struct task *t)
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

int
tasks_result(const struct task *t, int *status, char *why, size_t len,
    bool *permanent)
{
	bool perm;

	if (permanent == NULL)
		permanent = &perm;
	*permanent = false;
	if (why != NULL && len > 0)
		why[0] = '\0';
	if (tasks_spool_read_exit(t, status) == 0) {
		if (why != NULL)
			tasks_spool_read_error(t, why, len, permanent);
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
	if (tasks_spool_read_exit(t, status) == 0) {
		if (why != NULL)
			tasks_spool_read_error(t, why, len, permanent);
		return 0;
	}
	/* Killed without a word: report it the way a SIGKILL'd task would
	 * look, so that the caller treats it as killed. */
	*status = SIGKILL;
	errno = EIO;
	return -1;
}
