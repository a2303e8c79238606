/* Slurm's sbatch options, read as the Cohort options they mean: from a
 * script's #SBATCH lines (for cohort submit and sbatch alike) and from
 * sbatch's command line. Every option sbatch takes is in one table, so
 * that a long option abbreviated as sbatch allows it (a unique prefix of
 * sbatch's own names, never of Cohort's) means what it means to sbatch,
 * and nothing is ever ignored silently: each option is mapped, accepted
 * with a warning (it cannot change what the job gets), refused with the
 * reason, or left to the sbatch command itself (--parsable, --wait...).
 *
 * Each option as "--opt value", "--opt=value", an unambiguous prefix of
 * it, "-X value", "-Xvalue", or short flags clustered ("-HQ"). An option
 * whose value sbatch makes optional takes one only after '='. */
#ifndef COHORT_CLIENT_SCRIPT_SBATCH_H
#define COHORT_CLIENT_SCRIPT_SBATCH_H

#include <stddef.h>

#include "lib/err.h"

enum script_sbatch_kind {
	SBATCH_MAP = 0,		/* a Cohort option: name, value */
	SBATCH_WARN,		/* accepted; text says why it changes nothing */
	SBATCH_REFUSE,		/* text says why not */
	SBATCH_SELF,		/* sbatch's own: name is Slurm's, value */
};

/* One option as read. */
struct script_sbatch_opt {
	enum script_sbatch_kind kind;
	const char *name;	/* MAP: Cohort's long option ("nodes");
				 * SELF: sbatch's ("parsable"); static */
	char *value;		/* its argument, or NULL for a flag */
	char orig[40];		/* as written, for messages: "-N", "--nodes" */
	char *text;		/* WARN, REFUSE: "--mem-per-cpu: not supported
				 * by Cohort (why)"; NULL otherwise */
};

/* Read the option words words[0..nwords). With rest NULL (an #SBATCH
 * line) a word that is not an option is refused; with rest (sbatch's
 * command line) the options end at the first such word or after "--",
 * and *rest is the index of the first word after them. After an option
 * sbatch does not know, the rest of the words are not read: whether it
 * takes a value cannot be told. Returns 0 with every option in the
 * order written, refusals and warnings included, in *opts (free with
 * script_sbatch_free(*opts, *n)); -1 with err only when out of memory. */
int script_sbatch_parse(char *const *words, size_t nwords, size_t *rest,
    struct script_sbatch_opt **opts, size_t *n, struct cerr *err);

/* Free what script_sbatch_parse returned; opts may be NULL. */
void script_sbatch_free(struct script_sbatch_opt *opts, size_t n);

#endif
