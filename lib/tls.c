#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/util.h>
#include <openssl/x509v3.h>

#include "tls.h"

const char *
tls_error_string(char *buf, size_t len)
{
	unsigned long e, last = 0;

	/* libevent can leave entries with library 0 on the queue; they say
	 * nothing, so keep the last real one. */
	while ((e = ERR_get_error()) != 0) {
		if (ERR_GET_LIB(e) != 0)
			last = e;
	}
	if (last == 0)
		snprintf(buf, len, "unknown TLS error");
	else
		ERR_error_string_n(last, buf, len);
	return buf;
}

const char *
tls_bufferevent_error(struct bufferevent *bev, short what, char *buf,
    size_t len)
{
	unsigned long e, last = 0;

	while ((e = bufferevent_get_openssl_error(bev)) != 0)
		if (ERR_GET_LIB(e) != 0)
			last = e;
	if (last != 0)
		ERR_error_string_n(last, buf, len);
	else
		snprintf(buf, len, "%s", what & BEV_EVENT_EOF ?
		    "connection closed" :
		    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	return buf;
}

static SSL_CTX *
tls_ctx_common(const SSL_METHOD *method, const char *ca, const char *cert,
    const char *key, struct cerr *err)
{
	SSL_CTX *ctx;
	char ebuf[256];
	const char *files[3] = { ca, cert, key };
	int i;

	/* OpenSSL says "system lib" for a file it cannot open: say which
	 * and why first. */
	for (i = 0; i < 3; i++) {
		if (access(files[i], R_OK) == -1) {
			cerr_set(err, ERR_INVALID, "%s: %s", files[i],
			    strerror(errno));
			return NULL;
		}
	}
	if ((ctx = SSL_CTX_new(method)) == NULL) {
		cerr_set(err, ERR_INTERNAL, "TLS context: %s",
		    tls_error_string(ebuf, sizeof(ebuf)));
		return NULL;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1)
		goto fail;
	/* OpenSSL 3 reports a peer that closes without close_notify as an
	 * error; the length framing detects truncation by itself. */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF |
	    SSL_OP_NO_RENEGOTIATION);
	/* Idle connections (thousands of agents) give their buffers back. */
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
	    SSL_MODE_ENABLE_PARTIAL_WRITE);
	if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
		cerr_set(err, ERR_INVALID, "CA file %s: %s", ca,
		    tls_error_string(ebuf, sizeof(ebuf)));
		goto out;
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		cerr_set(err, ERR_INVALID, "certificate %s: %s", cert,
		    tls_error_string(ebuf, sizeof(ebuf)));
		goto out;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		cerr_set(err, ERR_INVALID, "key %s: %s", key,
		    tls_error_string(ebuf, sizeof(ebuf)));
		goto out;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		cerr_set(err, ERR_INVALID, "key %s does not match %s", key,
		    cert);
		goto out;
	}
	SSL_CTX_set_verify(ctx,
	    SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	return ctx;
fail:
	cerr_set(err, ERR_INTERNAL, "TLS context: %s",
	    tls_error_string(ebuf, sizeof(ebuf)));
out:
	SSL_CTX_free(ctx);
	return NULL;
}

SSL_CTX *
tls_server_ctx(const char *ca, const char *cert, const char *key,
    struct cerr *err)
{
	SSL_CTX *ctx;
	STACK_OF(X509_NAME) *names;

	ctx = tls_ctx_common(TLS_server_method(), ca, cert, key, err);
	if (ctx == NULL)
		return NULL;
	/* Tell clients which CA we accept, so a client holding several
	 * identities can pick the right one. */
	if ((names = SSL_load_client_CA_file(ca)) != NULL)
		SSL_CTX_set_client_CA_list(ctx, names);
	/* Sessions are cheap to redo for our short-lived CLI connections
	 * and a cache would be one more unbounded table. */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(ctx, 0);
	return ctx;
}

SSL_CTX *
tls_client_ctx(const char *ca, const char *cert, const char *key,
    struct cerr *err)
{
	return tls_ctx_common(TLS_client_method(), ca, cert, key, err);
}

int
tls_client_expect_host(SSL *ssl, const char *host)
{
	X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
	unsigned char addr[16];

	/* An IP literal must match an IP SAN; a name a DNS SAN (and SNI). */
	if (inet_pton(AF_INET, host, addr) == 1 ||
	    inet_pton(AF_INET6, host, addr) == 1)
		return X509_VERIFY_PARAM_set1_ip_asc(param, host) == 1 ? 0 : -1;
	if (SSL_set_tlsext_host_name(ssl, host) != 1)
		return -1;
	return SSL_set1_host(ssl, host) == 1 ? 0 : -1;
}

static int
tls_name_entry(X509_NAME *name, int nid, char *buf, size_t len)
{
	int idx;
	X509_NAME_ENTRY *ent;
	ASN1_STRING *data;
	const unsigned char *s;
	int n, i;

	idx = X509_NAME_get_index_by_NID(name, nid, -1);
	if (idx < 0)
		return -1;
	/* More than one CN or OU is ambiguous: refuse it. */
	if (X509_NAME_get_index_by_NID(name, nid, idx) >= 0)
		return -1;
	ent = X509_NAME_get_entry(name, idx);
	data = X509_NAME_ENTRY_get_data(ent);
	s = ASN1_STRING_get0_data(data);
	n = ASN1_STRING_length(data);
	if (n <= 0 || (size_t)n >= len)
		return -1;
	for (i = 0; i < n; i++) {
		/* Names end up in logs, paths and SQL: keep them plain. */
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') ||
		    (i > 0 && (s[i] == '.' || s[i] == '_' || s[i] == '-'))))
			return -1;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

int
tls_cert_identity(X509 *cert, struct peer *peer, struct cerr *err)
{
	X509_NAME *subj;
	char ou[32];

	memset(peer, 0, sizeof(*peer));
	if (cert == NULL)
		return cerr_set(err, ERR_DENIED, "no client certificate");
	subj = X509_get_subject_name(cert);
	if (tls_name_entry(subj, NID_commonName, peer->name,
	    sizeof(peer->name)) == -1)
		return cerr_set(err, ERR_DENIED,
		    "certificate has no single valid CN");
	if (tls_name_entry(subj, NID_organizationalUnitName, ou,
	    sizeof(ou)) == -1)
		return cerr_set(err, ERR_DENIED,
		    "certificate of %s has no single OU naming its role",
		    peer->name);
	peer->role = role_parse(ou);
	if (peer->role == ROLE_NONE)
		return cerr_set(err, ERR_DENIED,
		    "certificate of %s has unknown role '%s'", peer->name, ou);
	return 0;
}

int
tls_peer_identity(SSL *ssl, struct peer *peer, struct cerr *err)
{
	X509 *cert;

	if (SSL_get_verify_result(ssl) != X509_V_OK)
		return cerr_set(err, ERR_DENIED, "peer certificate not verified");
	cert = SSL_get0_peer_certificate(ssl);
	return tls_cert_identity(cert, peer, err);
}
