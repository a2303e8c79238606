/* Certificates, keys and CRLs minted in memory for the Check suites that
 * speak TLS (check_link.c, check_tls.c, check_repl_net.c), so nothing
 * depends on the openssl command. */
#include "config.h"

#include <check.h>
#include <stdio.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "tests/unit/pki_fixture.h"

#define HOUR 3600L

static void
add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX v3;
	X509_EXTENSION *ext;

	X509V3_set_ctx(&v3, issuer, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
	ck_assert_ptr_nonnull(ext);
	ck_assert_int_eq(X509_add_ext(cert, ext, -1), 1);
	X509_EXTENSION_free(ext);
}

X509 *
pki_mint_dated(EVP_PKEY *key, const char *ou, const char *cn, long serial,
    X509 *issuer, EVP_PKEY *issuer_key, const char *eku, const char *san,
    long nb, long na)
{
	X509 *c = X509_new();
	X509_NAME *n = X509_NAME_new();

	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_nonnull(n);
	X509_set_version(c, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(c), serial);
	X509_gmtime_adj(X509_getm_notBefore(c), nb);
	X509_gmtime_adj(X509_getm_notAfter(c), na);
	X509_NAME_add_entry_by_txt(n, "O", MBSTRING_ASC,
	    (const unsigned char *)"cohort", -1, -1, 0);
	if (ou != NULL)
		X509_NAME_add_entry_by_txt(n, "OU", MBSTRING_ASC,
		    (const unsigned char *)ou, -1, -1, 0);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
	    (const unsigned char *)cn, -1, -1, 0);
	X509_set_subject_name(c, n);
	X509_set_issuer_name(c, issuer != NULL ?
	    X509_get_subject_name(issuer) : n);
	X509_NAME_free(n);
	X509_set_pubkey(c, key);
	if (issuer == NULL) {
		add_ext(c, c, NID_basic_constraints, "critical,CA:TRUE");
		add_ext(c, c, NID_key_usage, "critical,keyCertSign,cRLSign");
	} else {
		add_ext(c, issuer, NID_basic_constraints, "critical,CA:FALSE");
		if (eku != NULL)
			add_ext(c, issuer, NID_ext_key_usage, eku);
		if (san != NULL)
			add_ext(c, issuer, NID_subject_alt_name, san);
	}
	ck_assert_int_gt(X509_sign(c, issuer != NULL ? issuer_key : key,
	    EVP_sha256()), 0);
	return c;
}

X509 *
pki_mint(EVP_PKEY *key, const char *ou, const char *cn, long serial,
    X509 *issuer, EVP_PKEY *issuer_key, const char *eku, const char *san)
{
	return pki_mint_dated(key, ou, cn, serial, issuer, issuer_key, eku,
	    san, -HOUR, 24 * HOUR);
}

X509_CRL *
pki_mint_crl(X509 *issuer, EVP_PKEY *key, const long *serials, int n,
    long last, long next)
{
	X509_CRL *crl = X509_CRL_new();
	ASN1_TIME *t = ASN1_TIME_new();
	X509_REVOKED *r;
	ASN1_INTEGER *sn;
	int i;

	ck_assert_ptr_nonnull(crl);
	ck_assert_ptr_nonnull(t);
	X509_CRL_set_version(crl, 1);
	X509_CRL_set_issuer_name(crl, X509_get_subject_name(issuer));
	X509_gmtime_adj(t, last);
	X509_CRL_set1_lastUpdate(crl, t);
	X509_gmtime_adj(t, next);
	X509_CRL_set1_nextUpdate(crl, t);
	for (i = 0; i < n; i++) {
		r = X509_REVOKED_new();
		sn = ASN1_INTEGER_new();
		ASN1_INTEGER_set(sn, serials[i]);
		X509_REVOKED_set_serialNumber(r, sn);
		X509_gmtime_adj(t, -60);
		X509_REVOKED_set_revocationDate(r, t);
		X509_CRL_add0_revoked(crl, r);
		ASN1_INTEGER_free(sn);
	}
	X509_CRL_sort(crl);
	ck_assert_int_gt(X509_CRL_sign(crl, key, EVP_sha256()), 0);
	ASN1_TIME_free(t);
	return crl;
}

void
pki_write_cert(const char *path, X509 *cert)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(PEM_write_X509(f, cert), 1);
	fclose(f);
}

void
pki_write_key(const char *path, EVP_PKEY *key)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL,
	    NULL), 1);
	fclose(f);
}

void
pki_write_crl(const char *path, X509_CRL *crl, const char *mode)
{
	FILE *f = fopen(path, mode);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(PEM_write_X509_CRL(f, crl), 1);
	fclose(f);
}

void
pki_make(struct pki *p, const char *agent_eku, const char *agent_san)
{
	ck_assert_ptr_nonnull(p->ca_key = EVP_EC_gen("P-256"));
	ck_assert_ptr_nonnull(p->ctl_key = EVP_EC_gen("P-256"));
	ck_assert_ptr_nonnull(p->agent_key = EVP_EC_gen("P-256"));
	p->ca = pki_mint(p->ca_key, "ca", "test CA", 1, NULL, NULL, NULL,
	    NULL);
	p->ctl = pki_mint(p->ctl_key, "controller", "controller", 2, p->ca,
	    p->ca_key, "serverAuth,clientAuth", "IP:127.0.0.1");
	p->agent = pki_mint(p->agent_key, "agent", "node01", 3, p->ca,
	    p->ca_key, agent_eku, agent_san);
}

void
pki_free(struct pki *p)
{
	X509_free(p->ca);
	X509_free(p->ctl);
	X509_free(p->agent);
	EVP_PKEY_free(p->ca_key);
	EVP_PKEY_free(p->ctl_key);
	EVP_PKEY_free(p->agent_key);
}
