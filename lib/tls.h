/* TLS 1.3 with mutual authentication against the cluster CA. Identity is
 * the peer certificate's CN, the role its OU ("user", "admin", "agent"). */
#ifndef COHORT_TLS_H
#define COHORT_TLS_H

#include <openssl/ssl.h>

#include "err.h"
#include "job.h"

/* A server context: our certificate and key, peers must present a
 * certificate signed by ca. NULL with err set on failure. */
SSL_CTX *tls_server_ctx(const char *ca, const char *cert, const char *key,
    struct cerr *err);

/* A client context: same files, verification of the server's chain. The
 * server's name is checked per connection (tls_client_expect_host). */
SSL_CTX *tls_client_ctx(const char *ca, const char *cert, const char *key,
    struct cerr *err);

/* Make ssl verify that the server's certificate names host (a DNS name or
 * an IP address literal). 0 or -1. */
int tls_client_expect_host(SSL *ssl, const char *host);

/* Read the peer's identity from a verified connection. 0, or -1 with err
 * set (no certificate, CN missing or too long, unknown role). */
int tls_peer_identity(SSL *ssl, struct peer *peer, struct cerr *err);

/* Identity from a certificate, for tests and for tools. */
int tls_cert_identity(X509 *cert, struct peer *peer, struct cerr *err);

struct bufferevent;

/* Why a TLS bufferevent failed, as one line: its last real OpenSSL error
 * (libevent keeps them apart from OpenSSL's queue, with pseudo-entries of
 * library 0 that say nothing), else "connection closed" for an EOF, else
 * the socket error. Returns buf. */
const char *tls_bufferevent_error(struct bufferevent *bev, short what,
    char *buf, size_t len);

/* The most recent OpenSSL error queue as one line (skipping libevent's
 * pseudo-entries), for logs and user messages. */
const char *tls_error_string(char *buf, size_t len);

#endif
