/* Certificates minted in memory for the Check suites that speak TLS
 * (check_repl_net.c), as cohort-pki would make them. */
#include "config.h"

#include <check.h>

#include <openssl/evp.h>
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
pki_mint(EVP_PKEY *key, const char *ou, const char *cn, long serial,
    X509 *issuer, EVP_PKEY *issuer_key, const char *eku, const char *san)
{
	X509 *c = X509_new();
	X509_NAME *n = X509_NAME_new();

	X509_set_version(c, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(c), serial);
	X509_gmtime_adj(X509_getm_notBefore(c), -HOUR);
	X509_gmtime_adj(X509_getm_notAfter(c), 24 * HOUR);
	X509_NAME_add_entry_by_txt(n, "O", MBSTRING_ASC,
	    (const unsigned char *)"cohort", -1, -1, 0);
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
		add_ext(c, issuer, NID_ext_key_usage, eku);
		add_ext(c, issuer, NID_subject_alt_name, san);
	}
	ck_assert_int_gt(X509_sign(c, issuer != NULL ? issuer_key : key,
	    EVP_sha256()), 0);
	return c;
}
