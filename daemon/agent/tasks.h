/* Running a job's tasks on this node. Each task gets a small supervisor
 * process (in the spirit of Slurm's slurmstepd): the agent forks the
 * supervisor, which starts its own session, forks the task into a new
 * process group, waits for it and writes its wait status to the spool.
 * So neither an agent restart nor an agent crash kills a task, and a
 * restarted agent finds every task, running or ended, in the spool.
 *
 * Spool layout, one directory per start (launch attempt) of a job on this node:
 *   SPOOL/jobs/JOBID.ATTEMPT/script        the batch script, if any
 *   SPOOL/jobs/JOBID.ATTEMPT/rank-R.log    the task's stdout and stderr
 *   SPOOL/jobs/JOBID.ATTEMPT/rank-R.pid    "SUPERVISOR_PID TASK_PGID"
 *   SPOOL/jobs/JOBID.ATTEMPT/rank-R.exit   the wait status, once ended
 * (R is the task's global rank). Files are written atomically. */
#ifndef COHORT_AGENT_TASKS_H
#define COHORT_AGENT_TASKS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

struct task_launch {
	uint64_t job_id;
	uint32_t restart;
	unsigned local_rank;
	unsigned rank;			/* global rank: names the files */
	const char *const *argv;	/* the command, or the script's args */
	size_t argc;
	const char *script;		/* batch script text, or NULL */
	size_t script_len;
	char *const *envp;		/* from env_build */
	const char *workdir;		/* NULL: the user's home directory */
	const char *user;		/* the local account to run as; used
					 * only when the agent runs as root */
};

struct task {
	uint64_t job_id;
	uint32_t restart;
	unsigned rank;
	pid_t supervisor;
	pid_t pgid;			/* the task's process group */
	int pidfd;			/* readable when the supervisor ends;
					 * -1 when it could not be opened */
	char dir[PATH_MAX];		/* this start's spool directory */
};

/* Start one task. When the agent runs as root the task runs as
 * l->user's uid, gid and supplementary groups; a user that does not exist
 * here fails the start with ERR_INVALID "user 'alice' does not exist on
 * this node". Never runs a task as root because the agent is root.
 * Returns 0 with *t filled (the caller owns t->pidfd), or -1 with err:
 * nothing is left running and the spool files of this rank are removed. */
int task_start(const char *spool, const struct task_launch *l,
    struct task *t, struct cerr *err);

/* Send sig to the task's process group. 0, or -1 with errno (ESRCH when
 * it has already gone). */
int task_signal(const struct task *t, int sig);

/* The task's wait status, once its supervisor has written it: 0 with
 * *status set, or -1 with errno ENOENT while it runs (EIO if the
 * supervisor died without writing one: then *status is set to a
 * SIGKILL death). With why non-NULL, also why the command could not be
 * started ("cannot change directory to '/x': No such file or
 * directory"), or "" when it was; with permanent non-NULL, whether that
 * failure is permanent (task_failure_permanent). */
int task_result(const struct task *t, int *status, char *why, size_t len,
    bool *permanent);

/* Where a task's start failed, after its supervisor forked it. */
enum task_stage {
	TASK_STAGE_USER,	/* becoming the user (groups, gid, uid) */
	TASK_STAGE_WORKDIR,	/* entering the working directory */
	TASK_STAGE_EXEC,	/* running the command */
};

/* Whether a start that failed at stage with errno e would fail the same
 * way every time (no such command or directory, not executable, not
 * permitted): the job cannot run as given, and restarting it is
 * pointless. False for what may pass (out of memory or processes, a
 * file system error or timeout, a busy executable). Async-signal-safe. */
bool task_failure_permanent(enum task_stage stage, int e);

/* True while the task's process group still has a member. */
bool task_alive(const struct task *t);

/* Find every task recorded in spool, running or ended, and call cb for
 * each (cb takes ownership of t->pidfd). Used when the agent restarts.
 * 0, or -1 with err. */
int tasks_adopt(const char *spool,
    int (*cb)(struct task *t, void *arg), void *arg, struct cerr *err);

/* The controller has this rank's outcome: drop its pid and exit records
 * so that a restarted agent does not adopt and report it again. Its log
 * stays for `cohort logs`. 0, or -1 with errno. */
int task_forget(const struct task *t);

/* Remove this start's spool directory once the controller has the
 * outcome of every rank in it. Logs go with it. 0 or -1. */
int tasks_remove(const char *spool, uint64_t job_id, uint32_t restart);

/* Path of rank's log file into buf. 0, or -1 (ENAMETOOLONG). */
int task_log_path(const char *spool, uint64_t job_id, uint32_t restart,
    unsigned rank, char *buf, size_t len);

#endif
