/* Shared by the Check suites of the controller's domain (check_jobs.c,
 * check_nodes.c, check_placement.c): an in-memory store with its group
 * commit, the jobs and nodes tables on it, and three ways to make the
 * code under test meet a failure it must survive without side effects:
 * a write the database refuses (a temporary trigger, as a full disk or
 * an I/O error would), an allocation that fails, and the log lines it
 * wrote. The allocation and log hooks are the linker's --wrap (see
 * Makefile.am): the programs themselves are untouched. */
#ifndef COHORT_CTL_FIXTURE_H
#define COHORT_CTL_FIXTURE_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/nodes.h"

struct event_base;
struct store;
struct txq;

struct ctl {
	struct event_base *base;
	struct store *st;
	struct txq *q;
	struct jobs *js;
	struct nodes *ns;
	int aborts;		/* commits that failed */
#define CTL_MAX_TRIGGERS 8
	char triggers[CTL_MAX_TRIGGERS][64];
	int ntriggers;
};

/* Open everything on a fresh ":memory:" store; lim NULL: defaults (a
 * 1 MiB script, no per-user limits). Call inside the test (after Check
 * forks: one event_base per process). */
void ctl_setup(struct ctl *c, const struct job_limits *lim);
void ctl_teardown(struct ctl *c);
/* Commit what is open and run the deferred callbacks. */
void ctl_flush(struct ctl *c);
/* Drop the in-memory tables and load them again from the store, as a
 * restarted controller would: what the database holds. */
void ctl_reload(struct ctl *c);

/* From now on every op ("INSERT", "UPDATE" or "DELETE") on table fails
 * inside SQLite, until ctl_heal. */
void ctl_fail_writes(struct ctl *c, const char *table, const char *op);
void ctl_heal(struct ctl *c);
/* The one integer a query answers (a count, a column), from c's store
 * or from any store st. */
int64_t ctl_sql_int(struct ctl *c, const char *sql);
int64_t store_sql_int(struct store *st, const char *sql);

/* The nth calloc (or reallocarray) called by the linked project code
 * from now on fails with ENOMEM, 1 being the next; 0: none fails. Each
 * fires once. */
void ctl_fail_calloc(int nth);
void ctl_fail_reallocarray(int nth);

/* Log lines written (log_info, log_warnx) since the last ctl_log_clear,
 * one per line; ctl_logged: whether one holds s. */
void ctl_log_clear(void);
const char *ctl_log(void);
bool ctl_logged(const char *s);

/* A one-node job spec of argv {"true"} with the given shape. */
void ctl_spec(struct job_spec *spec, unsigned nodes_min, unsigned nodes_max,
    unsigned gpus_per_node);
/* Submit spec as user (ROLE_USER), asserting success; its id. */
uint64_t ctl_submit(struct ctl *c, const char *user, struct job_spec *spec,
    int64_t now);
/* Submit a job of n nodes x gpn GPUs and allocate it on nodes node01..
 * (GPUs 0..gpn-1); its id. running: also mark it RUNNING. */
uint64_t ctl_job_on(struct ctl *c, unsigned n, unsigned gpn, bool running,
    int64_t now);
/* Register node name with ngpus GPUs on connection conn. */
void ctl_node(struct ctl *c, const char *name, unsigned ngpus,
    uint64_t conn, int64_t now);
/* The same with features ("fp64,ib") and each GPU's memory in MiB. */
void ctl_node_features(struct ctl *c, const char *name, unsigned ngpus,
    uint64_t conn, int64_t now, const char *features, uint64_t gpu_mb);

/* d: a top-level queue called name of gpus GPUs, borrowing and lending
 * without limit, weight 1, with users and admins (the caller's arrays:
 * queues_create copies them). */
struct queue_def;
void ctl_queue_def(struct queue_def *d, const char *name, uint32_t gpus,
    char **users, size_t nusers, char **admins, size_t nadmins);

#endif
