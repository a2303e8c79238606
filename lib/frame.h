/* Frames: a 4-byte big-endian length followed by one cohort.v1.Envelope.
 * Used by every program, over libevent buffers (daemons) and blocking
 * sockets (the CLI). */
#ifndef COHORT_FRAME_H
#define COHORT_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/cohort.pb-c.h"

#define FRAME_HDR 4
#define FRAME_DEFAULT_MAX (4u * 1024 * 1024)

struct evbuffer;

/* Pack env as a frame. Returns a malloc'd buffer the caller frees and its
 * length in *len, or NULL (ENOMEM, or EMSGSIZE when over max). A string
 * in env that is not valid UTF-8 (cut mid-character by a fixed buffer)
 * has its bad bytes replaced with '?' first, in place, so that the
 * receiver's string check (frame_decode) never refuses what we send. */
uint8_t *frame_pack(const Cohort__V1__Envelope *env, size_t max, size_t *len);
/* Is every string of env valid UTF-8 (what frame_pack would otherwise
 * repair)? For a person's input, which is refused rather than changed. */
bool frame_text_ok(const Cohort__V1__Envelope *env);

/* Append env as a frame to out. 0, or -1 (ENOMEM, EMSGSIZE). */
int frame_write(struct evbuffer *out, const Cohort__V1__Envelope *env,
    size_t max);

/* The body length announced by a 4-byte header. */
uint32_t frame_header_len(const uint8_t hdr[FRAME_HDR]);

/* Decode a frame's body (without the header). Returns the envelope, which
 * the caller frees with frame_free, or NULL (EBADMSG) when it is not a
 * valid Envelope.
 *
 * A frame that decodes but holds a string that is not text (an embedded
 * NUL, which protobuf-c would silently cut the string at, or invalid
 * UTF-8; lib/wirecheck.c) is refused: the envelope comes back with its id
 * but without its body (body_case NOT_SET), so that nothing can act on it,
 * and frame_refusal says why, for the ERROR_INVALID reply. */
Cohort__V1__Envelope *frame_decode(const uint8_t *body, size_t len);

/* Why frame_decode refused env: a text naming the field ("submit.spec.name:
 * a NUL byte at byte 3"), borrowed from env; NULL when it was not
 * refused. */
const char *frame_refusal(const Cohort__V1__Envelope *env);

enum frame_status {
	FRAME_OK,	/* *env holds one envelope (see frame_refusal) */
	FRAME_NEED,	/* not a whole frame yet */
	FRAME_TOO_LARGE, /* the header announces more than max */
	FRAME_BAD,	/* a whole frame that does not decode */
};

/* Take one frame from in. On FRAME_OK and FRAME_BAD the frame is drained
 * from in; on FRAME_NEED and FRAME_TOO_LARGE nothing is consumed. The
 * length is checked against max before anything is buffered further. */
enum frame_status frame_read(struct evbuffer *in, size_t max,
    Cohort__V1__Envelope **env);

void frame_free(Cohort__V1__Envelope *env);

#endif
