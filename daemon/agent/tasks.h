/* Running a job's tasks on this node. Each task gets a small supervisor
 * process (in the spirit of Slurm's slurmstepd): the agent forks the
 * supervisor, which starts its own session, forks the task into a new
 * process group, waits for it and writes its wait status to the spool.
 * So neither an agent restart nor an agent crash kills a task, and a
 * restarted agent finds every task, running or ended, in the spool.
 *
 * Spool layout, one directory per start (launch attempt) of a job on this node:
 *   SPOOL/jobs/JOBID.ATTEMPT/script        the batch script, if any
 *   SPOOL/jobs/JOBID.ATTEMPT/rank-R.log    the task's stdout
 *   SPOOL/jobs/JOBID.ATTEMPT/rank-R.err    the task's stderr
 *   SPOOL/jobs/JOBID.ATTEMPT/rank-R.pid    "SUPERVISOR_PID TASK_PGID"
 *   SPOOL/jobs/JOBID.ATTEMPT/rank-R.exit   the wait status, once ended
 *   SPOOL/jobs/JOBID.ATTEMPT/rank-R.cpus   the cores it is bound to, if
 *                                          any ("0-3,8")
 *   SPOOL/jobs/JOBID.ATTEMPT/step-cred     the job's step credential
 *                                          (hex, 0400, the user's)
 *   SPOOL/jobs/JOBID.ATTEMPT/step-S/       a job step's tasks (srun): the
 *                                          same rank-R.* files, R being
 *                                          the task's SLURM_PROCID in
 *                                          step S
 * (R is the task's global rank). Files are written atomically. Every
 * attempt has its own directory, so a restart never touches an earlier
 * attempt's logs. With an output file (-o, -e) the stream goes there
 * instead, opened by the task as its user, and its spool log stays
 * empty (a start failure before the file is open still lands there).
 *
 * This header is the runtime (tasks.c); tasks_spool.h finds and clears
 * the records, and tasks_int.h joins the files that implement both. */
#ifndef COHORT_AGENT_TASKS_H
#define COHORT_AGENT_TASKS_H

#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

/* Who a task runs as, looked up by the caller (account.h), once for all
 * the ranks of a start: tasks_start then asks the user database
 * nothing. */
struct task_user {
	const char *name;		/* for messages */
	uid_t uid;
	gid_t gid;
	const gid_t *groups;		/* supplementary, as setgroups takes */
	size_t ngroups;
	const char *home;		/* the workdir when none is given;
					 * NULL or "": "/" */
};

struct ctr_launch;

struct task_launch {
	uint64_t job_id;
	uint32_t restart;
	unsigned local_rank;
	unsigned rank;			/* global rank: names the files */
	/* A task of job step step_id: its files are in the start's
	 * step-S directory (made when missing). */
	bool has_step;
	uint32_t step_id;
	const char *const *argv;	/* the command, or the script's args */
	size_t argc;
	const char *script;		/* batch script text, or NULL */
	size_t script_len;
	char *const *envp;		/* from env_build */
	const char *workdir;		/* NULL: the user's home directory */
	const char *user;		/* the local account to run as; used
					 * only when the agent runs as root */
	/* user, already looked up: used instead of asking the user
	 * database (as root: its uid, gid, groups and home; otherwise its
	 * home only); NULL: tasks_start looks user up itself. */
	const struct task_user *who;
	/* Output files (-o/-e, expanded): NULL keeps the stream in the
	 * spool. A relative path is relative to the working directory.
	 * err_file equal to out_file is the same file, opened once. Each
	 * is opened O_APPEND, and also O_TRUNC when its trunc is set. */
	const char *out_file;
	const char *err_file;
	bool out_trunc, err_trunc;
	/* The umask the task starts with, before it opens its output files
	 * (the submitter's); without has_umask, TASKS_UMASK_DEFAULT. */
	bool has_umask;
	mode_t umask;
	/* The cores the task is bound to (sched_setaffinity, before the
	 * exec), kept in rank-R.cpus; NULL: not bound. */
	const cpu_set_t *cpus;
	/* The task's cgroup directory (cgroup.h); NULL: no cgroup. The
	 * task is created in it (cgroup_clone_into), or with cgroup_join
	 * (where cgroup_clone_into_ok says the kernel cannot) its
	 * supervisor joins it through its cgroup.procs before forking the
	 * task. Either way the task is inside before it runs anything. */
	const char *cgroup;
	bool cgroup_join;
	/* stdin a pipe whose write end tasks_start hands back (task's
	 * stdin_fd) rather than /dev/null: srun's input of a step's task
	 * 0. */
	bool stdin_pipe;
	/* With stdin_pipe: the task runs on a pseudo-terminal of this
	 * window (0: 24 x 80), its session's controlling terminal, with
	 * stdout and stderr on it too; stdin_fd is the terminal's master,
	 * and the supervisor copies what the task writes to the rank's
	 * log. */
	bool pty;
	unsigned short rows, cols;
	/* Run in a container image (container.h); NULL: on the node. */
	const struct ctr_launch *ctr;
};

/* The umask of a task whose submitter sent none (a client or a job
 * from before the umask was sent): private files, because one that
 * another user can read must never be what nobody asked for. */
#define TASKS_UMASK_DEFAULT 0077

struct task {
	uint64_t job_id;
	uint32_t restart;
	unsigned rank;
	bool has_step;			/* a task of job step step_id */
	uint32_t step_id;
	pid_t supervisor;
	pid_t pgid;			/* the task's process group */
	int pidfd;			/* readable when the supervisor ends;
					 * -1 when it could not be opened */
	char dir[PATH_MAX];		/* this start's spool directory, or
					 * its step's (step-S) */
	bool bound;			/* bound to cpus (rank-R.cpus) */
	cpu_set_t cpus;
	/* The write end of the task's stdin pipe (task_launch.stdin_pipe:
	 * non-blocking, close-on-exec, the caller's to close), else -1.
	 * Only the agent that started the task holds it: a task found in
	 * the spool after an agent restart has none, and its reader saw
	 * EOF when the old agent's end closed. */
	int stdin_fd;
	bool pty;			/* stdin_fd is a pty's master */
};

/* Start one task. When the agent runs as root the task runs as
 * l->user's uid, gid and supplementary groups; a user that does not exist
 * here fails the start with ERR_INVALID "user 'alice' does not exist on
 * this node". Never runs a task as root because the agent is root.
 * Returns 0 with *t filled (the caller owns t->pidfd), or -1 with err:
 * nothing is left running and the spool files of this rank are removed. */
int tasks_start(const char *spool, const struct task_launch *l,
    struct task *t, struct cerr *err);

/* Send sig to the task's process group. 0, or -1 with errno (ESRCH when
 * it has already gone). */
int tasks_signal(const struct task *t, int sig);

/* The task's wait status, once its supervisor has written it: 0 with
 * *status set, or -1 with errno ENOENT while it runs (EIO if the
 * supervisor died without writing one: then *status is set to a
 * SIGKILL death). With why non-NULL, also why the command could not be
 * started ("cannot change directory to '/x': No such file or
 * directory"), or "" when it was; with permanent non-NULL, whether that
 * failure is permanent (tasks_child_failure_permanent). */
int tasks_result(const struct task *t, int *status, char *why, size_t len,
    bool *permanent);

/* True while the task's process group still has a member. */
bool tasks_alive(const struct task *t);

#endif
