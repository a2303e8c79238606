/* Group commit on the event loop. The first write of a round opens a
 * transaction and activates the commit event; libevent runs it after the
 * callbacks already active in this round, so every request that arrived
 * while the previous fsync was running shares this commit. */
#include "config.h"

#include <sys/queue.h>
#include <errno.h>
#include <stdlib.h>

#include <event2/event.h>

#include "lib/log.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/store/txq.h"

struct txq_item {
	txq_cb cb;
	void *arg;
	STAILQ_ENTRY(txq_item) entry;
};

STAILQ_HEAD(txq_list, txq_item);

struct txq {
	struct store *st;
	struct event *ev;
	struct txq_list items;
	bool open;
	unsigned long commits;
	void (*on_abort)(void *);
	void *abort_arg;
};

static void
txq_commit_cb(evutil_socket_t fd, short what, void *arg)
{
	txq_flush(arg);
}

struct txq *
txq_create(struct event_base *base, struct store *st,
    void (*on_abort)(void *), void *arg)
{
	struct txq *q;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	q->st = st;
	q->on_abort = on_abort;
	q->abort_arg = arg;
	STAILQ_INIT(&q->items);
	if (base != NULL &&
	    (q->ev = event_new(base, -1, 0, txq_commit_cb, q)) == NULL) {
		free(q);
		return NULL;
	}
	return q;
}

void
txq_destroy(struct txq *q)
{
	if (q == NULL)
		return;
	txq_flush(q);
	if (q->ev != NULL)
		event_free(q->ev);
	free(q);
}

int
txq_join(struct txq *q, struct cerr *err)
{
	if (q->open)
		return 0;
	if (store_begin(q->st, err) == -1)
		return -1;
	q->open = true;
	if (q->ev != NULL)
		event_active(q->ev, EV_TIMEOUT, 0);
	return 0;
}

int
txq_defer(struct txq *q, txq_cb cb, void *arg)
{
	struct txq_item *it;

	/* Nothing is waiting for a commit: what the caller wants to follow
	 * it is already durable. */
	if (!q->open) {
		cb(arg, true);
		return 0;
	}
	if ((it = malloc(sizeof(*it))) == NULL)
		return -1;
	it->cb = cb;
	it->arg = arg;
	STAILQ_INSERT_TAIL(&q->items, it, entry);
	return 0;
}

void
txq_flush(struct txq *q)
{
	struct txq_list done;
	struct txq_item *it;
	struct cerr err;
	bool ok = true;

	if (q->open) {
		q->open = false;
		q->commits++;
		if (store_commit(q->st, &err) == -1) {
			log_warnx("commit failed: %s", err.text);
			ok = false;
			if (q->on_abort != NULL)
				q->on_abort(q->abort_arg);
		}
	}
	/* Detach first: a callback may open the next transaction. */
	STAILQ_INIT(&done);
	STAILQ_CONCAT(&done, &q->items);
	while ((it = STAILQ_FIRST(&done)) != NULL) {
		STAILQ_REMOVE_HEAD(&done, entry);
		it->cb(it->arg, ok);
		free(it);
	}
}

unsigned long
txq_commits(const struct txq *q)
{
	return q->commits;
}
