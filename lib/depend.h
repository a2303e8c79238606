/* Job dependencies, as sbatch(1)'s --dependency takes them:
 *
 *   after:ID[:ID...]       each job has started (or ended without)
 *   afterany:ID[:ID...]    each job has ended, however
 *   afterok:ID[:ID...]     each job has COMPLETED
 *   afternotok:ID[:ID...]  each job has ended otherwise (FAILED,
 *                          CANCELLED, TIMEOUT)
 *   aftercorr:ID[:ID...]   (arrays) task i of this array waits for task
 *                          i of array ID to complete
 *   singleton              no other job of this name and user runs
 *
 * joined by ',' (all must hold) or '?' (any may), not both. An ID is a
 * job id ("12": for an array's id, every task of it) or one task of an
 * array ("12_7"). Pure: parsing and evaluation; what the jobs are is
 * asked of the caller through a callback. */
#ifndef COHORT_DEPEND_H
#define COHORT_DEPEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

enum depend_type {
	DEPEND_AFTER = 1,
	DEPEND_AFTERANY,
	DEPEND_AFTEROK,
	DEPEND_AFTERNOTOK,
	DEPEND_AFTERCORR,
	DEPEND_SINGLETON,
};

/* Bounds of one --dependency. */
#define DEPEND_TEXT_MAX 4096
#define DEPEND_ITEMS_MAX 256

/* One condition on one job (or array, or array task). */
struct depend_item {
	enum depend_type type;
	uint64_t id;		/* 0 for singleton */
	bool has_task;		/* "ID_TASK" */
	uint32_t task;
};

struct depend {
	struct depend_item *items;
	size_t n;
	bool any;		/* joined by '?' */
	bool singleton;		/* one of the items is singleton */
};

/* Parse s into d (cleared with depend_clear). 0, or -1 with err
 * (ERR_INVALID naming --dependency and what is wrong; ERR_INTERNAL when
 * out of memory) and d empty. */
int depend_parse(const char *s, struct depend *d, struct cerr *err);
void depend_clear(struct depend *d);

/* What became of the jobs one item names (one job, or an array's
 * tasks): how many, and of those how many have started (or ended, even
 * without starting) and ended, and how many ended COMPLETED. */
struct depend_status {
	size_t n;
	size_t started;
	size_t ended;
	size_t ok;
};

struct depend_ops {
	/* Fill st for job id (task: the array's task, when has_task).
	 * -1 when there is no such job (it was forgotten): the item then
	 * holds, as in Slurm, where a dependency on a purged job is
	 * cleared. */
	int (*lookup)(void *arg, uint64_t id, bool has_task, uint32_t task,
	    struct depend_status *st);
	/* True when no other job of the same name and user holds an
	 * allocation (or is about to be given one in this pass). */
	bool (*singleton_free)(void *arg);
};

enum depend_result {
	DEPEND_SATISFIED = 1,
	DEPEND_WAIT,
	DEPEND_NEVER,
};

/* Evaluate d for a job; self_task is its array task index when it is
 * one (aftercorr names the task of the same index), self_is_task
 * whether it is. With any false: NEVER when an item can never hold,
 * SATISFIED when all do, else WAIT; with any: SATISFIED when one does,
 * NEVER when none ever can, else WAIT. When why is non-NULL it gets,
 * for WAIT or NEVER, the first item that does not hold ("afterok:12").
 * aftercorr without self_is_task counts as its plain afterok. */
enum depend_result depend_eval(const struct depend *d, bool self_is_task,
    uint32_t self_task, const struct depend_ops *ops, void *arg,
    char *why, size_t why_len);

/* An item as text: "afterok:12", "afterok:12_7", "singleton". */
void depend_item_format(const struct depend_item *it, char *buf,
    size_t len);
const char *depend_type_name(enum depend_type t);

#endif
