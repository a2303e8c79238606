/* SipHash-2-4, written from the paper ("SipHash: a fast short-input
 * PRF", Aumasson and Bernstein, 2012); check_text compares it with
 * OpenSSL's on random inputs and with the paper's test vector. OpenSSL's
 * (EVP_MAC "SIPHASH") is not used for the tables themselves: each hash
 * there allocates and sets up a MAC context, more work than a probe's
 * hash of a short key. */
#include "config.h"

#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "lib/siphash.h"

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

static uint64_t
le64(const uint8_t *p)
{
	uint64_t x = 0;
	int i;

	for (i = 7; i >= 0; i--)
		x = x << 8 | p[i];
	return x;
}

static void
sip_round(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = ROTL(v[1], 13);
	v[1] ^= v[0];
	v[0] = ROTL(v[0], 32);
	v[2] += v[3];
	v[3] = ROTL(v[3], 16);
	v[3] ^= v[2];
	v[0] += v[3];
	v[3] = ROTL(v[3], 21);
	v[3] ^= v[0];
	v[2] += v[1];
	v[1] = ROTL(v[1], 17);
	v[1] ^= v[2];
	v[2] = ROTL(v[2], 32);
}

static void
sip_word(uint64_t v[4], uint64_t m)
{
	v[3] ^= m;
	sip_round(v);
	sip_round(v);
	v[0] ^= m;
}

void
siphash_init(struct siphash *s, const uint8_t key[SIPHASH_KEY_LEN])
{
	uint64_t k0 = le64(key), k1 = le64(key + 8);

	s->v[0] = k0 ^ 0x736f6d6570736575ULL;
	s->v[1] = k1 ^ 0x646f72616e646f6dULL;
	s->v[2] = k0 ^ 0x6c7967656e657261ULL;
	s->v[3] = k1 ^ 0x7465646279746573ULL;
	s->tail = 0;
	s->len = 0;
}

void
siphash_update(struct siphash *s, const void *data, size_t len)
{
	const uint8_t *p = data;

	/* Fill the word begun by an earlier update, then whole words. */
	for (; len > 0 && s->len % 8 != 0; p++, len--) {
		s->tail |= (uint64_t)*p << (8 * (s->len % 8));
		if (++s->len % 8 == 0) {
			sip_word(s->v, s->tail);
			s->tail = 0;
		}
	}
	for (; len >= 8; p += 8, len -= 8, s->len += 8)
		sip_word(s->v, le64(p));
	for (; len > 0; p++, len--, s->len++)
		s->tail |= (uint64_t)*p << (8 * (s->len % 8));
}

uint64_t
siphash_final(const struct siphash *s)
{
	uint64_t v[4];
	int i;

	memcpy(v, s->v, sizeof(v));
	sip_word(v, s->tail | (uint64_t)(s->len & 0xff) << 56);
	v[2] ^= 0xff;
	for (i = 0; i < 4; i++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

void
siphash_random_key(uint8_t key[SIPHASH_KEY_LEN])
{
	static uint64_t calls;
	uint64_t a, b;

	if (getrandom(key, SIPHASH_KEY_LEN, GRND_NONBLOCK) == SIPHASH_KEY_LEN)
		return;
	/* Addresses differ from run to run where ASLR is on. */
	a = (uint64_t)(uintptr_t)key ^ (uint64_t)(uintptr_t)&calls << 17 ^
	    ++calls * 0x9e3779b97f4a7c15ULL;
	b = (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)&a;
	memcpy(key, &a, 8);
	memcpy(key + 8, &b, 8);
}
