/* Which of a job's changes mail what, and the subject, as Slurm's
 * slurmctld words it (its MailProg gets "-s SUBJECT USER" and an empty
 * body): "Slurm Job_id=12 Name=train Began, Queued time 00:00:05",
 * "... Ended, Run time 01:02:03, COMPLETED, ExitCode 0", "... Failed,
 * Run time 00:00:04, FAILED, ExitCode 3", "... Requeued, Run time ...",
 * "... Reached 90% of time limit, Run time ...". An array task is named
 * as Slurm names one mailed for itself: "Slurm Array Task Job_id=7_3
 * (10) Name=...". */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "daemon/controller/domain/mail.h"

/* Slurm's elapsed form: HH:MM:SS, or D-HH:MM:SS from a day on. */
static void
mail_elapsed(int64_t ms, char *buf, size_t len)
{
	int64_t s = ms > 0 ? ms / 1000 : 0;

	if (s >= 86400)
		snprintf(buf, len, "%" PRId64 "-%02" PRId64 ":%02" PRId64
		    ":%02" PRId64, s / 86400, s / 3600 % 24, s / 60 % 60,
		    s % 60);
	else
		snprintf(buf, len, "%02" PRId64 ":%02" PRId64 ":%02" PRId64,
		    s / 3600, s / 60 % 60, s % 60);
}

static const char *
mail_event_text(uint32_t event)
{
	switch (event) {
	case JOB_MAIL_BEGIN:
		return "Began";
	case JOB_MAIL_END:
		return "Ended";
	case JOB_MAIL_FAIL:
		return "Failed";
	case JOB_MAIL_REQUEUE:
		return "Requeued";
	case JOB_MAIL_TIME_LIMIT:
		return "Reached time limit";
	case JOB_MAIL_TIME_LIMIT_90:
		return "Reached 90% of time limit";
	case JOB_MAIL_TIME_LIMIT_80:
		return "Reached 80% of time limit";
	case JOB_MAIL_TIME_LIMIT_50:
		return "Reached 50% of time limit";
	}
	return "unknown";
}

char *
mail_subject(const struct job *job, uint32_t event, int64_t now, char *buf,
    size_t len)
{
	char who[64], t[32];
	int64_t end;
	int n;

	if (job->array_id != 0)
		snprintf(who, sizeof(who), "Slurm Array Task Job_id=%" PRIu64
		    "_%u (%" PRIu64 ")", job->array_id, job->array_task,
		    job->id);
	else
		snprintf(who, sizeof(who), "Slurm Job_id=%" PRIu64, job->id);
	n = snprintf(buf, len, "%s Name=%s %s", who,
	    job->spec.name != NULL ? job->spec.name : "", mail_event_text(event));
	if (n < 0 || (size_t)n >= len)
		return buf;
	if (event == JOB_MAIL_BEGIN) {
		mail_elapsed(job->start_ms - job->submit_ms, t, sizeof(t));
		snprintf(buf + n, len - (size_t)n, ", Queued time %s", t);
		return buf;
	}
	/* A job that never ran has run for nothing (as Slurm says of one
	 * cancelled while pending). */
	end = job->end_ms != 0 ? job->end_ms : now;
	mail_elapsed(job->start_ms != 0 ? end - job->start_ms : 0, t,
	    sizeof(t));
	if (event == JOB_MAIL_END || event == JOB_MAIL_FAIL)
		snprintf(buf + n, len - (size_t)n, ", Run time %s, %s, "
		    "ExitCode %d", t, job_state_name(job->state),
		    job->has_exit ? (int)job->exit_code : 0);
	else
		snprintf(buf + n, len - (size_t)n, ", Run time %s", t);
	return buf;
}

static void
mail_send(const struct outbox *out, const struct job *job, uint32_t event,
    int64_t now)
{
	char subject[MAIL_SUBJECT_MAX];

	mail_subject(job, event, now, subject, sizeof(subject));
	out->ops->mail(out->ctx, job->id, job->spec.mail_user != NULL ?
	    job->spec.mail_user : job->user, subject);
}

void
mail_transition(const struct outbox *out, enum job_state from,
    const struct job *job, int64_t now)
{
	uint32_t want = job->spec.mail_type;
	enum job_state to = job->state;
	bool failed;

	if (want == 0 || out == NULL || out->ops->mail == NULL || from == to)
		return;
	if (to == JOB_RUNNING && (from == JOB_PENDING ||
	    from == JOB_RESTARTING)) {
		if (want & JOB_MAIL_BEGIN)
			mail_send(out, job, JOB_MAIL_BEGIN, now);
	} else if ((to == JOB_PENDING || to == JOB_RESTARTING) &&
	    (from == JOB_RUNNING || from == JOB_RESIZING)) {
		if (want & JOB_MAIL_REQUEUE)
			mail_send(out, job, JOB_MAIL_REQUEUE, now);
	} else if (job_state_is_final(to) && !job_state_is_final(from)) {
		failed = to == JOB_FAILED || to == JOB_TIMEOUT;
		if (failed && (want & JOB_MAIL_FAIL))
			mail_send(out, job, JOB_MAIL_FAIL, now);
		else if (want & JOB_MAIL_END)
			mail_send(out, job, JOB_MAIL_END, now);
	}
}

void
mail_time_limit(const struct outbox *out, const struct job *job,
    int64_t since, int64_t now)
{
	static const struct {
		uint32_t event;
		int64_t percent;
	} marks[] = {
		{ JOB_MAIL_TIME_LIMIT_50, 50 },
		{ JOB_MAIL_TIME_LIMIT_80, 80 },
		{ JOB_MAIL_TIME_LIMIT_90, 90 },
		{ JOB_MAIL_TIME_LIMIT, 100 },
	};
	int64_t limit_ms, at;
	size_t i;

	if ((job->spec.mail_type & (JOB_MAIL_TIME_LIMIT |
	    JOB_MAIL_TIME_LIMIT_90 | JOB_MAIL_TIME_LIMIT_80 |
	    JOB_MAIL_TIME_LIMIT_50)) == 0 || out == NULL ||
	    out->ops->mail == NULL || job->state != JOB_RUNNING ||
	    job->spec.time_limit_s == 0 || job->start_ms == 0)
		return;
	limit_ms = (int64_t)job->spec.time_limit_s * 1000;
	for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		if ((job->spec.mail_type & marks[i].event) == 0)
			continue;
		at = job->start_ms + limit_ms / 100 * marks[i].percent +
		    limit_ms % 100 * marks[i].percent / 100;
		if (at > since && at <= now)
			mail_send(out, job, marks[i].event, now);
	}
}
