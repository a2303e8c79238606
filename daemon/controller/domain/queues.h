/* The controller's queues (docs/SPEC.md "Queues (tenants)"): the tree from
 * cohortd.conf's [queue NAME] sections, who may submit to which, the
 * per-queue limits checked at submit, fair-share usage decayed with a
 * half-life, the scheduler core's view of the tree (sched_queue) and
 * what `cohort queues` shows. Domain code: pure, no I/O, time comes in.
 *
 * Without any [queue] section there is one queue, "default": unlimited,
 * open to every user, never preempting: the behaviour before queues. */
#ifndef COHORT_CONTROLLER_QUEUES_H
#define COHORT_CONTROLLER_QUEUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/sched/sched.h"
#include "lib/err.h"
#include "lib/job.h"

#define QUEUE_NAME_MAX JOB_QUEUE_MAX
#define QUEUE_DEFAULT_NAME "default"
/* Fair share forgets usage with this half-life unless configured
 * ([controller] fair_share_half_life), as Slurm's PriorityDecayHalfLife. */
#define QUEUES_DEFAULT_HALF_LIFE_MS (7LL * 24 * 3600 * 1000)

/* A per-model nominal quota: gpus.MODEL = N. */
struct queue_model_quota {
	char *model;		/* matched as --gpu-type matches a model */
	uint32_t gpus;
};

/* One [queue NAME] section as configured (ctl_config.c parses it). */
struct queue_def {
	char *name;
	char *parent;		/* NULL: top level */
	uint32_t gpus;		/* nominal; SCHED_UNLIMITED when not set */
	struct queue_model_quota *models;
	size_t nmodels;
	uint32_t borrow_limit;	/* SCHED_UNLIMITED: none */
	uint32_t lend_limit;	/* SCHED_UNLIMITED: none */
	uint32_t weight;	/* fair share; default 1, >= 1 */
	char **users;		/* may submit; none listed: everybody */
	size_t nusers;
	char **admins;		/* may submit, cancel any job of the queue,
				 * and raise priorities in it */
	size_t nadmins;
	/* Slurm's sbatch -A/--account and --qos names that mean this queue;
	 * none: those names mean no queue. */
	char **accounts;
	size_t naccounts;
	char **qos;
	size_t nqos;
	uint32_t max_gpus_per_job;	/* 0: no limit */
	uint64_t max_time_s;		/* 0: no limit; also the default
					 * --time of the queue's jobs */
	enum sched_preempt preempt;	/* default BORROWERS */
	uint64_t preempt_grace_s;	/* cap on the checkpoint signal's
					 * SECS when preempted; 0: none */
	uint64_t min_runtime_s;		/* not preempted before; 0: none */
};

void queue_def_clear(struct queue_def *d);

struct queues;

/* Build the tree from defs[0 .. n) (copied): n == 0 gives the one
 * "default" queue. Checks that names are unique and valid, parents
 * exist, there is no cycle, limits are consistent; NULL with err
 * (ERR_INVALID: "queue NAME: …", or ERR_INTERNAL) otherwise. */
struct queues *queues_create(const struct queue_def *defs, size_t n,
    int64_t half_life_ms, struct cerr *err);
void queues_destroy(struct queues *qs);

/* SIGHUP (ctl_reload.c): can qs take the limits of from, a tree that
 * queues_create built from the re-read file? Only when both have the
 * same queues with the same parents and the same gpus.MODEL names, in
 * the same order: 0, or -1 with err (ERR_INVALID, naming the queue and
 * saying that a restart is needed). */
int queues_compatible(const struct queues *qs, const struct queues *from,
    struct cerr *err);
/* Give qs (compatible with from) from's nominal quotas (gpus and
 * gpus.MODEL), borrow and lend limits, weights, users, admins, per-job
 * limits and preemption settings; its fair-share usage stays. from keeps
 * qs's old users and admins, to be destroyed by the caller. */
void queues_reconfigure(struct queues *qs, struct queues *from);

size_t queues_count(const struct queues *qs);
/* Index of the queue called name, or -1. */
int queues_find(const struct queues *qs, const char *name);
const struct queue_def *queues_def(const struct queues *qs, size_t q);
/* A job's queue index: 0 without configured queues; else that of its
 * queue (none recorded, as for jobs from before queues: "default"), or -1
 * when that queue is not configured. */
int queues_job_queue(const struct queues *qs, const struct job *j);
/* True when queues were configured (not just "default"). */
bool queues_configured(const struct queues *qs);

/* At submit, before jobs_submit stores the spec: resolve the job's queue
 * (spec->queue NULL: the first leaf listing who as a user or admin, else
 * the first leaf open to everybody; a cluster admin listed nowhere must
 * name one) and store its name in spec->queue; refuse (ERR_DENIED) a
 * queue who is not in, (ERR_NOT_FOUND) one that does not exist,
 * (ERR_INVALID) a queue with sub-queues, a job over the queue's
 * max_gpus_per_job (a whole-node job, whose count is not known yet, when
 * the queue has that limit) or max_time, a --service in a queue with a
 * max_time; fill in max_time as the job's --time when it has none
 * (services excepted); (ERR_DENIED) a priority above the default unless
 * who is an admin of the cluster or of the queue. Only leaves take jobs.
 * Nothing changes on -1 (err set). */
int queues_admit(const struct queues *qs, const struct peer *who,
    struct job_spec *spec, struct cerr *err);
/* May user act on every job of queue q (cancel, …) as its admin? */
bool queues_is_admin(const struct queues *qs, size_t q, const char *user);

/* ---- Fair share ---- */

/* Charge gpu_ms GPU-milliseconds of use by user in queue q at now_ms
 * (usage decays with the half-life; charging is O(depth + log users)). */
int queues_charge(struct queues *qs, size_t q, const char *user,
    double gpu_ms, int64_t now_ms);
/* Charge the usage of jobs[0 .. n) afresh, after a controller restart:
 * each job that ran (start_ms set) its GPUs (its last placement) times
 * the time it ran, to its end (ended jobs) or to now_ms, at that end or
 * now_ms; to its user in its queue (any job with queues unconfigured;
 * none of a queue that is gone). 0, or -1 (ENOMEM) with the usage
 * charged so far kept. */
int queues_rebuild(struct queues *qs, const struct job *const *jobs,
    size_t n, int64_t now_ms);
/* Decayed usage of q's subtree over its weight, relative to its
 * siblings: the sched_queue.share key (smaller first). With u the
 * decayed GPU-ms (u(t) = u(t0) * 2^(-(t - t0) / half_life)) and w the
 * weight, over the siblings S of q (q included):
 *   key(q) = 10^6 * (u(q) / sum_S u) / (w(q) / sum_S w),
 * 10^6 at its share exactly, 0 when unused (or nothing was used). */
uint64_t queues_share(const struct queues *qs, size_t q, int64_t now_ms);
/* The same for user within q, users weighing 1 among those that used q:
 * 10^6 * u(user) * n / sum u. */
uint64_t queues_user_share(const struct queues *qs, size_t q,
    const char *user, int64_t now_ms);
/* Slurm's fair-share factor 2^(-usage/share) in [0, 1], for display:
 * 1 for a queue that used nothing, 0.5 for one at its share. */
double queues_factor(const struct queues *qs, size_t q, int64_t now_ms);

/* ---- The scheduler core's view ---- */

/* The flavors: [0] NULL (every GPU), then each model named by some
 * gpus.MODEL; *n is their count (<= SCHED_FLAVORS_MAX). */
const char *const *queues_flavors(const struct queues *qs, size_t *n);
/* Fill out[0 .. queues_count) for a pass at now_ms. */
void queues_sched(const struct queues *qs, int64_t now_ms,
    struct sched_queue *out);

/* ---- What `cohort queues` shows ---- */

struct queue_row {
	char name[QUEUE_NAME_MAX + 1];
	char parent[QUEUE_NAME_MAX + 1];	/* "" at the top */
	unsigned depth;
	uint32_t nominal;	/* flavor 0; SCHED_UNLIMITED: none */
	uint32_t used;		/* GPUs held by running jobs of its subtree */
	uint32_t borrowed;	/* used beyond nominal */
	uint32_t lent;		/* of its unused nominal, used by others */
	uint32_t from_above;	/* of its children's borrowed GPUs, those
				 * not lent by their siblings: from its own
				 * nominal not given to children, or from
				 * what it borrows itself (queues.c) */
	uint32_t pending;	/* GPUs asked by its subtree's waiting jobs */
	uint32_t running_jobs, pending_jobs;
	uint32_t weight;
	double factor;		/* queues_factor */
};

/* One row per queue, parents before children (depth-first, file order),
 * from the jobs holding GPUs (used: their placements' GPUs) and those
 * waiting (pending: nodes_min * gpus_per_node; a whole-node job counts
 * node_gpus per node, the GPUs of the cluster's largest node, its size
 * being unknown before placement). Jobs of a queue not configured are in
 * no row. An inner queue without gpus has its children's nominals
 * summed. Lent: at each parent the children's borrowed GPUs come first
 * from what their siblings may lend (unused nominal, at most
 * lend_limit), shared among the lenders in proportion to that (largest
 * remainder). At every parent the children's borrowed GPUs add up to
 * what their siblings lent plus what came from above (from_above; at the
 * top level: the top queues' borrowed minus their lent, GPUs outside
 * every nominal). 0 with *rows (malloc'd, *n == queues_count), or -1
 * (ENOMEM). */
int queues_report(const struct queues *qs, const struct job *const *active,
    size_t nactive, const struct job *const *waiting, size_t nwaiting,
    uint32_t node_gpus, int64_t now_ms, struct queue_row **rows, size_t *n);
/* The same from the jobs that have not ended (jobs_list's): those
 * holding resources are active, the PENDING and RESTARTING others are
 * waiting. What `cohort queues`, /metrics and the status page show. */
int queues_report_live(const struct queues *qs, const struct job *const *live,
    size_t nlive, uint32_t node_gpus, int64_t now_ms, struct queue_row **rows,
    size_t *n);

#endif
