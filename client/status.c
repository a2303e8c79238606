#include "config.h"

#include <sys/ioctl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/output.h"
#include "client/status.h"

void
status_init(struct status_line *sl)
{
	const char *term = getenv("TERM");

	memset(sl, 0, sizeof(*sl));
	sl->tty = isatty(STDERR_FILENO) && term != NULL && term[0] != '\0' &&
	    strcmp(term, "dumb") != 0;
}

/* The terminal's width, for cutting the line (a wrapped line cannot be
 * redrawn with a carriage return). */
static size_t
status_width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
		return ws.ws_col - 1;
	return 79;
}

/* A short duration: "42s", "3m07s", "2h05m", "3d04h". */
static char *
status_duration(int64_t ms, char *buf, size_t len)
{
	int64_t s = ms > 0 ? ms / 1000 : 0;

	if (s < 60)
		snprintf(buf, len, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm%02llds", (long long)(s / 60),
		    (long long)(s % 60));
	else if (s < 86400)
		snprintf(buf, len, "%lldh%02lldm", (long long)(s / 3600),
		    (long long)(s % 3600 / 60));
	else
		snprintf(buf, len, "%lldd%02lldh", (long long)(s / 86400),
		    (long long)(s % 86400 / 3600));
	return buf;
}

void
status_job_text(const struct job *job, int64_t now_ms, char *buf,
    size_t len)
{
	const char *reason = job->reason != NULL ? job->reason : "";
	char d[32], t[64], *nodes;
	unsigned long long id = (unsigned long long)job->id;

	switch (job->state) {
	case JOB_PENDING:
		/* The wait first: the reason may be long, and the line is
		 * cut to the terminal's width. */
		status_duration(now_ms - job->submit_ms, d, sizeof(d));
		if (job->expected_start_ms > 0)
			snprintf(buf, len, "job %llu: pending %s, expected to "
			    "start %s: %s", id, d, output_time_local(
			    job->expected_start_ms, t, sizeof(t)), reason);
		else
			snprintf(buf, len, "job %llu: pending %s%s%s", id, d,
			    reason[0] ? ": " : "", reason);
		return;
	case JOB_RUNNING:
	case JOB_RESIZING:
		nodes = output_nodelist(job);
		snprintf(buf, len, "job %llu: %s %s on %s", id,
		    job->state == JOB_RUNNING ? "running" : "resizing",
		    status_duration(job->start_ms > 0 ? now_ms -
		    job->start_ms : 0, d, sizeof(d)), nodes != NULL ? nodes :
		    "?");
		free(nodes);
		return;
	case JOB_RESTARTING:
		snprintf(buf, len, "job %llu: restarting (restart %u)%s%s", id,
		    job->restarts, reason[0] ? ": " : "", reason);
		return;
	default:
		snprintf(buf, len, "job %llu: %s", id,
		    job_state_name(job->state));
	}
}

void
status_show(struct status_line *sl, const char *text)
{
	size_t w;

	if (!sl->tty || (sl->shown && strcmp(sl->last, text) == 0))
		return;
	snprintf(sl->last, sizeof(sl->last), "%s", text);
	w = status_width();
	fprintf(stderr, "\r\033[K%.*s", (int)(w < sizeof(sl->last) ? w :
	    sizeof(sl->last)), sl->last);
	fflush(stderr);
	sl->shown = true;
}

void
status_clear(struct status_line *sl)
{
	if (!sl->shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	sl->shown = false;
}
