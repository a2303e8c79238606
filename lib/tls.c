#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/util.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "lib/tls.h"
#include "lib/tls_words.h"
#include "lib/log.h"

static int tls_name_entry(X509_NAME *name, int nid, char *buf, size_t len);

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
	else if (tls_words_alert(last) != NULL)
		snprintf(buf, len, "%s", tls_words_alert(last));
	else
		tls_words_error(last, buf, len);
	return buf;
}

/* Where the verify callbacks leave, in words, why a peer's certificate
 * was refused (a malloc'd text freed with the SSL): OpenSSL keeps only
 * the error code, and the certificate is gone once the handshake
 * failed. */
static int tls_why_idx = -1;

static void
tls_ex_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx,
    long argl, void *argp)
{
	free(ptr);
}

static int
tls_why_init(void)
{
	if (tls_why_idx < 0 && (tls_why_idx = SSL_get_ex_new_index(0, NULL,
	    NULL, NULL, tls_ex_free)) < 0) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* The first failure of a chain, in words, on the SSL being verified. */
static void
tls_note_failure(X509_STORE_CTX *x)
{
	SSL *ssl = X509_STORE_CTX_get_ex_data(x,
	    SSL_get_ex_data_X509_STORE_CTX_idx());
	char why[512];

	if (ssl == NULL || tls_why_idx < 0 ||
	    SSL_get_ex_data(ssl, tls_why_idx) != NULL)
		return;
	tls_words_verify(X509_STORE_CTX_get_error(x),
	    X509_STORE_CTX_get_current_cert(x), why, sizeof(why));
	SSL_set_ex_data(ssl, tls_why_idx, strdup(why));
}

static int
tls_verify_words_cb(int ok, X509_STORE_CTX *x)
{
	if (!ok)
		tls_note_failure(x);
	return ok;
}

const char *
tls_peer_error(SSL *ssl, char *buf, size_t len)
{
	const char *why = NULL;
	long vr;

	if (ssl == NULL || (vr = SSL_get_verify_result(ssl)) == X509_V_OK)
		return NULL;
	if (tls_why_idx >= 0)
		why = SSL_get_ex_data(ssl, tls_why_idx);
	if (why != NULL)
		snprintf(buf, len, "%s", why);
	else
		tls_words_verify(vr, NULL, buf, len);
	return buf;
}

const char *
tls_bufferevent_error(struct bufferevent *bev, short what, char *buf,
    size_t len)
{
	unsigned long e, last = 0;
	char ebuf[256], why[320];
	SSL *ssl;

	while ((e = bufferevent_get_openssl_error(bev)) != 0)
		if (ERR_GET_LIB(e) != 0)
			last = e;
	ssl = bufferevent_openssl_get_ssl(bev);
	if (last != 0 && tls_peer_error(ssl, why, sizeof(why)) != NULL) {
		/* "certificate verify failed" alone does not say why. */
		snprintf(buf, len, "refused the peer's certificate: %s "
		    "(OpenSSL: %s)", why,
		    tls_words_error(last, ebuf, sizeof(ebuf)));
	} else if (last != 0 && tls_words_alert(last) != NULL)
		snprintf(buf, len, "%s (OpenSSL: %s)", tls_words_alert(last),
		    tls_words_error(last, ebuf, sizeof(ebuf)));
	else if (last != 0)
		snprintf(buf, len, "TLS: %s",
		    tls_words_error(last, ebuf, sizeof(ebuf)));
	else
		snprintf(buf, len, "%s", what & BEV_EVENT_EOF ?
		    "connection closed" :
		    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	return buf;
}

/* The certificate of st that issued crl: its subject names the CRL's
 * issuer and its key verifies the CRL's signature. NULL when none does. */
static X509 *
tls_crl_issuer(X509_STORE *st, X509_CRL *crl)
{
	STACK_OF(X509_OBJECT) *objs = X509_STORE_get0_objects(st);
	X509 *ca;
	int i;

	for (i = 0; i < sk_X509_OBJECT_num(objs); i++) {
		ca = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objs, i));
		if (ca != NULL && X509_NAME_cmp(X509_get_subject_name(ca),
		    X509_CRL_get_issuer(crl)) == 0 &&
		    X509_CRL_verify(crl, X509_get0_pubkey(ca)) == 1)
			return ca;
	}
	return NULL;
}

/* A CA of st that no CRL of st speaks for, or NULL: with CRL checking
 * on, every certificate that CA signed would be refused. */
static X509 *
tls_ca_without_crl(X509_STORE *st)
{
	STACK_OF(X509_OBJECT) *objs = X509_STORE_get0_objects(st);
	X509_OBJECT *o;
	X509_CRL *crl;
	X509 *ca;
	int i, j, found;

	for (i = 0; i < sk_X509_OBJECT_num(objs); i++) {
		if ((ca = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objs,
		    i))) == NULL)
			continue;
		found = 0;
		for (j = 0; j < sk_X509_OBJECT_num(objs) && !found; j++) {
			o = sk_X509_OBJECT_value(objs, j);
			crl = X509_OBJECT_get0_X509_CRL(o);
			found = crl != NULL && X509_NAME_cmp(
			    X509_get_subject_name(ca),
			    X509_CRL_get_issuer(crl)) == 0;
		}
		if (!found)
			return ca;
	}
	return NULL;
}

/* A CRL that expires soon: once it has, every peer is refused (OpenSSL's
 * CRL check), so say so at every load (start, SIGHUP) from a month
 * before. */
#define TLS_CRL_WARN_DAYS 30

static void
tls_crl_warn_expiry(const char *path, int n, const ASN1_TIME *next)
{
	int days = 0, secs = 0;

	if (next == NULL || ASN1_TIME_diff(&days, &secs, NULL, next) != 1)
		return;
	/* Part of a day left counts as a day: a CRL made valid for 10 days
	 * a second ago expires in 10 days, not 9. */
	if (secs > 0)
		days++;
	if (days >= TLS_CRL_WARN_DAYS)
		return;
	log_warnx("CRL file %s: CRL %d expires in %d day(s); renew it "
	    "(cohort-pki crl DIR) and send SIGHUP, or every peer will be "
	    "refused", path, n, days);
}

/* Add every PEM CRL in path to st. Each must be signed by a CA of st and
 * be current: with CRL checking on, a CRL that verifies nothing or has
 * expired would refuse every peer, which is better said at load time. */
static int
tls_store_add_crls(X509_STORE *st, const char *path, struct cerr *err)
{
	BIO *bio;
	X509_CRL *crl;
	const ASN1_TIME *next;
	unsigned long e;
	char ebuf[256];
	X509 *ca;
	int n = 0, rc = -1;

	if (access(path, R_OK) == -1)
		return cerr_set(err, ERR_INVALID, "CRL file %s: %s", path,
		    strerror(errno));
	ERR_clear_error();
	if ((bio = BIO_new_file(path, "r")) == NULL)
		return cerr_set(err, ERR_INVALID, "CRL file %s: %s", path,
		    tls_error_string(ebuf, sizeof(ebuf)));
	while ((crl = PEM_read_bio_X509_CRL(bio, NULL, NULL, NULL)) != NULL) {
		n++;
		next = X509_CRL_get0_nextUpdate(crl);
		if (tls_crl_issuer(st, crl) == NULL) {
			cerr_set(err, ERR_INVALID, "CRL file %s: CRL %d is not "
			    "signed by the cluster CA", path, n);
			goto out;
		}
		if (X509_cmp_current_time(X509_CRL_get0_lastUpdate(crl)) > 0) {
			cerr_set(err, ERR_INVALID, "CRL file %s: CRL %d is not "
			    "valid yet", path, n);
			goto out;
		}
		if (next != NULL && X509_cmp_current_time(next) < 0) {
			cerr_set(err, ERR_INVALID, "CRL file %s: CRL %d has "
			    "expired (its next update was due); make a new "
			    "one (cohort-pki crl DIR)", path, n);
			goto out;
		}
		tls_crl_warn_expiry(path, n, next);
		if (X509_STORE_add_crl(st, crl) != 1) {
			cerr_set(err, ERR_INTERNAL, "CRL file %s: %s", path,
			    tls_error_string(ebuf, sizeof(ebuf)));
			goto out;
		}
		X509_CRL_free(crl);
		crl = NULL;
	}
	/* The loop ends on "no start line" at the end of the file; any
	 * other error is a broken CRL. */
	e = ERR_peek_last_error();
	if (n == 0 || ERR_GET_LIB(e) != ERR_LIB_PEM ||
	    ERR_GET_REASON(e) != PEM_R_NO_START_LINE) {
		if (n == 0 && ERR_GET_LIB(e) == ERR_LIB_PEM &&
		    ERR_GET_REASON(e) == PEM_R_NO_START_LINE)
			cerr_set(err, ERR_INVALID, "CRL file %s: no PEM CRL "
			    "in it", path);
		else
			cerr_set(err, ERR_INVALID, "CRL file %s: CRL %d does "
			    "not parse: %s", path, n + 1,
			    tls_error_string(ebuf, sizeof(ebuf)));
		goto out;
	}
	if ((ca = tls_ca_without_crl(st)) != NULL) {
		X509_NAME_oneline(X509_get_subject_name(ca), ebuf,
		    sizeof(ebuf));
		cerr_set(err, ERR_INVALID, "CRL file %s: no CRL of the CA %s "
		    "in it; every certificate that CA signed would be refused",
		    path, ebuf);
		goto out;
	}
	X509_STORE_set_flags(st, X509_V_FLAG_CRL_CHECK);
	rc = 0;
out:
	ERR_clear_error();
	X509_CRL_free(crl);
	BIO_free(bio);
	return rc;
}

/* A certificate outside its validity: "FILE expired on DATE" or "FILE
 * is not valid until DATE". 0 when it is valid now. */
static int
tls_cert_check_dates(X509 *c, const char *what, const char *file,
    struct cerr *err)
{
	char when[64];

	if (X509_cmp_current_time(X509_get0_notAfter(c)) < 0)
		return cerr_set(err, ERR_INVALID, "%s %s expired on %s; make "
		    "a new one (cohort-pki)", what, file, tls_words_time(
		    X509_get0_notAfter(c), when, sizeof(when)));
	if (X509_cmp_current_time(X509_get0_notBefore(c)) > 0)
		return cerr_set(err, ERR_INVALID, "%s %s is not valid until "
		    "%s (is this machine's clock right?)", what, file,
		    tls_words_time(X509_get0_notBefore(c), when, sizeof(when)));
	return 0;
}

/* Every CA certificate of st is valid now, or the peers it signed would
 * all be refused: say so at load time. */
static int
tls_store_check_dates(X509_STORE *st, const char *file, struct cerr *err)
{
	STACK_OF(X509_OBJECT) *objs = X509_STORE_get0_objects(st);
	char what[200], name[128];
	X509 *ca;
	int i;

	for (i = 0; i < sk_X509_OBJECT_num(objs); i++) {
		if ((ca = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objs,
		    i))) == NULL)
			continue;
		if (X509_NAME_get_text_by_NID(X509_get_subject_name(ca),
		    NID_commonName, name, sizeof(name)) <= 0)
			snprintf(name, sizeof(name), "?");
		snprintf(what, sizeof(what), "CA certificate CN=%s in", name);
		if (tls_cert_check_dates(ca, what, file, err) == -1)
			return -1;
	}
	return 0;
}

X509_STORE *
tls_store_load(const char *ca, const char *crl, struct cerr *err)
{
	X509_STORE *st;
	char ebuf[256];

	if (access(ca, R_OK) == -1) {
		cerr_set(err, ERR_INVALID, "%s: %s", ca, strerror(errno));
		return NULL;
	}
	if ((st = X509_STORE_new()) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	ERR_clear_error();
	if (X509_STORE_load_file(st, ca) != 1) {
		if (!tls_words_pem_has(ca, "CERTIFICATE", NULL))
			cerr_set(err, ERR_INVALID, "CA file %s: not PEM (no "
			    "'-----BEGIN CERTIFICATE-----' line)", ca);
		else
			cerr_set(err, ERR_INVALID, "CA file %s does not parse: "
			    "%s", ca, tls_error_string(ebuf, sizeof(ebuf)));
		goto fail;
	}
	if (tls_store_check_dates(st, ca, err) == -1)
		goto fail;
	if (crl != NULL && tls_store_add_crls(st, crl, err) == -1)
		goto fail;
	return st;
fail:
	X509_STORE_free(st);
	/* Nothing of this failure may be blamed on a later connection's
	 * error (libevent reads the queue). */
	ERR_clear_error();
	return NULL;
}

/* Is the certificate ctx presents signed by a CA of store st? cert names
 * it in messages. 0, or -1 with err. */
static int
tls_own_issuer(SSL_CTX *ctx, X509_STORE *st, const char *cert,
    const char *ca, struct cerr *err)
{
	X509 *c = SSL_CTX_get0_certificate(ctx);
	STACK_OF(X509) *chain = NULL;
	X509_STORE_CTX *x;
	char why[512];
	int rc = 0, e;

	if (c == NULL)
		return cerr_set(err, ERR_INVALID, "certificate %s: none loaded",
		    cert);
	SSL_CTX_get0_chain_certs(ctx, &chain);
	if ((x = X509_STORE_CTX_new()) == NULL ||
	    X509_STORE_CTX_init(x, st, c,
	    chain) != 1) {
		X509_STORE_CTX_free(x);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	/* Our own revocation is the peers' business (and a CRL check here
	 * would hide the question asked: who signed it). */
	X509_VERIFY_PARAM_clear_flags(X509_STORE_CTX_get0_param(x),
	    X509_V_FLAG_CRL_CHECK);
	if (X509_verify_cert(x) != 1) {
		e = X509_STORE_CTX_get_error(x);
		if (tls_words_unknown_ca(e) ||
		    e == X509_V_ERR_CERT_SIGNATURE_FAILURE)
			rc = cerr_set(err, ERR_INVALID, "certificate %s is not "
			    "signed by the CA in %s: peers would refuse it",
			    cert, ca);
		else if (e == X509_V_ERR_CERT_HAS_EXPIRED ||
		    e == X509_V_ERR_CERT_NOT_YET_VALID)
			rc = cerr_set(err, ERR_INVALID, "certificate %s: %s",
			    cert, tls_words_verify(e,
			    X509_STORE_CTX_get_current_cert(x), why,
			    sizeof(why)));
	}
	X509_STORE_CTX_free(x);
	ERR_clear_error();
	return rc;
}

int
tls_ctx_reload(SSL_CTX *ctx, const char *ca, const char *crl,
    struct cerr *err)
{
	STACK_OF(X509_NAME) *names;
	X509_STORE *st;

	if ((st = tls_store_load(ca, crl, err)) == NULL)
		return -1;
	/* A CA file that does not vouch for our own certificate would cut
	 * off every peer and let none back in (a rotation that dropped the
	 * old CA too soon): refused, the old store kept. */
	if (SSL_CTX_get0_certificate(ctx) != NULL &&
	    tls_own_issuer(ctx, st, "of this daemon", ca, err) == -1) {
		X509_STORE_free(st);
		return -1;
	}
	/* Chains are verified inside one SSL call, on one thread: no
	 * handshake holds the old store across this swap. */
	SSL_CTX_set_cert_store(ctx, st);
	/* The CAs a server names to its clients follow the file too (a CA
	 * added for a rotation); a client context never sends them. */
	if ((names = SSL_load_client_CA_file(ca)) != NULL)
		SSL_CTX_set_client_CA_list(ctx, names);
	ERR_clear_error();
	return 0;
}

int
tls_ctx_reload_both(SSL_CTX *ctx, SSL_CTX *other, const char *ca,
    const char *crl, struct cerr *err)
{
	if (tls_ctx_reload(ctx, ca, crl, err) == -1)
		return -1;
	/* The store itself, not a second reading: a file changed in
	 * between could leave the two trusting different CRLs. A client's
	 * role check is on its context, not the store, and stays. */
	if (other != NULL)
		SSL_CTX_set1_cert_store(other, SSL_CTX_get_cert_store(ctx));
	return 0;
}

int
tls_cert_recheck(SSL_CTX *ctx, X509 *cert, STACK_OF(X509) *chain,
    struct cerr *err)
{
	X509_STORE_CTX *x;
	int rc;

	if (cert == NULL)
		return cerr_set(err, ERR_DENIED, "no peer certificate");
	if ((x = X509_STORE_CTX_new()) == NULL ||
	    X509_STORE_CTX_init(x, SSL_CTX_get_cert_store(ctx), cert,
	    chain) != 1) {
		X509_STORE_CTX_free(x);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	if ((rc = X509_verify_cert(x)) != 1)
		cerr_set(err, ERR_DENIED, "%s", X509_verify_cert_error_string(
		    X509_STORE_CTX_get_error(x)));
	X509_STORE_CTX_free(x);
	ERR_clear_error();
	return rc == 1 ? 0 : -1;
}

static SSL_CTX *
tls_ctx_common(const SSL_METHOD *method, const char *ca, const char *crl,
    const char *cert, const char *key, struct cerr *err)
{
	SSL_CTX *ctx;
	X509_STORE *st;
	char ebuf[256];
	const char *files[2] = { cert, key };
	bool encrypted;
	int i;

	/* OpenSSL says "system lib" for a file it cannot open: say which
	 * and why first. */
	for (i = 0; i < 2; i++) {
		if (access(files[i], R_OK) == -1) {
			cerr_set(err, ERR_INVALID, "%s: %s", files[i],
			    strerror(errno));
			return NULL;
		}
	}
	if ((st = tls_store_load(ca, crl, err)) == NULL)
		return NULL;
	if ((ctx = SSL_CTX_new(method)) == NULL) {
		cerr_set(err, ERR_INTERNAL, "TLS context: %s",
		    tls_error_string(ebuf, sizeof(ebuf)));
		X509_STORE_free(st);
		return NULL;
	}
	SSL_CTX_set_cert_store(ctx, st);
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
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		if (!tls_words_pem_has(cert, "CERTIFICATE", NULL))
			cerr_set(err, ERR_INVALID, "certificate %s: not PEM (no "
			    "'-----BEGIN CERTIFICATE-----' line; a DER file "
			    "converts with openssl x509 -inform der)", cert);
		else
			cerr_set(err, ERR_INVALID, "certificate %s does not "
			    "parse: %s", cert,
			    tls_error_string(ebuf, sizeof(ebuf)));
		goto out;
	}
	if (tls_cert_check_dates(SSL_CTX_get0_certificate(ctx),
	    "certificate", cert, err) == -1)
		goto out;
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		unsigned long e = ERR_peek_last_error();

		if (ERR_GET_LIB(e) == ERR_LIB_X509 &&
		    ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH)
			cerr_set(err, ERR_INVALID, "key %s does not match "
			    "certificate %s (use the key made with that "
			    "certificate)", key, cert);
		else if (tls_words_pem_has(key, "PRIVATE KEY", &encrypted) &&
		    encrypted)
			cerr_set(err, ERR_INVALID, "key %s is encrypted with a "
			    "passphrase, which Cohort cannot ask for: decrypt "
			    "it (openssl pkey -in FILE -out FILE)", key);
		else if (!tls_words_pem_has(key, "PRIVATE KEY", NULL))
			cerr_set(err, ERR_INVALID, "key %s: not PEM (no "
			    "'-----BEGIN PRIVATE KEY-----' line)", key);
		else
			cerr_set(err, ERR_INVALID, "key %s does not parse: %s",
			    key, tls_error_string(ebuf, sizeof(ebuf)));
		goto out;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		cerr_set(err, ERR_INVALID, "key %s does not match certificate "
		    "%s (use the key made with that certificate)", key, cert);
		goto out;
	}
	if (tls_why_init() == -1)
		goto fail;
	SSL_CTX_set_verify(ctx,
	    SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
	    tls_verify_words_cb);
	ERR_clear_error();
	return ctx;
fail:
	cerr_set(err, ERR_INTERNAL, "TLS context: %s",
	    tls_error_string(ebuf, sizeof(ebuf)));
out:
	SSL_CTX_free(ctx);
	return NULL;
}

SSL_CTX *
tls_server_ctx(const char *ca, const char *crl, const char *cert,
    const char *key, struct cerr *err)
{
	SSL_CTX *ctx;
	STACK_OF(X509_NAME) *names;

	ctx = tls_ctx_common(TLS_server_method(), ca, crl, cert, key, err);
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

/* Where the verify callback leaves why a server's role was refused (a
 * malloc'd text freed with the SSL), for tls_server_verify_error. */
static int tls_role_idx = -1;

static void
tls_role_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx,
    long argl, void *argp)
{
	free(ptr);
}

/* The chain is sound (ok): accept the leaf only as a controller's. Any
 * CA-signed certificate passes the chain check, a user's too, and a user
 * must not be able to pose as the controller. */
static int
tls_verify_controller(int ok, X509_STORE_CTX *x)
{
	X509 *cert = X509_STORE_CTX_get_current_cert(x);
	X509_NAME *subj;
	SSL *ssl;
	char ou[32], why[160];
	int idx;

	if (!ok)
		tls_note_failure(x);
	if (!ok || X509_STORE_CTX_get_error_depth(x) != 0 || cert == NULL)
		return ok;
	subj = X509_get_subject_name(cert);
	if (tls_name_entry(subj, NID_organizationalUnitName, ou,
	    sizeof(ou)) == 0) {
		if (role_parse(ou) == ROLE_CONTROLLER)
			return 1;
		if (role_parse(ou) != ROLE_NONE)
			snprintf(why, sizeof(why), "has role '%s', not "
			    "'controller'", ou);
		else
			snprintf(why, sizeof(why), "has role '%s', not "
			    "'controller' (make the controller's certificate "
			    "with cohort-pki: OU=controller)", ou);
	} else
		snprintf(why, sizeof(why), "names no role (no single OU), not "
		    "'controller' (make the controller's certificate with "
		    "cohort-pki: OU=controller)");
	idx = SSL_get_ex_data_X509_STORE_CTX_idx();
	ssl = X509_STORE_CTX_get_ex_data(x, idx);
	if (ssl != NULL && tls_role_idx >= 0) {
		free(SSL_get_ex_data(ssl, tls_role_idx));
		SSL_set_ex_data(ssl, tls_role_idx, strdup(why));
	}
	X509_STORE_CTX_set_error(x, X509_V_ERR_APPLICATION_VERIFICATION);
	return 0;
}

int
tls_ctx_check_own_role(SSL_CTX *ctx, enum role want, const char *file,
    struct cerr *err)
{
	X509 *cert = SSL_CTX_get0_certificate(ctx);
	char ou[32];

	if (cert == NULL)
		return cerr_set(err, ERR_INVALID, "certificate %s: none loaded",
		    file);
	if (tls_name_entry(X509_get_subject_name(cert),
	    NID_organizationalUnitName, ou, sizeof(ou)) == -1)
		return cerr_set(err, ERR_INVALID, "certificate %s names no "
		    "role (no single OU), not '%s': peers would refuse it; "
		    "make a new one with cohort-pki", file, role_name(want));
	if (role_parse(ou) != want)
		return cerr_set(err, ERR_INVALID, "certificate %s has role "
		    "'%s', not '%s': peers would refuse it; make a new one "
		    "with cohort-pki", file, ou, role_name(want));
	return 0;
}

int
tls_ctx_check_own_issuer(SSL_CTX *ctx, const char *cert, const char *ca,
    struct cerr *err)
{
	return tls_own_issuer(ctx, SSL_CTX_get_cert_store(ctx), cert, ca, err);
}

int
tls_ctx_expect_controller(SSL_CTX *ctx)
{
	if (tls_role_idx < 0 && (tls_role_idx = SSL_get_ex_new_index(0,
	    NULL, NULL, NULL, tls_role_free)) < 0) {
		errno = ENOMEM;
		return -1;
	}
	SSL_CTX_set_verify(ctx, SSL_CTX_get_verify_mode(ctx),
	    tls_verify_controller);
	return 0;
}

const char *
tls_server_verify_error(SSL *ssl, const char *host, char *buf, size_t len)
{
	long vr = SSL_get_verify_result(ssl);
	const char *why = NULL;

	if (vr == X509_V_OK)
		return NULL;
	if (vr == X509_V_ERR_APPLICATION_VERIFICATION && tls_role_idx >= 0)
		why = SSL_get_ex_data(ssl, tls_role_idx);
	if (why != NULL) {
		snprintf(buf, len, "server certificate of %s %s", host, why);
		return buf;
	}
	if (tls_why_idx >= 0)
		why = SSL_get_ex_data(ssl, tls_why_idx);
	if (why != NULL)
		snprintf(buf, len, "cannot verify the server certificate of "
		    "%s: %s", host, why);
	else
		snprintf(buf, len, "cannot verify the server certificate of "
		    "%s: %s", host, X509_verify_cert_error_string(vr));
	return buf;
}

SSL_CTX *
tls_client_ctx(const char *ca, const char *crl, const char *cert,
    const char *key, struct cerr *err)
{
	SSL_CTX *ctx;

	ctx = tls_ctx_common(TLS_client_method(), ca, crl, cert, key, err);
	if (ctx != NULL && tls_ctx_expect_controller(ctx) == -1) {
		cerr_set(err, ERR_INTERNAL, "TLS context: out of memory");
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
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
	if (tls_cert_identity(cert, peer, err) == -1)
		return -1;
	if (peer->role == ROLE_CONTROLLER)
		return cerr_set(err, ERR_DENIED, "certificate of %s has role "
		    "'controller': a controller's certificate identifies the "
		    "server, it is no client's", peer->name);
	return 0;
}
