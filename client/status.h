/* The one line `cohort wait` and `cohort run` keep updated on a terminal
 * while a job waits or runs: what it is doing and why ("pending:
 * Resources", "running on n[01-02] for 1m02s", "restarting: GPU 3
 * failed"). Written to stderr, redrawn in place (carriage return, erase
 * to the end of the line), and only when stderr is a terminal whose TERM
 * is not "dumb": logs and pipes see nothing of it. */
#ifndef COHORT_CLIENT_STATUS_H
#define COHORT_CLIENT_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/job.h"

struct status_line {
	bool tty;		/* stderr is a terminal: draw */
	bool shown;		/* a line is on the screen */
	char last[256];		/* what it says */
};

void status_init(struct status_line *sl);
/* What job is doing at now_ms (wall clock), for the line: "job 12:
 * pending (Resources) for 4s". */
void status_job_text(const struct job *job, int64_t now_ms, char *buf,
    size_t len);
/* Draw text (cut to the terminal's width) unless it is already shown. */
void status_show(struct status_line *sl, const char *text);
/* Erase the line, so that other output starts on a clean line. */
void status_clear(struct status_line *sl);

#endif
