/* cohortd: the controller. main() reads as the order things come up in;
 * they go down in reverse. */
#include "config.h"

#include <sys/resource.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/ssl.h>
#include <systemd/sd-daemon.h>

#include "daemon/controller/ctl_config.h"
#include "daemon/controller/ctl_reload.h"
#include "daemon/controller/rpc/agentcmd.h"
#include "client/conn.h"
#include "daemon/controller/ctl_figures.h"
#include "daemon/controller/driver.h"
#include "daemon/sched/topo.h"
#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/web/http.h"
#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/mailer.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/queues.h"
#include "daemon/controller/repl/repl.h"
#include "lib/clock.h"
#include "lib/wire.h"
#include "lib/daemon.h"
#include "lib/frame.h"
#include "lib/log.h"
#include "lib/tls.h"
#include "daemon/controller/rpc/rpc.h"
#include "daemon/controller/rpc/stepcred.h"
#include "daemon/controller/rpc/server.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/domain/suspect.h"
#include "daemon/controller/store/txq.h"

struct cohortd {
	struct ctl_config cfg;
	struct event_base *base;
	struct store *store;
	struct txq *txq;
	struct queues *queues;
	struct jobs *jobs;
	struct nodes *nodes;
	struct suspect *suspect;
	SSL_CTX *ctx;
	struct server *srv;
	struct agentcmd *agentcmd;
	struct stepcred *stepcred;
	struct driver *driver;
	struct mailer *mailer;		/* [controller] mail_program */
	struct cluster *cluster;
	struct rpc rpc;
	struct event *sigterm;
	struct event *sigint;
	struct event *sighup;
	struct topo *topo;
	struct http *http;
	struct ctl_figures figures;	/* what http reads of the rest */
	const char *config_path;	/* re-read on SIGHUP */
	bool verbose;			/* -v */
	/* [replication] (repl.h); NULL: a single controller. */
	struct repl *repl;
	SSL_CTX *cli_ctx;		/* to the other replicas */
	struct event *agent_wait;	/* a new leader's first pass */
	uint64_t agent_wait_until_us;
	uint64_t agent_wait_since_us;
	char **argv;			/* to start again as a follower */
	const char *restore;		/* --restore FILE, with --bootstrap */
};

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct cohortd *d = arg;

	log_info("signal %d: shutting down", (int)sig);
	event_base_loopexit(d->base, NULL);
}

/* SIGHUP: read the configuration file again and apply what can change
 * while running (ctl_reload.h); a file that does not load, or a change
 * that needs a restart, changes nothing and says why. */
static void
on_reload(evutil_socket_t sig, short what, void *arg)
{
	struct cohortd *d = arg;
	struct ctl_reload_target t = {
		.cfg = &d->cfg, .jobs = d->jobs, .queues = d->queues,
		.cluster = d->cluster, .srv = d->srv, .ctx = d->ctx,
		.cli_ctx = d->cli_ctx, .repl = d->repl,
		.verbose = d->verbose, .port = server_port(d->srv),
		.http_port = d->http != NULL ? http_port(d->http) : 0,
	};

	ctl_reload(d->config_path, &t);
}

static void
on_commit_abort(void *arg)
{
	struct cohortd *d = arg;
	struct cerr err;

	/* The table may hold changes that did not commit: the database is
	 * the truth. If even reading it fails, stopping is the safe act. */
	if (jobs_reload(d->jobs, &err) == -1)
		fatalx("cannot reload jobs after a failed commit: %s",
		    err.text);
}

/* Write the bound port where tests and cohort-local look for it,
 * atomically, so a reader never sees a partial number. */
static int
write_port_file(const char *path, unsigned port)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((f = fopen(tmp, "w")) == NULL)
		return -1;
	fprintf(f, "%u\n", port);
	if (fclose(f) != 0 || rename(tmp, path) == -1)
		return -1;
	return 0;
}

/* The agents the controller knows: every node it has a row for, its
 * topology names or its nodes = list, whichever is most. The server
 * keeps this many slots for them. */
static unsigned
known_agents(void *arg)
{
	struct cohortd *d = arg;
	size_t n, t = d->topo != NULL ? topo_nnodes(d->topo) : 0;

	nodes_all(d->nodes, &n);
	if (t > n)
		n = t;
	if (d->cfg.nnodes > n)
		n = d->cfg.nnodes;
	return n > UINT_MAX ? UINT_MAX : (unsigned)n;
}

/* Every connection is a descriptor: raise the soft limit to fit
 * max_connections (plus the HTTP listener's connections, the database,
 * listeners and logs), or say why some connections will fail. */
static void
raise_fd_limit(unsigned max_conns)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)max_conns + HTTP_MAX_CONNS + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ?
	    rl.rlim_max : want;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur < want)
		log_warnx("open files limited to %llu: fewer than "
		    "max_connections (%u) can connect",
		    (unsigned long long)rl.rlim_cur, max_conns);
}

/* agentcmd's way to an agent: its connection, if there is one. */
static int
send_to_agent(void *srv, uint64_t conn_id, Cohort__V1__Envelope *env)
{
	struct conn *c = server_conn(srv, conn_id);

	return c != NULL ? server_conn_send(c, env) : -1;
}

/* Fair share survives a restart: the usage of every job that ran is
 * charged again (queues_rebuild). */
static void
rebuild_fair_share(struct queues *qs, const struct jobs *js, int64_t now_ms)
{
	const struct jobs_filter all = { .all = true };
	const struct job **tab;
	size_t n;

	if (jobs_list(js, &all, &tab, &n) == -1 ||
	    queues_rebuild(qs, tab, n, now_ms) == -1)
		fatalx("rebuilding fair share: out of memory");
	free(tab);
}

/* The listener, TLS and signals: what a replica runs in every role. */
static void
start_service(struct cohortd *d)
{
	struct cerr err;
	struct server_opts so = {
		.host = d->cfg.listen_host,
		.port = d->cfg.listen_port,
		.max_frame = d->cfg.max_frame,
		.max_conns = d->cfg.max_connections,
		.max_handshakes = d->cfg.max_handshakes,
		.max_handshakes_per_source = d->cfg.max_handshakes_per_source,
		.max_per_identity = d->cfg.max_connections_per_user,
		.agent_reserve = d->cfg.agent_reserve,
		.max_inflight = d->cfg.max_requests_in_flight,
		.handshake_timeout_ms = d->cfg.handshake_timeout_ms,
		.hello_timeout_ms = d->cfg.hello_timeout_ms,
		.idle_timeout_ms = d->cfg.idle_timeout_ms,
		.max_output_per_user = d->cfg.max_output_per_user,
		.max_output_total = d->cfg.max_output_total,
		.accept_controllers = d->cfg.repl_id != 0,
	};

	raise_fd_limit(d->cfg.max_connections);
	if ((d->base = event_base_new()) == NULL)
		fatalx("cannot create the event loop");
	d->ctx = tls_server_ctx(d->cfg.ca, d->cfg.crl, d->cfg.cert,
	    d->cfg.key, &err);
	if (d->ctx == NULL ||
	    tls_ctx_check_own_role(d->ctx, ROLE_CONTROLLER, d->cfg.cert,
	    &err) == -1 ||
	    tls_ctx_check_own_issuer(d->ctx, d->cfg.cert, d->cfg.ca,
	    &err) == -1)
		fatalx("%s", err.text);
	if (d->cfg.crl != NULL)
		log_info("checking peer certificates against the CRLs in %s",
		    d->cfg.crl);
	d->rpc.heartbeat_ms = (uint32_t)d->cfg.heartbeat_ms;
	d->rpc.base = d->base;
	d->rpc.page_size = d->cfg.page_size;
	d->rpc.private_data = d->cfg.private_data;
	d->srv = server_create(d->base, d->ctx, &so, rpc_dispatch, &d->rpc,
	    &err);
	if (d->srv == NULL)
		fatalx("%s", err.text);
	d->rpc.srv = d->srv;
	if (d->cfg.port_file != NULL &&
	    write_port_file(d->cfg.port_file, server_port(d->srv)) == -1)
		fatal("%s", d->cfg.port_file);
}

/* The controller proper: the store and everything loaded from it. A
 * single controller starts it at once; a replica when it becomes the
 * leader (on_role). */
static void
start_domain(struct cohortd *d)
{
	struct cerr err;
	struct job_limits limits = {
		.script_max = d->cfg.max_script,
		.max_pending_per_user = d->cfg.max_pending_per_user,
		.submit_rate = d->cfg.submit_rate,
		.submit_burst = d->cfg.submit_burst,
	};
	struct cluster_opts co;
	struct mailer_opts mo = { 0 };
	struct suspect_opts so;
	struct outbox out;
	char ebuf[512];

	if (d->repl != NULL)
		d->store = store_open_replicated(REPL_DB, repl_vfs(d->repl),
		    repl_replicate, d->repl, d->restore, &err);
	else
		d->store = store_open(d->cfg.database, &err);
	if (d->store == NULL)
		fatalx("%s", err.text);
	d->txq = txq_create(d->base, d->store, on_commit_abort, d);
	if (d->txq == NULL)
		fatalx("out of memory");

	if ((d->queues = queues_create(d->cfg.queues, d->cfg.nqueues,
	    (int64_t)d->cfg.fair_share_half_life_ms, &err)) == NULL)
		fatalx("queues: %s", err.text);
	if ((d->jobs = jobs_create(d->store, d->txq, &limits, d->queues,
	    &err)) == NULL)
		fatalx("loading jobs: %s", err.text);
	jobs_set_early_fail_window(d->jobs,
	    (int64_t)d->cfg.early_fail_window_ms);
	jobs_retention_set(d->jobs, (int64_t)d->cfg.job_retention_ms,
	    (int64_t)d->cfg.event_retention_ms);
	rebuild_fair_share(d->queues, d->jobs, clock_now_ms());
	if ((d->nodes = nodes_create(d->store, d->txq, clock_now_ms(),
	    &err)) == NULL)
		fatalx("loading nodes: %s", err.text);
	suspect_opts_default(&so);
	so.drain = d->cfg.suspect_drain;
	so.early_fail_ms = (int64_t)d->cfg.early_fail_window_ms;
	so.early_jobs = d->cfg.suspect_early_jobs;
	so.early_users = d->cfg.suspect_early_users;
	so.early_period_ms = (int64_t)d->cfg.suspect_early_period_ms;
	so.hardware_failures = d->cfg.suspect_hardware_failures;
	so.hardware_period_ms = (int64_t)d->cfg.suspect_hardware_period_ms;
	so.confirm_ms = (int64_t)d->cfg.suspect_confirm_ms;
	so.recent_ms = (int64_t)d->cfg.suspect_recent_ms;
	so.large_gang_nodes = d->cfg.suspect_large_gang;
	if ((d->suspect = suspect_create(d->store, d->txq, &so,
	    &err)) == NULL)
		fatalx("loading suspect nodes: %s", err.text);
	d->rpc.jobs = d->jobs;
	d->rpc.nodes = d->nodes;
	d->rpc.txq = d->txq;
	d->rpc.store = d->store;
	/* An agent that does not answer a command within a few heartbeats
	 * is as good as gone. */
	if ((d->agentcmd = agentcmd_create(send_to_agent, d->srv,
	    (int64_t)d->cfg.node_timeout_ms * 3)) == NULL)
		fatalx("out of memory");
	if ((d->stepcred = stepcred_create(d->store)) == NULL)
		fatalx("out of memory");
	agentcmd_set_stepcred(d->agentcmd, d->stepcred);
	d->rpc.stepcred = d->stepcred;
	if ((d->driver = driver_create(d->base, d->agentcmd, 500,
	    &err)) == NULL)
		fatalx("%s", err.text);
	driver_outbox(d->driver, &out);
	/* Only a leader gets here: a replica that follows sends no mail. */
	mo.program = d->cfg.mail_program;
	if ((d->mailer = mailer_create(d->base, &mo, &err)) == NULL)
		fatalx("%s", err.text);
	driver_set_mailer(d->driver, d->mailer);
	driver_on_step_ended(d->driver, rpc_steps_ended, &d->rpc);
	if (d->cfg.topology != NULL &&
	    (d->topo = topo_load_file(d->cfg.topology, ebuf,
	    sizeof(ebuf))) == NULL)
		fatalx("%s", ebuf);
	co.topo = d->topo;
	d->rpc.topo = d->topo;
	co.node_timeout_ms = (int64_t)d->cfg.node_timeout_ms;
	co.heartbeat_ms = (uint32_t)d->cfg.heartbeat_ms;
	co.default_limit_s = d->cfg.default_time_limit_ms / 1000;
	co.queue_order = (int)d->cfg.queue_order;
	co.queue_aging = d->cfg.queue_aging;
	co.stop_timeout_ms = (int64_t)d->cfg.stop_timeout_ms;
	co.interactive_grace_ms = (int64_t)d->cfg.interactive_grace_ms;
	co.interactive_idle_ms = (int64_t)d->cfg.interactive_idle_ms;
	co.known_nodes = (const char *const *)d->cfg.nodes;
	co.nknown_nodes = d->cfg.nnodes;
	co.accept_unknown_nodes = d->cfg.accept_unknown_nodes;
	co.queues = d->queues;
	co.starve_s = (int64_t)(d->cfg.starve_after_ms / 1000);
	co.starve_min_gpus = d->cfg.starve_min_gpus;
	co.suspect = d->suspect;
	co.straggler.window = d->cfg.straggler_window;
	co.straggler.windows = d->cfg.straggler_windows;
	co.straggler.factor_pct = d->cfg.straggler_factor_pct;
	d->rpc.queues = d->queues;
	if (d->topo == NULL && d->cfg.nnodes == 0 &&
	    !d->cfg.accept_unknown_nodes)
		log_warnx("neither a topology nor 'nodes' is configured: "
		    "every agent registration will be refused (set nodes = "
		    "HOSTLIST, or accept_unknown_nodes = yes)");
	else if (d->cfg.accept_unknown_nodes)
		log_warnx("accept_unknown_nodes = yes: any agent certificate "
		    "may register a node and receive its jobs");
	d->cluster = cluster_create(d->jobs, d->nodes, &out, &co,
	    clock_now_ms(), &err);
	if (d->cluster == NULL || driver_start(d->driver, d->cluster,
	    &err) == -1)
		fatalx("%s", err.text);
	d->rpc.agentcmd = d->agentcmd;
	d->rpc.cluster = d->cluster;
	server_set_close_cb(d->srv, rpc_conn_closed, &d->rpc);
	server_set_known_agents_cb(d->srv, known_agents, d);
	if (d->cfg.http) {
		struct http_sources hs = {
			.jobs = d->jobs, .nodes = d->nodes,
			.cluster = d->cluster, .txq = d->txq,
			.queues = d->queues, .store = d->store,
			.figures = ctl_figures_read, .figures_arg = &d->figures,
		};

		d->figures = (struct ctl_figures){ .driver = d->driver,
		    .server = d->srv, .rpc = &d->rpc, .repl = d->repl,
		    .mailer = d->mailer };

		d->http = http_create(d->base, d->cfg.http_host,
		    d->cfg.http_port, &hs, &err);
		if (d->http == NULL)
			fatalx("%s", err.text);
		if (d->cfg.http_port_file != NULL &&
		    write_port_file(d->cfg.http_port_file,
		    http_port(d->http)) == -1)
			fatal("%s", d->cfg.http_port_file);
	}
	d->rpc.serving = true;
	log_info("listening on %s:%u, %zu jobs loaded from %s",
	    d->cfg.listen_host, server_port(d->srv), jobs_count(d->jobs),
	    d->repl != NULL ? "the replicated log" : d->cfg.database);
}

/* Nodes the database says are UP whose agent has not registered here. */
static size_t
agents_missing(struct cohortd *d, size_t *up)
{
	struct node **all;
	size_t i, n, missing = 0;

	all = nodes_all(d->nodes, &n);
	*up = 0;
	for (i = 0; i < n; i++)
		if (all[i]->state == NODE_UP) {
			(*up)++;
			if (all[i]->conn_id == 0)
				missing++;
		}
	return missing;
}

static void
agent_wait_cb(evutil_socket_t fd, short what, void *arg)
{
	struct cohortd *d = arg;
	size_t up, missing = agents_missing(d, &up);
	uint64_t now = clock_mono_us();

	if (missing > 0 && now < d->agent_wait_until_us)
		return;
	if (missing > 0)
		log_warnx("first pass with %zu of %zu agents still missing "
		    "after %llu ms: their nodes go DOWN at node_timeout if "
		    "they stay away", missing, up, (unsigned long long)
		    ((now - d->agent_wait_since_us) / 1000));
	else
		log_info("all %zu agents reported after %llu ms: first pass",
		    up, (unsigned long long)((now - d->agent_wait_since_us) /
		    1000));
	event_free(d->agent_wait);
	d->agent_wait = NULL;
	driver_hold(d->driver, false);
}

/* A new leader places nothing until the agents of the nodes it believes
 * UP have registered and reported their tasks (reconciled as after a
 * restart), or for three heartbeat intervals at most (30 s at the
 * outside: an agent that found no leader during the election retries
 * within 2 s); those still away are left to node_timeout. */
static void
start_agent_wait(struct cohortd *d)
{
	struct timeval tv = { 0, 50 * 1000 };
	uint64_t grace_ms = d->cfg.heartbeat_ms * 3;
	size_t up;

	if (agents_missing(d, &up) == 0)
		return;
	if (grace_ms > 30000)
		grace_ms = 30000;
	d->agent_wait_since_us = clock_mono_us();
	d->agent_wait_until_us = d->agent_wait_since_us + grace_ms * 1000;
	d->agent_wait = event_new(d->base, -1, EV_PERSIST, agent_wait_cb, d);
	if (d->agent_wait == NULL || event_add(d->agent_wait, &tv) == -1)
		fatalx("cannot start the agent wait");
	driver_hold(d->driver, true);
	log_info("waiting up to %llu ms for the agents of %zu nodes before "
	    "the first pass", (unsigned long long)grace_ms, up);
}

/* A replica that stops leading starts again from nothing: the process
 * executes itself, and comes back as a follower that reloads the state
 * when it next leads. Every in-memory table of the old term goes with
 * it, and no reply of it can leave afterwards. */
static void
restart_as_follower(struct cohortd *d)
{
	DIR *dir;
	struct dirent *de;
	int fd, dfd;

	if ((dir = opendir("/proc/self/fd")) != NULL) {
		dfd = dirfd(dir);
		while ((de = readdir(dir)) != NULL) {
			fd = atoi(de->d_name);
			if (fd > 2 && fd != dfd)
				fcntl(fd, F_SETFD, FD_CLOEXEC);
		}
		closedir(dir);
	}
	setenv("COHORTD_REEXEC", "1", 1);
	log_warnx("restarting as a follower");
	execv("/proc/self/exe", d->argv);
	fatal("cannot execute /proc/self/exe");
}

static void
on_role(void *arg, bool leader)
{
	struct cohortd *d = arg;

	if (leader) {
		start_domain(d);
		start_agent_wait(d);
	} else
		restart_as_follower(d);
}

/* cohortd --join ADDR: ask the cluster's leader (ADDR, or the one it
 * names) to add this replica. It comes in as a spare and the leader
 * promotes it to voter once it has caught up. Retried for 30 s, since
 * the leader may itself be starting. */
static void
join_cluster(struct cohortd *d, const char *addr)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__MembersRequest mr = COHORT__V1__MEMBERS_REQUEST__INIT;
	char rpc[REPL_ADDR_MAX], raft[REPL_ADDR_MAX], at[REPL_ADDR_MAX];
	struct cconn_opts o = {
		.cert = d->cfg.cert, .key = d->cfg.key, .ca = d->cfg.ca,
		.crl = d->cfg.crl, .timeout_ms = 5000,
	};
	uint64_t deadline = clock_mono_us() + 30 * 1000000ull;
	unsigned delay_ms = 100;
	struct cconn *c;
	struct cerr err;

	snprintf(rpc, sizeof(rpc), "%s:%u", d->cfg.repl_host,
	    d->cfg.repl_port);
	snprintf(raft, sizeof(raft), "%s:%u", d->cfg.repl_raft_host,
	    d->cfg.repl_raft_port);
	snprintf(at, sizeof(at), "%s", addr);
	mr.op = "add";
	mr.has_member_id = true;
	mr.member_id = d->cfg.repl_id;
	mr.address = rpc;
	mr.raft_address = raft;
	req.body_case = COHORT__V1__ENVELOPE__BODY_MEMBERS;
	req.members = &mr;
	for (;;) {
		o.server = at;
		cerr_clear(&err);
		if ((c = cconn_open_tls(&o, &err)) != NULL) {
			rep = cconn_call(c, &req, &err);
			cconn_close(c);
			if (rep != NULL && rep->body_case ==
			    COHORT__V1__ENVELOPE__BODY_MEMBERS_REPLY) {
				frame_free(rep);
				log_info("replication: joined through %s as "
				    "replica %llu", at,
				    (unsigned long long)d->cfg.repl_id);
				return;
			}
			if (rep != NULL && rep->body_case ==
			    COHORT__V1__ENVELOPE__BODY_ERROR) {
				cerr_set(&err, wire_err_from_pb(
				    rep->error->code), "%s", rep->error->text);
				if (err.code == ERR_NOT_LEADER &&
				    rep->error->leader != NULL &&
				    *rep->error->leader != '\0')
					snprintf(at, sizeof(at), "%s",
					    rep->error->leader);
				else if (err.code != ERR_NOT_LEADER &&
				    err.code != ERR_UNAVAILABLE &&
				    err.code != ERR_CONFLICT)
					fatalx("cannot join through %s: %s", at,
					    err.text);
			}
			if (rep != NULL)
				frame_free(rep);
		}
		if (clock_mono_us() > deadline)
			fatalx("cannot join through %s: %s", at, err.text);
		log_info("replication: join through %s: %s; retrying", at,
		    err.text);
		usleep(delay_ms * 1000);
		if (delay_ms < 1000)
			delay_ms *= 2;
	}
}

/* Last, so that a SIGTERM during --join still ends the process. */
static void
start_signals(struct cohortd *d)
{
	d->sigterm = evsignal_new(d->base, SIGTERM, on_signal, d);
	d->sigint = evsignal_new(d->base, SIGINT, on_signal, d);
	d->sighup = evsignal_new(d->base, SIGHUP, on_reload, d);
	if (d->sigterm == NULL || d->sigint == NULL || d->sighup == NULL ||
	    evsignal_add(d->sigterm, NULL) == -1 ||
	    evsignal_add(d->sigint, NULL) == -1 ||
	    evsignal_add(d->sighup, NULL) == -1)
		fatalx("cannot install signal handlers");
}

static void
start(struct cohortd *d, const struct daemon_args *args)
{
	struct repl_opts ro;
	struct cerr err;
	char rpc[REPL_ADDR_MAX], raft[REPL_ADDR_MAX];

	start_service(d);
	if (d->cfg.repl_id == 0) {
		start_domain(d);
		start_signals(d);
		return;
	}
	d->cli_ctx = tls_client_ctx(d->cfg.ca, d->cfg.crl, d->cfg.cert,
	    d->cfg.key, &err);
	if (d->cli_ctx == NULL)
		fatalx("%s", err.text);
	snprintf(rpc, sizeof(rpc), "%s:%u", d->cfg.repl_host,
	    d->cfg.repl_port);
	snprintf(raft, sizeof(raft), "%s:%u", d->cfg.repl_raft_host,
	    d->cfg.repl_raft_port);
	memset(&ro, 0, sizeof(ro));
	ro.id = d->cfg.repl_id;
	ro.rpc_address = rpc;
	ro.raft_address = raft;
	ro.data_dir = d->cfg.repl_data_dir;
	ro.election_ms = (unsigned)d->cfg.repl_election_ms;
	ro.heartbeat_ms = (unsigned)d->cfg.repl_heartbeat_ms;
	ro.snapshot_threshold = d->cfg.repl_snapshot_threshold;
	ro.srv_ctx = d->ctx;
	ro.cli_ctx = d->cli_ctx;
	d->rpc.repl = d->repl = repl_create(d->base, &ro, args->bootstrap,
	    on_role, d, &err);
	if (d->repl == NULL)
		fatalx("%s", err.text);
	if (args->restore != NULL && !repl_had_state(d->repl))
		d->restore = args->restore;
	else if (args->restore != NULL)
		log_info("replication: %s already holds a Raft log; --restore "
		    "does nothing", d->cfg.repl_data_dir);
	if (args->join != NULL && !repl_had_state(d->repl))
		join_cluster(d, args->join);
	else if (args->join != NULL)
		log_info("replication: %s already holds a Raft log; --join "
		    "does nothing", d->cfg.repl_data_dir);
	else if (!args->bootstrap && !repl_had_state(d->repl))
		log_warnx("replication: %s holds no Raft log: start the first "
		    "replica with --bootstrap and the others with --join ADDR",
		    d->cfg.repl_data_dir);
	start_signals(d);
	log_info("replica %llu listening on %s:%u, a follower until elected",
	    (unsigned long long)d->cfg.repl_id, d->cfg.listen_host,
	    server_port(d->srv));
}

static void
stop(struct cohortd *d)
{
	/* Commit and answer what is in flight while the connections are
	 * still there; then close them with everything still alive that
	 * their close callbacks reach. */
	if (d->agent_wait != NULL)
		event_free(d->agent_wait);
	http_destroy(d->http);
	if (d->txq != NULL)
		txq_flush(d->txq);
	rpc_steps_waits_free(&d->rpc);
	server_destroy(d->srv);
	d->rpc.srv = NULL;
	if (d->cluster != NULL) {
		agentcmd_destroy(d->agentcmd);
		driver_destroy(d->driver);
		cluster_destroy(d->cluster);
	}
	mailer_destroy(d->mailer);
	stepcred_destroy(d->stepcred);
	txq_destroy(d->txq);
	topo_destroy(d->topo);
	if (d->sighup != NULL)
		event_free(d->sighup);
	if (d->sigint != NULL)
		event_free(d->sigint);
	if (d->sigterm != NULL)
		event_free(d->sigterm);
	SSL_CTX_free(d->ctx);
	SSL_CTX_free(d->cli_ctx);
	if (d->jobs != NULL) {
		suspect_destroy(d->suspect);
		nodes_destroy(d->nodes);
		jobs_destroy(d->jobs);
		queues_destroy(d->queues);
	}
	store_close(d->store);
	event_base_free(d->base);
	ctl_config_clear(&d->cfg);
}

/* cohortd --backup FILE: copy the configured database, which a running
 * cohortd may hold, and say what the copy holds (store_backup). */
static int
run_backup(const struct ctl_config *cfg, const char *file, bool force)
{
	struct store_backup_info info;
	struct cerr err;

	if (store_backup(cfg->database, file, force ? STORE_BACKUP_FORCE : 0,
	    &info, &err) == -1) {
		fprintf(stderr, "cohortd: backup: %s\n", err.text);
		return 1;
	}
	printf("cohortd: wrote %s from %s: %lld jobs (ids up to %llu), "
	    "%lld nodes, %lld events, schema version %lld, %llu bytes; "
	    "integrity ok\n", file, cfg->database, (long long)info.jobs,
	    (unsigned long long)info.max_job_id, (long long)info.nodes,
	    (long long)info.events, (long long)info.schema,
	    (unsigned long long)info.bytes);
	if (info.schema < store_schema_version())
		printf("cohortd: (an older schema: this cohortd migrates it "
		    "to version %d when it starts on it)\n",
		    store_schema_version());
	return 0;
}

/* cohortd --backup FILE of a replica: the leader's database, fetched
 * in pieces through this replica's address (a follower names the
 * leader), written and checked as store_backup does. */
static int
run_backup_replicated(const struct ctl_config *cfg, const char *file,
    bool force)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__BackupRequest br = COHORT__V1__BACKUP_REQUEST__INIT;
	char at[REPL_ADDR_MAX];
	struct cconn_opts o = {
		.server = at, .cert = cfg->cert, .key = cfg->key,
		.ca = cfg->ca, .crl = cfg->crl, .timeout_ms = 30000,
	};
	struct store_backup_info info;
	unsigned char *img = NULL;
	uint64_t size = 0, off = 0;
	struct cconn *c;
	struct cerr err;
	int rc = 1;

	snprintf(at, sizeof(at), "%s:%u", cfg->repl_host, cfg->repl_port);
	if ((c = cconn_open_tls(&o, &err)) == NULL) {
		fprintf(stderr, "cohortd: backup: %s\n", err.text);
		return 1;
	}
	req.body_case = COHORT__V1__ENVELOPE__BODY_BACKUP;
	req.backup = &br;
	do {
		if ((rep = cconn_call(c, &req, &err)) == NULL) {
			fprintf(stderr, "cohortd: backup: %s\n", err.text);
			goto out;
		}
		if (rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR) {
			fprintf(stderr, "cohortd: backup: %s\n",
			    rep->error->text);
			frame_free(rep);
			goto out;
		}
		if (rep->body_case != COHORT__V1__ENVELOPE__BODY_BACKUP_REPLY ||
		    (img != NULL && (rep->backup_reply->size != size ||
		    rep->backup_reply->image_id != br.image_id)) ||
		    rep->backup_reply->offset != off) {
			fprintf(stderr, "cohortd: backup: the leader answered "
			    "out of turn\n");
			frame_free(rep);
			goto out;
		}
		if (img == NULL) {
			size = rep->backup_reply->size;
			if (size == 0 || size > SIZE_MAX / 2 ||
			    (img = malloc(size)) == NULL) {
				fprintf(stderr, "cohortd: backup: cannot hold "
				    "an image of %llu bytes\n",
				    (unsigned long long)size);
				frame_free(rep);
				goto out;
			}
			br.has_image_id = true;
			br.image_id = rep->backup_reply->image_id;
		}
		if (rep->backup_reply->data.len == 0 ||
		    rep->backup_reply->data.len > size - off) {
			fprintf(stderr, "cohortd: backup: a piece of %zu bytes "
			    "at %llu of %llu\n", rep->backup_reply->data.len,
			    (unsigned long long)off, (unsigned long long)size);
			frame_free(rep);
			goto out;
		}
		memcpy(img + off, rep->backup_reply->data.data,
		    rep->backup_reply->data.len);
		off += rep->backup_reply->data.len;
		frame_free(rep);
		br.has_offset = true;
		br.offset = off;
	} while (off < size);
	if (store_backup_image(img, size, file, force ? STORE_BACKUP_FORCE :
	    0, &info, &err) == -1) {
		fprintf(stderr, "cohortd: backup: %s\n", err.text);
		goto out;
	}
	printf("cohortd: wrote %s from the leader through %s: %lld jobs (ids "
	    "up to %llu), %lld nodes, %lld events, schema version %lld, %llu "
	    "bytes; integrity ok\n", file, at, (long long)info.jobs,
	    (unsigned long long)info.max_job_id, (long long)info.nodes,
	    (long long)info.events, (long long)info.schema,
	    (unsigned long long)info.bytes);
	rc = 0;
out:
	free(img);
	cconn_close(c);
	return rc;
}

int
main(int argc, char **argv)
{
	struct cohortd d;
	struct daemon_args args;
	struct cerr err;
	int rc, ready_fd = -1;
	bool reexec;

	memset(&d, 0, sizeof(d));
	if ((rc = daemon_args_opts(argc, argv, "cohortd",
	    SYSCONFDIR "/cohort/cohortd.conf", DAEMON_OPT_BACKUP,
	    &args)) != -1)
		return rc;
	if (ctl_config_load(&d.cfg, args.config, &err) == -1) {
		fprintf(stderr, "cohortd: %s\n", err.text);
		return 1;
	}
	if (args.restore != NULL && access(args.restore, R_OK) == -1) {
		fprintf(stderr, "cohortd: --restore %s: %s\n", args.restore,
		    strerror(errno));
		ctl_config_clear(&d.cfg);
		return 1;
	}
	if ((args.bootstrap || args.join != NULL) && d.cfg.repl_id == 0) {
		fprintf(stderr, "cohortd: --bootstrap and --join need a "
		    "[replication] section in %s\n", args.config);
		ctl_config_clear(&d.cfg);
		return 2;
	}
	if (args.backup != NULL && d.cfg.repl_id != 0) {
		rc = run_backup_replicated(&d.cfg, args.backup, args.force);
		ctl_config_clear(&d.cfg);
		return rc;
	}
	if (args.backup != NULL) {
		rc = run_backup(&d.cfg, args.backup, args.force);
		ctl_config_clear(&d.cfg);
		return rc;
	}
	d.config_path = args.config;
	d.verbose = args.verbose;
	d.argv = argv;
	/* Started again by restart_as_follower: already detached. */
	if ((reexec = getenv("COHORTD_REEXEC") != NULL))
		unsetenv("COHORTD_REEXEC");
	signal(SIGPIPE, SIG_IGN);
	/* A scheduling pass allocates and frees arrays sized by the pending
	 * queue (1-2 MiB at 8,000 pending jobs). glibc's default trims the
	 * heap top after each, so every pass faulted its pages in again and
	 * zeroed them (page faults and brk were ~12% of the controller's CPU
	 * under a submit stream). Keep up to 32 MiB of free heap instead;
	 * only allocations above that get their own mapping. */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 32 << 20);
	/* Start-up errors go to stderr either way; syslog only once we run
	 * detached. */
	log_init("cohortd", true, args.verbose);
	if (!args.verbose)
		log_set_level(d.cfg.log_level);
	if (!args.foreground && !reexec && daemon_detach(&ready_fd) == -1)
		fatal("cannot daemonize");
	start(&d, &args);
	if (!args.foreground) {
		log_init("cohortd", false, args.verbose);
		daemon_ready(ready_fd);
	}
	sd_notify(0, "READY=1");
	event_base_dispatch(d.base);
	sd_notify(0, "STOPPING=1");
	stop(&d);
	log_info("stopped");
	return 0;
}
