/* What the commands acting on existing jobs share (client/control.c):
 * job arguments as users type them, and the per-job results of a
 * request naming several. */
#ifndef COHORT_CLIENT_CONTROL_H
#define COHORT_CLIENT_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client/conn.h"

/* Ids a range may span (12-20 is 9). */
#define CONTROL_RANGE_MAX 100000
/* Ids one request carries (the controller takes at most 10000). */
#define CONTROL_CHUNK 10000

/* The jobs args[0..n) name, in id order, duplicates dropped: each a job id
 * ("12") or an inclusive range ("12-20"). c (may be NULL) is the
 * connection to resolve references that need the controller (array
 * references, through client/jobref.h once merged: see
 * control_job_arg). 0 with *ids (malloc'd) and *nids, or -1 after
 * printing "cohort: CMD: ..." (a usage error). */
int control_job_ids(struct cconn *c, const char *cmd, char *const *args,
    int n, uint64_t **ids, size_t *nids);

/* Print the results of a reply ("cohort: CMD JOB: text" on stderr for
 * each refused; with verbose, "job JOB: text" on stdout for each done).
 * EXIT_OK when none was refused, else EXIT_FAILED. */
int control_print_results(const char *cmd,
    Cohort__V1__JobResult *const *res, size_t n, bool verbose);

#endif
