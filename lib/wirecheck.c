/* The string check on encoded messages (see wirecheck.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/text.h"
#include "lib/wirecheck.h"

#define WIRECHECK_PATH_MAX 256

struct walk {
	char path[WIRECHECK_PATH_MAX];
	char *why;
	size_t whylen;
};

/* A varint of at most max bytes at *p (below end): 0 and *v, advancing
 * *p; -1 when truncated or longer. The limits are protobuf-c's, so that
 * both read the same field numbers and lengths from the same bytes: 5
 * bytes for a tag or a length, 10 for a value. */
static int
varint(const uint8_t **p, const uint8_t *end, unsigned max, uint64_t *v)
{
	unsigned shift;

	*v = 0;
	for (shift = 0; shift < 7 * max && *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if ((b & 0x80) == 0)
			return 0;
	}
	return -1;
}

static int
bad_string(struct walk *w, const uint8_t *s, size_t len)
{
	const uint8_t *nul;
	size_t at;

	if ((nul = memchr(s, '\0', len)) != NULL)
		snprintf(w->why, w->whylen, "%s: a NUL byte at byte %zu "
		    "(strings may not contain NUL)", w->path,
		    (size_t)(nul - s));
	else if ((at = text_utf8_prefix(s, len)) != len)
		snprintf(w->why, w->whylen, "%s: invalid UTF-8 at byte %zu",
		    w->path, at);
	else
		return 0;
	errno = EILSEQ;
	return -1;
}

static int
walk(struct walk *w, const ProtobufCMessageDescriptor *desc,
    const uint8_t *p, size_t len, int depth)
{
	const uint8_t *end = p + len;
	const ProtobufCFieldDescriptor *f;
	uint64_t tag, n;
	size_t plen;
	int rc;

	if (depth > WIRECHECK_MAX_DEPTH)
		goto malformed;
	while (p < end) {
		/* protobuf-c refuses a first byte without field bits, but
		 * reads a field number 0 behind a non-minimal tag (an
		 * unknown field, skipped here as there). */
		if ((*p & 0xf8) == 0 || varint(&p, end, 5, &tag) == -1)
			goto malformed;
		switch (tag & 7) {
		case PROTOBUF_C_WIRE_TYPE_VARINT:
			if (varint(&p, end, 10, &n) == -1)
				goto malformed;
			continue;
		case PROTOBUF_C_WIRE_TYPE_64BIT:
			if ((size_t)(end - p) < 8)
				goto malformed;
			p += 8;
			continue;
		case PROTOBUF_C_WIRE_TYPE_32BIT:
			if ((size_t)(end - p) < 4)
				goto malformed;
			p += 4;
			continue;
		case PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED:
			if (varint(&p, end, 5, &n) == -1 ||
			    n > (uint64_t)(end - p))
				goto malformed;
			break;
		default:	/* groups: protobuf-c reads none */
			goto malformed;
		}
		f = protobuf_c_message_descriptor_get_field(desc,
		    (uint32_t)(tag >> 3));
		if (f != NULL && (f->type == PROTOBUF_C_TYPE_STRING ||
		    f->type == PROTOBUF_C_TYPE_MESSAGE)) {
			plen = strlen(w->path);
			snprintf(w->path + plen, sizeof(w->path) - plen, "%s%s",
			    plen > 0 ? "." : "", f->name);
			if (f->type == PROTOBUF_C_TYPE_STRING)
				rc = bad_string(w, p, (size_t)n);
			else
				rc = walk(w, f->descriptor, p, (size_t)n,
				    depth + 1);
			if (rc == -1)
				return -1;
			w->path[plen] = '\0';
		}
		p += n;
	}
	return 0;
malformed:
	snprintf(w->why, w->whylen, "%s%smalformed encoding", w->path,
	    w->path[0] != '\0' ? ": " : "");
	errno = EBADMSG;
	return -1;
}

int
wirecheck_message(const ProtobufCMessageDescriptor *desc, const uint8_t *buf,
    size_t len, char *why, size_t whylen)
{
	struct walk w;
	char dummy[1];

	w.path[0] = '\0';
	w.why = whylen > 0 ? why : dummy;
	w.whylen = whylen > 0 ? whylen : sizeof(dummy);
	return walk(&w, desc, buf, len, 0);
}
