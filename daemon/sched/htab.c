/* Open addressing with linear probing at a load factor of at most 1/2;
 * see htab.h. Deletion is not needed: tables live for one pass or one
 * topology. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/sched/htab.h"
#include "lib/fnv.h"

struct slot {
	const char *name;	/* NULL: empty (name tables) */
	uint64_t key;
	int64_t val;		/* -1: empty (integer tables) */
};

struct htab {
	struct slot *slots;
	size_t mask;
	size_t used;
	size_t max;
	bool nocase;
};

struct htab *
htab_create(size_t nkeys, bool nocase)
{
	struct htab *h;
	size_t cap = 8, i;

	while (cap < nkeys * 2 + 1) {
		if (cap > SIZE_MAX / 4 / sizeof(struct slot)) {
			errno = ENOMEM;
			return NULL;
		}
		cap *= 2;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	if ((h->slots = calloc(cap, sizeof(*h->slots))) == NULL) {
		free(h);
		return NULL;
	}
	for (i = 0; i < cap; i++)
		h->slots[i].val = -1;
	h->mask = cap - 1;
	h->max = nkeys;
	h->nocase = nocase;
	return h;
}

void
htab_destroy(struct htab *h)
{
	if (h == NULL)
		return;
	free(h->slots);
	free(h);
}

size_t
htab_bytes(const struct htab *h)
{
	return sizeof(*h) + (h->mask + 1) * sizeof(*h->slots);
}

/* FNV-1a, of the lower-cased name in a table that ignores case. */
static uint64_t
hash_name(const char *s, bool nocase)
{
	uint64_t x = FNV64_BASIS;

	if (!nocase)
		return fnv64_str(x, s);
	for (; *s != '\0'; s++)
		x = (x ^ (unsigned char)tolower((unsigned char)*s)) * FNV64_PRIME;
	return x;
}

static uint64_t
hash_u64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

static bool
name_eq(const struct htab *h, const char *a, const char *b)
{
	return h->nocase ? strcasecmp(a, b) == 0 : strcmp(a, b) == 0;
}

int64_t
htab_put(struct htab *h, const char *name, int64_t val)
{
	size_t i = hash_name(name, h->nocase) & h->mask;

	for (; h->slots[i].name != NULL; i = (i + 1) & h->mask)
		if (name_eq(h, h->slots[i].name, name))
			return h->slots[i].val;
	if (h->used == h->max) {
		errno = ENOSPC;
		return -1;
	}
	h->slots[i].name = name;
	h->slots[i].val = val;
	h->used++;
	return val;
}

int64_t
htab_get(const struct htab *h, const char *name)
{
	size_t i = hash_name(name, h->nocase) & h->mask;

	for (; h->slots[i].name != NULL; i = (i + 1) & h->mask)
		if (name_eq(h, h->slots[i].name, name))
			return h->slots[i].val;
	return -1;
}

int64_t
htab_put_u64(struct htab *h, uint64_t key, int64_t val)
{
	size_t i = hash_u64(key) & h->mask;

	for (; h->slots[i].val >= 0; i = (i + 1) & h->mask)
		if (h->slots[i].key == key)
			return h->slots[i].val;
	if (h->used == h->max) {
		errno = ENOSPC;
		return -1;
	}
	h->slots[i].key = key;
	h->slots[i].val = val;
	h->used++;
	return val;
}

int64_t
htab_get_u64(const struct htab *h, uint64_t key)
{
	size_t i = hash_u64(key) & h->mask;

	for (; h->slots[i].val >= 0; i = (i + 1) & h->mask)
		if (h->slots[i].key == key)
			return h->slots[i].val;
	return -1;
}
