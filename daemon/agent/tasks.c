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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/tasks.h"
#include "daemon/agent/tasks_int.h"

/* A start whose supervisor has been forked and has not reported yet. */
struct task_spawn {
	struct launch *L;
	pid_t sup;
	int fd;				/* the report pipe's read end */
	size_t got;			/* of m */
	struct sup_msg m;
	/* What tasks_start copies into its struct task. */
	uint64_t job_id;
	uint32_t restart;
	unsigned rank;
	bool has_step;
	uint32_t step_id;
};

/* Fork the supervisor: 0 with s->sup and s->fd set. Its report is read
 * by tasks_spawn_finish. */
static int
spawn(struct task_spawn *s, struct cerr *err)
{
	sigset_t all, old;
	pid_t sup;
	int p[2], e;

	/* Non-blocking, so that the agent's loop reads the report when it
	 * is there rather than wait for it; the supervisor's 12-byte write
	 * into an empty pipe never blocks either way. */
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == -1)
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
		tasks_child_supervise(s->L, p[1]);
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (sup == -1) {
		cerr_set(err, ERR_INTERNAL, "fork: %s", strerror(e));
		goto fail;
	}
	close(p[1]);
	s->sup = sup;
	s->fd = p[0];
	return 0;
fail:
	close(p[0]);
	if (p[1] != -1)
		close(p[1]);
	return -1;
}

/* Read what there is of the report: 1 while more may come (only when
 * wait is false), else 0 (whole, or the pipe closed or failed short). */
static int
report_read(struct task_spawn *s, bool wait)
{
	struct pollfd pfd;
	ssize_t r;

	while (s->got < sizeof(s->m)) {
		r = read(s->fd, (char *)&s->m + s->got,
		    sizeof(s->m) - s->got);
		if (r > 0) {
			s->got += (size_t)r;
			continue;
		}
		if (r == 0 || (errno != EINTR && errno != EAGAIN))
			break;
		if (errno == EAGAIN && !wait)
			return 1;
		if (errno == EAGAIN) {
			pfd.fd = s->fd;
			pfd.events = POLLIN;
			poll(&pfd, 1, -1);
		}
	}
	return 0;
}

/* The error tasks_start gives for a report that is not SUP_OK, the
 * supervisor reaped. */
static int
report_error(struct task_spawn *s, struct cerr *err)
{
	int st;

	while (waitpid(s->sup, &st, 0) == -1 && errno == EINTR)
		;
	if (s->got < sizeof(s->m))
		return cerr_set(err, ERR_INTERNAL,
		    "the task supervisor died before starting it");
	return cerr_set(err, ERR_INTERNAL, "%s: %s",
	    s->m.stage == SUP_FDS ? "cannot set up the task's fds" :
	    s->m.stage == SUP_FORK ? "fork" : s->m.stage == SUP_CGROUP ?
	    "cannot join the job's cgroup" : s->m.stage == SUP_CLONE ?
	    "cannot create the task in the job's cgroup" :
	    "cannot write the pid file",
	    strerror(s->m.err));
}

static void
spawn_free(struct task_spawn *s)
{
	if (s->fd != -1)
		close(s->fd);
	tasks_prep_destroy(s->L);
	free(s);
}

struct task_spawn *
tasks_spawn(const char *spool, const struct task_launch *l, struct cerr *err)
{
	struct task_spawn *s;
	size_t i;
	int e;

	cerr_clear(err);
	if (l->argc == 0 && l->script == NULL) {
		cerr_set(err, ERR_INVALID, "no command to run");
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < l->argc; i++)
		if (l->argv[i] == NULL) {
			cerr_set(err, ERR_INVALID, "argument %zu is missing",
			    i);
			errno = EINVAL;
			return NULL;
		}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	s->fd = -1;
	s->job_id = l->job_id;
	s->restart = l->restart;
	s->rank = l->rank;
	s->has_step = l->has_step;
	s->step_id = l->step_id;
	if ((s->L = tasks_prep_create(spool, l, err)) == NULL) {
		e = errno;
		free(s);
		errno = e;
		return NULL;
	}
	/* Records a forgotten earlier run may have left
	 * (tasks_spool_forget drops the pid record first): not this run's
	 * outcome. */
	unlink(s->L->exit);
	unlink(s->L->error);
	if (spawn(s, err) == -1) {
		e = errno;
		tasks_prep_undo(s->L);
		spawn_free(s);
		errno = e;
		return NULL;
	}
	return s;
}

int
tasks_spawn_fd(const struct task_spawn *s)
{
	return s->fd;
}

int
tasks_spawn_finish(struct task_spawn *s, bool wait, struct task *t,
    struct cerr *err)
{
	struct launch *L = s->L;
	int e;

	cerr_clear(err);
	if (report_read(s, wait) == 1)
		return 1;
	memset(t, 0, sizeof(*t));
	t->pidfd = t->stdin_fd = -1;
	if (s->got < sizeof(s->m) || s->m.stage != SUP_OK) {
		report_error(s, err);
		e = errno;
		tasks_prep_undo(L);
		spawn_free(s);
		errno = e;
		return -1;
	}
	t->supervisor = s->sup;
	t->pgid = s->m.pid;
	/* Opened while the supervisor is our unreaped child, so the pidfd
	 * names it even if it has already exited. */
	t->pidfd = pidfd_open(s->sup, 0);
	t->job_id = s->job_id;
	t->restart = s->restart;
	t->rank = s->rank;
	t->has_step = s->has_step;
	t->step_id = s->step_id;
	t->bound = L->bind;
	t->cpus = L->cpus;
	memcpy(t->dir, L->dir, sizeof(t->dir));
	/* Ours now: the read end went to the task with the supervisor and
	 * closes with L. */
	t->stdin_fd = L->stdin_wfd;
	t->pty = L->pty;
	L->stdin_wfd = -1;
	spawn_free(s);
	return 0;
}

int
tasks_start(const char *spool, const struct task_launch *l, struct task *t,
    struct cerr *err)
{
	struct task_spawn *s;

	memset(t, 0, sizeof(*t));
	t->pidfd = t->stdin_fd = -1;
	if ((s = tasks_spawn(spool, l, err)) == NULL)
		return -1;
	return tasks_spawn_finish(s, true, t, err);
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
