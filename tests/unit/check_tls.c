/* lib/tls.c's revocation and roles: a CRL file that is missing, garbage,
 * another CA's, expired or not yet valid is refused with its name; a
 * reload swaps in a new CRL (connections then recheck as revoked) and a
 * failed reload keeps the old one; a client accepts only a server whose
 * certificate has the controller's role, and a server refuses a client
 * presenting the controller's certificate. Certificates are minted in
 * memory (pki_fixture.h). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "lib/tls.h"
#include "lib/tls_words.h"
#include "tests/unit/pki_fixture.h"

#define HOUR 3600L

static char dir[64];
static EVP_PKEY *ca_key, *other_key;
static X509 *ca_cert, *other_cert;

static char *
path(const char *name)
{
	static char buf[8][128];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void
write_crl(const char *name, X509_CRL *crl, const char *mode)
{
	pki_write_crl(path(name), crl, mode);
	X509_CRL_free(crl);
}

static void
write_text(const char *name, const char *text)
{
	FILE *f = fopen(path(name), "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* base.crt and base.key, signed by issuer, valid from nb to na. */
static void
write_leaf_by(const char *base, const char *ou, const char *cn, long serial,
    X509 *issuer, EVP_PKEY *ikey, long nb, long na)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");
	X509 *c = pki_mint_dated(k, ou, cn, serial, issuer, ikey, NULL, NULL,
	    nb, na);
	char name[64];

	snprintf(name, sizeof(name), "%s.crt", base);
	pki_write_cert(path(name), c);
	snprintf(name, sizeof(name), "%s.key", base);
	pki_write_key(path(name), k);
	X509_free(c);
	EVP_PKEY_free(k);
}

static void
write_leaf(const char *base, const char *ou, const char *cn, long serial)
{
	write_leaf_by(base, ou, cn, serial, ca_cert, ca_key, -HOUR, 24 * HOUR);
}

static X509 *
read_cert(const char *base)
{
	char name[64];
	FILE *f;
	X509 *c;

	snprintf(name, sizeof(name), "%s.crt", base);
	ck_assert_ptr_nonnull(f = fopen(path(name), "r"));
	c = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	ck_assert_ptr_nonnull(c);
	return c;
}

static void
setup(void)
{
	static const long bob[] = { 3 };
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/check_tls.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ca_key = EVP_EC_gen("P-256");
	other_key = EVP_EC_gen("P-256");
	ca_cert = pki_mint(ca_key, "ca", "cohort-ca", 1, NULL, NULL, NULL,
	    NULL);
	other_cert = pki_mint(other_key, "ca", "other-ca", 1, NULL, NULL,
	    NULL, NULL);
	ck_assert_ptr_nonnull(f = fopen(path("ca.pem"), "w"));
	PEM_write_X509(f, ca_cert);
	fclose(f);
	write_leaf("controller", "controller", "controller", 2);
	write_leaf("bob", "user", "bob", 3);
	write_leaf("alice", "user", "alice", 4);
	write_leaf("norole", NULL, "norole", 5);
	write_crl("empty.crl", pki_mint_crl(ca_cert, ca_key, NULL, 0, -60,
	    HOUR), "w");
	write_crl("bob.crl", pki_mint_crl(ca_cert, ca_key, bob, 1, -60, HOUR),
	    "w");
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	X509_free(ca_cert);
	X509_free(other_cert);
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(other_key);
}

/* tls_store_load(ca.pem, name) fails with a text holding want and the
 * file's path. */
static void
bad_crl(const char *name, const char *want)
{
	struct cerr err;
	X509_STORE *st;

	cerr_clear(&err);
	st = tls_store_load(path("ca.pem"), path(name), &err);
	ck_assert_ptr_null(st);
	ck_assert_msg(strstr(err.text, path(name)) != NULL, "%s", err.text);
	ck_assert_msg(strstr(err.text, want) != NULL, "want '%s': %s", want,
	    err.text);
}

START_TEST(test_store_load)
{
	struct cerr err;
	X509_STORE *st;

	st = tls_store_load(path("ca.pem"), NULL, &err);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(X509_VERIFY_PARAM_get_flags(X509_STORE_get0_param(st))
	    & X509_V_FLAG_CRL_CHECK, 0);
	X509_STORE_free(st);
	st = tls_store_load(path("ca.pem"), path("empty.crl"), &err);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_ne(X509_VERIFY_PARAM_get_flags(X509_STORE_get0_param(st))
	    & X509_V_FLAG_CRL_CHECK, 0);
	X509_STORE_free(st);
}
END_TEST

START_TEST(test_bad_crls)
{
	static const long none[] = { 0 };
	char pem[4096];
	FILE *f;
	size_t n;
	char *mid;

	bad_crl("missing.crl", "No such file");
	write_text("garbage.crl", "this is no CRL\n");
	bad_crl("garbage.crl", "no PEM CRL");
	write_crl("foreign.crl", pki_mint_crl(other_cert, other_key, none, 0,
	    -60, HOUR), "w");
	bad_crl("foreign.crl", "CRL 1 is not signed by the cluster CA");
	write_crl("expired.crl", pki_mint_crl(ca_cert, ca_key, none, 0,
	    -2 * HOUR, -HOUR), "w");
	bad_crl("expired.crl", "CRL 1 has expired");
	write_crl("future.crl", pki_mint_crl(ca_cert, ca_key, none, 0, HOUR,
	    2 * HOUR), "w");
	bad_crl("future.crl", "CRL 1 is not valid yet");
	/* A good CRL, then one whose body is cut. */
	ck_assert_ptr_nonnull(f = fopen(path("empty.crl"), "r"));
	n = fread(pem, 1, sizeof(pem) - 1, f);
	fclose(f);
	pem[n] = '\0';
	write_text("two.crl", pem);
	ck_assert_ptr_nonnull(mid = strstr(pem, "\n") + 1);
	ck_assert_ptr_nonnull(f = fopen(path("two.crl"), "a"));
	fwrite(pem, 1, (size_t)(mid - pem) + 10, f);
	fputs("\n-----END X509 CRL-----\n", f);
	fclose(f);
	bad_crl("two.crl", "CRL 2 does not parse");
	/* Another CA's CRL after the right one. */
	write_crl("mixed.crl", pki_mint_crl(ca_cert, ca_key, none, 0, -60,
	    HOUR), "w");
	write_crl("mixed.crl", pki_mint_crl(other_cert, other_key, none, 0, -60,
	    HOUR), "a");
	bad_crl("mixed.crl", "CRL 2 is not signed");
}
END_TEST

/* Two CAs in the CA file: the CRL file must speak for both. */
START_TEST(test_crl_per_ca)
{
	static const long none[] = { 0 };
	struct cerr err;
	X509_STORE *st;
	FILE *f;

	ck_assert_ptr_nonnull(f = fopen(path("two-ca.pem"), "w"));
	PEM_write_X509(f, ca_cert);
	PEM_write_X509(f, other_cert);
	fclose(f);
	st = tls_store_load(path("two-ca.pem"), path("empty.crl"), &err);
	ck_assert_ptr_null(st);
	ck_assert_msg(strstr(err.text, "no CRL of the CA /O=cohort/OU=ca/"
	    "CN=other-ca") != NULL, "%s", err.text);
	write_crl("both.crl", pki_mint_crl(ca_cert, ca_key, none, 0, -60, HOUR),
	    "w");
	write_crl("both.crl", pki_mint_crl(other_cert, other_key, none, 0, -60,
	    HOUR), "a");
	st = tls_store_load(path("two-ca.pem"), path("both.crl"), &err);
	ck_assert_msg(st != NULL, "%s", err.text);
	X509_STORE_free(st);
}
END_TEST

START_TEST(test_reload_and_recheck)
{
	struct cerr err;
	SSL_CTX *ctx;
	X509 *bob = read_cert("bob"), *alice = read_cert("alice");

	ctx = tls_server_ctx(path("ca.pem"), path("empty.crl"),
	    path("controller.crt"), path("controller.key"), &err);
	ck_assert_msg(ctx != NULL, "%s", err.text);
	ck_assert_int_eq(tls_cert_recheck(ctx, bob, NULL, &err), 0);
	ck_assert_int_eq(tls_ctx_reload(ctx, path("ca.pem"), path("bob.crl"),
	    &err), 0);
	ck_assert_int_eq(tls_cert_recheck(ctx, bob, NULL, &err), -1);
	ck_assert_str_eq(err.text, "certificate revoked");
	ck_assert_int_eq(tls_cert_recheck(ctx, alice, NULL, &err), 0);
	/* A reload that fails keeps the store before it. */
	write_text("garbage.crl", "garbage\n");
	ck_assert_int_eq(tls_ctx_reload(ctx, path("ca.pem"),
	    path("garbage.crl"), &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "garbage.crl"));
	ck_assert_int_eq(tls_cert_recheck(ctx, bob, NULL, &err), -1);
	ck_assert_int_eq(tls_cert_recheck(ctx, alice, NULL, &err), 0);
	/* Back to the empty CRL: bob verifies again. */
	ck_assert_int_eq(tls_ctx_reload(ctx, path("ca.pem"), path("empty.crl"),
	    &err), 0);
	ck_assert_int_eq(tls_cert_recheck(ctx, bob, NULL, &err), 0);
	ck_assert_int_eq(tls_cert_recheck(ctx, NULL, NULL, &err), -1);
	X509_free(bob);
	X509_free(alice);
	SSL_CTX_free(ctx);
}
END_TEST

/* A CA added to the file (a rotation) is also named to clients after a
 * reload, not only trusted. */
START_TEST(test_reload_names_new_ca)
{
	struct cerr err;
	SSL_CTX *ctx;
	FILE *f;

	ctx = tls_server_ctx(path("ca.pem"), NULL, path("controller.crt"),
	    path("controller.key"), &err);
	ck_assert_msg(ctx != NULL, "%s", err.text);
	ck_assert_int_eq(sk_X509_NAME_num(SSL_CTX_get_client_CA_list(ctx)),
	    1);
	ck_assert_ptr_nonnull(f = fopen(path("two-ca.pem"), "w"));
	PEM_write_X509(f, ca_cert);
	PEM_write_X509(f, other_cert);
	fclose(f);
	ck_assert_msg(tls_ctx_reload(ctx, path("two-ca.pem"), NULL, &err) ==
	    0, "%s", err.text);
	ck_assert_int_eq(sk_X509_NAME_num(SSL_CTX_get_client_CA_list(ctx)),
	    2);
	SSL_CTX_free(ctx);
}
END_TEST

/* A handshake in memory: the server presents srv, the client client.
 * 0 when both sides finished; -1 when one of them failed. */
static int
handshake(const char *srv, const char *client, const char *crl,
    char *why, size_t len, struct peer *peer, struct cerr *perr)
{
	struct cerr err;
	SSL_CTX *sctx, *cctx;
	SSL *s, *c;
	BIO *bs, *bc;
	char crt[64], key[64];
	int i, rs = 0, rc = 0, ret = -1;

	snprintf(crt, sizeof(crt), "%s.crt", srv);
	snprintf(key, sizeof(key), "%s.key", srv);
	sctx = tls_server_ctx(path("ca.pem"), crl, path(crt), path(key), &err);
	ck_assert_msg(sctx != NULL, "%s", err.text);
	snprintf(crt, sizeof(crt), "%s.crt", client);
	snprintf(key, sizeof(key), "%s.key", client);
	cctx = tls_client_ctx(path("ca.pem"), crl, path(crt), path(key), &err);
	ck_assert_msg(cctx != NULL, "%s", err.text);
	s = SSL_new(sctx);
	c = SSL_new(cctx);
	ck_assert_int_eq(BIO_new_bio_pair(&bs, 0, &bc, 0), 1);
	SSL_set_bio(s, bs, bs);
	SSL_set_bio(c, bc, bc);
	SSL_set_accept_state(s);
	SSL_set_connect_state(c);
	why[0] = '\0';
	for (i = 0; i < 50; i++) {
		if (rc != 1 && (rc = SSL_do_handshake(c)) <= 0 &&
		    SSL_get_error(c, rc) != SSL_ERROR_WANT_READ)
			break;
		if (rs != 1 && (rs = SSL_do_handshake(s)) <= 0 &&
		    SSL_get_error(s, rs) != SSL_ERROR_WANT_READ)
			break;
		if (rc == 1 && rs == 1) {
			ret = 0;
			break;
		}
	}
	if (tls_server_verify_error(c, "127.0.0.1", why, len) == NULL)
		why[0] = '\0';
	if (peer != NULL && rs == 1)
		ret = tls_peer_identity(s, peer, perr);
	ERR_clear_error();
	SSL_free(s);
	SSL_free(c);
	SSL_CTX_free(sctx);
	SSL_CTX_free(cctx);
	return ret;
}

START_TEST(test_server_role)
{
	char why[256];
	struct peer peer;
	struct cerr err;

	ck_assert_int_eq(handshake("controller", "alice", NULL, why,
	    sizeof(why), &peer, &err), 0);
	ck_assert_str_eq(peer.name, "alice");
	ck_assert_int_eq(peer.role, ROLE_USER);
	ck_assert_str_eq(why, "");
	/* A user's certificate as the server's: the client refuses it. */
	ck_assert_int_eq(handshake("bob", "alice", NULL, why, sizeof(why),
	    NULL, NULL), -1);
	ck_assert_str_eq(why, "server certificate of 127.0.0.1 has role "
	    "'user', not 'controller'");
	ck_assert_int_eq(handshake("norole", "alice", NULL, why, sizeof(why),
	    NULL, NULL), -1);
	ck_assert_msg(strstr(why, "server certificate of 127.0.0.1 names no "
	    "role") != NULL && strstr(why, "OU=controller") != NULL, "%s",
	    why);
	/* A revoked controller: the client's CRL refuses it. */
	write_leaf("controller", "controller", "controller", 3);
	ck_assert_int_eq(handshake("controller", "alice", path("bob.crl"),
	    why, sizeof(why), NULL, NULL), -1);
	ck_assert_msg(strstr(why, "certificate revoked") != NULL, "%s", why);
}
END_TEST

START_TEST(test_own_role)
{
	struct cerr err;
	SSL_CTX *ctx;

	ctx = tls_server_ctx(path("ca.pem"), NULL, path("controller.crt"),
	    path("controller.key"), &err);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(tls_ctx_check_own_role(ctx, ROLE_CONTROLLER, "c.crt",
	    &err), 0);
	SSL_CTX_free(ctx);
	ctx = tls_server_ctx(path("ca.pem"), NULL, path("bob.crt"),
	    path("bob.key"), &err);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(tls_ctx_check_own_role(ctx, ROLE_CONTROLLER, "b.crt",
	    &err), -1);
	ck_assert_msg(strstr(err.text, "certificate b.crt has role 'user', "
	    "not 'controller'") != NULL, "%s", err.text);
	SSL_CTX_free(ctx);
	ctx = tls_server_ctx(path("ca.pem"), NULL, path("norole.crt"),
	    path("norole.key"), &err);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(tls_ctx_check_own_role(ctx, ROLE_CONTROLLER, "n.crt",
	    &err), -1);
	ck_assert_msg(strstr(err.text, "names no role") != NULL &&
	    strstr(err.text, "cohort-pki") != NULL, "%s", err.text);
	SSL_CTX_free(ctx);
}
END_TEST

START_TEST(test_client_role)
{
	char why[256];
	struct peer peer;
	struct cerr err;

	/* The controller's certificate is no client's. */
	ck_assert_int_eq(handshake("controller", "controller", NULL, why,
	    sizeof(why), &peer, &err), -1);
	ck_assert_msg(strstr(err.text, "role 'controller'") != NULL, "%s",
	    err.text);
	/* A revoked client never gets through the handshake. */
	ck_assert_int_eq(handshake("controller", "bob", path("bob.crl"), why,
	    sizeof(why), &peer, &err), -1);
	ck_assert_int_eq(handshake("controller", "alice", path("bob.crl"), why,
	    sizeof(why), &peer, &err), 0);
}
END_TEST

/* ---- errors in words ---- */

/* tls_server_ctx(ca, NULL, crt, key) fails, its text holding want (and,
 * when want2 is not NULL, want2). */
static void
bad_ctx(const char *ca, const char *crt, const char *key, const char *want,
    const char *want2)
{
	struct cerr err;
	SSL_CTX *ctx;

	cerr_clear(&err);
	ctx = tls_server_ctx(ca, NULL, crt, key, &err);
	ck_assert_ptr_null(ctx);
	ck_assert_msg(strstr(err.text, want) != NULL, "want '%s': %s", want,
	    err.text);
	ck_assert_msg(want2 == NULL || strstr(err.text, want2) != NULL,
	    "want '%s': %s", want2, err.text);
	ck_assert_msg(strstr(err.text, "error:") == NULL, "an OpenSSL code: "
	    "%s", err.text);
}

START_TEST(test_load_words)
{
	char want[256];
	struct cerr err;
	SSL_CTX *ctx;

	/* Missing and unreadable files name the file and why. */
	bad_ctx(path("ca.pem"), path("nope.crt"), path("bob.key"),
	    "nope.crt: No such file or directory", NULL);
	bad_ctx(path("nope.pem"), path("bob.crt"), path("bob.key"),
	    "nope.pem: No such file or directory", NULL);
	/* Not PEM. */
	write_text("garbage.txt", "hello, not a certificate\n");
	snprintf(want, sizeof(want), "certificate %s: not PEM",
	    path("garbage.txt"));
	bad_ctx(path("ca.pem"), path("garbage.txt"), path("bob.key"), want,
	    NULL);
	snprintf(want, sizeof(want), "key %s: not PEM", path("garbage.txt"));
	bad_ctx(path("ca.pem"), path("bob.crt"), path("garbage.txt"), want,
	    NULL);
	snprintf(want, sizeof(want), "CA file %s: not PEM",
	    path("garbage.txt"));
	bad_ctx(path("garbage.txt"), path("bob.crt"), path("bob.key"), want,
	    NULL);
	/* A key that is not the certificate's. */
	snprintf(want, sizeof(want), "key %s does not match certificate %s",
	    path("alice.key"), path("bob.crt"));
	bad_ctx(path("ca.pem"), path("bob.crt"), path("alice.key"), want,
	    NULL);
	/* Out of its dates: the date in words. */
	write_leaf_by("old", "user", "old", 20, ca_cert, ca_key, -48 * HOUR,
	    -24 * HOUR);
	snprintf(want, sizeof(want), "certificate %s expired on 20",
	    path("old.crt"));
	bad_ctx(path("ca.pem"), path("old.crt"), path("old.key"), want,
	    " UTC; make a new one");
	write_leaf_by("young", "user", "young", 21, ca_cert, ca_key,
	    24 * HOUR, 48 * HOUR);
	snprintf(want, sizeof(want), "certificate %s is not valid until 20",
	    path("young.crt"));
	bad_ctx(path("ca.pem"), path("young.crt"), path("young.key"), want,
	    "clock");
	/* Signed by another CA: the daemons' own check names both files. */
	write_leaf_by("foreign", "controller", "controller", 22, other_cert,
	    other_key, -HOUR, HOUR);
	ctx = tls_server_ctx(path("ca.pem"), NULL, path("foreign.crt"),
	    path("foreign.key"), &err);
	ck_assert_msg(ctx != NULL, "%s", err.text);
	ck_assert_int_eq(tls_ctx_check_own_issuer(ctx, path("foreign.crt"),
	    path("ca.pem"), &err), -1);
	snprintf(want, sizeof(want), "certificate %s is not signed by the CA "
	    "in %s", path("foreign.crt"), path("ca.pem"));
	ck_assert_msg(strstr(err.text, want) != NULL, "%s", err.text);
	SSL_CTX_free(ctx);
	ctx = tls_server_ctx(path("ca.pem"), NULL, path("controller.crt"),
	    path("controller.key"), &err);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(tls_ctx_check_own_issuer(ctx, path("controller.crt"),
	    path("ca.pem"), &err), 0);
	SSL_CTX_free(ctx);
}
END_TEST

/* A handshake between a context made with tls_server_ctx (controller)
 * and a client context made by hand, so that the client may present a
 * certificate tls_client_ctx would refuse to load. why_s: the server's
 * view (tls_error_string right after the failure), why_c the client's. */
static void
raw_handshake(const char *client, char *why_s, char *why_c, size_t len)
{
	struct cerr err;
	SSL_CTX *sctx, *cctx;
	SSL *s, *c;
	BIO *bs, *bc;
	char crt[64], key[64];
	int i, rs = 0, rc = 0;

	sctx = tls_server_ctx(path("ca.pem"), NULL, path("controller.crt"),
	    path("controller.key"), &err);
	ck_assert_msg(sctx != NULL, "%s", err.text);
	ck_assert_ptr_nonnull(cctx = SSL_CTX_new(TLS_client_method()));
	snprintf(crt, sizeof(crt), "%s.crt", client);
	snprintf(key, sizeof(key), "%s.key", client);
	ck_assert_int_eq(SSL_CTX_use_certificate_file(cctx, path(crt),
	    SSL_FILETYPE_PEM), 1);
	ck_assert_int_eq(SSL_CTX_use_PrivateKey_file(cctx, path(key),
	    SSL_FILETYPE_PEM), 1);
	SSL_CTX_set_verify(cctx, SSL_VERIFY_NONE, NULL);
	s = SSL_new(sctx);
	c = SSL_new(cctx);
	ck_assert_int_eq(BIO_new_bio_pair(&bs, 0, &bc, 0), 1);
	SSL_set_bio(s, bs, bs);
	SSL_set_bio(c, bc, bc);
	SSL_set_accept_state(s);
	SSL_set_connect_state(c);
	why_s[0] = why_c[0] = '\0';
	ERR_clear_error();
	for (i = 0; i < 50 && !(why_s[0] && why_c[0]); i++) {
		if ((rc = SSL_do_handshake(c)) <= 0 &&
		    SSL_get_error(c, rc) != SSL_ERROR_WANT_READ) {
			tls_error_string(why_c, len);
			/* TLS 1.3: the verdict comes on the first read. */
		} else if (rc == 1 && !why_c[0]) {
			char b[1];

			if (SSL_read(c, b, 1) <= 0 && SSL_get_error(c, 0) !=
			    SSL_ERROR_WANT_READ && ERR_peek_error() != 0)
				tls_error_string(why_c, len);
		}
		if (!why_s[0] && (rs = SSL_do_handshake(s)) <= 0 &&
		    SSL_get_error(s, rs) != SSL_ERROR_WANT_READ) {
			/* What tls_bufferevent_error says on the server. */
			ERR_clear_error();
			ck_assert_ptr_nonnull(tls_peer_error(s, why_s, len));
		}
	}
	SSL_free(s);
	SSL_free(c);
	SSL_CTX_free(sctx);
	SSL_CTX_free(cctx);
}

START_TEST(test_handshake_words)
{
	char why_s[320], why_c[320];

	/* An expired client: the server says since when, the client hears
	 * that its certificate has expired; no OpenSSL code alone. */
	write_leaf_by("old", "user", "old", 20, ca_cert, ca_key, -48 * HOUR,
	    -24 * HOUR);
	raw_handshake("old", why_s, why_c, sizeof(why_s));
	ck_assert_msg(strncmp(why_s, "certificate expired on 20", 25) == 0 &&
	    strstr(why_s, " UTC (CN=old)") != NULL, "server: %s", why_s);
	ck_assert_msg(strstr(why_c, "the peer refused our certificate: it "
	    "has expired") != NULL, "client: %s", why_c);
	/* Another CA's client: unknown CA, with its issuer. */
	write_leaf_by("foreign", "user", "foreign", 22, other_cert, other_key,
	    -HOUR, HOUR);
	raw_handshake("foreign", why_s, why_c, sizeof(why_s));
	ck_assert_msg(strstr(why_s, "certificate signed by an unknown CA "
	    "(CN=foreign, issued by CN=other-ca, which is not in the CA "
	    "file)") != NULL, "server: %s", why_s);
	ck_assert_msg(strstr(why_c, "unknown CA") != NULL &&
	    strstr(why_c, "error:") == NULL, "client: %s", why_c);
	/* A CA made again with the same name: not "not in the CA file",
	 * which would contradict the file. */
	{
		EVP_PKEY *twin_key = EVP_EC_gen("P-256");
		X509 *twin = pki_mint(twin_key, "ca", "cohort-ca", 1, NULL,
		    NULL, NULL, NULL);

		write_leaf_by("twin", "user", "twin", 23, twin, twin_key,
		    -HOUR, HOUR);
		raw_handshake("twin", why_s, why_c, sizeof(why_s));
		ck_assert_msg(strstr(why_s, "signature does not match the CA "
		    "named CN=cohort-ca in the CA file (CN=twin; a different "
		    "CA with the same name?)") != NULL, "server: %s", why_s);
		X509_free(twin);
		EVP_PKEY_free(twin_key);
	}
}
END_TEST

START_TEST(test_words)
{
	char buf[256];
	X509 *c = read_cert("bob");

	ck_assert_str_eq(tls_words_verify(X509_V_ERR_CERT_REVOKED, c, buf,
	    sizeof(buf)), "certificate revoked by the CRL (CN=bob)");
	ck_assert_msg(strncmp(tls_words_verify(X509_V_ERR_CERT_HAS_EXPIRED, c,
	    buf, sizeof(buf)), "certificate expired on 20", 25) == 0, "%s",
	    buf);
	/* OpenSSL's reason, without its code. */
	ck_assert_str_eq(tls_words_error(ERR_PACK(ERR_LIB_SSL, 0,
	    SSL_R_WRONG_VERSION_NUMBER), buf, sizeof(buf)),
	    "wrong version number");
	ck_assert_str_eq(tls_words_alert(ERR_PACK(ERR_LIB_SSL, 0,
	    SSL_AD_REASON_OFFSET + SSL_AD_CERTIFICATE_REVOKED)),
	    "the peer refused our certificate: it is revoked");
	ck_assert_ptr_null(tls_words_alert(ERR_PACK(ERR_LIB_SSL, 0,
	    SSL_R_WRONG_VERSION_NUMBER)));
	X509_free(c);
}
END_TEST

static Suite *
tls_suite(void)
{
	Suite *s = suite_create("tls");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_store_load);
	tcase_add_test(tc, test_bad_crls);
	tcase_add_test(tc, test_crl_per_ca);
	tcase_add_test(tc, test_reload_and_recheck);
	tcase_add_test(tc, test_reload_names_new_ca);
	tcase_add_test(tc, test_server_role);
	tcase_add_test(tc, test_own_role);
	tcase_add_test(tc, test_client_role);
	tcase_add_test(tc, test_load_words);
	tcase_add_test(tc, test_handshake_words);
	tcase_add_test(tc, test_words);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(tls_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
