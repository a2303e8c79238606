/* Internals shared by the files that start and find tasks, grouped by
 * the file that defines them (the public contract is in tasks.h and
 * tasks_spool.h):
 *
 *   tasks.c        the runtime: start (fork the supervisor), signal,
 *                  results
 *   tasks_prep.c   everything a start needs, prepared before the fork
 *   tasks_child.c  the supervisor and the task between fork and exec:
 *                  async-signal-safe calls only
 *   tasks_spool.c  the spool's paths and records, adoption, clean-up */
#ifndef COHORT_AGENT_TASKS_INT_H
#define COHORT_AGENT_TASKS_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/agent/tasks.h"
#include "lib/err.h"

#define SUP_FD		3	/* the supervisor's end of the report pipe */

/* What the supervisor tells the agent once: the task's pid, or the step
 * that failed and its errno. */
enum sup_stage { SUP_OK, SUP_FDS, SUP_FORK, SUP_PIDFILE, SUP_CGROUP,
    SUP_CLONE };
struct sup_msg {
	int stage;
	int err;
	pid_t pid;
};

/* Everything the children need, prepared before the first fork
 * (tasks_prep_create); the children only read it, except shargv[1]. */
struct launch {
	char startdir[PATH_MAX];	/* the start's spool directory */
	char dir[PATH_MAX];	/* its files': startdir, or its step-S */
	char log[PATH_MAX];	/* stdout in the spool */
	char errlog[PATH_MAX];	/* stderr in the spool */
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
	int logfd, errlogfd, nullfd;	/* nullfd: the task's stdin,
					 * /dev/null or a pipe's read end */
	int stdin_wfd;		/* that pipe's write end, or -1 */
	/* On a pseudo-terminal (task_launch.pty): stdin_wfd is its master,
	 * which the supervisor keeps as fd 0 and copies to logfd, and the
	 * task opens the terminal by name as its controlling terminal. */
	bool pty;
	char ptsname[64];
	/* Output files the task opens as its user (task_launch): NULL
	 * keeps the stream in the spool. */
	char *out_file, *err_file;
	bool out_trunc, err_trunc;
	bool err_with_out;	/* stderr goes to out_file's fd */
	mode_t umask;		/* the task's, set before it opens them */
	/* CPU binding: the task calls sched_setaffinity(cpus). */
	bool bind;
	cpu_set_t cpus;
	char cpulist[4096];	/* cpus as a list, for messages */
	char cpusfile[PATH_MAX], cpustmp[PATH_MAX];	/* rank-R.cpus */
	/* The task's cgroup: its directory (O_PATH) for the task to be
	 * cloned into, or its cgroup.procs for the supervisor to join it
	 * (cgjoin); -1: none. */
	int cgfd;
	bool cgjoin;
	/* A task in a container image (container.h, filled by
	 * container_task_prep): ctr_err set, the image could not be
	 * prepared and the task fails with ctr_why; else it mounts the
	 * overlay ctr_overlay on ctr_root in a mount namespace of its own,
	 * holds ctr_lock shared and execs ctr_argv (the runtime) as root. */
	bool ctr;
	int ctr_err;
	bool ctr_permanent;
	char *ctr_image, *ctr_why, *ctr_runtime, *ctr_root, *ctr_overlay;
	char *ctr_lock;
	const char **ctr_argv;
	char *ctr_strs[4];
	/* What tasks_prep_undo removes: */
	bool files;		/* the rank's files may exist */
	bool made_dir;		/* the start directory is ours */
	bool made_script;	/* the script is ours */
};

/* ---- tasks_child.c: async-signal-safe only ---- */

/* Where a task's start failed, after its supervisor forked it. */
enum task_stage {
	TASK_STAGE_USER,	/* becoming the user (groups, gid, uid) */
	TASK_STAGE_WORKDIR,	/* entering the working directory */
	TASK_STAGE_OUTPUT,	/* opening the -o/-e files as the user */
	TASK_STAGE_EXEC,	/* running the command */
	TASK_STAGE_CPUS,	/* binding to its cores */
	TASK_STAGE_IMAGE,	/* its container image and runtime */
};

/* Whether a start that failed at stage with errno e would fail the same
 * way every time (no such command or directory, not executable, not
 * permitted): the job cannot run as given, and restarting it is
 * pointless. False for what may pass (out of memory or processes, a
 * file system error or timeout, a busy executable). */
bool tasks_child_failure_permanent(enum task_stage stage, int e);

/* Write buf to tmp (with exactly mode, owned by uid and gid; -1 keeps
 * the writer's), then rename it over path, so that a reader sees the
 * whole file, with its final mode and owner, or none. 0, or -1 with
 * errno (tmp removed). */
int tasks_child_write_atomic(const char *tmp, const char *path,
    const char *buf, size_t len, mode_t mode, uid_t uid, gid_t gid);

/* The supervisor, in the child of the agent's fork: never returns. wfd
 * is the write end of the report pipe (above SUP_FD, as are L's fds). */
void tasks_child_supervise(struct launch *L, int wfd)
    __attribute__((noreturn));

/* ---- tasks_prep.c ---- */

/* Resolve the user, the paths and the command; create the start
 * directory, the script and the log. A new struct launch (the caller
 * destroys it), or NULL with err and errno, nothing left behind. */
struct launch *tasks_prep_create(const char *spool,
    const struct task_launch *l, struct cerr *err);

/* Remove the rank's files (and the script and directory if this start
 * made them), as a failed start must. Keeps errno. */
void tasks_prep_undo(struct launch *L);

/* Close L's fds and free it; NULL is fine. */
void tasks_prep_destroy(struct launch *L);

/* Move *fd above SUP_FD (close-on-exec), so that the supervisor's dup2
 * onto 0-2 cannot overwrite one it still needs. 0, or -1 with errno. */
int tasks_prep_fd_high(int *fd);

/* ---- tasks_spool.c ---- */

/* snprintf into a PATH_MAX buffer: 0, or -1 (ENAMETOOLONG). */
int tasks_spool_path(char *buf, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* SPOOL/jobs/JOBID.ATTEMPT into a PATH_MAX buffer: 0, or -1. */
int tasks_spool_start_dir(char *buf, const char *spool, uint64_t job_id,
    uint32_t restart);

/* The wait status in rank-R.exit: 0, or -1 with errno (ENOENT: none;
 * EIO: not one we wrote). */
int tasks_spool_read_exit(const struct task *t, int *status);

/* Why the task could not start (rank-R.error) into why, or "" when it
 * started or there is no record; *permanent from its "P " or "T " (a
 * record without either, from an older agent, is not permanent). */
void tasks_spool_read_error(const struct task *t, char *why, size_t len,
    bool *permanent);

#endif
