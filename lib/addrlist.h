/* Lists of controller addresses ("HOST:PORT, HOST:PORT, ..." in
 * COHORT_SERVER, cohort-mux --server and the agent's [agent] controller)
 * and the choice of which one to try next while looking for the leader
 * of a replicated controller (docs/REPLICATION.md). Pure: no I/O, no
 * clock; the callers (client/conn_tls.c, daemon/agent/link.c) connect,
 * sleep and report.
 *
 * A walk goes in rounds. A round tries the last known leader first (if
 * any), then every listed address in order; an address that answers
 * ERR_NOT_LEADER naming the leader sends the walk there next (at most
 * ADDRLIST_MAX_REDIRECTS times a round, so two confused replicas naming
 * each other cannot keep it busy). When a round is over without a
 * leader the caller backs off (addrlist_walk_round says how long) and
 * starts the next. */
#ifndef COHORT_ADDRLIST_H
#define COHORT_ADDRLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/conf.h"
#include "lib/err.h"

#define ADDRLIST_MAX 16
#define ADDRLIST_MAX_REDIRECTS 4
/* "[HOST]:65535" and its NUL. */
#define ADDRLIST_ADDR_TEXT (CONF_HOST_MAX + 9)
#define ADDRLIST_BACKOFF_MIN_MS 50
#define ADDRLIST_BACKOFF_MAX_MS 250

struct addrlist_addr {
	char host[CONF_HOST_MAX + 1];
	uint16_t port;
};

struct addrlist {
	size_t n;
	struct addrlist_addr a[ADDRLIST_MAX];
};

/* Parse "HOST:PORT" or "[V6]:PORT" (port 1..65535). 0, or -1 with err
 * (ERR_INVALID). */
int addrlist_addr_parse(const char *s, struct addrlist_addr *out,
    struct cerr *err);
/* Parse a comma-separated list (spaces around entries allowed; at least
 * one, at most ADDRLIST_MAX, none twice). 0, or -1 with err
 * (ERR_INVALID) naming the bad entry by position and text; *out is
 * unchanged on failure. */
int addrlist_parse(const char *s, struct addrlist *out, struct cerr *err);
/* "HOST:PORT", brackets around an IPv6 address. Returns buf. */
const char *addrlist_addr_format(const struct addrlist_addr *a, char *buf,
    size_t len);
/* Same port and host (a host name compared without case). */
bool addrlist_addr_eq(const struct addrlist_addr *a,
    const struct addrlist_addr *b);
/* The index of a in l, or -1. */
int addrlist_find(const struct addrlist *l, const struct addrlist_addr *a);

struct addrlist_walk {
	const struct addrlist *list;	/* borrowed */
	struct addrlist_addr leader;	/* the last known leader */
	bool has_leader;
	struct addrlist_addr redirect;	/* to try next, from ERR_NOT_LEADER */
	bool has_redirect;
	bool leader_tried;		/* this round */
	uint32_t tried;			/* list entries tried this round */
	unsigned redirects;		/* followed this round */
	unsigned round;			/* rounds completed */
};

/* Start a walk over list (borrowed, at least one entry); leader, when
 * not NULL, is the last known leader, tried first in every round. */
void addrlist_walk_init(struct addrlist_walk *w, const struct addrlist *list,
    const struct addrlist_addr *leader);
/* The next address to try in this round: true with *out, false when the
 * round is over (back off, then addrlist_walk_round). */
bool addrlist_walk_next(struct addrlist_walk *w, struct addrlist_addr *out);
/* The address last tried answered ERR_NOT_LEADER naming leader: try it
 * next. false when this round has followed ADDRLIST_MAX_REDIRECTS
 * already (the walk then goes on through the list). */
bool addrlist_walk_redirect(struct addrlist_walk *w,
    const struct addrlist_addr *leader);
/* a answered as the leader: tried first from now on. */
void addrlist_walk_found(struct addrlist_walk *w,
    const struct addrlist_addr *a);
/* Start the next round. Returns how long to wait before it: 50 ms,
 * doubling each round, at most 250 ms (an election takes 1-2 s: a
 * client that waited a whole second more would see it late). */
uint64_t addrlist_walk_round(struct addrlist_walk *w);

#endif
