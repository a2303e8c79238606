/* TLS 1.3 with mutual authentication against the cluster CA. Identity is
 * the peer certificate's CN, the role its OU ("user", "admin", "agent";
 * "controller" for the server). */
#ifndef COHORT_TLS_H
#define COHORT_TLS_H

#include <openssl/ssl.h>

#include "lib/err.h"
#include "lib/job.h"

/* Errors in words (tls_words.h): a file that is missing, unreadable or
 * not PEM, a key that does not match its certificate, a certificate or
 * CA out of its dates ("certificate FILE expired on 2026-11-30 17:00:00
 * UTC") are named at load time; a handshake that fails says why the
 * peer's certificate was refused, or why the peer refused ours.
 *
 * A server context: our certificate and key, peers must present a
 * certificate signed by ca and, when crl is not NULL, not revoked by a CRL
 * in that file (every peer's certificate is checked; the file must hold
 * at least one current CRL signed by the CA). NULL with err set on
 * failure, naming the file at fault. */
SSL_CTX *tls_server_ctx(const char *ca, const char *crl, const char *cert,
    const char *key, struct cerr *err);

/* A client context: same files, verification of the server's chain and of
 * its role: only a certificate with OU=controller is accepted (see
 * tls_server_verify_error). The server's name is checked per connection
 * (tls_client_expect_host). */
SSL_CTX *tls_client_ctx(const char *ca, const char *crl, const char *cert,
    const char *key, struct cerr *err);

/* A verification store holding the CA certificates in ca and, when crl is
 * not NULL, the CRLs in crl with CRL checking switched on. NULL with err
 * set (naming the file) when a file is missing, does not parse, or a CRL
 * is not the CA's or not current. The caller owns the store. */
X509_STORE *tls_store_load(const char *ca, const char *crl,
    struct cerr *err);

/* Re-read ca and crl into a fresh store and use it for the handshakes
 * that verify from now on. A store that does not vouch for ctx's own
 * certificate is refused (peers would refuse it). On failure (-1, err
 * set) ctx keeps its old store. Connections already open are not affected: see
 * tls_cert_recheck. */
int tls_ctx_reload(SSL_CTX *ctx, const char *ca, const char *crl,
    struct cerr *err);

/* tls_ctx_reload for ctx, then other (NULL: none) verifies with the
 * same new store: a daemon's server and client contexts trust the same
 * CA and CRL (the files are read once). On failure both keep their
 * stores. */
int tls_ctx_reload_both(SSL_CTX *ctx, SSL_CTX *other, const char *ca,
    const char *crl, struct cerr *err);

/* Verify cert (with the untrusted chain, may be NULL) against ctx's
 * current store, e.g. after tls_ctx_reload: 0, or -1 with err saying why
 * ("certificate revoked"). */
int tls_cert_recheck(SSL_CTX *ctx, X509 *cert, STACK_OF(X509) *chain,
    struct cerr *err);

/* Check that the certificate ctx presents has role want (the
 * controller's own, at start: clients and agents refuse any other). 0, or
 * -1 with err naming file. */
int tls_ctx_check_own_role(SSL_CTX *ctx, enum role want, const char *file,
    struct cerr *err);

/* Check that the certificate ctx presents (loaded from cert) is signed
 * by the CA in ca (ctx's store; a daemon's, at start: peers would refuse
 * anything else). 0, or -1 with err "certificate FILE is not signed by
 * the CA in CAFILE". A CA certificate out of its dates is named too. */
int tls_ctx_check_own_issuer(SSL_CTX *ctx, const char *cert, const char *ca,
    struct cerr *err);

/* Make a client context accept only a server certificate whose role is
 * controller (tls_client_ctx does this; for contexts made elsewhere).
 * 0, or -1 when out of memory. */
int tls_ctx_expect_controller(SSL_CTX *ctx);

/* Why the server's certificate was refused on ssl, as one line naming
 * host ("server certificate of 127.0.0.1 has role 'user', not
 * 'controller'"), or NULL when its verification did not fail. */
const char *tls_server_verify_error(SSL *ssl, const char *host, char *buf,
    size_t len);

/* Why ssl's peer certificate was refused, in words ("certificate
 * expired on 2026-11-30 17:00:00 UTC (CN=bob)"), or NULL when it was
 * not. Returns buf. */
const char *tls_peer_error(SSL *ssl, char *buf, size_t len);

/* Make ssl verify that the server's certificate names host (a DNS name or
 * an IP address literal). 0 or -1. */
int tls_client_expect_host(SSL *ssl, const char *host);

/* Read a client's identity from a verified connection (the server's
 * side). 0, or -1 with err set (no certificate, CN missing or too long,
 * unknown role, or role controller: that certificate is the server's). */
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
