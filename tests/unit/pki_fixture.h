/* Certificates, keys and CRLs minted in memory for the Check suites that
 * speak TLS, as cohort-pki would make them; helpers fail the test on
 * error. */
#ifndef COHORT_TESTS_PKI_FIXTURE_H
#define COHORT_TESTS_PKI_FIXTURE_H

#include <openssl/x509.h>

/* O=cohort/OU=ou/CN=cn over key (ou NULL: no OU), valid from nb to na
 * seconds from now, signed by issuer_key for issuer (issuer NULL: a CA,
 * signed by key itself) with extended key usage eku and subjectAltName
 * san (either NULL: none). The caller's. */
X509 *pki_mint_dated(EVP_PKEY *key, const char *ou, const char *cn,
    long serial, X509 *issuer, EVP_PKEY *issuer_key, const char *eku,
    const char *san, long nb, long na);

/* The same, valid from an hour ago for a day. */
X509 *pki_mint(EVP_PKEY *key, const char *ou, const char *cn, long serial,
    X509 *issuer, EVP_PKEY *issuer_key, const char *eku, const char *san);

/* A CRL of issuer (signed with key) revoking serials[0..n), valid from
 * last to next seconds from now. The caller's. */
X509_CRL *pki_mint_crl(X509 *issuer, EVP_PKEY *key, const long *serials,
    int n, long last, long next);

/* PEM files: a certificate, a key, a CRL (mode "w", or "a" to add one
 * more to the file). */
void pki_write_cert(const char *path, X509 *cert);
void pki_write_key(const char *path, EVP_PKEY *key);
void pki_write_crl(const char *path, X509_CRL *crl, const char *mode);

/* The usual cast: a CA (serial 1), the controller's certificate
 * (serial 2, OU=controller, serverAuth and clientAuth, IP:127.0.0.1) and
 * an agent's (serial 3, OU=agent, CN=node01, with agent_eku and
 * agent_san). pki_free undoes pki_make. */
struct pki {
	EVP_PKEY *ca_key, *ctl_key, *agent_key;
	X509 *ca, *ctl, *agent;
};

void pki_make(struct pki *p, const char *agent_eku, const char *agent_san);
void pki_free(struct pki *p);

#endif
