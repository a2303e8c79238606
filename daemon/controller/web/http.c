#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "daemon/controller/web/http.h"
#include "lib/clock.h"
#include "lib/job.h"
#include "daemon/controller/web/metrics.h"
#include "daemon/controller/web/status_page.h"
#include "daemon/controller/store/txq.h"

/* The status page costs milliseconds per render at thousands of nodes,
 * on the controller's only loop, and anyone who reaches the port may ask
 * for it: a rendered page is kept and served again, by reference (no
 * copy per client), until the database commits a change or it is
 * HTTP_PAGE_MS old, and at least HTTP_PAGE_MIN_MS. So a flood of
 * requests costs at most one render per HTTP_PAGE_MIN_MS however busy
 * the cluster, and a change a person just made shows at once. /metrics
 * is cheap (a line per family) and always fresh. */
#define HTTP_PAGE_MS 1000
#define HTTP_PAGE_MIN_MS 100	/* kept at least this long, commits or not */
#define HTTP_PAGES 4

/* One rendered page, shared by every reply that carries it. */
struct http_page {
	char *data;
	size_t len;
	unsigned refs;		/* the cache's, and each reply's in flight */
};

struct http_cached {
	char key[96];		/* what the render depended on: the switch */
	struct http_page *page;
	uint64_t at_us;
	unsigned long commits;	/* txq_commits when it was rendered */
};

/* The count of open connections, apart from struct http because it
 * outlives it: libevent frees a connection's bufferevent a loop round
 * after evhttp lets go of it, and those evhttp_free lets go of are freed
 * only in event_base_free, after http_destroy. */
struct http_conns {
	struct http *h;		/* NULL once http_destroy ran */
	unsigned n;		/* connections whose bufferevent is alive */
};

/* One connection, from its bufferevent's creation to its freeing. */
struct http_conn {
	struct http_conns *all;
	struct bufferevent *bev;	/* the filter evhttp talks to */
	struct event *writable;		/* a reply waits on the socket */
	int failed;			/* the socket refused a write */
};

struct http {
	struct evhttp *ev;
	struct evhttp_bound_socket *sock;
	struct evconnlistener *listener;	/* evhttp's, of sock */
	struct http_conns *conns;
	int accepting;
	unsigned long accept_pauses;
	struct http_sources src;
	uint16_t port;
	struct http_cached cache[HTTP_PAGES];
};

static void
http_page_unref(struct http_page *p)
{
	if (p != NULL && --p->refs == 0) {
		free(p->data);
		free(p);
	}
}

/* evbuffer_add_reference's cleanup: a reply is done with the page. */
static void
http_page_done(const void *data, size_t len, void *arg)
{
	(void)data;
	(void)len;
	http_page_unref(arg);
}

/* The page of b, moved into a shareable block; NULL (ENOMEM). */
static struct http_page *
http_page_take(struct evbuffer *b)
{
	struct http_page *p;
	size_t len = evbuffer_get_length(b);

	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (p->data = malloc(len > 0 ? len : 1)) == NULL) {
		free(p);
		return NULL;
	}
	if (evbuffer_remove(b, p->data, len) != (int)len) {
		free(p->data);
		free(p);
		return NULL;
	}
	p->len = len;
	p->refs = 1;
	return p;
}

/* A fresh cached page for key, or NULL. */
static struct http_page *
http_cache_get(struct http *h, const char *key)
{
	uint64_t now = clock_mono_us();
	unsigned i;

	for (i = 0; i < HTTP_PAGES; i++) {
		struct http_cached *c = &h->cache[i];

		if (c->page == NULL || strcmp(c->key, key) != 0)
			continue;
		if (now - c->at_us < (uint64_t)HTTP_PAGE_MIN_MS * 1000 ||
		    (c->commits == txq_commits(h->src.txq) &&
		    now - c->at_us < (uint64_t)HTTP_PAGE_MS * 1000))
			return c->page;
	}
	return NULL;
}

/* Keep p for key, in its old slot or the oldest one. */
static void
http_cache_put(struct http *h, const char *key, struct http_page *p)
{
	struct http_cached *c = &h->cache[0];
	unsigned i;

	if (strlen(key) >= sizeof(c->key))
		return;
	for (i = 0; i < HTTP_PAGES; i++) {
		if (h->cache[i].page != NULL &&
		    strcmp(h->cache[i].key, key) == 0) {
			c = &h->cache[i];
			break;
		}
		if (h->cache[i].at_us < c->at_us)
			c = &h->cache[i];
	}
	http_page_unref(c->page);
	snprintf(c->key, sizeof(c->key), "%s", key);
	c->page = p;
	p->refs++;
	c->at_us = clock_mono_us();
	c->commits = txq_commits(h->src.txq);
}

/* The status page of switch sw ("": the overview) into out, from the
 * cache or rendered now. 0, or -1 (ENOMEM). */
static int
http_status_page(struct http *h, const char *sw, struct evbuffer *out)
{
	struct http_page *p = http_cache_get(h, sw);
	struct evbuffer *b;

	if (p != NULL)
		p->refs++;
	else {
		if ((b = evbuffer_new()) == NULL)
			return -1;
		if (status_page_render(&h->src, sw, b) == -1 ||
		    (p = http_page_take(b)) == NULL) {
			evbuffer_free(b);
			return -1;
		}
		evbuffer_free(b);
		http_cache_put(h, sw, p);
	}
	/* The reply holds a reference until libevent has sent it. */
	if (evbuffer_add_reference(out, p->data, p->len, http_page_done,
	    p) == -1) {
		http_page_unref(p);
		return -1;
	}
	return 0;
}

/* The path without its query string: "/metrics?x=1" -> "/metrics". */
static int
http_route(const char *uri, char *path, size_t size)
{
	size_t n = strcspn(uri, "?#");

	if (n >= size)
		return -1;
	memcpy(path, uri, n);
	path[n] = '\0';
	return 0;
}

/* An error reply. evhttp_send_error writes an HTML body even for HEAD;
 * a HEAD gets the status line and headers only. */
static void
http_error(struct evhttp_request *req, int code, const char *reason)
{
	if (evhttp_request_get_command(req) != EVHTTP_REQ_HEAD) {
		evhttp_send_error(req, code, reason);
		return;
	}
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Length", "0");
	evhttp_send_reply(req, code, reason, NULL);
}

/* Only GET and HEAD reach here: evhttp answers other methods itself
 * (evhttp_set_allowed_methods in http_create). */
/* The switch= of the query string into out: "" when the URI has none
 * (or it is empty). 0, or -1 when the query cannot be parsed or the
 * name is no switch name (status_page_switch_ok). */
static int
http_query_switch(const char *uri, char *out, size_t size)
{
	const char *q = strchr(uri, '?'), *v;
	struct evkeyvalq keys;
	char *query;
	int rc = 0;

	out[0] = '\0';
	if (q == NULL)
		return 0;
	if ((query = strndup(q + 1, strcspn(q + 1, "#"))) == NULL)
		return -1;
	if (evhttp_parse_query_str(query, &keys) == -1) {
		free(query);
		return -1;
	}
	if ((v = evhttp_find_header(&keys, "switch")) != NULL && v[0] != '\0') {
		if (!status_page_switch_ok(v) || strlen(v) >= size)
			rc = -1;
		else
			strcpy(out, v);
	}
	evhttp_clear_headers(&keys);
	free(query);
	return rc;
}

static void
http_request_cb(struct evhttp_request *req, void *arg)
{
	struct http *h = arg;
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	char path[64], clen[24], sw[PEER_NAME_MAX + 1] = "";
	const char *type;
	struct evbuffer *b;
	int rc;

	if (http_route(evhttp_request_get_uri(req), path, sizeof(path)) == -1 ||
	    (strcmp(path, "/metrics") != 0 && strcmp(path, "/") != 0)) {
		http_error(req, HTTP_NOTFOUND, "try / or /metrics");
		return;
	}
	if (strcmp(path, "/") == 0 && http_query_switch(
	    evhttp_request_get_uri(req), sw, sizeof(sw)) == -1) {
		http_error(req, HTTP_BADREQUEST, "bad query: try "
		    "/?switch=NAME (letters, digits, ., _, -)");
		return;
	}
	if ((b = evbuffer_new()) == NULL) {
		http_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	if (strcmp(path, "/metrics") == 0) {
		rc = metrics_render(&h->src, b);
		type = "text/plain; version=0.0.4; charset=utf-8";
	} else {
		rc = http_status_page(h, sw, b);
		type = "text/html; charset=utf-8";
	}
	if (rc == -1) {
		http_error(req, HTTP_INTERNAL, "out of memory");
		evbuffer_free(b);
		return;
	}
	evhttp_add_header(out, "Content-Type", type);
	evhttp_add_header(out, "Cache-Control", "no-store");
	/* libevent 2.1.12 sends a HEAD reply's body like a GET's (and
	 * over HTTP/1.0 a client cannot tell where it ends): say how long
	 * the body would be, and send none. */
	if (cmd == EVHTTP_REQ_HEAD) {
		snprintf(clen, sizeof(clen), "%zu", evbuffer_get_length(b));
		evhttp_add_header(out, "Content-Length", clen);
		evbuffer_drain(b, evbuffer_get_length(b));
	}
	evhttp_send_reply(req, HTTP_OK, "OK", b);
	evbuffer_free(b);
}

/* Accept while below the cap; the rest wait in the kernel's backlog. */
static void
http_listen_update(struct http *h)
{
	if (h->conns->n >= HTTP_MAX_CONNS && h->accepting) {
		evconnlistener_disable(h->listener);
		h->accepting = 0;
		h->accept_pauses++;
	} else if (h->conns->n < HTTP_MAX_CONNS && !h->accepting) {
		evconnlistener_enable(h->listener);
		h->accepting = 1;
	}
}

/* The filter's free callback: libevent is freeing the connection. */
static void
http_conn_gone(void *arg)
{
	struct http_conn *c = arg;
	struct http_conns *all = c->all;

	if (c->writable != NULL)
		event_free(c->writable);
	free(c);
	all->n--;
	if (all->h != NULL)
		http_listen_update(all->h);
	else if (all->n == 0)
		free(all);
}

/* The socket can take more of a reply (or has failed). */
static void
http_conn_writable(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn *c = arg;
	bufferevent_event_cb eventcb = NULL;

	(void)fd;
	(void)what;
	/* A connection evhttp has freed keeps its memory, and this event,
	 * until libevent finalizes it; its callbacks are gone by then. */
	bufferevent_getcb(c->bev, NULL, NULL, &eventcb, NULL);
	if (eventcb == NULL)
		return;
	if (!c->failed)
		bufferevent_flush(c->bev, EV_WRITE, BEV_NORMAL);
	/* Said from here, not from the write: evhttp may be in the middle
	 * of sending when the write fails, and the error frees the
	 * connection. */
	if (c->failed)
		bufferevent_trigger_event(c->bev,
		    BEV_EVENT_WRITING | BEV_EVENT_ERROR, 0);
}

/* Call http_conn_writable once the socket can take more. -1 (ENOMEM). */
static int
http_conn_wait(struct http_conn *c)
{
	if (c->writable == NULL && (c->writable = event_new(
	    bufferevent_get_base(c->bev), bufferevent_getfd(c->bev), EV_WRITE,
	    http_conn_writable, c)) == NULL)
		return -1;
	return event_add(c->writable, NULL);
}

/* The filter's output side. evhttp takes a reply as sent, and may free
 * the connection and shut its socket, as soon as the filter's output is
 * empty: were the reply moved on into the socket bufferevent's buffer, a
 * reply followed by a close would be cut short. So it goes from the
 * filter's output straight into the socket, and what the socket cannot
 * take yet stays where evhttp sees it until the socket is writable. */
static enum bufferevent_filter_result
http_conn_out(struct evbuffer *src, struct evbuffer *dst, ev_ssize_t lim,
    enum bufferevent_flush_mode mode, void *arg)
{
	struct http_conn *c = arg;
	evutil_socket_t fd = bufferevent_getfd(c->bev);
	int n = 0, sent = 0;

	(void)dst;
	(void)lim;
	(void)mode;
	if (c->failed)
		return BEV_NEED_MORE;
	while (evbuffer_get_length(src) > 0 &&
	    (n = evbuffer_write(src, fd)) > 0)
		sent = 1;
	if (evbuffer_get_length(src) == 0)
		return BEV_OK;
	if (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR)
		c->failed = 1;
	if (http_conn_wait(c) == -1)
		return BEV_ERROR;	/* the write timeout will close it */
	return sent ? BEV_OK : BEV_NEED_MORE;
}

/* Something was added to the filter's output. evhttp writes a reply
 * while the connection's writing is off and turns it on afterwards,
 * which a filter does not act on: the reply is sent once the socket is
 * writable, by http_conn_writable. */
static void
http_conn_queued(struct evbuffer *b, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct http_conn *c = arg;

	if (info->n_added > 0 && evbuffer_get_length(b) > 0 &&
	    http_conn_wait(c) == -1)
		c->failed = 1;
}

/* evhttp's bufferevent for a connection it accepted: the socket's, inside
 * a filter whose free callback counts the connection out. Counted in
 * here, it stops accepting at the cap before the next accept. NULL (out
 * of memory) lets evhttp make its own, uncounted. */
static struct bufferevent *
http_conn_new(struct event_base *base, void *arg)
{
	struct http *h = arg;
	struct bufferevent *sock = NULL;
	struct http_conn *c;

	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (sock = bufferevent_socket_new(base, -1,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL ||
	    (c->bev = bufferevent_filter_new(sock, NULL, http_conn_out,
	    BEV_OPT_CLOSE_ON_FREE, http_conn_gone, c)) == NULL) {
		if (sock != NULL)
			bufferevent_free(sock);
		free(c);
		return NULL;
	}
	c->all = h->conns;
	h->conns->n++;
	/* The socket bufferevent only reads: were it to write (it writes
	 * nothing, but says when it could), libevent 2.1's filter would
	 * send the reply from that callback without holding the filter,
	 * which evhttp may then free under it. */
	bufferevent_disable(sock, EV_WRITE);
	if (evbuffer_add_cb(bufferevent_get_output(c->bev), http_conn_queued,
	    c) == NULL) {
		bufferevent_free(c->bev);	/* and c, in http_conn_gone */
		return NULL;
	}
	http_listen_update(h);
	return c->bev;
}

struct http *
http_create(struct event_base *base, const char *host, uint16_t port,
    const struct http_sources *src, struct cerr *err)
{
	struct http *h;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if ((h = calloc(1, sizeof(*h))) == NULL ||
	    (h->conns = calloc(1, sizeof(*h->conns))) == NULL ||
	    (h->ev = evhttp_new(base)) == NULL) {
		if (h != NULL)
			free(h->conns);
		free(h);
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	h->conns->h = h;
	h->src = *src;
	h->src.http = h;
	evhttp_set_allowed_methods(h->ev, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_max_headers_size(h->ev, 8192);
	evhttp_set_max_body_size(h->ev, 0);
	evhttp_set_timeout(h->ev, 10);
	evhttp_set_gencb(h->ev, http_request_cb, h);
	evhttp_set_bevcb(h->ev, http_conn_new, h);
	h->sock = evhttp_bind_socket_with_handle(h->ev, host, port);
	if (h->sock == NULL) {
		cerr_set(err, ERR_INVALID, "cannot listen for HTTP on %s:%u: %s",
		    host, port, strerror(errno));
		http_destroy(h);
		return NULL;
	}
	h->listener = evhttp_bound_socket_get_listener(h->sock);
	h->accepting = 1;
	if (getsockname(evhttp_bound_socket_get_fd(h->sock),
	    (struct sockaddr *)&ss, &len) == 0)
		h->port = ntohs(ss.ss_family == AF_INET6 ?
		    ((struct sockaddr_in6 *)&ss)->sin6_port :
		    ((struct sockaddr_in *)&ss)->sin_port);
	return h;
}

void
http_destroy(struct http *h)
{
	unsigned i;

	if (h == NULL)
		return;
	/* The connections evhttp_free lets go of are counted out later. */
	h->conns->h = NULL;
	evhttp_free(h->ev);
	if (h->conns->n == 0)
		free(h->conns);
	for (i = 0; i < HTTP_PAGES; i++)
		http_page_unref(h->cache[i].page);
	free(h);
}

uint16_t
http_port(const struct http *h)
{
	return h->port;
}

void
http_stats(const struct http *h, struct http_stats *st)
{
	st->conns = h->conns->n;
	st->accept_pauses = h->accept_pauses;
}
