/* Job references as users type them (as scancel and scontrol take
 * them): "12" (a job, or for an array's id every task of it), "12_7"
 * (task 7 of array 12), "12_[1-5,9]" (some of its tasks), resolved to
 * job ids through the controller; and a job's id as shown, "12" or
 * "12_7". */
#ifndef COHORT_CLIENT_JOBREF_H
#define COHORT_CLIENT_JOBREF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client/conn.h"
#include "lib/err.h"
#include "lib/job.h"

struct jobref {
	uint64_t id;		/* the job's or the array's id */
	bool has_tasks;		/* "12_7" or "12_[...]" */
	uint32_t *tasks;	/* ascending; malloc'd */
	size_t ntasks;
};

/* Syntax only (no connection): 0, or -1 with err ERR_INVALID naming s. */
int jobref_parse(const char *s, struct jobref *r, struct cerr *err);
void jobref_clear(struct jobref *r);

/* What a reference names. */
struct jobref_ids {
	uint64_t *ids;		/* ascending; malloc'd */
	size_t n;
	uint64_t array_id;	/* the reference named a whole array ("12"
				 * for an array's id): its id; else 0 */
	uint64_t *live;		/* with array_id: its tasks that had not
				 * ended when listed (malloc'd) */
	size_t nlive;
};

/* Resolve arg on c: an array's tasks are listed (ListJobs by array_id,
 * page by page, ended ones too). "12" naming no array gives job 12
 * (whether it exists the command's own request tells). 0 with *out (free
 * with jobref_ids_clear), or -1 with err: ERR_INVALID (syntax),
 * ERR_NOT_FOUND (no such task), ERR_UNAVAILABLE (the controller went
 * away), or the controller's refusal. */
int jobref_resolve(struct cconn *c, const char *arg, struct jobref_ids *out,
    struct cerr *err);
void jobref_ids_clear(struct jobref_ids *ids);

/* Check arg's syntax for command cmd: EXIT_OK, or EXIT_USAGE after
 * printing why. *plain (may be NULL) tells whether it is a bare id
 * ("12"), which names job 12 unless 12 is an array's id. */
int jobref_check(const char *cmd, const char *arg, bool *plain);

/* Resolve arg, which must name exactly one job, for command cmd.
 * EXIT_OK with *id, or an exit code after printing why. */
int jobref_resolve_one(const char *cmd, struct cconn *c, const char *arg,
    uint64_t *id);

/* The job's id as shown: "12", or "12_7" for task 7 of array 12.
 * Returns buf. */
#define JOBREF_LEN 48
char *jobref_format(const struct job *j, char *buf, size_t len);

#endif
