/* Helpers for the INI configuration files of every program (parsed with
 * inih). Each parser returns 0, or -1 with err->text saying what is wrong
 * with the value, so callers can prefix "FILE:LINE: ". */
#ifndef COHORT_CONF_H
#define COHORT_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define CONF_HOST_MAX 255

/* "HOST:PORT", "[V6]:PORT". Port 0 is allowed when allow_zero. */
int conf_parse_hostport(const char *s, char *host, size_t hostlen,
    uint16_t *port, bool allow_zero, struct cerr *err);
/* Unsigned integer in [min, max]. */
int conf_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out,
    struct cerr *err);
/* A byte size: a number with an optional K, M or G suffix (powers of 2). */
int conf_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out,
    struct cerr *err);
/* yes/no, true/false, on/off, 1/0. */
int conf_parse_bool(const char *s, bool *out, struct cerr *err);
/* A duration (lib/duration.h) in [min, max] seconds. */
int conf_parse_duration(const char *s, uint64_t min, uint64_t max,
    uint64_t *out, struct cerr *err);
/* Replace *dst with a copy of s. 0 or -1 (ENOMEM). */
int conf_set_str(char **dst, const char *s);

#endif
