/* Printing a job's task output as it is read through the controller:
 * `cohort logs`, and for `cohort run`, which streams every rank. */
#ifndef COHORT_CLIENT_LOGS_H
#define COHORT_CLIENT_LOGS_H

#include <stdbool.h>
#include <stdint.h>

#include "client/conn.h"

struct logs_opts {
	uint64_t id;
	uint32_t rank;		/* without all_ranks */
	uint32_t attempt;	/* launch attempt 1, 2, ...; 0: the latest
				 * (followed into the next one with follow) */
	bool is_stderr;		/* the stderr stream, else stdout */
	bool follow;		/* until the job has ended */
	bool all_ranks;		/* every rank, lines prefixed "R: " (padded
				 * to the widest rank, as srun --label) and
				 * interleaved as they arrive */
	bool bare_single;	/* all_ranks: no prefix when there is only
				 * one rank */
	const char *prefix;	/* for messages: "logs 12" */
};

/* Print o's output to stdout. An exit code (commands.h): EXIT_OK, or
 * EXIT_FAILED after saying why on stderr (a refused read, e.g. a job
 * whose output went to a file: the message says which), or
 * EXIT_UNREACHABLE. */
int logs_print(struct cconn *c, const struct logs_opts *o);

#endif
