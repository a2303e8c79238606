/* Text as Cohort accepts it: valid UTF-8 (no overlong forms, no UTF-16
 * surrogates, nothing above U+10FFFF), and for names no control
 * characters either. Used on the wire (lib/wirecheck.c), in job specs
 * (lib/job.c), for certificate names (lib/tls.c) and by the CLI before it
 * sends anything. */
#ifndef COHORT_TEXT_H
#define COHORT_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cerr;

/* The offset of the first byte of s[0..len) that does not belong to a
 * valid UTF-8 sequence, or len when all of it is valid. A NUL byte is a
 * valid code point here; callers that want none check for it. */
size_t text_utf8_prefix(const uint8_t *s, size_t len);

/* Replace, in place, every byte of s that is not part of a valid UTF-8
 * sequence with '?' (control characters are kept): a string cut short in
 * the middle of a character by a fixed-size buffer becomes text again.
 * Returns the number of bytes replaced. */
size_t text_utf8_fix(char *s);

/* s (NUL-terminated) is valid UTF-8. */
bool text_utf8_valid(const char *s);

/* The offset of the first control character in the NUL-terminated,
 * valid UTF-8 string s (C0 below 0x20, DEL, C1 U+0080..U+009F), or -1
 * when it holds none. */
long text_control_at(const char *s);

/* A name (job name, user, node, GPU type, topology level, env key...):
 * valid UTF-8 without control characters. Returns 0, or -1 with err
 * (ERR_INVALID) naming field: "FIELD: invalid UTF-8 at byte N" or
 * "FIELD: control character 0xNN at byte N". */
int text_check_name(const char *field, const char *s, struct cerr *err);

/* Free text (an env value, an argument, a path): valid UTF-8, any
 * control character allowed (a NUL cannot be in a C string; the wire
 * refuses it, lib/wirecheck.c). Returns 0, or -1 with err (ERR_INVALID)
 * naming field. One-line texts shown in tables and logs (reasons, job
 * names) are names for this purpose: text_check_name. */
int text_check_utf8(const char *field, const char *s, struct cerr *err);

/* Replace, in place, every byte of s that is not valid UTF-8 and every
 * control character with '?' (a tab with a space), so that text a program
 * on a node wrote (a health check's words, a task's why) can be sent as a
 * protobuf string and shown in a table. Returns the number of bytes
 * replaced. */
size_t text_sanitize(char *s);

#endif
