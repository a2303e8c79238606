/* The handshake table every TLS listener of the controller admits by (the
 * RPC port in server.c, the Raft port in repl_net.c): connections whose
 * TLS handshake is not done, oldest first, under a budget and a cap per
 * source address. When a newcomer would go over either, the oldest
 * silent handshake (from that source, for the cap) makes room for it:
 * a flood cannot hold the slots against a real client, it can only
 * churn through them. The caller sets the deadline, frees the victims
 * and logs; the table knows no event loop. */
#ifndef COHORT_CONTROLLER_ADMIT_H
#define COHORT_CONTROLLER_ADMIT_H

#include <sys/queue.h>
#include <sys/socket.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

/* The kernel's queue of connections not yet accepted (capped by
 * net.core.somaxconn): deep enough that a flood does not make the kernel
 * drop other clients' SYNs, which they would resend only after a second
 * or more. */
#define ADMIT_LISTEN_BACKLOG 4096
/* Connections accepted in one loop round at most: between batches the
 * handshakes already accepted get read (and so count as started, which
 * protects them from eviction by silent ones), and a flood of connects
 * cannot hold the loop. */
#define ADMIT_ACCEPTS_PER_ROUND 16
/* After a full batch, accept again this much later: at most 4,000 new
 * connections a second (10,000 agents reconnect in under 3 s), so a
 * flood of connects churns slowly enough that a real client, queued
 * behind it in the backlog, has long sent its ClientHello when it is
 * accepted, and that its handshake is not evicted before it is read. */
#define ADMIT_ACCEPT_BATCH_MS 4

/* One handshake, embedded in the caller's connection. */
struct admit_hs {
	TAILQ_ENTRY(admit_hs) entry;
	void *owner;		/* the caller's connection */
	SSL *ssl;		/* borrowed, to tell a silent one */
	int fd;
	uint8_t addr[16];	/* source, IPv4 as ::ffff:a.b.c.d */
};

struct admit {
	TAILQ_HEAD(, admit_hs) list;	/* oldest first */
	unsigned n;
	unsigned max;			/* the handshake budget */
	unsigned per_source;
};

enum admit_cap {
	ADMIT_CAP_SOURCE,	/* the per-source cap */
	ADMIT_CAP_BUDGET,	/* the handshake budget */
};

void admit_init(struct admit *a, unsigned max, unsigned per_source);
/* The 16-byte key (IPv4 mapped into IPv6) and the text of sa. */
void admit_addr(const struct sockaddr *sa, uint8_t key[16], char *text,
    size_t len);
/* A newcomer from addr is about to be accepted: the handshake the caller
 * must drop first (its owner) to keep within the per-source cap and the
 * budget, with *cap saying which; NULL when it fits. The caller frees the
 * victim (which calls admit_del) and asks again until NULL. */
struct admit_hs *admit_over(struct admit *a, const uint8_t addr[16],
    enum admit_cap *cap);
/* The handshake to drop for a newcomer when some other limit is reached
 * (from addr, or from anyone when addr is NULL): the oldest that has sent
 * nothing, else the oldest; NULL when there is none. */
struct admit_hs *admit_victim(struct admit *a, const uint8_t *addr);
/* h (in owner, on fd with ssl, from addr) starts its handshake. */
void admit_add(struct admit *a, struct admit_hs *h, void *owner, SSL *ssl,
    int fd, const uint8_t addr[16]);
/* h's handshake is over (done, failed or evicted). */
void admit_del(struct admit *a, struct admit_hs *h);

#endif
