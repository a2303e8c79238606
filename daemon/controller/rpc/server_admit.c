/* Who gets a connection slot: the handshake budget and the per-source
 * cap (by evicting the oldest silent handshake), the room kept for agents
 * and the agents' own caps, the per-identity cap (identities in a hash
 * table), and rate-limited logs of what was refused. See
 * docs/design/security.md, "Connection admission and the fair loop". */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/admit.h"
#include "lib/clock.h"
#include "lib/fnv.h"
#include "lib/log.h"
#include "daemon/controller/rpc/server.h"
#include "daemon/controller/rpc/server_int.h"

/* At most one log line per reason this often; the rest are counted. */
#define SERVER_LOG_EVERY_MS 10000

static const char *const server_refusal_names[SERVER_NREFUSALS] = {
	"full", "handshakes", "source", "identity", "reserve", "agents",
};
static const char *const server_closure_names[SERVER_NCLOSURES] = {
	"handshake_timeout", "hello_timeout", "idle_timeout", "stalled",
};

const char *
server_refusal_name(enum server_refusal r)
{
	return (unsigned)r < SERVER_NREFUSALS ? server_refusal_names[r] : "?";
}

const char *
server_closure_name(enum server_closure r)
{
	return (unsigned)r < SERVER_NCLOSURES ? server_closure_names[r] : "?";
}

/* A flood makes thousands of refusals a second: log the first of each
 * kind, then at most one line per SERVER_LOG_EVERY_MS with the count of
 * those not logged. slot indexes srv->lograte. */
void
server_admit_log(struct server *srv, unsigned slot, const char *fmt, ...)
{
	unsigned long left_out;
	char text[256];
	va_list ap;

	if (!ratelim_allow(&srv->lograte[slot], clock_mono_us() / 1000, 1,
	    SERVER_LOG_EVERY_MS, &left_out))
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (left_out > 0)
		log_info("%s (and %lu more like it not logged)", text,
		    left_out);
	else
		log_info("%s", text);
}

void
server_admit_refuse(struct server *srv, enum server_refusal why, const char *fmt,
    const char *a, unsigned limit)
{
	srv->refused[why]++;
	server_admit_log(srv, why, fmt, a, limit);
}

/* The handshake budget as far as people's room is concerned: never more
 * than an eighth of every slot, whatever was configured. */
static unsigned
server_hs_room(const struct server *srv)
{
	unsigned cap = srv->o.max_conns / 8;

	return srv->o.max_handshakes < cap ? srv->o.max_handshakes : cap;
}

/* What people keep whatever agents hold: a sixteenth of max_conns, and
 * at least one slot (an admin must always get in). */
static unsigned
server_people_min(const struct server *srv)
{
	unsigned n = srv->o.max_conns / 16;

	return n > 0 ? n : 1;
}

/* The most agent connections there may be: every slot but the people's
 * and the handshake budget. */
static unsigned
server_agents_hard(const struct server *srv)
{
	unsigned keep = server_people_min(srv) + server_hs_room(srv);

	return srv->o.max_conns > keep ? srv->o.max_conns - keep : 0;
}

/* agent_reserve, or the agents the controller knows if more. */
static unsigned
server_agents_wanted(struct server *srv)
{
	unsigned reserve = srv->o.agent_reserve, known;

	if (srv->known_agents != NULL &&
	    (known = srv->known_agents(srv->known_agents_arg)) > reserve)
		reserve = known;
	return reserve;
}

/* The slots kept for agents: at least every agent the controller knows
 * (or agent_reserve), or as many as are connected; but never so many
 * that people (an admin) have less than server_people_min. */
static unsigned
server_agent_room(struct server *srv)
{
	unsigned reserve = server_agents_wanted(srv);
	unsigned cap = server_agents_hard(srv);

	if (reserve > cap)
		reserve = cap;
	return reserve > srv->nagents ? reserve : srv->nagents;
}

/* FNV-1a of the name, the role class mixed in. */
static uint64_t
server_ident_hash(const char *name, bool agent)
{
	return fnv64_str(FNV64_BASIS ^ (agent ? 0x5a : 0), name);
}

int
server_ident_attach(struct conn *c)
{
	struct server *srv = c->srv;
	bool agent = c->peer.role == ROLE_AGENT;
	uint64_t slot = server_ident_hash(c->peer.name, agent) & srv->ids_mask;
	struct ident *id;
	size_t len;

	LIST_FOREACH(id, &srv->idents[slot], by_name)
		if (id->agent == agent && strcmp(id->name, c->peer.name) == 0)
			break;
	if (id == NULL) {
		len = strlen(c->peer.name) + 1;
		if ((id = calloc(1, sizeof(*id) + len)) == NULL)
			return -1;
		memcpy(id->name, c->peer.name, len);
		id->agent = agent;
		TAILQ_INIT(&id->conns);
		LIST_INSERT_HEAD(&srv->idents[slot], id, by_name);
	}
	TAILQ_INSERT_TAIL(&id->conns, c, ident_entry);
	id->nconns++;
	c->ident = id;
	return 0;
}

void
server_ident_detach(struct conn *c)
{
	struct ident *id = c->ident;

	if (id == NULL)
		return;
	TAILQ_REMOVE(&id->conns, c, ident_entry);
	c->ident = NULL;
	if (--id->nconns == 0) {
		LIST_REMOVE(id, by_name);
		free(id);
	}
}

/* c's identity's other connections that were admitted (of kind k). */
static unsigned
server_ident_others(const struct conn *c, enum conn_kind k)
{
	const struct conn *o;
	unsigned n = 0;

	TAILQ_FOREACH(o, &c->ident->conns, ident_entry)
		if (o != c && o->kind == k)
			n++;
	return n;
}

/* An agent just identified: at most SERVER_AGENT_CONNS_PER_NODE
 * connections for its name (a third is refused: one certificate cannot
 * hold more, and a restarting agent's new connection supersedes the old
 * one when it registers); a node with no connection yet only while the
 * agents number fewer than the nodes wanted plus a slack; and never so
 * many agents that people lose their room. */
int
server_admit_agent(struct conn *c)
{
	struct server *srv = c->srv;
	unsigned same = server_ident_others(c, CONN_AGENT);
	unsigned hard = server_agents_hard(srv), cap;
	char text[200];

	if (same >= SERVER_AGENT_CONNS_PER_NODE) {
		snprintf(text, sizeof(text), "too many connections for node "
		    "'%s': the limit is %u per agent", c->peer.name,
		    SERVER_AGENT_CONNS_PER_NODE);
		server_admit_refuse(srv, SERVER_REFUSED_IDENTITY,
		    "refusing a connection for node '%s': at its limit of %u",
		    c->peer.name, SERVER_AGENT_CONNS_PER_NODE);
		server_conn_send_error(c, 0, ERR_LIMIT, text);
		server_conn_close(c);
		return -1;
	}
	cap = server_agents_wanted(srv);
	cap += SERVER_AGENT_SLACK + cap / 16;
	if (cap > hard)
		cap = hard;
	if (srv->nagents >= hard || (same == 0 && srv->nagents >= cap)) {
		snprintf(text, sizeof(text), "the controller is full: it holds "
		    "as many agent connections as it has room for; retry later");
		server_admit_refuse(srv, SERVER_REFUSED_AGENTS,
		    "refusing agent '%s': agent connections at their cap of %u",
		    c->peer.name, same == 0 ? cap : hard);
		server_conn_send_error(c, 0, ERR_UNAVAILABLE, text);
		server_conn_close(c);
		return -1;
	}
	c->kind = CONN_AGENT;
	srv->nagents++;
	return 0;
}

/* A user or admin just identified: within the caps? 0, or -1 with the
 * refusal sent and the connection closing. */
int
server_admit_person(struct conn *c)
{
	struct server *srv = c->srv;
	unsigned same = server_ident_others(c, CONN_PEOPLE), agents, hs;
	char text[200];

	if (same >= srv->o.max_per_identity) {
		snprintf(text, sizeof(text), "too many connections for '%s': "
		    "the limit is %u per identity; close some and retry",
		    c->peer.name, srv->o.max_per_identity);
		server_admit_refuse(srv, SERVER_REFUSED_IDENTITY,
		    "refusing a connection for '%s': at its limit of %u",
		    c->peer.name, srv->o.max_per_identity);
		server_conn_send_error(c, 0, ERR_LIMIT, text);
		server_conn_close(c);
		return -1;
	}
	/* People, the agents' room and the handshake budget share
	 * max_conns; people may not use the other two. */
	agents = server_agent_room(srv);
	hs = server_hs_room(srv);
	if ((uint64_t)srv->npeople + 1 + agents + hs > srv->o.max_conns) {
		snprintf(text, sizeof(text), "the controller is full: the "
		    "connections left are kept for its agents; retry later");
		server_admit_refuse(srv, SERVER_REFUSED_RESERVE,
		    "refusing '%s': connections left are kept for agents "
		    "(%u people at most)", c->peer.name,
		    srv->o.max_conns > agents + hs ?
		    srv->o.max_conns - agents - hs : 0);
		server_conn_send_error(c, 0, ERR_UNAVAILABLE, text);
		server_conn_close(c);
		return -1;
	}
	c->kind = CONN_PEOPLE;
	TAILQ_INSERT_TAIL(&srv->people, c, kind_entry);
	srv->npeople++;
	return 0;
}

/* Make room for a newcomer from addr: 0, or -1 to refuse it. */
int
server_admit_room(struct server *srv, const uint8_t *addr, const char *atext)
{
	struct admit_hs *v;
	enum admit_cap cap;

	while ((v = admit_over(&srv->hs, addr, &cap)) != NULL) {
		if (cap == ADMIT_CAP_SOURCE)
			server_admit_refuse(srv, SERVER_REFUSED_SOURCE, "%s: "
			    "more than %u handshakes at once; dropping its "
			    "oldest", atext, srv->o.max_handshakes_per_source);
		else
			server_admit_refuse(srv, SERVER_REFUSED_HANDSHAKES,
			    "%s: handshake budget of %u in use; dropping the "
			    "oldest", atext, srv->o.max_handshakes);
		server_conn_free(v->owner);
	}
	if (srv->nconns < srv->o.max_conns)
		return 0;
	if ((v = admit_victim(&srv->hs, NULL)) != NULL) {
		server_admit_refuse(srv, SERVER_REFUSED_FULL, "%s: all %u "
		    "connections in use; dropping the oldest handshake", atext,
		    srv->o.max_conns);
		server_conn_free(v->owner);
		return 0;
	}
	server_admit_refuse(srv, SERVER_REFUSED_FULL, "%s: all %u connections in "
	    "use; refusing it", atext, srv->o.max_conns);
	return -1;
}
