/* cohortd's configuration file: its keys, their defaults and setters.
 * lib/conf.c reads the file (see there for the rules: every error names
 * the file and the line, unknown keys are errors, ...).
 *
 * Relative paths in the file (database, port_file, topology and the TLS
 * files) are taken relative to the directory that holds the
 * configuration file, not to the daemon's working directory, so that a
 * cluster directory written by cohort-local can be moved as a whole, and
 * so that a daemon that changes directory still finds its files. They
 * are stored absolute. */
#include "daemon/controller/ctl_config.h"
#include "daemon/controller/rpc/server_limits.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hostlist.h"
#include "lib/log.h"
#include "lib/job.h"
#include "daemon/controller/domain/straggler.h"

/* The defaults live here rather than in lib/frame.h, which pulls in the
 * generated protobuf header. */
#define CTL_DEFAULT_LISTEN_HOST "127.0.0.1"
#define CTL_DEFAULT_LISTEN_PORT 7420
/* [replication]: libraft's timeouts with pre-vote; a failover takes
 * about 1.5 election timeouts (docs/REPLICATION.md). */
#define CTL_DEFAULT_ELECTION_MS 1000
#define CTL_DEFAULT_RAFT_HEARTBEAT_MS 100
#define CTL_DEFAULT_SNAPSHOT_THRESHOLD 1024
#define CTL_REPL_ID_MAX (1ull << 62)
#define CTL_DEFAULT_MAX_FRAME (4u << 20)
#define CTL_MIN_MAX_FRAME (1u << 10)
#define CTL_MAX_MAX_FRAME (256u << 20)
/* 10,000 agents, their reserve, and room for users and handshakes. */
#define CTL_DEFAULT_MAX_CONNECTIONS 16384
#define CTL_MAX_MAX_CONNECTIONS 1000000
#define CTL_DEFAULT_MAX_SCRIPT (1u << 20)
#define CTL_MIN_MAX_SCRIPT (1u << 10)
#define CTL_MAX_MAX_SCRIPT (64u << 20)
/* [tenants]: defaults far above what a person or the test suite
 * submits, low enough that one user cannot fill the controller. */
#define CTL_DEFAULT_MAX_PENDING 10000
#define CTL_DEFAULT_SUBMIT_RATE 100
#define CTL_DEFAULT_SUBMIT_BURST 1000
#define CTL_DEFAULT_PAGE_SIZE 1000
#define CTL_MAX_PAGE_SIZE 10000
/* Durations: "500ms" for the timers tests shorten, up to a year. */
#define CTL_MIN_MS 100ULL
#define CTL_MAX_MS (366ULL * 86400 * 1000)

static int ctl_set_listen(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
static int ctl_set_repl_address(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int ctl_set_repl_raft(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int ctl_set_http_listen(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int ctl_set_queue_order(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int ctl_set_straggler_factor(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int ctl_set_queue_aging(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int ctl_set_nodes(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
static int ctl_set_retention(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int ctl_set_starve(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
static int ctl_q_uint(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
static int ctl_q_limit(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
static int ctl_q_secs(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
static int ctl_q_names(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
static int ctl_q_parent(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
static int ctl_q_preempt(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
static int ctl_q_model(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);

/* Bounds of a queue's numbers: a million GPUs is far beyond any cluster,
 * and keeps sums of quotas clear of SCHED_UNLIMITED. */
#define CTL_QUEUE_GPUS_MAX 1000000
#define CTL_QUEUE_WEIGHT_MAX 1000000
#define CTL_QUEUE_SECS_MAX (366ULL * 86400)

/* The most names a nodes = hostlist may expand to. */
#define CTL_NODES_MAX 100000
/* A person's output budget: at least one largest reply page. */
#define CTL_MIN_OUTPUT (4ull * 1024 * 1024)
#define CTL_MAX_OUTPUT (64ull * 1024 * 1024 * 1024)

#define FIELD(f) CONF_FIELD(struct ctl_config, f)
#define PATHKEY(sec, f, req)                                                   \
	{ .section = sec, .name = #f, .required = req,                         \
	  .set = conf_key_path, FIELD(f) }
#define MSKEY(sec, key, f)                                                     \
	{ .section = sec, .name = key, .set = conf_key_ms, FIELD(f),           \
	  .min = CTL_MIN_MS, .max = CTL_MAX_MS }
/* A key of [queue NAME], on a field of struct queue_def. */
#define QFIELD(f) CONF_FIELD(struct queue_def, f)
#define QKEY(key, setter, f, lo, hi)                                           \
	{ .section = "queue *", .name = key, .set = setter, QFIELD(f),         \
	  .min = lo, .max = hi }
#define NUMKEY(sec, f, setter, lo, hi)                                         \
	{ .section = sec, .name = #f, .set = setter, FIELD(f), .min = lo,      \
	  .max = hi }

static const struct conf_key ctl_keys[] = {
	{ .section = "controller", .name = "listen", .set = ctl_set_listen },
	PATHKEY("controller", port_file, false),
	PATHKEY("controller", database, false),	/* ctl_check_repl */
	{ .section = "controller", .name = "log_level",
	  .set = conf_key_log_level, FIELD(log_level) },
	PATHKEY("controller", topology, false),
	/* Slurm's MailProg: mail about jobs (mailer.h). */
	PATHKEY("controller", mail_program, false),
	MSKEY("controller", "node_timeout", node_timeout_ms),
	MSKEY("controller", "heartbeat_interval", heartbeat_ms),
	MSKEY("controller", "stop_timeout", stop_timeout_ms),
	/* salloc's keepalives missed this long end its job (alloc.h). */
	MSKEY("controller", "interactive_grace", interactive_grace_ms),
	MSKEY("controller", "interactive_idle", interactive_idle_ms),
	MSKEY("controller", "default_time_limit", default_time_limit_ms),
	/* Early failures back off; 0: off. */
	{ .section = "controller", .name = "early_fail_window",
	  .set = conf_key_ms, FIELD(early_fail_window_ms), .min = 0,
	  .max = CTL_MAX_MS },
	{ .section = "controller", .name = "queue_order",
	  .set = ctl_set_queue_order },
	{ .section = "controller", .name = "queue_aging",
	  .set = ctl_set_queue_aging },
	/* Which agents may register. */
	{ .section = "controller", .name = "nodes", .set = ctl_set_nodes },
	{ .section = "controller", .name = "accept_unknown_nodes",
	  .set = conf_key_bool, FIELD(accept_unknown_nodes) },
	/* Queues. */
	{ .section = "controller", .name = "fair_share_half_life",
	  .set = conf_key_ms, FIELD(fair_share_half_life_ms),
	  .min = 60000, .max = CTL_MAX_MS },
	{ .section = "controller", .name = "starve_after",
	  .set = ctl_set_starve },
	NUMKEY("controller", starve_min_gpus, conf_key_uint, 0, 1000000),
	/* History: how long finished jobs and events stay. */
	{ .section = "controller", .name = "job_retention",
	  .set = ctl_set_retention, FIELD(job_retention_ms) },
	{ .section = "controller", .name = "event_retention",
	  .set = ctl_set_retention, FIELD(event_retention_ms) },
	QKEY("parent", ctl_q_parent, parent, 0, 0),
	QKEY("gpus", ctl_q_uint, gpus, 0, CTL_QUEUE_GPUS_MAX),
	{ .section = "queue *", .name = "gpus.*", .repeatable = true,
	  .set = ctl_q_model },
	QKEY("borrow_limit", ctl_q_limit, borrow_limit, 0, CTL_QUEUE_GPUS_MAX),
	QKEY("lend_limit", ctl_q_limit, lend_limit, 0, CTL_QUEUE_GPUS_MAX),
	QKEY("weight", ctl_q_uint, weight, 1, CTL_QUEUE_WEIGHT_MAX),
	QKEY("users", ctl_q_names, users, 0, 0),
	QKEY("admins", ctl_q_names, admins, 0, 0),
	QKEY("accounts", ctl_q_names, accounts, 0, 0),
	QKEY("qos", ctl_q_names, qos, 0, 0),
	QKEY("max_gpus_per_job", ctl_q_uint, max_gpus_per_job, 0,
	    CTL_QUEUE_GPUS_MAX),
	QKEY("max_time", ctl_q_secs, max_time_s, 1, CTL_QUEUE_SECS_MAX),
	QKEY("preempt", ctl_q_preempt, preempt, 0, 0),
	QKEY("preempt_grace", ctl_q_secs, preempt_grace_s, 0,
	    CTL_QUEUE_SECS_MAX),
	QKEY("min_runtime", ctl_q_secs, min_runtime_s, 0, CTL_QUEUE_SECS_MAX),
	{ .section = "http", .name = "listen", .set = ctl_set_http_listen },
	{ .section = "http", .name = "port_file", .set = conf_key_path,
	  FIELD(http_port_file) },
	PATHKEY("tls", ca, true),
	PATHKEY("tls", cert, true),
	PATHKEY("tls", key, true),
	/* Revocation: CRLs of the CA, re-read on SIGHUP (main.c). */
	PATHKEY("tls", crl, false),
	NUMKEY("limits", max_frame, conf_key_size, CTL_MIN_MAX_FRAME,
	    CTL_MAX_MAX_FRAME),
	NUMKEY("limits", max_connections, conf_key_uint, 1,
	    CTL_MAX_MAX_CONNECTIONS),
	NUMKEY("limits", max_script, conf_key_size, CTL_MIN_MAX_SCRIPT,
	    CTL_MAX_MAX_SCRIPT),
	/* [tenants]: per-user limits, listing pages, private data. */
	NUMKEY("tenants", max_pending_per_user, conf_key_uint, 0, 100000000),
	NUMKEY("tenants", submit_rate, conf_key_uint, 0, 1000000),
	NUMKEY("tenants", submit_burst, conf_key_uint, 1, 100000000),
	NUMKEY("tenants", page_size, conf_key_uint, 1, CTL_MAX_PAGE_SIZE),
	{ .section = "tenants", .name = "private_data",
	  .set = conf_key_bool, FIELD(private_data) },
	/* Connection admission and the fair event loop. */
	NUMKEY("limits", max_handshakes, conf_key_uint, 1,
	    CTL_MAX_MAX_CONNECTIONS),
	NUMKEY("limits", max_handshakes_per_source, conf_key_uint, 1,
	    CTL_MAX_MAX_CONNECTIONS),
	MSKEY("limits", "handshake_timeout", handshake_timeout_ms),
	MSKEY("limits", "hello_timeout", hello_timeout_ms),
	NUMKEY("limits", max_connections_per_user, conf_key_uint, 1,
	    CTL_MAX_MAX_CONNECTIONS),
	NUMKEY("limits", agent_reserve, conf_key_uint, 0,
	    CTL_MAX_MAX_CONNECTIONS),
	/* Above the CLI's 0.5 s poll of --follow streams. */
	{ .section = "limits", .name = "idle_timeout", .set = conf_key_ms,
	  FIELD(idle_timeout_ms), .min = 1000, .max = CTL_MAX_MS },
	NUMKEY("limits", max_requests_in_flight, conf_key_uint, 1, 100000),
	/* Output budgets shared by a person's connections, and by all. */
	NUMKEY("limits", max_output_per_user, conf_key_size, CTL_MIN_OUTPUT,
	    CTL_MAX_OUTPUT),
	NUMKEY("limits", max_output_total, conf_key_size, CTL_MIN_OUTPUT,
	    CTL_MAX_OUTPUT),
	/* [straggler]: when a rank is slower than its gang's peers. */
	{ .section = "straggler", .name = "window", .set = conf_key_uint,
	  FIELD(straggler_window), .min = 2, .max = STRAGGLER_WINDOW_MAX },
	{ .section = "straggler", .name = "windows", .set = conf_key_uint,
	  FIELD(straggler_windows), .min = 1, .max = STRAGGLER_WINDOWS_MAX },
	{ .section = "straggler", .name = "factor",
	  .set = ctl_set_straggler_factor },
	{ .section = "replication", .name = "id", .set = conf_key_uint,
	  FIELD(repl_id), .min = 1, .max = CTL_REPL_ID_MAX },
	{ .section = "replication", .name = "address",
	  .set = ctl_set_repl_address },
	{ .section = "replication", .name = "raft_address",
	  .set = ctl_set_repl_raft },
	{ .section = "replication", .name = "data_dir", .set = conf_key_path,
	  FIELD(repl_data_dir) },
	MSKEY("replication", "election_timeout", repl_election_ms),
	MSKEY("replication", "heartbeat", repl_heartbeat_ms),
	{ .section = "replication", .name = "snapshot_threshold",
	  .set = conf_key_uint, FIELD(repl_snapshot_threshold), .min = 16,
	  .max = 10000000 },
	/* Nodes that fail job after job (suspect.h). */
	{ .section = "suspect", .name = "drain", .set = conf_key_bool,
	  FIELD(suspect_drain) },
	{ .section = "suspect", .name = "early_jobs", .set = conf_key_uint,
	  FIELD(suspect_early_jobs), .min = 0, .max = 1000 },
	{ .section = "suspect", .name = "early_users", .set = conf_key_uint,
	  FIELD(suspect_early_users), .min = 1, .max = 1000 },
	MSKEY("suspect", "early_period", suspect_early_period_ms),
	{ .section = "suspect", .name = "hardware_failures",
	  .set = conf_key_uint, FIELD(suspect_hardware_failures), .min = 0,
	  .max = 1000 },
	MSKEY("suspect", "hardware_period", suspect_hardware_period_ms),
	MSKEY("suspect", "confirm_within", suspect_confirm_ms),
	MSKEY("suspect", "recent", suspect_recent_ms),
	{ .section = "suspect", .name = "large_gang", .set = conf_key_uint,
	  FIELD(suspect_large_gang), .min = 0, .max = 1000000 },
};
#define CTL_NKEYS (sizeof(ctl_keys) / sizeof(ctl_keys[0]))

static void
ctl_config_defaults(struct ctl_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->listen_host, sizeof(cfg->listen_host), "%s",
	    CTL_DEFAULT_LISTEN_HOST);
	cfg->listen_port = CTL_DEFAULT_LISTEN_PORT;
	cfg->max_frame = CTL_DEFAULT_MAX_FRAME;
	cfg->max_connections = CTL_DEFAULT_MAX_CONNECTIONS;
	cfg->max_script = CTL_DEFAULT_MAX_SCRIPT;
	cfg->max_handshakes = SERVER_DEFAULT_MAX_HANDSHAKES;
	cfg->max_handshakes_per_source = SERVER_DEFAULT_HANDSHAKES_PER_SOURCE;
	cfg->handshake_timeout_ms = SERVER_DEFAULT_HANDSHAKE_TIMEOUT_MS;
	cfg->hello_timeout_ms = SERVER_DEFAULT_HELLO_TIMEOUT_MS;
	cfg->max_connections_per_user = SERVER_DEFAULT_PER_IDENTITY;
	cfg->agent_reserve = 0;
	cfg->idle_timeout_ms = SERVER_DEFAULT_IDLE_TIMEOUT_MS;
	cfg->max_requests_in_flight = SERVER_DEFAULT_MAX_INFLIGHT;
	cfg->max_output_per_user = SERVER_DEFAULT_OUTPUT_PER_USER;
	cfg->max_output_total = SERVER_DEFAULT_OUTPUT_TOTAL;
	cfg->node_timeout_ms = 10000;
	cfg->stop_timeout_ms = 60000;
	cfg->interactive_grace_ms = 5 * 60 * 1000;
	cfg->interactive_idle_ms = 10 * 60 * 1000;
	cfg->early_fail_window_ms = 60000;
	cfg->heartbeat_ms = 2000;
	cfg->default_time_limit_ms = 24ULL * 3600 * 1000;
	cfg->queue_order = SCHED_ORDER_ESTIMATE;
	cfg->queue_aging = SCHED_DEFAULT_AGING;
	cfg->max_pending_per_user = CTL_DEFAULT_MAX_PENDING;
	cfg->submit_rate = CTL_DEFAULT_SUBMIT_RATE;
	cfg->submit_burst = CTL_DEFAULT_SUBMIT_BURST;
	cfg->page_size = CTL_DEFAULT_PAGE_SIZE;
	cfg->private_data = true;
	cfg->fair_share_half_life_ms = QUEUES_DEFAULT_HALF_LIFE_MS;
	cfg->starve_after_ms = CTL_DEFAULT_STARVE_AFTER_MS;
	cfg->starve_min_gpus = CTL_DEFAULT_STARVE_MIN_GPUS;
	cfg->job_retention_ms = CTL_DEFAULT_RETENTION_MS;
	cfg->event_retention_ms = CTL_DEFAULT_RETENTION_MS;
	cfg->log_level = LOG_LEVEL_INFO;
	cfg->straggler_window = STRAGGLER_DEFAULT_WINDOW;
	cfg->straggler_windows = STRAGGLER_DEFAULT_WINDOWS;
	cfg->straggler_factor_pct = STRAGGLER_DEFAULT_FACTOR_PCT;
	cfg->repl_election_ms = CTL_DEFAULT_ELECTION_MS;
	cfg->repl_heartbeat_ms = CTL_DEFAULT_RAFT_HEARTBEAT_MS;
	cfg->repl_snapshot_threshold = CTL_DEFAULT_SNAPSHOT_THRESHOLD;
	/* suspect_opts_default's. */
	cfg->suspect_drain = true;
	cfg->suspect_early_jobs = 3;
	cfg->suspect_early_users = 2;
	cfg->suspect_early_period_ms = 3600ULL * 1000;
	cfg->suspect_hardware_failures = 2;
	cfg->suspect_hardware_period_ms = 72ULL * 3600 * 1000;
	cfg->suspect_confirm_ms = 24ULL * 3600 * 1000;
	cfg->suspect_recent_ms = 3600ULL * 1000;
	cfg->suspect_large_gang = 16;
}

void
ctl_config_clear(struct ctl_config *cfg)
{
	if (cfg == NULL)
		return;
	free(cfg->port_file);
	free(cfg->database);
	free(cfg->ca);
	free(cfg->cert);
	free(cfg->key);
	free(cfg->crl);
	free(cfg->topology);
	free(cfg->mail_program);
	free(cfg->http_port_file);
	free(cfg->repl_data_dir);
	hostlist_free(cfg->nodes, cfg->nnodes);
	for (size_t i = 0; i < cfg->nqueues; i++)
		queue_def_clear(&cfg->queues[i]);
	free(cfg->queues);
	free(cfg->queue_lines);
	ctl_config_defaults(cfg);
}

static int
ctl_set_listen(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct ctl_config *cfg = c->cfg;

	/* Port 0 asks the kernel for a free port; tests and cohort-local
	 * read the bound one back from port_file. */
	cfg->listen_set = true;
	return conf_parse_hostport(value, cfg->listen_host,
	    sizeof(cfg->listen_host), &cfg->listen_port, true, err);
}

static int
ctl_set_repl_address(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct ctl_config *cfg = c->cfg;

	/* Stored in the Raft configuration, so it cannot be "any port". */
	return conf_parse_hostport(value, cfg->repl_host,
	    sizeof(cfg->repl_host), &cfg->repl_port, false, err);
}

static int
ctl_set_repl_raft(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct ctl_config *cfg = c->cfg;

	return conf_parse_hostport(value, cfg->repl_raft_host,
	    sizeof(cfg->repl_raft_host), &cfg->repl_raft_port, false, err);
}

/* [replication] is all or nothing, and replaces [controller] database;
 * the controller listens where its replicas and clients are told it is. */
static int
ctl_check_repl(struct ctl_config *cfg, const char *path, struct cerr *err)
{
	bool any = cfg->repl_id != 0 || cfg->repl_port != 0 ||
	    cfg->repl_data_dir != NULL || cfg->repl_raft_port != 0;

	if (!any) {
		if (cfg->database == NULL)
			return cerr_set(err, ERR_INVALID, "%s: missing "
			    "'database' in [controller] (or a [replication] "
			    "section)", path);
		return 0;
	}
	if (cfg->repl_id == 0 || cfg->repl_port == 0 ||
	    cfg->repl_data_dir == NULL)
		return cerr_set(err, ERR_INVALID, "%s: [replication] needs "
		    "id, address and data_dir", path);
	if (cfg->database != NULL)
		return cerr_set(err, ERR_INVALID, "%s: [controller] database "
		    "and [replication] do not go together: a replicated "
		    "controller keeps its database in its replicas' Raft "
		    "log (docs/REPLICATION.md)", path);
	if (cfg->repl_heartbeat_ms * 2 > cfg->repl_election_ms)
		return cerr_set(err, ERR_INVALID, "%s: [replication] heartbeat "
		    "(%llu ms) must be at most half of election_timeout "
		    "(%llu ms)", path,
		    (unsigned long long)cfg->repl_heartbeat_ms,
		    (unsigned long long)cfg->repl_election_ms);
	if (cfg->repl_raft_port == 0) {
		if (cfg->repl_port == UINT16_MAX)
			return cerr_set(err, ERR_INVALID, "%s: [replication] "
			    "raft_address is required when address uses port "
			    "65535", path);
		memcpy(cfg->repl_raft_host, cfg->repl_host,
		    sizeof(cfg->repl_host));
		cfg->repl_raft_port = cfg->repl_port + 1;
	}
	if (strcmp(cfg->repl_host, cfg->repl_raft_host) == 0 &&
	    cfg->repl_port == cfg->repl_raft_port)
		return cerr_set(err, ERR_INVALID, "%s: [replication] address "
		    "and raft_address must differ", path);
	/* Unless [controller] listen says where, listen on address. */
	if (!cfg->listen_set) {
		memcpy(cfg->listen_host, cfg->repl_host,
		    sizeof(cfg->repl_host));
		cfg->listen_port = cfg->repl_port;
	} else if (cfg->listen_port != cfg->repl_port)
		return cerr_set(err, ERR_INVALID, "%s: [controller] listen "
		    "port %u differs from [replication] address port %u",
		    path, cfg->listen_port, cfg->repl_port);
	return 0;
}

static int
ctl_set_http_listen(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct ctl_config *cfg = c->cfg;

	cfg->http = true;
	return conf_parse_hostport(value, cfg->http_host,
	    sizeof(cfg->http_host), &cfg->http_port, true, err);
}

static int
ctl_set_queue_order(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct ctl_config *cfg = c->cfg;

	if (strcmp(value, "estimate") == 0)
		cfg->queue_order = SCHED_ORDER_ESTIMATE;
	else if (strcmp(value, "fifo") == 0)
		cfg->queue_order = SCHED_ORDER_FIFO;
	else
		return cerr_set(err, ERR_INVALID,
		    "'%s' is not fifo or estimate", value);
	return 0;
}

/* [straggler] factor: a decimal above 1 and at most 100, with at most
 * two decimals, kept in percent. */
static int
ctl_set_straggler_factor(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct ctl_config *cfg = c->cfg;
	const char *p = value;
	uint32_t whole = 0, frac = 0;
	int nint = 0, nfrac = 0;

	(void)k;
	for (; *p >= '0' && *p <= '9' && nint < 4; p++, nint++)
		whole = whole * 10 + (uint32_t)(*p - '0');
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9' && nfrac < 2; p++, nfrac++)
			frac = frac * 10 + (uint32_t)(*p - '0');
	for (; nfrac < 2; nfrac++)
		frac *= 10;
	if (nint == 0 || *p != '\0' || whole * 100 + frac <= 100 ||
	    whole * 100 + frac > 10000)
		return cerr_set(err, ERR_INVALID, "'%s' is not a factor "
		    "above 1 and at most 100 (two decimals at most, e.g. 1.5)",
		    value);
	cfg->straggler_factor_pct = whole * 100 + frac;
	return 0;
}

/* A decimal in [0, 1000] with at most three decimals, in thousandths. */
static int
ctl_set_queue_aging(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct ctl_config *cfg = c->cfg;
	const char *p = value;
	uint64_t whole = 0, frac = 0;
	int nint = 0, nfrac = 0;

	for (; *p >= '0' && *p <= '9' && nint < 5; p++, nint++)
		whole = whole * 10 + (uint64_t)(*p - '0');
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9' && nfrac < 3; p++, nfrac++)
			frac = frac * 10 + (uint64_t)(*p - '0');
	for (; nfrac < 3; nfrac++)
		frac *= 10;
	if (nint == 0 || *p != '\0' || whole > 1000 ||
	    (whole == 1000 && frac > 0))
		return cerr_set(err, ERR_INVALID, "'%s' is not a number from "
		    "0 to 1000 with at most three decimals", value);
	cfg->queue_aging = (uint32_t)(whole * SCHED_AGING_UNIT + frac);
	return 0;
}

static int
ctl_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A Slurm hostlist of the nodes that may register, kept sorted without
 * duplicates (the controller looks names up by bsearch). */
static int
ctl_set_nodes(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct ctl_config *cfg = c->cfg;
	char why[160] = "", **names;
	size_t n, i, out;

	if (hostlist_expand(value, CTL_NODES_MAX, &names, &n, why,
	    sizeof(why)) == -1)
		return cerr_set(err, ERR_INVALID, "'%s' is not a hostlist: %s",
		    value, errno == E2BIG ? "more than 100000 names" :
		    errno == ENOMEM ? "out of memory" : why);
	if (n == 0) {
		hostlist_free(names, n);
		return cerr_set(err, ERR_INVALID, "an empty node list");
	}
	for (i = 0; i < n; i++)
		if (names[i][0] == '\0' || strlen(names[i]) > PEER_NAME_MAX) {
			cerr_set(err, ERR_INVALID, "node name '%.80s' is empty "
			    "or longer than %d characters", names[i],
			    PEER_NAME_MAX);
			hostlist_free(names, n);
			return -1;
		}
	qsort(names, n, sizeof(*names), ctl_name_cmp);
	for (i = 1, out = 1; i < n; i++) {
		if (strcmp(names[i], names[out - 1]) == 0)
			free(names[i]);
		else
			names[out++] = names[i];
	}
	hostlist_free(cfg->nodes, cfg->nnodes);
	cfg->nodes = names;
	cfg->nnodes = out;
	return 0;
}

/* starve_after: a duration, or 0 / off. */
static int
ctl_set_starve(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct ctl_config *cfg = c->cfg;

	if (strcmp(value, "0") == 0 || strcmp(value, "off") == 0) {
		cfg->starve_after_ms = 0;
		return 0;
	}
	return conf_parse_duration_ms(value, 1000, CTL_MAX_MS,
	    &cfg->starve_after_ms, err);
}

/* job_retention, event_retention: a duration of at least a second (up to
 * ten years), or 0 / off / never: kept forever. */
static int
ctl_set_retention(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	uint64_t *field = (uint64_t *)((char *)c->cfg + k->off);

	if (strcmp(value, "0") == 0 || strcmp(value, "off") == 0 ||
	    strcmp(value, "never") == 0) {
		*field = 0;
		return 0;
	}
	return conf_parse_duration_ms(value, 1000, CTL_MAX_RETENTION_MS,
	    field, err);
}

/* ---- [queue NAME] ---- */

/* The queue whose section is being read: the last one opened. */
static struct queue_def *
ctl_queue_cur(const struct conf_ctx *c)
{
	struct ctl_config *cfg = c->cfg;

	return &cfg->queues[cfg->nqueues - 1];
}

static void *
ctl_queue_field(const struct conf_ctx *c, const struct conf_key *k)
{
	return (char *)ctl_queue_cur(c) + k->off;
}

/* Every section header: [queue NAME] opens a queue with the defaults. */
static int
ctl_queue_section(const struct conf_ctx *c, const char *section,
    struct cerr *err)
{
	struct ctl_config *cfg = c->cfg;
	struct queue_def *v, *d;
	const char *name;
	int *lines;
	size_t i;

	if (strcmp(section, "queue") == 0 ||
	    strcmp(section, "queue ") == 0)
		return cerr_set(err, ERR_INVALID,
		    "[%s]: a queue section needs a name: [queue NAME]",
		    section);
	if (strncmp(section, "queue ", 6) != 0)
		return 0;
	name = section + 6;
	if (strlen(name) > QUEUE_NAME_MAX ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") != strlen(name))
		return cerr_set(err, ERR_INVALID, "[queue %.80s]: a queue name "
		    "is 1 to %d of A-Z a-z 0-9 . _ -", name, QUEUE_NAME_MAX);
	for (i = 0; i < cfg->nqueues; i++)
		if (strcmp(cfg->queues[i].name, name) == 0)
			return cerr_set(err, ERR_INVALID, "[queue %s] given "
			    "twice (first on line %d)", name,
			    cfg->queue_lines[i]);
	if ((v = reallocarray(cfg->queues, cfg->nqueues + 1,
	    sizeof(*v))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	cfg->queues = v;
	if ((lines = reallocarray(cfg->queue_lines, cfg->nqueues + 1,
	    sizeof(*lines))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	cfg->queue_lines = lines;
	d = &v[cfg->nqueues];
	*d = (struct queue_def){ .gpus = SCHED_UNLIMITED,
	    .borrow_limit = SCHED_UNLIMITED, .lend_limit = SCHED_UNLIMITED,
	    .weight = 1, .preempt = SCHED_PREEMPT_BORROWERS };
	if ((d->name = strdup(name)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	lines[cfg->nqueues] = c->line;
	cfg->nqueues++;
	return 0;
}

static int
ctl_q_uint(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	uint64_t v;

	if (conf_parse_uint(value, k->min, k->max, &v, err) == -1)
		return -1;
	*(uint32_t *)ctl_queue_field(c, k) = (uint32_t)v;
	return 0;
}

static int
ctl_q_limit(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	if (strcmp(value, "none") == 0) {
		*(uint32_t *)ctl_queue_field(c, k) = SCHED_UNLIMITED;
		return 0;
	}
	return ctl_q_uint(c, k, value, err);
}

/* A duration in whole seconds; "0" and "0s" are 0 where k->min is 0. */
static int
ctl_q_secs(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	uint64_t ms;

	if (k->min == 0 && strcmp(value, "0") == 0) {
		*(uint64_t *)ctl_queue_field(c, k) = 0;
		return 0;
	}
	if (conf_parse_duration_ms(value, k->min * 1000, k->max * 1000, &ms,
	    err) == -1)
		return -1;
	if (ms % 1000 != 0)
		return cerr_set(err, ERR_INVALID,
		    "'%.64s' is not a whole number of seconds", value);
	*(uint64_t *)ctl_queue_field(c, k) = ms / 1000;
	return 0;
}

/* "a, b c": names separated by commas and blanks. */
static int
ctl_q_names(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct queue_def *d = ctl_queue_cur(c);
	bool admins = strcmp(k->name, "admins") == 0;
	bool accts = strcmp(k->name, "accounts") == 0;
	bool qos = strcmp(k->name, "qos") == 0;
	char ***v = admins ? &d->admins : accts ? &d->accounts :
	    qos ? &d->qos : &d->users;
	size_t *n = admins ? &d->nadmins : accts ? &d->naccounts :
	    qos ? &d->nqos : &d->nusers;
	char **out = NULL, name[PEER_NAME_MAX + 1];
	size_t nout = 0, len, i;
	const char *p = value;

	while (*p != '\0') {
		p += strspn(p, ", \t");
		if ((len = strcspn(p, ", \t")) == 0)
			break;
		if (len > PEER_NAME_MAX) {
			strv_free(out, nout);
			return cerr_set(err, ERR_INVALID, "'%.32s...' is longer "
			    "than %d characters", p, PEER_NAME_MAX);
		}
		memcpy(name, p, len);
		name[len] = '\0';
		for (i = 0; i < nout && strcmp(out[i], name) != 0; i++)
			;
		if (i == nout && strv_append(&out, &nout, name) == -1) {
			strv_free(out, nout);
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		}
		p += len;
	}
	if (nout == 0)
		return cerr_set(err, ERR_INVALID, "no name given (leave the "
		    "key out for everybody)");
	strv_free(*v, *n);
	*v = out;
	*n = nout;
	return 0;
}

static int
ctl_q_parent(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct queue_def *d = ctl_queue_cur(c);

	if (value[0] == '\0')
		return cerr_set(err, ERR_INVALID, "empty");
	if (strcmp(value, d->name) == 0)
		return cerr_set(err, ERR_INVALID,
		    "queue %s cannot be its own parent", d->name);
	if (conf_set_str(&d->parent, value) == -1)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	return 0;
}

static int
ctl_q_preempt(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	static const struct {
		const char *name;
		enum sched_preempt p;
	} tab[] = {
		{ "never", SCHED_PREEMPT_NEVER },
		{ "lower-priority", SCHED_PREEMPT_LOWER },
		{ "borrowers", SCHED_PREEMPT_BORROWERS },
		{ "both", SCHED_PREEMPT_BOTH },
	};
	size_t i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strcmp(value, tab[i].name) == 0) {
			ctl_queue_cur(c)->preempt = tab[i].p;
			return 0;
		}
	return cerr_set(err, ERR_INVALID, "'%.64s' is not never, "
	    "lower-priority, borrowers or both", value);
}

/* gpus.MODEL = N */
static int
ctl_q_model(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct queue_def *d = ctl_queue_cur(c);
	const char *model = c->name + strlen("gpus.");
	struct queue_model_quota *m;
	uint64_t v;
	size_t i;

	for (i = 0; i < d->nmodels; i++)
		if (strcmp(d->models[i].model, model) == 0)
			return cerr_set(err, ERR_INVALID,
			    "given twice in [queue %s]", d->name);
	if (d->nmodels >= SCHED_FLAVORS_MAX - 1)
		return cerr_set(err, ERR_INVALID, "at most %d GPU models may "
		    "have quotas", SCHED_FLAVORS_MAX - 1);
	if (conf_parse_uint(value, 0, CTL_QUEUE_GPUS_MAX, &v, err) == -1)
		return -1;
	if ((m = reallocarray(d->models, d->nmodels + 1, sizeof(*m))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	d->models = m;
	if ((m[d->nmodels].model = strdup(model)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	m[d->nmodels].gpus = (uint32_t)v;
	d->nmodels++;
	return 0;
}

/* The tree as a whole, through queues_create: an error names the line
 * of the queue it is about ("queue NAME: ..."), else the first queue. */
static int
ctl_check_queues(struct ctl_config *cfg, const char *path, struct cerr *err)
{
	struct queues *qs;
	struct cerr qerr;
	size_t i, len;
	int line;

	if (cfg->nqueues == 0)
		return 0;
	qs = queues_create(cfg->queues, cfg->nqueues,
	    (int64_t)cfg->fair_share_half_life_ms, &qerr);
	if (qs != NULL) {
		queues_destroy(qs);
		return 0;
	}
	line = cfg->queue_lines[0];
	for (i = 0; i < cfg->nqueues; i++) {
		len = strlen(cfg->queues[i].name);
		if (strncmp(qerr.text, "queue ", 6) == 0 &&
		    strncmp(qerr.text + 6, cfg->queues[i].name, len) == 0 &&
		    qerr.text[6 + len] == ':') {
			line = cfg->queue_lines[i];
			break;
		}
	}
	return cerr_set(err, qerr.code, "%s:%d: %s", path, line, qerr.text);
}

int
ctl_config_load(struct ctl_config *cfg, const char *path, struct cerr *err)
{
	ctl_config_defaults(cfg);
	if (conf_load_sections(path, ctl_keys, CTL_NKEYS, cfg, NULL,
	    ctl_queue_section, err) == -1 ||
	    ctl_check_queues(cfg, path, err) == -1 ||
	    ctl_check_repl(cfg, path, err) == -1) {
		ctl_config_clear(cfg);
		return -1;
	}
	return 0;
}
