/* TLS failures in words a person can act on: which certificate, what is
 * wrong with it and since when ("certificate expired on 2026-11-30
 * 17:00:00 UTC (CN=bob)"), never an OpenSSL code alone. lib/tls.c uses
 * these for files it loads and for handshakes that fail. */
#ifndef COHORT_TLS_WORDS_H
#define COHORT_TLS_WORDS_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/x509.h>

/* t as "2026-11-30 17:00:00 UTC" in buf; "an unreadable date" when it
 * does not convert. Returns buf. */
const char *tls_words_time(const ASN1_TIME *t, char *buf, size_t len);

/* Why verification result vr (X509_V_ERR_*) refused cert (the failing
 * certificate, may be NULL), e.g. "certificate expired on DATE (CN=bob)",
 * "certificate revoked by the CRL (CN=bob)", "certificate signed by an
 * unknown CA (CN=bob, issued by CN=other-ca, which is not in the CA
 * file)". Returns
 * buf. */
const char *tls_words_verify(long vr, X509 *cert, char *buf, size_t len);
/* Does verify result vr mean "not signed by a CA we know"? */
bool tls_words_unknown_ca(long vr);

/* The words for an OpenSSL error that is a TLS alert about our own
 * certificate, sent by the peer ("the peer refused our certificate: it
 * has expired"), or NULL for any other error. */
const char *tls_words_alert(unsigned long e);

/* e as OpenSSL's reason in words ("wrong version number"), without the
 * "error:0A00010B:SSL routines::" prefix; the whole string when OpenSSL
 * has no reason text. Returns buf. */
const char *tls_words_error(unsigned long e, char *buf, size_t len);

/* Does the file at path contain a PEM block whose label contains label
 * ("CERTIFICATE", "PRIVATE KEY")? *encrypted (may be NULL) is set when
 * it is an encrypted key. false when the file cannot be read. */
bool tls_words_pem_has(const char *path, const char *label, bool *encrypted);

#endif
