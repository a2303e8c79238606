/* Slurm hostlists: "gpu[001-032,040]", "node[01-04],login1",
 * "rack[1-2]-n[1-4]". Pure: no I/O, no globals, only libc, so the
 * scheduler core (daemon/sched/) and the topology parser can use it.
 *
 * Grammar: a list is items separated by commas outside brackets; an item
 * is text with zero or more bracket groups; a group is a comma-separated
 * list of numbers or ranges LO-HI. A range pads to the digit count of LO
 * ("001-032" gives 001 … 032, "8-10" gives 8, 9, 10). Several groups in
 * one item expand as a product, the last group varying fastest. */
#ifndef COHORT_HOSTLIST_H
#define COHORT_HOSTLIST_H

#include <stddef.h>

/* The largest number a range may name, so widths and counts stay sane. */
#define HOSTLIST_NUM_MAX 999999999UL

/* A host name may be at most this long, expanded. */
#define HOSTLIST_NAME_MAX 255

/* Expand expr into *names (an array of *count malloc'd strings, in the
 * order written; duplicates kept). At most max names are produced.
 * Returns 0; or -1 with errno EINVAL (malformed: the reason goes to err,
 * which may be NULL, as one line), E2BIG (more than max names) or ENOMEM;
 * on failure nothing is allocated. The caller frees with hostlist_free. */
int	hostlist_expand(const char *expr, size_t max, char ***names,
	    size_t *count, char *err, size_t errlen);

/* The most node names the commands that name nodes (drain, resume,
 * nodes, node show) take in one request, all expressions together. */
#define HOSTLIST_NODES_MAX 65536

/* Expand each of exprs[0..n) (hostlists, or comma lists) as
 * hostlist_expand does, at most max names in all, into *names sorted by
 * strcmp with duplicates dropped. Returns 0 or -1 with errno as
 * hostlist_expand (EINVAL also for an empty expression; err names the
 * expression); nothing is allocated on failure. */
int	hostlist_expand_args(char *const *exprs, size_t n, size_t max,
	    char ***names, size_t *count, char *err, size_t errlen);

/* Free what hostlist_expand returned. names may be NULL. */
void	hostlist_free(char **names, size_t count);

/* Compress count names into one hostlist string: names are sorted by
 * prefix, digit width and number, duplicates dropped, and runs of
 * consecutive numbers written as ranges ("gpu[001-003,040],login1").
 * Names whose text after the trailing digits is not empty keep their
 * digits in the prefix. Returns a malloc'd string the caller frees; or
 * NULL with errno EINVAL (a name is empty or holds '[', ']' or ',') or
 * ENOMEM. count 0 gives "". */
char	*hostlist_compress(char *const *names, size_t count);

/* The same without sorting: names keep their order and duplicates, and
 * only neighbours sharing a prefix are grouped ("n[3,1-2],login1"), so
 * that hostlist_expand gives back exactly names, in order. For lists
 * whose order means something, as a job's nodes in rank order. Returns
 * and fails as hostlist_compress. */
char	*hostlist_compress_ordered(char *const *names, size_t count);

#endif
