/* cohort show's steps of a batch job (srun inside it): fetched with
 * ListSteps, printed as one "Steps" field line each, or as a JSON array. */
#ifndef COHORT_CLIENT_SHOW_STEPS_H
#define COHORT_CLIENT_SHOW_STEPS_H

#include <jansson.h>

#include "client/conn.h"
#include "client/output.h"
#include "proto/cohort.pb-c.h"

/* The steps of job id into *rep (NULL: none, or a controller without
 * steps): EXIT_OK, or an exit code after printing why. */
int show_steps_fetch(struct cconn *c, uint64_t id,
    Cohort__V1__Envelope **rep);
/* "Steps" lines into t ("-" with none): 0 or -1. */
int show_steps_fields(struct output_table *t,
    const Cohort__V1__Envelope *rep);
/* The steps as a JSON array (empty with none), or NULL (ENOMEM). */
json_t *show_steps_json(const Cohort__V1__Envelope *rep);

#endif
