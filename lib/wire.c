#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "lib/constraint.h"
#include "lib/text.h"
#include "lib/wire.h"

static int wire_dup(char **dst, const char *src);

Cohort__V1__Container *
wire_ctr_to_pb(const struct job_container *c, Cohort__V1__Container *buf)
{
	if (c->image == NULL)
		return NULL;
	cohort__v1__container__init(buf);
	buf->image = c->image;
	buf->mounts = c->mounts;
	buf->workdir = c->workdir;
	buf->env = c->env;
	buf->name = c->name;
	buf->has_writable = c->writable;
	buf->writable = c->writable;
	buf->has_mount_home = c->mount_home;
	buf->mount_home = c->mount_home;
	return buf;
}

int
wire_ctr_from_pb(const Cohort__V1__Container *pb, struct job_container *c)
{
	memset(c, 0, sizeof(*c));
	if (pb == NULL)
		return 0;
	if (wire_dup(&c->image, pb->image) == -1 ||
	    wire_dup(&c->mounts, pb->mounts) == -1 ||
	    wire_dup(&c->workdir, pb->workdir) == -1 ||
	    wire_dup(&c->env, pb->env) == -1 ||
	    wire_dup(&c->name, pb->name) == -1) {
		ctr_clear(c);
		return -1;
	}
	c->writable = pb->has_writable && pb->writable;
	c->mount_home = pb->has_mount_home && pb->mount_home;
	return 0;
}

void
wire_spec_to_pb(const struct job_spec *s, Cohort__V1__JobSpec *pb)
{
	cohort__v1__job_spec__init(pb);
	pb->name = s->name;
	pb->has_nodes_min = pb->has_nodes_max = 1;
	pb->nodes_min = s->nodes_min;
	pb->nodes_max = s->nodes_max;
	pb->has_gpus_per_node = pb->has_tasks_per_node = 1;
	pb->gpus_per_node = s->gpus_per_node;
	pb->tasks_per_node = s->tasks_per_node;
	pb->gpu_type = s->gpu_type;
	pb->has_time_limit_s = 1;
	pb->time_limit_s = s->time_limit_s;
	pb->has_priority = 1;
	pb->priority = s->priority;
	pb->has_topology_mode = 1;
	pb->topology_mode = (Cohort__V1__TopologyMode)s->topo_mode;
	pb->topology_level = s->topo_level;
	pb->checkpoint_dir = s->checkpoint_dir;
	pb->has_max_restarts = 1;
	pb->max_restarts = s->max_restarts;
	pb->has_checkpoint_signal = pb->has_checkpoint_secs = 1;
	pb->checkpoint_signal = (uint32_t)s->ckpt_signal;
	pb->checkpoint_secs = s->ckpt_secs;
	pb->has_hang_timeout_s = 1;
	pb->hang_timeout_s = s->hang_timeout_s;
	pb->n_env = s->nenv;
	pb->env = s->env;
	pb->workdir = s->workdir;
	pb->n_argv = s->argc;
	pb->argv = s->argv;
	if (s->script != NULL) {
		pb->has_script = 1;
		pb->script.data = (uint8_t *)s->script;
		pb->script.len = s->script_len;
	}
	pb->script_name = s->script_name;
	pb->queue = s->queue;
	if (s->service) {
		pb->has_service = 1;
		pb->service = 1;
	}
	pb->array = s->array;
	pb->dependency = s->dependency;
	pb->output = s->output;
	pb->error = s->error;
	pb->nodelist = s->nodelist;
	pb->exclude = s->exclude;
	pb->has_cpu_only = s->cpu_only;
	pb->cpu_only = s->cpu_only;
	pb->has_exclusive = s->exclusive;
	pb->exclusive = s->exclusive;
	pb->has_hold = s->hold;
	pb->hold = s->hold;
	pb->constraint = s->constraint;
	pb->has_gpu_memory_mb = s->gpu_memory_mb > 0;
	pb->gpu_memory_mb = s->gpu_memory_mb;
	pb->has_cpus_per_task = s->cpus_per_task > 0;
	pb->cpus_per_task = s->cpus_per_task;
	pb->has_mem_per_node_mb = s->mem_per_node_mb > 0;
	pb->mem_per_node_mb = s->mem_per_node_mb;
	pb->has_segment = s->segment > 0;
	pb->segment = s->segment;
	pb->idempotency_key = s->idem_key;
	pb->has_umask = s->has_umask;
	pb->umask = s->umask;
	pb->submit_host = s->submit_host;
	pb->account = s->account;
	pb->qos = s->qos;
	pb->has_batch = s->batch;
	pb->batch = s->batch;
	pb->has_interactive = s->interactive;
	pb->interactive = s->interactive;
	pb->has_begin_time_ms = s->begin_ms > 0;
	pb->begin_time_ms = s->begin_ms;
	pb->has_signal_scope = s->signal_scope != JOB_SIGNAL_ALL;
	pb->signal_scope = (Cohort__V1__SignalScope)s->signal_scope;
	pb->has_mail_type = s->mail_type != 0;
	pb->mail_type = s->mail_type;
	pb->mail_user = s->mail_user;
	pb->has_on_straggler = s->on_straggler != JOB_STRAGGLER_REPORT;
	pb->on_straggler = (Cohort__V1__StragglerAction)s->on_straggler;
}

static int
wire_dup(char **dst, const char *src)
{
	if (src == NULL)
		return 0;
	return (*dst = strdup(src)) != NULL ? 0 : -1;
}

static int
wire_spec_strings(const Cohort__V1__JobSpec *pb, struct job_spec *s)
{
	size_t i;

	if (wire_dup(&s->name, pb->name) == -1 ||
	    wire_dup(&s->gpu_type, pb->gpu_type) == -1 ||
	    wire_dup(&s->topo_level, pb->topology_level) == -1 ||
	    wire_dup(&s->checkpoint_dir, pb->checkpoint_dir) == -1 ||
	    wire_dup(&s->workdir, pb->workdir) == -1 ||
	    wire_dup(&s->script_name, pb->script_name) == -1 ||
	    wire_dup(&s->queue, pb->queue) == -1 ||
	    wire_dup(&s->array, pb->array) == -1 ||
	    wire_dup(&s->dependency, pb->dependency) == -1 ||
	    wire_dup(&s->output, pb->output) == -1 ||
	    wire_dup(&s->error, pb->error) == -1 ||
	    wire_dup(&s->nodelist, pb->nodelist) == -1 ||
	    wire_dup(&s->exclude, pb->exclude) == -1 ||
	    wire_dup(&s->constraint, pb->constraint) == -1 ||
	    wire_dup(&s->idem_key, pb->idempotency_key) == -1 ||
	    wire_dup(&s->submit_host, pb->submit_host) == -1 ||
	    wire_dup(&s->account, pb->account) == -1 ||
	    wire_dup(&s->qos, pb->qos) == -1 ||
	    wire_dup(&s->mail_user, pb->mail_user) == -1 ||
	    wire_ctr_from_pb(pb->container, &s->ctr) == -1)
		return -1;
	for (i = 0; i < pb->n_env; i++)
		if (strv_append(&s->env, &s->nenv, pb->env[i]) == -1)
			return -1;
	for (i = 0; i < pb->n_argv; i++)
		if (strv_append(&s->argv, &s->argc, pb->argv[i]) == -1)
			return -1;
	if (pb->has_script) {
		/* Kept NUL-terminated so it can be used as a C string once
		 * validation has refused embedded NULs. */
		if ((s->script = malloc(pb->script.len + 1)) == NULL)
			return -1;
		if (pb->script.len > 0)
			memcpy(s->script, pb->script.data, pb->script.len);
		s->script[pb->script.len] = '\0';
		s->script_len = pb->script.len;
	}
	return 0;
}

int
wire_spec_from_pb(const Cohort__V1__JobSpec *pb, struct job_spec *s,
    struct cerr *err)
{
	job_spec_init(s);
	if (pb->has_nodes_min)
		s->nodes_min = pb->nodes_min;
	/* A size without a range is a fixed gang of that size. */
	s->nodes_max = pb->has_nodes_max ? pb->nodes_max : s->nodes_min;
	if (pb->has_gpus_per_node)
		s->gpus_per_node = pb->gpus_per_node;
	if (pb->has_tasks_per_node)
		s->tasks_per_node = pb->tasks_per_node;
	if (pb->has_time_limit_s)
		s->time_limit_s = pb->time_limit_s;
	if (pb->has_priority)
		s->priority = pb->priority;
	s->service = pb->has_service && pb->service;
	s->cpu_only = pb->has_cpu_only && pb->cpu_only;
	s->exclusive = pb->has_exclusive && pb->exclusive;
	s->batch = pb->has_batch && pb->batch;
	s->interactive = pb->has_interactive && pb->interactive;
	s->signal_scope = pb->has_signal_scope ? (int)pb->signal_scope :
	    JOB_SIGNAL_ALL;
	s->on_straggler = pb->has_on_straggler ? (int)pb->on_straggler :
	    JOB_STRAGGLER_REPORT;
	s->begin_ms = pb->has_begin_time_ms ? pb->begin_time_ms : 0;
	s->hold = pb->has_hold && pb->hold;
	s->gpu_memory_mb = pb->has_gpu_memory_mb ? pb->gpu_memory_mb : 0;
	s->cpus_per_task = pb->has_cpus_per_task ? pb->cpus_per_task : 0;
	s->mem_per_node_mb = pb->has_mem_per_node_mb ? pb->mem_per_node_mb :
	    0;
	s->segment = pb->has_segment ? pb->segment : 0;
	s->has_umask = pb->has_umask;
	s->umask = pb->has_umask ? pb->umask : 0;
	s->mail_type = pb->has_mail_type ? pb->mail_type : 0;
	if (pb->has_topology_mode) {
		if (pb->topology_mode != COHORT__V1__TOPOLOGY_MODE__TOPOLOGY_ANY &&
		    pb->topology_mode != COHORT__V1__TOPOLOGY_MODE__TOPOLOGY_REQUIRED &&
		    pb->topology_mode != COHORT__V1__TOPOLOGY_MODE__TOPOLOGY_PREFERRED)
			return cerr_set(err, ERR_INVALID,
			    "unknown topology mode %d", (int)pb->topology_mode);
		s->topo_mode = (enum topo_mode)pb->topology_mode;
	}
	if (pb->has_max_restarts)
		s->max_restarts = pb->max_restarts;
	if (pb->has_checkpoint_signal) {
		if (pb->checkpoint_signal > 1024)
			return cerr_set(err, ERR_INVALID,
			    "--checkpoint-signal: %u is not a signal",
			    pb->checkpoint_signal);
		s->ckpt_signal = (int)pb->checkpoint_signal;
	}
	if (pb->has_checkpoint_secs)
		s->ckpt_secs = pb->checkpoint_secs;
	if (pb->has_hang_timeout_s)
		s->hang_timeout_s = pb->hang_timeout_s;
	if (wire_spec_strings(pb, s) == -1) {
		job_spec_clear(s);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	return 0;
}

/* A ProtobufCBuffer that hashes what is packed into it. */
struct wire_digest {
	ProtobufCBuffer base;
	EVP_MD_CTX *md;
	bool bad;
};

static void
wire_digest_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct wire_digest *d = (struct wire_digest *)b;

	if (!d->bad && EVP_DigestUpdate(d->md, data, len) != 1)
		d->bad = true;
}

int
wire_spec_fingerprint(const Cohort__V1__JobSpec *pb,
    unsigned char fp[JOB_IDEM_FP_LEN])
{
	Cohort__V1__JobSpec req = *pb;
	struct wire_digest d = { { wire_digest_append }, NULL, false };
	unsigned int n = 0;
	int rc = -1;

	req.idempotency_key = NULL;
	req.n_env = 0;
	req.env = NULL;
	req.has_umask = 0;
	req.umask = 0;
	req.submit_host = NULL;
	if ((d.md = EVP_MD_CTX_new()) == NULL)
		goto out;
	if (EVP_DigestInit_ex(d.md, EVP_sha256(), NULL) != 1)
		goto out;
	protobuf_c_message_pack_to_buffer(&req.base, &d.base);
	if (!d.bad && EVP_DigestFinal_ex(d.md, fp, &n) == 1 &&
	    n == JOB_IDEM_FP_LEN)
		rc = 0;
out:
	EVP_MD_CTX_free(d.md);
	if (rc == -1)
		errno = ENOMEM;
	return rc;
}

static void
wire_copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src != NULL ? src : "");
}

/* A name or reason an agent reported, for tables and logs: copied, then
 * any control character made '?' (a tab a space), and a character cut by
 * the buffer's size made '?' too. */
static void
wire_copy_text(char *dst, size_t len, const char *src)
{
	wire_copy_str(dst, len, src);
	text_sanitize(dst);
}

static Cohort__V1__Health
wire_hl_to_pb(enum health_state h)
{
	switch (h) {
	case HEALTH_DEGRADED:
		return COHORT__V1__HEALTH__HEALTH_DEGRADED;
	case HEALTH_FAILED:
		return COHORT__V1__HEALTH__HEALTH_FAILED;
	default:
		return COHORT__V1__HEALTH__HEALTH_OK;
	}
}

static enum health_state
wire_hl_from_pb(Cohort__V1__Health h)
{
	switch (h) {
	case COHORT__V1__HEALTH__HEALTH_DEGRADED:
		return HEALTH_DEGRADED;
	case COHORT__V1__HEALTH__HEALTH_FAILED:
		return HEALTH_FAILED;
	default:
		return HEALTH_OK;
	}
}

int
wire_health_to_pb(const struct node_health *h, Cohort__V1__NodeHealth *pb)
{
	Cohort__V1__GpuHealth *g;
	unsigned i;

	cohort__v1__node_health__init(pb);
	pb->health = wire_hl_to_pb(h->health);
	pb->reason = (char *)h->reason;
	pb->has_checked_ms = 1;
	pb->checked_ms = h->checked_ms;
	if (h->ngpus == 0)
		return 0;
	g = calloc(h->ngpus, sizeof(*g));
	pb->gpus = calloc(h->ngpus, sizeof(*pb->gpus));
	if (g == NULL || pb->gpus == NULL) {
		free(g);
		free(pb->gpus);
		pb->gpus = NULL;
		return -1;
	}
	for (i = 0; i < h->ngpus; i++) {
		cohort__v1__gpu_health__init(&g[i]);
		g[i].index = h->gpus[i].index;
		g[i].health = wire_hl_to_pb(h->gpus[i].health);
		g[i].reason = (char *)h->gpus[i].reason;
		pb->gpus[i] = &g[i];
	}
	pb->n_gpus = h->ngpus;
	return 0;
}

void
wire_health_pb_release(Cohort__V1__NodeHealth *pb)
{
	if (pb->n_gpus > 0)
		free(pb->gpus[0]);
	free(pb->gpus);
	pb->gpus = NULL;
	pb->n_gpus = 0;
}

int
wire_health_from_pb(const Cohort__V1__NodeHealth *pb, struct node_health *h,
    struct cerr *err)
{
	size_t i;

	memset(h, 0, sizeof(*h));
	if (pb->n_gpus > INV_MAX_GPUS)
		return cerr_set(err, ERR_INVALID, "health lists %zu GPUs",
		    pb->n_gpus);
	h->health = wire_hl_from_pb(pb->health);
	wire_copy_text(h->reason, sizeof(h->reason), pb->reason);
	h->checked_ms = pb->checked_ms;
	for (i = 0; i < pb->n_gpus; i++) {
		if (pb->gpus[i]->index >= INV_MAX_GPUS)
			return cerr_set(err, ERR_INVALID, "health: GPU index "
			    "%u out of range", pb->gpus[i]->index);
		h->gpus[i].index = pb->gpus[i]->index;
		h->gpus[i].health = wire_hl_from_pb(pb->gpus[i]->health);
		wire_copy_text(h->gpus[i].reason, sizeof(h->gpus[i].reason),
		    pb->gpus[i]->reason);
	}
	h->ngpus = (unsigned)pb->n_gpus;
	return 0;
}

Cohort__V1__JobState
wire_state_to_pb(enum job_state state)
{
	switch (state) {
	case JOB_PENDING: return COHORT__V1__JOB_STATE__PENDING;
	case JOB_RUNNING: return COHORT__V1__JOB_STATE__RUNNING;
	case JOB_RESTARTING: return COHORT__V1__JOB_STATE__RESTARTING;
	case JOB_RESIZING: return COHORT__V1__JOB_STATE__RESIZING;
	case JOB_COMPLETED: return COHORT__V1__JOB_STATE__COMPLETED;
	case JOB_FAILED: return COHORT__V1__JOB_STATE__FAILED;
	case JOB_CANCELLED: return COHORT__V1__JOB_STATE__CANCELLED;
	case JOB_TIMEOUT: return COHORT__V1__JOB_STATE__TIMEOUT;
	}
	return COHORT__V1__JOB_STATE__JOB_STATE_UNSPECIFIED;
}

int
wire_state_from_pb(Cohort__V1__JobState pb, enum job_state *state)
{
	switch (pb) {
	case COHORT__V1__JOB_STATE__PENDING: *state = JOB_PENDING; return 0;
	case COHORT__V1__JOB_STATE__RUNNING: *state = JOB_RUNNING; return 0;
	case COHORT__V1__JOB_STATE__RESTARTING: *state = JOB_RESTARTING; return 0;
	case COHORT__V1__JOB_STATE__RESIZING: *state = JOB_RESIZING; return 0;
	case COHORT__V1__JOB_STATE__COMPLETED: *state = JOB_COMPLETED; return 0;
	case COHORT__V1__JOB_STATE__FAILED: *state = JOB_FAILED; return 0;
	case COHORT__V1__JOB_STATE__CANCELLED: *state = JOB_CANCELLED; return 0;
	case COHORT__V1__JOB_STATE__TIMEOUT: *state = JOB_TIMEOUT; return 0;
	default:
		errno = EINVAL;
		return -1;
	}
}

int
wire_job_to_pb(const struct job *job, Cohort__V1__Job *pb,
    Cohort__V1__JobSpec *specbuf)
{
	Cohort__V1__Placement *pl;
	size_t i;

	cohort__v1__job__init(pb);
	if (job->nplace > 0) {
		pl = calloc(job->nplace, sizeof(*pl));
		pb->placement = calloc(job->nplace, sizeof(*pb->placement));
		if (pl == NULL || pb->placement == NULL) {
			free(pl);
			free(pb->placement);
			pb->placement = NULL;
			return -1;
		}
		for (i = 0; i < job->nplace; i++) {
			cohort__v1__placement__init(&pl[i]);
			pl[i].node = (char *)job->place[i].node;
			pl[i].node_rank = job->place[i].node_rank;
			pl[i].n_gpus = job->place[i].ngpus;
			pl[i].gpus = (uint32_t *)job->place[i].gpus;
			pb->placement[i] = &pl[i];
		}
		pb->n_placement = job->nplace;
	}
	wire_spec_to_pb(&job->spec, specbuf);
	if (job->spec.ctr.image != NULL) {
		if ((specbuf->container = malloc(sizeof(*specbuf->container)))
		    == NULL) {
			wire_job_pb_release(pb);
			return -1;
		}
		wire_ctr_to_pb(&job->spec.ctr, specbuf->container);
	}
	pb->id = job->id;
	pb->user = job->user;
	pb->spec = specbuf;
	pb->state = wire_state_to_pb(job->state);
	pb->reason = job->reason;
	pb->has_submit_time_ms = 1;
	pb->submit_time_ms = job->submit_ms;
	pb->has_start_time_ms = job->start_ms != 0;
	pb->start_time_ms = job->start_ms;
	pb->has_end_time_ms = job->end_ms != 0;
	pb->end_time_ms = job->end_ms;
	pb->has_restarts = 1;
	pb->restarts = job->restarts;
	pb->has_exit_code = job->has_exit;
	pb->exit_code = job->exit_code;
	pb->has_checkpoint_step = job->has_ckpt;
	pb->checkpoint_step = job->ckpt_step;
	pb->checkpoint_path = job->has_ckpt ? job->ckpt_path : NULL;
	pb->has_checkpoint_time_ms = job->has_ckpt;
	pb->checkpoint_time_ms = job->ckpt_ms;
	pb->has_nodes_now = job->nplace > 0;
	pb->nodes_now = (uint32_t)job->nplace;
	pb->has_last_failure_ms = job->last_failure_ms != 0;
	pb->last_failure_ms = job->last_failure_ms;
	pb->has_last_restart_ms = job->last_restart_ms != 0;
	pb->last_restart_ms = job->last_restart_ms;
	pb->has_lost_work_ms = 1;
	pb->lost_work_ms = job->lost_work_ms;
	pb->has_array_id = job->array_id != 0;
	pb->array_id = job->array_id;
	pb->has_array_task = job->array_id != 0;
	pb->array_task = job->array_task;
	pb->has_array_max = job->array_max != 0;
	pb->array_max = job->array_max;
	pb->has_hold = job->hold != JOB_HOLD_NONE;
	pb->hold = (uint32_t)job->hold;
	pb->has_gpu_ms = pb->has_wasted_gpu_ms = 1;
	pb->gpu_ms = job->gpu_ms;
	pb->wasted_gpu_ms = job->wasted_gpu_ms;
	pb->has_expected_start_ms = job->expected_start_ms > 0;
	pb->expected_start_ms = job->expected_start_ms;
	return 0;
}

void
wire_goodput_to_pb(const struct job_goodput_view *v, Cohort__V1__Goodput *pb)
{
	cohort__v1__goodput__init(pb);
	pb->has_ettr = pb->has_productive_ms = pb->has_lost_ms =
	    pb->has_restart_ms = pb->has_wait_ms = pb->has_checkpoint_ms =
	    pb->has_checkpoint_advice_s = pb->has_checkpoint_cost_ms = 1;
	pb->ettr = v->ettr;
	pb->productive_ms = v->productive_ms;
	pb->lost_ms = v->lost_ms;
	pb->restart_ms = v->restart_ms;
	pb->wait_ms = v->wait_ms;
	pb->checkpoint_ms = v->ckpt_ms;
	pb->checkpoint_advice_s = v->advice_s;
	pb->checkpoint_cost_ms = v->ckpt_cost_ms;
}

/* Job.goodput into job->gpv; a ratio out of 0..1 (or not a number) is
 * taken as 0..1. */
static void
wire_goodput_from_pb(const Cohort__V1__Goodput *pb, struct job *job)
{
	struct job_goodput_view *v = &job->gpv;

	if (pb == NULL)
		return;
	v->set = true;
	v->ettr = pb->ettr >= 0 && pb->ettr <= 1 ? pb->ettr :
	    pb->ettr > 1 ? 1 : 0;
	v->productive_ms = pb->productive_ms;
	v->lost_ms = pb->lost_ms;
	v->restart_ms = pb->restart_ms;
	v->wait_ms = pb->wait_ms;
	v->ckpt_ms = pb->checkpoint_ms;
	v->advice_s = pb->checkpoint_advice_s;
	v->ckpt_cost_ms = pb->checkpoint_cost_ms;
}

void
wire_job_pb_release(Cohort__V1__Job *pb)
{
	/* The placement messages were allocated as one array. */
	if (pb->n_placement > 0)
		free(pb->placement[0]);
	free(pb->placement);
	pb->placement = NULL;
	pb->n_placement = 0;
	if (pb->spec != NULL) {
		free(pb->spec->container);
		pb->spec->container = NULL;
	}
}

void
wire_job_redact(Cohort__V1__Job *pb)
{
	Cohort__V1__JobSpec *s = pb->spec;

	/* The spec borrows from the job: dropping the pointers is enough. */
	s->n_env = 0;
	s->env = NULL;
	s->n_argv = 0;
	s->argv = NULL;
	s->has_script = 0;
	s->script.data = NULL;
	s->script.len = 0;
	/* Where the job works and writes, and how its owner's tools name
	 * their requests: private too. */
	s->workdir = NULL;
	s->script_name = NULL;
	s->checkpoint_dir = NULL;
	s->output = NULL;
	s->error = NULL;
	s->idempotency_key = NULL;
	/* Where the owner logged in, and where their mail goes. */
	s->submit_host = NULL;
	s->mail_user = NULL;
	/* The container's paths are the owner's; that there is one is
	 * not private. */
	if (s->container != NULL) {
		s->container->image = (char *)"(private)";
		s->container->mounts = NULL;
		s->container->workdir = NULL;
		s->container->env = NULL;
		s->container->name = NULL;
	}
	pb->checkpoint_path = NULL;
	pb->has_redacted = 1;
	pb->redacted = 1;
}

static int
wire_placement_from_pb(const Cohort__V1__Job *pb, struct job *job,
    struct cerr *err)
{
	const Cohort__V1__Placement *p;
	struct placement *place;
	size_t i, g;

	if (pb->n_placement == 0)
		return 0;
	if ((place = calloc(pb->n_placement, sizeof(*place))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	for (i = 0; i < pb->n_placement; i++) {
		p = pb->placement[i];
		if (strlen(p->node) > PEER_NAME_MAX ||
		    p->n_gpus > PLACE_MAX_GPUS) {
			free(place);
			return cerr_set(err, ERR_PROTOCOL,
			    "job %llu: invalid placement",
			    (unsigned long long)pb->id);
		}
		strcpy(place[i].node, p->node);
		place[i].node_rank = p->node_rank;
		place[i].ngpus = p->n_gpus;
		for (g = 0; g < p->n_gpus; g++)
			place[i].gpus[g] = p->gpus[g];
	}
	job->place = place;
	job->nplace = pb->n_placement;
	return 0;
}

int
wire_inventory_to_pb(const struct inventory *inv, Cohort__V1__Inventory *pb)
{
	Cohort__V1__Gpu *g;
	unsigned i;

	cohort__v1__inventory__init(pb);
	pb->source = (char *)inv->source;
	pb->has_ncpus = pb->has_memory_mb = 1;
	pb->ncpus = inv->ncpus;
	pb->memory_mb = inv->memory_mb;
	if (inv->nfeatures > 0) {
		if ((pb->features = calloc(inv->nfeatures,
		    sizeof(*pb->features))) == NULL)
			return -1;
		for (i = 0; i < inv->nfeatures; i++)
			pb->features[i] = (char *)inv->features[i];
		pb->n_features = inv->nfeatures;
	}
	if (inv->ngpus == 0)
		return 0;
	g = calloc(inv->ngpus, sizeof(*g));
	pb->gpus = calloc(inv->ngpus, sizeof(*pb->gpus));
	if (g == NULL || pb->gpus == NULL) {
		free(g);
		free(pb->gpus);
		pb->gpus = NULL;
		wire_inventory_pb_release(pb);
		return -1;
	}
	for (i = 0; i < inv->ngpus; i++) {
		const struct gpu_info *gi = &inv->gpus[i];

		cohort__v1__gpu__init(&g[i]);
		g[i].index = gi->index;
		g[i].uuid = (char *)gi->uuid;
		g[i].model = (char *)gi->model;
		g[i].has_memory_mb = g[i].has_numa_node = 1;
		g[i].memory_mb = gi->memory_mb;
		g[i].numa_node = gi->numa_node;
		g[i].pci_bus_id = (char *)gi->pci_bus_id;
		g[i].has_pcie_switch = g[i].has_nvlink_domain = 1;
		g[i].pcie_switch = gi->pcie_switch;
		g[i].nvlink_domain = gi->nvlink_domain;
		g[i].has_nvlink_peers = g[i].has_nic = 1;
		g[i].nvlink_peers = gi->nvlink_peers;
		g[i].nic = gi->nic;
		if (gi->nic_name[0] != '\0')
			g[i].nic_name = (char *)gi->nic_name;
		g[i].has_nic_near = 1;
		g[i].nic_near = gi->nic_near;
		pb->gpus[i] = &g[i];
	}
	pb->n_gpus = inv->ngpus;
	return 0;
}

void
wire_inventory_pb_release(Cohort__V1__Inventory *pb)
{
	if (pb->n_gpus > 0)
		free(pb->gpus[0]);
	free(pb->gpus);
	pb->gpus = NULL;
	pb->n_gpus = 0;
	free(pb->features);
	pb->features = NULL;
	pb->n_features = 0;
}


int
wire_inventory_from_pb(const Cohort__V1__Inventory *pb, struct inventory *inv,
    struct cerr *err)
{
	const Cohort__V1__Gpu *g;
	size_t i;

	memset(inv, 0, sizeof(*inv));
	if (pb->n_gpus > INV_MAX_GPUS)
		return cerr_set(err, ERR_INVALID,
		    "inventory lists %zu GPUs; at most %d are supported",
		    pb->n_gpus, INV_MAX_GPUS);
	if (pb->n_features > INV_MAX_FEATURES)
		return cerr_set(err, ERR_INVALID,
		    "inventory lists %zu features; at most %d are supported",
		    pb->n_features, INV_MAX_FEATURES);
	for (i = 0; i < pb->n_features; i++) {
		if (!constraint_name_ok(pb->features[i]))
			return cerr_set(err, ERR_INVALID,
			    "inventory: feature %zu is not a feature name "
			    "(letters, digits, '.', '_', '-', at most %d)",
			    i + 1, INV_FEATURE_MAX);
		wire_copy_text(inv->features[i], sizeof(inv->features[i]),
		    pb->features[i]);
	}
	inv->nfeatures = pb->n_features;
	wire_copy_text(inv->source, sizeof(inv->source), pb->source);
	inv->ncpus = pb->ncpus;
	inv->memory_mb = pb->memory_mb;
	inv->ngpus = pb->n_gpus;
	for (i = 0; i < pb->n_gpus; i++) {
		struct gpu_info *gi = &inv->gpus[i];

		g = pb->gpus[i];
		/* The controller addresses GPUs by index: they must be the
		 * positions 0..n-1, as CUDA numbers them. */
		if (g->index != i)
			return cerr_set(err, ERR_INVALID,
			    "inventory: GPU %zu has index %u", i, g->index);
		gi->index = g->index;
		wire_copy_text(gi->uuid, sizeof(gi->uuid), g->uuid);
		wire_copy_text(gi->model, sizeof(gi->model), g->model);
		wire_copy_text(gi->pci_bus_id, sizeof(gi->pci_bus_id),
		    g->pci_bus_id);
		gi->memory_mb = g->memory_mb;
		gi->numa_node = g->has_numa_node ? g->numa_node : -1;
		gi->pcie_switch = g->has_pcie_switch ? g->pcie_switch : -1;
		gi->nvlink_domain = g->has_nvlink_domain ? g->nvlink_domain : -1;
		gi->nvlink_peers = g->nvlink_peers;
		gi->nic = g->has_nic ? g->nic : -1;
		if (gi->nic < -1 || gi->nic >= INV_MAX_NICS)
			return cerr_set(err, ERR_INVALID,
			    "inventory: GPU %zu has NIC %d", i, gi->nic);
		/* The name reaches tasks' environments (NCCL_IB_HCA). */
		if (g->nic_name != NULL && g->nic_name[0] != '\0') {
			if (!inventory_nic_name_ok(g->nic_name))
				return cerr_set(err, ERR_INVALID,
				    "inventory: GPU %zu: NIC name is not one "
				    "(letters, digits, '.', '_', '-', ':', at "
				    "most %d)", i, INV_NIC_NAME_MAX - 1);
			wire_copy_text(gi->nic_name, sizeof(gi->nic_name),
			    g->nic_name);
		}
		/* An agent from before field 14: any NIC was a near one. */
		gi->nic_near = g->has_nic_near ? g->nic_near != 0 :
		    gi->nic >= 0;
		if (gi->nic < 0)
			gi->nic_near = false;
	}
	return 0;
}

struct job *
wire_job_from_pb(const Cohort__V1__Job *pb, struct cerr *err)
{
	struct job *job;

	if ((job = job_new()) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	job->id = pb->id;
	if (wire_state_from_pb(pb->state, &job->state) == -1) {
		cerr_set(err, ERR_PROTOCOL, "job %llu: unknown state %d",
		    (unsigned long long)pb->id, (int)pb->state);
		goto fail;
	}
	job_spec_clear(&job->spec);
	if (wire_spec_from_pb(pb->spec, &job->spec, err) == -1)
		goto fail;
	free(job->user);
	free(job->reason);
	job->user = strdup(pb->user);
	job->reason = strdup(pb->reason != NULL ? pb->reason : "");
	if (job->user == NULL || job->reason == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	job->submit_ms = pb->has_submit_time_ms ? pb->submit_time_ms : 0;
	job->start_ms = pb->has_start_time_ms ? pb->start_time_ms : 0;
	job->end_ms = pb->has_end_time_ms ? pb->end_time_ms : 0;
	job->restarts = pb->has_restarts ? pb->restarts : 0;
	job->has_exit = pb->has_exit_code;
	job->exit_code = pb->exit_code;
	if (wire_placement_from_pb(pb, job, err) == -1)
		goto fail;
	/* A redacted job keeps its checkpoint's step and time; its path is
	 * its owner's (NULL here). */
	if (pb->has_checkpoint_step) {
		job->has_ckpt = true;
		job->ckpt_step = pb->checkpoint_step;
		if (pb->checkpoint_path != NULL && (job->ckpt_path =
		    strdup(pb->checkpoint_path)) == NULL) {
			cerr_set(err, ERR_INTERNAL, "out of memory");
			goto fail;
		}
		job->ckpt_ms = pb->checkpoint_time_ms;
	}
	job->last_failure_ms = pb->last_failure_ms;
	job->last_restart_ms = pb->last_restart_ms;
	job->lost_work_ms = pb->lost_work_ms;
	job->redacted = pb->has_redacted && pb->redacted;
	job->array_id = pb->array_id;
	job->array_task = pb->array_task;
	job->array_max = pb->array_max;
	job->hold = pb->hold == JOB_HOLD_ADMIN ? JOB_HOLD_ADMIN :
	    pb->hold == JOB_HOLD_USER ? JOB_HOLD_USER : JOB_HOLD_NONE;
	job->gpu_ms = pb->gpu_ms;
	job->wasted_gpu_ms = pb->wasted_gpu_ms;
	job->expected_start_ms = pb->has_expected_start_ms &&
	    pb->expected_start_ms > 0 ? pb->expected_start_ms : 0;
	wire_goodput_from_pb(pb->goodput, job);
	return job;
fail:
	job_free(job);
	return NULL;
}

Cohort__V1__ErrorCode
wire_err_to_pb(enum err_code code)
{
	switch (code) {
	case ERR_INVALID: return COHORT__V1__ERROR_CODE__ERROR_INVALID;
	case ERR_DENIED: return COHORT__V1__ERROR_CODE__ERROR_DENIED;
	case ERR_NOT_FOUND: return COHORT__V1__ERROR_CODE__ERROR_NOT_FOUND;
	case ERR_CONFLICT: return COHORT__V1__ERROR_CODE__ERROR_CONFLICT;
	case ERR_INTERNAL: return COHORT__V1__ERROR_CODE__ERROR_INTERNAL;
	case ERR_PROTOCOL: return COHORT__V1__ERROR_CODE__ERROR_PROTOCOL;
	case ERR_TOO_LARGE: return COHORT__V1__ERROR_CODE__ERROR_TOO_LARGE;
	case ERR_VERSION: return COHORT__V1__ERROR_CODE__ERROR_VERSION;
	case ERR_UNAVAILABLE: return COHORT__V1__ERROR_CODE__ERROR_UNAVAILABLE;
	case ERR_LIMIT: return COHORT__V1__ERROR_CODE__ERROR_LIMIT;
	case ERR_NOT_LEADER: return COHORT__V1__ERROR_CODE__ERROR_NOT_LEADER;
	case ERR_BUSY: return COHORT__V1__ERROR_CODE__ERROR_BUSY;
	case ERR_NONE: break;
	}
	return COHORT__V1__ERROR_CODE__ERROR_UNSPECIFIED;
}

enum err_code
wire_err_from_pb(Cohort__V1__ErrorCode pb)
{
	switch (pb) {
	case COHORT__V1__ERROR_CODE__ERROR_INVALID: return ERR_INVALID;
	case COHORT__V1__ERROR_CODE__ERROR_DENIED: return ERR_DENIED;
	case COHORT__V1__ERROR_CODE__ERROR_NOT_FOUND: return ERR_NOT_FOUND;
	case COHORT__V1__ERROR_CODE__ERROR_CONFLICT: return ERR_CONFLICT;
	case COHORT__V1__ERROR_CODE__ERROR_PROTOCOL: return ERR_PROTOCOL;
	case COHORT__V1__ERROR_CODE__ERROR_TOO_LARGE: return ERR_TOO_LARGE;
	case COHORT__V1__ERROR_CODE__ERROR_VERSION: return ERR_VERSION;
	case COHORT__V1__ERROR_CODE__ERROR_UNAVAILABLE: return ERR_UNAVAILABLE;
	case COHORT__V1__ERROR_CODE__ERROR_LIMIT: return ERR_LIMIT;
	case COHORT__V1__ERROR_CODE__ERROR_NOT_LEADER: return ERR_NOT_LEADER;
	case COHORT__V1__ERROR_CODE__ERROR_BUSY: return ERR_BUSY;
	default: return ERR_INTERNAL;
	}
}

void
wire_error(Cohort__V1__Envelope *env, Cohort__V1__Error *e, uint64_t id,
    enum err_code code, const char *text)
{
	cohort__v1__envelope__init(env);
	cohort__v1__error__init(e);
	e->code = wire_err_to_pb(code);
	e->text = (char *)text;
	env->id = id;
	env->body_case = COHORT__V1__ENVELOPE__BODY_ERROR;
	env->error = e;
}

bool
wire_is_user_request(Cohort__V1__Envelope__BodyCase body)
{
	switch (body) {
	case COHORT__V1__ENVELOPE__BODY_SUBMIT:
	case COHORT__V1__ENVELOPE__BODY_LIST_JOBS:
	case COHORT__V1__ENVELOPE__BODY_GET_JOB:
	case COHORT__V1__ENVELOPE__BODY_CANCEL:
	case COHORT__V1__ENVELOPE__BODY_LOGS:
	case COHORT__V1__ENVELOPE__BODY_LIST_NODES:
	case COHORT__V1__ENVELOPE__BODY_GET_NODE:
	case COHORT__V1__ENVELOPE__BODY_DRAIN:
	case COHORT__V1__ENVELOPE__BODY_MEMBERS:
	case COHORT__V1__ENVELOPE__BODY_RESUME:
	case COHORT__V1__ENVELOPE__BODY_DELETE_NODE:
	case COHORT__V1__ENVELOPE__BODY_EVENTS:
	case COHORT__V1__ENVELOPE__BODY_QUEUES:
	case COHORT__V1__ENVELOPE__BODY_HOLD:
	case COHORT__V1__ENVELOPE__BODY_REQUEUE:
	case COHORT__V1__ENVELOPE__BODY_UPDATE:
	case COHORT__V1__ENVELOPE__BODY_USAGE:
	case COHORT__V1__ENVELOPE__BODY_STEP_CREATE:
	case COHORT__V1__ENVELOPE__BODY_STEP_STATUS:
	case COHORT__V1__ENVELOPE__BODY_STEP_SIGNAL:
	case COHORT__V1__ENVELOPE__BODY_LIST_STEPS:
	case COHORT__V1__ENVELOPE__BODY_ALLOC:
	case COHORT__V1__ENVELOPE__BODY_STEP_INPUT:
		return true;
	default:
		return false;
	}
}

const char *
wire_body_name(Cohort__V1__Envelope__BodyCase body)
{
	switch (body) {
	case COHORT__V1__ENVELOPE__BODY_ERROR: return "error";
	case COHORT__V1__ENVELOPE__BODY_HELLO: return "hello";
	case COHORT__V1__ENVELOPE__BODY_HELLO_REPLY: return "hello_reply";
	case COHORT__V1__ENVELOPE__BODY_SUBMIT: return "submit";
	case COHORT__V1__ENVELOPE__BODY_SUBMIT_REPLY: return "submit_reply";
	case COHORT__V1__ENVELOPE__BODY_LIST_JOBS: return "list_jobs";
	case COHORT__V1__ENVELOPE__BODY_LIST_JOBS_REPLY: return "list_jobs_reply";
	case COHORT__V1__ENVELOPE__BODY_GET_JOB: return "get_job";
	case COHORT__V1__ENVELOPE__BODY_GET_JOB_REPLY: return "get_job_reply";
	case COHORT__V1__ENVELOPE__BODY_CANCEL: return "cancel";
	case COHORT__V1__ENVELOPE__BODY_CANCEL_REPLY: return "cancel_reply";
	case COHORT__V1__ENVELOPE__BODY_LOGS: return "logs";
	case COHORT__V1__ENVELOPE__BODY_LOGS_REPLY: return "logs_reply";
	case COHORT__V1__ENVELOPE__BODY_LIST_NODES: return "list_nodes";
	case COHORT__V1__ENVELOPE__BODY_LIST_NODES_REPLY: return "list_nodes_reply";
	case COHORT__V1__ENVELOPE__BODY_GET_NODE: return "get_node";
	case COHORT__V1__ENVELOPE__BODY_GET_NODE_REPLY: return "get_node_reply";
	case COHORT__V1__ENVELOPE__BODY_REGISTER: return "register";
	case COHORT__V1__ENVELOPE__BODY_REGISTER_REPLY: return "register_reply";
	case COHORT__V1__ENVELOPE__BODY_HEARTBEAT: return "heartbeat";
	case COHORT__V1__ENVELOPE__BODY_LAUNCH: return "launch";
	case COHORT__V1__ENVELOPE__BODY_LAUNCH_REPLY: return "launch_reply";
	case COHORT__V1__ENVELOPE__BODY_STOP: return "stop";
	case COHORT__V1__ENVELOPE__BODY_STOP_REPLY: return "stop_reply";
	case COHORT__V1__ENVELOPE__BODY_TASK_EXIT: return "task_exit";
	case COHORT__V1__ENVELOPE__BODY_TASK_EXIT_ACK: return "task_exit_ack";
	case COHORT__V1__ENVELOPE__BODY_READ_LOG: return "read_log";
	case COHORT__V1__ENVELOPE__BODY_READ_LOG_REPLY: return "read_log_reply";
	case COHORT__V1__ENVELOPE__BODY_SIGNAL: return "signal";
	case COHORT__V1__ENVELOPE__BODY_ADVICE: return "advice";
	case COHORT__V1__ENVELOPE__BODY_SIGNAL_REPLY: return "signal_reply";
	case COHORT__V1__ENVELOPE__BODY_WRITE_STDIN: return "write_stdin";
	case COHORT__V1__ENVELOPE__BODY_WRITE_STDIN_REPLY:
		return "write_stdin_reply";
	case COHORT__V1__ENVELOPE__BODY_EVENTS: return "events";
	case COHORT__V1__ENVELOPE__BODY_EVENTS_REPLY: return "events_reply";
	case COHORT__V1__ENVELOPE__BODY_QUEUES: return "queues";
	case COHORT__V1__ENVELOPE__BODY_QUEUES_REPLY: return "queues_reply";
	case COHORT__V1__ENVELOPE__BODY_HOLD: return "hold";
	case COHORT__V1__ENVELOPE__BODY_HOLD_REPLY: return "hold_reply";
	case COHORT__V1__ENVELOPE__BODY_REQUEUE: return "requeue";
	case COHORT__V1__ENVELOPE__BODY_REQUEUE_REPLY: return "requeue_reply";
	case COHORT__V1__ENVELOPE__BODY_UPDATE: return "update";
	case COHORT__V1__ENVELOPE__BODY_UPDATE_REPLY: return "update_reply";
	case COHORT__V1__ENVELOPE__BODY_USAGE: return "usage";
	case COHORT__V1__ENVELOPE__BODY_USAGE_REPLY: return "usage_reply";
	case COHORT__V1__ENVELOPE__BODY_STEP_CREATE: return "step_create";
	case COHORT__V1__ENVELOPE__BODY_STEP_CREATE_REPLY:
		return "step_create_reply";
	case COHORT__V1__ENVELOPE__BODY_STEP_STATUS: return "step_status";
	case COHORT__V1__ENVELOPE__BODY_STEP_STATUS_REPLY:
		return "step_status_reply";
	case COHORT__V1__ENVELOPE__BODY_STEP_SIGNAL: return "step_signal";
	case COHORT__V1__ENVELOPE__BODY_STEP_SIGNAL_REPLY:
		return "step_signal_reply";
	case COHORT__V1__ENVELOPE__BODY_LIST_STEPS: return "list_steps";
	case COHORT__V1__ENVELOPE__BODY_LIST_STEPS_REPLY:
		return "list_steps_reply";
	case COHORT__V1__ENVELOPE__BODY_STEP_INPUT: return "step_input";
	case COHORT__V1__ENVELOPE__BODY_STEP_INPUT_REPLY:
		return "step_input_reply";
	case COHORT__V1__ENVELOPE__BODY_DRAIN: return "drain";
	case COHORT__V1__ENVELOPE__BODY_DRAIN_REPLY: return "drain_reply";
	case COHORT__V1__ENVELOPE__BODY_RESUME: return "resume";
	case COHORT__V1__ENVELOPE__BODY_RESUME_REPLY: return "resume_reply";
	case COHORT__V1__ENVELOPE__BODY_DELETE_NODE: return "delete_node";
	case COHORT__V1__ENVELOPE__BODY_DELETE_NODE_REPLY:
		return "delete_node_reply";
	case COHORT__V1__ENVELOPE__BODY_MEMBERS: return "members";
	case COHORT__V1__ENVELOPE__BODY_MEMBERS_REPLY: return "members_reply";
	case COHORT__V1__ENVELOPE__BODY_BACKUP: return "backup";
	case COHORT__V1__ENVELOPE__BODY_BACKUP_REPLY: return "backup_reply";
	default: return "unknown";
	}
}
