/* Job arrays' --array specs, as sbatch(1) takes them: indices and
 * ranges separated by commas ("0-99", "1,3,5-9", "0-99:4"), and an
 * optional "%N" throttle: at most N tasks of the array run at once
 * ("0-99%8"). Pure: no I/O. */
#ifndef COHORT_ARRAY_H
#define COHORT_ARRAY_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

/* Bounds: tasks one array may have, and the largest index (Slurm's
 * MaxArraySize is 1001 by default, up to 4000001; its largest index is
 * MaxArraySize - 1). */
#define ARRAY_TASKS_MAX 100000
#define ARRAY_INDEX_MAX 4000000

struct array_spec {
	uint32_t *idx;		/* the task indices, ascending, distinct */
	size_t n;		/* >= 1 */
	uint32_t min, max;	/* idx[0], idx[n - 1] */
	uint32_t step;		/* the gap between any two consecutive
				 * indices when it is the same for all;
				 * 0 when not (or n == 1) */
	uint32_t throttle;	/* %N; 0: no limit */
};

/* Parse s into out (which the caller clears with array_spec_clear).
 * Refuses, with err ERR_INVALID naming --array: an empty spec or item,
 * anything but digits, '-', ':', ',' and one trailing "%N", a
 * descending range, a step of 0 or a step without a range, an index
 * given twice, an index above ARRAY_INDEX_MAX, more than
 * ARRAY_TASKS_MAX tasks, a throttle of 0. 0, or -1 (err set; ERR_INTERNAL
 * when out of memory) with out empty. */
int array_parse(const char *s, struct array_spec *out, struct cerr *err);
/* Free what a is given by array_parse; accepts a zeroed one. */
void array_spec_clear(struct array_spec *a);

/* Write the ascending distinct indices idx[0..n) into buf (of len bytes,
 * always NUL-terminated when len > 0) in the form array_parse reads
 * back: consecutive runs as "5-9", evenly spaced runs of three or more
 * as "0-96:4", others one by one, comma-separated: "1,3,5-9". Returns
 * the length the whole text needs (as snprintf): buf was too small when
 * it is >= len, and then ends in "..." where room allowed. */
size_t array_format(const uint32_t *idx, size_t n, char *buf, size_t len);

#endif
