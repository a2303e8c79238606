#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/job.h"
#include "lib/slot.h"
#include "daemon/controller/domain/quota.h"

/* Tokens are counted in thousandths, so a rate in tokens per second adds
 * exactly `rate` of them per millisecond. */
#define QUOTA_MILLI 1000u
/* Longer than any bucket takes to fill: keeps the products in range. */
#define QUOTA_MAX_ELAPSED_MS 1000000000LL

struct quota_user {
	char name[PEER_NAME_MAX + 1];
	uint32_t pending;
	uint64_t tokens;	/* thousandths */
	int64_t last_ms;	/* of the last refill */
};

struct quota {
	struct quota_opts o;
	struct quota_user *tab;	/* sorted by name */
	size_t n;
	size_t cap;
	struct quota_stats st;
};

struct quota *
quota_create(const struct quota_opts *o)
{
	struct quota *q;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	q->o = *o;
	if (q->o.rate > 0 && q->o.burst == 0)
		q->o.burst = 1;
	return q;
}

void
quota_set_opts(struct quota *q, const struct quota_opts *o)
{
	bool had_rate = q->o.rate > 0;
	uint64_t full;
	size_t i;

	q->o = *o;
	if (q->o.rate > 0 && q->o.burst == 0)
		q->o.burst = 1;
	full = (uint64_t)q->o.burst * QUOTA_MILLI;
	for (i = 0; i < q->n; i++)
		if (q->tab[i].tokens > full || !had_rate)
			q->tab[i].tokens = full;
}

void
quota_destroy(struct quota *q)
{
	if (q == NULL)
		return;
	free(q->tab);
	free(q);
}

static const char *
quota_user_name(const void *base, size_t i)
{
	return ((const struct quota_user *)base)[i].name;
}

static size_t
quota_index(const struct quota *q, const char *name, bool *found)
{
	return slot_find(q->tab, q->n, quota_user_name, name, found);
}

static struct quota_user *
quota_find(const struct quota *q, const char *name)
{
	bool found;
	size_t at = quota_index(q, name, &found);

	return found ? &q->tab[at] : NULL;
}

/* The user's entry, created (with a full bucket) when new. NULL on
 * ENOMEM or a name longer than any peer's. */
static struct quota_user *
quota_get(struct quota *q, const char *name, int64_t now_ms)
{
	struct quota_user *u, *tab;
	bool found;
	size_t at, cap;

	if (strlen(name) > PEER_NAME_MAX) {
		errno = EINVAL;
		return NULL;
	}
	at = quota_index(q, name, &found);
	if (found)
		return &q->tab[at];
	if (q->n == q->cap) {
		cap = q->cap ? q->cap * 2 : 16;
		if ((tab = reallocarray(q->tab, cap, sizeof(*tab))) == NULL)
			return NULL;
		q->tab = tab;
		q->cap = cap;
	}
	memmove(&q->tab[at + 1], &q->tab[at], (q->n - at) * sizeof(*q->tab));
	q->n++;
	u = &q->tab[at];
	memset(u, 0, sizeof(*u));
	strcpy(u->name, name);
	u->tokens = (uint64_t)q->o.burst * QUOTA_MILLI;
	u->last_ms = now_ms;
	return u;
}

static void
quota_refill(const struct quota *q, struct quota_user *u, int64_t now_ms)
{
	uint64_t full = (uint64_t)q->o.burst * QUOTA_MILLI;
	int64_t elapsed = now_ms - u->last_ms;

	/* A clock stepped back: start counting again from now. */
	if (elapsed <= 0) {
		if (elapsed < 0)
			u->last_ms = now_ms;
		return;
	}
	if (elapsed > QUOTA_MAX_ELAPSED_MS)
		elapsed = QUOTA_MAX_ELAPSED_MS;
	u->tokens += (uint64_t)elapsed * q->o.rate;
	if (u->tokens > full)
		u->tokens = full;
	u->last_ms = now_ms;
}

int
quota_submit_check(struct quota *q, const char *user, int64_t now_ms,
    struct cerr *err)
{
	struct quota_user *u;
	uint64_t wait_ms;

	if ((u = quota_get(q, user, now_ms)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	if (q->o.max_pending > 0 && u->pending >= q->o.max_pending) {
		q->st.refused_pending++;
		return cerr_set(err, ERR_LIMIT, "%s has %u pending jobs, the "
		    "limit is %u (max_pending_per_user); submit more once some "
		    "have started or ended", user, u->pending,
		    q->o.max_pending);
	}
	if (q->o.rate == 0)
		return 0;
	quota_refill(q, u, now_ms);
	if (u->tokens >= QUOTA_MILLI)
		return 0;
	q->st.refused_rate++;
	wait_ms = (QUOTA_MILLI - u->tokens + q->o.rate - 1) / q->o.rate;
	return cerr_set(err, ERR_LIMIT, "%s submits faster than the limit of "
	    "%u per second (in bursts of up to %u; submit_rate, "
	    "submit_burst); retry in %llu ms", user, q->o.rate, q->o.burst,
	    (unsigned long long)wait_ms);
}

void
quota_submit_take(struct quota *q, const char *user, int64_t now_ms)
{
	struct quota_user *u;

	if (q->o.rate == 0 || (u = quota_find(q, user)) == NULL)
		return;
	quota_refill(q, u, now_ms);
	u->tokens = u->tokens >= QUOTA_MILLI ? u->tokens - QUOTA_MILLI : 0;
}

int
quota_pending_add(struct quota *q, const char *user, int delta)
{
	struct quota_user *u;

	if (delta < 0) {
		/* Nothing to take from a user never counted. */
		if ((u = quota_find(q, user)) != NULL)
			u->pending = u->pending > (uint32_t)-delta ?
			    u->pending - (uint32_t)-delta : 0;
		return 0;
	}
	/* A new entry's bucket is full: its refill time does not matter.
	 * A name no peer can have (a damaged row) is not counted. */
	if ((u = quota_get(q, user, 0)) == NULL)
		return errno == EINVAL ? 0 : -1;
	u->pending += (uint32_t)delta;
	return 0;
}

uint32_t
quota_pending(const struct quota *q, const char *user)
{
	const struct quota_user *u = quota_find(q, user);

	return u != NULL ? u->pending : 0;
}

void
quota_pending_reset(struct quota *q)
{
	size_t i;

	for (i = 0; i < q->n; i++)
		q->tab[i].pending = 0;
}

void
quota_stats(const struct quota *q, struct quota_stats *st)
{
	*st = q->st;
}
