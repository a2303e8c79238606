/* cohort-simnodes' credentials: a node certificate for each simulated
 * node, minted in-process from the development CA (O=cohort, OU=agent,
 * CN=NAME, clientAuth, SAN DNS:NAME), as `cohort-pki` would, and the
 * one client TLS context every node's connection shares. */
#ifndef COHORT_SIM_SIMCERT_H
#define COHORT_SIM_SIMCERT_H

#include <openssl/ssl.h>

#include "lib/err.h"

struct simcert;

/* Read the CA certificate and its key. NULL with err (a file that does
 * not read, a key that does not match). */
struct simcert *simcert_create(const char *ca_path, const char *key_path,
    struct cerr *err);
void simcert_destroy(struct simcert *m);

/* A fresh P-256 key, the caller's; NULL on failure (the OpenSSL error
 * queue says why). */
EVP_PKEY *simcert_key(struct simcert *m);
/* An agent certificate for name over key, signed by the CA, the
 * caller's; NULL on failure (the OpenSSL error queue). */
X509 *simcert_mint(struct simcert *m, EVP_PKEY *key, const char *name);

/* The shared client context: TLS 1.3, verifies the controller against
 * ca (and its role), no certificate of its own (each connection sets
 * its node's), small idle buffers. NULL with err. */
SSL_CTX *simcert_client_ctx(const char *ca, struct cerr *err);

#endif
