/* Frames over libevent buffers, for the daemons and cohort-mux (see
 * frame.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include <event2/buffer.h>

#include "lib/frame.h"

int
frame_write(struct evbuffer *out, const Cohort__V1__Envelope *env, size_t max)
{
	size_t len;
	uint8_t *buf;
	int rc;

	if ((buf = frame_pack(env, max, &len)) == NULL)
		return -1;
	rc = evbuffer_add(out, buf, len);
	free(buf);
	if (rc == -1)
		errno = ENOMEM;
	return rc;
}

enum frame_status
frame_read(struct evbuffer *in, size_t max, Cohort__V1__Envelope **env)
{
	uint8_t hdr[FRAME_HDR];
	uint32_t len;
	uint8_t *body;

	*env = NULL;
	if (evbuffer_copyout(in, hdr, FRAME_HDR) < FRAME_HDR)
		return FRAME_NEED;
	len = frame_header_len(hdr);
	/* Checked before waiting for the body, so a peer cannot make us
	 * buffer more than max. */
	if (len > max)
		return FRAME_TOO_LARGE;
	if (evbuffer_get_length(in) < FRAME_HDR + (size_t)len)
		return FRAME_NEED;
	body = evbuffer_pullup(in, FRAME_HDR + (ssize_t)len);
	if (body == NULL) {
		evbuffer_drain(in, FRAME_HDR + len);
		return FRAME_BAD;
	}
	*env = frame_decode(body + FRAME_HDR, len);
	evbuffer_drain(in, FRAME_HDR + len);
	return *env != NULL ? FRAME_OK : FRAME_BAD;
}
