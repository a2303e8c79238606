/* Listings of arrays as squeue shows them: an array's PENDING tasks that
 * wait for the same reason fold into one row "12_[8-99]" (with "%N"
 * when it is throttled), while tasks that run (or hold an allocation,
 * or have ended) keep a row each, "12_7". */
#ifndef COHORT_CLIENT_ARRAYS_H
#define COHORT_CLIENT_ARRAYS_H

#include <stddef.h>

#include "lib/job.h"

struct arrays_row {
	const struct job *job;	/* the row's job; for a fold, its first
				 * task (borrowed) */
	char *id;		/* "12", "12_7", "12_[8-99%2]"; malloc'd */
	size_t ntasks;		/* tasks in the row: 1 unless folded */
};

/* The rows for jobs[0..n) (in id order, borrowed): in that order, a
 * fold where its first task was. 0 with *rows (free with
 * arrays_rows_free) and *nrows, or -1 (ENOMEM). */
int arrays_fold(const struct job *const *jobs, size_t n,
    struct arrays_row **rows, size_t *nrows);
void arrays_rows_free(struct arrays_row *rows, size_t n);

#endif
