/* The listener and its connections. Callbacks stay short: read → decode
 * frames → hand each envelope to the dispatcher; write → resume reading or
 * finish a close; event → identify the peer or drop the connection. */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <openssl/err.h>

#include "lib/clock.h"
#include "lib/frame.h"
#include "lib/log.h"
#include "lib/tls.h"
#include "lib/wire.h"
#include "daemon/controller/rpc/server.h"
#include "daemon/controller/rpc/server_int.h"

/* Replies may be larger than requests (a long job listing); the CLI
 * accepts up to this much. */
#define SERVER_REPLY_MAX (64u * 1024 * 1024)
/* Stop reading from a peer that does not read its replies: output already
 * queued plus replies owed behind a commit (conn_reserve). */
#define SERVER_OUT_HIGH (16u * 1024 * 1024)
#define SERVER_OUT_LOW (1u * 1024 * 1024)
/* Frames handled for one connection in one callback before it yields to
 * the rest of the loop (agents' heartbeats, timers, other users). */
#define SERVER_FRAMES_PER_ROUND 32
/* Out of file descriptors: stop accepting this long. */
#define SERVER_ACCEPT_PAUSE_MS 100

void
server_set_close_cb(struct server *srv, void (*cb)(uint64_t, void *),
    void *arg)
{
	srv->close_cb = cb;
	srv->close_arg = arg;
}

void
server_set_known_agents_cb(struct server *srv, unsigned (*cb)(void *),
    void *arg)
{
	srv->known_agents = cb;
	srv->known_agents_arg = arg;
}

static void conn_read_cb(struct bufferevent *bev, void *arg);
static void conn_read_frames(struct conn *c);
static void conn_budget_add(struct conn *c, size_t add, size_t sub);
static void conn_unthrottle(struct conn *c);

/* Leave the per-kind list and counts; c->kind becomes CONN_OTHER. */
static void
conn_unkind(struct conn *c)
{
	struct server *srv = c->srv;

	switch (c->kind) {
	case CONN_HANDSHAKE:
		admit_del(&srv->hs, &c->hs);
		break;
	case CONN_PEOPLE:
		TAILQ_REMOVE(&srv->people, c, kind_entry);
		srv->npeople--;
		break;
	case CONN_AGENT:
		srv->nagents--;
		break;
	case CONN_OTHER:
		break;
	}
	c->kind = CONN_OTHER;
}

/* The output budgets (see "Connection admission and the fair loop"):
 * every person's connection counts what its output buffer holds plus
 * the replies owed to it, in its identity's total and in the people's.
 * add and sub are the change to c's share. */
static void
conn_budget_add(struct conn *c, size_t add, size_t sub)
{
	struct server *srv = c->srv;
	struct ident *id = c->ident;
	size_t low_user = srv->o.max_output_per_user / 4 * 3;
	size_t low_all = srv->o.max_output_total / 4 * 3;
	bool user_above = id->bytes > low_user;
	bool all_above = srv->people_bytes > low_all;

	id->bytes += add;
	srv->people_bytes += add;
	id->bytes = sub < id->bytes ? id->bytes - sub : 0;
	srv->people_bytes = sub < srv->people_bytes ?
	    srv->people_bytes - sub : 0;
	/* Going below a low mark lets others read again: wake them once
	 * per loop round, not inside this (write) call. */
	if (!TAILQ_EMPTY(&srv->throttled) &&
	    ((user_above && id->bytes <= low_user) ||
	    (all_above && srv->people_bytes <= low_all)))
		event_active(srv->wake, EV_TIMEOUT, 0);
}

/* The output buffer of a person's connection grew or drained. */
static void
conn_out_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct conn *c = arg;

	if (info->n_added == 0 && info->n_deleted == 0)
		return;
	c->out_counted += info->n_added;
	c->out_counted = info->n_deleted < c->out_counted ?
	    c->out_counted - info->n_deleted : 0;
	conn_budget_add(c, info->n_added, info->n_deleted);
}

/* A person's connection was admitted: its output counts from now on. */
static int
conn_budget_start(struct conn *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);

	if (evbuffer_add_cb(out, conn_out_cb, c) == NULL)
		return -1;
	c->budgeted = true;
	c->out_counted = evbuffer_get_length(out);
	conn_budget_add(c, c->out_counted + c->owed_bytes, 0);
	return 0;
}

void
server_conn_free(struct conn *c)
{
	struct server *srv = c->srv;
	SSL *ssl;

	conn_unkind(c);
	if (c->budgeted) {
		evbuffer_remove_cb(bufferevent_get_output(c->bev),
		    conn_out_cb, c);
		conn_budget_add(c, 0, c->out_counted + c->owed_bytes);
		c->budgeted = false;
	}
	if (c->throttled)
		TAILQ_REMOVE(&srv->throttled, c, throttle_entry);
	server_ident_detach(c);
	if (c->closing)
		TAILQ_REMOVE(&srv->closing, c, close_entry);
	TAILQ_REMOVE(&srv->conns, c, entry);
	LIST_REMOVE(c, by_id);
	srv->nconns--;
	if (srv->close_cb != NULL)
		srv->close_cb(c->id, srv->close_arg);
	/* libevent 2.1 has no TLS shutdown call: say goodbye ourselves. */
	ssl = bufferevent_openssl_get_ssl(c->bev);
	if (ssl != NULL && c->identified)
		SSL_shutdown(ssl);
	bufferevent_free(c->bev);
	event_free(c->timer);
	event_free(c->resume);
	free(c);
}

static void
server_reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;
	struct conn *c, *next;

	for (c = TAILQ_FIRST(&srv->closing); c != NULL; c = next) {
		next = TAILQ_NEXT(c, close_entry);
		if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
			server_conn_free(c);
	}
}

uint64_t
server_conn_id(const struct conn *c)
{
	return c->id;
}

const struct peer *
server_conn_peer(const struct conn *c)
{
	return &c->peer;
}

bool
server_conn_hello_done(const struct conn *c)
{
	return c->hello;
}

static void
conn_arm(struct conn *c, uint64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000),
	    (suseconds_t)(ms % 1000) * 1000 };

	event_add(c->timer, &tv);
}

static void
conn_set_stall_timeout(struct conn *c, uint64_t ms)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	bufferevent_set_timeouts(c->bev, NULL, &tv);
}

void
server_conn_set_hello_done(struct conn *c)
{
	uint64_t ms = c->srv->o.idle_timeout_ms;

	c->hello = true;
	if (c->kind != CONN_PEOPLE) {
		/* The Hello deadline runs on until Register succeeds
		 * (conn_set_registered); an agent that reads none of the
		 * controller's replies and commands is dropped like a
		 * person. */
		conn_set_stall_timeout(c, SERVER_STALL_TIMEOUT_MS);
		return;
	}
	c->last_req_us = clock_mono_us();
	conn_arm(c, ms);
	/* A peer that reads none of its replies this long is dropped with
	 * them (the write timeout runs only while output waits), so that
	 * what one user can pin in memory is bounded in time too. */
	if (ms > SERVER_STALL_TIMEOUT_MS)
		ms = SERVER_STALL_TIMEOUT_MS;
	conn_set_stall_timeout(c, ms);
}

void
server_conn_set_registered(struct conn *c)
{
	struct conn *o;

	if (c->kind != CONN_AGENT || c->closing || c->registered)
		return;
	c->registered = true;
	/* Agents heartbeat; from now on the node timeout watches them. */
	event_del(c->timer);
	/* The node's binding moved here: an older connection of the same
	 * node (a restarted agent's, not yet seen to be gone) is closed
	 * rather than left holding a slot. */
	TAILQ_FOREACH(o, &c->ident->conns, ident_entry) {
		if (o == c || o->kind != CONN_AGENT || !o->registered ||
		    o->closing)
			continue;
		log_info("conn %llu (%s): superseded by conn %llu; closing",
		    (unsigned long long)o->id, o->peer.name,
		    (unsigned long long)c->id);
		server_conn_send_error(o, 0, ERR_UNAVAILABLE, "this node "
		    "registered again on a newer connection");
		server_conn_close(o);
	}
}

struct conn *
server_conn(struct server *srv, uint64_t id)
{
	struct conn *c;

	LIST_FOREACH(c, &srv->ids[id & srv->ids_mask], by_id) {
		if (c->id == id)
			return c->closing ? NULL : c;
	}
	return NULL;
}

int
server_conn_send_frame(struct conn *c, const uint8_t *frame, size_t len)
{
	if (c->closing)
		return 0;
	if (bufferevent_write(c->bev, frame, len) == -1) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int
server_conn_send(struct conn *c, const Cohort__V1__Envelope *env)
{
	uint8_t *buf;
	size_t len;
	int rc;

	if ((buf = frame_pack(env, SERVER_REPLY_MAX, &len)) == NULL)
		return -1;
	rc = server_conn_send_frame(c, buf, len);
	free(buf);
	return rc;
}

void
server_conn_send_error(struct conn *c, uint64_t req_id, enum err_code code,
    const char *text)
{
	Cohort__V1__Envelope env;
	Cohort__V1__Error e;

	wire_error(&env, &e, req_id, code, text);
	if (server_conn_send(c, &env) == -1)
		log_warn("conn %llu (%s): cannot queue error reply",
		    (unsigned long long)c->id, c->peer.name);
}

void
server_conn_close(struct conn *c)
{
	if (c->closing)
		return;
	c->closing = true;
	TAILQ_INSERT_TAIL(&c->srv->closing, c, close_entry);
	bufferevent_disable(c->bev, EV_READ);
	event_del(c->timer);
	event_del(c->resume);
	/* Freed by the reaper once the output has drained (the write
	 * callback activates it), never inside the caller's stack. */
	event_active(c->srv->reaper, EV_TIMEOUT, 0);
}

/* Read again in a later loop round: a zero timeout becomes active only
 * after the next poll for I/O, so the rest of the loop (heartbeats that
 * arrived meanwhile included) runs first, and nothing spins. */
static void
conn_yield(struct conn *c)
{
	struct timeval zero = { 0, 0 };

	event_add(c->resume, &zero);
}

/* Whether c must not be read now: its own output and replies owed
 * (SERVER_OUT_HIGH, resuming below SERVER_OUT_LOW), and for people the
 * budgets shared with others: its identity's (resuming below three
 * quarters of it) and every person's together. A connection with nothing
 * buffered or owed is exempt from the people's budget: it gets one
 * request at a time, so that one user who stalls cannot stop the others
 * (who then wait only on their own replies), while what it can add is
 * one reply. The identity's budget has no exemption: a user's
 * connections wait on that user's own draining, or on the stall timeout
 * that drops a connection that reads nothing. */
static bool
conn_over_limit(const struct conn *c, bool high)
{
	const struct server *srv = c->srv;
	size_t out = evbuffer_get_length(bufferevent_get_output(c->bev));
	size_t user = srv->o.max_output_per_user;
	size_t all = srv->o.max_output_total;

	if (c->owed >= srv->o.max_inflight ||
	    out + c->owed_bytes > (high ? SERVER_OUT_HIGH : SERVER_OUT_LOW))
		return true;
	if (!c->budgeted)
		return false;
	if (!high) {
		user = user / 4 * 3;
		all = all / 4 * 3;
	}
	return c->ident->bytes > user ||
	    (srv->people_bytes > all && out + c->owed_bytes > 0);
}

/* Too much owed to a peer that is not reading: stop reading it. */
static void
conn_check_throttle(struct conn *c)
{
	if (c->throttled || !conn_over_limit(c, true))
		return;
	c->throttled = true;
	TAILQ_INSERT_TAIL(&c->srv->throttled, c, throttle_entry);
	bufferevent_disable(c->bev, EV_READ);
	bufferevent_setwatermark(c->bev, EV_WRITE, SERVER_OUT_LOW, 0);
}

static void
conn_unthrottle(struct conn *c)
{
	c->throttled = false;
	TAILQ_REMOVE(&c->srv->throttled, c, throttle_entry);
	bufferevent_setwatermark(c->bev, EV_WRITE, 0, 0);
	bufferevent_enable(c->bev, EV_READ);
}

/* A budget went below its low mark: the throttled connections that may
 * be read again are, each in a later round of its own. */
static void
server_wake_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;
	struct conn *c;

	TAILQ_FOREACH(c, &srv->throttled, throttle_entry)
		if (!c->closing && !conn_over_limit(c, false))
			conn_yield(c);
}

void
server_conn_reserve(struct conn *c, size_t len)
{
	c->owed++;
	c->owed_bytes += len;
	if (c->budgeted)
		conn_budget_add(c, len, 0);
}

void
server_conn_release(struct conn *c, size_t len)
{
	size_t sub = len < c->owed_bytes ? len : c->owed_bytes;

	if (c->owed > 0)
		c->owed--;
	c->owed_bytes -= sub;
	if (c->budgeted)
		conn_budget_add(c, 0, sub);
	/* Whether reading may resume is decided in a later round, once the
	 * reply being released is in the output buffer. */
	if (c->throttled && !c->closing)
		conn_yield(c);
}

static void
conn_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	if (c->closing)
		return;
	if (c->throttled) {
		/* The write callback, a release or a budget's wake comes
		 * back. */
		if (conn_over_limit(c, false))
			return;
		conn_unthrottle(c);
	}
	/* Requests already buffered raise no new read event. */
	conn_read_frames(c);
}

static void
conn_read_frames(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	Cohort__V1__Envelope *env;
	char text[128];
	uint8_t hdr[FRAME_HDR];
	unsigned n = 0;

	while (!c->closing && !c->throttled) {
		/* Before each frame too, once Hello is done (which must come
		 * within its deadline): another connection of the same
		 * identity may have spent the budget meanwhile. */
		if (c->hello)
			conn_check_throttle(c);
		if (c->throttled)
			return;
		if (n == SERVER_FRAMES_PER_ROUND) {
			if (evbuffer_get_length(in) >= FRAME_HDR) {
				c->srv->yields++;
				conn_yield(c);
			}
			return;
		}
		switch (frame_read(in, c->srv->max_frame, &env)) {
		case FRAME_NEED:
			return;
		case FRAME_OK:
			n++;
			c->last_req_us = clock_mono_us();
			c->srv->cb(c, env, c->srv->arg);
			frame_free(env);
			break;
		case FRAME_TOO_LARGE:
			evbuffer_copyout(in, hdr, FRAME_HDR);
			snprintf(text, sizeof(text),
			    "frame of %u bytes exceeds the limit of %zu",
			    frame_header_len(hdr), c->srv->max_frame);
			log_warnx("conn %llu (%s): %s; closing",
			    (unsigned long long)c->id, c->peer.name, text);
			server_conn_send_error(c, 0, ERR_TOO_LARGE, text);
			server_conn_close(c);
			return;
		case FRAME_BAD:
			log_warnx("conn %llu (%s): undecodable frame; closing",
			    (unsigned long long)c->id, c->peer.name);
			server_conn_send_error(c, 0, ERR_PROTOCOL,
			    "frame is not a valid cohort.v1.Envelope");
			server_conn_close(c);
			return;
		}
		conn_check_throttle(c);
	}
}

static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	conn_read_frames(arg);
}

static void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (c->closing) {
		event_active(c->srv->reaper, EV_TIMEOUT, 0);
		return;
	}
	if (c->throttled)
		conn_yield(c);
}

/* The handshake or Hello deadline passed, or a user's connection idled. */
static void
conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct server *srv = c->srv;
	uint64_t now = clock_mono_us(), idle_us, quiet;

	if (!c->identified || !c->hello ||
	    (c->kind == CONN_AGENT && !c->registered)) {
		enum server_closure why = c->identified ?
		    SERVER_CLOSED_HELLO_TIMEOUT :
		    SERVER_CLOSED_HANDSHAKE_TIMEOUT;

		srv->closed[why]++;
		server_admit_log(srv, SERVER_NREFUSALS + why,
		    "conn %llu (%s): %s within %llu ms; closing",
		    (unsigned long long)c->id, c->peer.name, !c->identified ?
		    "TLS handshake not done" : !c->hello ? "no hello" :
		    "no registration",
		    (unsigned long long)(c->identified ?
		    srv->o.hello_timeout_ms : srv->o.handshake_timeout_ms));
		server_conn_free(c);
		return;
	}
	/* A reply still owed or still being written: the peer waits on us,
	 * it is not idle. */
	idle_us = srv->o.idle_timeout_ms * 1000;
	quiet = now - c->last_req_us;
	if (c->owed > 0 ||
	    evbuffer_get_length(bufferevent_get_output(c->bev)) > 0) {
		conn_arm(c, srv->o.idle_timeout_ms);
		return;
	}
	if (quiet < idle_us) {
		conn_arm(c, (idle_us - quiet + 999) / 1000);
		return;
	}
	srv->closed[SERVER_CLOSED_IDLE_TIMEOUT]++;
	server_admit_log(srv, SERVER_NREFUSALS + SERVER_CLOSED_IDLE_TIMEOUT,
	    "conn %llu (%s): idle for %llu ms; closing",
	    (unsigned long long)c->id, c->peer.name,
	    (unsigned long long)srv->o.idle_timeout_ms);
	server_conn_close(c);
}

static void
conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	struct server *srv = c->srv;
	struct cerr err;
	char ebuf[256];
	uint64_t spent;

	if (what & BEV_EVENT_CONNECTED) {
		conn_unkind(c);
		if (tls_peer_identity(bufferevent_openssl_get_ssl(bev),
		    &c->peer, &err) == -1 && !(srv->o.accept_controllers &&
		    c->peer.role == ROLE_CONTROLLER)) {
			log_warnx("conn %llu: refused: %s",
			    (unsigned long long)c->id, err.text);
			server_conn_send_error(c, 0, ERR_DENIED, err.text);
			server_conn_close(c);
			return;
		}
		c->identified = true;
		if (server_ident_attach(c) == -1) {
			log_warnx("conn %llu (%s): out of memory; closing",
			    (unsigned long long)c->id, c->peer.name);
			server_conn_close(c);
			return;
		}
		if (c->peer.role == ROLE_AGENT) {
			if (server_admit_agent(c) == -1)
				return;
		} else if (c->peer.role == ROLE_USER ||
		    c->peer.role == ROLE_ADMIN) {
			if (server_admit_person(c) == -1)
				return;
			if (conn_budget_start(c) == -1) {
				log_warnx("conn %llu (%s): out of memory; "
				    "closing", (unsigned long long)c->id,
				    c->peer.name);
				server_conn_close(c);
				return;
			}
		}
		/* The Hello deadline counts from the accept. */
		spent = (clock_mono_us() - c->accepted_us) / 1000;
		conn_arm(c, spent < srv->o.hello_timeout_ms ?
		    srv->o.hello_timeout_ms - spent : 0);
		log_debug("conn %llu: %s (%s) connected",
		    (unsigned long long)c->id, c->peer.name,
		    role_name(c->peer.role));
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		if (!c->identified)
			server_admit_log(srv, SERVER_NREFUSALS +
			    SERVER_NCLOSURES, "conn %llu: TLS handshake "
			    "failed: %s", (unsigned long long)c->id,
			    tls_bufferevent_error(bev, what, ebuf, sizeof(ebuf)));
		else
			log_debug("conn %llu (%s): error",
			    (unsigned long long)c->id, c->peer.name);
	} else if (what & BEV_EVENT_TIMEOUT) {
		/* The only timeout is the write timeout: replies unread. */
		srv->closed[SERVER_CLOSED_STALLED]++;
		server_admit_log(srv, SERVER_NREFUSALS +
		    SERVER_CLOSED_STALLED, "conn %llu (%s): read none of its "
		    "replies for %llu ms; closing", (unsigned long long)c->id,
		    c->peer.name, (unsigned long long)(c->kind == CONN_AGENT ||
		    srv->o.idle_timeout_ms > SERVER_STALL_TIMEOUT_MS ?
		    SERVER_STALL_TIMEOUT_MS : srv->o.idle_timeout_ms));
	}
	/* EOF, error or timeout: nothing more can be sent either. */
	ERR_clear_error();
	server_conn_free(c);
}

static void
server_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct server *srv = arg;
	struct conn *c;
	SSL *ssl;
	uint8_t addr[16];
	char atext[INET6_ADDRSTRLEN];

	if (srv->accepts++ == 0) {
		struct timeval zero = { 0, 0 };

		evtimer_add(srv->accept_round, &zero);
	}
	if (srv->accepts >= ADMIT_ACCEPTS_PER_ROUND && !srv->round_full) {
		struct timeval later = { 0, ADMIT_ACCEPT_BATCH_MS * 1000 };

		srv->round_full = true;
		evconnlistener_disable(l);
		evtimer_add(srv->accept_round, &later);
	}
	admit_addr(sa, addr, atext, sizeof(atext));
	if (server_admit_room(srv, addr, atext) == -1) {
		evutil_closesocket(fd);
		return;
	}
	/* Replies are whole frames written at once: without this a listing
	 * read page by page waits on Nagle and delayed ACKs (~40 ms a
	 * page). Failure only costs latency. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 },
	    sizeof(int));
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->timer = evtimer_new(srv->base, conn_timer_cb, c)) == NULL ||
	    (c->resume = evtimer_new(srv->base, conn_resume_cb, c)) == NULL ||
	    (ssl = SSL_new(srv->ctx)) == NULL) {
		log_warnx("out of memory accepting a connection");
		if (c != NULL && c->timer != NULL)
			event_free(c->timer);
		if (c != NULL && c->resume != NULL)
			event_free(c->resume);
		free(c);
		evutil_closesocket(fd);
		return;
	}
	/* On failure libevent has already freed ssl (and with it the
	 * socket): free nothing more. */
	c->bev = bufferevent_openssl_socket_new(srv->base, fd, ssl,
	    BUFFEREVENT_SSL_ACCEPTING,
	    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	if (c->bev == NULL) {
		log_warnx("cannot set up TLS for a connection");
		event_free(c->timer);
		event_free(c->resume);
		free(c);
		return;
	}
	c->srv = srv;
	c->id = ++srv->next_id;
	memcpy(c->addr, addr, sizeof(addr));
	c->accepted_us = clock_mono_us();
	snprintf(c->peer.name, sizeof(c->peer.name), "?");
	TAILQ_INSERT_TAIL(&srv->conns, c, entry);
	LIST_INSERT_HEAD(&srv->ids[c->id & srv->ids_mask], c, by_id);
	srv->nconns++;
	c->kind = CONN_HANDSHAKE;
	admit_add(&srv->hs, &c->hs, c, ssl, fd, addr);
	bufferevent_setcb(c->bev, conn_read_cb, conn_write_cb, conn_event_cb,
	    c);
	/* Input bounded to one largest frame: beyond it the peer waits in
	 * TCP until its earlier requests are handled. */
	bufferevent_setwatermark(c->bev, EV_READ, 0,
	    srv->max_frame + FRAME_HDR);
	conn_arm(c, srv->o.handshake_timeout_ms);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

static void
server_accept_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;

	srv->paused = false;
	if (!srv->round_full)
		evconnlistener_enable(srv->listener);
}

/* A new round (or, after a full batch, ADMIT_ACCEPT_BATCH_MS later):
 * accept again. */
static void
server_accept_round_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;

	srv->accepts = 0;
	if (srv->round_full) {
		srv->round_full = false;
		if (!srv->paused)
			evconnlistener_enable(srv->listener);
	}
}

/* accept() failed: out of descriptors (the socket stays readable, so
 * without a pause the loop would spin on it). */
static void
server_accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct server *srv = arg;
	struct timeval tv = { 0, SERVER_ACCEPT_PAUSE_MS * 1000 };
	int e = EVUTIL_SOCKET_ERROR();

	server_admit_log(srv, SERVER_REFUSED_FULL, "accept: %s; pausing "
	    "new connections for %d ms", strerror(e), SERVER_ACCEPT_PAUSE_MS);
	srv->refused[SERVER_REFUSED_FULL]++;
	srv->paused = true;
	evconnlistener_disable(l);
	evtimer_add(srv->accept_pause, &tv);
}

static int
server_bind(struct server *srv, const struct server_opts *opts,
    struct cerr *err)
{
	struct addrinfo hints, *res;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	char portstr[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(portstr, sizeof(portstr), "%u", opts->port);
	if ((rc = getaddrinfo(opts->host, portstr, &hints, &res)) != 0)
		return cerr_set(err, ERR_INVALID, "listen address %s: %s",
		    opts->host, gai_strerror(rc));
	srv->listener = evconnlistener_new_bind(srv->base, server_accept_cb,
	    srv, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
	    LEV_OPT_CLOSE_ON_EXEC, ADMIT_LISTEN_BACKLOG, res->ai_addr,
	    (int)res->ai_addrlen);
	freeaddrinfo(res);
	if (srv->listener == NULL)
		return cerr_set(err, ERR_INVALID, "cannot listen on %s:%u: %s",
		    opts->host, opts->port, strerror(errno));
	evconnlistener_set_error_cb(srv->listener, server_accept_error_cb);
	if (getsockname(evconnlistener_get_fd(srv->listener),
	    (struct sockaddr *)&ss, &sslen) == -1)
		return cerr_set(err, ERR_INTERNAL, "getsockname: %s",
		    strerror(errno));
	srv->port = ntohs(ss.ss_family == AF_INET6 ?
	    ((struct sockaddr_in6 *)&ss)->sin6_port :
	    ((struct sockaddr_in *)&ss)->sin_port);
	return 0;
}

struct server *
server_create(struct event_base *base, SSL_CTX *ctx,
    const struct server_opts *opts, server_msg_cb cb, void *arg,
    struct cerr *err)
{
	struct server *srv;
	uint64_t n;

	if ((srv = calloc(1, sizeof(*srv))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	srv->base = base;
	srv->ctx = ctx;
	srv->max_frame = opts->max_frame;
	srv->o = *opts;
	srv->o.host = NULL;
#define DEFAULT(f, v) if (srv->o.f == 0) srv->o.f = (v)
	DEFAULT(max_conns, 1);
	DEFAULT(max_handshakes, SERVER_DEFAULT_MAX_HANDSHAKES);
	DEFAULT(max_handshakes_per_source, SERVER_DEFAULT_HANDSHAKES_PER_SOURCE);
	DEFAULT(max_per_identity, SERVER_DEFAULT_PER_IDENTITY);
	DEFAULT(max_inflight, SERVER_DEFAULT_MAX_INFLIGHT);
	DEFAULT(handshake_timeout_ms, SERVER_DEFAULT_HANDSHAKE_TIMEOUT_MS);
	DEFAULT(hello_timeout_ms, SERVER_DEFAULT_HELLO_TIMEOUT_MS);
	DEFAULT(idle_timeout_ms, SERVER_DEFAULT_IDLE_TIMEOUT_MS);
	DEFAULT(max_output_per_user, SERVER_DEFAULT_OUTPUT_PER_USER);
	DEFAULT(max_output_total, SERVER_DEFAULT_OUTPUT_TOTAL);
#undef DEFAULT
	srv->cb = cb;
	srv->arg = arg;
	TAILQ_INIT(&srv->conns);
	admit_init(&srv->hs, srv->o.max_handshakes,
	    srv->o.max_handshakes_per_source);
	TAILQ_INIT(&srv->people);
	TAILQ_INIT(&srv->closing);
	TAILQ_INIT(&srv->throttled);
	for (n = 64; n < srv->o.max_conns && n < (1u << 20); n <<= 1)
		;
	srv->ids_mask = n - 1;
	srv->ids = calloc(n, sizeof(*srv->ids));	/* all-zero: empty lists */
	srv->idents = calloc(n, sizeof(*srv->idents));
	srv->wake = event_new(base, -1, 0, server_wake_cb, srv);
	srv->reaper = event_new(base, -1, 0, server_reap_cb, srv);
	srv->accept_pause = evtimer_new(base, server_accept_resume_cb, srv);
	srv->accept_round = evtimer_new(base, server_accept_round_cb, srv);
	if (srv->reaper == NULL || srv->ids == NULL || srv->idents == NULL ||
	    srv->wake == NULL ||
	    srv->accept_pause == NULL || srv->accept_round == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	if (server_bind(srv, opts, err) == -1)
		goto fail;
	return srv;
fail:
	server_destroy(srv);
	return NULL;
}

void
server_destroy(struct server *srv)
{
	struct conn *c;

	if (srv == NULL)
		return;
	if (srv->listener != NULL)
		evconnlistener_free(srv->listener);
	while ((c = TAILQ_FIRST(&srv->conns)) != NULL)
		server_conn_free(c);
	if (srv->reaper != NULL)
		event_free(srv->reaper);
	if (srv->accept_pause != NULL)
		event_free(srv->accept_pause);
	if (srv->accept_round != NULL)
		event_free(srv->accept_round);
	if (srv->wake != NULL)
		event_free(srv->wake);
	free(srv->ids);
	free(srv->idents);
	free(srv);
}

uint16_t
server_port(const struct server *srv)
{
	return srv->port;
}

size_t
server_max_frame(const struct server *srv)
{
	return srv->max_frame;
}

unsigned
server_conn_count(const struct server *srv)
{
	return srv->nconns;
}

unsigned
server_drop_revoked(struct server *srv)
{
	struct conn *c;
	struct cerr err;
	char text[sizeof(err.text) + 128];
	SSL *ssl;
	unsigned n = 0;

	TAILQ_FOREACH(c, &srv->conns, entry) {
		if (!c->identified || c->closing ||
		    (ssl = bufferevent_openssl_get_ssl(c->bev)) == NULL ||
		    tls_cert_recheck(srv->ctx, SSL_get0_peer_certificate(ssl),
		    SSL_get_peer_cert_chain(ssl), &err) == 0)
			continue;
		snprintf(text, sizeof(text), "certificate of %s %s: %s",
		    role_name(c->peer.role), c->peer.name, err.text);
		log_warnx("conn %llu: %s; closing", (unsigned long long)c->id,
		    text);
		server_conn_send_error(c, 0, ERR_DENIED, text);
		server_conn_close(c);
		n++;
	}
	return n;
}

void
server_stats(const struct server *srv, struct server_stats *st)
{
	const struct conn *c;

	memset(st, 0, sizeof(*st));
	st->conns = srv->nconns;
	st->handshaking = srv->hs.n;
	st->agents = srv->nagents;
	st->people = srv->npeople;
	TAILQ_FOREACH(c, &srv->throttled, throttle_entry)
		st->throttled++;
	memcpy(st->refused, srv->refused, sizeof(st->refused));
	memcpy(st->closed, srv->closed, sizeof(st->closed));
	st->yields = srv->yields;
}
