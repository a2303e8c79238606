/* Building and sending a job spec from submit options: shared by cohort
 * submit and cohort run, which take the same options. */
#ifndef COHORT_CLIENT_SUBMIT_H
#define COHORT_CLIENT_SUBMIT_H

#include <stddef.h>
#include <stdint.h>

#include "client/conn.h"
#include "client/output.h"
#include "client/script_sbatch.h"
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
/* Read a script into spec->script and script_name: the file at path,
 * or standard input when path is NULL. 0, or -1 after printing why, cmd
 * ("sbatch") first. */
int submit_read_script(const char *cmd, const char *path,
    struct job_spec *spec);
/* sbatch's job into spec, which holds the script (submit_read_script)
 * and is otherwise as job_spec_init left it: Slurm's defaults (one node,
 * one task, no GPU, no restart after a failure unless --requeue, output
 * to slurm-%j.out, or slurm-%A_%a.out for an array, in the working
 * directory), then the script's #SBATCH and #COHORT lines (file names it
 * in messages), then cl, sbatch's command line as script_sbatch_parse
 * read it, which wins; args are the script's arguments. Every refusal
 * is printed, each where it was written, before one exit code is
 * returned: 0, or an exit code; spec is then as job_spec_init left it. */
int submit_prepare_sbatch(struct job_spec *spec, const char *file,
    const struct script_sbatch_opt *cl, size_t ncl, char *const *args,
    size_t nargs);
/* The options' part of cohort submit --help. */
const char *submit_options_usage(void);

#endif
