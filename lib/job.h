/* The job as the whole project sees it: the spec a user submits (docs/SPEC.md,
 * "submit options"), its validation, and the job record around it.
 * No protobuf, SQLite or libevent here: lib/wire.c translates to the wire,
 * daemon/controller/store/store.c to the database. */
#ifndef COHORT_JOB_H
#define COHORT_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/container.h"
#include "lib/err.h"

enum job_state {
	JOB_PENDING = 1,
	JOB_RUNNING,
	JOB_RESTARTING,
	JOB_RESIZING,
	JOB_COMPLETED,
	JOB_FAILED,
	JOB_CANCELLED,
	JOB_TIMEOUT,
};

enum topo_mode {
	TOPO_ANY = 0,
	TOPO_REQUIRED,
	TOPO_PREFERRED,
};

enum role {
	ROLE_NONE = 0,
	ROLE_USER = 1 << 0,
	ROLE_ADMIN = 1 << 1,
	ROLE_AGENT = 1 << 2,
	/* The controller's own certificate: clients and agents accept a
	 * server only with this role, and it is nobody's client role. */
	ROLE_CONTROLLER = 1 << 3,
};

/* Who is asking: from the peer certificate (lib/tls.c). */
#define PEER_NAME_MAX 64
#define JOB_AVOID_MAX 16	/* nodes one restart leaves out */

/* A name as a certificate may carry it (a node, a user, a switch): a
 * letter or digit, then letters, digits, '.', '_' and '-', at most
 * PEER_NAME_MAX bytes. */
bool peer_name_ok(const char *s);

struct peer {
	char name[PEER_NAME_MAX + 1];
	enum role role;
};

/* Defaults and bounds of the spec. */
#define JOB_DEFAULT_PRIORITY 100
#define JOB_PRIORITY_MAX 1000000
#define JOB_DEFAULT_MAX_RESTARTS 3
#define JOB_MAX_RESTARTS_LIMIT 1000
#define JOB_DEFAULT_CKPT_SECS 60
#define JOB_NAME_MAX 128
#define JOB_NODES_LIMIT 100000
#define JOB_GPUS_PER_NODE_LIMIT 1024
#define JOB_TASKS_PER_NODE_LIMIT 1024
#define JOB_ARGC_LIMIT 4096
#define JOB_ARGV_BYTES_LIMIT (256 * 1024)
#define JOB_ENV_LIMIT 1024
#define JOB_ENV_BYTES_LIMIT (256 * 1024)
#define JOB_PATH_MAX 4096
#define JOB_SCRIPT_DEFAULT_MAX (1024 * 1024)
/* --queue: a queue's name at most (daemon/controller/domain/queues.h). */
#define JOB_QUEUE_MAX 64
/* --idempotency-key: at most this many of [A-Za-z0-9._:-]. */
#define JOB_IDEM_KEY_MAX 64
/* The fingerprint of a keyed submit's request: SHA-256. */
#define JOB_IDEM_FP_LEN 32

struct job_spec {
	char *name;		/* never NULL after validation */
	uint32_t nodes_min;	/* default 1 */
	uint32_t nodes_max;	/* == nodes_min unless elastic */
	uint32_t gpus_per_node; /* 0: all GPUs of a node */
	uint32_t tasks_per_node; /* default 1 */
	char *gpu_type;		/* NULL: any */
	uint64_t time_limit_s;	/* 0: none */
	int32_t priority;	/* default JOB_DEFAULT_PRIORITY */
	enum topo_mode topo_mode;
	char *topo_level;	/* NULL unless topo_mode != TOPO_ANY */
	char *checkpoint_dir;	/* NULL: none */
	uint32_t max_restarts;	/* default 3 */
	int ckpt_signal;	/* default SIGUSR1 */
	uint32_t ckpt_secs;	/* default 60 */
	uint64_t hang_timeout_s; /* 0: off */
	char **env;		/* "KEY=VALUE" */
	size_t nenv;
	char *workdir;		/* NULL: the user's home on the node */
	char **argv;		/* command, or the script's arguments */
	size_t argc;
	char *script;		/* batch script text, or NULL */
	size_t script_len;
	char *script_name;	/* the script's file name, or NULL */
	char *queue;		/* NULL: the submitter's default queue;
				 * set by the controller at submit */
	bool service;		/* --service: no time limit, restarted on
				 * any exit with back-off, not counted */
	/* The daily workflow. */
	char *array;		/* --array as given ("0-99:4%8"); NULL: not
				 * an array. The controller expands it into
				 * one job per task at submit (lib/array.h) */
	char *dependency;	/* --dependency as given; NULL: none
				 * (lib/depend.h) */
	char *output;		/* -o pattern (%j %A %a %t %n %x); NULL: the
				 * agent's spool (cohort logs) */
	char *error;		/* -e pattern; NULL: with stdout */
	char *nodelist;		/* --nodelist hostlist; NULL: any node */
	char *exclude;		/* --exclude hostlist; NULL: none */
	bool cpu_only;		/* --gpus-per-node 0: the tasks get no GPU */
	bool exclusive;		/* --exclusive: whole nodes, shared with no
				 * other job */
	bool hold;		/* --hold: submitted held (JobHeldUser) */
	/* Constraints. */
	char *constraint;	/* --constraint feature expression
				 * (lib/constraint.h); NULL: any node */
	uint64_t gpu_memory_mb;	/* --gpu-memory: every GPU of a node has at
				 * least this much; 0: no minimum */
	/* CPUs and memory next to the GPUs. */
	uint32_t cpus_per_task;	/* --cpus-per-task: cores each task is bound
				 * to, on its GPUs' NUMA node(s); 0: no
				 * binding */
	uint64_t mem_per_node_mb;	/* --mem-per-node: the job's memory
				 * limit on each node (cgroup v2
				 * memory.max), MiB; 0: none */
	/* Blocks. */
	uint32_t segment;	/* --segment: nodes per segment, each segment
				 * inside one block of the topology; 0: none */
	/* Idempotent submits. */
	char *idem_key;		/* --idempotency-key: a submit with the key
				 * of one of its user's jobs creates nothing
				 * and gets that job; NULL: none */
	/* What the submit that made the key asked for (wire.h's
	 * wire_spec_fingerprint), so that the key sent again with another
	 * request is refused rather than answered with this job. Kept
	 * through updates: it is the submit's, not the spec's now. */
	bool has_idem_fp;	/* false: none (no key, or older jobs) */
	unsigned char idem_fp[JOB_IDEM_FP_LEN];
	/* The submitter's umask, which the tasks start with (Slurm's
	 * SLURM_UMASK): their -o/-e files and what they create are as
	 * private as the user's own. At most JOB_UMASK_MAX. */
	bool has_umask;		/* false: not given (an older client or
				 * job): the agent uses its safe default */
	uint32_t umask;
	/* The host the submit came from (Slurm's SLURM_SUBMIT_HOST); NULL:
	 * not known (an older client or job). At most JOB_SUBMIT_HOST_MAX
	 * letters, digits, '.', '_' and '-'. */
	char *submit_host;
	/* A batch job (sbatch, cohort batch): the script runs
	 * once, on the allocation's first node (the batch host); the other
	 * nodes and every GPU are held for its steps (srun). false: the
	 * command or script runs once per task on every node. */
	bool batch;
	/* Who a batch job's checkpoint signal reaches (enum
	 * job_signal_scope): sbatch --signal B: its script, without B: its
	 * steps' tasks; --checkpoint-signal all of them. */
	int signal_scope;
	/* --begin: not started before this (ms since the epoch); 0: no
	 * such wait. */
	int64_t begin_ms;
	/* sbatch -A/--account, --qos: names the controller maps to a queue
	 * at submit (queues.c); NULL: none. Not stored. */
	char *account;
	char *qos;
	/* Mail (sbatch --mail-type, --mail-user): the JOB_MAIL_* events
	 * the controller's mail_program is run for (0: none), and who gets
	 * it (NULL: the job's user). */
	uint32_t mail_type;
	char *mail_user;
	/* An interactive allocation (salloc): a batch job whose own task
	 * only holds the nodes while salloc runs a shell where it was
	 * submitted; never restarted, and ended when salloc's keepalives
	 * stop (daemon/controller/domain/alloc.h). */
	bool interactive;
	/* --on-straggler (enum job_straggler): a rank slower than its
	 * peers is reported, or its node's ranks moved at the next
	 * checkpoint. */
	int on_straggler;
	/* The image the tasks run in and how (lib/container.h); image
	 * NULL: none, on the node as it is. */
	struct job_container ctr;
};

/* The values of StragglerAction (proto/cohort.proto). */
enum job_straggler {
	JOB_STRAGGLER_REPORT = 0,
	JOB_STRAGGLER_REPLACE = 1,
};

/* --begin's latest: the start of the year 3000, in ms since the epoch. */
#define JOB_BEGIN_MS_MAX 32503680000000LL

/* The bits of mail_type, as Slurm's --mail-type names them. ALL is
 * Slurm's ALL less what Cohort has not (INVALID_DEPEND, STAGE_OUT). */
#define JOB_MAIL_BEGIN		0x001u	/* the job began running */
#define JOB_MAIL_END		0x002u	/* it ended, however */
#define JOB_MAIL_FAIL		0x004u	/* it ended FAILED or TIMEOUT */
#define JOB_MAIL_REQUEUE	0x008u	/* requeued or restarting */
#define JOB_MAIL_TIME_LIMIT	0x010u	/* reached its time limit */
#define JOB_MAIL_TIME_LIMIT_90	0x020u
#define JOB_MAIL_TIME_LIMIT_80	0x040u
#define JOB_MAIL_TIME_LIMIT_50	0x080u
#define JOB_MAIL_ARRAY_TASKS	0x100u	/* each array task for itself */
#define JOB_MAIL_ALL	(JOB_MAIL_BEGIN | JOB_MAIL_END | JOB_MAIL_FAIL | \
	JOB_MAIL_REQUEUE)
#define JOB_MAIL_KNOWN		0x1ffu
/* The longest --mail-user: an address (RFC 5321 allows 254). */
#define JOB_MAIL_USER_MAX	254

/* The values of SignalScope (proto/cohort.proto). */
enum job_signal_scope {
	JOB_SIGNAL_ALL = 0,
	JOB_SIGNAL_BATCH = 1,
	JOB_SIGNAL_STEPS = 2,
};

/* The longest submit host: a host name (HOST_NAME_MAX is 64 on Linux,
 * a fully qualified name up to 255). */
#define JOB_SUBMIT_HOST_MAX 255

/* The largest umask: the permission bits. */
#define JOB_UMASK_MAX 0777U

/* The most cores a node's tasks of one job may be bound to
 * (--cpus-per-task x --tasks-per-node): the agent's CPU sets hold
 * CPU_SETSIZE (1024) CPUs. */
#define JOB_CPUS_PER_NODE_MAX 1024U
/* --mem-per-node's largest value (1 PiB in MiB), as --gpu-memory's. */
#define JOB_MEM_PER_NODE_MB_MAX (1024ULL * 1024 * 1024)

/* --gpu-memory's largest value (1 PiB), so that GiB to MiB cannot
 * overflow and SQLite's signed integer holds it. */
#define JOB_GPU_MEMORY_MB_MAX (1024ULL * 1024 * 1024)

/* Whether a GPU of gpu_mb MiB meets --gpu-memory want_mb. Both count in
 * whole GiB, the GPU's rounded to the nearest: cards are sold by a round
 * figure and report a little less (an H100 80GB has 81,559 MiB), and
 * --gpu-memory 80 must take it. */
bool	job_gpu_memory_ok(uint64_t gpu_mb, uint64_t want_mb);

/* Whether a node of ncpus CPUs and memory_mb MiB can hold the job's
 * tasks on it: --cpus-per-task x --tasks-per-node CPUs and
 * --mem-per-node. A node that reports neither (0) holds a job that asks
 * for none. */
bool	job_node_cpus_ok(const struct job_spec *spec, uint32_t ncpus);
bool	job_node_mem_ok(const struct job_spec *spec, uint64_t memory_mb);

/* Why a pending job is held (cohort hold / --hold), as Slurm's
 * JobHeldUser and JobHeldAdmin: a user may release only their own hold. */
enum job_hold {
	JOB_HOLD_NONE = 0,
	JOB_HOLD_USER = 1,
	JOB_HOLD_ADMIN = 2,
};

/* One node's share of a job's allocation. */
#define PLACE_MAX_GPUS 64

struct placement {
	char node[PEER_NAME_MAX + 1];
	unsigned node_rank;
	unsigned ngpus;
	unsigned gpus[PLACE_MAX_GPUS];	/* node-local indices */
};

/* A task as an agent reports it to the controller. */
struct task_report {
	uint64_t job_id;
	uint32_t restart;	/* the launch attempt */
	unsigned rank;
	bool running;
	int wait_status;	/* when !running */
	char why[256];		/* when it could not start: why; else "" */
	bool permanent;		/* with why: it never can, as given (no
				 * such command, no such workdir): the
				 * job fails rather than restart */
	/* A task of a job step (srun): has_step, and rank is its rank in
	 * the step (SLURM_PROCID). Otherwise one of the job's own. */
	bool has_step;
	uint32_t step;
};

/* Goodput (ETTR): the job's wall time since its first start, split by
 * what it went to, accounted up to mark_ms at every change of the job
 * (daemon/controller/domain/goodput.h) and stored with it. run_ms is all the
 * time it was RUNNING or RESIZING: productive work, the work lost (since
 * the last checkpoint, at each stop it restarts or is requeued from)
 * and the checkpoint time measured are parts of it. */
struct job_goodput {
	int64_t first_start_ms;		/* 0: never ran */
	int64_t mark_ms;		/* accounted up to */
	uint64_t run_ms;
	uint64_t lost_ms;		/* of run_ms */
	uint64_t restart_ms;		/* RESTARTING: failure seen to
					 * running again */
	uint64_t wait_ms;		/* PENDING after a first start
					 * (preempted, requeued) */
	uint64_t ckpt_ms;		/* of run_ms: checkpoint signal to
					 * the new LATEST */
	uint64_t ckpt_cost_ms;		/* the last one measured; 0: none */
};

/* The split as of one moment: the parts add up to the wall time since
 * the first start. */
struct job_goodput_view {
	bool set;			/* false: not sent (older peer) */
	double ettr;			/* productive / wall; 0..1 */
	uint64_t productive_ms;
	uint64_t lost_ms;
	uint64_t restart_ms;
	uint64_t wait_ms;
	uint64_t ckpt_ms;
	uint32_t advice_s;		/* checkpoint interval advised; 0:
					 * none */
	uint64_t ckpt_cost_ms;		/* the last checkpoint measured (the
					 * job's report, else signal to
					 * LATEST); 0: none */
};

struct job {
	uint64_t id;
	char *user;
	struct job_spec spec;
	enum job_state state;
	char *reason;		/* never NULL; "" when none */
	int64_t submit_ms;
	int64_t start_ms;	/* 0 until started */
	int64_t end_ms;		/* 0 until ended */
	uint32_t restarts;	/* restarts after failures (docs/SPEC.md) */
	uint32_t attempt;	/* launches so far: keys agent commands */
	bool has_exit;
	int32_t exit_code;
	struct placement *place;	/* current (or last) allocation */
	size_t nplace;
	/* Fault recovery (docs/SPEC.md checkpoint contract). */
	bool has_ckpt;
	uint64_t ckpt_step;
	char *ckpt_path;		/* NULL when none */
	int64_t ckpt_ms;		/* when it was reported */
	int64_t last_failure_ms;
	int64_t last_restart_ms;
	uint64_t lost_work_ms;		/* summed over failures and
					 * preemptions */
	uint32_t preemptions;		/* times preempted (memory only;
					 * the events keep each one) */
	/* The gang before the last failure, so a restart can keep its
	 * healthy nodes (controller memory only). */
	struct placement *prev_place;
	size_t nprev;
	/* The nodes the restart after attempt avoid_attempt must not use,
	 * as a hostlist ("n1,n7"; at most JOB_AVOID_MAX): stragglers' moved
	 * off (--on-straggler=replace), or one the job failed early on in
	 * two runs in a row. Placement leaves them out while the job is
	 * RESTARTING from that attempt; NULL: none (controller memory
	 * only). */
	char *avoid;
	uint32_t avoid_attempt;
	/* The node where the run of attempt early_attempt failed early
	 * (its failing rank's; jobs_early_again): the same again in the
	 * next run moves the restart off it. "": none (controller memory
	 * only). */
	char early_node[PEER_NAME_MAX + 1];
	uint32_t early_attempt;
	/* What its container image is known by ("sha256:HEX"), as the last
	 * node to prepare it said; "": not known (controller memory only:
	 * the image events keep it). */
	char image_digest[CTR_DIGEST_LEN + 1];
	/* Start back-off (controller memory only): after a start that
	 * failed for a reason that may pass, the job is not placed again
	 * before not_before_ms; backoff_ms doubles per failure and is reset
	 * once the job runs. */
	int64_t backoff_ms;
	int64_t not_before_ms;
	/* The back-off of the last early failure (a task that failed within
	 * early_fail_window of its run's start, jobs_control.c): doubles per
	 * consecutive one, 0 after a run that outlasted the window
	 * (controller memory only). */
	int64_t early_backoff_ms;
	/* As received by a client: the controller withheld env, argv and
	 * the script (private data of another user). */
	bool redacted;
	/* Arrays: a task of the array whose first task has id
	 * array_id (0: not an array task) is shown as ARRAYID_TASK. */
	uint64_t array_id;
	uint32_t array_task;	/* the task index (COHORT_ARRAY_TASK_ID) */
	uint32_t array_max;	/* %N: tasks of the array running at once;
				 * 0: no limit */
	enum job_hold hold;	/* not scheduled while held */
	/* Accounting: GPU-milliseconds of every run so far, and
	 * of those the part wasted (lost work, failed runs). */
	uint64_t gpu_ms;
	uint64_t wasted_gpu_ms;
	/* When a pending job is expected to start (the scheduler's
	 * reservation; controller memory, recomputed every pass); 0:
	 * unknown. */
	int64_t expected_start_ms;
	/* Goodput: the accumulators (stored), the split as a client
	 * received it, and the checkpoint interval advised (controller
	 * memory, recomputed every tick and before each launch; 0: none).
	 * A running job's is what its nodes were last given, at
	 * ckpt_advice_ms (goodput_advice_renew). */
	struct job_goodput gp;
	struct job_goodput_view gpv;
	uint32_t ckpt_advice_s;
	int64_t ckpt_advice_ms;
};

/* Limits that come from the controller's configuration. */
struct job_limits {
	size_t script_max;	/* bytes */
	/* Per user (daemon/controller/domain/quota.h); 0: no limit. */
	uint32_t max_pending_per_user;	/* jobs PENDING or RESTARTING */
	uint32_t submit_rate;		/* submits per second */
	uint32_t submit_burst;		/* the rate's bucket */
};

/* Set every field to its default (an empty command). */
void job_spec_init(struct job_spec *spec);
/* Free what spec owns and reinitialise it; accepts an initialised spec. */
void job_spec_clear(struct job_spec *spec);
/* Deep copy; dst must be uninitialised or cleared. 0, or -1 (ENOMEM). */
int job_spec_copy(struct job_spec *dst, const struct job_spec *src);

/* The spec's strings as text (lib/text.h). Names (--name, --gpu-type,
 * the topology level, the script's file name) and paths (--checkpoint-dir,
 * --workdir) hold no control characters; env entries and command words
 * are valid UTF-8 and may hold any (a multi-line value, `python -c`
 * code), env KEYs being checked for their letters by job_spec_validate;
 * the script is bytes without a NUL. Returns 0, or -1 with err
 * (ERR_INVALID) naming the option: "--name: control character 0x0a at
 * byte 4". --queue is a name of at most JOB_QUEUE_MAX of [A-Za-z0-9_.-].
 * job_spec_validate calls it first; the CLI calls it before it sends
 * anything. */
int job_spec_check_text(const struct job_spec *spec, struct cerr *err);
/* --idempotency-key: 1 to JOB_IDEM_KEY_MAX of [A-Za-z0-9._:-]. 0, or -1
 * with err (ERR_INVALID). */
int job_idem_key_check(const char *key, struct cerr *err);
/* A submit host: 1 to JOB_SUBMIT_HOST_MAX of [A-Za-z0-9._-], starting
 * with a letter or digit. 0, or -1 with err (ERR_INVALID). */
int job_submit_host_check(const char *host, struct cerr *err);
/* --mail-user: 1 to JOB_MAIL_USER_MAX of [A-Za-z0-9._%+@-], starting
 * with a letter, a digit or '_' (it becomes an argument of the mail
 * program: never an option). 0, or -1 with err (ERR_INVALID). */
int job_mail_user_check(const char *user, struct cerr *err);
/* --mail-type: Slurm's names, comma-separated, any case (BEGIN, END,
 * FAIL, REQUEUE, ALL, NONE, TIME_LIMIT, TIME_LIMIT_90, TIME_LIMIT_80,
 * TIME_LIMIT_50, ARRAY_TASKS) into *bits; NONE among others makes
 * it 0. 0, or -1 with err (ERR_INVALID) naming what is refused, without
 * the option's name ("unknown type 'BEGAN' (BEGIN, END, ...)"). */
int job_mail_type_parse(const char *s, uint32_t *bits, struct cerr *err);

/* Check a spec as submitted by role. A missing name is filled in from the
 * script's or the command's base name. Returns 0, or -1 with err set to
 * ERR_INVALID (or ERR_DENIED for a priority the role may not ask for)
 * and a text naming the option and what is wrong with it. */
int job_spec_validate(struct job_spec *spec, enum role role,
    const struct job_limits *limits, struct cerr *err);

/* Allocate a zeroed job with an initialised spec; NULL on ENOMEM. */
struct job *job_new(void);
/* Free a job and everything it owns; accepts NULL. */
void job_free(struct job *job);
/* Replace job's placement with a copy of place[0..n). 0 or -1 (ENOMEM). */
int job_set_placement(struct job *job, const struct placement *place,
    size_t n);
/* Where ranks live in job's current (or last) allocation: global rank R
 * runs on the node whose node_rank is R / tasks_per_node (as local rank
 * R % tasks_per_node). The placement of node name, or NULL when it holds
 * no part of the allocation. */
/* The work of job's current run (RUNNING or RESIZING) since its last
 * checkpoint, or its start, that a stop at at_ms loses; 0 otherwise. */
uint64_t job_unsaved_ms(const struct job *job, int64_t at_ms);
/* Compare two job ids (uint64_t), for qsort and bsearch. */
int job_id_cmp(const void *a, const void *b);
/* GPUs of job's current (or last) allocation, summed (saturating). */
uint32_t job_gpus(const struct job *job);
/* The job's own tasks (not its steps') on the node of node_rank: their
 * count, the first's rank in *first. tasks_per_node on every node; a
 * batch job has one, rank 0, on node_rank 0 and none elsewhere. */
unsigned job_node_ranks(const struct job *job, unsigned node_rank,
    unsigned *first);
/* All of the job's own tasks in its current allocation. */
size_t job_nranks(const struct job *job);

const struct placement *job_node_placement(const struct job *job,
    const char *node);
/* True when node holds global rank in job's current allocation (false
 * for a rank out of range, or a job holding nothing). Constant time when
 * place[] is in node_rank order, as the controller keeps it. */
bool job_rank_on_node(const struct job *job, unsigned rank,
    const char *node);

const char *job_state_name(enum job_state state);
/* Parse a state name, case-insensitively. 0 or -1 (EINVAL). */
int job_state_parse(const char *name, enum job_state *state);
/* True for COMPLETED, FAILED, CANCELLED and TIMEOUT. */
bool job_state_is_final(enum job_state state);

const char *role_name(enum role role);
enum role role_parse(const char *name);

/* A job step's command, environment (COHORT_* allowed: the agent sets
 * its own), --chdir (workdir) and name (-J), given as a spec's argv,
 * env, workdir and name: checked as a submit checks them. 0, or -1. */
int job_step_check(const struct job_spec *step, struct cerr *err);

/* Helpers for string vectors: append a copy of s. 0 or -1 (ENOMEM). */
int strv_append(char ***v, size_t *n, const char *s);
void strv_free(char **v, size_t n);
/* A copy of src[0..n) into *dst (*ndst = n): 0, or -1 (ENOMEM; *dst
 * NULL). */
int strv_copy(char ***dst, size_t *ndst, char *const *src, size_t n);

#endif
