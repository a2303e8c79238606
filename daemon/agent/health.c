/* The node's health (health.h): the check program's last result
 * (health_check.c, parsed by health_parse.c) merged with NVML's
 * (health_nvml.c) into one verdict, the worse state winning per GPU.
 * With drain_on_gpu_failure (the default) a FAILED GPU makes the node
 * FAILED too ("gpu 3 FAILED: xid=79"), so the controller drains it;
 * without it only that GPU is FAILED and the node's healthy GPUs stay in
 * service. The agent hears of every change through its callback. */
#include "config.h"

#include <sys/time.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "lib/clock.h"
#include "daemon/agent/agent_config.h"
#include "daemon/agent/health_int.h"
#include "daemon/agent/health_parse.h"
#include "daemon/agent/nvml.h"
#include "lib/log.h"
#include "lib/text.h"

static bool
health_same(const struct node_health *a, const struct node_health *b)
{
	unsigned i;

	if (a->health != b->health || strcmp(a->reason, b->reason) != 0 ||
	    a->ngpus != b->ngpus)
		return false;
	for (i = 0; i < a->ngpus; i++)
		if (a->gpus[i].index != b->gpus[i].index ||
		    a->gpus[i].health != b->gpus[i].health ||
		    strcmp(a->gpus[i].reason, b->gpus[i].reason) != 0)
			return false;
	return true;
}

void
health_update(struct health *hl)
{
	struct node_health *n;
	struct gpu_health *g;
	const struct gpu_health *src;
	unsigned i;
	bool same;

	if ((n = malloc(sizeof(*n))) == NULL) {
		log_warnx("health: out of memory");
		return;
	}
	*n = hl->prog;
	for (i = 0; i < hl->nvh.ngpus; i++) {
		src = &hl->nvh.gpus[i];
		if ((g = health_parse_gpu(n, src->index)) != NULL)
			health_parse_worse(&g->health, g->reason,
			    src->health, src->reason, strlen(src->reason));
	}
	health_parse_tidy(n);
	if (hl->cfg->drain_on_gpu_failure && n->health != HEALTH_FAILED) {
		for (i = 0; i < n->ngpus; i++) {
			g = &n->gpus[i];
			if (g->health != HEALTH_FAILED)
				continue;
			n->health = HEALTH_FAILED;
			snprintf(n->reason, sizeof(n->reason), "gpu %u FAILED%s"
			    "%.*s", g->index, g->reason[0] ? ": " : "",
			    HEALTH_REASON_MAX - 24, g->reason);
			text_sanitize(n->reason);	/* a cut UTF-8 sequence */
			break;
		}
	}
	n->checked_ms = clock_now_ms();
	same = health_same(n, &hl->cur);
	hl->cur = *n;
	free(n);
	if (same)
		return;
	if (hl->cur.health == HEALTH_OK && hl->cur.ngpus == 0)
		log_info("health: OK%s%s", hl->cur.reason[0] ? " — " : "",
		    hl->cur.reason);
	else
		log_warnx("health: node %s%s%s, %u GPU%s not OK",
		    health_name(hl->cur.health), hl->cur.reason[0] ? ": " : "",
		    hl->cur.reason, hl->cur.ngpus, hl->cur.ngpus == 1 ? "" :
		    "s");
	for (i = 0; i < hl->cur.ngpus; i++)
		log_warnx("health: gpu %u %s %s", hl->cur.gpus[i].index,
		    health_name(hl->cur.gpus[i].health),
		    hl->cur.gpus[i].reason);
	if (hl->changed != NULL)
		hl->changed(&hl->cur, hl->arg);
}

void
health_ms_tv(uint64_t ms, struct timeval *tv)
{
	tv->tv_sec = (time_t)(ms / 1000);
	tv->tv_usec = (suseconds_t)(ms % 1000) * 1000;
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct health *hl = arg;

	if (hl->cfg->health_program == NULL) {
		health_nvml_read(hl);
		health_update(hl);
	} else if (hl->pid == 0)
		health_check_start(hl);
	/* else: still running; its timeout will end it. */
}

struct health *
health_create(struct event_base *base, const struct agent_config *cfg,
    struct nvml *nv, unsigned ngpus,
    void (*changed)(const struct node_health *h, void *arg), void *arg,
    struct cerr *err)
{
	struct health *hl;
	struct timeval tv;

	if (ngpus > INV_MAX_GPUS) {
		cerr_set(err, ERR_INVALID, "more than %d GPUs", INV_MAX_GPUS);
		return NULL;
	}
	if ((hl = calloc(1, sizeof(*hl))) == NULL ||
	    (hl->out = malloc(HEALTH_OUT_MAX)) == NULL) {
		free(hl);
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	hl->base = base;
	hl->cfg = cfg;
	hl->nv = nv;
	hl->ngpus = ngpus;
	hl->changed = changed;
	hl->arg = arg;
	hl->pidfd = hl->outfd = -1;
	hl->prog.health = hl->nvh.health = hl->cur.health = HEALTH_OK;
	hl->tick_ev = event_new(base, -1, EV_PERSIST, tick_cb, hl);
	if (hl->tick_ev == NULL || health_check_init(hl) == -1)
		goto fail;
	if (nv != NULL)
		health_nvml_setup(hl);
	if (cfg->health_program != NULL || nv != NULL) {
		health_ms_tv(cfg->health_interval_ms, &tv);
		if (event_add(hl->tick_ev, &tv) == -1)
			goto fail;
	}
	if (health_nvml_watch(hl) == -1)
		goto fail;
	return hl;
fail:
	cerr_set(err, ERR_INTERNAL, "cannot create the health timers");
	health_destroy(hl);
	return NULL;
}

void
health_destroy(struct health *hl)
{
	if (hl == NULL)
		return;
	health_check_stop(hl);
	if (hl->tick_ev != NULL)
		event_free(hl->tick_ev);
	if (hl->xid_ev != NULL)
		event_free(hl->xid_ev);
	if (hl->set != NULL)
		hl->nv->nvmlEventSetFree(hl->set);
	free(hl->out);
	free(hl);
}

const struct node_health *
health_current(const struct health *hl)
{
	return &hl->cur;
}

