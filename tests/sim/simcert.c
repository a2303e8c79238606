/* Node certificates minted in-process. OpenSSL only: the rest of the
 * simulator sees keys and certificates as opaque. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "lib/tls.h"
#include "tests/sim/simcert.h"

struct simcert {
	X509 *ca;
	EVP_PKEY *cakey;
	X509_EXTENSION *ext[3];		/* basicConstraints, keyUsage, EKU */
	/* Fetched once: OpenSSL 3 looks the algorithm up under locks on
	 * every implicit use. */
	EVP_MD_CTX *sign_tmpl;		/* DigestSignInit done with the CA key */
	EVP_MD_CTX *sign;
	uint64_t serial;
};

/* A PEM file's first object, read by reader. */
static void *
simcert_read(const char *path, void *(*reader)(FILE *), struct cerr *err)
{
	FILE *f;
	void *o;

	if ((f = fopen(path, "r")) == NULL) {
		cerr_set(err, ERR_INVALID, "%s: %s", path, strerror(errno));
		return NULL;
	}
	o = reader(f);
	fclose(f);
	if (o == NULL)
		cerr_set(err, ERR_INVALID, "%s: not a PEM certificate or key",
		    path);
	return o;
}

static void *
simcert_read_x509(FILE *f)
{
	return PEM_read_X509(f, NULL, NULL, NULL);
}

static void *
simcert_read_key(FILE *f)
{
	return PEM_read_PrivateKey(f, NULL, NULL, NULL);
}

struct simcert *
simcert_create(const char *ca_path, const char *key_path, struct cerr *err)
{
	static const struct {
		int nid;
		const char *value;
	} fixed[3] = {
		{ NID_basic_constraints, "critical,CA:FALSE" },
		{ NID_key_usage, "critical,digitalSignature" },
		{ NID_ext_key_usage, "clientAuth" },
	};
	struct simcert *m;
	unsigned i;

	if ((m = calloc(1, sizeof(*m))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	if ((m->ca = simcert_read(ca_path, simcert_read_x509, err)) == NULL ||
	    (m->cakey = simcert_read(key_path, simcert_read_key,
	    err)) == NULL)
		goto fail;
	if (X509_check_private_key(m->ca, m->cakey) != 1) {
		cerr_set(err, ERR_INVALID, "%s does not match %s", key_path,
		    ca_path);
		goto fail;
	}
	for (i = 0; i < 3; i++)
		if ((m->ext[i] = X509V3_EXT_conf_nid(NULL, NULL, fixed[i].nid,
		    fixed[i].value)) == NULL) {
			cerr_set(err, ERR_INTERNAL, "cannot make extensions");
			goto fail;
		}
	if ((m->sign_tmpl = EVP_MD_CTX_new()) == NULL ||
	    (m->sign = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestSignInit_ex(m->sign_tmpl, NULL, "SHA256", NULL, NULL,
	    m->cakey, NULL) != 1) {
		cerr_set(err, ERR_INVALID, "cannot sign with %s", key_path);
		goto fail;
	}
	if (RAND_bytes((unsigned char *)&m->serial, sizeof(m->serial)) != 1)
		m->serial = (uint64_t)time(NULL) << 20;
	/* Positive and far from overflowing as it counts up. */
	m->serial = (m->serial >> 2) | 1;
	return m;
fail:
	simcert_destroy(m);
	return NULL;
}

void
simcert_destroy(struct simcert *m)
{
	unsigned i;

	if (m == NULL)
		return;
	X509_free(m->ca);
	EVP_PKEY_free(m->cakey);
	for (i = 0; i < 3; i++)
		X509_EXTENSION_free(m->ext[i]);
	EVP_MD_CTX_free(m->sign_tmpl);
	EVP_MD_CTX_free(m->sign);
	free(m);
}

/* A P-256 key as a legacy EC_KEY. OpenSSL 3.0 encodes a provider key
 * into a certificate through its encoder and decoder registries (a
 * lookup over every provider for each certificate: three quarters of the
 * minting time); a legacy key takes the direct ASN.1 method, which
 * makes 10,000 certificates a second or so instead of four. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
EVP_PKEY *
simcert_key(struct simcert *m)
{
	EVP_PKEY *k = NULL;
	EC_KEY *ec;

	if ((ec = EC_KEY_new_by_curve_name(NID_X9_62_prime256v1)) == NULL)
		return NULL;
	if (EC_KEY_generate_key(ec) != 1 || (k = EVP_PKEY_new()) == NULL ||
	    EVP_PKEY_assign_EC_KEY(k, ec) != 1) {
		EVP_PKEY_free(k);
		EC_KEY_free(ec);
		return NULL;
	}
	return k;
}
#pragma GCC diagnostic pop

X509 *
simcert_mint(struct simcert *m, EVP_PKEY *key, const char *name)
{
	X509 *x;
	X509_NAME *subj;
	GENERAL_NAMES *san = NULL;
	GENERAL_NAME *gn;
	ASN1_IA5STRING *dns;
	unsigned i;

	if ((x = X509_new()) == NULL)
		return NULL;
	subj = X509_get_subject_name(x);
	if (X509_set_version(x, 2) != 1 ||
	    ASN1_INTEGER_set_uint64(X509_get_serialNumber(x),
	    m->serial++) != 1 ||
	    X509_gmtime_adj(X509_getm_notBefore(x), -3600) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(x), 365L * 86400) == NULL ||
	    X509_set_pubkey(x, key) != 1 ||
	    X509_NAME_add_entry_by_txt(subj, "O", MBSTRING_ASC,
	    (const unsigned char *)"cohort", -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(subj, "OU", MBSTRING_ASC,
	    (const unsigned char *)"agent", -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(subj, "CN", MBSTRING_ASC,
	    (const unsigned char *)name, -1, -1, 0) != 1 ||
	    X509_set_issuer_name(x, X509_get_subject_name(m->ca)) != 1)
		goto fail;
	for (i = 0; i < 3; i++)
		if (X509_add_ext(x, m->ext[i], -1) != 1)
			goto fail;
	/* subjectAltName DNS:name, built directly (no config parsing). */
	if ((san = GENERAL_NAMES_new()) == NULL ||
	    (gn = GENERAL_NAME_new()) == NULL)
		goto fail;
	if ((dns = ASN1_IA5STRING_new()) == NULL ||
	    ASN1_STRING_set(dns, name, -1) != 1) {
		ASN1_IA5STRING_free(dns);
		GENERAL_NAME_free(gn);
		goto fail;
	}
	GENERAL_NAME_set0_value(gn, GEN_DNS, dns);
	if (sk_GENERAL_NAME_push(san, gn) == 0) {
		GENERAL_NAME_free(gn);
		goto fail;
	}
	if (X509_add1_ext_i2d(x, NID_subject_alt_name, san, 0,
	    X509V3_ADD_DEFAULT) != 1)
		goto fail;
	if (EVP_MD_CTX_copy_ex(m->sign, m->sign_tmpl) != 1 ||
	    X509_sign_ctx(x, m->sign) == 0)
		goto fail;
	GENERAL_NAMES_free(san);
	return x;
fail:
	GENERAL_NAMES_free(san);
	X509_free(x);
	return NULL;
}


SSL_CTX *
simcert_client_ctx(const char *ca, struct cerr *err)
{
	SSL_CTX *ctx;
	char ebuf[256];

	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL)
		goto fail;
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1)
		goto fail;
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF |
	    SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET);
	/* Idle connections give their 2 x 16 KiB record buffers back. */
	SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
	    SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1)
		goto fail;
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	/* Only the controller's certificate, not any the CA signed. */
	if (tls_ctx_expect_controller(ctx) == -1)
		goto fail;
	return ctx;
fail:
	cerr_set(err, ERR_INVALID, "TLS context: %s",
	    tls_error_string(ebuf, sizeof(ebuf)));
	SSL_CTX_free(ctx);
	return NULL;
}
