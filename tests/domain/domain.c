#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/recovery.h"
#include "daemon/controller/domain/steps.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/domain/suspect.h"
#include "daemon/controller/store/txq.h"
#include "tests/domain/domain.h"

static struct domain_cmd *
domain_record(struct domain *d, enum domain_cmd_kind kind, uint64_t conn_id,
    uint64_t job_id, uint32_t attempt)
{
	struct domain_cmd *c;
	size_t i;

	if (d->ncmds == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;

		if ((c = reallocarray(d->cmds, cap, sizeof(*c))) == NULL)
			return NULL;
		d->cmds = c;
		d->cap = cap;
	}
	c = &d->cmds[d->ncmds++];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->conn_id = conn_id;
	c->job_id = job_id;
	c->attempt = attempt;
	c->at_ms = d->now;
	c->answered = true;
	for (i = 0; i < d->nnodes; i++)
		if (d->nodes[i].conn_id == conn_id)
			snprintf(c->node, sizeof(c->node), "%s",
			    d->nodes[i].name);
	return c;
}

static int
domain_launch(void *ctx, uint64_t conn_id, const struct launch_cmd *l,
    int64_t now, outbox_done done, void *arg)
{
	struct domain *d = ctx;
	struct domain_cmd *c;

	if (d->fail_sends || (c = domain_record(d, DOMAIN_LAUNCH, conn_id,
	    l->job->id, l->job->attempt)) == NULL)
		return -1;
	c->node_rank = l->place->node_rank;
	c->ngpus = l->place->ngpus;
	if (l->step != NULL) {
		c->has_step = true;
		c->step = l->step->id;
		c->ngpus = l->snode->ngpus;
		c->step_ntasks = l->snode->ntasks;
		c->step_first_rank = l->snode->first_rank;
	}
	c->nnodes = (unsigned)l->nnodes;
	c->advice_s = l->job->ckpt_advice_s;
	if (l->job->has_ckpt && l->job->ckpt_path != NULL)
		snprintf(c->resume, sizeof(c->resume), "%s",
		    l->job->ckpt_path);
	c->at_ms = now;
	c->done = done;
	c->arg = arg;
	c->answered = false;
	return 0;
}

static int
domain_prepare(void *ctx, uint64_t conn_id, const struct launch_cmd *l,
    int64_t now, outbox_prepared done, void *arg)
{
	struct domain *d = ctx;
	struct domain_cmd *c;

	if (d->fail_sends || (c = domain_record(d, DOMAIN_PREPARE, conn_id,
	    l->job->id, l->job->attempt)) == NULL)
		return -1;
	c->node_rank = l->place->node_rank;
	c->ngpus = l->place->ngpus;
	c->nnodes = (unsigned)l->nnodes;
	c->at_ms = now;
	c->prepared = done;
	c->arg = arg;
	c->answered = false;
	return 0;
}

static int
domain_stop(void *ctx, uint64_t conn_id, uint64_t job_id, uint32_t attempt,
    const char *reason)
{
	struct domain *d = ctx;

	if (d->fail_sends)
		return -1;
	return domain_record(d, DOMAIN_STOP, conn_id, job_id, attempt) ? 0 :
	    -1;
}

static int
domain_signal(void *ctx, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, int sig, int scope)
{
	struct domain *d = ctx;
	struct domain_cmd *c;

	if ((c = domain_record(d, DOMAIN_SIGNAL, conn_id, job_id,
	    attempt)) == NULL)
		return -1;
	c->sig = sig;
	c->scope = scope;
	return 0;
}

static int
domain_stop_step(void *ctx, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, uint32_t step, const char *reason)
{
	struct domain *d = ctx;
	struct domain_cmd *c;

	if (d->fail_sends || (c = domain_record(d, DOMAIN_STOP_STEP, conn_id,
	    job_id, attempt)) == NULL)
		return -1;
	c->has_step = true;
	c->step = step;
	return 0;
}

static int
domain_signal_step(void *ctx, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, uint32_t step, int sig)
{
	struct domain *d = ctx;
	struct domain_cmd *c;

	if ((c = domain_record(d, DOMAIN_SIGNAL_STEP, conn_id, job_id,
	    attempt)) == NULL)
		return -1;
	c->has_step = true;
	c->step = step;
	c->sig = sig;
	return 0;
}

static int
domain_read_log(void *ctx, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, int64_t step, unsigned rank, bool is_stderr,
    uint64_t offset, uint32_t max, int64_t now, outbox_log_done done,
    void *arg)
{
	struct domain *d = ctx;
	struct domain_cmd *c;

	if ((c = domain_record(d, DOMAIN_READ_LOG, conn_id, job_id,
	    attempt)) == NULL)
		return -1;
	c->has_step = step >= 0;
	c->step = step >= 0 ? (uint32_t)step : 0;
	c->node_rank = rank;
	c->is_stderr = is_stderr;
	c->log_done = done;
	c->arg = arg;
	c->answered = false;
	return 0;
}

static void
domain_pass_wanted(void *ctx)
{
	struct domain *d = ctx;

	d->passes_wanted++;
}

static void
domain_mail(void *ctx, uint64_t job_id, const char *to, const char *subject)
{
	struct domain *d = ctx;
	struct domain_cmd *c;

	if ((c = domain_record(d, DOMAIN_MAIL, 0, job_id, 0)) == NULL)
		return;
	snprintf(c->mail_to, sizeof(c->mail_to), "%s", to);
	snprintf(c->subject, sizeof(c->subject), "%s", subject);
}

static int
domain_advise(void *ctx, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, uint32_t advice_s)
{
	struct domain *d = ctx;
	struct domain_cmd *c;

	if (d->fail_sends || (c = domain_record(d, DOMAIN_ADVISE, conn_id,
	    job_id, attempt)) == NULL)
		return -1;
	c->advice_s = advice_s;
	return 0;
}

static const struct outbox_ops domain_ops = {
	.launch = domain_launch,
	.prepare = domain_prepare,
	.stop = domain_stop,
	.signal = domain_signal,
	.advise = domain_advise,
	.stop_step = domain_stop_step,
	.signal_step = domain_signal_step,
	.read_log = domain_read_log,
	.pass_wanted = domain_pass_wanted,
	.mail = domain_mail,
};

static void
domain_on_abort(void *arg)
{
	struct domain *d = arg;
	struct cerr err;

	/* As cohortd does: what was written ahead of a failed commit is
	 * read back from the database. */
	if (jobs_reload(d->js, &err) == -1)
		fprintf(stderr, "domain: jobs_reload: %s\n", err.text);
}

int
domain_open(struct domain *d, const struct cluster_opts *o, struct cerr *err)
{
	return domain_open_suspect(d, o, NULL, err);
}

int
domain_open_suspect(struct domain *d, const struct cluster_opts *o,
    const struct suspect_opts *so, struct cerr *err)
{
	struct job_limits lim = { .script_max = 1024 * 1024 };
	struct cluster_opts def = {
		.node_timeout_ms = 10000,
		.heartbeat_ms = 2000,
		.stop_timeout_ms = 60000,
		.accept_unknown_nodes = true,
	};
	struct outbox out = { &domain_ops, d };

	memset(d, 0, sizeof(*d));
	d->now = 1000000;	/* not 0: 0 means "never" in places */
	d->next_conn = 100;
	if ((d->st = store_open(":memory:", err)) == NULL)
		return -1;
	if ((d->q = txq_create(NULL, d->st, domain_on_abort, d)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	d->opts = o != NULL ? *o : def;
	if (so != NULL) {
		if ((d->sus_opts = malloc(sizeof(*d->sus_opts))) == NULL)
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		*d->sus_opts = *so;
		if ((d->sus = suspect_create(d->st, d->q, so, err)) == NULL) {
			domain_close(d);
			return -1;
		}
	}
	d->opts.suspect = d->sus;
	if ((d->js = jobs_create(d->st, d->q, &lim, d->opts.queues, err)) == NULL ||
	    (d->ns = nodes_create(d->st, d->q, d->now, err)) == NULL ||
	    (d->cl = cluster_create(d->js, d->ns, &out, &d->opts,
	    d->now, err)) == NULL) {
		domain_close(d);
		return -1;
	}
	domain_commit(d);
	return 0;
}

void
domain_close(struct domain *d)
{
	struct cerr err;

	/* As the controller's teardown (agentcmd_destroy before
	 * cluster_destroy): every launch still unanswered is answered, so
	 * that what its callback owns (a step launch's argument) is freed. */
	if (d->cl != NULL) {
		cerr_set(&err, ERR_UNAVAILABLE, "the controller is shutting "
		    "down");
		domain_answer_launches(d, &err);
	}
	cluster_destroy(d->cl);
	if (d->q != NULL)
		txq_flush(d->q);
	jobs_destroy(d->js);
	nodes_destroy(d->ns);
	suspect_destroy(d->sus);
	free(d->sus_opts);
	txq_destroy(d->q);
	if (d->st != NULL)
		store_close(d->st);
	free(d->cmds);
	free(d->nodes);
	memset(d, 0, sizeof(*d));
}

void
domain_commit(struct domain *d)
{
	txq_flush(d->q);
}

static struct domain_node *
domain_node(const struct domain *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->nnodes; i++)
		if (strcmp(d->nodes[i].name, name) == 0)
			return &d->nodes[i];
	return NULL;
}

uint64_t
domain_conn(const struct domain *d, const char *name)
{
	const struct domain_node *n = domain_node(d, name);

	return n != NULL ? n->conn_id : 0;
}

static void
domain_inventory(struct inventory *inv, unsigned ngpus)
{
	unsigned i;

	memset(inv, 0, sizeof(*inv));
	snprintf(inv->source, sizeof(inv->source), "simulated");
	inv->ncpus = 64;
	inv->memory_mb = 1024 * 1024;
	inv->ngpus = ngpus;
	for (i = 0; i < ngpus; i++) {
		inv->gpus[i].index = i;
		snprintf(inv->gpus[i].uuid, sizeof(inv->gpus[i].uuid),
		    "GPU-%u", i);
		snprintf(inv->gpus[i].model, sizeof(inv->gpus[i].model),
		    "NVIDIA H100 80GB HBM3");
		inv->gpus[i].memory_mb = 81920;
		inv->gpus[i].numa_node = i < ngpus / 2 ? 0 : 1;
		inv->gpus[i].pcie_switch = (int)i / 2;
		inv->gpus[i].nvlink_domain = 0;
		inv->gpus[i].nic = -1;
	}
}

uint64_t
domain_add_node(struct domain *d, const char *name, unsigned ngpus,
    bool spare, struct cerr *err)
{
	struct domain_node *n;
	struct inventory inv;
	uint64_t conn = d->next_conn++;

	if ((n = reallocarray(d->nodes, d->nnodes + 1, sizeof(*n))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return 0;
	}
	d->nodes = n;
	n = &d->nodes[d->nnodes];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	domain_inventory(&inv, ngpus);
	/* Known before it registers: what the domain sends it while it
	 * registers is recorded under its name. */
	n->conn_id = conn;
	d->nnodes++;
	if (cluster_register(d->cl, conn, name, "127.0.0.1", &inv, spare,
	    NULL, 0, d->now, err) == -1) {
		d->nnodes--;
		return 0;
	}
	domain_commit(d);
	return conn;
}

int
domain_add_nodes(struct domain *d, unsigned n, unsigned ngpus,
    struct cerr *err)
{
	char name[16];
	unsigned i;

	for (i = 1; i <= n; i++) {
		snprintf(name, sizeof(name), "node%02u", i);
		if (domain_add_node(d, name, ngpus, false, err) == 0)
			return -1;
	}
	return 0;
}

uint64_t
domain_reconnect(struct domain *d, const char *name,
    const struct task_report *tasks, size_t ntasks, struct cerr *err)
{
	struct domain_node *n = domain_node(d, name);
	const struct node *nd = nodes_get(d->ns, name);
	struct inventory inv;
	uint64_t conn = d->next_conn++;

	if (n == NULL || nd == NULL) {
		cerr_set(err, ERR_NOT_FOUND, "no node %s", name);
		return 0;
	}
	if (n->conn_id != 0)
		domain_disconnect(d, name);
	/* The node's copy is sized to its GPUs: copy only that. */
	memset(&inv, 0, sizeof(inv));
	memcpy(&inv, nd->inv, inventory_size(nd->inv->ngpus));
	n->conn_id = conn;
	if (cluster_register(d->cl, conn, name, "127.0.0.1", &inv,
	    nd->spare, tasks, ntasks, d->now, err) == -1) {
		n->conn_id = 0;
		return 0;
	}
	domain_commit(d);
	return conn;
}

void
domain_disconnect(struct domain *d, const char *name)
{
	struct domain_node *n = domain_node(d, name);

	if (n == NULL || n->conn_id == 0)
		return;
	cluster_conn_closed(d->cl, n->conn_id);
	n->conn_id = 0;
	domain_commit(d);
}

uint64_t
domain_submit(struct domain *d, const char *user, unsigned nodes,
    unsigned gpus_per_node, void (*spec_fn)(struct job_spec *, void *),
    void *arg, struct cerr *err)
{
	struct job_spec spec;
	struct peer who;
	uint64_t id = 0;

	memset(&who, 0, sizeof(who));
	snprintf(who.name, sizeof(who.name), "%s", user);
	who.role = ROLE_USER;
	job_spec_init(&spec);
	spec.nodes_min = spec.nodes_max = nodes;
	spec.gpus_per_node = gpus_per_node;
	/* The job takes the spec's strings: they are the heap's. */
	if ((spec.argv = calloc(1, sizeof(*spec.argv))) == NULL ||
	    (spec.argv[0] = strdup("true")) == NULL) {
		free(spec.argv);
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return 0;
	}
	spec.argc = 1;
	if (spec_fn != NULL)
		spec_fn(&spec, arg);
	if (jobs_submit(d->js, &who, &spec, d->now, &id, err) == -1)
		id = 0;
	else
		cluster_changed(d->cl);
	domain_commit(d);
	return id;
}

void
domain_pass(struct domain *d)
{
	cluster_pass(d->cl, d->now);
	domain_commit(d);
}

void
domain_tick(struct domain *d)
{
	cluster_tick(d->cl, d->now);
	domain_commit(d);
}

void
domain_advance(struct domain *d, int64_t ms)
{
	d->now += ms;
}

size_t
domain_answer_launches(struct domain *d, const struct cerr *err)
{
	size_t i, n = 0, end = d->ncmds;

	/* An answer may send more (a failed gang's stops): those come
	 * after end and are not answered here. */
	for (i = 0; i < end; i++) {
		struct domain_cmd *c = &d->cmds[i];

		if (c->kind != DOMAIN_LAUNCH || c->answered)
			continue;
		c->answered = true;
		c->done(c->arg, err, d->now);
		n++;
	}
	domain_commit(d);
	return n;
}

size_t
domain_answer_prepares(struct domain *d, uint64_t job_id, const char *node,
    const struct image_ready *r, const struct cerr *err)
{
	size_t i, n = 0, end = d->ncmds;

	/* An answer may send more (the launches): those come after end. */
	for (i = 0; i < end; i++) {
		struct domain_cmd *c = &d->cmds[i];

		if (c->kind != DOMAIN_PREPARE || c->answered ||
		    (job_id != 0 && c->job_id != job_id) ||
		    (node != NULL && strcmp(c->node, node) != 0))
			continue;
		c->answered = true;
		c->prepared(c->arg, err == NULL ? r : NULL, err, d->now);
		n++;
	}
	domain_commit(d);
	return n;
}

int
domain_exit(struct domain *d, const char *node, uint64_t job_id,
    uint32_t attempt, unsigned rank, int wait_status, struct cerr *err)
{
	struct task_report r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.job_id = job_id;
	r.restart = attempt;
	r.rank = rank;
	r.wait_status = wait_status;
	rc = cluster_task_exit(d->cl, domain_conn(d, node), &r, d->now, err);
	domain_commit(d);
	return rc;
}

void
domain_heartbeat(struct domain *d, const char *node,
    const struct task_report *tasks, size_t ntasks)
{
	cluster_reports_begin(d->cl);
	cluster_heartbeat(d->cl, domain_conn(d, node), tasks, ntasks, d->now);
	domain_commit(d);
}

size_t
domain_count(const struct domain *d, enum domain_cmd_kind kind,
    uint64_t job_id, size_t from)
{
	size_t i, n = 0;

	for (i = from; i < d->ncmds; i++)
		if (d->cmds[i].kind == kind &&
		    (job_id == 0 || d->cmds[i].job_id == job_id))
			n++;
	return n;
}

const struct domain_cmd *
domain_last(const struct domain *d, enum domain_cmd_kind kind,
    uint64_t job_id)
{
	size_t i;

	for (i = d->ncmds; i > 0; i--)
		if (d->cmds[i - 1].kind == kind &&
		    (job_id == 0 || d->cmds[i - 1].job_id == job_id))
			return &d->cmds[i - 1];
	return NULL;
}

const char *
domain_rank_node(const struct job *job, unsigned node_rank)
{
	size_t i;

	for (i = 0; i < job->nplace; i++)
		if (job->place[i].node_rank == node_rank)
			return job->place[i].node;
	return NULL;
}

const struct job *
domain_job(const struct domain *d, uint64_t id)
{
	return jobs_get(d->js, id);
}

/* ---- More of the world ---------------------------------------------- */

int
domain_restart(struct domain *d, struct cerr *err)
{
	struct job_limits lim = { .script_max = 1024 * 1024 };
	struct outbox out = { &domain_ops, d };
	size_t i;

	domain_commit(d);
	cluster_destroy(d->cl);
	d->cl = NULL;
	jobs_destroy(d->js);
	d->js = NULL;
	nodes_destroy(d->ns);
	d->ns = NULL;
	suspect_destroy(d->sus);
	d->sus = NULL;
	if (d->sus_opts != NULL &&
	    (d->sus = suspect_create(d->st, d->q, d->sus_opts, err)) == NULL)
		return -1;
	d->opts.suspect = d->sus;
	for (i = 0; i < d->nnodes; i++)
		d->nodes[i].conn_id = 0;
	/* Answers still owed go to a controller that is gone. */
	for (i = 0; i < d->ncmds; i++)
		d->cmds[i].answered = true;
	if ((d->js = jobs_create(d->st, d->q, &lim, d->opts.queues, err)) == NULL ||
	    (d->ns = nodes_create(d->st, d->q, d->now, err)) == NULL ||
	    (d->cl = cluster_create(d->js, d->ns, &out, &d->opts, d->now,
	    err)) == NULL)
		return -1;
	domain_commit(d);
	return 0;
}

size_t
domain_answer_job(struct domain *d, uint64_t job_id, const char *node,
    const struct cerr *err)
{
	size_t i, n = 0, end = d->ncmds;

	for (i = 0; i < end; i++) {
		struct domain_cmd *c = &d->cmds[i];

		if (c->kind != DOMAIN_LAUNCH || c->answered ||
		    (job_id != 0 && c->job_id != job_id) ||
		    (node != NULL && strcmp(c->node, node) != 0))
			continue;
		c->answered = true;
		c->done(c->arg, err, d->now);
		n++;
	}
	domain_commit(d);
	return n;
}

int
domain_task_exit(struct domain *d, const char *node,
    const struct task_report *r, struct cerr *err)
{
	int rc;

	cluster_reports_begin(d->cl);
	rc = cluster_task_exit(d->cl, domain_conn(d, node), r, d->now, err);
	domain_commit(d);
	return rc;
}

void
domain_health(struct domain *d, const char *node, enum health_state h,
    int gpu, const char *reason)
{
	struct node_health nh;

	memset(&nh, 0, sizeof(nh));
	nh.checked_ms = d->now;
	if (gpu < 0) {
		nh.health = h;
		snprintf(nh.reason, sizeof(nh.reason), "%s", reason);
	} else if (h != HEALTH_OK) {
		nh.ngpus = 1;
		nh.gpus[0].index = (unsigned)gpu;
		nh.gpus[0].health = h;
		snprintf(nh.gpus[0].reason, sizeof(nh.gpus[0].reason), "%s",
		    reason);
	}
	recovery_health(d->cl, domain_conn(d, node), &nh, d->now);
	domain_commit(d);
}

void
domain_xids(struct domain *d, const char *node, const struct xid_report *x,
    size_t n)
{
	recovery_xids(d->cl, domain_conn(d, node), x, n, d->now);
	domain_commit(d);
}

void
domain_checkpoint(struct domain *d, const char *node, uint64_t job_id,
    uint32_t attempt, uint64_t step, const char *path)
{
	domain_checkpoint_cost(d, node, job_id, attempt, step, path, 0);
}

void
domain_checkpoint_cost(struct domain *d, const char *node, uint64_t job_id,
    uint32_t attempt, uint64_t step, const char *path, uint32_t cost_ms)
{
	struct checkpoint_report r = { job_id, attempt, step, path, d->now,
	    cost_ms };

	recovery_checkpoints(d->cl, domain_conn(d, node), &r, 1, d->now);
	domain_commit(d);
}

void
domain_progress(struct domain *d, const char *node, uint64_t job_id,
    uint32_t attempt)
{
	cluster_reports_begin(d->cl);
	recovery_progress(d->cl, domain_conn(d, node), job_id, attempt,
	    d->now, d->now);
	domain_commit(d);
}

void
domain_spec_apply(struct job_spec *spec, void *arg)
{
	const struct domain_spec *o = arg;

	if (o->nodes_min != 0)
		spec->nodes_min = o->nodes_min;
	if (o->tasks_per_node != 0)
		spec->tasks_per_node = o->tasks_per_node;
	if (o->time_limit_s != 0)
		spec->time_limit_s = o->time_limit_s;
	if (o->priority != 0)
		spec->priority = o->priority < 0 ? 0 : o->priority;
	if (o->max_restarts != 0)
		spec->max_restarts = o->max_restarts < 0 ? 0 :
		    (uint32_t)o->max_restarts;
	if (o->checkpoint_dir != NULL)
		spec->checkpoint_dir = strdup(o->checkpoint_dir);
	if (o->ckpt_secs != 0)
		spec->ckpt_secs = o->ckpt_secs;
	if (o->hang_timeout_s != 0)
		spec->hang_timeout_s = o->hang_timeout_s;
	if (o->queue != NULL)
		spec->queue = strdup(o->queue);
	spec->service = o->service;
	spec->batch = o->batch;
}

void
domain_settle(struct domain *d)
{
	size_t i;

	for (i = 0; i < d->nnodes; i++)
		if (d->nodes[i].conn_id != 0)
			domain_heartbeat(d, d->nodes[i].name, NULL, 0);
	domain_pass(d);
	domain_answer_launches(d, NULL);
}

void
domain_run_for(struct domain *d, int64_t ms, int64_t step)
{
	int64_t t;
	size_t i;

	for (t = 0; t < ms; t += step) {
		domain_advance(d, step);
		for (i = 0; i < d->nnodes; i++)
			if (d->nodes[i].conn_id != 0)
				domain_heartbeat(d, d->nodes[i].name, NULL, 0);
		domain_tick(d);
	}
}
