/* Frames without I/O: packing, decoding, the header (see frame.h). The
 * libevent side is frame_ev.c, so that the CLI links no libevent. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/frame.h"
#include "lib/text.h"
#include "lib/wirecheck.h"

/* A refused envelope carries its reason as an unknown field of this
 * number (the largest protobuf allows), so that the reason lives and dies
 * with the envelope (frame_free frees it with the rest). One that arrives
 * from a peer with this number is refused too. */
#define FRAME_REFUSAL_FIELD 536870911u

uint32_t
frame_header_len(const uint8_t hdr[FRAME_HDR])
{
	return (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 |
	    (uint32_t)hdr[2] << 8 | (uint32_t)hdr[3];
}

static void
frame_put_header(uint8_t hdr[FRAME_HDR], uint32_t len)
{
	hdr[0] = len >> 24;
	hdr[1] = len >> 16;
	hdr[2] = len >> 8;
	hdr[3] = len;
}

/* Is every string in msg valid UTF-8? With fix, make it so in place
 * (see frame_pack) and say whether it already was. */
static bool
frame_walk_text(ProtobufCMessage *msg, int depth, bool fix)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	const ProtobufCFieldDescriptor *f;
	char *base = (char *)msg;
	size_t i, k, n;
	void **vals;
	bool ok = true;

	if (depth > WIRECHECK_MAX_DEPTH)
		return true;
	for (i = 0; i < d->n_fields; i++) {
		f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_STRING &&
		    f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
		    *(uint32_t *)(base + f->quantifier_offset) != f->id)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = *(size_t *)(base + f->quantifier_offset);
			vals = *(void ***)(base + f->offset);
		} else {
			n = 1;
			vals = (void **)(base + f->offset);
		}
		for (k = 0; k < n && vals != NULL; k++) {
			if (vals[k] == NULL)
				continue;
			if (f->type == PROTOBUF_C_TYPE_MESSAGE)
				ok &= frame_walk_text(vals[k], depth + 1, fix);
			else if (!text_utf8_valid(vals[k])) {
				ok = false;
				if (!fix)
					return false;
				text_utf8_fix(vals[k]);
			}
		}
	}
	return ok;
}

bool
frame_text_ok(const Cohort__V1__Envelope *env)
{
	return frame_walk_text((ProtobufCMessage *)&env->base, 0, false);
}

uint8_t *
frame_pack(const Cohort__V1__Envelope *env, size_t max, size_t *len)
{
	size_t body;
	uint8_t *buf;

	/* What Cohort sends passes the receiver's string check: a string
	 * cut in the middle of a character by a fixed-size buffer ("%.64s"
	 * of a name, a copy into a struct) gets '?' for the cut bytes.
	 * Only a string that is not valid UTF-8 is written to, which no
	 * string literal is. */
	(void)frame_walk_text((ProtobufCMessage *)&env->base, 0, true);
	body = cohort__v1__envelope__get_packed_size(env);
	if (body > max || body > UINT32_MAX) {
		errno = EMSGSIZE;
		return NULL;
	}
	if ((buf = malloc(FRAME_HDR + body)) == NULL)
		return NULL;
	frame_put_header(buf, (uint32_t)body);
	cohort__v1__envelope__pack(env, buf + FRAME_HDR);
	*len = FRAME_HDR + body;
	return buf;
}

const char *
frame_refusal(const Cohort__V1__Envelope *env)
{
	const ProtobufCMessageUnknownField *u;
	unsigned i;

	/* The last one: frame_refuse appends its own behind any a peer
	 * sent. */
	for (i = env->base.n_unknown_fields; i-- > 0;) {
		u = &env->base.unknown_fields[i];
		if (u->tag == FRAME_REFUSAL_FIELD)
			return u->len > 0 && u->data[u->len - 1] == '\0' ?
			    (const char *)u->data : "refused";
	}
	return NULL;
}

/* Drop env's body and attach why. protobuf-c unpacked env with its
 * default allocator (malloc), which frees what is added here. 0, or -1
 * (ENOMEM). */
static int
frame_refuse(Cohort__V1__Envelope *env, const char *why)
{
	const ProtobufCFieldDescriptor *f;
	ProtobufCMessageUnknownField *u;
	ProtobufCMessage **body;
	size_t n = strlen(why) + 1;
	uint8_t *text;

	if ((text = malloc(n)) == NULL)
		return -1;
	memcpy(text, why, n);
	u = realloc(env->base.unknown_fields,
	    (env->base.n_unknown_fields + 1) * sizeof(*u));
	if (u == NULL) {
		free(text);
		return -1;
	}
	env->base.unknown_fields = u;
	u += env->base.n_unknown_fields++;
	u->tag = FRAME_REFUSAL_FIELD;
	u->wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
	u->len = n;
	u->data = text;
	/* Every member of the body oneof is a message. */
	f = protobuf_c_message_descriptor_get_field(
	    &cohort__v1__envelope__descriptor, env->body_case);
	if (f != NULL && f->type == PROTOBUF_C_TYPE_MESSAGE) {
		body = (ProtobufCMessage **)((char *)env + f->offset);
		protobuf_c_message_free_unpacked(*body, NULL);
		*body = NULL;
	}
	env->body_case = COHORT__V1__ENVELOPE__BODY__NOT_SET;
	return 0;
}

Cohort__V1__Envelope *
frame_decode(const uint8_t *body, size_t len)
{
	Cohort__V1__Envelope *env;
	char why[256];

	if ((env = cohort__v1__envelope__unpack(NULL, len, body)) == NULL) {
		errno = EBADMSG;
		return NULL;
	}
	if (frame_refusal(env) != NULL)
		snprintf(why, sizeof(why), "field number %u is reserved",
		    FRAME_REFUSAL_FIELD);
	else if (wirecheck_message(&cohort__v1__envelope__descriptor, body,
	    len, why, sizeof(why)) == 0)
		return env;
	/* A string that is not text; or, should protobuf-c ever read bytes
	 * the walk finds malformed, those as well (refused either way). */
	if (frame_refuse(env, why) == -1) {
		frame_free(env);
		errno = ENOMEM;
		return NULL;
	}
	return env;
}

void
frame_free(Cohort__V1__Envelope *env)
{
	if (env != NULL)
		cohort__v1__envelope__free_unpacked(env, NULL);
}
