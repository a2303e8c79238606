/* Small open-addressing hash tables for the scheduler core: names to
 * indices (topology switches and nodes, GPU models) and job ids to
 * indices. Fixed capacity chosen at create time from the number of keys
 * the caller will insert, so lookups never rehash mid-pass. Keys are
 * borrowed: the caller keeps name strings alive while the table lives. */
#ifndef COHORT_SCHED_HTAB_H
#define COHORT_SCHED_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct htab;

/* Create a table for at most nkeys keys. Names are compared exactly, or
 * ignoring ASCII case when nocase is set. Returns NULL with errno ENOMEM. */
struct htab	*htab_create(size_t nkeys, bool nocase);
void		 htab_destroy(struct htab *);

/* Bytes the table holds, for memory accounting. */
size_t		 htab_bytes(const struct htab *);

/* Insert name -> val unless name is present. Returns the value now
 * stored for name (the old one when it was present); or -1 with errno
 * ENOSPC when the table already holds nkeys keys. val must be >= 0. */
int64_t		 htab_put(struct htab *, const char *name, int64_t val);

/* The value stored for name, or -1. */
int64_t		 htab_get(const struct htab *, const char *name);

/* The same for integer keys (job ids); a table is used for names or for
 * integers, never both. */
int64_t		 htab_put_u64(struct htab *, uint64_t key, int64_t val);
int64_t		 htab_get_u64(const struct htab *, uint64_t key);

#endif
