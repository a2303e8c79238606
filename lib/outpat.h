/* Output file patterns (-o/--output, -e/--error), as sbatch(1)'s
 * "filename pattern": the agent expands them per task to open the
 * task's files, and the controller to tell `cohort logs` where a rank's
 * output went. Pure: no I/O, only libc.
 *
 * Specifiers:
 *   %%  a '%'
 *   %j  the job id (an array task's own id)
 *   %A  the array's id (an array task's first task); the job id when
 *       the job is not an array task
 *   %a  the array task's index; 4294967294 when the job is not an array
 *       task (Slurm's NO_VAL, so that a ported script sees what Slurm
 *       would have written)
 *   %t  the task's rank in the job (RANK)
 *   %n  the node's rank in the job (NODE_RANK; Slurm's "node identifier
 *       relative to the current job")
 *   %N  the node's name (Slurm's short host name)
 *   %x  the job name
 *   %u  the user name
 * A number of up to two digits between '%' and a numeric specifier pads
 * it with zeros to that many digits (at most 10), as Slurm ("%3t": 007);
 * for %N, %x and %u it is ignored. Any other specifier is kept as
 * written. A pattern holding a backslash is not expanded at all: its
 * backslashes are dropped and the rest taken literally (Slurm's "\\"). */
#ifndef COHORT_OUTPAT_H
#define COHORT_OUTPAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value %a has for a job that is not an array task. */
#define OUTPAT_NO_TASK 4294967294U

struct outpat_vars {
	uint64_t job_id;
	uint64_t array_id;	/* 0: not an array task */
	uint32_t array_task;
	unsigned rank;		/* %t */
	unsigned node_rank;	/* %n */
	const char *node;	/* %N; NULL: "" */
	const char *name;	/* %x; NULL: "" */
	const char *user;	/* %u; NULL: "" */
};

/* Expand pat into buf (len bytes, NUL-terminated). 0, or -1 with errno
 * EINVAL (pat NULL or empty, or it expands to "") or ENAMETOOLONG (the
 * result does not fit). */
int outpat_expand(const char *pat, const struct outpat_vars *v, char *buf,
    size_t len);

/* What a pattern's expansion varies with, across the ranks of one
 * start: OUTPAT_BY_RANK (it holds %t), OUTPAT_BY_NODE (%n or %N), both,
 * or 0 (every rank gets the same name). A pattern holding a backslash
 * is taken literally, so it varies with nothing. One pass over pat:
 * the agent asks this once per task instead of comparing a task's name
 * with every lower rank's, which grew with the square of the ranks. */
#define OUTPAT_BY_RANK	0x1
#define OUTPAT_BY_NODE	0x2
unsigned outpat_varies(const char *pat);

/* Which pattern a task's stream is written to: for stdout the -o
 * pattern; for stderr the -e pattern, else the -o one (stderr goes with
 * stdout, as sbatch without -e). NULL: the agent's spool (cohort logs).
 * An -e equal to -o is the same file. */
const char *outpat_for(const char *output, const char *error,
    bool is_stderr);

#endif
