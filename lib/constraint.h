/* Node feature expressions, a subset of Slurm's --constraint: feature
 * names joined by '&' (AND) and '|' (OR), '&' binding tighter, with
 * parentheses. Slurm's matching-OR brackets ("[a|b]") and counts
 * ("a*2") are refused, not ignored: a job that asked for them would
 * otherwise run somewhere it did not mean to. Pure: no I/O, no globals,
 * only libc, so placement can call it once per node and job.
 *
 * A feature name is letters, digits, '.', '_' and '-', at most
 * CONSTRAINT_NAME_MAX characters; names compare exactly. Blanks around
 * names and operators are allowed. */
#ifndef COHORT_CONSTRAINT_H
#define COHORT_CONSTRAINT_H

#include <stdbool.h>
#include <stddef.h>

#define CONSTRAINT_NAME_MAX 64	/* one feature name */
#define CONSTRAINT_TEXT_MAX 1024	/* a whole expression */
#define CONSTRAINT_FEATURES_MAX 32	/* features of one node */

/* Whether name is a valid feature name (see above). */
bool	constraint_name_ok(const char *name);

/* Check expr's syntax. Returns 0; or -1 with errno EINVAL and one line in
 * err (which may be NULL) giving the 1-based column of the fault, e.g.
 * "at column 5: expected a feature name after '&'". */
int	constraint_parse(const char *expr, char *err, size_t errlen);

/* Whether a node with features[0..n) satisfies expr. Returns 1 or 0; -1
 * with errno EINVAL when expr does not parse (constraint_parse says
 * why). */
int	constraint_match(const char *expr, const char *const *features,
	    size_t n);

/* Call fn on each feature name that expr mentions, in order written
 * (duplicates included), stopping at the first non-zero return, which is
 * returned. expr must parse. */
int	constraint_names(const char *expr,
	    int (*fn)(const char *name, size_t len, void *arg), void *arg);

#endif
