/* Framing and the wire translation: every message round-trips; truncated,
 * oversized and garbage frames are reported, never crash. */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "lib/frame.h"
#include "lib/wire.h"

/* Pack env, push it through an evbuffer in two pieces, read it back. */
static Cohort__V1__Envelope *
roundtrip(const Cohort__V1__Envelope *env)
{
	struct evbuffer *b = evbuffer_new();
	Cohort__V1__Envelope *out = NULL;
	uint8_t *buf;
	size_t len;

	buf = frame_pack(env, FRAME_DEFAULT_MAX, &len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(frame_header_len(buf), len - FRAME_HDR);
	evbuffer_add(b, buf, len / 2);
	ck_assert_int_eq(frame_read(b, FRAME_DEFAULT_MAX, &out), FRAME_NEED);
	ck_assert_ptr_null(out);
	evbuffer_add(b, buf + len / 2, len - len / 2);
	ck_assert_int_eq(frame_read(b, FRAME_DEFAULT_MAX, &out), FRAME_OK);
	ck_assert_uint_eq(evbuffer_get_length(b), 0);
	free(buf);
	evbuffer_free(b);
	ck_assert_uint_eq(out->id, env->id);
	ck_assert_int_eq(out->body_case, env->body_case);
	return out;
}

static void
full_spec(struct job_spec *s)
{
	static char script[] = "#!/bin/sh\necho hi\n";

	job_spec_init(s);
	s->name = strdup("llama-70b");
	s->nodes_min = 4;
	s->nodes_max = 8;
	s->gpus_per_node = 8;
	s->tasks_per_node = 8;
	s->gpu_type = strdup("H100");
	s->time_limit_s = 7200;
	s->priority = 50;
	s->topo_mode = TOPO_PREFERRED;
	s->topo_level = strdup("leaf");
	s->checkpoint_dir = strdup("/ckpt/llama");
	s->max_restarts = 7;
	s->ckpt_signal = SIGUSR2;
	s->ckpt_secs = 120;
	s->hang_timeout_s = 900;
	strv_append(&s->env, &s->nenv, "NCCL_DEBUG=INFO");
	strv_append(&s->env, &s->nenv, "A=");
	s->workdir = strdup("/home/alice");
	strv_append(&s->argv, &s->argc, "--lr");
	strv_append(&s->argv, &s->argc, "3e-4");
	s->script = strdup(script);
	s->script_len = strlen(script);
	s->script_name = strdup("train.sh");
	s->queue = strdup("team-a");
	s->service = true;
	s->constraint = strdup("fp64&(ib|roce)");
	s->gpu_memory_mb = 141 * 1024;
	s->cpus_per_task = 12;
	s->mem_per_node_mb = 512 * 1024;
	s->segment = 18;
	s->idem_key = strdup("c-0123456789abcdef");
	s->has_umask = true;
	s->umask = 027;
	s->submit_host = strdup("login01.example");
	s->mail_type = JOB_MAIL_BEGIN | JOB_MAIL_TIME_LIMIT_80;
	s->mail_user = strdup("x@example.org");
	s->ctr.image = strdup("oci:/srv/img:v1");
	s->ctr.mounts = strdup("/data:/data:ro");
	s->ctr.workdir = strdup("/w");
	s->ctr.env = strdup("A,B");
	s->ctr.name = strdup("n1");
	s->ctr.writable = true;
}

static void
assert_spec_eq(const struct job_spec *a, const struct job_spec *b)
{
	size_t i;

	ck_assert_str_eq(a->name, b->name);
	ck_assert_uint_eq(a->nodes_min, b->nodes_min);
	ck_assert_uint_eq(a->nodes_max, b->nodes_max);
	ck_assert_uint_eq(a->gpus_per_node, b->gpus_per_node);
	ck_assert_uint_eq(a->tasks_per_node, b->tasks_per_node);
	ck_assert_str_eq(a->gpu_type, b->gpu_type);
	ck_assert_uint_eq(a->time_limit_s, b->time_limit_s);
	ck_assert_int_eq(a->priority, b->priority);
	ck_assert_int_eq(a->topo_mode, b->topo_mode);
	ck_assert_str_eq(a->topo_level, b->topo_level);
	ck_assert_str_eq(a->checkpoint_dir, b->checkpoint_dir);
	ck_assert_uint_eq(a->max_restarts, b->max_restarts);
	ck_assert_int_eq(a->ckpt_signal, b->ckpt_signal);
	ck_assert_uint_eq(a->ckpt_secs, b->ckpt_secs);
	ck_assert_uint_eq(a->hang_timeout_s, b->hang_timeout_s);
	ck_assert_uint_eq(a->nenv, b->nenv);
	for (i = 0; i < a->nenv; i++)
		ck_assert_str_eq(a->env[i], b->env[i]);
	ck_assert_str_eq(a->workdir, b->workdir);
	ck_assert_uint_eq(a->argc, b->argc);
	for (i = 0; i < a->argc; i++)
		ck_assert_str_eq(a->argv[i], b->argv[i]);
	ck_assert_uint_eq(a->script_len, b->script_len);
	ck_assert_mem_eq(a->script, b->script, a->script_len);
	ck_assert_str_eq(a->script_name, b->script_name);
	ck_assert_str_eq(a->queue, b->queue);
	ck_assert_int_eq(a->service, b->service);
	ck_assert_str_eq(a->constraint, b->constraint);
	ck_assert_uint_eq(a->gpu_memory_mb, b->gpu_memory_mb);
	ck_assert_uint_eq(a->cpus_per_task, b->cpus_per_task);
	ck_assert_uint_eq(a->mem_per_node_mb, b->mem_per_node_mb);
	ck_assert_uint_eq(a->segment, b->segment);
	ck_assert_str_eq(a->idem_key, b->idem_key);
	ck_assert_int_eq(a->has_umask, b->has_umask);
	ck_assert_uint_eq(a->umask, b->umask);
	ck_assert_str_eq(a->submit_host, b->submit_host);
	ck_assert_uint_eq(a->mail_type, b->mail_type);
	ck_assert_str_eq(a->mail_user, b->mail_user);
	ck_assert_str_eq(a->ctr.image, b->ctr.image);
	ck_assert_str_eq(a->ctr.mounts, b->ctr.mounts);
	ck_assert_str_eq(a->ctr.workdir, b->ctr.workdir);
	ck_assert_str_eq(a->ctr.env, b->ctr.env);
	ck_assert_str_eq(a->ctr.name, b->ctr.name);
	ck_assert(a->ctr.writable == b->ctr.writable);
	ck_assert(a->ctr.mount_home == b->ctr.mount_home);
}

START_TEST(test_error_and_hello)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT, *out;
	Cohort__V1__Error e = COHORT__V1__ERROR__INIT;
	Cohort__V1__Hello h = COHORT__V1__HELLO__INIT;
	Cohort__V1__HelloReply hr = COHORT__V1__HELLO_REPLY__INIT;

	e.code = wire_err_to_pb(ERR_DENIED);
	e.text = "no";
	env.id = 7;
	env.body_case = COHORT__V1__ENVELOPE__BODY_ERROR;
	env.error = &e;
	out = roundtrip(&env);
	ck_assert_int_eq(wire_err_from_pb(out->error->code), ERR_DENIED);
	ck_assert_str_eq(out->error->text, "no");
	frame_free(out);

	h.major = WIRE_MAJOR;
	h.minor = WIRE_MINOR;
	h.software = "cohort test";
	env.body_case = COHORT__V1__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	out = roundtrip(&env);
	ck_assert_uint_eq(out->hello->major, WIRE_MAJOR);
	ck_assert_str_eq(out->hello->software, "cohort test");
	frame_free(out);

	hr.major = 1;
	hr.identity = "alice";
	hr.role = "user";
	env.body_case = COHORT__V1__ENVELOPE__BODY_HELLO_REPLY;
	env.hello_reply = &hr;
	out = roundtrip(&env);
	ck_assert_str_eq(out->hello_reply->identity, "alice");
	ck_assert_str_eq(out->hello_reply->role, "user");
	frame_free(out);
}
END_TEST

START_TEST(test_submit_spec_roundtrip)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT, *out;
	Cohort__V1__SubmitRequest sr = COHORT__V1__SUBMIT_REQUEST__INIT;
	Cohort__V1__SubmitReply rep = COHORT__V1__SUBMIT_REPLY__INIT;
	Cohort__V1__JobSpec pb;
	Cohort__V1__Container ctr;
	struct job_spec in, back;
	struct cerr err;

	full_spec(&in);
	wire_spec_to_pb(&in, &pb);
	pb.container = wire_ctr_to_pb(&in.ctr, &ctr);
	sr.spec = &pb;
	env.id = 42;
	env.body_case = COHORT__V1__ENVELOPE__BODY_SUBMIT;
	env.submit = &sr;
	out = roundtrip(&env);
	ck_assert_int_eq(wire_spec_from_pb(out->submit->spec, &back, &err), 0);
	assert_spec_eq(&in, &back);
	frame_free(out);
	job_spec_clear(&back);
	job_spec_clear(&in);

	rep.job_id = 123456789012ULL;
	env.body_case = COHORT__V1__ENVELOPE__BODY_SUBMIT_REPLY;
	env.submit_reply = &rep;
	out = roundtrip(&env);
	ck_assert_uint_eq(out->submit_reply->job_id, 123456789012ULL);
	frame_free(out);
}
END_TEST

/* fp of full_spec with change applied to it. */
static void
spec_fp(void (*change)(struct job_spec *), unsigned char fp[JOB_IDEM_FP_LEN])
{
	Cohort__V1__JobSpec pb;
	struct job_spec s;

	full_spec(&s);
	if (change != NULL)
		change(&s);
	wire_spec_to_pb(&s, &pb);
	ck_assert_int_eq(wire_spec_fingerprint(&pb, fp), 0);
	job_spec_clear(&s);
}

static void
other_key(struct job_spec *s)
{
	free(s->idem_key);
	s->idem_key = strdup("run-7");
}

static void
other_env(struct job_spec *s)
{
	strv_append(&s->env, &s->nenv, "AIRFLOW_CTX_TRY_NUMBER=2");
}

static void
other_umask(struct job_spec *s)
{
	s->umask = 077;
}

static void
no_umask(struct job_spec *s)
{
	s->has_umask = false;
}

/* A retry of the same step from another login node. */
static void
other_host(struct job_spec *s)
{
	free(s->submit_host);
	s->submit_host = strdup("login02.example");
}

static void
other_arg(struct job_spec *s)
{
	strv_append(&s->argv, &s->argc, "--resume");
}

static void
other_name(struct job_spec *s)
{
	free(s->name);
	s->name = strdup("second");
}

static void
other_gpus(struct job_spec *s)
{
	s->gpus_per_node++;
}

static void
other_script(struct job_spec *s)
{
	s->script[s->script_len - 2] = 'o';
}

/* A keyed submit's fingerprint: its request without the key, the
 * environment, the umask (a job keyed by a client that sent none is
 * found by one that does) and the submit host (a retry may come from
 * another login node). */
START_TEST(test_spec_fingerprint)
{
	void (*same[])(struct job_spec *) = { other_key, other_env,
	    other_umask, no_umask, other_host };
	void (*differ[])(struct job_spec *) = { other_arg, other_name,
	    other_gpus, other_script };
	unsigned char base[JOB_IDEM_FP_LEN], again[JOB_IDEM_FP_LEN],
	    fp[JOB_IDEM_FP_LEN];
	size_t i;

	spec_fp(NULL, base);
	spec_fp(NULL, again);
	ck_assert_mem_eq(base, again, JOB_IDEM_FP_LEN);
	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		spec_fp(same[i], fp);
		ck_assert_msg(memcmp(fp, base, JOB_IDEM_FP_LEN) == 0,
		    "change %zu of the key, environment, umask or submit host "
		    "changed the "
		    "fingerprint", i);
	}
	for (i = 0; i < sizeof(differ) / sizeof(differ[0]); i++) {
		spec_fp(differ[i], fp);
		ck_assert_msg(memcmp(fp, base, JOB_IDEM_FP_LEN) != 0,
		    "change %zu of the request left the fingerprint", i);
	}
}
END_TEST

/* Features travel with the inventory; one that is not a name, or too
 * many, is refused. */
START_TEST(test_inventory_features)
{
	Cohort__V1__Inventory pb;
	struct inventory *in, *back;
	struct cerr err;
	char *bad[] = { "fp64", "a&b" }, *many[33];
	size_t i;

	ck_assert_ptr_nonnull(in = calloc(1, sizeof(*in)));
	ck_assert_ptr_nonnull(back = calloc(1, sizeof(*back)));
	ck_assert_int_eq(inventory_set_features(in, "fp64,ib", NULL, 0), 0);
	in->ngpus = 1;
	in->gpus[0].memory_mb = 81559;
	ck_assert_int_eq(wire_inventory_to_pb(in, &pb), 0);
	ck_assert_uint_eq(pb.n_features, 2);
	ck_assert_int_eq(wire_inventory_from_pb(&pb, back, &err), 0);
	ck_assert_uint_eq(back->nfeatures, 2);
	ck_assert_str_eq(back->features[0], "fp64");
	ck_assert_str_eq(back->features[1], "ib");
	ck_assert_uint_eq(back->gpus[0].memory_mb, 81559);
	wire_inventory_pb_release(&pb);
	ck_assert_ptr_null(pb.features);

	cohort__v1__inventory__init(&pb);
	pb.features = bad;
	pb.n_features = 2;
	ck_assert_int_eq(wire_inventory_from_pb(&pb, back, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "feature 2 is not a feature "
	    "name"));
	for (i = 0; i < 33; i++)
		many[i] = "x";
	pb.features = many;
	pb.n_features = 33;
	ck_assert_int_eq(wire_inventory_from_pb(&pb, back, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "33 features; at most 32"));
	free(in);
	free(back);
}
END_TEST

/* NICs travel with the inventory: rail, name, and whether it shares the
 * GPU's switch; an agent from before nic_near meant any NIC as near; a
 * name that could not go into an environment, or a rail out of range,
 * is refused. */
START_TEST(test_inventory_nics)
{
	Cohort__V1__Inventory pb;
	struct inventory *in, *back;
	struct cerr err;

	ck_assert_ptr_nonnull(in = calloc(1, sizeof(*in)));
	ck_assert_ptr_nonnull(back = calloc(1, sizeof(*back)));
	in->ngpus = 3;
	in->gpus[0].nic = 1;
	snprintf(in->gpus[0].nic_name, sizeof(in->gpus[0].nic_name),
	    "mlx5_1");
	in->gpus[0].nic_near = true;
	in->gpus[1].index = 1;
	in->gpus[1].nic = 0;
	snprintf(in->gpus[1].nic_name, sizeof(in->gpus[1].nic_name),
	    "mlx5_0");
	in->gpus[2].index = 2;
	in->gpus[2].nic = -1;
	ck_assert_int_eq(wire_inventory_to_pb(in, &pb), 0);
	ck_assert_int_eq(wire_inventory_from_pb(&pb, back, &err), 0);
	ck_assert_int_eq(back->gpus[0].nic, 1);
	ck_assert_str_eq(back->gpus[0].nic_name, "mlx5_1");
	ck_assert(back->gpus[0].nic_near);
	ck_assert_str_eq(back->gpus[1].nic_name, "mlx5_0");
	ck_assert(!back->gpus[1].nic_near);
	ck_assert_int_eq(back->gpus[2].nic, -1);
	ck_assert_str_eq(back->gpus[2].nic_name, "");
	ck_assert_ptr_null(pb.gpus[2]->nic_name);

	pb.gpus[1]->has_nic_near = 0;
	ck_assert_int_eq(wire_inventory_from_pb(&pb, back, &err), 0);
	ck_assert(back->gpus[1].nic_near);
	pb.gpus[1]->nic_name = "mlx5_0;rm -rf";
	ck_assert_int_eq(wire_inventory_from_pb(&pb, back, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "GPU 1: NIC name is not one"));
	pb.gpus[1]->nic_name = "mlx5_0";
	pb.gpus[1]->nic = INV_MAX_NICS;
	ck_assert_int_eq(wire_inventory_from_pb(&pb, back, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "GPU 1 has NIC 1024"));
	pb.gpus[1]->nic = 0;
	wire_inventory_pb_release(&pb);
	free(in);
	free(back);
}
END_TEST

START_TEST(test_unset_fields_take_defaults)
{
	Cohort__V1__JobSpec pb = COHORT__V1__JOB_SPEC__INIT;
	struct job_spec s;
	struct cerr err;
	char *argv[] = { "true" };

	pb.n_argv = 1;
	pb.argv = argv;
	pb.has_nodes_min = 3;
	pb.nodes_min = 3;
	ck_assert_int_eq(wire_spec_from_pb(&pb, &s, &err), 0);
	ck_assert_uint_eq(s.nodes_min, 3);
	ck_assert_uint_eq(s.nodes_max, 3);
	ck_assert_uint_eq(s.tasks_per_node, 1);
	ck_assert_int_eq(s.priority, JOB_DEFAULT_PRIORITY);
	ck_assert_uint_eq(s.max_restarts, JOB_DEFAULT_MAX_RESTARTS);
	ck_assert_int_eq(s.ckpt_signal, SIGUSR1);
	ck_assert_uint_eq(s.ckpt_secs, JOB_DEFAULT_CKPT_SECS);
	ck_assert_ptr_null(s.script);
	ck_assert_ptr_null(s.queue);
	ck_assert(!s.service);
	ck_assert_ptr_null(s.constraint);
	ck_assert_uint_eq(s.gpu_memory_mb, 0);
	ck_assert_uint_eq(s.segment, 0);
	/* No umask from an older client: not given, rather than 0 (which
	 * would make every file anyone's to read). */
	ck_assert(!s.has_umask);
	job_spec_clear(&s);

	/* A umask of 0 is one given. */
	pb.has_umask = 1;
	pb.umask = 0;
	ck_assert_int_eq(wire_spec_from_pb(&pb, &s, &err), 0);
	ck_assert(s.has_umask);
	ck_assert_uint_eq(s.umask, 0);
	job_spec_clear(&s);
	pb.has_umask = 0;

	pb.has_topology_mode = 1;
	pb.topology_mode = 99;
	ck_assert_int_eq(wire_spec_from_pb(&pb, &s, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
}
END_TEST

START_TEST(test_jobs_list_get_cancel)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT, *out;
	Cohort__V1__ListJobsRequest lr = COHORT__V1__LIST_JOBS_REQUEST__INIT;
	Cohort__V1__ListJobsReply lrep = COHORT__V1__LIST_JOBS_REPLY__INIT;
	Cohort__V1__GetJobRequest gr = COHORT__V1__GET_JOB_REQUEST__INIT;
	Cohort__V1__GetJobReply grep = COHORT__V1__GET_JOB_REPLY__INIT;
	Cohort__V1__CancelRequest cr = COHORT__V1__CANCEL_REQUEST__INIT;
	Cohort__V1__CancelReply crep = COHORT__V1__CANCEL_REPLY__INIT;
	Cohort__V1__Job pbs[2], *ptrs[2];
	Cohort__V1__JobSpec specs[2];
	struct job *jobs[2], *back;
	struct cerr err;
	int i;

	lr.has_all = 1;
	lr.all = 1;
	lr.user = "bob";
	lr.has_state = 1;
	lr.state = wire_state_to_pb(JOB_RUNNING);
	env.body_case = COHORT__V1__ENVELOPE__BODY_LIST_JOBS;
	env.list_jobs = &lr;
	out = roundtrip(&env);
	ck_assert(out->list_jobs->all);
	ck_assert_str_eq(out->list_jobs->user, "bob");
	ck_assert_int_eq(out->list_jobs->state, COHORT__V1__JOB_STATE__RUNNING);
	frame_free(out);

	for (i = 0; i < 2; i++) {
		jobs[i] = job_new();
		job_spec_clear(&jobs[i]->spec);
		full_spec(&jobs[i]->spec);
		jobs[i]->id = 10 + i;
		jobs[i]->user = strdup("alice");
		free(jobs[i]->reason);
		jobs[i]->reason = strdup(i ? "cancelled by ops" : "");
		jobs[i]->state = i ? JOB_CANCELLED : JOB_PENDING;
		jobs[i]->submit_ms = 1700000000000LL;
		jobs[i]->end_ms = i ? 1700000001000LL : 0;
		jobs[i]->has_exit = i;
		jobs[i]->exit_code = -9;
		if (i == 1) {
			struct placement pl[2] = { { .node = "node01",
			    .node_rank = 0, .ngpus = 2, .gpus = { 4, 5 } },
			    { .node = "node02", .node_rank = 1, .ngpus = 1,
			    .gpus = { 7 } } };

			ck_assert_int_eq(job_set_placement(jobs[i], pl, 2), 0);
		}
		ck_assert_int_eq(wire_job_to_pb(jobs[i], &pbs[i], &specs[i]), 0);
		ptrs[i] = &pbs[i];
	}
	lrep.n_jobs = 2;
	lrep.jobs = ptrs;
	env.body_case = COHORT__V1__ENVELOPE__BODY_LIST_JOBS_REPLY;
	env.list_jobs_reply = &lrep;
	out = roundtrip(&env);
	ck_assert_uint_eq(out->list_jobs_reply->n_jobs, 2);
	for (i = 0; i < 2; i++) {
		back = wire_job_from_pb(out->list_jobs_reply->jobs[i], &err);
		ck_assert_ptr_nonnull(back);
		ck_assert_uint_eq(back->id, jobs[i]->id);
		ck_assert_str_eq(back->user, "alice");
		ck_assert_str_eq(back->reason, jobs[i]->reason);
		ck_assert_int_eq(back->state, jobs[i]->state);
		ck_assert_int_eq(back->submit_ms, jobs[i]->submit_ms);
		ck_assert_int_eq(back->end_ms, jobs[i]->end_ms);
		ck_assert_int_eq(back->has_exit, jobs[i]->has_exit);
		ck_assert_uint_eq(back->nplace, jobs[i]->nplace);
		if (back->nplace == 2) {
			ck_assert_str_eq(back->place[1].node, "node02");
			ck_assert_uint_eq(back->place[1].node_rank, 1);
			ck_assert_uint_eq(back->place[0].ngpus, 2);
			ck_assert_uint_eq(back->place[0].gpus[1], 5);
		}
		assert_spec_eq(&back->spec, &jobs[i]->spec);
		job_free(back);
	}
	frame_free(out);

	gr.job_id = 11;
	env.body_case = COHORT__V1__ENVELOPE__BODY_GET_JOB;
	env.get_job = &gr;
	out = roundtrip(&env);
	ck_assert_uint_eq(out->get_job->job_id, 11);
	frame_free(out);

	grep.job = &pbs[1];
	env.body_case = COHORT__V1__ENVELOPE__BODY_GET_JOB_REPLY;
	env.get_job_reply = &grep;
	out = roundtrip(&env);
	ck_assert_uint_eq(out->get_job_reply->job->id, 11);
	ck_assert_int_eq(out->get_job_reply->job->exit_code, -9);
	frame_free(out);

	cr.job_id = 10;
	env.body_case = COHORT__V1__ENVELOPE__BODY_CANCEL;
	env.cancel = &cr;
	out = roundtrip(&env);
	ck_assert_uint_eq(out->cancel->job_id, 10);
	frame_free(out);

	crep.job_id = 10;
	crep.state = COHORT__V1__JOB_STATE__CANCELLED;
	env.body_case = COHORT__V1__ENVELOPE__BODY_CANCEL_REPLY;
	env.cancel_reply = &crep;
	out = roundtrip(&env);
	ck_assert_int_eq(out->cancel_reply->state,
	    COHORT__V1__JOB_STATE__CANCELLED);
	frame_free(out);
	wire_job_pb_release(&pbs[0]);
	wire_job_pb_release(&pbs[1]);
	job_free(jobs[0]);
	job_free(jobs[1]);
}
END_TEST

START_TEST(test_oversized_is_refused_before_buffering)
{
	struct evbuffer *b = evbuffer_new();
	Cohort__V1__Envelope *out;
	uint8_t hdr[4] = { 0x00, 0x10, 0x00, 0x01 }; /* 1 MiB + 1 */

	evbuffer_add(b, hdr, 4);
	ck_assert_int_eq(frame_read(b, 1024 * 1024, &out), FRAME_TOO_LARGE);
	/* Nothing consumed, and no body needed to decide. */
	ck_assert_uint_eq(evbuffer_get_length(b), 4);
	evbuffer_free(b);
}
END_TEST

START_TEST(test_pack_refuses_above_max)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__Error e = COHORT__V1__ERROR__INIT;
	char text[2048];
	size_t len;

	memset(text, 'x', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	e.text = text;
	env.body_case = COHORT__V1__ENVELOPE__BODY_ERROR;
	env.error = &e;
	ck_assert_ptr_null(frame_pack(&env, 1024, &len));
}
END_TEST

START_TEST(test_truncated_and_garbage)
{
	struct evbuffer *b = evbuffer_new();
	Cohort__V1__Envelope *out;
	uint8_t hdr[4] = { 0, 0, 0, 20 };
	uint8_t junk[20];
	uint8_t empty[4] = { 0, 0, 0, 0 };

	/* A header alone, then part of a body: wait. */
	evbuffer_add(b, hdr, 2);
	ck_assert_int_eq(frame_read(b, FRAME_DEFAULT_MAX, &out), FRAME_NEED);
	evbuffer_add(b, hdr + 2, 2);
	ck_assert_int_eq(frame_read(b, FRAME_DEFAULT_MAX, &out), FRAME_NEED);
	memset(junk, 0xff, sizeof(junk));
	evbuffer_add(b, junk, 10);
	ck_assert_int_eq(frame_read(b, FRAME_DEFAULT_MAX, &out), FRAME_NEED);
	/* The whole body is garbage: reported and drained. */
	evbuffer_add(b, junk, 10);
	ck_assert_int_eq(frame_read(b, FRAME_DEFAULT_MAX, &out), FRAME_BAD);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(evbuffer_get_length(b), 0);
	/* An empty envelope lacks its required id. */
	evbuffer_add(b, empty, 4);
	ck_assert_int_eq(frame_read(b, FRAME_DEFAULT_MAX, &out), FRAME_BAD);
	evbuffer_free(b);
}
END_TEST

START_TEST(test_random_bytes_never_crash)
{
	uint8_t buf[256];
	Cohort__V1__Envelope *env;
	unsigned seed = 12345;
	size_t len, i;
	int n, decoded = 0;

	for (n = 0; n < 20000; n++) {
		len = rand_r(&seed) % sizeof(buf);
		for (i = 0; i < len; i++)
			buf[i] = rand_r(&seed);
		/* Make some of them start like a real envelope (field 1). */
		if (len > 2 && n % 2 == 0)
			buf[0] = 0x08;
		env = frame_decode(buf, len);
		if (env != NULL)
			decoded++;
		frame_free(env);
	}
	/* The point is surviving (under ASan too); most must be refused. */
	ck_assert_int_lt(decoded, n / 2);
}
END_TEST

START_TEST(test_two_frames_in_one_read)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT, *out;
	Cohort__V1__GetJobRequest gr = COHORT__V1__GET_JOB_REQUEST__INIT;
	struct evbuffer *b = evbuffer_new();

	env.body_case = COHORT__V1__ENVELOPE__BODY_GET_JOB;
	env.get_job = &gr;
	env.id = 1;
	gr.job_id = 5;
	ck_assert_int_eq(frame_write(b, &env, FRAME_DEFAULT_MAX), 0);
	env.id = 2;
	ck_assert_int_eq(frame_write(b, &env, FRAME_DEFAULT_MAX), 0);
	ck_assert_int_eq(frame_read(b, FRAME_DEFAULT_MAX, &out), FRAME_OK);
	ck_assert_uint_eq(out->id, 1);
	frame_free(out);
	ck_assert_int_eq(frame_read(b, FRAME_DEFAULT_MAX, &out), FRAME_OK);
	ck_assert_uint_eq(out->id, 2);
	frame_free(out);
	ck_assert_int_eq(frame_read(b, FRAME_DEFAULT_MAX, &out), FRAME_NEED);
	evbuffer_free(b);
}
END_TEST

static Suite *
frame_suite(void)
{
	Suite *s = suite_create("frame");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_error_and_hello);
	tcase_add_test(tc, test_submit_spec_roundtrip);
	tcase_add_test(tc, test_spec_fingerprint);
	tcase_add_test(tc, test_inventory_features);
	tcase_add_test(tc, test_inventory_nics);
	tcase_add_test(tc, test_unset_fields_take_defaults);
	tcase_add_test(tc, test_jobs_list_get_cancel);
	tcase_add_test(tc, test_oversized_is_refused_before_buffering);
	tcase_add_test(tc, test_pack_refuses_above_max);
	tcase_add_test(tc, test_truncated_and_garbage);
	tcase_add_test(tc, test_random_bytes_never_crash);
	tcase_add_test(tc, test_two_frames_in_one_read);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(frame_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
