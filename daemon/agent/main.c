/* cohort-agent: the node agent. main() reads as the order things come up
 * in; they go down in reverse. Stopping the agent never stops tasks:
 * their supervisors keep them running and the next agent adopts them. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <openssl/ssl.h>
#include <systemd/sd-daemon.h>

#include "daemon/agent/agent.h"
#include "daemon/agent/agent_config.h"
#include "daemon/agent/health.h"
#include "daemon/agent/inventory.h"
#include "daemon/agent/link.h"
#include "daemon/agent/nvml.h"
#include "lib/daemon.h"
#include "lib/log.h"
#include "lib/tls.h"

struct cohort_agent {
	struct agent_config cfg;
	struct inventory inv;
	struct event_base *base;
	SSL_CTX *ctx;
	struct link *link;
	struct agent *agent;
	struct nvml *nv;		/* for health; NULL without NVML */
	struct health *health;
	struct event *sigterm;
	struct event *sigint;
	struct event *sighup;
	const char *config_path;	/* re-read on SIGHUP */
	bool verbose;			/* -v */
};

/* ---- the link's operations: this node's real tasks and health ---- */

static const struct inventory *
op_inventory(void *arg, struct cerr *err)
{
	struct cohort_agent *d = arg;

	return &d->inv;
}

static const struct node_health *
op_health(void *arg)
{
	struct cohort_agent *d = arg;

	return health_current(d->health);
}

static size_t
op_take_xids(void *arg, struct xid_event *out, size_t max)
{
	struct cohort_agent *d = arg;

	return health_nvml_take_xids(d->health, out, max);
}

static struct task_report *
op_tasks(void *arg, size_t *n)
{
	struct cohort_agent *d = arg;

	return agent_tasks(d->agent, n);
}

static struct ckpt_report *
op_checkpoints(void *arg, size_t *n)
{
	struct cohort_agent *d = arg;

	return agent_checkpoints(d->agent, n);
}

static struct step_time *
op_step_times(void *arg, size_t *n)
{
	struct cohort_agent *d = arg;

	return agent_step_times(d->agent, n);
}

static struct progress_report *
op_progress(void *arg, size_t *n)
{
	struct cohort_agent *d = arg;

	return agent_progress(d->agent, n);
}

static int
op_launch(void *arg, const struct launch *l, struct cerr *err)
{
	struct cohort_agent *d = arg;

	return agent_launch(d->agent, l, err);
}

static int
op_prepare(void *arg, const struct launch *l, uint64_t token,
    struct cerr *err)
{
	struct cohort_agent *d = arg;

	return agent_prepare_image(d->agent, l, token, err);
}

static void
op_stop(void *arg, uint64_t job_id, uint32_t restart, const uint32_t *step)
{
	struct cohort_agent *d = arg;

	agent_stop(d->agent, job_id, restart, step);
}

static unsigned
op_signal(void *arg, uint64_t job_id, uint32_t restart,
    const uint32_t *step, enum agent_scope scope, int sig)
{
	struct cohort_agent *d = arg;

	return agent_signal(d->agent, job_id, restart, step, scope, sig);
}

static int
op_advise(void *arg, uint64_t job_id, uint32_t restart, uint32_t advice_s)
{
	struct cohort_agent *d = arg;

	return agent_advise(d->agent, job_id, restart, advice_s);
}

static ssize_t
op_read_log(void *arg, uint64_t job_id, uint32_t restart,
    const uint32_t *step, unsigned rank, bool is_stderr, uint64_t offset,
    void *buf, size_t max)
{
	struct cohort_agent *d = arg;

	return agent_read_log(d->agent, job_id, restart, step, rank,
	    is_stderr, offset, buf, max);
}

static ssize_t
op_write_stdin(void *arg, uint64_t job_id, uint32_t restart, uint32_t step,
    unsigned rank, uint64_t offset, const void *data, size_t len, bool eof)
{
	struct cohort_agent *d = arg;

	return agent_write_stdin(d->agent, job_id, restart, step, rank,
	    offset, data, len, eof);
}

static ssize_t
op_append_stdin(void *arg, uint64_t job_id, uint32_t restart, uint32_t step,
    unsigned rank, const void *data, size_t len)
{
	struct cohort_agent *d = arg;

	return agent_append_stdin(d->agent, job_id, restart, step, rank, data,
	    len);
}

static int
op_step_window(void *arg, uint64_t job_id, uint32_t restart, uint32_t step,
    unsigned rank, unsigned rows, unsigned cols)
{
	struct cohort_agent *d = arg;

	return agent_step_window(d->agent, job_id, restart, step, rank, rows,
	    cols);
}

static void
op_exit_acked(void *arg, uint64_t job_id, uint32_t restart,
    const uint32_t *step, unsigned rank)
{
	struct cohort_agent *d = arg;

	agent_exit_acked(d->agent, job_id, restart, step, rank);
}

static const struct link_ops agent_link_ops = {
	.inventory = op_inventory,
	.health = op_health,
	.take_xids = op_take_xids,
	.tasks = op_tasks,
	.checkpoints = op_checkpoints,
	.progress = op_progress,
	.step_times = op_step_times,
	.launch = op_launch,
	.prepare = op_prepare,
	.stop = op_stop,
	.signal = op_signal,
	.advise = op_advise,
	.read_log = op_read_log,
	.write_stdin = op_write_stdin,
	.append_stdin = op_append_stdin,
	.step_window = op_step_window,
	.exit_acked = op_exit_acked,
};

/* ---- the process ---- */

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct cohort_agent *d = arg;

	log_info("signal %d: shutting down (tasks keep running)", (int)sig);
	event_base_loopexit(d->base, NULL);
}

/* SIGHUP: read the configuration file again for what can change while
 * running: the log level, and the CA and CRL (a controller whose
 * certificate they now refuse is left). A file that does not load, or a
 * CA or CRL that does not, changes nothing. Tasks keep running either
 * way. */
static void
on_reload(evutil_socket_t sig, short what, void *arg)
{
	struct cohort_agent *d = arg;
	struct agent_config nc;
	struct cerr err;
	char *t;

	if (agent_config_load(&nc, d->config_path, &err) == -1) {
		log_warnx("SIGHUP: %s; nothing changed", err.text);
		return;
	}
	if (tls_ctx_reload(d->ctx, nc.ca, nc.crl, &err) == -1) {
		log_warnx("SIGHUP: %s; keeping the certificates and CRL "
		    "loaded before (nothing changed)", err.text);
		agent_config_clear(&nc);
		return;
	}
	log_info("SIGHUP: reloaded %s%s%s", nc.ca,
	    nc.crl != NULL ? " and " : "", nc.crl != NULL ? nc.crl : "");
	t = d->cfg.ca, d->cfg.ca = nc.ca, nc.ca = t;
	t = d->cfg.crl, d->cfg.crl = nc.crl, nc.crl = t;
	if (nc.log_level != d->cfg.log_level) {
		log_info("SIGHUP: log_level %s -> %s%s",
		    log_level_name(d->cfg.log_level),
		    log_level_name(nc.log_level),
		    d->verbose ? " (ignored: -v keeps debug)" : "");
		d->cfg.log_level = nc.log_level;
		if (!d->verbose)
			log_set_level(nc.log_level);
	}
	agent_config_clear(&nc);
	link_recheck(d->link);
}

/* The GPUs' NICs through hwloc: for NVML's GPUs from this machine (NVML
 * says nothing of NICs; without them the node still runs, rails
 * unknown), for any source from [agent] hwloc_xml when given (a file
 * that cannot be read stops the agent, as any bad config does). */
static void
agent_nics(struct cohort_agent *d)
{
	struct cerr err;
	unsigned i, n = 0;

	if (d->cfg.hwloc_xml == NULL && strcmp(d->inv.source, "nvml") != 0)
		return;
	if (inventory_nics(&d->inv, d->cfg.hwloc_xml, &err) == -1) {
		if (d->cfg.hwloc_xml != NULL)
			fatalx("hwloc_xml: %s", err.text);
		log_warnx("%s: GPUs' NICs unknown: %s", d->cfg.name, err.text);
		return;
	}
	for (i = 0; i < d->inv.ngpus; i++) {
		if (d->inv.gpus[i].nic < 0)
			continue;
		n++;
		log_debug("GPU %u: NIC %s (rail %d)%s", i,
		    d->inv.gpus[i].nic_name, d->inv.gpus[i].nic,
		    d->inv.gpus[i].nic_near ? ", on its PCIe switch" : "");
	}
	log_info("%s: NICs of %u of %u GPUs found (hwloc%s%s)", d->cfg.name,
	    n, d->inv.ngpus, d->cfg.hwloc_xml != NULL ? ", " : "",
	    d->cfg.hwloc_xml != NULL ? d->cfg.hwloc_xml : "");
}

static void
start(struct cohort_agent *d)
{
	struct link_params lp = {
		.controllers = &d->cfg.controllers,
		.host = d->cfg.controller_host,
		.port = d->cfg.controller_port,
		.name = d->cfg.name,
		.address = d->cfg.address,
		.spare = d->cfg.spare,
		.software = "cohort-agent " PACKAGE_VERSION,
		.heartbeat_ms = d->cfg.heartbeat_ms,
	};
	struct cerr err;
	int rc;

	switch (d->cfg.source) {
	case AGENT_SOURCE_AUTO:
		rc = inventory_auto(d->cfg.nvml_library, &d->inv, &err);
		break;
	case AGENT_SOURCE_NVML:
		rc = inventory_nvml(d->cfg.nvml_library, &d->inv, &err);
		break;
	case AGENT_SOURCE_NONE:
		rc = inventory_none(&d->inv);
		break;
	default:
		rc = inventory_simulated(&d->cfg.sim, d->cfg.name, &d->inv,
		    &err);
		break;
	}
	if (rc == -1)
		fatalx("inventory: %s", err.text);
	agent_nics(d);
	/* The configured features travel with the inventory (checked at
	 * load, so this cannot fail on a loaded config). */
	if (d->cfg.features != NULL && inventory_set_features(&d->inv,
	    d->cfg.features, err.text, sizeof(err.text)) == -1)
		fatalx("features: %s", err.text);
	log_info("%s: %u GPUs (%s), %u CPUs, %llu MiB", d->cfg.name,
	    d->inv.ngpus, d->inv.source, d->inv.ncpus,
	    (unsigned long long)d->inv.memory_mb);
	if ((d->base = event_base_new()) == NULL)
		fatalx("cannot create the event loop");
	d->ctx = tls_client_ctx(d->cfg.ca, d->cfg.crl, d->cfg.cert,
	    d->cfg.key, &err);
	if (d->ctx == NULL || tls_ctx_check_own_issuer(d->ctx, d->cfg.cert,
	    d->cfg.ca, &err) == -1)
		fatalx("%s", err.text);
	d->link = link_create(d->base, &lp, d->ctx, &agent_link_ops, d, &err);
	if (d->link == NULL)
		fatalx("%s", err.text);
	d->agent = agent_create(d->base, &d->cfg, link_task_exited, d->link,
	    &err);
	if (d->agent == NULL)
		fatalx("%s", err.text);
	agent_set_inventory(d->agent, &d->inv);
	if ((d->cfg.source == AGENT_SOURCE_AUTO ||
	    d->cfg.source == AGENT_SOURCE_NVML) && (d->nv = nvml_create(d->cfg.nvml_library,
	    &err)) == NULL)
		log_warnx("health: %s; no XID, ECC or temperature checks",
		    err.text);
	d->health = health_create(d->base, &d->cfg, d->nv, d->inv.ngpus,
	    link_health_changed, d->link, &err);
	if (d->health == NULL)
		fatalx("%s", err.text);
	/* Before registering, so that a sick node says so at once. */
	health_check_now(d->health);
	agent_set_checkpoint_cb(d->agent, link_checkpoint_seen, d->link);
	agent_set_prepared_cb(d->agent, link_prepared, d->link);
	link_start(d->link, 0);
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
stop(struct cohort_agent *d)
{
	if (d->sighup != NULL)
		event_free(d->sighup);
	if (d->sigint != NULL)
		event_free(d->sigint);
	if (d->sigterm != NULL)
		event_free(d->sigterm);
	link_destroy(d->link);
	health_destroy(d->health);
	nvml_destroy(d->nv);
	agent_destroy(d->agent);
	SSL_CTX_free(d->ctx);
	event_base_free(d->base);
	agent_config_clear(&d->cfg);
}

int
main(int argc, char **argv)
{
	struct cohort_agent d;
	struct daemon_args args;
	struct cerr err;
	int rc, ready_fd = -1;

	memset(&d, 0, sizeof(d));
	if ((rc = daemon_args(argc, argv, "cohort-agent",
	    SYSCONFDIR "/cohort/cohort-agent.conf", &args)) != -1)
		return rc;
	if (agent_config_load(&d.cfg, args.config, &err) == -1) {
		fprintf(stderr, "cohort-agent: %s\n", err.text);
		return 1;
	}
	d.config_path = args.config;
	d.verbose = args.verbose;
	signal(SIGPIPE, SIG_IGN);
	log_init("cohort-agent", true, args.verbose);
	if (!args.verbose)
		log_set_level(d.cfg.log_level);
	if (!args.foreground && daemon_detach(&ready_fd) == -1)
		fatal("cannot daemonize");
	start(&d);
	if (!args.foreground) {
		log_init("cohort-agent", false, args.verbose);
		daemon_ready(ready_fd);
	}
	sd_notify(0, "READY=1");
	event_base_dispatch(d.base);
	sd_notify(0, "STOPPING=1");
	stop(&d);
	log_info("stopped");
	return 0;
}
