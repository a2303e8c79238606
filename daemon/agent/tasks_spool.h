/* The spool's task records (layout in tasks.h): finding them after an
 * agent restart and clearing the ones the controller has. */
#ifndef COHORT_AGENT_TASKS_SPOOL_H
#define COHORT_AGENT_TASKS_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/agent/tasks.h"
#include "lib/err.h"

/* SPOOL/jobs and each start's directory in it: root's, searched by the
 * task user (to run the script, to write the progress file), listed by
 * nobody else. Every file in them is 0600 (the script 0700), the
 * user's or root's. */
#define TASKS_SPOOL_DIR_MODE 0711

/* Find every task recorded in spool, running or ended, and call cb for
 * each (cb takes ownership of t->pidfd). Used when the agent restarts.
 * 0, or -1 with err. */
int tasks_spool_adopt(const char *spool,
    int (*cb)(struct task *t, void *arg), void *arg, struct cerr *err);

/* The controller has this rank's outcome: drop its pid and exit records
 * so that a restarted agent does not adopt and report it again. Its log
 * stays for `cohort logs`. 0, or -1 with errno. */
int tasks_spool_forget(const struct task *t);

/* Remove this start's spool directory once the controller has the
 * outcome of every rank in it. Logs go with it. 0 or -1. */
int tasks_spool_remove(const char *spool, uint64_t job_id, uint32_t restart);

/* Path of rank's log of stdout (rank-R.log) or, with is_stderr, of
 * stderr (rank-R.err) into buf. 0, or -1 (ENAMETOOLONG). */
int tasks_spool_log_path(const char *spool, uint64_t job_id, uint32_t restart,
    unsigned rank, bool is_stderr, char *buf, size_t len);

/* SPOOL/jobs/JOBID.ATTEMPT into a PATH_MAX buffer: 0, or -1. */
int tasks_spool_start_dir(char *buf, const char *spool, uint64_t job_id,
    uint32_t restart);

/* Path of a task's log: of the job's own tasks (step NULL) as
 * tasks_spool_log_path, or of rank (its SLURM_PROCID) of job step
 * *step. 0, or -1 (ENAMETOOLONG). */
int tasks_spool_step_log_path(const char *spool, uint64_t job_id,
    uint32_t restart, const uint32_t *step, unsigned rank, bool is_stderr,
    char *buf, size_t len);

/* SPOOL/jobs/JOBID.ATTEMPT/step-S into a PATH_MAX buffer: 0, or -1. */
int tasks_spool_step_dir(char *buf, const char *spool, uint64_t job_id,
    uint32_t restart, uint32_t step_id);

/* Remove a step's directory (step NULL: the whole start's, as
 * tasks_spool_remove), as a step whose start failed must. 0 or -1. */
int tasks_spool_remove_step(const char *spool, uint64_t job_id,
    uint32_t restart, const uint32_t *step);

#endif
