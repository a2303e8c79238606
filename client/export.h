/* --export: which of the submitter's environment travels with a job, as
 * sbatch's --export. The default, ALL, sends the whole environment but
 * what must not travel (export.c says what and why), so that an
 * activated venv or conda environment works on the nodes; NONE sends
 * nothing but the --env variables; "VAR,VAR=value,..." sends those only
 * and "ALL,VAR=value,..." everything plus those values. */
#ifndef COHORT_CLIENT_EXPORT_H
#define COHORT_CLIENT_EXPORT_H

#include <stddef.h>

#include "lib/err.h"

/* What ALL left out that the person may not expect: values that are not
 * valid UTF-8 (the job's environment travels as text). */
struct export_note {
	size_t nskipped;
	char names[256];	/* the first of them, comma-separated */
};

/* Build a job's environment: mode (NULL means "ALL") applied to envp (a
 * NULL-terminated "K=V" vector, the submitter's environment), then the
 * --env entries extra[0..nextra) ("K=V", a later one replacing an
 * earlier one and anything exported under the same name). Each name
 * appears once in the result, which respects JOB_ENV_LIMIT and
 * JOB_ENV_BYTES_LIMIT. On success *env (a NULL-terminated vector for
 * strv_free(*env, *nenv)) and *nenv are set, note (may be NULL) says
 * what was skipped, and 0 is returned. Otherwise -1 with err: ERR_INVALID
 * for a malformed mode ("--export: ..."), or for an environment over the
 * limits (saying how big it is and to use --export NONE or a list);
 * ERR_INTERNAL for ENOMEM. Nothing is ever cut short silently. */
int export_build(const char *mode, char *const *envp, char *const *extra,
    size_t nextra, char ***env, size_t *nenv, struct export_note *note,
    struct cerr *err);

#endif
