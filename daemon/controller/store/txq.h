/* Group commit. A request that changes state joins the open transaction
 * (txq_join), does its writes through the store, and registers a callback
 * (txq_defer). At the end of the current event-loop round one COMMIT
 * covers every request that joined, and the callbacks run, told whether
 * the commit succeeded, once it is on disk. Nothing is acknowledged
 * before that. With an event loop and a database file of its own, the
 * WAL is synced by a thread while the loop goes on with the next batch;
 * a callback runs only after a sync that started after its commit
 * returned (txq.c). */
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
 * txq_flush (unit tests and the goodput simulator, in virtual time), and
 * every commit syncs before it returns, as it does on a store without a
 * WAL of its own (in memory; replicated, where the quorum is what makes
 * it durable). NULL (ENOMEM, or the sync thread could not start). */
struct txq *txq_create(struct event_base *base, struct store *st,
    void (*on_abort)(void *arg), void *arg);
/* Commits what is open (running callbacks) and frees; accepts NULL. */
void txq_destroy(struct txq *q);

/* Make sure a transaction is open and a commit is scheduled. 0 or -1. */
int txq_join(struct txq *q, struct cerr *err);
/* Run cb(arg, committed) after the commit that covers the current writes
 * is on disk; outside a transaction, after the last commit is (a read's
 * reply shows what that commit changed). At once if nothing waits.
 * 0, or -1 (ENOMEM; cb will not run). */
int txq_defer(struct txq *q, txq_cb cb, void *arg);
/* Commit now, wait for the sync in flight, sync what it does not cover
 * and run every callback (used at shutdown and by tests). Blocks. */
void txq_flush(struct txq *q);

/* Whether commits leave their sync to the sync thread. */
bool txq_async(const struct txq *q);
/* Tests: hook(arg) runs on the sync thread before each of its syncs (it
 * may block, to hold a sync in flight). No effect without the thread. */
void txq_set_sync_hook(struct txq *q, void (*hook)(void *), void *arg);

/* Counters for metrics and benchmarks: commits, and syncs of the WAL
 * done for the group commit (each covers one or more commits). */
unsigned long txq_commits(const struct txq *q);
unsigned long txq_syncs(const struct txq *q);

#endif
