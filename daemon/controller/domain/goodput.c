/* Goodput: where a job's wall time went, and checkpoint-interval advice
 * (goodput.h). Every part is accounted at the job's changes, so a job's
 * split costs nothing between them and survives a controller restart
 * with the job's row. */
#include "config.h"

#include <math.h>

#include "daemon/controller/domain/goodput.h"

static bool
goodput_running(enum job_state s)
{
	return s == JOB_RUNNING || s == JOB_RESIZING;
}

/* Add ms spent in state s to gp. */
static void
goodput_phase(struct job_goodput *gp, enum job_state s, uint64_t ms)
{
	switch (s) {
	case JOB_RUNNING:
	case JOB_RESIZING:
		gp->run_ms += ms;
		break;
	case JOB_RESTARTING:
		gp->restart_ms += ms;
		break;
	case JOB_PENDING:
		gp->wait_ms += ms;
		break;
	default:
		/* Ended: the wall time stops with it. */
		break;
	}
}

void
goodput_advance(const struct job *job, struct job *next, int64_t now_ms)
{
	struct job_goodput *gp = &next->gp;

	if (gp->first_start_ms == 0) {
		if (next->state == JOB_RUNNING && job->state != JOB_RUNNING)
			gp->first_start_ms = gp->mark_ms = now_ms;
		return;
	}
	if (now_ms > gp->mark_ms) {
		goodput_phase(gp, job->state, (uint64_t)(now_ms - gp->mark_ms));
		gp->mark_ms = now_ms;
	}
	/* The work since the last checkpoint is done again after a restart
	 * or a requeue; a job that ends keeps what it did. */
	if (goodput_running(job->state) &&
	    (next->state == JOB_RESTARTING || next->state == JOB_PENDING))
		gp->lost_ms += job_unsaved_ms(job, now_ms);
}

void
goodput_checkpoint(struct job *next, int64_t asked_ms, int64_t written_ms,
    int64_t now_ms)
{
	int64_t end = written_ms;

	if (asked_ms <= 0 || written_ms < asked_ms || now_ms < asked_ms)
		return;
	if (end > now_ms)
		end = now_ms;
	next->gp.ckpt_ms += (uint64_t)(end - asked_ms);
	next->gp.ckpt_cost_ms = (uint64_t)(end - asked_ms);
}

void
goodput_reported(struct job *next, uint32_t cost_ms)
{
	if (cost_ms == 0 || cost_ms > GOODPUT_CKPT_COST_MAX_MS)
		return;
	next->gp.ckpt_ms += cost_ms;
	next->gp.ckpt_cost_ms = cost_ms;
}

void
goodput_reported_late(struct job *next, uint64_t measured_ms,
    uint32_t cost_ms)
{
	if (cost_ms == 0 || cost_ms > GOODPUT_CKPT_COST_MAX_MS)
		return;
	next->gp.ckpt_ms -= measured_ms <= next->gp.ckpt_ms ? measured_ms :
	    next->gp.ckpt_ms;
	goodput_reported(next, cost_ms);
}

bool
goodput_advice_renew(uint32_t sent_s, int64_t sent_ms, uint32_t now_s,
    int64_t now_ms)
{
	double d;

	if (now_s == 0 || now_s == sent_s)
		return false;
	if (sent_s == 0)
		return true;
	d = fabs((double)now_s - (double)sent_s) / (double)sent_s;
	return d >= GOODPUT_ADVICE_CHANGE ||
	    now_ms - sent_ms >= GOODPUT_ADVICE_PERIOD_MS;
}

void
goodput_view(const struct job *job, int64_t now_ms,
    struct job_goodput_view *v)
{
	struct job_goodput gp = job->gp;
	uint64_t wall, lost, ckpt;

	v->set = true;
	v->advice_s = job->ckpt_advice_s;
	v->ckpt_cost_ms = gp.ckpt_cost_ms;
	v->productive_ms = v->lost_ms = v->restart_ms = v->wait_ms =
	    v->ckpt_ms = 0;
	v->ettr = 0;
	if (gp.first_start_ms == 0)
		return;
	if (now_ms > gp.mark_ms)
		goodput_phase(&gp, job->state, (uint64_t)(now_ms -
		    gp.mark_ms));
	/* Lost work and checkpoint time are parts of the run time; bounded
	 * by it so that the parts add up whatever a node's clock said. */
	lost = gp.lost_ms < gp.run_ms ? gp.lost_ms : gp.run_ms;
	ckpt = gp.ckpt_ms < gp.run_ms - lost ? gp.ckpt_ms : gp.run_ms - lost;
	v->productive_ms = gp.run_ms - lost - ckpt;
	v->lost_ms = lost;
	v->ckpt_ms = ckpt;
	v->restart_ms = gp.restart_ms;
	v->wait_ms = gp.wait_ms;
	wall = gp.run_ms + gp.restart_ms + gp.wait_ms;
	v->ettr = wall > 0 ? (double)v->productive_ms / (double)wall : 1.0;
}

void
goodput_rates_init(struct goodput_rates *r, double window_h)
{
	r->failures = 0;
	r->exposure_h = 0;
	r->nodes = 0;
	r->at_ms = 0;
	r->window_h = window_h > 0 ? window_h : GOODPUT_WINDOW_H;
}

/* Bring r to now: what is there decays, the nodes in service add. */
static void
goodput_rates_decay(struct goodput_rates *r, int64_t now_ms)
{
	double dt_h, f;

	if (r->at_ms == 0 || now_ms <= r->at_ms) {
		if (r->at_ms == 0)
			r->at_ms = now_ms;
		return;
	}
	dt_h = (double)(now_ms - r->at_ms) / 3.6e6;
	f = exp(-dt_h / r->window_h);
	r->failures *= f;
	/* The node-hours of the interval, each decayed from its own time:
	 * nodes x window x (1 - f). */
	r->exposure_h = r->exposure_h * f + (double)r->nodes * r->window_h *
	    (1 - f);
	r->at_ms = now_ms;
}

void
goodput_rates_tick(struct goodput_rates *r, unsigned nodes, int64_t now_ms)
{
	goodput_rates_decay(r, now_ms);
	r->nodes = nodes;
}

void
goodput_rates_failure(struct goodput_rates *r, int64_t now_ms)
{
	goodput_rates_decay(r, now_ms);
	r->failures += 1;
}

double
goodput_node_mtbf_h(const struct goodput_rates *r)
{
	return (GOODPUT_PRIOR_FAILURES * GOODPUT_PRIOR_NODE_MTBF_H +
	    r->exposure_h) / (GOODPUT_PRIOR_FAILURES + r->failures);
}

double
goodput_interval_s(double c_s, double m_s)
{
	double x;

	if (!(c_s > 0) || !(m_s > 0))
		return 0;
	if (c_s >= 2 * m_s)
		return m_s;
	x = c_s / (2 * m_s);
	return sqrt(2 * c_s * m_s) * (1 + sqrt(x) / 3 + x / 9) - c_s;
}

uint32_t
goodput_advice_s(const struct goodput_rates *r, const struct job *job)
{
	double c, m, t;
	size_t nodes = job->nplace > 0 ? job->nplace : job->spec.nodes_min;

	if (nodes == 0)
		nodes = 1;
	if (job->gp.ckpt_cost_ms > 0)
		c = (double)job->gp.ckpt_cost_ms / 1e3;
	else if (job->spec.ckpt_secs > 0)
		c = (double)job->spec.ckpt_secs;
	else
		c = GOODPUT_DEFAULT_CKPT_S;
	m = goodput_node_mtbf_h(r) * 3600.0 / (double)nodes;
	t = ceil(goodput_interval_s(c, m));
	if (t < 1)
		return 1;
	return t > (double)UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}
