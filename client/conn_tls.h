/* For cohort-mux: take the TLS stream out of a cconn opened with
 * cconn_open_tls, to drive it from an event loop. */
#ifndef COHORT_CLIENT_CONN_TLS_H
#define COHORT_CLIENT_CONN_TLS_H

#include <openssl/ssl.h>

struct cconn;

/* Hand over the socket and the TLS session (the caller now owns both and
 * frees ssl, which keeps its context alive) and free c. 0, or -1 when c
 * is not a sound TLS connection (c is left as it was). */
int cconn_tls_release(struct cconn *c, int *fd, SSL **ssl);

#endif
