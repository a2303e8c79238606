/* cohort-mux: one user's shared connection to the controller. The CLI
 * starts it (client/mux.c) and talks to it over a Unix socket; it keeps
 * one mutually-authenticated TLS connection open and carries every CLI
 * process's requests over it, renumbering their ids so that replies find
 * their way back. It answers hello itself with what the controller said
 * to it, and forwards only the requests users and admins may send, no
 * larger than the controller accepts: nothing one client sends can make
 * the controller close the connection the others share.
 *
 *   cohort-mux --server H:P --cert F --key F --ca F [--crl F] --ready-fd N
 *              (--listen PATH | --fd N) [--persist SECS] [--timeout-ms MS]
 *
 * It connects first and reports on the ready fd ("OK", or "E<code>
 * <text>" and exit 1; "L<code> <text>" when what failed is listening on
 * PATH, the one failure a mux of the CLI's own on --fd would not meet). With --listen it serves connections from its own
 * uid on PATH until it has had no client for --persist seconds; with --fd
 * it serves that one socket until it closes. Either way it exits when the
 * controller closes the connection, telling its clients why.
 *
 * --server may list the replicas of a replicated controller: the first
 * connection finds the leader (cconn_open_tls). A leader that steps down
 * closes every connection, and a follower answers ERR_NOT_LEADER; either
 * way this mux fails the requests in flight with ERR_UNAVAILABLE (never
 * re-sending one: the CLI sends reads and keyed submits again itself,
 * client/conn.c; any other change may have committed) and
 * removes its socket at once, so that the next command starts one new
 * mux under the spawn lock (client/mux.c), which looks for the new
 * leader: one reconnection for all the commands that follow. */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "client/conn.h"
#include "client/conn_tls.h"
#include "lib/clock.h"
#include "lib/frame.h"
#include "lib/tls.h"
#include "lib/wire.h"

/* Replies can be long listings (the CLI's own limit). */
#define MUX_REPLY_MAX (64u * 1024 * 1024)
/* A client stops being read while this many of its requests wait for
 * replies (the CLI has one at a time), or while this much of its replies
 * waits for it to read: no client can make the mux hold unbounded
 * memory, nor crowd the shared connection. */
#define MUX_CLIENT_PENDING_MAX 16
#define MUX_CLIENT_OUT_HIGH (8u * 1024 * 1024)
/* Once the controller is gone: how long clients get to read why. */
#define MUX_DRAIN_S 2
/* The controller answers everything in well under a second (slow agent
 * commands time out on its side first): a request this old means the
 * connection is dead even if TCP has not said so yet. */
#define MUX_ANSWER_S 60
#define MUX_WATCH_S 5

struct mux;

struct mclient {
	TAILQ_ENTRY(mclient) entry;
	struct mux *m;
	struct bufferevent *bev;
	int closing;		/* free once the output has gone */
	int held;		/* not read from: too much waiting (above) */
	unsigned npending;	/* its requests waiting for replies */
};

/* A request sent on, waiting for its reply. */
struct pending {
	TAILQ_ENTRY(pending) entry;
	uint64_t up_id;		/* the id on the shared connection */
	uint64_t id;		/* the client's own */
	struct mclient *cl;	/* NULL once the client has gone */
	uint64_t sent_us;	/* monotonic */
};

struct mux {
	struct event_base *base;
	struct bufferevent *up;
	struct evconnlistener *lst;
	struct event *idle, *drain, *watch, *sigint, *sigterm;
	const char *path;	/* our socket, removed on exit if still ours */
	struct stat path_st;
	TAILQ_HEAD(, mclient) clients;
	TAILQ_HEAD(, pending) pending;
	unsigned nclients;
	uint64_t next_id;
	Cohort__V1__Envelope *hello;	/* the controller's reply to us */
	size_t max_frame;
	int persist_s;
	int lost_race;		/* another mux listens on our path */
	int cannot_listen;	/* what failed is binding --listen PATH */
	char gone[512];		/* why the controller connection ended */
	char where[512];	/* the controller (the leader) we reached */
};

static void client_free(struct mclient *cl);

static void
mux_remove_socket(struct mux *m)
{
	struct stat st;

	if (m->path == NULL)
		return;
	/* Only ours: a newer mux may have taken the name. */
	if (lstat(m->path, &st) == 0 && st.st_ino == m->path_st.st_ino &&
	    st.st_dev == m->path_st.st_dev)
		unlink(m->path);
	m->path = NULL;
	if (m->lst != NULL) {
		evconnlistener_free(m->lst);
		m->lst = NULL;
	}
}

static void
mux_exit(struct mux *m)
{
	mux_remove_socket(m);
	event_base_loopexit(m->base, NULL);
}

/* Stop reading from cl and free it once its output has gone (at once
 * if nothing is queued: then no write callback would come). Not from
 * inside cl's own read loop, which checks closing and frees on its way
 * out. */
static void
client_close(struct mclient *cl)
{
	cl->closing = 1;
	bufferevent_disable(cl->bev, EV_READ);
}

static void
client_send(struct mclient *cl, const Cohort__V1__Envelope *env)
{
	if (frame_write(bufferevent_get_output(cl->bev), env,
	    MUX_REPLY_MAX) == -1)
		client_close(cl);
}

static void
client_error(struct mclient *cl, uint64_t id, enum err_code code,
    const char *text, int close_after)
{
	Cohort__V1__Envelope env;
	Cohort__V1__Error e;

	wire_error(&env, &e, id, code, text);
	client_send(cl, &env);
	if (close_after)
		client_close(cl);
}

static int
client_output_empty(const struct mclient *cl)
{
	return evbuffer_get_length(bufferevent_get_output(cl->bev)) == 0;
}

/* Take hello ourselves: the controller's answer to us is the answer. */
static void
client_hello(struct mclient *cl, const Cohort__V1__Envelope *req)
{
	struct mux *m = cl->m;
	char text[160];

	if (req->hello->major != WIRE_MAJOR) {
		snprintf(text, sizeof(text), "protocol version %u.%u is not "
		    "supported; this cohort-mux speaks %d.%d",
		    req->hello->major, req->hello->minor, WIRE_MAJOR,
		    WIRE_MINOR);
		client_error(cl, req->id, ERR_VERSION, text, 1);
		return;
	}
	m->hello->id = req->id;
	client_send(cl, m->hello);
}

static void
client_forward(struct mclient *cl, Cohort__V1__Envelope *req)
{
	Cohort__V1__Envelope *check;
	struct mux *m = cl->m;
	struct pending *p;
	uint8_t *frame;
	size_t len;

	if ((p = calloc(1, sizeof(*p))) == NULL) {
		client_error(cl, req->id, ERR_INTERNAL, "cohort-mux: out of "
		    "memory", 0);
		return;
	}
	p->up_id = m->next_id++;
	p->id = req->id;
	p->cl = cl;
	p->sent_us = clock_mono_us();
	req->id = p->up_id;
	if ((frame = frame_pack(req, m->max_frame, &len)) == NULL) {
		if (errno == EMSGSIZE)
			client_error(cl, p->id, ERR_TOO_LARGE, "the request "
			    "exceeds the controller's frame limit", 0);
		else
			client_error(cl, p->id, ERR_INTERNAL, "cohort-mux: out "
			    "of memory", 0);
		free(p);
		return;
	}
	/* protobuf-c reads some malformed input that it cannot write back
	 * in a form it reads again (found by tests/fuzz: a field number 0
	 * behind a non-minimal tag); passed on, such a request would make
	 * the controller close the connection every client shares. */
	if ((check = frame_decode(frame + FRAME_HDR, len - FRAME_HDR)) ==
	    NULL || evbuffer_add(bufferevent_get_output(m->up), frame,
	    len) == -1) {
		client_error(cl, p->id, ERR_PROTOCOL, "frame is not a valid "
		    "cohort.v1.Envelope", 1);
		frame_free(check);
		free(frame);
		free(p);
		return;
	}
	frame_free(check);
	free(frame);
	TAILQ_INSERT_TAIL(&m->pending, p, entry);
	cl->npending++;
}

static void
client_request(struct mclient *cl, Cohort__V1__Envelope *req)
{
	struct mux *m = cl->m;
	char text[160];

	if (frame_refusal(req) != NULL)	/* a string that is not text */
		client_error(cl, req->id, ERR_INVALID, frame_refusal(req), 0);
	else if (req->body_case == COHORT__V1__ENVELOPE__BODY_HELLO &&
	    m->gone[0] != '\0')
		client_close(cl);	/* before hello: the CLI starts a new mux */
	else if (req->body_case == COHORT__V1__ENVELOPE__BODY_HELLO)
		client_hello(cl, req);
	else if (m->gone[0] != '\0')
		client_error(cl, req->id, ERR_UNAVAILABLE, m->gone, 1);
	else if (wire_is_user_request(req->body_case) ||
	    req->body_case == COHORT__V1__ENVELOPE__BODY_MEMBERS)
		client_forward(cl, req);	/* the controller checks roles */
	else {
		snprintf(text, sizeof(text), "unexpected message '%s'",
		    wire_body_name(req->body_case));
		client_error(cl, req->id, ERR_PROTOCOL, text, 1);
	}
}

static void
client_read_cb(struct bufferevent *bev, void *arg)
{
	struct mclient *cl = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	Cohort__V1__Envelope *env;
	uint8_t hdr[FRAME_HDR];
	char text[128];

	while (!cl->closing) {
		if (cl->npending >= MUX_CLIENT_PENDING_MAX ||
		    evbuffer_get_length(bufferevent_get_output(bev)) >
		    MUX_CLIENT_OUT_HIGH) {
			/* Read on when replies have caught up (up_reply,
			 * client_write_cb). */
			cl->held = 1;
			bufferevent_disable(bev, EV_READ);
			return;
		}
		switch (frame_read(in, cl->m->max_frame, &env)) {
		case FRAME_NEED:
			return;
		case FRAME_OK:
			client_request(cl, env);
			frame_free(env);
			break;
		case FRAME_TOO_LARGE:
			/* The controller's own words for it. */
			evbuffer_copyout(in, hdr, FRAME_HDR);
			snprintf(text, sizeof(text), "frame of %u bytes "
			    "exceeds the limit of %zu", frame_header_len(hdr),
			    cl->m->max_frame);
			client_error(cl, 0, ERR_TOO_LARGE, text, 1);
			break;
		case FRAME_BAD:
			client_error(cl, 0, ERR_PROTOCOL, "frame is not a valid "
			    "cohort.v1.Envelope", 1);
			break;
		}
	}
	if (client_output_empty(cl))
		client_free(cl);	/* closing, and nothing left to send */
}

/* A held client may be read again. */
static void
client_resume(struct mclient *cl)
{
	if (!cl->held || cl->closing || cl->npending >= MUX_CLIENT_PENDING_MAX ||
	    evbuffer_get_length(bufferevent_get_output(cl->bev)) >
	    MUX_CLIENT_OUT_HIGH)
		return;
	cl->held = 0;
	bufferevent_enable(cl->bev, EV_READ);
	/* Requests already buffered raise no new read event. */
	client_read_cb(cl->bev, cl);
}

static void
client_write_cb(struct bufferevent *bev, void *arg)
{
	struct mclient *cl = arg;

	if (cl->closing)
		client_free(cl);
	else
		client_resume(cl);
}

static void
client_event_cb(struct bufferevent *bev, short what, void *arg)
{
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		client_free(arg);
}

static void
client_free(struct mclient *cl)
{
	struct mux *m = cl->m;
	struct pending *p;
	struct timeval tv = { m->persist_s, 0 };

	TAILQ_FOREACH(p, &m->pending, entry)
		if (p->cl == cl)
			p->cl = NULL;	/* its reply is dropped when it comes */
	TAILQ_REMOVE(&m->clients, cl, entry);
	bufferevent_free(cl->bev);
	free(cl);
	if (--m->nclients > 0)
		return;
	if (m->lst == NULL || m->gone[0] != '\0')
		mux_exit(m);	/* --fd mode, or nothing left to serve */
	else
		evtimer_add(m->idle, &tv);
}

static struct mclient *
client_new(struct mux *m, evutil_socket_t fd)
{
	struct mclient *cl;

	if ((cl = calloc(1, sizeof(*cl))) == NULL)
		return NULL;
	cl->m = m;
	if ((cl->bev = bufferevent_socket_new(m->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		free(cl);
		return NULL;
	}
	bufferevent_setcb(cl->bev, client_read_cb, client_write_cb,
	    client_event_cb, cl);
	bufferevent_setwatermark(cl->bev, EV_READ, 0, 0);
	bufferevent_enable(cl->bev, EV_READ | EV_WRITE);
	TAILQ_INSERT_TAIL(&m->clients, cl, entry);
	m->nclients++;
	evtimer_del(m->idle);
	return cl;
}

/* Only our own uid gets in (the directory is closed too). */
static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    cred.uid != getuid() || client_new(arg, fd) == NULL)
		evutil_closesocket(fd);
}

static void
idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mux *m = arg;

	if (m->nclients == 0)
		mux_exit(m);
}

/* A reply from upstream. -1 when it says the controller is no longer the
 * leader (a replica that stepped down): the connection is over, and the
 * request it answered fails with the others, as if it had dropped. */
static int
up_reply(struct mux *m, Cohort__V1__Envelope *env)
{
	struct mclient *cl, *next;
	struct pending *p;

	if (env->body_case == COHORT__V1__ENVELOPE__BODY_ERROR &&
	    wire_err_from_pb(env->error->code) == ERR_NOT_LEADER) {
		if (env->error->leader != NULL && env->error->leader[0] != '\0')
			snprintf(m->gone, sizeof(m->gone), "controller %.300s "
			    "is no longer the leader (the leader is %.100s); "
			    "run the command again", m->where,
			    env->error->leader);
		else
			snprintf(m->gone, sizeof(m->gone), "controller %.300s "
			    "is no longer the leader; run the command again",
			    m->where);
		return -1;
	}
	if (env->id == 0) {
		/* About the connection as a whole: everyone's business. */
		for (cl = TAILQ_FIRST(&m->clients); cl != NULL; cl = next) {
			next = TAILQ_NEXT(cl, entry);
			client_send(cl, env);
			if (cl->closing && client_output_empty(cl))
				client_free(cl);
		}
		return 0;
	}
	TAILQ_FOREACH(p, &m->pending, entry)
		if (p->up_id == env->id)
			break;
	if (p == NULL)
		return 0;
	TAILQ_REMOVE(&m->pending, p, entry);
	if ((cl = p->cl) != NULL) {
		cl->npending--;
		env->id = p->id;
		client_send(cl, env);
		if (cl->closing && client_output_empty(cl))
			client_free(cl);
		else
			client_resume(cl);
	}
	free(p);
	return 0;
}

static void
up_read_cb(struct bufferevent *bev, void *arg)
{
	struct mux *m = arg;
	Cohort__V1__Envelope *env;
	int rc;

	for (;;) {
		switch (frame_read(bufferevent_get_input(bev), MUX_REPLY_MAX,
		    &env)) {
		case FRAME_NEED:
			return;
		case FRAME_OK:
			rc = up_reply(m, env);
			frame_free(env);
			if (rc == 0)
				break;
			bufferevent_disable(bev, EV_READ);
			bufferevent_trigger_event(bev, BEV_EVENT_ERROR, 0);
			return;
		default:
			bufferevent_disable(bev, EV_READ);
			snprintf(m->gone, sizeof(m->gone), "controller %.300s sent "
			    "a reply that is too large or does not decode",
			    m->where);
			bufferevent_trigger_event(bev, BEV_EVENT_ERROR, 0);
			return;
		}
	}
}

/* The controller is gone: tell every client, let them read it, exit. */
static void
up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct mux *m = arg;
	struct mclient *cl, *next;
	struct pending *p;
	struct timeval tv = { MUX_DRAIN_S, 0 };
	char why[256];

	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	/* Replies that arrived with the end of the stream go out first:
	 * a submit the controller acknowledged must not be reported lost. */
	if (m->gone[0] == '\0')
		up_read_cb(bev, m);
	if (m->gone[0] == '\0')
		snprintf(m->gone, sizeof(m->gone), what & BEV_EVENT_EOF ?
		    "controller %.200s closed the connection" :
		    "connection to controller %.200s failed: %.250s", m->where,
		    tls_bufferevent_error(bev, what, why, sizeof(why)));
	mux_remove_socket(m);
	while ((p = TAILQ_FIRST(&m->pending)) != NULL) {
		if (p->cl != NULL)
			client_error(p->cl, p->id, ERR_UNAVAILABLE, m->gone, 1);
		TAILQ_REMOVE(&m->pending, p, entry);
		free(p);
	}
	for (cl = TAILQ_FIRST(&m->clients); cl != NULL; cl = next) {
		next = TAILQ_NEXT(cl, entry);
		if (evbuffer_get_length(bufferevent_get_output(cl->bev)) == 0)
			client_free(cl);
	}
	if (m->nclients > 0)
		evtimer_add(m->drain, &tv);
	else
		mux_exit(m);
}

/* The oldest request still waiting is first in the list. */
static void
watch_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mux *m = arg;
	struct pending *p = TAILQ_FIRST(&m->pending);

	if (p == NULL || m->gone[0] != '\0' ||
	    clock_mono_us() - p->sent_us < (uint64_t)MUX_ANSWER_S * 1000000)
		return;
	snprintf(m->gone, sizeof(m->gone), "controller %.300s did not answer "
	    "for %d s", m->where, MUX_ANSWER_S);
	up_event_cb(m->up, BEV_EVENT_ERROR, m);
}

static void
drain_cb(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopexit(((struct mux *)arg)->base, NULL);
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	mux_exit(arg);
}

/* Tell whoever started us how it went, then stop talking to them;
 * "L" rather than "E" when the fault is the path we were to listen on. */
static void
mux_verdict(int fd, const struct cerr *err, int cannot_listen)
{
	char line[sizeof(err->text) + 16];
	int n;

	if (fd < 0)
		return;
	n = err == NULL ? snprintf(line, sizeof(line), "OK\n") :
	    snprintf(line, sizeof(line), "%c%d %s\n", cannot_listen ? 'L' :
	    'E', (int)err->code, err->text);
	if (write(fd, line, (size_t)n) != n) {
		/* The CLI that started us is gone; serve anyway. */
	}
	close(fd);
}

/* Whether a mux answers on sun. */
static int
mux_live(const struct sockaddr_un *sun)
{
	int fd, ok;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	ok = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0;
	close(fd);
	return ok;
}

static int
mux_listen(struct mux *m, const char *path, struct cerr *err)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	mode_t old;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		m->cannot_listen = 1;
		return cerr_set(err, ERR_INVALID, "%s: path too long", path);
	}
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	old = umask(0077);
	m->lst = evconnlistener_new_bind(m->base, accept_cb, m,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 64,
	    (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (m->lst == NULL && errno == EADDRINUSE && mux_live(&sun)) {
		/* Another mux won the name (its starter gave up waiting
		 * and a second one was started): it serves. */
		m->lost_race = 1;
		return 0;
	}
	if (m->lst == NULL || lstat(path, &m->path_st) == -1) {
		m->cannot_listen = 1;
		return cerr_set(err, ERR_INTERNAL, "cannot listen on %s: %s",
		    path, strerror(errno));
	}
	m->path = path;
	return 0;
}

/* The controller's hello reply, kept to answer our clients'. */
static int
mux_keep_hello(struct mux *m, struct cconn *c, struct cerr *err)
{
	static Cohort__V1__HelloReply hr = COHORT__V1__HELLO_REPLY__INIT;
	static Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;

	hr.major = WIRE_MAJOR;
	hr.minor = WIRE_MINOR;
	hr.software = PACKAGE_STRING " (through cohort-mux)";
	if ((hr.identity = strdup(cconn_identity(c))) == NULL ||
	    (hr.role = strdup(cconn_role(c))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	m->max_frame = cconn_max_frame(c) > 0 ? cconn_max_frame(c) :
	    FRAME_DEFAULT_MAX;
	hr.has_max_frame = true;
	hr.max_frame = (uint32_t)m->max_frame;
	env.body_case = COHORT__V1__ENVELOPE__BODY_HELLO_REPLY;
	env.hello_reply = &hr;
	m->hello = &env;
	return 0;
}

static int
mux_start(struct mux *m, const struct cconn_opts *o, const char *listen,
    int fd, struct cerr *err)
{
	struct cconn *c;
	SSL *ssl;
	int upfd, one = 1, idle = 30, intvl = 10, cnt = 3;
	unsigned user_ms = 60000;

	if ((c = cconn_open_tls(o, err)) == NULL)
		return -1;
	snprintf(m->where, sizeof(m->where), "%s", cconn_where(c));
	if (mux_keep_hello(m, c, err) == -1 ||
	    cconn_tls_release(c, &upfd, &ssl) == -1) {
		cconn_close(c);
		return -1;
	}
	/* A controller whose host died or got cut off must not be trusted
	 * for a quarter of an hour (TCP's default): probe an idle link,
	 * and give up on unacknowledged data after a minute. */
	setsockopt(upfd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(upfd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(upfd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(upfd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(upfd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms,
	    sizeof(user_ms));
	m->up = bufferevent_openssl_socket_new(m->base, upfd, ssl,
	    BUFFEREVENT_SSL_OPEN, BEV_OPT_CLOSE_ON_FREE);
	if (m->up == NULL) {
		SSL_free(ssl);
		close(upfd);
		return cerr_set(err, ERR_INTERNAL, "cannot set up the event "
		    "loop");
	}
	bufferevent_setcb(m->up, up_read_cb, NULL, up_event_cb, m);
	bufferevent_enable(m->up, EV_READ | EV_WRITE);
	if (listen != NULL)
		return mux_listen(m, listen, err);
	if (evutil_make_socket_nonblocking(fd) == -1 ||
	    client_new(m, fd) == NULL)
		return cerr_set(err, ERR_INTERNAL, "cannot serve fd %d", fd);
	return 0;
}

static void
mux_free(struct mux *m)
{
	struct mclient *cl;
	struct pending *p;

	while ((p = TAILQ_FIRST(&m->pending)) != NULL) {
		TAILQ_REMOVE(&m->pending, p, entry);
		free(p);
	}
	while ((cl = TAILQ_FIRST(&m->clients)) != NULL) {
		TAILQ_REMOVE(&m->clients, cl, entry);
		bufferevent_free(cl->bev);
		free(cl);
	}
	if (m->up != NULL)
		bufferevent_free(m->up);
	if (m->lst != NULL)
		evconnlistener_free(m->lst);
	if (m->hello != NULL) {
		free(m->hello->hello_reply->identity);
		free(m->hello->hello_reply->role);
	}
	if (m->idle != NULL)
		event_free(m->idle);
	if (m->drain != NULL)
		event_free(m->drain);
	if (m->watch != NULL)
		event_free(m->watch);
	if (m->sigint != NULL)
		event_free(m->sigint);
	if (m->sigterm != NULL)
		event_free(m->sigterm);
	if (m->base != NULL)
		event_base_free(m->base);
}

static int
usage(void)
{
	fprintf(stderr, "usage: cohort-mux --server H:P --cert F --key F "
	    "--ca F [--crl F] --ready-fd N (--listen PATH | --fd N) "
	    "[--persist SECS] [--timeout-ms MS]\n(started by the cohort CLI; see cohort "
	    "--help)\n");
	return 2;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "server", required_argument, NULL, 's' },
		{ "cert", required_argument, NULL, 'c' },
		{ "key", required_argument, NULL, 'k' },
		{ "ca", required_argument, NULL, 'a' },
		{ "crl", required_argument, NULL, 'C' },
		{ "ready-fd", required_argument, NULL, 'r' },
		{ "listen", required_argument, NULL, 'l' },
		{ "fd", required_argument, NULL, 'f' },
		{ "persist", required_argument, NULL, 'p' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct cconn_opts o = { NULL, NULL, NULL, NULL, 0, NULL };
	struct timeval watch_tv = { MUX_WATCH_S, 0 }, idle_tv;
	struct mux m;
	struct cerr err;
	const char *listen = NULL;
	int ch, ready = -1, fd = -1, rc;

	memset(&m, 0, sizeof(m));
	m.persist_s = 60;
	m.next_id = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 's': o.server = optarg; break;
		case 'c': o.cert = optarg; break;
		case 'k': o.key = optarg; break;
		case 'a': o.ca = optarg; break;
		case 'C': o.crl = optarg; break;
		case 'r': ready = atoi(optarg); break;
		case 'l': listen = optarg; break;
		case 'f': fd = atoi(optarg); break;
		case 'p': m.persist_s = atoi(optarg); break;
		case 't': o.timeout_ms = atoi(optarg); break;
		case 'V':
			printf("cohort-mux %s\n", PACKAGE_VERSION);
			return 0;
		default:
			return usage();
		}
	}
	if (optind != argc || o.server == NULL || (listen == NULL) ==
	    (fd < 0) || m.persist_s < 0)
		return usage();
	signal(SIGPIPE, SIG_IGN);
	idle_tv.tv_sec = m.persist_s;
	idle_tv.tv_usec = 0;
	snprintf(m.where, sizeof(m.where), "%s", o.server);
	TAILQ_INIT(&m.clients);
	TAILQ_INIT(&m.pending);
	cerr_clear(&err);
	if ((m.base = event_base_new()) == NULL ||
	    (m.idle = evtimer_new(m.base, idle_cb, &m)) == NULL ||
	    (m.drain = evtimer_new(m.base, drain_cb, &m)) == NULL ||
	    (m.watch = event_new(m.base, -1, EV_PERSIST, watch_cb, &m)) ==
	    NULL ||
	    (m.sigint = evsignal_new(m.base, SIGINT, signal_cb, &m)) == NULL ||
	    (m.sigterm = evsignal_new(m.base, SIGTERM, signal_cb, &m)) ==
	    NULL || evsignal_add(m.sigint, NULL) == -1 ||
	    evsignal_add(m.sigterm, NULL) == -1)
		cerr_set(&err, ERR_INTERNAL, "cannot set up the event loop");
	else
		mux_start(&m, &o, listen, fd, &err);
	if (err.code != ERR_NONE) {
		mux_verdict(ready, &err, m.cannot_listen);
		mux_remove_socket(&m);
		mux_free(&m);
		return 1;
	}
	if (m.lost_race) {
		mux_verdict(ready, NULL, 0);
		mux_free(&m);
		return 0;
	}
	evtimer_add(m.watch, &watch_tv);
	if (listen != NULL)
		evtimer_add(m.idle, &idle_tv);	/* in case nobody comes */
	mux_verdict(ready, NULL, 0);
	rc = event_base_dispatch(m.base);
	mux_remove_socket(&m);
	mux_free(&m);
	return rc == -1 ? 1 : 0;
}
