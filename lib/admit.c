/* The handshake table shared by the controller's TLS listeners: see
 * admit.h and docs/design/security.md, "Connection admission and the fair
 * loop". */
#include "config.h"

#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <openssl/ssl.h>

#include "lib/admit.h"

void
admit_init(struct admit *a, unsigned max, unsigned per_source)
{
	TAILQ_INIT(&a->list);
	a->n = 0;
	a->max = max;
	a->per_source = per_source;
}

void
admit_addr(const struct sockaddr *sa, uint8_t key[16], char *text,
    size_t len)
{
	memset(key, 0, 16);
	if (sa->sa_family == AF_INET6) {
		memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		inet_ntop(AF_INET6, key, text, (socklen_t)len);
	} else if (sa->sa_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr,
		    4);
		inet_ntop(AF_INET, key + 12, text, (socklen_t)len);
	} else
		snprintf(text, len, "?");
}

/* Whether h has sent nothing at all: no ClientHello processed and no
 * byte waiting in its socket (a real client's ClientHello is usually
 * there by the time it is accepted, even when the client was slow to be
 * scheduled; a flood's connections stay silent). */
static bool
admit_silent(const struct admit_hs *h)
{
	int pending = 0;

	if (SSL_get_state(h->ssl) != TLS_ST_BEFORE)
		return false;
	return ioctl(h->fd, FIONREAD, &pending) == 0 && pending == 0;
}

/* Evicting the oldest rather than refusing the newcomer means a flood
 * from an address cannot keep a real client from that address (all of
 * them, in tests and behind NAT) out: the flood must outpace every real
 * handshake, not just hold slots open; and silent connections go before
 * ones already talking. */
struct admit_hs *
admit_victim(struct admit *a, const uint8_t *addr)
{
	struct admit_hs *h, *oldest = NULL;

	TAILQ_FOREACH(h, &a->list, entry) {
		if (addr != NULL && memcmp(h->addr, addr, 16) != 0)
			continue;
		if (admit_silent(h))
			return h;
		if (oldest == NULL)
			oldest = h;
	}
	return oldest;
}

static unsigned
admit_from(const struct admit *a, const uint8_t *addr)
{
	const struct admit_hs *h;
	unsigned n = 0;

	TAILQ_FOREACH(h, &a->list, entry)
		if (memcmp(h->addr, addr, 16) == 0)
			n++;
	return n;
}

struct admit_hs *
admit_over(struct admit *a, const uint8_t addr[16], enum admit_cap *cap)
{
	struct admit_hs *v;

	if (admit_from(a, addr) >= a->per_source &&
	    (v = admit_victim(a, addr)) != NULL) {
		*cap = ADMIT_CAP_SOURCE;
		return v;
	}
	if (a->n >= a->max && (v = admit_victim(a, NULL)) != NULL) {
		*cap = ADMIT_CAP_BUDGET;
		return v;
	}
	return NULL;
}

void
admit_add(struct admit *a, struct admit_hs *h, void *owner, SSL *ssl,
    int fd, const uint8_t addr[16])
{
	h->owner = owner;
	h->ssl = ssl;
	h->fd = fd;
	memcpy(h->addr, addr, 16);
	TAILQ_INSERT_TAIL(&a->list, h, entry);
	a->n++;
}

void
admit_del(struct admit *a, struct admit_hs *h)
{
	TAILQ_REMOVE(&a->list, h, entry);
	a->n--;
}
