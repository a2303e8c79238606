/* A small error record for failures a person must read: a code that maps
 * onto the wire's ErrorCode and one line of text. */
#ifndef COHORT_ERR_H
#define COHORT_ERR_H

enum err_code {
	ERR_NONE = 0,
	ERR_INVALID = 1,
	ERR_DENIED = 2,
	ERR_NOT_FOUND = 3,
	ERR_CONFLICT = 4,
	ERR_INTERNAL = 5,
	ERR_PROTOCOL = 6,
	ERR_TOO_LARGE = 7,
	ERR_VERSION = 8,
	ERR_UNAVAILABLE = 9,
	ERR_LIMIT = 10,		/* a per-user limit or rate: retry later */
	ERR_NOT_LEADER = 11,	/* a follower replica: go to the leader */
	ERR_BUSY = 12,		/* not now, maybe later (a step that does
				 * not fit yet): retry */
};

struct cerr {
	enum err_code code;
	char text[512];
};

/* Fill err (which may be NULL) and return -1, so callers can write
 * `return cerr_set(err, ERR_INVALID, "...")`. */
int cerr_set(struct cerr *err, enum err_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void cerr_clear(struct cerr *err);

#endif
