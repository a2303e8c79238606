/* The trace replay's shared types (tests/bench/replay*.c): see replay.c
 * for what it does and the figures it prints. */
#ifndef COHORT_REPLAY_H
#define COHORT_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/sched/sched.h"

#define GPN 8
#define MIN_LIMIT 60
#define BIG_GANG 32		/* GPUs: the "large gang" wait figure */
#define MAX_GANG 16		/* nodes: ceil(128 / 8) */
#define MAX_VARIANTS 32
#define MAX_TENANTS 32		/* queues of the tenant mode */

enum policy { P_FIFO, P_EASY, P_COHORT, P_ORACLE, NPOLICIES };

/* Tenant modes (--tenants): how the VCs share the cluster. */
enum tmode {
	T_OFF = 0,		/* no tenants: the classic policies */
	T_STATIC,		/* each VC its nominal, no borrowing */
	T_POOLED,		/* one queue (nqueues 0): today */
	T_COHORT,		/* quotas, borrowing, reclaim with checkpoints */
	T_KUEUE,		/* quotas, borrowing, reclaim without
				 * checkpoints, FIFO, no backfill */
	NTMODES
};

/* One run of the simulator: a base policy (queue order, backfill,
 * topology) plus starve_s and the tenant mode. */
struct variant {
	char name[24];
	enum policy base;
	enum tmode tenants;
	int64_t starve_s;
	int64_t gang_starve;	/* gangs >= BIG_GANG waited longer: +1 prio */
};

struct tjob {
	long long trace_id;
	int64_t submit;
	int64_t dur;
	int64_t limit;
	uint32_t gpus;
	uint32_t vc;		/* tenant (queue) index; tenants mode only */
	bool synthetic;		/* added by --big-gangs */
	/* Per run: */
	int64_t start, finish;	/* first start, finish; -1: not yet */
	int64_t seg;		/* start of the current run segment */
	int64_t done;		/* work saved before the current segment */
	int64_t pend_since;	/* when it last became pending */
	int64_t waited;		/* seconds pending, over all its waits */
	int64_t sig;		/* preemption: when it was told to stop */
	uint32_t gen;		/* bumped at every stop: stale events */
	uint32_t npreempt;
	uint32_t pvict;		/* as a preemptor: victims still stopping */
	size_t preemptor;	/* as a victim: the job it stops for */
	bool stopping;
	bool entitled;		/* within its VC's nominal at submit */
	int64_t owed;		/* entitled, before its first start: seconds
				 * pending while its VC had room for it
				 * within the nominal */
	uint32_t nplaces;
	uint32_t place_node[MAX_GANG];
	uint8_t place_mask[MAX_GANG];
};

/* The tenants: queues learnt from the VC sidecar. */
struct tenants {
	size_t n;		/* queues; the last may be "other" */
	char name[MAX_TENANTS][16];
	uint32_t nominal[MAX_TENANTS];
	uint32_t maxjob[MAX_TENANTS];	/* GPUs of its largest job */
	double share[MAX_TENANTS];	/* of the window's GPU time */
	size_t njobs[MAX_TENANTS];
	size_t folded;		/* VCs folded into "other" */
	bool other;		/* the last queue is "other" */
};

struct opts {
	const char *trace;
	int64_t from, to;
	size_t limit_jobs;
	uint32_t nodes, per_leaf;
	bool topo_leaf;
	/* --blocks / --block-size K: NVLink blocks of K nodes (0: none);
	 * --topology-block: multi-node jobs that fit one require one. */
	uint32_t block_size;
	bool topo_block;
	uint32_t torus[3];	/* --torus DIMS; [0] 0: none */
	bool torus_req;		/* --torus-required */
	bool gpu_links;
	double overestimate, spread, aging;
	uint32_t bf_max;
	bool want[NPOLICIES];
	/* --starve: extra cohort runs with these starve_s. */
	int64_t starve[MAX_VARIANTS];
	size_t nstarve;
	/* --gang-starve: extra cohort runs where a gang of >= BIG_GANG GPUs
	 * that waited longer is ordered first (its priority raised). */
	int64_t gstarve[MAX_VARIANTS];
	size_t ngstarve;
	/* --big-gangs (replay_big.c). */
	size_t big_n;
	double big_share, arrival_scale;
	uint64_t big_seed;
	/* --tenants (replay_tenants.c). */
	const char *vcfile;
	bool twant[NTMODES];
	double vc_min_share;
	int64_t grace, ckpt, min_runtime, half_life;
	bool victim_end_stop;	/* a stopping victim ends at its stop */
};

/* One policy's figures that the summaries compare. */
struct outcome {
	bool ran;
	double avg_jct, p99_bigw, util_a, avg_wait;
	double jct_small, jct_big;	/* avg JCT of < and >= BIG_GANG GPUs */
};

struct sim {
	const struct opts *o;
	const struct variant *v;
	const struct tenants *tn;
	struct tjob *jobs;
	size_t njobs;
	struct sched_node *nodes;
	struct sched_gpu *gpus;
	char (*names)[16];
	struct topo *topo;
	/* Pending jobs as the core sees them; pidx: their job index. */
	struct sched_job *pend;
	size_t *pidx;
	size_t npend, cpend;
	/* Running jobs (expected ends) and where each job sits in it. */
	struct sched_running *run;
	size_t nrun;
	size_t *runpos;
	/* Min-heap of events: (time, kind, job index, generation). */
	struct hent {
		int64_t t;
		int kind;
		size_t j;
		uint32_t gen;
	} *heap;
	size_t nheap, cheap;
	uint8_t *gone;
	int64_t t0, tw;		/* first and last submit */
	/* Queues (tenant modes but pooled). */
	struct sched_queue queues[MAX_TENANTS];
	size_t nqueues;
	uint32_t held[MAX_TENANTS];	/* GPUs held per VC */
	uint32_t pend_ent[MAX_TENANTS];	/* entitled GPUs still pending */
	double usage[MAX_TENANTS];	/* decayed GPU-seconds */
	int64_t usage_t;
	int64_t owed_t;		/* last time owed was counted */
	/* Figures. */
	size_t passes, backfilled, finished;
	size_t multi, spread;	/* multi-node starts; those over > 1 leaf */
	size_t fitblk, xblk;	/* multi-node starts that fit one block;
				 * those over > 1 block */
	size_t maxq;		/* most jobs pending at once */
	double pass_ms_max;
	size_t preemptions, misses;
	double held_gs, held_gs_a;	/* GPU-seconds held: all, window */
	double lost_gs, lost_gs_a;	/* lost to preemption: all, window */
};

/* replay.c */
void		 replay_die(const char *what);
void		*replay_xcalloc(size_t n, size_t size);
uint64_t	 replay_mix(uint64_t x);
int64_t		 replay_job_limit(const struct opts *, long long trace_id,
		    int64_t dur);
double		 replay_pct(double *v, size_t n, double p);
/* Free job j's GPUs and take it off the running list at t (an end or a
 * stop), counting the GPU-seconds it held. */
void		 replay_release(struct sim *, int64_t t, size_t j);
/* Put job j back in the pending list at t (a preempted job resumes). */
void		 replay_pend(struct sim *, int64_t t, size_t j);
/* Events: a job's end, a victim's stop, a wake-up (just a pass). */
enum { EV_END = 0, EV_STOP = 1, EV_WAKE = 2 };
void		 replay_push(struct sim *, int64_t t, int kind, size_t j);

/* replay_big.c: add o->big_n gangs of 32 and 64 GPUs carrying
 * o->big_share of the GPU time, then scale arrivals by
 * o->arrival_scale. Returns the new array (jobs is freed). */
struct tjob	*replay_big_add(const struct opts *, struct tjob *jobs,
		    size_t *njobs);

/* replay_tenants.c */
void		 replay_tenants_load(const struct opts *, struct tjob *jobs,
		    size_t njobs, struct tenants *);
void		 replay_tenants_setup(struct sim *);
void		 replay_tenants_input(struct sim *, struct sched_input *);
void		 replay_tenants_arrive(struct sim *, size_t j);
/* Before t's events: count the owed time since the last event time. */
void		 replay_tenants_owed(struct sim *, int64_t t);
/* A victim's stop event: free it, count the lost work, requeue it. */
void		 replay_tenants_stop(struct sim *, int64_t t, size_t j);
void		 replay_tenants_preempt(struct sim *, int64_t t,
		    const struct sched_result *);
void		 replay_tenants_report(const struct sim *, double wall_s);
/* Fair share's usage, brought up to t before what is held changes. */
void		 replay_tenants_account(struct sim *, int64_t t);
void		 replay_tenants_header(const struct opts *,
		    const struct tenants *);
extern const char *const replay_tmode_name[NTMODES];

#endif
