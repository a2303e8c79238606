/* Building and sending a job spec from submit options: shared by cohort
 * submit and cohort run, which take the same options. */
#ifndef COHORT_CLIENT_SUBMIT_H
#define COHORT_CLIENT_SUBMIT_H

#include <stddef.h>
#include <stdint.h>

#include "client/conn.h"
#include "client/output.h"
#include "lib/job.h"

/* Fill spec (initialised by the caller) from argv (argv[0] is the
 * command's name) and a script's #COHORT lines; cf gets the connection
 * flags, which may point into *words (freed with strv_free by the caller
 * in any case). Returns 0, -2 for --help, or an exit code after printing
 * why. */
int submit_prepare(int argc, char **argv, struct job_spec *spec,
    struct output_conn_flags *cf, char ***words, size_t *nwords);
/* Submit spec; *id is the new job's. EXIT_OK or an exit code after
 * printing why. */
int submit_send(const struct job_spec *spec, const struct cconn_opts *opts,
    const struct output_conn_flags *cf, uint64_t *id);
/* The options' part of cohort submit --help. */
const char *submit_options_usage(void);

#endif
