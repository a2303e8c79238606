/* Strings as they arrive on the wire, checked on the encoded bytes.
 * protobuf-c (1.4.1, and 1.5.x alike) copies a `string` field into a
 * NUL-terminated char * without looking at it: an embedded NUL silently
 * cuts the string short once unpacked (its length is not kept), and
 * invalid UTF-8 passes through. So the bytes of every string field are
 * checked before anything is unpacked into the project's structs, by
 * walking the encoding with the message's descriptors. */
#ifndef COHORT_WIRECHECK_H
#define COHORT_WIRECHECK_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

/* Deeper nesting is refused as malformed (cohort.proto nests 4 deep). */
#define WIRECHECK_MAX_DEPTH 16

/* Walk the message of type desc encoded in buf[0..len) and every message
 * field in it, recursively; check the bytes of each TYPE_STRING field:
 * no NUL, valid UTF-8 (no overlong forms, no surrogates, nothing above
 * U+10FFFF). Unknown fields and bytes fields are skipped.
 *
 * Returns 0 when every string is valid. -1 with errno EILSEQ when one is
 * not, and why (whylen bytes) names it by its path of field names:
 * "submit.spec.name: a NUL byte at byte 3"; -1 with errno EBADMSG when the
 * encoding itself is malformed (truncated, a bad varint, a group, nesting
 * deeper than WIRECHECK_MAX_DEPTH). */
int wirecheck_message(const ProtobufCMessageDescriptor *desc,
    const uint8_t *buf, size_t len, char *why, size_t whylen);

#endif
