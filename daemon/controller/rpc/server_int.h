/* Private to server.c (connections, the event loop) and server_admit.c
 * (who gets a connection slot): the structures they share. */
#ifndef COHORT_CONTROLLER_SERVER_INT_H
#define COHORT_CONTROLLER_SERVER_INT_H

#include <sys/queue.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/admit.h"
#include "lib/ratelim.h"
#include "daemon/controller/rpc/server.h"

struct bufferevent;
struct event;
struct evconnlistener;

enum conn_kind {
	CONN_HANDSHAKE,		/* TLS not done: in srv->hs */
	CONN_AGENT,
	CONN_PEOPLE,		/* users and admins: in srv->people */
	CONN_OTHER,		/* refused, closing */
};

/* One user, admin or agent name: its connections and, for people, what
 * they have buffered in all (the per-identity output budget). */
struct ident {
	LIST_ENTRY(ident) by_name;	/* in srv->idents[hash & mask] */
	TAILQ_HEAD(, conn) conns;
	unsigned nconns;
	bool agent;
	size_t bytes;			/* output + owed, people only */
	char name[];
};

struct conn {
	uint64_t id;
	struct server *srv;
	struct bufferevent *bev;
	struct peer peer;
	bool identified;
	bool hello;
	bool closing;
	bool throttled;
	bool registered;		/* agents: Register succeeded */
	bool budgeted;			/* people: counted in ident/srv bytes */
	enum conn_kind kind;
	struct ident *ident;		/* once identified */
	size_t out_counted;		/* output bytes counted in the budgets */
	uint8_t addr[16];		/* source, IPv4 as ::ffff:a.b.c.d */
	uint64_t accepted_us;		/* monotonic */
	uint64_t last_req_us;		/* the latest request read */
	unsigned owed;			/* replies reserved, not yet sent */
	size_t owed_bytes;
	struct event *timer;		/* handshake, hello, then idle */
	struct event *resume;		/* read again in a later round */
	struct admit_hs hs;		/* in srv->hs while CONN_HANDSHAKE */
	TAILQ_ENTRY(conn) entry;
	LIST_ENTRY(conn) by_id;		/* in srv->ids[id & mask] */
	TAILQ_ENTRY(conn) kind_entry;	/* people */
	TAILQ_ENTRY(conn) close_entry;	/* closing */
	TAILQ_ENTRY(conn) ident_entry;	/* ident->conns */
	TAILQ_ENTRY(conn) throttle_entry; /* srv->throttled, if throttled */
};

TAILQ_HEAD(conn_list, conn);

struct server {
	struct event_base *base;
	SSL_CTX *ctx;
	struct evconnlistener *listener;
	struct event *reaper;
	struct event *accept_pause;	/* out of descriptors */
	struct event *accept_round;	/* the end of this round's batch */
	unsigned accepts;		/* accepted in this round */
	bool paused;			/* by accept_pause */
	bool round_full;		/* by accept_round */
	struct conn_list conns;
	struct admit hs;		/* handshakes, oldest first */
	struct conn_list people;
	struct conn_list closing;
	/* Connections by id: every reply and command looks one up, and at
	 * 10,000 agents a list walk per heartbeat reply was a quarter of
	 * the controller's time. Ids are sequential, so id & mask spreads
	 * them evenly over a table sized for max_conns. */
	LIST_HEAD(conn_ids, conn) *ids;
	uint64_t ids_mask;
	/* Identities by name (hash & ids_mask): per-identity caps and the
	 * per-identity output budget without a walk over every connection. */
	LIST_HEAD(idents, ident) *idents;
	struct conn_list throttled;	/* people not read for now */
	size_t people_bytes;		/* output + owed of every person */
	struct event *wake;		/* a budget went below its low mark */
	unsigned nconns;
	unsigned nagents;
	unsigned npeople;
	uint64_t next_id;
	uint16_t port;
	size_t max_frame;
	struct server_opts o;
	server_msg_cb cb;
	void *arg;
	void (*close_cb)(uint64_t, void *);
	void *close_arg;
	unsigned (*known_agents)(void *);
	void *known_agents_arg;
	unsigned long refused[SERVER_NREFUSALS];
	unsigned long closed[SERVER_NCLOSURES];
	unsigned long yields;
	/* One per refusal, per closure, and one for failed handshakes. */
	struct ratelim lograte[SERVER_NREFUSALS + SERVER_NCLOSURES + 1];
};

/* server.c: close and free c now (never inside c's own callbacks
 * other than its timer and event callbacks, which return right after). */
void server_conn_free(struct conn *c);

/* server_admit.c */
/* Log at most once per SERVER_LOG_EVERY_MS for each slot of
 * srv->lograte, counting the lines left out. */
void server_admit_log(struct server *srv, unsigned slot, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));
/* Count a refusal and log it (rate-limited); fmt takes a string and an
 * unsigned. */
void server_admit_refuse(struct server *srv, enum server_refusal why,
    const char *fmt, const char *a, unsigned limit);
/* Make room for a newcomer from addr (evicting handshakes): 0, or -1 to
 * refuse it. */
int server_admit_room(struct server *srv, const uint8_t *addr,
    const char *atext);
/* A user or admin just identified: within the caps? 0, or -1 with the
 * refusal sent and the connection closing. */
int server_admit_person(struct conn *c);
/* An agent just identified: within its caps (two connections per node,
 * the agents' cap)? 0, or -1 with the refusal sent and c closing. */
int server_admit_agent(struct conn *c);
/* The identity named by c's peer (role agent or not), created if need
 * be, with c added to it: 0, or -1 when out of memory. */
int server_ident_attach(struct conn *c);
/* Take c out of its identity (freed when it was the last). */
void server_ident_detach(struct conn *c);

#endif
