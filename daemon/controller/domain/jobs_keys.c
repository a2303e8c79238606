/* The idempotency keys of the jobs in the table, by user and key, in
 * memory: a submit sent again finds the job its first send made without
 * asking SQLite. The keys are also in the jobs' rows (jobs.idem_key), so
 * a restarted or newly leading controller rebuilds this at load; there
 * is no index on them in the database: with one, keyed submits were
 * measurably slower (docs/BENCHMARKS.md), most likely because random
 * keys dirty index pages all over its B-tree, each a WAL frame.
 *
 * Open addressing with linear probing over job pointers (a job keeps its
 * address while it is in the table: jobs_install copies into it), the
 * hash over the job's user and key; deletion shifts the entries after
 * the removed one back, so there are no tombstones. Users choose keys, so
 * the hash is SipHash under a random key drawn for each table: nobody can
 * choose keys that pile up in one probe run and slow everyone's submits
 * (an unkeyed hash such as FNV-1a lets a user find such keys by trying). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/jobs_int.h"

/* SipHash of user, its NUL and key, under the table's seed. */
static uint64_t
keys_hash(const uint8_t *seed, const char *user, const char *key)
{
	struct siphash s;

	siphash_init(&s, seed);
	siphash_update(&s, user, strlen(user) + 1);
	siphash_update(&s, key, strlen(key));
	return siphash_final(&s);
}

static bool
keys_match(const struct job *job, const char *user, const char *key)
{
	return strcmp(job->spec.idem_key, key) == 0 &&
	    strcmp(job->user, user) == 0;
}

/* Put job in v (cap a power of two, a free slot known to exist). */
static void
keys_place(const uint8_t *seed, struct job **v, size_t cap, struct job *job)
{
	size_t i = keys_hash(seed, job->user, job->spec.idem_key) & (cap - 1);

	while (v[i] != NULL)
		i = (i + 1) & (cap - 1);
	v[i] = job;
}

int
jobs_keys_reserve(struct jobs_keys *k, size_t more)
{
	struct job **v;
	size_t cap = k->cap ? k->cap : 64, i;

	/* At most half full. */
	while ((k->n + more) * 2 > cap) {
		if (cap > SIZE_MAX / 4 / sizeof(*v)) {
			errno = ENOMEM;
			return -1;
		}
		cap *= 2;
	}
	if (cap == k->cap)
		return 0;
	if ((v = calloc(cap, sizeof(*v))) == NULL)
		return -1;
	if (k->cap == 0)
		siphash_random_key(k->seed);
	for (i = 0; i < k->cap; i++)
		if (k->v[i] != NULL)
			keys_place(k->seed, v, cap, k->v[i]);
	free(k->v);
	k->v = v;
	k->cap = cap;
	return 0;
}

const struct job *
jobs_keys_find(const struct jobs_keys *k, const char *user, const char *key)
{
	size_t i;

	if (k->n == 0)
		return NULL;
	for (i = keys_hash(k->seed, user, key) & (k->cap - 1); k->v[i] != NULL;
	    i = (i + 1) & (k->cap - 1))
		if (keys_match(k->v[i], user, key))
			return k->v[i];
	return NULL;
}

void
jobs_keys_add(struct jobs_keys *k, struct job *job)
{
	if (job->spec.idem_key == NULL)
		return;
	keys_place(k->seed, k->v, k->cap, job);
	k->n++;
}

void
jobs_keys_remove(struct jobs_keys *k, const struct job *job)
{
	size_t i, j, home, mask = k->cap - 1;

	if (job->spec.idem_key == NULL || k->n == 0)
		return;
	for (i = keys_hash(k->seed, job->user, job->spec.idem_key) & mask;
	    k->v[i] != job; i = (i + 1) & mask)
		if (k->v[i] == NULL)
			return;
	/* Shift back what probed past i: an entry at j whose home slot is
	 * not within (i, j] (cyclically) belongs at i. */
	for (j = (i + 1) & mask; k->v[j] != NULL; j = (j + 1) & mask) {
		home = keys_hash(k->seed, k->v[j]->user, k->v[j]->spec.idem_key) &
		    mask;
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && home <= i && home > j)) {
			k->v[i] = k->v[j];
			i = j;
		}
	}
	k->v[i] = NULL;
	k->n--;
}

void
jobs_keys_clear(struct jobs_keys *k)
{
	free(k->v);
	k->v = NULL;
	k->cap = 0;
	k->n = 0;
}
