/* cohortd's configuration file (INI):
 *
 *   [controller]
 *   listen = 127.0.0.1:7420     HOST:PORT; port 0 picks a free port
 *   port_file = PATH            optional: the bound port is written here
 *   database = PATH             the SQLite database
 *   topology = PATH             optional: topology.conf (Slurm tree syntax)
 *   node_timeout = 10s          heartbeats missed this long → node DOWN
 *   heartbeat_interval = 2s     how often agents send heartbeats
 *   stop_timeout = 60s          tasks told to stop still there after
 *                               this long drain their node; their GPUs
 *                               are not given out meanwhile
 *   interactive_grace = 5m      an salloc's job whose keepalives stopped
 *                               this long ends (TIMEOUT)
 *   interactive_idle = 10m      an srun --pty step no srun or cohort
 *                               attach asked about this long ends
 *   default_time_limit = 1d     limit assumed for jobs without --time
 *                               (durations need a unit: 500ms, 2s, 10m,
 *                               1h, 1d, or Slurm's [D-]HH:MM:SS forms)
 *   queue_order = estimate      estimate: shortest time limit first,
 *                               aged by the wait (daemon/sched/sched.h);
 *                               fifo: submit order (priority and
 *                               restarts come first either way)
 *   queue_aging = 0.25          estimate order: seconds taken off a job's
 *                               limit per second it has waited (0-1000,
 *                               up to three decimals; 0: no aging)
 *   nodes = HOSTLIST            agents that may register besides those in
 *                               the topology (Slurm hostlist syntax)
 *   accept_unknown_nodes = no   yes: any agent certificate may register
 *   fair_share_half_life = 7d   queues' fair share forgets usage with
 *                               this half-life (queues.h)
 *   starve_after = 1d           a job (of starve_min_gpus GPUs or more)
 *                               waiting longer goes before every job of
 *                               its priority that has not, oldest first
 *                               (sched_config.starve_s); 0 or off: never
 *   starve_min_gpus = 32        only jobs asking this many GPUs starve
 *                               (0: every job); docs/BENCHMARKS.md, "Big
 *                               gangs under overload", says why
 *   early_fail_window = 60s     a task failing (not for hardware) within
 *                               this long of its run's start restarts
 *                               after a back-off doubling per early
 *                               failure (1 s .. 5 min); 0s: at once
 *   mail_program = PATH         optional: run as PATH -s SUBJECT USER for
 *                               the mail jobs ask for (--mail-type);
 *                               unset: no mail
 *   [suspect]                   nodes that fail job after job (suspect.h)
 *   drain = yes                 drain a node crossing a threshold (no:
 *                               score it only)
 *   early_users = 2             ... of this many distinct users at least
 *   early_jobs = 3              distinct jobs failing early on a node and
 *   early_period = 1h           running fine elsewhere within this long
 *   hardware_failures = 2       XIDs, FAILED health, DOWN, tasks that
 *   hardware_period = 3d        would not stop, within this long (across
 *                               a resume: lemons); 0 jobs or failures: off
 *   confirm_within = 1d         how long an early failure waits for its
 *                               job to run fine elsewhere
 *   recent = 1h                 evidence this recent ranks a node last for
 *   large_gang = 16             restarts and gangs of this many nodes
 *   [queue NAME]                any number, in file order (queues.h; no
 *                               [queue]: one unlimited "default" queue)
 *   parent = NAME               a tree of any depth; none: top level
 *   gpus = N                    nominal quota (GPUs); none: unlimited
 *   gpus.MODEL = N              nominal quota of GPUs of that model
 *   borrow_limit = N | none     GPUs it may use beyond its nominal
 *   lend_limit = N | none       of its unused nominal, what others may
 *                               use (at most gpus)
 *   weight = 1                  fair share among siblings (>= 1)
 *   users = a, b c              may submit (none listed: everybody)
 *   admins = a                  may submit, cancel any job of the queue
 *                               and raise priorities in it
 *   max_gpus_per_job = N        0: no limit
 *   max_time = 1d               also the default --time of its jobs
 *   preempt = borrowers         never | lower-priority | borrowers | both
 *   preempt_grace = 5m          cap on the checkpoint signal's SECS
 *   min_runtime = 10m           its jobs are not preempted before
 *   A queue's errors name its line; those of the tree as a whole (an
 *   unknown parent, a cycle, lend_limit above gpus, ...) the line of the
 *   [queue NAME] header.
 *   [tls]
 *   ca = PATH  cert = PATH  key = PATH
 *   crl = PATH                  optional: CRLs of the CA, checked for
 *                               every peer; re-read on SIGHUP
 *   [http]                      optional: Prometheus /metrics, plain HTTP
 *   listen = 127.0.0.1:9420     (port 0 picks a free port)
 *   port_file = PATH            the bound port is written here
 *   [limits]
 *   max_frame = 4M              largest frame accepted (bytes, K/M/G)
 *   max_connections = 1024
 *   max_script = 1M             largest batch script accepted
 *   [tenants]                   what one user may do to the others
 *   max_pending_per_user = 10000  jobs waiting per user (0: no limit)
 *   submit_rate = 100           submits per second per user (0: none)
 *   submit_burst = 1000         submits in a burst above the rate
 *   page_size = 1000            jobs, nodes or events per listing reply
 *   private_data = yes          env, scripts, argv and logs only to the
 *                               owner and admins
 *   (connection admission, see etc/cohortd.conf)
 *   max_handshakes = 256        connections still in the TLS handshake
 *   max_handshakes_per_source = 64  the same from one address
 *   handshake_timeout = 5s      accept → TLS done
 *   hello_timeout = 15s         accept → Hello
 *   max_connections_per_user = 32   per user/admin identity
 *   agent_reserve = 0           slots kept for agents at least (the
 *                               nodes the controller knows count anyway)
 *   idle_timeout = 15m          users/admins: no request this long
 *   max_requests_in_flight = 64 replies owed per connection
 *   max_output_per_user = 32M   output buffered or owed to one user's
 *                               connections together; beyond it they
 *                               are not read until it drains
 *   max_output_total = 512M     the same for every user and admin
 */
#ifndef COHORT_CONTROLLER_CONFIG_H
#define COHORT_CONTROLLER_CONFIG_H

/* The bound on big gangs' wait (tuned on the big-gang replay). */
#define CTL_DEFAULT_STARVE_AFTER_MS (24LL * 3600 * 1000)
/* job_retention and event_retention (docs/SPEC.md: finished jobs stay
 * queryable for job_retention days). */
#define CTL_DEFAULT_RETENTION_MS (30ULL * 86400 * 1000)
#define CTL_MAX_RETENTION_MS (3660ULL * 86400 * 1000)
#define CTL_DEFAULT_STARVE_MIN_GPUS 32

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/controller/domain/queues.h"
#include "daemon/sched/sched.h"
#include "lib/conf.h"
#include "lib/err.h"

struct ctl_config {
	char listen_host[CONF_HOST_MAX + 1];
	uint16_t listen_port;
	bool listen_set;		/* [controller] listen given */
	char *port_file;
	char *database;
	char *ca;
	char *cert;
	char *key;
	char *crl;			/* revocation; NULL: none */
	size_t max_frame;
	unsigned max_connections;
	size_t max_script;
	/* Connection admission and the fair loop (server.h). */
	unsigned max_handshakes;
	unsigned max_handshakes_per_source;
	uint64_t handshake_timeout_ms;
	uint64_t hello_timeout_ms;
	unsigned max_connections_per_user;
	unsigned agent_reserve;
	size_t max_output_per_user;
	size_t max_output_total;
	uint64_t idle_timeout_ms;
	unsigned max_requests_in_flight;
	char *topology;			/* topology.conf; NULL: none */
	char *mail_program;		/* run as Slurm's MailProg (mailer.h);
					 * NULL: no mail */
	uint64_t node_timeout_ms;	/* heartbeats missed → DOWN */
	uint64_t stop_timeout_ms;	/* stopped tasks still there → drain */
	uint64_t interactive_grace_ms;	/* salloc unheard of → job ends */
	uint64_t interactive_idle_ms;	/* srun --pty unheard of → step ends */
	uint64_t heartbeat_ms;		/* asked of agents */
	uint64_t default_time_limit_ms;	/* for jobs without --time */
	uint64_t early_fail_window_ms;	/* 0: early failures restart at
					 * once */
	enum sched_order queue_order;	/* default SCHED_ORDER_ESTIMATE */
	uint32_t queue_aging;		/* thousandths (SCHED_AGING_UNIT) */
	bool http;			/* [http] listen given */
	char http_host[CONF_HOST_MAX + 1];
	uint16_t http_port;
	char *http_port_file;
	char **nodes;			/* sorted, no duplicates; or NULL */
	size_t nnodes;
	bool accept_unknown_nodes;
	/* [tenants] */
	uint32_t max_pending_per_user;	/* 0: no limit */
	uint32_t submit_rate;		/* per second; 0: no limit */
	uint32_t submit_burst;
	uint32_t page_size;		/* listing replies */
	bool private_data;
	/* Queues (queues.h): [queue NAME] sections in file order, and the
	 * line of each header. */
	struct queue_def *queues;
	int *queue_lines;
	size_t nqueues;
	uint64_t fair_share_half_life_ms;
	uint64_t starve_after_ms;	/* 0: off */
	uint32_t starve_min_gpus;	/* 0: every job may starve */
	uint64_t job_retention_ms;	/* finished jobs kept; 0: forever */
	uint64_t event_retention_ms;	/* events kept; 0: forever */
	int log_level;			/* LOG_LEVEL_*; default info */
	/* [straggler]: slow ranks (straggler.h); factor in percent. */
	uint32_t straggler_window;
	uint32_t straggler_windows;
	uint32_t straggler_factor_pct;
	/* [replication] (docs/REPLICATION.md); repl_id 0: not replicated,
	 * one controller on plain SQLite. */
	uint64_t repl_id;
	char repl_host[CONF_HOST_MAX + 1];	/* address: clients', peers' */
	uint16_t repl_port;
	char repl_raft_host[CONF_HOST_MAX + 1];	/* raft_address */
	uint16_t repl_raft_port;
	char *repl_data_dir;
	uint64_t repl_election_ms;
	uint64_t repl_heartbeat_ms;
	uint32_t repl_snapshot_threshold;
	/* [suspect] (suspect.h) */
	bool suspect_drain;
	uint32_t suspect_early_jobs;
	uint32_t suspect_early_users;
	uint64_t suspect_early_period_ms;
	uint32_t suspect_hardware_failures;
	uint64_t suspect_hardware_period_ms;
	uint64_t suspect_confirm_ms;
	uint64_t suspect_recent_ms;
	uint32_t suspect_large_gang;
};

/* Load path into cfg (defaults first). Returns 0, or -1 with err->text as
 * one line "PATH:LINE: what is wrong" (or "PATH: ..." for the file as a
 * whole, such as a missing required key). */
int ctl_config_load(struct ctl_config *cfg, const char *path,
    struct cerr *err);
void ctl_config_clear(struct ctl_config *cfg);

#endif
