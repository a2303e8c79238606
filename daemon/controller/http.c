#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "http.h"
#include "lib/job.h"
#include "metrics.h"
#include "status_page.h"

struct http {
	struct evhttp *ev;
	struct evhttp_bound_socket *sock;
	struct http_sources src;
	uint16_t port;
};

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
	char path[64], clen[24], sw[PEER_NAME_MAX + 1];
	const char *type;
	struct evbuffer *b;
	int rc;

	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		evhttp_add_header(out, "Allow", "GET, HEAD");
		evhttp_send_error(req, 405, "only GET and HEAD");
		return;
	}
	if (http_route(evhttp_request_get_uri(req), path, sizeof(path)) == -1 ||
	    (strcmp(path, "/metrics") != 0 && strcmp(path, "/") != 0)) {
		evhttp_send_error(req, HTTP_NOTFOUND, "try / or /metrics");
		return;
	}
	if (strcmp(path, "/") == 0 && http_query_switch(
	    evhttp_request_get_uri(req), sw, sizeof(sw)) == -1) {
		evhttp_send_error(req, HTTP_BADREQUEST, "bad query: try "
		    "/?switch=NAME (letters, digits, ., _, -)");
		return;
	}
	if ((b = evbuffer_new()) == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	if (strcmp(path, "/metrics") == 0) {
		rc = metrics_render(&h->src, b);
		type = "text/plain; version=0.0.4; charset=utf-8";
	} else {
		rc = status_page_render(&h->src, sw, b);
		type = "text/html; charset=utf-8";
	}
	if (rc == -1) {
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
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
struct http *
http_create(struct event_base *base, const char *host, uint16_t port,
    const struct http_sources *src, struct cerr *err)
{
	struct http *h;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if ((h = calloc(1, sizeof(*h))) == NULL ||
	    (h->ev = evhttp_new(base)) == NULL) {
		free(h);
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	h->src = *src;
	evhttp_set_allowed_methods(h->ev, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_max_headers_size(h->ev, 8192);
	evhttp_set_max_body_size(h->ev, 0);
	evhttp_set_timeout(h->ev, 10);
	evhttp_set_gencb(h->ev, http_request_cb, h);
	h->sock = evhttp_bind_socket_with_handle(h->ev, host, port);
	if (h->sock == NULL) {
		cerr_set(err, ERR_INVALID, "cannot listen for HTTP on %s:%u: %s",
		    host, port, strerror(errno));
		http_destroy(h);
		return NULL;
	}
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
	if (h == NULL)
		return;
	evhttp_free(h->ev);
	free(h);
}

uint16_t
http_port(const struct http *h)
{
	return h->port;
}
