/* What Slurm's commands, as Cohort answers them, share: Slurm's error
 * lines, its option errors, its job lists (-j 12,13_2), and the jobs
 * and nodes fetched from the controller. squeue and sacct live in
 * client/slurm_query.c, sinfo in client/slurm_sinfo.c, scontrol and
 * scancel in client/slurm_control.c; the format engine in
 * client/slurm_format.c. */
#ifndef COHORT_CLIENT_SLURM_QUERY_H
#define COHORT_CLIENT_SLURM_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client/conn.h"
#include "client/slurm_format.h"
#include "client/nodes_view.h"
#include "lib/err.h"
#include "lib/job.h"

int cmd_squeue(int argc, char **argv, const struct cconn_opts *opts);
int cmd_sacct(int argc, char **argv, const struct cconn_opts *opts);
int cmd_sinfo(int argc, char **argv, const struct cconn_opts *opts);
int cmd_scontrol(int argc, char **argv, const struct cconn_opts *opts);
int cmd_scancel(int argc, char **argv, const struct cconn_opts *opts);

/* "CMD: LEVEL: ..." on stderr, after stdout is flushed, as Slurm's
 * commands write them: "error", or "fatal" where Slurm's command gives
 * up with fatal(). */
void slurm_log(const char *cmd, const char *level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define slurm_error(cmd, ...)	slurm_log(cmd, "error", __VA_ARGS__)
#define slurm_fatal(cmd, ...)	slurm_log(cmd, "fatal", __VA_ARGS__)
/* A getopt_long failure (ch '?' or ':'): Slurm's message and its exit
 * code, 1. */
int slurm_option_error(const char *cmd, int ch, char *const *argv);

/* After getopt: 0 when no operand is left, else Slurm's error line
 * and its exit code, 1. */
int slurm_no_operands(const char *cmd, int argc, char *const *argv);

/* Connect with the settings main resolved from the environment.
 * EXIT_OK with *c, or an exit code after printing why. */
int slurm_connect(const struct cconn_opts *opts, struct cconn **c);

/* A -j/--jobs list: "12,13_2,14_[1-3]". Pure. */
struct slurm_joblist {
	struct slurm_jobsel {
		uint64_t id;		/* a job, or an array's id */
		bool task;		/* id_TASK: one task of array id */
		uint32_t lo, hi;	/* with task: the tasks named */
	} *v;
	size_t n;
	uint64_t min_id, max_id;	/* the range of jobs it can name */
};
/* 0, or -1 with err naming the bad id ("Invalid job id: x"). */
int slurm_joblist_parse(const char *s, struct slurm_joblist *l,
    struct cerr *err);
/* Appends to l; l starts zeroed. */
bool slurm_joblist_match(const struct slurm_joblist *l, const struct job *j);
void slurm_joblist_clear(struct slurm_joblist *l);

/* A comma list of words (users, partitions). Pure. */
bool slurm_word_in(const char *list, const char *word);

/* The filters squeue and sacct share (their letters differ): -j, the
 * states, -u, the partitions, the names. Starts zeroed. */
struct slurm_jobfilter {
	struct slurm_joblist jobs;
	bool has_jobs;
	unsigned states;	/* 1 << job_state; 0: the command's default */
	const char *users, *partitions, *names;	/* comma lists, or NULL */
};
/* -j: the jobs of s, in place of any before. 0, or -1 with err. */
int slurm_jobfilter_jobs(struct slurm_jobfilter *f, const char *s,
    struct cerr *err);
/* What the controller narrows itself: one user; from the lowest job
 * named. */
void slurm_jobfilter_request(const struct slurm_jobfilter *f,
    Cohort__V1__ListJobsRequest *lj);
/* j is in one of states (0: any), among the jobs named, and of the
 * users, partitions and names given. Pure. */
bool slurm_jobfilter_match(const struct slurm_jobfilter *f, unsigned states,
    const struct job *j);
void slurm_jobfilter_clear(struct slurm_jobfilter *f);
/* j belongs to user. */
bool slurm_job_of(const struct job *j, const char *user);

/* Send req and take a reply of body want. EXIT_OK with *rep (frame_free
 * it), or an exit code after printing why (an error reply prefixed by
 * cmd). */
int slurm_call(const char *cmd, struct cconn *c, Cohort__V1__Envelope *req,
    Cohort__V1__Envelope__BodyCase want, Cohort__V1__Envelope **rep);

/* The jobs the controller lists for lj (every page), ids above
 * after_id and at most up_to (0: no bound), in id order, into *v (free
 * each with job_free and v with free). EXIT_OK or an exit code after
 * printing why. */
int slurm_jobs_fetch(const char *cmd, struct cconn *c,
    Cohort__V1__ListJobsRequest *lj, uint64_t up_to, struct job ***v,
    size_t *n);
void slurm_jobs_free(struct job **v, size_t n);
/* Keep the jobs of v[0..n) that keep(arg, job) accepts, in order, and
 * free the others. Returns how many are kept. */
size_t slurm_jobs_filter(struct job **v, size_t n,
    bool (*keep)(const void *, const struct job *), const void *arg);

/* The fields squeue (-o letters, -O names) and sacct (-o names) know,
 * with Slurm's headers and widths; their default formats. */
extern const struct sfmt_def squeue_defs[];
extern const size_t squeue_ndefs;
extern const struct sfmt_def sacct_defs[];
/* sacct_defs' field ids. */
enum {
	SA_JOBID, SA_JOBIDRAW, SA_JOBNAME, SA_STATE, SA_EXITCODE, SA_ELAPSED,
	SA_NODELIST, SA_START, SA_END, SA_SUBMIT, SA_ALLOCTRES, SA_PARTITION,
	SA_USER, SA_NNODES, SA_TIMELIMIT, SA_ALLOCNODES, SA_REASON,
	SA_ALLOCCPUS, SA_ACCOUNT, SA_PRIORITY,
};

extern const size_t sacct_ndefs;
#define SQUEUE_FORMAT "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
#define SQUEUE_FORMAT_LONG "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
#define SACCT_FORMAT "JobID,JobName,Partition,Account,AllocCPUS,State," \
	"ExitCode"

/* A job's cells as squeue and sacct show them. */
#define SLURM_CELL 1024
#define SLURM_FIELDS_MAX 32	/* fields in one format */
/* EXIT_OK, or Slurm's error line and EXIT_FAILED when fmt has more
 * fields than a row holds (SLURM_FIELDS_MAX). */
int slurm_fields_check(const char *cmd, const struct sfmt *fmt);
/* The value of a command's field id for job j, shown as rowid (squeue's
 * fold of pending tasks, "12_[8-99]"; else jobref_format's), at now:
 * buf, or a constant. */
typedef const char *slurm_job_cell_fn(int id, const struct job *j,
    const char *rowid, int64_t now, char *buf, size_t len);
/* The cells of j's row in fmt (checked by slurm_fields_check), each in a
 * buffer of its own that the next call reuses. */
const char *const *slurm_job_row(const struct sfmt *fmt,
    slurm_job_cell_fn *cell, const struct job *j, const char *rowid,
    int64_t now);
/* It holds (or, ended, held) an allocation. */
bool slurm_job_placed(const struct job *j);
/* Seconds it has run (or ran), at now for a running job. */
uint64_t slurm_job_elapsed_s(const struct job *j, int64_t now);
/* Nodes it holds, or asks for while it waits. */
uint32_t slurm_job_nodes(const struct job *j);
/* CPUs as Slurm counts them: a CPU per task unless --cpus-per-task. */
uint64_t slurm_job_cpus(const struct job *j);
/* Its nodes, compressed ("node[01-02]"), into buf; "" when none. */
const char *slurm_job_nodelist(const struct job *j, char *buf, size_t len);

/* The cluster as sinfo and scontrol show it: every node, and the
 * queues that take jobs (the leaves of the queue tree) as partitions,
 * every node in each. client/slurm_sinfo.c. */
struct slurm_node {
	const Cohort__V1__Node *pb;	/* borrowed from the replies kept */
	struct nodes_view_node view;
	unsigned ncpus;
	uint64_t memory_mb;
};

struct slurm_cluster {
	struct slurm_node *nodes;	/* in name order */
	size_t nnodes;
	char **parts;			/* queue names, in the tree's order */
	size_t nparts;
	size_t default_part;		/* "default" if there is one, else 0 */
	Cohort__V1__Envelope **replies;	/* kept for the nodes' strings */
	size_t nreplies;
};

/* Fetch the nodes (and with parts, the queues). EXIT_OK, or an exit
 * code after printing why (cl is cleared then). */
int slurm_cluster_fetch(const char *cmd, struct cconn *c, bool parts,
    struct slurm_cluster *cl);
void slurm_cluster_clear(struct slurm_cluster *cl);

/* A job step as sacct and squeue -s show it: a Step of ListSteps, or a
 * batch job's script (its J.batch row, whose state, code and times are
 * the job's). client/slurm_steps.c. */
struct slurm_step {
	uint64_t job_id;
	uint32_t step_id;
	bool batch;			/* the J.batch row */
	const char *name;		/* borrowed */
	enum job_state state;
	bool node_fail;			/* shown as NODE_FAIL */
	int exit_code, exit_signal;	/* sacct's "code:signal" */
	int64_t start_ms, end_ms;	/* 0: not yet */
	char nodelist[1024];		/* compressed */
	uint32_t nnodes, ntasks, cpus, gpus;
};

/* The step of pb (borrowed strings stay pb's). 0, or -1 (ENOMEM, or a
 * state that is not a job state). */
int slurm_step_from_pb(const Cohort__V1__Step *pb, struct slurm_step *s);
/* The J.batch row of batch job j, which has started. */
void slurm_step_batch(const struct job *j, struct slurm_step *s);
/* Its id as Slurm writes it: "12.batch", "12.0"; rowid is the job's
 * (12 or 13_2). Returns buf. */
char *slurm_step_id(const struct slurm_step *s, const char *rowid,
    char *buf, size_t len);
/* The steps of jobs ids[0..n) (n 0: every running job's), in
 * *rep's list_steps_reply (frame_free it). EXIT_OK (a controller
 * that lists no steps answers none), or an exit code after printing
 * why. */
int slurm_steps_fetch(const char *cmd, struct cconn *c, const uint64_t *ids,
    size_t n, Cohort__V1__Envelope **rep);
/* sacct's cell of field id (sacct_defs) for step s of job j, whose row
 * id is rowid: buf, or a constant. */
const char *sacct_step_cell(int id, const struct slurm_step *s,
    const struct job *j, const char *rowid, int64_t now, char *buf,
    size_t len);
/* squeue -s's fields (-o %i %j %P %u %M %N), its default format, and
 * the cell of field id for step s (user and partition are its job's). */
extern const struct sfmt_def squeue_step_defs[];
extern const size_t squeue_step_ndefs;
#define SQUEUE_STEP_FORMAT "%.15i %.8j %.9P %.8u %.9M %N"
const char *squeue_step_cell(int id, const struct slurm_step *s,
    const char *user, const char *partition, int64_t now, char *buf,
    size_t len);

#endif
