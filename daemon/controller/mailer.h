/* The controller's mail: the domain's mail items (outbox.h, mail) run
 * the site's mail program as Slurm's MailProg is run,
 * `PROGRAM -s SUBJECT USER`, with an empty stdin. Best effort and
 * bounded: at most max_running programs at once, at most max_queued
 * mails waiting (beyond that the oldest goes, counted), each program
 * killed after timeout_ms. Children are started with posix_spawn (no
 * shell), in a process group of their own, as the controller's user,
 * with stdin, stdout and stderr on /dev/null, and reaped from the event
 * loop (SIGCHLD as a libevent event), never waited for. */
#ifndef COHORT_CONTROLLER_MAILER_H
#define COHORT_CONTROLLER_MAILER_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

struct event_base;
struct mailer;

#define MAILER_MAX_RUNNING 4
#define MAILER_MAX_QUEUED 1000
#define MAILER_TIMEOUT_MS 30000

struct mailer_opts {
	const char *program;	/* absolute path (copied); NULL: no mail */
	unsigned max_running;	/* 0: MAILER_MAX_RUNNING */
	size_t max_queued;	/* 0: MAILER_MAX_QUEUED */
	int64_t timeout_ms;	/* 0: MAILER_TIMEOUT_MS */
};

struct mailer_stats {
	uint64_t sent;		/* the program exited 0 */
	uint64_t failed;	/* not started, exited non-zero, killed */
	uint64_t dropped;	/* the oldest of a full queue */
	size_t queued;		/* waiting now */
	unsigned running;	/* programs running now */
};

/* NULL with err (ERR_INTERNAL) when out of memory or when the SIGCHLD
 * event cannot be added. */
struct mailer *mailer_create(struct event_base *base,
    const struct mailer_opts *o, struct cerr *err);
/* Accepts NULL. Programs still running are left to finish (their parent
 * gone, init reaps them); queued mail is dropped. */
void mailer_destroy(struct mailer *m);
/* Queue a mail about job_id to `to` with subject (both copied); the
 * program starts on a later loop round. Without a program: one log line
 * for the job (recent jobs remembered) and nothing else. Never fails:
 * what cannot be queued is counted as dropped. */
void mailer_send(struct mailer *m, uint64_t job_id, const char *to,
    const char *subject);
void mailer_stats(const struct mailer *m, struct mailer_stats *st);

#endif
