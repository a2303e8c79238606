/* Group commit. A request that changes state joins the open transaction
 * (txq_join), does its writes through the store, and registers a callback
 * (txq_defer). At the end of the current event-loop round one COMMIT
 * covers every request that joined, and then the callbacks run, told
 * whether the commit succeeded. Nothing is acknowledged before that. */
#ifndef COHORT_TXQ_H
#define COHORT_TXQ_H

#include <stdbool.h>

#include "lib/err.h"

struct event_base;
struct store;
struct txq;

typedef void (*txq_cb)(void *arg, bool committed);

/* on_abort(arg) runs when a commit fails, before the callbacks, so that
 * in-memory state written ahead of the commit can be reloaded from the
 * database. With base NULL nothing commits by itself: the caller calls
 * txq_flush (unit tests and the goodput simulator, in virtual time). */
struct txq *txq_create(struct event_base *base, struct store *st,
    void (*on_abort)(void *arg), void *arg);
/* Commits what is open (running callbacks) and frees; accepts NULL. */
void txq_destroy(struct txq *q);

/* Make sure a transaction is open and a commit is scheduled. 0 or -1. */
int txq_join(struct txq *q, struct cerr *err);
/* Run cb(arg, committed) after the commit that covers the current writes.
 * 0, or -1 (ENOMEM; cb will not run). */
int txq_defer(struct txq *q, txq_cb cb, void *arg);
/* Commit now and run the callbacks (used at shutdown and by tests). */
void txq_flush(struct txq *q);

/* Counters for metrics and benchmarks. */
unsigned long txq_commits(const struct txq *q);

#endif
