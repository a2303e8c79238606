/* Inside a cconn (see conn.h): what conn.c (frames, calls, hello) shares
 * with the transports under it: a plain socket to cohort-mux (conn.c
 * itself) and TLS straight to the controller (conn_tls.c). */
#ifndef COHORT_CLIENT_CONN_INT_H
#define COHORT_CLIENT_CONN_INT_H

#include <stdint.h>

#include "client/conn.h"
#include "lib/addrlist.h"
#include "lib/conf.h"

struct cconn;

struct cconn_transport {
	/* One read ('r') or write ('w') of up to len bytes, waiting within
	 * the operation's deadline. Bytes done, or -1 with err set (an end
	 * of stream is an error here: a reply was due). */
	int (*io)(struct cconn *c, int op, void *buf, int len,
	    const char *doing, struct cerr *err);
	/* A write failed: replace err with a better reason if one can be
	 * read (the controller's alert refusing our certificate). NULL:
	 * nothing to add. */
	void (*write_failed)(struct cconn *c, struct cerr *err);
	/* Release what the transport holds (not the fd). */
	void (*close)(struct cconn *c);
};

struct cconn {
	int fd;
	const struct cconn_transport *tr;
	void *tls;		/* conn_tls.c's state, or NULL */
	int timeout_ms;
	int64_t deadline;	/* of the current operation, in ms */
	uint64_t next_id;
	int broken;		/* the stream is unusable after a failure */
	int eof;		/* the peer closed the stream */
	/* "HOST:PORT" connected to (the list as configured through the
	 * mux), for messages. */
	char where[512];
	/* The leader a follower named in its ERR_NOT_LEADER answer to
	 * hello; "" when it named none. */
	char leader[ADDRLIST_ADDR_TEXT];
	char *identity;
	char *role;
	uint32_t max_frame;	/* the controller's, from its hello; 0: unsaid */
	/* A new connection in place of a broken one (mux.c: the shared
	 * mux, which after a failover finds the new leader), for a read
	 * request cconn_call sends once more. NULL: none (TLS straight to
	 * the controller). */
	int (*reopen)(struct cconn *c, struct cerr *err);
	void *reopen_arg;	/* what reopen needs, freed by cconn_close */
	void (*reopen_free)(void *arg);
};

/* A cconn with nothing open yet: fd -1, the timeout, where = server. */
struct cconn *cconn_new(const struct cconn_opts *o, struct cerr *err);
void cconn_start_op(struct cconn *c);
/* Wait until fd is ready for events or the deadline passes. 0 or -1. */
int cconn_poll(struct cconn *c, short events, struct cerr *err);
/* Exchange Hello; keeps identity, role and max_frame. 0 or -1; a
 * follower's refusal is ERR_NOT_LEADER, with c->leader set when it named
 * the leader. */
int cconn_hello(struct cconn *c, struct cerr *err);
/* Check that the settings are complete and the files readable, and parse
 * the server's address list. 0 or -1 with err (ERR_INVALID naming the bad
 * entry). */
int cconn_check_opts(const struct cconn_opts *o, struct addrlist *list,
    struct cerr *err);

#endif
