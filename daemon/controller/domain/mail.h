/* Mail about a job's events (sbatch --mail-type), decided as Slurm's
 * slurmctld decides it: which change of a job mails what, and the
 * subject in Slurm's form. Part of the pure domain: it hands each mail
 * to the outbox (outbox.h, mail), which the daemon gives to mailer.c
 * and tests record; nothing here waits for it or can fail a change. */
#ifndef COHORT_CONTROLLER_MAIL_H
#define COHORT_CONTROLLER_MAIL_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/controller/domain/outbox.h"
#include "lib/job.h"

/* The longest subject: a 128-byte name and the numbers fit. */
#define MAIL_SUBJECT_MAX 320

/* job has just gone from state `from` to its state now (jobs.c calls it
 * for every change it installs): BEGIN when it began running (from
 * PENDING or RESTARTING), REQUEUE when it went back (from RUNNING or
 * RESIZING to PENDING or RESTARTING), and at its end one mail, "Failed"
 * for FAILED or TIMEOUT where FAIL was asked for, else "Ended" where END
 * was. out NULL or without a mail op: nothing. */
void mail_transition(const struct outbox *out, enum job_state from,
    const struct job *job, int64_t now);
/* The time-limit mails of a RUNNING job whose share (50, 80, 90 or 100%)
 * of its limit was reached after since and at or before now: each once,
 * since the caller passes the previous now as the next since. A
 * threshold passed while no controller was leading is not mailed. */
void mail_time_limit(const struct outbox *out, const struct job *job,
    int64_t since, int64_t now);
/* The subject of event (one JOB_MAIL_* bit) for job at now into buf:
 * "Slurm Job_id=12 Name=train Began, Queued time 00:00:05". Truncated
 * to len; returns buf. */
char *mail_subject(const struct job *job, uint32_t event, int64_t now,
    char *buf, size_t len);

#endif
