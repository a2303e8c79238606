/* SIGHUP for cohortd (ctl_reload.h). Everything is checked before
 * anything is applied: the file must load, the queues must keep their
 * shape, the CA and CRL must load; only then do the limits, the queues'
 * quotas and the log level change, each change logged on a line of its
 * own. The connections stay up, but for those whose peer the new CRL
 * revokes: RPC peers and Raft streams alike. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/ctl_reload.h"
#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/queues.h"
#include "daemon/controller/repl/repl.h"
#include "daemon/controller/rpc/server.h"
#include "lib/log.h"
#include "lib/tls.h"

static bool
str_same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* A quota or limit as written in the file: "none" for unlimited. */
static const char *
lim_str(uint32_t v, char *buf, size_t len)
{
	if (v == SCHED_UNLIMITED)
		return "none";
	snprintf(buf, len, "%" PRIu32, v);
	return buf;
}

static void
log_u64(const char *what, uint64_t was, uint64_t now)
{
	if (was != now)
		log_info("SIGHUP: %s %" PRIu64 " -> %" PRIu64, what, was, now);
}

static void
log_lim(const char *queue, const char *what, uint32_t was, uint32_t now)
{
	char a[16], b[16];

	if (was != now)
		log_info("SIGHUP: queue %s %s %s -> %s", queue, what,
		    lim_str(was, a, sizeof(a)), lim_str(now, b, sizeof(b)));
}

static bool
names_same(char *const *a, size_t na, char *const *b, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

/* One line per field of queue i that the reload changes. */
static void
log_queue_changes(const struct queue_def *a, const struct queue_def *b)
{
	char what[96];
	size_t m;

	log_lim(a->name, "nominal", a->gpus, b->gpus);
	for (m = 0; m < a->nmodels; m++) {
		snprintf(what, sizeof(what), "gpus.%s", a->models[m].model);
		log_lim(a->name, what, a->models[m].gpus, b->models[m].gpus);
	}
	log_lim(a->name, "borrow_limit", a->borrow_limit, b->borrow_limit);
	log_lim(a->name, "lend_limit", a->lend_limit, b->lend_limit);
	log_lim(a->name, "weight", a->weight, b->weight);
	log_lim(a->name, "max_gpus_per_job", a->max_gpus_per_job,
	    b->max_gpus_per_job);
	if (a->max_time_s != b->max_time_s)
		log_info("SIGHUP: queue %s max_time %" PRIu64 "s -> %" PRIu64
		    "s", a->name, a->max_time_s, b->max_time_s);
	if (a->preempt != b->preempt || a->preempt_grace_s !=
	    b->preempt_grace_s || a->min_runtime_s != b->min_runtime_s)
		log_info("SIGHUP: queue %s preemption settings changed",
		    a->name);
	if (!names_same(a->users, a->nusers, b->users, b->nusers))
		log_info("SIGHUP: queue %s users: %zu -> %zu names", a->name,
		    a->nusers, b->nusers);
	if (!names_same(a->admins, a->nadmins, b->admins, b->nadmins))
		log_info("SIGHUP: queue %s admins: %zu -> %zu names", a->name,
		    a->nadmins, b->nadmins);
}

/* Keys read only at start: say that a change waits for a restart. */
static bool
port_same(unsigned was, unsigned bound, unsigned now)
{
	return was == now || (was == 0 && now == bound);
}

/* The scalar keys read only at start (the others, limits and queues,
 * are applied; the paths and listeners are compared below). */
#define RESTART_KEY(section, key, field)                                       \
	{ "[" section "] " key, offsetof(struct ctl_config, field),            \
	    sizeof(((struct ctl_config *)0)->field) }
static const struct {
	const char *key;
	size_t off, size;
} restart_keys[] = {
	RESTART_KEY("controller", "node_timeout", node_timeout_ms),
	RESTART_KEY("controller", "heartbeat_interval", heartbeat_ms),
	RESTART_KEY("controller", "stop_timeout", stop_timeout_ms),
	RESTART_KEY("controller", "default_time_limit", default_time_limit_ms),
	RESTART_KEY("controller", "early_fail_window", early_fail_window_ms),
	RESTART_KEY("controller", "queue_order", queue_order),
	RESTART_KEY("controller", "queue_aging", queue_aging),
	RESTART_KEY("controller", "accept_unknown_nodes", accept_unknown_nodes),
	RESTART_KEY("controller", "fair_share_half_life",
	    fair_share_half_life_ms),
	RESTART_KEY("controller", "starve_after", starve_after_ms),
	RESTART_KEY("controller", "starve_min_gpus", starve_min_gpus),
	RESTART_KEY("controller", "job_retention", job_retention_ms),
	RESTART_KEY("controller", "event_retention", event_retention_ms),
	RESTART_KEY("limits", "max_frame", max_frame),
	RESTART_KEY("limits", "max_connections", max_connections),
	RESTART_KEY("limits", "max_handshakes", max_handshakes),
	RESTART_KEY("limits", "max_handshakes_per_source",
	    max_handshakes_per_source),
	RESTART_KEY("limits", "handshake_timeout", handshake_timeout_ms),
	RESTART_KEY("limits", "hello_timeout", hello_timeout_ms),
	RESTART_KEY("limits", "max_connections_per_user",
	    max_connections_per_user),
	RESTART_KEY("limits", "agent_reserve", agent_reserve),
	RESTART_KEY("limits", "max_output_per_user", max_output_per_user),
	RESTART_KEY("limits", "max_output_total", max_output_total),
	RESTART_KEY("limits", "idle_timeout", idle_timeout_ms),
	RESTART_KEY("limits", "max_requests_in_flight", max_requests_in_flight),
	RESTART_KEY("tenants", "page_size", page_size),
	RESTART_KEY("tenants", "private_data", private_data),
	RESTART_KEY("suspect", "drain", suspect_drain),
	RESTART_KEY("suspect", "early_jobs", suspect_early_jobs),
	RESTART_KEY("suspect", "early_users", suspect_early_users),
	RESTART_KEY("suspect", "early_period", suspect_early_period_ms),
	RESTART_KEY("suspect", "hardware_failures", suspect_hardware_failures),
	RESTART_KEY("suspect", "hardware_period", suspect_hardware_period_ms),
	RESTART_KEY("suspect", "confirm_within", suspect_confirm_ms),
	RESTART_KEY("suspect", "recent", suspect_recent_ms),
	RESTART_KEY("suspect", "large_gang", suspect_large_gang),
};

static bool
nodes_same(const struct ctl_config *a, const struct ctl_config *b)
{
	size_t i;

	if (a->nnodes != b->nnodes)
		return false;
	for (i = 0; i < a->nnodes; i++)
		if (strcmp(a->nodes[i], b->nodes[i]) != 0)
			return false;
	return true;
}

/* One warning per start-up key whose value changed: it waits for a
 * restart, and the rest of the file is applied. */
static void
log_needs_restart(const struct ctl_reload_target *t,
    const struct ctl_config *b, const char *path)
{
	const struct ctl_config *a = t->cfg;
	const char *what[10];
	size_t i, n = 0;

	if (strcmp(a->listen_host, b->listen_host) != 0 ||
	    !port_same(a->listen_port, t->port, b->listen_port))
		what[n++] = "[controller] listen";
	if (!str_same(a->port_file, b->port_file))
		what[n++] = "[controller] port_file";
	if (!str_same(a->database, b->database))
		what[n++] = "[controller] database";
	if (!str_same(a->topology, b->topology))
		what[n++] = "[controller] topology";
	if (!str_same(a->mail_program, b->mail_program))
		what[n++] = "[controller] mail_program";
	if (!nodes_same(a, b))
		what[n++] = "[controller] nodes";
	if (!str_same(a->cert, b->cert) || !str_same(a->key, b->key))
		what[n++] = "[tls] cert or key";
	if (a->http != b->http ||
	    !port_same(a->http_port, t->http_port, b->http_port) ||
	    strcmp(a->http_host, b->http_host) != 0 ||
	    !str_same(a->http_port_file, b->http_port_file))
		what[n++] = "[http] listen or port_file";
	for (i = 0; i < n; i++)
		log_warnx("SIGHUP: %s changed in %s: restart cohortd to apply "
		    "it", what[i], path);
	for (i = 0; i < sizeof(restart_keys) / sizeof(restart_keys[0]); i++)
		if (memcmp((const char *)a + restart_keys[i].off,
		    (const char *)b + restart_keys[i].off,
		    restart_keys[i].size) != 0)
			log_warnx("SIGHUP: %s changed in %s: restart cohortd "
			    "to apply it", restart_keys[i].key, path);
}

static void
swap_str(char **a, char **b)
{
	char *t = *a;

	*a = *b;
	*b = t;
}

/* Apply what was checked: limits, queues, log level. */
static void
apply(struct ctl_reload_target *t, struct ctl_config *nc, struct queues *nq)
{
	struct ctl_config *c = t->cfg;
	struct job_limits lim = {
		.script_max = nc->max_script,
		.max_pending_per_user = nc->max_pending_per_user,
		.submit_rate = nc->submit_rate,
		.submit_burst = nc->submit_burst,
	};
	size_t i;

	log_u64("max_pending_per_user", c->max_pending_per_user,
	    nc->max_pending_per_user);
	log_u64("submit_rate", c->submit_rate, nc->submit_rate);
	log_u64("submit_burst", c->submit_burst, nc->submit_burst);
	log_u64("max_script", c->max_script, nc->max_script);
	jobs_set_limits(t->jobs, &lim);
	c->max_pending_per_user = nc->max_pending_per_user;
	c->submit_rate = nc->submit_rate;
	c->submit_burst = nc->submit_burst;
	c->max_script = nc->max_script;

	for (i = 0; i < queues_count(t->queues); i++)
		log_queue_changes(queues_def(t->queues, i), queues_def(nq, i));
	queues_reconfigure(t->queues, nq);
	cluster_changed(t->cluster);

	if (nc->log_level != c->log_level) {
		log_info("SIGHUP: log_level %s -> %s%s",
		    log_level_name(c->log_level), log_level_name(nc->log_level),
		    t->verbose ? " (ignored: -v keeps debug)" : "");
		c->log_level = nc->log_level;
		if (!t->verbose)
			log_set_level(nc->log_level);
	}
}

int
ctl_reload(const char *path, struct ctl_reload_target *t)
{
	struct ctl_config nc;
	struct queues *nq;
	struct cerr err;
	unsigned cut;

	if (ctl_config_load(&nc, path, &err) == -1) {
		log_warnx("SIGHUP: %s; nothing changed", err.text);
		return -1;
	}
	nq = queues_create(nc.queues, nc.nqueues,
	    (int64_t)nc.fair_share_half_life_ms, &err);
	if (nq == NULL || queues_compatible(t->queues, nq, &err) == -1) {
		log_warnx("SIGHUP: %s: %s; nothing changed", path, err.text);
		goto fail;
	}
	if (tls_ctx_reload_both(t->ctx, t->cli_ctx, nc.ca, nc.crl,
	    &err) == -1) {
		log_warnx("SIGHUP: %s; keeping the certificates and CRL "
		    "loaded before (nothing changed)", err.text);
		goto fail;
	}
	cut = server_drop_revoked(t->srv);
	if (t->repl != NULL)
		cut += repl_drop_revoked(t->repl);
	log_info("SIGHUP: reloaded %s%s%s; %u connection%s cut off", nc.ca,
	    nc.crl != NULL ? " and " : "", nc.crl != NULL ? nc.crl : "", cut,
	    cut == 1 ? "" : "s");
	swap_str(&t->cfg->ca, &nc.ca);
	swap_str(&t->cfg->crl, &nc.crl);
	log_needs_restart(t, &nc, path);
	apply(t, &nc, nq);
	queues_destroy(nq);
	ctl_config_clear(&nc);
	return 0;
fail:
	queues_destroy(nq);
	ctl_config_clear(&nc);
	return -1;
}
