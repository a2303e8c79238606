#ifndef COHORT_SIPHASH_H
#define COHORT_SIPHASH_H

/*
 * SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed 64-bit hash for
 * tables whose keys a user chooses. With a secret random key, nobody
 * outside can pick inputs that collide, so one tenant cannot make another
 * tenant's lookups walk long probe runs. Fed in pieces: init, any number
 * of updates, final.
 */

#include <stddef.h>
#include <stdint.h>

#define SIPHASH_KEY_LEN 16

struct siphash {
	uint64_t v[4];
	uint64_t tail;		/* bytes not yet in a full word, little-endian */
	size_t len;		/* bytes fed so far */
};

void siphash_init(struct siphash *s, const uint8_t key[SIPHASH_KEY_LEN]);
void siphash_update(struct siphash *s, const void *data, size_t len);
uint64_t siphash_final(const struct siphash *s);

/* A key of 16 random bytes (getrandom; where it has no entropy to give,
 * bytes mixed from addresses, the pid and a count: not secret, but
 * unlike another run's where addresses are randomized). */
void siphash_random_key(uint8_t key[SIPHASH_KEY_LEN]);

#endif
