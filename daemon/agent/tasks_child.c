/* The supervisor and the task between fork and exec (tasks_int.h).
 *
 * ASYNC-SIGNAL-SAFE ONLY. Everything in this file runs in a child forked
 * from the agent, which may have threads (NVML starts some) whose locks
 * the child inherits held: no malloc, no stdio, no logging, no locale,
 * nothing that may take a lock. Every string, path and vector the
 * children need is prepared before the fork (tasks_prep.c). The only
 * functions this file may call are listed in tests/unit/tasks_child.allow
 * and in docs/design/agent.md ("Tasks: the async-signal-safe child
 * side"); tests/unit/tasks-child-safe.sh fails the build's tests when the
 * object calls anything else, so add nothing here that is not on
 * signal-safety(7)'s list (or a raw system call wrapper, said why there).
 *
 * Process tree: agent -> supervisor -> task. The supervisor starts its
 * own session (so signals to the agent's group or a hang-up of its
 * terminal do not reach it), becomes a child subreaper (so the task's
 * orphans are reaped while it runs instead of piling up as zombies that
 * keep the group "alive"), forks the task into a new process group (with
 * a cgroup: clones it into its cgroup, or where the kernel cannot, joins
 * that cgroup first and forks),
 * records "SUPERVISOR_PID TASK_PGID" in rank-R.pid, tells the agent the
 * task's pid over a pipe, waits for the task and writes its wait status
 * to rank-R.exit. It then exits, so the pidfd the agent holds on it
 * becomes readable exactly when the outcome is on disk. */
#include "config.h"

#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>		/* rename only: no stdio here */
#include <string.h>
#include <unistd.h>

#include "daemon/agent/cgroup.h"
#include "daemon/agent/tasks_int.h"

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

int
tasks_child_write_atomic(const char *tmp, const char *path, const char *buf,
    size_t len, mode_t mode, uid_t uid, gid_t gid)
{
	int fd, e;

	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, mode)) == -1)
		return -1;
	if (fchown(fd, uid, gid) == -1 || fchmod(fd, mode) == -1 ||
	    write_all(fd, buf, len) == -1 ||
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
tasks_child_failure_permanent(enum task_stage stage, int e)
{
	switch (stage) {
	case TASK_STAGE_USER:
		/* EAGAIN: the user is at RLIMIT_NPROC for now. */
		return e != EAGAIN && e != ENOMEM && e != EINTR;
	case TASK_STAGE_WORKDIR:
		return e == ENOENT || e == ENOTDIR || e == EACCES ||
		    e == ELOOP || e == ENAMETOOLONG || e == EPERM;
	case TASK_STAGE_OUTPUT:
		/* The file cannot be made as given (no such directory, not
		 * the user's to write, a directory): permanent. Out of
		 * descriptors, memory, space or quota may pass. */
		return e != EINTR && e != ENOMEM && e != EMFILE &&
		    e != ENFILE && e != ENOSPC && e != EDQUOT && e != EIO &&
		    e != EAGAIN && e != ETXTBSY;
	case TASK_STAGE_CPUS:
		/* The cores may be offline here for now. */
		return false;
	case TASK_STAGE_IMAGE:
		/* The node's mounts and runtime, not the job's request:
		 * what the image itself lacks was said before the start
		 * (child_fail_why). */
		return false;
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
 * to every user: when ARG is private (the command line, a path of the
 * user's), SHOWN stands for it there ("WHAT SHOWN: REASON"), and the
 * log, which only the job's owner and admins read, names it. The message table strerrordesc_np reads is
 * static and untranslated, unlike strerror's, so it is safe here. */
static void __attribute__((noreturn))
child_fail(enum task_stage stage, const char *what, const char *arg,
    const char *shown, int e)
{
	const char *desc = strerrordesc_np(e);
	char msg[512];
	size_t n = 0, at;

	if (desc == NULL)
		desc = "Unknown error";
	n = cat_str(msg, n, sizeof(msg),
	    tasks_child_failure_permanent(stage, e) ? "P " : "T ");
	n = cat_str(msg, n, sizeof(msg), what);
	at = n;
	n = cat_str(msg, n, sizeof(msg), " '");
	n = cat_str(msg, n, sizeof(msg), arg);
	n = cat_str(msg, n, sizeof(msg), "': ");
	n = cat_str(msg, n, sizeof(msg), desc);
	write_all(2, "cohort: ", 8);
	write_all(2, msg + 2, n - 2);
	write_all(2, "\n", 1);
	if (shown != NULL) {
		n = cat_str(msg, at, sizeof(msg), " ");
		n = cat_str(msg, n, sizeof(msg), shown);
		n = cat_str(msg, n, sizeof(msg), ": ");
		n = cat_str(msg, n, sizeof(msg), desc);
	}
	if (child_why_fd != -1)
		write_all(child_why_fd, msg, n);
	_exit(127);
}

/* A reason prepared before the fork (the container image's), said as
 * child_fail says its own. */
static void __attribute__((noreturn))
child_fail_why(bool permanent, const char *why)
{
	char msg[600];
	size_t n;

	n = cat_str(msg, 0, sizeof(msg), permanent ? "P " : "T ");
	n = cat_str(msg, n, sizeof(msg), why);
	write_all(2, "cohort: ", 8);
	write_all(2, msg + 2, n - 2);
	write_all(2, "\n", 1);
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

/* Open path for the task (as its user, in its workdir) onto fd to, which
 * 1 or 2 held the spool's log. The spool's stderr stays on 2 until its
 * own file is open, so a failure here is told there. */
/* Paths are private data, as the working directory is. */
#define PRIVATE_PATH "(its path is in the task's log)"

static void
open_output(const char *path, bool trunc, int to)
{
	int fd, flags = O_WRONLY | O_CREAT | O_APPEND | O_NOCTTY | O_CLOEXEC;

	if (trunc)
		flags |= O_TRUNC;
	if ((fd = open(path, flags, 0644)) == -1)
		child_fail(TASK_STAGE_OUTPUT, to == 1 ? "cannot open the "
		    "output file" : "cannot open the error file", path,
		    PRIVATE_PATH, errno);
	if (dup2(fd, to) == -1)
		child_fail(TASK_STAGE_OUTPUT, "cannot use the output file",
		    path, PRIVATE_PATH, errno);
	close(fd);
}

/* A task on a pseudo-terminal: a session of its own, whose controlling
 * terminal it is, on its stdin, stdout and stderr (the supervisor keeps
 * the master on fd 0, which this replaces). Opened while still root;
 * then the user's, as a login's terminal is. */
static void
open_terminal(struct launch *L)
{
	int fd;

	setsid();
	if ((fd = open(L->ptsname, O_RDWR | O_CLOEXEC)) == -1)
		child_fail(TASK_STAGE_OUTPUT, "cannot open the terminal",
		    L->ptsname, NULL, errno);
	if (ioctl(fd, TIOCSCTTY, 0) == -1)
		child_fail(TASK_STAGE_OUTPUT, "cannot take the terminal",
		    L->ptsname, NULL, errno);
	if (L->drop && fchown(fd, L->uid, (gid_t)-1) == -1)
		child_fail(TASK_STAGE_OUTPUT, "cannot give the terminal to",
		    L->user, NULL, errno);
	if (dup2(fd, 0) == -1 || dup2(fd, 1) == -1 || dup2(fd, 2) == -1)
		child_fail(TASK_STAGE_OUTPUT, "cannot use the terminal",
		    L->ptsname, NULL, errno);
	close(fd);
}

static void open_outputs(struct launch *L);

/* A task in a container image (container.h): the user's own steps as
 * the user (the workdir, the output files), with root kept as the real
 * and saved uid; then, root again, the image's lock held shared, the
 * overlay mounted in a mount namespace of the task's own (it goes when
 * the task does), and the runtime exec'd, which runs the command as the
 * user with no privileges. */
static void __attribute__((noreturn))
run_container(struct launch *L)
{
	static char *const env[] = { "PATH=/usr/local/sbin:/usr/local/bin:"
	    "/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	int fd;

	if (L->ctr_err != 0)
		child_fail_why(L->ctr_permanent, L->ctr_why);
	if (L->drop && (setgroups((size_t)L->ngroups, L->groups) == -1 ||
	    setresgid((gid_t)-1, L->gid, (gid_t)-1) == -1 ||
	    setresuid((uid_t)-1, L->uid, (uid_t)-1) == -1))
		child_fail(TASK_STAGE_USER, "cannot become user", L->user,
		    NULL, errno);
	if (chdir(L->workdir) == -1)
		child_fail(TASK_STAGE_WORKDIR, "cannot change directory to",
		    L->workdir, "the working directory", errno);
	umask(L->umask);
	open_outputs(L);
	if (L->drop && (setresuid((uid_t)-1, 0, (uid_t)-1) == -1 ||
	    setresgid((gid_t)-1, 0, (gid_t)-1) == -1 ||
	    setgroups(0, NULL) == -1))
		child_fail(TASK_STAGE_USER, "cannot return to root from user",
		    L->user, NULL, errno);
	/* Kept over the exec: the runtime holds it while the container
	 * lives, so that the cache does not evict the image under it. */
	if ((fd = open(L->ctr_lock, O_RDONLY)) == -1 ||
	    flock(fd, LOCK_SH | LOCK_NB) == -1)
		child_fail(TASK_STAGE_IMAGE, "cannot hold the cached image of",
		    L->ctr_image, NULL, errno);
	if (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		child_fail(TASK_STAGE_IMAGE, "cannot make a mount namespace "
		    "for the image", L->ctr_image, NULL, errno);
	if (mount("overlay", L->ctr_root, "overlay", 0, L->ctr_overlay) == -1)
		child_fail(TASK_STAGE_IMAGE, "cannot mount the image",
		    L->ctr_image, NULL, errno);
	execve(L->ctr_runtime, (char *const *)L->ctr_argv, env);
	child_fail(TASK_STAGE_IMAGE, "cannot run the container runtime",
	    L->ctr_runtime, NULL, errno);
}

/* A container task's output files, as run_task opens them: as the user,
 * relative to the workdir. */
static void
open_outputs(struct launch *L)
{
	if (L->err_file != NULL)
		open_output(L->err_file, L->err_trunc, 2);
	if (L->out_file != NULL) {
		open_output(L->out_file, L->out_trunc, 1);
		if (L->err_with_out && dup2(1, 2) == -1)
			child_fail(TASK_STAGE_OUTPUT, "cannot use the output "
			    "file", L->out_file, PRIVATE_PATH, errno);
	}
}

/* The task: its own group, the target user, the workdir, its output
 * files, then exec. */
static void __attribute__((noreturn))
run_task(struct launch *L)
{
	int e = ENOENT, eacces = 0;
	size_t i;

	if (L->pty)
		open_terminal(L);
	else
		setpgid(0, 0);
	close(SUP_FD);
	sig_set(SIGPIPE, SIG_DFL);
	sig_set(SIGHUP, SIG_DFL);

	/* Its cores, before anything it runs: what it forks inherits
	 * them. Not the supervisor's, which only waits. */
	if (L->bind && sched_setaffinity(0, sizeof(L->cpus), &L->cpus) == -1)
		child_fail(TASK_STAGE_CPUS, "cannot bind to CPUs", L->cpulist,
		    NULL, errno);
	if (L->ctr)
		run_container(L);

	if (L->drop) {
		if (setgroups((size_t)L->ngroups, L->groups) == -1)
			child_fail(TASK_STAGE_USER,
			    "cannot set the groups of user", L->user, NULL,
			    errno);
		if (setgid(L->gid) == -1)
			child_fail(TASK_STAGE_USER,
			    "cannot set the group of user", L->user, NULL,
			    errno);
		if (setuid(L->uid) == -1)
			child_fail(TASK_STAGE_USER, "cannot become user",
			    L->user, NULL, errno);
		/* setuid from root sets every uid; check that none is left
		 * that would let the task take root back. */
		if (setuid(0) != -1 || geteuid() != L->uid ||
		    getuid() != L->uid || getegid() != L->gid)
			child_fail(TASK_STAGE_USER,
			    "cannot drop root privileges for user", L->user,
			    NULL, EPERM);
	}
	if (chdir(L->workdir) == -1)
		child_fail(TASK_STAGE_WORKDIR, "cannot change directory to",
		    L->workdir, "the working directory", errno);
	/* The submitter's umask, not the agent's: the output files and
	 * all the task creates are as private as the user asked. */
	umask(L->umask);
	/* Opened as the user, so that the file is theirs and only where
	 * they may write; relative to the workdir, as sbatch's. */
	if (L->err_file != NULL)
		open_output(L->err_file, L->err_trunc, 2);
	if (L->out_file != NULL) {
		open_output(L->out_file, L->out_trunc, 1);
		if (L->err_with_out && dup2(1, 2) == -1)
			child_fail(TASK_STAGE_OUTPUT, "cannot use the output "
			    "file", L->out_file, PRIVATE_PATH, errno);
	}

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
	child_fail(TASK_STAGE_EXEC, "cannot run", L->name, "the command", e);
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

/* How long the supervisor of a task on a terminal sleeps between looks
 * at whether the task has ended, when it writes nothing. */
#define RELAY_POLL_MS 100

/* The task's terminal output (the master, fd 0) copied to its log (fd
 * 1) as it comes, until the task has ended and what it wrote is all
 * copied (orphans that keep the terminal are not waited for). Returns
 * waitpid's answer for the task, its status in *st. */
static pid_t
relay_terminal(pid_t task, int *st)
{
	struct pollfd p;
	char buf[16384];
	bool ended = false, open = true;
	pid_t w = -1;
	ssize_t n;
	int r;

	for (;;) {
		p.fd = 0;
		p.events = POLLIN;
		p.revents = 0;
		r = open ? poll(&p, 1, ended ? 0 : RELAY_POLL_MS) : 0;
		if (r > 0 && (p.revents & POLLIN) != 0) {
			n = read(0, buf, sizeof(buf));
			if (n > 0) {
				write_all(1, buf, (size_t)n);
				continue;
			}
			/* EIO: no one holds the terminal any more. */
			if (n == 0 || (errno != EINTR && errno != EAGAIN))
				open = false;
		} else if (r > 0)
			open = false;	/* hung up, nothing left to read */
		else if (r == 0 && ended)
			break;		/* all of it copied */
		if (ended)
			continue;
		/* Without the terminal, only the task's end is left. */
		while ((r = waitpid(-1, st, open ? WNOHANG : 0)) > 0 ||
		    (r == -1 && errno == EINTR))
			if (r == task) {
				w = task;
				ended = true;
				break;
			}
		if (r == -1 && errno != EINTR && !ended)
			break;		/* nothing left to wait for */
		if (ended && !open)
			break;
	}
	return w;
}

void
tasks_child_supervise(struct launch *L, int wfd)
{
	sigset_t none;
	char buf[64], msg[512];
	size_t len;
	ssize_t n;
	pid_t task, w;
	int st, e, why[2], keep;

	setsid();
	sig_reset();
	/* If the agent is gone before the report, the write must fail
	 * rather than kill us with the task already started; a hang-up is
	 * not ours to act on either. run_task restores both. */
	sig_set(SIGPIPE, SIG_IGN);
	sig_set(SIGHUP, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	/* The report pipe at a known place, then stdin (/dev/null, or the
	 * pipe srun's input comes through) and stdout and stderr to their
	 * spool logs, which the task inherits. tasks_prep_fd_high put all
	 * four above SUP_FD before the fork. */
	if (dup3(wfd, SUP_FD, O_CLOEXEC) == -1)
		_exit(1);
	if (dup2(L->pty ? L->stdin_wfd : L->nullfd, 0) == -1 ||
	    dup2(L->logfd, 1) == -1 ||
	    dup2(L->errlogfd, 2) == -1) {
		sup_report(SUP_FDS, errno, 0);
		_exit(1);
	}
	/* Where the kernel cannot create the task in its cgroup: into the
	 * cgroup ourselves (still root: the user could not), before the
	 * task is forked, so that it and all it starts are inside. */
	if (L->cgfd != -1 && L->cgjoin) {
		len = fmt_int(buf, getpid());
		if (write(L->cgfd, buf, len) != (ssize_t)len) {
			sup_report(SUP_CGROUP, errno, 0);
			_exit(1);
		}
	}
	/* The agent's TLS socket and the rest must not reach the task: no
	 * task without that. The cgroup to clone the task into stays
	 * (close-on-exec: the task loses it at its exec). */
	keep = L->cgfd != -1 && !L->cgjoin ? L->cgfd : -1;
	if ((keep > SUP_FD + 1 &&
	    close_range(SUP_FD + 1, (unsigned)keep - 1, 0) == -1) ||
	    close_range(keep != -1 ? (unsigned)keep + 1 : SUP_FD + 1, ~0U,
	    0) == -1) {
		sup_report(SUP_FDS, errno, 0);
		_exit(1);
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

	/* Why the task could not start, if it could not. */
	if (pipe2(why, O_CLOEXEC) == -1)
		why[0] = why[1] = -1;
	child_why_fd = why[1];
	/* Otherwise the task is born in its cgroup, and we stay out. */
	if (L->cgfd != -1 && !L->cgjoin)
		task = cgroup_clone_into(L->cgfd);
	else
		task = fork();
	if (task == -1) {
		sup_report(L->cgfd != -1 && !L->cgjoin ? SUP_CLONE : SUP_FORK,
		    errno, 0);
		_exit(1);
	}
	if (task == 0)
		run_task(L);
	if (why[1] != -1)
		close(why[1]);
	/* The task does this too; whichever runs first, the group exists
	 * before anyone is told its id. On a terminal the task makes a
	 * session instead, which it could not as a group's leader: wait
	 * (microseconds) until it has. */
	if (!L->pty)
		setpgid(task, task);
	else
		while (getpgid(task) != task && getpgid(task) != -1)
			sched_yield();

	len = fmt_int(buf, getpid());
	buf[len++] = ' ';
	len += fmt_int(buf + len, task);
	buf[len++] = '\n';
	if (tasks_child_write_atomic(L->pidtmp, L->pid, buf, len, 0600,
	    (uid_t)-1, (gid_t)-1) == -1) {
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
			tasks_child_write_atomic(L->errortmp, L->error, msg,
			    len, 0600, (uid_t)-1, (gid_t)-1);
	}

	/* As a subreaper we also collect the task's orphans; only the
	 * task's own status is the outcome. */
	if (L->pty)
		w = relay_terminal(task, &st);
	else
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
		tasks_child_write_atomic(L->exittmp, L->exit, buf, len, 0600,
		    (uid_t)-1, (gid_t)-1);
	}
	/* Collect what has already died; live leftovers of the group go to
	 * init, and the agent stops them with the group. */
	while (waitpid(-1, &st, WNOHANG) > 0)
		;
	_exit(0);
}
