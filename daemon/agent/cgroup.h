/* A cgroup v2 per job and per task, where the node has a writable
 * cgroup v2 hierarchy ([agent] cgroup = auto | off | PATH):
 *
 *   BASE/job-JOBID.START/rank-R     one per task; the task is created
 *                                   in it (clone3 CLONE_INTO_CGROUP),
 *                                   or where the kernel cannot, its
 *                                   supervisor joins it before forking
 *                                   the task: either way the task and
 *                                   all it starts are inside from birth
 *
 * BASE is PATH (canonical: no ".", "..", "//" or trailing "/"), or with
 * auto a directory "cohort-NODE-HASH" under the agent's own cgroup
 * (from /proc/self/cgroup) on /sys/fs/cgroup when that is cgroup2, else
 * on /sys/fs/cgroup/unified (a hybrid system). HASH comes from the
 * spool's path, so two agents on one machine (a test cluster) never
 * share a BASE. A restarted agent follows the spool's records to its
 * jobs' cgroups also under the BASE of an earlier agent that ran in
 * another cgroup (same name, same mount), and removes that BASE once it
 * is empty. Whether tasks are created in their cgroups is decided once,
 * when BASE is made: a probe child is cloned into a cgroup there
 * (cgroup_clone_into_ok says what came of it; the environment variable
 * COHORT_AGENT_NO_CLONE3, set and not empty, skips the probe so that
 * tests reach the fallback). Only auto's BASE is removed at a clean
 * stop; PATH is the operator's and stays. The job's directory gets
 * memory.max from --mem-per-node when the memory controller can be
 * enabled down to BASE; where it cannot, the limit is not enforced and
 * the agent says so in its log, once.
 *
 * At the job's end on this node (every task ended: normal exit,
 * failure, cancel, time limit) cgroup_job_end kills whatever is left in
 * the job's cgroup, e.g. a daemon a task started with setsid, through
 * cgroup.kill (Linux 5.14) or else, with the tree frozen where
 * cgroup.freeze exists (5.2), SIGKILL (through a pidfd where there are
 * pidfds, 5.3) to each pid of each cgroup.procs until they are empty,
 * then removes the directories; what is still dying is
 * retried by cgroup_sweep. The job's cgroup path is kept in the spool
 * (SPOOL/jobs/JOBID.START/cgroup) for an agent that restarts.
 *
 * The directories belong to root with the usual modes: a task that runs
 * as a user cannot move itself out, nor raise its limit. Without a
 * usable hierarchy every call here is a no-op and tasks run as they
 * would without cgroups. */
#ifndef COHORT_AGENT_CGROUP_H
#define COHORT_AGENT_CGROUP_H

#include <sys/syscall.h>
#include <sys/types.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <linux/sched.h>	/* struct clone_args, CLONE_INTO_CGROUP */

#include "daemon/agent/agent_config.h"
#include "lib/err.h"

struct cgroup;

/* Find the hierarchy for mode (path for AGENT_CGROUP_PATH) and make
 * BASE. NULL when off, or when there is no writable cgroup v2 (why
 * says what was found, for the log; errno set); never fatal. */
struct cgroup *cgroup_create(enum agent_cgroup mode, const char *path,
    const char *node, const char *spool, char *why, size_t len);
/* Accepts NULL; leaves the job cgroups alone (tasks keep running), and
 * with auto removes BASE when none is left (never PATH). */
void cgroup_destroy(struct cgroup *cg);

/* BASE (borrowed). */
const char *cgroup_base(const struct cgroup *cg);
/* Whether memory.max is written (the memory controller is enabled for
 * BASE's children); when false, why (borrowed) says why not. */
bool cgroup_memory_enforced(const struct cgroup *cg, const char **why);

/* Make the job's cgroup (BASE/job-JOBID.START, kept if it exists), with
 * memory.max = mem_mb MiB when mem_mb > 0 and memory is enforced, and
 * record its path in start_dir/cgroup. path (PATH_MAX) gets it, or ""
 * with cg NULL. 0, or -1 with err (nothing left behind). */
int cgroup_job_create(struct cgroup *cg, const char *start_dir,
    uint64_t job_id, uint32_t restart, uint64_t mem_mb, char *path,
    struct cerr *err);

/* Whether tasks are created in their cgroups (cgroup_clone_into); when
 * false, why (borrowed) says why not, and the supervisor joins the
 * task's cgroup through cgroup.procs instead. False for cg NULL. */
bool cgroup_clone_into_ok(const struct cgroup *cg, const char **why);

/* Make the task's cgroup under the job's (job_path/rank-R) and put its
 * directory into dir (PATH_MAX). 0, or -1 with err. */
int cgroup_task_create(const char *job_path, unsigned rank, char *dir,
    struct cerr *err);
/* The same for a task of job step *step (job_path/step-S.rank-R; step
 * NULL: as cgroup_task_create). */
int cgroup_step_task_create(const char *job_path, const uint32_t *step,
    unsigned rank, char *dir, struct cerr *err);

/* fork(), but the child is born in the cgroup v2 directory dirfd
 * (opened O_PATH or O_RDONLY with O_DIRECTORY): clone3 with
 * CLONE_INTO_CGROUP, Linux 5.7, which costs a fork where moving a fresh
 * child by writing cgroup.procs costs some milliseconds. glibc 2.36 has
 * no wrapper; inline, so that the supervisor (tasks_child.c, where only
 * async-signal-safe calls are allowed) calls nothing but syscall(2).
 * As fork: the child's pid, 0 in the child, or -1 with errno, among
 * them ENOSYS (no clone3: an old kernel, or valgrind, or a seccomp
 * filter), E2BIG (a kernel that predates the cgroup field), EBADF
 * (dirfd is not on cgroup v2), EPERM (seccomp, or not allowed to move
 * there), EBUSY (dirfd's cgroup is not a leaf). */
static inline pid_t
cgroup_clone_into(int dirfd)
{
#if defined(SYS_clone3) && defined(CLONE_INTO_CGROUP)
	struct clone_args ca = {
		.flags = CLONE_INTO_CGROUP,
		.exit_signal = SIGCHLD,
		.cgroup = (uint64_t)dirfd,
	};

	return (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
#else
	(void)dirfd;
	errno = ENOSYS;
	return -1;
#endif
}

/* The job's cgroup recorded in start_dir/cgroup, into path (PATH_MAX),
 * if it is BASE/job-... with a canonical path and BASE is cg's or an
 * earlier agent's of this node and spool (named like cg's, on cg's
 * cgroup2 mount): the spool is not trusted to name other cgroups. 0, or
 * -1 (ENOENT: none recorded; EPERM: not one of ours, logged). */
int cgroup_job_load(const struct cgroup *cg, const char *start_dir,
    char *path);

/* The job has ended on this node: kill every process left in
 * job_path's tree, remove its directories and start_dir/cgroup (may be
 * NULL). What cannot be removed yet (processes still dying) is retried
 * by cgroup_sweep. 0 when it is gone, 1 when left to the sweep, -1 with
 * errno. */
int cgroup_job_end(struct cgroup *cg, const char *job_path,
    const char *start_dir);

/* Retry the removals cgroup_job_end left, killing again. Call from a
 * timer. */
void cgroup_sweep(struct cgroup *cg);

/* ---- the parts tested alone ---- */

/* A context on base as it is: no file system check, no controller
 * enabled, memory not enforced. For tests on a directory that stands in
 * for a cgroup. NULL when out of memory. */
struct cgroup *cgroup_create_at(const char *base);

/* Whether path is absolute and canonical: no "." or ".." component, no
 * "//", no trailing "/" (but "/"). */
bool cgroup_path_canonical(const char *path);

/* The cgroup v2 path in /proc/self/cgroup's text ("0::/a/b" line) into
 * out: "/a/b". 0, or -1 (ENOENT) without such a line. */
int cgroup_parse_self(const char *text, char *out, size_t len);

/* BASE's directory name: "cohort-NODE-XXXXXXXX", XXXXXXXX a hash of
 * spool. */
void cgroup_base_name(const char *node, const char *spool, char *out,
    size_t len);

/* Kill every process listed in dir's cgroup.procs and in those of its
 * subdirectories (depth first), SIGKILL, each file read to its end and
 * only its whole lines taken; dir frozen meanwhile where it can be
 * (then thawed), and looked at again until nothing new is listed (or
 * its cgroup.events says "populated 0"). How many processes were
 * signalled. The fallback for kernels without cgroup.kill. */
unsigned cgroup_kill_procs(const char *dir);

#endif
