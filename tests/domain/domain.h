/* A controller domain in one process, without network, clock or event
 * loop: the real jobs, nodes, cluster, gang and recovery code on an
 * in-memory SQLite store, with an outbox that records every command and
 * a virtual clock. Used by the unit suites (tests/unit/check_cluster.c,
 * check_recovery.c) and by the goodput simulator (tests/bench/goodput.c).
 * Commits are explicit: domain_commit (the daemon commits once per event
 * loop round). */
#ifndef COHORT_TESTS_DOMAIN_H
#define COHORT_TESTS_DOMAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/domain/outbox.h"
#include "lib/job.h"

struct store;
struct txq;
struct jobs;
struct nodes;
struct topo;
struct suspect;
struct suspect_opts;

enum domain_cmd_kind {
	DOMAIN_LAUNCH,
	DOMAIN_PREPARE,			/* a job's image, before its launch */
	DOMAIN_STOP,
	DOMAIN_SIGNAL,
	DOMAIN_READ_LOG,
	DOMAIN_STOP_STEP,
	DOMAIN_SIGNAL_STEP,
	DOMAIN_MAIL,
	DOMAIN_ADVISE,
};

/* One command the domain sent. */
struct domain_cmd {
	enum domain_cmd_kind kind;
	uint64_t conn_id;
	char node[PEER_NAME_MAX + 1];
	uint64_t job_id;
	uint32_t attempt;
	unsigned node_rank;		/* launch */
	unsigned ngpus;			/* launch */
	unsigned nnodes;		/* launch: the gang's size */
	char resume[256];		/* launch: resume checkpoint, or "" */
	uint32_t advice_s;		/* launch, advise: checkpoint
					 * interval advised, or 0 */
	int sig;			/* signal */
	int scope;			/* signal: enum job_signal_scope */
	bool is_stderr;			/* log read: the stderr stream */
	/* Step commands (launch, stop, signal, log read): has_step and the
	 * step's id; a launch's tasks here and their first rank. */
	bool has_step;
	uint32_t step;
	unsigned step_ntasks, step_first_rank;
	/* Mail (no node, no attempt): to whom, and the subject. */
	char mail_to[JOB_MAIL_USER_MAX + 1];
	char subject[320];
	int64_t at_ms;
	/* Launch and log read: the answer still owed (answered: false). */
	outbox_done done;
	outbox_prepared prepared;
	outbox_log_done log_done;
	void *arg;
	bool answered;
};

struct domain_node {
	char name[PEER_NAME_MAX + 1];
	uint64_t conn_id;		/* 0: disconnected */
};

struct domain {
	struct store *st;
	struct txq *q;
	struct jobs *js;
	struct nodes *ns;
	struct cluster *cl;
	int64_t now;			/* the virtual clock, ms */
	struct domain_cmd *cmds;
	size_t ncmds, cap;
	unsigned passes_wanted;		/* pass_wanted calls */
	bool fail_sends;		/* launches and stops return -1 */
	struct domain_node *nodes;
	size_t nnodes;
	uint64_t next_conn;
	struct cluster_opts opts;	/* as opened (domain_restart) */
	/* Suspect nodes (domain_open_suspect); NULL: none kept. */
	struct suspect *sus;
	struct suspect_opts *sus_opts;
};

/* o may be NULL (defaults: no topology, 10 s node timeout, 60 s stop
 * timeout, any node name accepted). 0, or -1 with err. */
int domain_open(struct domain *d, const struct cluster_opts *o,
    struct cerr *err);
/* The same with suspect nodes kept (suspect.h) under so (copied). */
int domain_open_suspect(struct domain *d, const struct cluster_opts *o,
    const struct suspect_opts *so, struct cerr *err);
void domain_close(struct domain *d);

/* Register node name with ngpus simulated GPUs (spare: a hot spare);
 * its conn id, or 0 on failure (err). */
uint64_t domain_add_node(struct domain *d, const char *name, unsigned ngpus,
    bool spare, struct cerr *err);
/* Nodes node01 .. nodeN (N <= 99) of ngpus GPUs each: 0, or -1 (err). */
int domain_add_nodes(struct domain *d, unsigned n, unsigned ngpus,
    struct cerr *err);
/* The node's connection id (0: unknown or disconnected). */
uint64_t domain_conn(const struct domain *d, const char *name);
/* Reconnect a node (a new connection, registering with tasks). */
uint64_t domain_reconnect(struct domain *d, const char *name,
    const struct task_report *tasks, size_t ntasks, struct cerr *err);
void domain_disconnect(struct domain *d, const char *name);

/* Submit as user a job of nodes × gpus_per_node running "true"; spec_fn
 * (may be NULL) adjusts the spec first (strings it sets must be malloc'd:
 * the job takes them). The id, or 0 (err). */
uint64_t domain_submit(struct domain *d, const char *user, unsigned nodes,
    unsigned gpus_per_node, void (*spec_fn)(struct job_spec *, void *),
    void *arg, struct cerr *err);

/* Run a pass at the current time and commit. */
void domain_pass(struct domain *d);
/* Tick at the current time and commit. */
void domain_tick(struct domain *d);
void domain_commit(struct domain *d);
/* Advance the virtual clock. */
void domain_advance(struct domain *d, int64_t ms);

/* Answer every launch still owed: err NULL for success. The number. */
size_t domain_answer_launches(struct domain *d, const struct cerr *err);
/* Answer the image preparations still owed for job (0: any) on node
 * (NULL: any): r when err is NULL, else err. The number answered. */
size_t domain_answer_prepares(struct domain *d, uint64_t job_id,
    const char *node, const struct image_ready *r, const struct cerr *err);
/* A task exit of (job, attempt, rank) from node, and commit. */
int domain_exit(struct domain *d, const char *node, uint64_t job_id,
    uint32_t attempt, unsigned rank, int wait_status, struct cerr *err);
/* A heartbeat from node listing tasks as running (and commit). */
void domain_heartbeat(struct domain *d, const char *node,
    const struct task_report *tasks, size_t ntasks);

/* Commands of kind for job (0: any), counted from index from. */
size_t domain_count(const struct domain *d, enum domain_cmd_kind kind,
    uint64_t job_id, size_t from);
/* The last command of kind for job, or NULL. */
const struct domain_cmd *domain_last(const struct domain *d,
    enum domain_cmd_kind kind, uint64_t job_id);

const struct job *domain_job(const struct domain *d, uint64_t id);
/* The node holding node_rank of job's placement, or NULL. */
const char *domain_rank_node(const struct job *job, unsigned node_rank);

/* ---- More of the world (added for check_cluster/check_recovery) ---- */

/* The controller restarts: the cluster, jobs and nodes are rebuilt from
 * the store (what was committed), as cohortd does at start; every node
 * is disconnected until domain_reconnect. 0, or -1 with err. */
int domain_restart(struct domain *d, struct cerr *err);

/* Answer the launches still owed for job (0: any) on node (NULL: any):
 * err NULL for success. The number answered. */
size_t domain_answer_job(struct domain *d, uint64_t job_id, const char *node,
    const struct cerr *err);

/* A task report as the agent sends it (why, permanent), and commit. */
int domain_task_exit(struct domain *d, const char *node,
    const struct task_report *r, struct cerr *err);

/* A health verdict from node: the node as a whole at h (gpu < 0), or
 * node OK with GPU gpu at h. Reason is copied. And commit. */
void domain_health(struct domain *d, const char *node, enum health_state h,
    int gpu, const char *reason);
/* One heartbeat's fail-job XIDs (n of them) from node, and commit. */
void domain_xids(struct domain *d, const char *node,
    const struct xid_report *x, size_t n);
/* Rank 0's agent saw LATEST = (step, path) of (job, attempt), written
 * now; from node, and commit. */
void domain_checkpoint(struct domain *d, const char *node, uint64_t job_id,
    uint32_t attempt, uint64_t step, const char *path);
/* The same, with the job's CKPT_MS for it: cost_ms. */
void domain_checkpoint_cost(struct domain *d, const char *node,
    uint64_t job_id, uint32_t attempt, uint64_t step, const char *path,
    uint32_t cost_ms);
/* Node saw the progress file of (job, attempt) change now; and commit. */
void domain_progress(struct domain *d, const char *node, uint64_t job_id,
    uint32_t attempt);

/* The old tasks are gone (every connected node's heartbeat lists
 * nothing), a pass places what waits, and every launch is answered. */
void domain_settle(struct domain *d);
/* Time passes: every step ms a heartbeat listing nothing from every
 * connected node, then a tick, for ms. */
void domain_run_for(struct domain *d, int64_t ms, int64_t step);

/* Spec options for domain_submit's spec_fn (domain_spec_apply, with a
 * struct domain_spec as its arg): zero fields keep the default. */
struct domain_spec {
	unsigned nodes_min;		/* elastic: below the nodes asked */
	unsigned tasks_per_node;
	uint64_t time_limit_s;
	int32_t priority;		/* 0: default; -1: 0 */
	int max_restarts;		/* 0: default; -1: 0 */
	const char *checkpoint_dir;	/* copied */
	uint32_t ckpt_secs;
	uint64_t hang_timeout_s;
	const char *queue;		/* copied; NULL: none given */
	bool service;
	bool batch;			/* sbatch: the script once */
};
void domain_spec_apply(struct job_spec *spec, void *arg);

#endif
