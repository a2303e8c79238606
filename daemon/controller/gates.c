#include "config.h"

#include <stdlib.h>

#include "cluster_int.h"
#include "gates.h"
#include "jobs.h"

struct gates {
	struct cluster *cl;
	int64_t now_ms;
};

struct gates *
gates_begin(struct cluster *cl, int64_t now_ms)
{
	struct gates *g;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		return NULL;
	g->cl = cl;
	g->now_ms = now_ms;
	return g;
}

void
gates_end(struct gates *g)
{
	free(g);
}

const char *
gates_hold_reason(enum job_hold hold)
{
	return hold == JOB_HOLD_ADMIN ? "JobHeldAdmin" : "JobHeldUser";
}

bool
gates_block(struct gates *g, const struct job *job)
{
	if (job->hold != JOB_HOLD_NONE) {
		jobs_set_pending_reason(g->cl->js, job->id,
		    gates_hold_reason(job->hold));
		return true;
	}
	return false;
}
