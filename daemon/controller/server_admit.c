/* Who gets a connection slot: the handshake budget and the per-source
 * cap (by evicting the oldest silent handshake), the room kept for agents,
 * the per-identity cap, and rate-limited logs of what was refused. See
 * docs/ARCHITECTURE.md, "Connection admission and the fair loop". */
#include "config.h"

#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/ssl.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "server.h"
#include "server_int.h"

/* At most one log line per reason this often; the rest are counted. */
#define SERVER_LOG_EVERY_US (10ull * 1000 * 1000)

static const char *const server_refusal_names[SERVER_NREFUSALS] = {
	"full", "handshakes", "source", "identity", "reserve",
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
 * kind, then at most one line per SERVER_LOG_EVERY_US with the count of
 * those not logged. slot indexes srv->lograte. */
void
server_admit_log(struct server *srv, unsigned slot, const char *fmt, ...)
{
	struct server_lograte *lr = &srv->lograte[slot];
	uint64_t now = clock_mono_us();
	char text[256];
	va_list ap;

	if (lr->last_us != 0 && now - lr->last_us < SERVER_LOG_EVERY_US) {
		lr->suppressed++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (lr->suppressed > 0)
		log_info("%s (and %lu more like it not logged)", text,
		    lr->suppressed);
	else
		log_info("%s", text);
	lr->last_us = now;
	lr->suppressed = 0;
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

/* The slots kept for agents: at least every agent the controller knows
 * (or agent_reserve), or as many as are connected; but never so many
 * that people (an admin) have less than a sixteenth of max_conns. */
static unsigned
server_agent_room(struct server *srv)
{
	unsigned reserve = srv->o.agent_reserve, known, cap;

	if (srv->known_agents != NULL &&
	    (known = srv->known_agents(srv->known_agents_arg)) > reserve)
		reserve = known;
	cap = srv->o.max_conns - srv->o.max_conns / 16 - server_hs_room(srv);
	if (reserve > cap)
		reserve = cap;
	return reserve > srv->nagents ? reserve : srv->nagents;
}

/* A user or admin just identified: within the caps? 0, or -1 with the
 * refusal sent and the connection closing. */
int
server_admit_person(struct conn *c)
{
	struct server *srv = c->srv;
	struct conn *o;
	unsigned same = 0, agents, hs;
	char text[200];

	TAILQ_FOREACH(o, &srv->people, kind_entry)
		if (strcmp(o->peer.name, c->peer.name) == 0)
			same++;
	if (same >= srv->o.max_per_identity) {
		snprintf(text, sizeof(text), "too many connections for '%s': "
		    "the limit is %u per identity; close some and retry",
		    c->peer.name, srv->o.max_per_identity);
		server_admit_refuse(srv, SERVER_REFUSED_IDENTITY,
		    "refusing a connection for '%s': at its limit of %u",
		    c->peer.name, srv->o.max_per_identity);
		conn_send_error(c, 0, ERR_LIMIT, text);
		conn_close(c);
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
		conn_send_error(c, 0, ERR_UNAVAILABLE, text);
		conn_close(c);
		return -1;
	}
	c->kind = CONN_PEOPLE;
	TAILQ_INSERT_TAIL(&srv->people, c, kind_entry);
	srv->npeople++;
	return 0;
}

/* Whether c has sent nothing at all: no ClientHello processed and no
 * byte waiting in its socket (a real client's ClientHello is usually
 * there by the time it is accepted, even when the client was slow to be
 * scheduled; a flood's connections stay silent). */
static bool
conn_silent(struct conn *c)
{
	int pending = 0;

	if (SSL_get_state(bufferevent_openssl_get_ssl(c->bev)) != TLS_ST_BEFORE)
		return false;
	return ioctl(bufferevent_getfd(c->bev), FIONREAD, &pending) == 0 &&
	    pending == 0;
}

/* The handshake to drop for a newcomer: the oldest (from addr when given)
 * that has sent nothing, else the oldest. Evicting the oldest rather than
 * refusing the newcomer means a flood from an address cannot keep a real
 * client from that address (all of them, in tests and behind NAT) out:
 * the flood must outpace every real handshake, not just hold slots open;
 * and silent connections go before ones already talking. */
static struct conn *
server_victim(struct server *srv, const uint8_t *addr)
{
	struct conn *c, *oldest = NULL;

	TAILQ_FOREACH(c, &srv->handshakes, kind_entry) {
		if (addr != NULL && memcmp(c->addr, addr, 16) != 0)
			continue;
		if (conn_silent(c))
			return c;
		if (oldest == NULL)
			oldest = c;
	}
	return oldest;
}

static unsigned
server_from(struct server *srv, const uint8_t *addr)
{
	struct conn *c;
	unsigned n = 0;

	TAILQ_FOREACH(c, &srv->handshakes, kind_entry)
		if (memcmp(c->addr, addr, 16) == 0)
			n++;
	return n;
}

void
server_admit_addr(const struct sockaddr *sa, uint8_t key[16], char *text,
    size_t len)
{
	memset(key, 0, 16);
	if (sa->sa_family == AF_INET6) {
		memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		inet_ntop(AF_INET6, key, text, (socklen_t)len);
	} else if (sa->sa_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr,
		    4);
		inet_ntop(AF_INET, key + 12, text, (socklen_t)len);
	} else
		snprintf(text, len, "?");
}

/* Make room for a newcomer from addr: 0, or -1 to refuse it. */
int
server_admit_room(struct server *srv, const uint8_t *addr, const char *atext)
{
	struct conn *v;

	if (server_from(srv, addr) >= srv->o.max_handshakes_per_source &&
	    (v = server_victim(srv, addr)) != NULL) {
		server_admit_refuse(srv, SERVER_REFUSED_SOURCE, "%s: more than %u "
		    "handshakes at once; dropping its oldest", atext,
		    srv->o.max_handshakes_per_source);
		conn_free(v);
	}
	if (srv->nhandshakes >= srv->o.max_handshakes &&
	    (v = server_victim(srv, NULL)) != NULL) {
		server_admit_refuse(srv, SERVER_REFUSED_HANDSHAKES, "%s: handshake "
		    "budget of %u in use; dropping the oldest", atext,
		    srv->o.max_handshakes);
		conn_free(v);
	}
	if (srv->nconns < srv->o.max_conns)
		return 0;
	if ((v = server_victim(srv, NULL)) != NULL) {
		server_admit_refuse(srv, SERVER_REFUSED_FULL, "%s: all %u "
		    "connections in use; dropping the oldest handshake", atext,
		    srv->o.max_conns);
		conn_free(v);
		return 0;
	}
	server_admit_refuse(srv, SERVER_REFUSED_FULL, "%s: all %u connections in "
	    "use; refusing it", atext, srv->o.max_conns);
	return -1;
}

