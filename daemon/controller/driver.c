#include "config.h"

#include <stdbool.h>
#include <stdlib.h>

#include <event2/event.h>

#include "daemon/controller/rpc/agentcmd.h"
#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/driver.h"
#include "lib/clock.h"
#include "daemon/controller/mailer.h"

struct driver {
	struct event_base *base;
	struct agentcmd *ac;
	struct mailer *mailer;		/* NULL: no mail */
	driver_step_ended_fn step_ended;	/* NULL: nobody */
	void *step_ended_arg;
	struct cluster *cl;		/* NULL until driver_start */
	int64_t tick_ms;
	struct event *pass_ev;
	struct event *tick_ev;
	struct event *check_ev;		/* the tick's work, a round later */
	bool wanted;			/* a pass was asked for */
	bool in_pass;
	bool held;			/* driver_hold */
	uint64_t pass_end_us;		/* when the latest pass ended */
	struct driver_stats stats;
};

/* A pass soon after any change, but paced: the next one starts no sooner
 * after the last ended than that one took, so that passes take at most
 * half of the loop while submits, heartbeats and replies stream in (at
 * 10,000 nodes a pass takes ~10 ms, and a change per loop round would
 * otherwise mean a pass per round). */
static void
driver_schedule_pass(struct driver *d)
{
	uint64_t now = clock_mono_us(), ready;
	struct timeval tv;

	if (d->held)
		return;
	ready = d->pass_end_us + d->stats.last_pass_us;
	if (now < ready) {
		tv.tv_sec = (time_t)((ready - now) / 1000000);
		tv.tv_usec = (suseconds_t)((ready - now) % 1000000);
		if (event_add(d->pass_ev, &tv) == 0)
			return;
	}
	event_active(d->pass_ev, EV_TIMEOUT, 0);
}

static void
driver_pass_wanted(void *ctx)
{
	struct driver *d = ctx;

	d->wanted = true;
	/* Before driver_start the pass waits for it; during a pass it is
	 * scheduled once that pass's time is known. */
	if (d->cl != NULL && !d->in_pass &&
	    !event_pending(d->pass_ev, EV_TIMEOUT, NULL))
		driver_schedule_pass(d);
}

static void
driver_pass_cb(evutil_socket_t fd, short what, void *arg)
{
	struct driver *d = arg;
	uint64_t t0 = clock_mono_us();

	if (d->held) {
		d->wanted = true;	/* run at the release */
		return;
	}
	d->wanted = false;
	d->in_pass = true;
	cluster_pass(d->cl, clock_now_ms());
	d->in_pass = false;
	d->pass_end_us = clock_mono_us();
	d->stats.last_pass_us = d->pass_end_us - t0;
	d->stats.total_pass_us += d->stats.last_pass_us;
	histogram_observe(&d->stats.pass, (double)d->stats.last_pass_us / 1e6);
	if (d->wanted)
		driver_schedule_pass(d);
}

/* The tick's work runs one loop round later: a zero timeout becomes
 * active only after the next poll for I/O, behind the read callbacks of
 * data that arrived while the loop was busy. So a heartbeat that reached
 * the controller is always seen before its node is timed out. */
static void
driver_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct driver *d = arg;
	struct timeval zero = { 0, 0 };

	evtimer_add(d->check_ev, &zero);
}

static void
driver_check_cb(evutil_socket_t fd, short what, void *arg)
{
	struct driver *d = arg;
	int64_t now = clock_now_ms();

	agentcmd_expire(d->ac, now);
	cluster_tick(d->cl, now);
}

static int
driver_launch(void *ctx, uint64_t conn_id, const struct launch_cmd *l,
    int64_t now_ms, outbox_done done, void *arg)
{
	struct driver *d = ctx;

	return agentcmd_launch(d->ac, conn_id, l, now_ms, done, arg);
}

static int
driver_prepare(void *ctx, uint64_t conn_id, const struct launch_cmd *l,
    int64_t now_ms, outbox_prepared done, void *arg)
{
	struct driver *d = ctx;

	return agentcmd_prepare(d->ac, conn_id, l, now_ms, done, arg);
}

static int
driver_stop(void *ctx, uint64_t conn_id, uint64_t job_id, uint32_t attempt,
    const char *reason)
{
	struct driver *d = ctx;

	return agentcmd_stop(d->ac, conn_id, job_id, attempt, reason);
}

static int
driver_advise(void *ctx, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, uint32_t advice_s)
{
	struct driver *d = ctx;

	return agentcmd_advise(d->ac, conn_id, job_id, attempt, advice_s);
}

static int
driver_signal(void *ctx, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, int sig, int scope)
{
	struct driver *d = ctx;

	return agentcmd_signal(d->ac, conn_id, job_id, attempt, sig, scope);
}

static int
driver_stop_step(void *ctx, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, uint32_t step, const char *reason)
{
	struct driver *d = ctx;

	return agentcmd_stop_step(d->ac, conn_id, job_id, attempt, step,
	    reason);
}

static int
driver_signal_step(void *ctx, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, uint32_t step, int sig)
{
	struct driver *d = ctx;

	return agentcmd_signal_step(d->ac, conn_id, job_id, attempt, step,
	    sig);
}

static int
driver_read_log(void *ctx, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, int64_t step, unsigned rank, bool is_stderr,
    uint64_t offset, uint32_t max, int64_t now_ms, outbox_log_done done,
    void *arg)
{
	struct driver *d = ctx;

	return agentcmd_read_log(d->ac, conn_id, job_id, attempt, step, rank,
	    is_stderr, offset, max, now_ms, done, arg);
}

static int
driver_write_stdin(void *ctx, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, uint32_t step, unsigned rank,
    const struct step_input *in, int64_t now_ms, outbox_input_done done,
    void *arg)
{
	struct driver *d = ctx;

	return agentcmd_write_stdin(d->ac, conn_id, job_id, attempt, step,
	    rank, in, now_ms, done, arg);
}

static void
driver_mail(void *ctx, uint64_t job_id, const char *to, const char *subject)
{
	struct driver *d = ctx;

	if (d->mailer != NULL)
		mailer_send(d->mailer, job_id, to, subject);
}

static void driver_step_ended(void *, uint64_t, uint32_t);

static const struct outbox_ops driver_ops = {
	.launch = driver_launch,
	.prepare = driver_prepare,
	.stop = driver_stop,
	.signal = driver_signal,
	.advise = driver_advise,
	.stop_step = driver_stop_step,
	.signal_step = driver_signal_step,
	.read_log = driver_read_log,
	.write_stdin = driver_write_stdin,
	.pass_wanted = driver_pass_wanted,
	.step_ended = driver_step_ended,
	.mail = driver_mail,
};

struct driver *
driver_create(struct event_base *base, struct agentcmd *ac, int64_t tick_ms,
    struct cerr *err)
{
	struct driver *d;

	if ((d = calloc(1, sizeof(*d))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	d->base = base;
	d->ac = ac;
	d->tick_ms = tick_ms;
	d->pass_ev = event_new(base, -1, 0, driver_pass_cb, d);
	d->tick_ev = event_new(base, -1, EV_PERSIST, driver_tick_cb, d);
	d->check_ev = evtimer_new(base, driver_check_cb, d);
	if (d->pass_ev == NULL || d->tick_ev == NULL || d->check_ev == NULL) {
		cerr_set(err, ERR_INTERNAL, "cannot create timers");
		driver_destroy(d);
		return NULL;
	}
	return d;
}

void
driver_outbox(struct driver *d, struct outbox *out)
{
	out->ops = &driver_ops;
	out->ctx = d;
}

void
driver_set_mailer(struct driver *d, struct mailer *m)
{
	d->mailer = m;
}

void
driver_on_step_ended(struct driver *d, driver_step_ended_fn fn, void *arg)
{
	d->step_ended = fn;
	d->step_ended_arg = arg;
}

static void
driver_step_ended(void *ctx, uint64_t job_id, uint32_t step)
{
	struct driver *d = ctx;

	if (d->step_ended != NULL)
		d->step_ended(d->step_ended_arg, job_id, step);
}

int
driver_start(struct driver *d, struct cluster *cl, struct cerr *err)
{
	struct timeval tv = { (time_t)(d->tick_ms / 1000),
	    (suseconds_t)((d->tick_ms % 1000) * 1000) };

	d->cl = cl;
	if (event_add(d->tick_ev, &tv) == -1)
		return cerr_set(err, ERR_INTERNAL, "cannot start the tick");
	if (d->wanted)
		driver_schedule_pass(d);
	return 0;
}

void
driver_hold(struct driver *d, bool hold)
{
	d->held = hold;
	if (!hold && d->cl != NULL && d->wanted && !d->in_pass &&
	    !event_pending(d->pass_ev, EV_TIMEOUT, NULL))
		driver_schedule_pass(d);
}

void
driver_destroy(struct driver *d)
{
	if (d == NULL)
		return;
	if (d->pass_ev != NULL)
		event_free(d->pass_ev);
	if (d->tick_ev != NULL)
		event_free(d->tick_ev);
	if (d->check_ev != NULL)
		event_free(d->check_ev);
	free(d);
}

void
driver_stats(const struct driver *d, struct driver_stats *st)
{
	*st = d->stats;
}
