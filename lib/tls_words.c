#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "lib/tls_words.h"

const char *
tls_words_time(const ASN1_TIME *t, char *buf, size_t len)
{
	struct tm tm;

	if (t == NULL || ASN1_TIME_to_tm(t, &tm) != 1 ||
	    strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
		snprintf(buf, len, "an unreadable date");
	return buf;
}

/* "CN=bob" (the subject's CN, else its whole name) of cert or issuer. */
static const char *
tls_words_name(X509_NAME *n, char *buf, size_t len)
{
	char cn[128];

	if (n == NULL)
		snprintf(buf, len, "unknown");
	else if (X509_NAME_get_text_by_NID(n, NID_commonName, cn,
	    sizeof(cn)) > 0)
		snprintf(buf, len, "CN=%s", cn);
	else
		X509_NAME_oneline(n, buf, (int)len);
	return buf;
}

bool
tls_words_unknown_ca(long vr)
{
	switch (vr) {
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
	case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
	case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
	case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
		return true;
	default:
		return false;
	}
}

const char *
tls_words_verify(long vr, X509 *cert, char *buf, size_t len)
{
	char when[64], who[160], by[160];

	if (cert != NULL)
		tls_words_name(X509_get_subject_name(cert), who, sizeof(who));
	else
		snprintf(who, sizeof(who), "unknown");
	if (tls_words_unknown_ca(vr)) {
		snprintf(buf, len, "certificate signed by an unknown CA (%s, "
		    "issued by %s, which is not in the CA file)", who,
		    cert != NULL ? tls_words_name(X509_get_issuer_name(cert),
		    by, sizeof(by)) : "unknown");
		return buf;
	}
	switch (vr) {
	case X509_V_ERR_CERT_SIGNATURE_FAILURE:
		/* A CA of that name is in the file, but not the one that
		 * signed: a PKI made again with the same names. */
		snprintf(buf, len, "certificate's signature does not match "
		    "the CA named %s in the CA file (%s; a different CA with "
		    "the same name?)", cert != NULL ? tls_words_name(
		    X509_get_issuer_name(cert), by, sizeof(by)) : "unknown",
		    who);
		return buf;
	case X509_V_ERR_CERT_HAS_EXPIRED:
		if (cert == NULL)
			break;
		snprintf(buf, len, "certificate expired on %s (%s)",
		    tls_words_time(X509_get0_notAfter(cert), when,
		    sizeof(when)), who);
		return buf;
	case X509_V_ERR_CERT_NOT_YET_VALID:
		if (cert == NULL)
			break;
		snprintf(buf, len, "certificate not valid until %s (%s; check "
		    "both machines' clocks)", tls_words_time(
		    X509_get0_notBefore(cert), when, sizeof(when)), who);
		return buf;
	case X509_V_ERR_CERT_REVOKED:
		snprintf(buf, len, "certificate revoked by the CRL (%s)", who);
		return buf;
	}
	snprintf(buf, len, "%s (%s)", X509_verify_cert_error_string(vr), who);
	return buf;
}

const char *
tls_words_alert(unsigned long e)
{
	int alert;

	if (e == 0 || ERR_GET_LIB(e) != ERR_LIB_SSL)
		return NULL;
	alert = ERR_GET_REASON(e) - SSL_AD_REASON_OFFSET;
	switch (alert) {
	case SSL_AD_CERTIFICATE_EXPIRED:
		return "the peer refused our certificate: it has expired "
		    "(make a new one with cohort-pki)";
	case SSL_AD_CERTIFICATE_REVOKED:
		return "the peer refused our certificate: it is revoked";
	case SSL_AD_UNKNOWN_CA:
		return "the peer refused our certificate: it is not signed by "
		    "a CA the peer trusts (unknown CA)";
	case SSL_AD_BAD_CERTIFICATE:
	case SSL_AD_UNSUPPORTED_CERTIFICATE:
	case SSL_AD_CERTIFICATE_UNKNOWN:
		return "the peer refused our certificate (bad certificate)";
	case SSL_AD_CERTIFICATE_REQUIRED:
		return "the peer wants a client certificate and got none";
	case SSL_AD_ACCESS_DENIED:
		return "the peer refused our certificate (access denied)";
	}
	return NULL;
}

const char *
tls_words_error(unsigned long e, char *buf, size_t len)
{
	const char *r;

	/* Loaded by the first SSL_CTX_new; a tool may ask before. */
	OPENSSL_init_ssl(OPENSSL_INIT_LOAD_SSL_STRINGS |
	    OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL);
	r = ERR_reason_error_string(e);
	if (r != NULL)
		snprintf(buf, len, "%s", r);
	else
		ERR_error_string_n(e, buf, len);
	return buf;
}

bool
tls_words_pem_has(const char *path, const char *label, bool *encrypted)
{
	char line[256], want[96];
	bool found = false;
	FILE *f;

	if (encrypted != NULL)
		*encrypted = false;
	if ((f = fopen(path, "r")) == NULL)
		return false;
	snprintf(want, sizeof(want), "%s-----", label);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "-----BEGIN ", 11) == 0 &&
		    strstr(line + 11, want) != NULL)
			found = true;
		if (encrypted != NULL && (strncmp(line,
		    "-----BEGIN ENCRYPTED PRIVATE KEY-----", 37) == 0 ||
		    strncmp(line, "Proc-Type: 4,ENCRYPTED", 22) == 0))
			*encrypted = true;
	}
	fclose(f);
	return found;
}
