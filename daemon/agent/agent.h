/* The agent's work on its node: the table of tasks it supervises, launch
 * and stop requests from the controller, exit detection (pidfd events),
 * and log reads. The connection to the controller (link.c) calls in here
 * with project structs and is told of exits through a callback. */
#ifndef COHORT_AGENT_AGENT_H
#define COHORT_AGENT_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/agent/cpubind.h"
#include "lib/err.h"
#include "lib/inventory.h"
#include "lib/job.h"

/* Room for a CPU list (cpubind_list_format) of any of CPU_SETSIZE
 * CPUs: 1024 of them as "0-1,3-4,..." take under 3000 bytes. */
#define AGENT_CPU_LIST_MAX 4096

struct event_base;
struct agent_config;
struct agent;

/* One node's share of a job step (srun), as the controller sent it
 * (LaunchRequest.step): every field is checked by agent_launch. */
struct step_launch {
	uint32_t step_id;
	const char *const *argv;	/* the command */
	size_t argc;
	const char *const *env;		/* srun's; none: the job's */
	size_t nenv;
	const char *workdir;		/* NULL: the job's */
	const char *const *nodelist;	/* the step's nodes */
	size_t nnodes;
	unsigned node_index;		/* this node's index there */
	const unsigned *tasks_per_node;	/* ntpn == nnodes counts */
	size_t ntpn;
	unsigned first_rank;		/* SLURM_PROCID of the first here */
	unsigned ntasks;		/* all the step's tasks */
	const unsigned *gpus;		/* the step's GPUs here, a subset of
					 * the launch's */
	size_t ngpus;
	unsigned gpus_per_task;		/* 0: each task sees all of gpus */
	unsigned cpus_per_task;		/* 0: not bound */
	const char *master_addr;
	unsigned master_port;
	const char *name;		/* NULL: argv[0]'s */
	bool stdin_pipe;		/* task 0 (rank 0, if here) reads a
					 * pipe that agent_write_stdin fills;
					 * else every task reads /dev/null */
	bool pty;			/* with stdin_pipe: task 0 runs on a
					 * pseudo-terminal instead */
	unsigned rows, cols;		/* its window; 0: 24 x 80 */
	struct job_container ctr;	/* srun --container-*; image NULL:
					 * the job's container, if any */
};

/* Steps with tasks running (or starting) at once in one start of a job
 * on this node: a launch of one more is refused (ERR_LIMIT). */
#define AGENT_STEPS_MAX 64
/* The step credential, in bytes (LaunchRequest.step_cred). */
#define AGENT_STEP_CRED_MAX 64

/* Which tasks of a start a signal without a step reaches
 * (SignalRequest.scope). */
enum agent_scope {
	AGENT_SCOPE_ALL,		/* the job's own and every step's */
	AGENT_SCOPE_JOB,		/* the job's own (a batch script) */
	AGENT_SCOPE_STEPS,		/* every step's */
};

/* A launch request, as the controller sent it. */
struct launch {
	uint64_t job_id;
	uint32_t restart;		/* the launch attempt: the key */
	uint32_t restart_count;		/* COHORT_RESTART_COUNT */
	const char *user;
	const struct job_spec *spec;
	unsigned node_rank;
	const char *const *nodelist;
	size_t nnodes;
	const char *master_addr;
	unsigned master_port;
	const unsigned *gpus;
	size_t ngpus;
	const char *resume_checkpoint;
	bool watch_checkpoints;		/* rank 0: report LATEST */
	uint32_t ckpt_advice_s;		/* checkpoint interval advised;
					 * 0: none */
	uint64_t array_id;		/* an array task: its array; else 0 */
	uint32_t array_task;		/* and its index */
	/* The job's step credential (1 to AGENT_STEP_CRED_MAX bytes), kept
	 * in the start's spool as step-cred; NULL: none. */
	const uint8_t *step_cred;
	size_t step_cred_len;
	/* Set: start this job step's tasks here, in the start (job_id,
	 * restart) launched before; NULL: the job's own tasks. */
	const struct step_launch *step;
};

/* Ranks a launch starts in one go (one loop round): a launch of more is
 * finished in later rounds, a few ranks each. */
#define AGENT_STARTS_PER_ROUND 8

/* The latest checkpoint of a job whose LATEST this node watches. */
struct ckpt_report {
	uint64_t job_id;
	uint32_t restart;
	uint64_t step;
	const char *path;		/* borrowed until the next call */
	int64_t time_ms;		/* when the agent first saw it */
	uint32_t cost_ms;		/* the job's CKPT_MS for it; 0: none */
};

/* When a job's progress file last changed on this node. */
struct progress_report {
	uint64_t job_id;
	uint32_t restart;
	int64_t changed_ms;
};

/* A rank's latest "STEP COMPUTE_MS" from its $COHORT_STEP_FILE. */
struct step_time {
	uint64_t job_id;
	uint32_t restart;
	uint32_t rank;
	uint64_t step;
	uint32_t compute_ms;
};

/* Step times one heartbeat carries at most (the controller refuses a
 * list longer than the node could host; the rest go next time). */
#define AGENT_STEP_TIMES_MAX 4096

typedef void (*agent_exit_cb)(const struct task_report *r, void *arg);

/* Adopt the tasks found in the spool (from before a restart). cfg is
 * borrowed and must outlive the agent. */
struct agent *agent_create(struct event_base *base,
    const struct agent_config *cfg, agent_exit_cb cb, void *arg,
    struct cerr *err);
/* Stops watching; tasks keep running. Accepts NULL. */
void agent_destroy(struct agent *a);

/* The node's inventory, for what tasks learn of their GPUs: the NUMA
 * nodes --cpus-per-task binds next to, and their NICs (COHORT_TASK_NIC,
 * NCCL_IB_HCA). Borrowed; must outlive the agent. NULL (the default):
 * nothing known; cores are then chosen on any NUMA node. */
void agent_set_inventory(struct agent *a, const struct inventory *inv);

/* Start this node's tasks of l: the job's (of a batch job, one task,
 * the script, on node rank 0 and none elsewhere) or, with l->step, the
 * step's, in the job's start here. Idempotent: a start, or a step,
 * already known (or still being started) is accepted as is. A step
 * that is not consistent, a start not launched here (ERR_NOT_FOUND) or
 * AGENT_STEPS_MAX steps running (ERR_LIMIT) are refused, with nothing
 * started. 0: accepted, its first AGENT_STARTS_PER_ROUND tasks started
 * (or, in an image, once the image is ready); the rest follow in later
 * loop rounds, so that no launch holds the loop for longer than a
 * round's starts, and a rank that cannot start then ends, with the
 * reason as its why, the start's other tasks killed. -1 with err
 * (ERR_INVALID for a start that cannot work here, e.g. an unknown user:
 * nothing is left running). */
int agent_launch(struct agent *a, const struct launch *l, struct cerr *err);

/* "COHORT_TASK_CPUS=LIST" for a task bound to cpus, into line (len:
 * sizeof("COHORT_TASK_CPUS=") + AGENT_CPU_LIST_MAX holds any). 0, or
 * -1 with errno (ENOSPC: too small; EINVAL: no CPU) and line "". */
int agent_task_cpus_env(const cpu_set_t *cpus, char *line, size_t len);

/* Stop the tasks of (job, restart): SIGTERM now, SIGKILL after the
 * configured wait; with step non-NULL only those of job step *step,
 * else every task of the start, the steps' included. Unknown jobs are
 * fine (nothing to do). */
void agent_stop(struct agent *a, uint64_t job_id, uint32_t restart,
    const uint32_t *step);

/* The controller has recorded this task's exit (of job step *step, or
 * the job's own with step NULL): stop reporting it. */
void agent_exit_acked(struct agent *a, uint64_t job_id, uint32_t restart,
    const uint32_t *step, unsigned rank);

/* Every task not yet acknowledged, into a malloc'd array. */
struct task_report *agent_tasks(struct agent *a, size_t *n);

/* The latest checkpoint of each job this node watches (LATEST read
 * now), running or ended but not yet forgotten, into a malloc'd array;
 * NULL with *n = 0 when there is none. */
/* The controller advises job_id's start restart to checkpoint every
 * advice_s seconds: its COHORT_CHECKPOINT_ADVICE_FILE here is replaced
 * (whole, as at launch, its owner kept) while a task of that start runs
 * here; while its launch is under way with no rank started yet (its
 * image unpacking), the latest advice is kept and written as the first
 * rank starts. 0, or -1 with errno (ENOENT: no such start running or
 * launching here, or no advice file; EINVAL: advice_s 0, or not a
 * regular file there). */
int agent_advise(struct agent *a, uint64_t job_id, uint32_t restart,
    uint32_t advice_s);

struct ckpt_report *agent_checkpoints(struct agent *a, size_t *n);

/* The progress file's last change of each job with a task running here,
 * into a malloc'd array; NULL with *n = 0 when none. */
struct progress_report *agent_progress(struct agent *a, size_t *n);

/* Each running task's step file (read as the job's user, as LATEST is)
 * whose "STEP COMPUTE_MS" changed since it was last given, into a
 * malloc'd array (at most AGENT_STEP_TIMES_MAX); NULL with *n = 0 when
 * none. What is given counts as sent. */
struct step_time *agent_step_times(struct agent *a, size_t *n);

/* Send sig to the running tasks of (job, restart): those of job step
 * *step, or with step NULL those scope says. Returns how many were
 * signalled. */
unsigned agent_signal(struct agent *a, uint64_t job_id, uint32_t restart,
    const uint32_t *step, enum agent_scope scope, int sig);

/* Read up to max bytes of a rank's log of stdout (or, with is_stderr,
 * of stderr) from offset into buf; with step non-NULL, of the task of
 * that SLURM_PROCID in job step *step. Returns the byte count (0 at the
 * end), or -1 with errno (ENOENT: no such log). */
ssize_t agent_read_log(struct agent *a, uint64_t job_id, uint32_t restart,
    const uint32_t *step, unsigned rank, bool is_stderr, uint64_t offset,
    void *buf, size_t max);

/* The most agent_write_stdin takes in one call (WriteStdinRequest). */
#define AGENT_STDIN_CHUNK (64 * 1024)

/* Write data, bytes offset.. of the input of task rank of job step step
 * (started with a stdin pipe), into its pipe: as much as fits now,
 * never waiting. Bytes before the offset the pipe has already taken are
 * skipped, so a repeated chunk is not written twice. With eof, and all
 * of data taken, the pipe is closed (the task reads EOF). Input for a
 * task that has ended or whose input was closed is taken and dropped.
 * Returns how many bytes of data are taken (0: the pipe is full, come
 * again), or -1 with errno: ENOENT (no such task here), ENOTCONN (no
 * pipe: the task reads /dev/null, or this agent restarted since it
 * started, which closed the pipe: the task saw EOF), EINVAL (offset
 * beyond what the pipe has taken: a gap), EIO (the write failed). */
ssize_t agent_write_stdin(struct agent *a, uint64_t job_id,
    uint32_t restart, uint32_t step, unsigned rank, uint64_t offset,
    const void *data, size_t len, bool eof);
/* Like agent_write_stdin for an attached terminal's keys: data goes
 * after what the task has had, as much as fits now, and the offset
 * srun's input keeps is left as it is. */
ssize_t agent_append_stdin(struct agent *a, uint64_t job_id,
    uint32_t restart, uint32_t step, unsigned rank, const void *data,
    size_t len);
/* Set the window of the pseudo-terminal task rank of the step runs on
 * (the kernel tells its foreground processes with SIGWINCH). 0, or -1
 * with errno: ENOENT (no such task here), ENOTTY (it has no terminal,
 * or no longer one this agent holds). */
int agent_step_window(struct agent *a, uint64_t job_id, uint32_t restart,
    uint32_t step, unsigned rank, unsigned rows, unsigned cols);

/* Read the watched LATEST files now; calls the checkpoint callback when
 * one names a new checkpoint. */
void agent_watch_checkpoints(struct agent *a);
void agent_set_checkpoint_cb(struct agent *a, void (*cb)(void *), void *arg);

/* How an image prepared ahead of a launch (agent_prepare_image) ended:
 * err 0, ready (cached: the cache had it; ms: how long it took; digest),
 * or an
 * errno with why (permanent: it would fail again; ECANCELED: the start
 * was stopped). Strings borrowed for the call. */
struct agent_prepared {
	uint64_t job_id;
	uint32_t restart;
	int err;
	bool permanent;
	const char *why;
	bool cached;
	int64_t ms;
	const char *digest;	/* ready: what it is known by; "": unknown */
};
typedef void (*agent_prepared_cb)(void *arg, uint64_t token,
    const struct agent_prepared *r);
void agent_set_prepared_cb(struct agent *a, agent_prepared_cb cb, void *arg);
/* Prepare the image of l's job (its own tasks': l->step NULL) in the
 * node's cache for the job's user, starting nothing: the prepared
 * callback gets token once, later, when it is ready, cannot be, or the
 * start is stopped (agent_stop). 0, or -1 with err (and no callback). */
int agent_prepare_image(struct agent *a, const struct launch *l,
    uint64_t token, struct cerr *err);

#endif
