/* #SBATCH lines: a Slurm script's options, read as the Cohort options
 * they mean, so that a script written for sbatch runs unchanged where
 * the two agree, and is refused, naming the option, where they do not.
 * Nothing is ever ignored silently: an option Cohort has no meaning for
 * (--mem, --cpus-per-task, --account...) would change what the job gets
 * without the person knowing.
 *
 * Understood: -N/--nodes (N or MIN-MAX), --ntasks-per-node,
 * --gpus-per-node ([TYPE:]N), --gres=gpu[:TYPE][:N], -t/--time,
 * -J/--job-name, -o/--output, -e/--error, -a/--array, -d/--dependency,
 * --signal, --export, --requeue, --no-requeue, -w/--nodelist,
 * -x/--exclude, --exclusive, -D/--chdir, -H/--hold, -p/--partition (the
 * queue). Each as "--opt value", "--opt=value", "-X value" or "-Xvalue".
 * Long names are matched exactly: sbatch's unambiguous abbreviations
 * are refused as unknown, since a script is written once and read often. */
#ifndef COHORT_CLIENT_SCRIPT_SBATCH_H
#define COHORT_CLIENT_SCRIPT_SBATCH_H

#include <stddef.h>

#include "lib/err.h"

/* One option of an #SBATCH line, as the Cohort option it means. */
struct script_sbatch_opt {
	const char *name;	/* Cohort's long option ("nodes"); static */
	char *value;		/* its argument, or NULL for a flag */
	char orig[40];		/* as written, for messages: "-N", "--nodes" */
};

/* Translate the words of one #SBATCH line. Returns 0 with *opts (free
 * with script_sbatch_free(*opts, *n)) and *n, or -1 with err
 * (ERR_INVALID): "#SBATCH --mem: not supported by Cohort (why)",
 * "#SBATCH -N: missing argument", "#SBATCH: unexpected argument 'x'". */
int script_sbatch_parse(char *const *words, size_t nwords,
    struct script_sbatch_opt **opts, size_t *n, struct cerr *err);

/* Free what script_sbatch_parse returned; opts may be NULL. */
void script_sbatch_free(struct script_sbatch_opt *opts, size_t n);

#endif
