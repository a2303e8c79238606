/* The output files of one task (-o/-e, lib/outpat.h), as the agent
 * opens them: expanded for the task, and whether this start truncates
 * them. */
#ifndef COHORT_AGENT_TASKOUT_H
#define COHORT_AGENT_TASKOUT_H

#include <limits.h>
#include <stdbool.h>

#include "daemon/agent/agent.h"
#include "lib/err.h"

struct taskout {
	char out[PATH_MAX];	/* stdout's file; "": the spool */
	char err[PATH_MAX];	/* stderr's; "": the spool; equal to out:
				 * the same file */
	bool out_trunc, err_trunc;
};

/* The files of global rank `rank` of l. A file is truncated on the
 * job's first launch attempt (restart 1), by the lowest rank that
 * writes to it (a file shared by ranks, "out-%j.txt", is truncated
 * once, not under the feet of a rank that has started writing), and
 * appended to on later attempts, so that a restart keeps what the
 * earlier ones wrote (sbatch truncates by default and appends with
 * --open-mode=append; a requeued Slurm job appends). 0, or -1 with err
 * (ERR_INVALID: a pattern that expands to nothing or too long a path).
 * Which ranks share a file is read from the pattern's variables (%t: none;
 * %n or %N: those of a node; else all), so the work per task does not
 * grow with the job's ranks. */
int taskout_files(const struct launch *l, unsigned rank, struct taskout *o,
    struct cerr *err);

#endif
