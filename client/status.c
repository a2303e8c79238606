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

void
status_job_text(const struct job *job, int64_t now_ms, char *buf,
    size_t len)
{
	const char *reason = job->reason != NULL ? job->reason : "";
	char d[32], *nodes;
	int64_t since;

	switch (job->state) {
	case JOB_PENDING:
		since = (now_ms - job->submit_ms) / 1000 * 1000;
		snprintf(buf, len, "job %llu: pending%s%s%s for %s",
		    (unsigned long long)job->id, reason[0] ? " (" : "", reason,
		    reason[0] ? ")" : "", output_duration_ms(since > 0 ?
		    (uint64_t)since : 0, d, sizeof(d)));
		return;
	case JOB_RUNNING:
	case JOB_RESIZING:
		since = (now_ms - job->start_ms) / 1000 * 1000;
		nodes = output_nodelist(job);
		snprintf(buf, len, "job %llu: %s on %s for %s",
		    (unsigned long long)job->id, job->state == JOB_RUNNING ?
		    "running" : "resizing", nodes != NULL ? nodes : "?",
		    output_duration_ms(job->start_ms > 0 && since > 0 ?
		    (uint64_t)since : 0, d, sizeof(d)));
		free(nodes);
		return;
	case JOB_RESTARTING:
		snprintf(buf, len, "job %llu: restarting%s%s%s (restart %u)",
		    (unsigned long long)job->id, reason[0] ? " (" : "", reason,
		    reason[0] ? ")" : "", job->restarts);
		return;
	default:
		snprintf(buf, len, "job %llu: %s", (unsigned long long)job->id,
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
