/* The INI configuration files of every program (parsed with inih): a
 * loader driven by a table of keys, and value parsers. Each parser
 * returns 0, or -1 with err->text saying what is wrong with the value;
 * the loader prefixes "FILE:LINE: " and the key's name. */
#ifndef COHORT_CONF_H
#define COHORT_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

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
/* A duration in [min_ms, max_ms] milliseconds: "NNNms", or what
 * lib/duration.h reads ("2s", "10m", "1h", "1d", "MM:SS", ...) except a
 * bare number, which lib/duration.h takes for minutes: in a daemon's
 * file "heartbeat_interval = 2" meaning two minutes would be a trap. */
int conf_parse_duration_ms(const char *s, uint64_t min_ms, uint64_t max_ms,
    uint64_t *out, struct cerr *err);
/* value made absolute against dir (an absolute directory): *out is a new
 * string. An empty value is an error. */
int conf_abs_path(const char *dir, const char *value, char **out,
    struct cerr *err);

/* ---- the file ---- */

struct conf_key;

/* What a key's setter is given besides the value. */
struct conf_ctx {
	void *cfg;		/* the caller's structure, as passed to conf_load */
	const char *dir;	/* absolute directory of the file */
	/* For setters of patterned keys (below): the section and the key
	 * as written in the file, and the line; NULL / 0 in a section
	 * callback's ctx for name. */
	const char *section;
	const char *name;
	int line;
};

/* Patterns: a section "queue *" matches every section "queue NAME" (NAME
 * not empty), and a name "gpus.*" every key "gpus.X" (X not empty). The
 * keys of a patterned section are counted per section: "given twice"
 * means twice in the same [queue NAME]. */
struct conf_key {
	const char *section;
	const char *name;
	bool required;		/* a file without it is refused */
	bool repeatable;	/* may be given again (the setter adds to it) */
	/* Store value; on error, say what is wrong with it (the loader adds
	 * "PATH:LINE: name: "). */
	int (*set)(const struct conf_ctx *c, const struct conf_key *k,
	    const char *value, struct cerr *err);
	size_t off;		/* of the field in cfg, for the setters below */
	size_t size;		/* of that field, for numbers */
	uint64_t min, max;	/* bounds of numbers, sizes, durations (ms) */
};

/* The offset and size of field f of struct type t, for a conf_key. */
#define CONF_FIELD(t, f) .off = offsetof(t, f), .size = sizeof(((t *)0)->f)

/* Setters for the common cases, all working on the field at k->off:
 * conf_key_path: a char * made absolute against the file's directory;
 * conf_key_uint, conf_key_size: an unsigned integer field of k->size
 * bytes, from conf_parse_uint or conf_parse_size in [k->min, k->max];
 * conf_key_ms: a uint64_t, from conf_parse_duration_ms in
 * [k->min, k->max]; conf_key_bool: a bool, from conf_parse_bool. */
int conf_key_path(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
int conf_key_uint(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
int conf_key_size(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
int conf_key_ms(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
int conf_key_bool(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
/* An int log level (lib/log.h) from "debug", "info", "warning" or
 * "error". */
int conf_key_log_level(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);

/* The field of c->cfg that k names. */
static inline void *
conf_field(const struct conf_ctx *c, const struct conf_key *k)
{
	return (char *)c->cfg + k->off;
}

/* Read the INI file at path, calling the setter of each key in keys[nkeys]
 * with cfg. Relative paths are resolved against the file's directory, so
 * that a daemon that changes directory still finds its files. Unknown
 * sections and keys, a key given twice (unless repeatable) and a missing
 * required key are errors; so are lines longer than inih's buffer, which
 * inih would silently cut. Leading blanks are stripped, so an indented
 * line is not taken for the continuation of the value above it.
 *
 * If seen is not NULL, seen[i] is set to the line keys[i] was first
 * given on, or 0. Returns 0, or -1 with err->text one line:
 * "PATH:LINE: what is wrong", or "PATH: ..." about the file as a whole
 * ("PATH: missing 'x' in [y]", "PATH: cannot open: ..."). After a
 * failure cfg may hold values set before it: the caller frees them. */
int conf_load(const char *path, const struct conf_key *keys, size_t nkeys,
    void *cfg, int *seen, struct cerr *err);
/* As conf_load, calling on_section (if not NULL) with each section header
 * as it is read (c->line its line), before the keys under it, so that
 * sections with no key are seen too; on_section returns 0, or -1 with
 * err saying what is wrong (the loader prefixes "PATH:LINE: "). */
int conf_load_sections(const char *path, const struct conf_key *keys,
    size_t nkeys, void *cfg, int *seen,
    int (*on_section)(const struct conf_ctx *c, const char *section,
    struct cerr *err), struct cerr *err);

#endif
