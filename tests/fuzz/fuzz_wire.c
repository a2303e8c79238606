/* Fuzz target: bytes off the wire. The string check (lib/wirecheck.c)
 * walks them, the text checks read them, the first four are read as a
 * frame header; a frame body is decoded as an Envelope (refused exactly
 * when the string check fails, and then with no body; accepted, every
 * unpacked string valid UTF-8), and whatever it carries goes through the
 * same conversions and checks the controller, the agent and the CLI apply
 * to it (a submitted spec through wire_spec_from_pb and
 * job_spec_validate, a launch's spec converted and its output patterns
 * expanded, a registration's inventory and health, a job in a reply, the
 * job states a listing or a bulk cancel filters on); a decoded envelope
 * must pack again, and what re-decodes must pack to the same bytes. Built
 * for libFuzzer (tests/fuzz/libfuzzer.sh) and, with tests/fuzz/driver.c,
 * as a plain program make check runs. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lib/frame.h"
#include "lib/job.h"
#include "lib/outpat.h"
#include "lib/text.h"
#include "lib/wire.h"
#include "lib/wirecheck.h"
#include "tests/fuzz/fuzz.h"

/* Every string protobuf-c unpacked into msg (recursively) is valid UTF-8:
 * true of anything frame_decode lets through, or the string check walked
 * other fields than protobuf-c filled. */
static void
fuzz_strings_valid(const ProtobufCMessage *msg)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	const ProtobufCFieldDescriptor *f;
	const char *base = (const char *)msg;
	size_t i, k, n;
	void *const *vals;

	for (i = 0; i < d->n_fields; i++) {
		f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_STRING &&
		    f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
		    *(const uint32_t *)(base + f->quantifier_offset) != f->id)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = *(const size_t *)(base + f->quantifier_offset);
			vals = *(void *const *const *)(base + f->offset);
		} else {
			n = 1;
			vals = (void *const *)(base + f->offset);
		}
		for (k = 0; k < n; k++) {
			if (vals[k] == NULL ||
			    (f->type == PROTOBUF_C_TYPE_STRING &&
			    vals[k] == f->default_value))
				continue;
			if (f->type == PROTOBUF_C_TYPE_MESSAGE)
				fuzz_strings_valid(vals[k]);
			else if (!text_utf8_valid(vals[k]))
				abort();
		}
	}
}

/* The text functions on the raw bytes: a sanitized copy is valid UTF-8
 * with no control character but tab, and passes as a name once tabs are
 * gone; the checks agree with it. */
static void
fuzz_text_checks(const uint8_t *data, size_t size)
{
	struct cerr err;
	char *s;
	size_t i;

	if ((s = malloc(size + 1)) == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	(void)text_check_name("fuzz", s, &err);
	(void)text_check_utf8("fuzz", s, &err);
	(void)text_sanitize(s);
	for (i = 0; s[i] != '\0'; i++)
		if (s[i] == '\t')
			s[i] = ' ';
	if (!text_utf8_valid(s) || text_control_at(s) != -1 ||
	    text_check_name("fuzz", s, &err) != 0)
		abort();
	free(s);
}

static void
fuzz_spec(const Cohort__V1__JobSpec *pb)
{
	struct job_limits lim = { .script_max = JOB_SCRIPT_DEFAULT_MAX };
	struct job_spec spec;
	struct cerr err;

	if (wire_spec_from_pb(pb, &spec, &err) == 0) {
		(void)job_spec_validate(&spec, ROLE_USER, &lim, &err);
		job_spec_clear(&spec);
	}
}

/* A launch as the agent takes it: the spec converted, its output
 * patterns expanded for the task's files. */
static void
fuzz_launch(const Cohort__V1__LaunchRequest *lr)
{
	struct outpat_vars v = { .job_id = lr->job_id, .array_id =
	    lr->has_array_id ? lr->array_id : 0, .array_task =
	    lr->has_array_task ? lr->array_task : 0, .node = "gpu01",
	    .user = lr->user };
	struct job_spec spec;
	struct cerr err;
	char path[4096];

	if (wire_spec_from_pb(lr->spec, &spec, &err) == -1)
		return;
	v.name = spec.name;
	(void)outpat_expand(outpat_for(spec.output, spec.error, false), &v,
	    path, sizeof(path));
	(void)outpat_expand(outpat_for(spec.output, spec.error, true), &v,
	    path, sizeof(path));
	job_spec_clear(&spec);
}

/* Job states in a listing's or a bulk cancel's filter. */
static void
fuzz_states(const Cohort__V1__JobState *states, size_t n)
{
	enum job_state st;
	size_t i;

	for (i = 0; i < n; i++)
		(void)wire_state_from_pb(states[i], &st);
}

static void
fuzz_job(const Cohort__V1__Job *pb)
{
	struct job *job;
	struct cerr err;

	Cohort__V1__Job out;
	Cohort__V1__JobSpec spec;

	if ((job = wire_job_from_pb(pb, &err)) == NULL)
		return;
	/* Back out as the controller sends it to another user: nothing
	 * private may be left in what would be packed. */
	if (wire_job_to_pb(job, &out, &spec) == 0) {
		wire_job_redact(&out);
		if (out.spec->n_env != 0 || out.spec->n_argv != 0 ||
		    out.spec->has_script || !out.redacted)
			abort();
		(void)protobuf_c_message_get_packed_size(&out.base);
		wire_job_pb_release(&out);
	}
	job_free(job);
}

static void
fuzz_node(const Cohort__V1__Inventory *inv, const Cohort__V1__NodeHealth *h)
{
	struct inventory i;
	struct node_health nh;
	struct cerr err;

	if (inv != NULL) {
		memset(&i, 0, sizeof(i));
		(void)wire_inventory_from_pb(inv, &i, &err);
	}
	if (h != NULL) {
		memset(&nh, 0, sizeof(nh));
		(void)wire_health_from_pb(h, &nh, &err);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Cohort__V1__Envelope *env, *again;
	uint8_t *frame, *frame2;
	size_t len, len2, i;
	char why[256];
	int rc;

	fuzz_text_checks(data, size);
	if (size >= FRAME_HDR)
		(void)frame_header_len(data);	/* the bytes as a header */
	rc = wirecheck_message(&cohort__v1__envelope__descriptor, data, size,
	    why, sizeof(why));
	if (rc == -1 && strlen(why) == 0)
		abort();	/* a refusal always says why */
	if ((env = frame_decode(data, size)) == NULL)
		return 0;
	/* Refused exactly when the check fails (or a peer sent the reserved
	 * field), and then without a body; accepted, every string is text. */
	if (frame_refusal(env) != NULL) {
		if (env->body_case != COHORT__V1__ENVELOPE__BODY__NOT_SET)
			abort();
	} else {
		if (rc != 0)
			abort();
		fuzz_strings_valid(&env->base);
	}
	switch (env->body_case) {
	case COHORT__V1__ENVELOPE__BODY_SUBMIT:
		fuzz_spec(env->submit->spec);
		break;
	case COHORT__V1__ENVELOPE__BODY_GET_JOB_REPLY:
		fuzz_job(env->get_job_reply->job);
		break;
	case COHORT__V1__ENVELOPE__BODY_LIST_JOBS_REPLY:
		for (i = 0; i < env->list_jobs_reply->n_jobs; i++)
			fuzz_job(env->list_jobs_reply->jobs[i]);
		break;
	case COHORT__V1__ENVELOPE__BODY_REGISTER:
		fuzz_node(env->register_->inventory, env->register_->health);
		break;
	case COHORT__V1__ENVELOPE__BODY_HEARTBEAT:
		fuzz_node(NULL, env->heartbeat->node_health);
		break;
	case COHORT__V1__ENVELOPE__BODY_LAUNCH:
		fuzz_launch(env->launch);
		break;
	case COHORT__V1__ENVELOPE__BODY_LIST_JOBS:
		if (env->list_jobs->has_state)
			fuzz_states(&env->list_jobs->state, 1);
		fuzz_states(env->list_jobs->states, env->list_jobs->n_states);
		break;
	case COHORT__V1__ENVELOPE__BODY_CANCEL:
		fuzz_states(env->cancel->states, env->cancel->n_states);
		break;
	default:
		break;
	}
	(void)wire_is_user_request(env->body_case);
	(void)wire_body_name(env->body_case);
	/* What decoded packs again. It need not decode again: protobuf-c
	 * reads a field number 0 behind a non-minimal tag and writes it
	 * back as a plain tag 0, which it refuses (cohort-mux checks for
	 * this before passing a request on; t310 sends such a frame). When
	 * it does decode, packing it once more gives the same bytes. */
	if ((frame = frame_pack(env, SIZE_MAX, &len)) == NULL ||
	    frame_header_len(frame) != len - FRAME_HDR)
		abort();
	if ((again = frame_decode(frame + FRAME_HDR, len - FRAME_HDR)) != NULL) {
		if ((frame2 = frame_pack(again, SIZE_MAX, &len2)) == NULL ||
		    len2 != len || memcmp(frame, frame2, len) != 0)
			abort();
		free(frame2);
		frame_free(again);
	}
	free(frame);
	frame_free(env);
	return 0;
}
