/* Frames without I/O: packing, decoding, the header (see frame.h). The
 * libevent side is frame_ev.c, so that the CLI links no libevent. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

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

uint8_t *
frame_pack(const Cohort__V1__Envelope *env, size_t max, size_t *len)
{
	size_t body;
	uint8_t *buf;

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

Cohort__V1__Envelope *
frame_decode(const uint8_t *body, size_t len)
{
	Cohort__V1__Envelope *env;

	env = cohort__v1__envelope__unpack(NULL, len, body);
	if (env == NULL)
		errno = EBADMSG;
	return env;
}

void
frame_free(Cohort__V1__Envelope *env)
{
	if (env != NULL)
		cohort__v1__envelope__free_unpacked(env, NULL);
}
