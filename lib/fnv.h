#ifndef COHORT_FNV_H
#define COHORT_FNV_H

/*
 * FNV-1a, 64 bits: the hash of open-addressing tables whose names the
 * operator gives (node and model names, certificate names) and of names
 * that must come out the same on every run and machine (simulated GPU
 * UUIDs, the mux's socket). Fast and well spread for short strings; not
 * keyed, so anyone can find names that collide: a table of what users
 * choose uses lib/siphash.h.
 */

#include <stddef.h>
#include <stdint.h>

#define FNV64_BASIS	0xcbf29ce484222325ULL
#define FNV64_PRIME	0x100000001b3ULL

/* The hash h continued over len bytes at data (start with FNV64_BASIS). */
static inline uint64_t
fnv64(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len-- > 0)
		h = (h ^ *p++) * FNV64_PRIME;
	return h;
}

/* The hash h continued over the bytes of s, its NUL left out. */
static inline uint64_t
fnv64_str(uint64_t h, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p != '\0'; p++)
		h = (h ^ *p) * FNV64_PRIME;
	return h;
}

#endif
