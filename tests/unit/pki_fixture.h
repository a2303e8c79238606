/* Certificates minted in memory for the Check suites that speak TLS. */
#ifndef COHORT_TESTS_PKI_FIXTURE_H
#define COHORT_TESTS_PKI_FIXTURE_H

#include <openssl/x509.h>

/* O=cohort/OU=ou/CN=cn over key, valid from an hour ago for a day,
 * signed by issuer_key for issuer (issuer NULL: a CA, signed by key
 * itself) with extended key usage eku and subjectAltName san. The
 * caller's; fails the test on error. */
X509 *pki_mint(EVP_PKEY *key, const char *ou, const char *cn, long serial,
    X509 *issuer, EVP_PKEY *issuer_key, const char *eku, const char *san);

#endif
