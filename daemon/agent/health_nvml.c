/* NVML's part of the node's health (health.h): XID events mapped to an
 * action by the XID policy, and the volatile uncorrected ECC count and
 * the temperature of each GPU, read again at every check.
 *
 * XID policy. NVIDIA's XID catalogue (its XID Errors guide) sorts the codes by
 * cause; the defaults follow it, and the agent config's [xid] section
 * overrides any code ("79 = ignore"):
 *
 *   fail-job  13  graphics engine exception   application-caused: the
 *             31  GPU memory page fault       job on that GPU restarts,
 *             43  GPU stopped processing      the node stays in service
 *   drain     48  double-bit ECC error        hardware or driver: the
 *             63  row remapping pending       GPU is FAILED until the
 *             64  row remapping failed        agent restarts (after the
 *             74  NVLink error                GPU was reset or serviced),
 *             79  GPU fell off the bus        and with
 *             92  high single-bit ECC rate    drain_on_gpu_failure the
 *             94  contained ECC error         node is drained
 *             95  uncontained ECC error
 *   ignore    every other code: logged only
 *
 * fail-job and drain events are also queued for the next heartbeat
 * (health_nvml_take_xids), so that the controller can restart the job
 * and name the XID as the cause.
 *
 * Besides XIDs, where the library has the functions: a non-zero
 * volatile uncorrected ECC count (errors since the driver loaded or the
 * GPU was last reset) makes the GPU FAILED ("ecc uncorrected=N"), and a
 * temperature at or above temperature_degraded makes it DEGRADED; both
 * clear when the counter or the temperature does. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "lib/clock.h"
#include "daemon/agent/agent_config.h"
#include "daemon/agent/health_int.h"
#include "daemon/agent/health_parse.h"
#include "daemon/agent/nvml.h"
#include "lib/log.h"

static const struct {
	unsigned xid;
	enum xid_action action;
} xid_defaults[] = {
	{ 13, XID_FAIL_JOB }, { 31, XID_FAIL_JOB }, { 43, XID_FAIL_JOB },
	{ 48, XID_DRAIN }, { 63, XID_DRAIN }, { 64, XID_DRAIN },
	{ 74, XID_DRAIN }, { 79, XID_DRAIN }, { 92, XID_DRAIN },
	{ 94, XID_DRAIN }, { 95, XID_DRAIN },
};

enum xid_action
health_nvml_xid_action(const struct agent_config *cfg, unsigned xid)
{
	size_t i;

	if (cfg != NULL && xid <= AGENT_XID_MAX && cfg->xid_policy[xid] >= 0)
		return (enum xid_action)cfg->xid_policy[xid];
	for (i = 0; i < sizeof(xid_defaults) / sizeof(xid_defaults[0]); i++)
		if (xid_defaults[i].xid == xid)
			return xid_defaults[i].action;
	return XID_IGNORE;
}

static const char *
xid_action_name(enum xid_action a)
{
	switch (a) {
	case XID_FAIL_JOB:
		return "fail-job";
	case XID_DRAIN:
		return "drain";
	case XID_IGNORE:
		break;
	}
	return "ignore";
}

static void
gpu_set(struct node_health *h, unsigned idx, enum health_state st,
    const char *reason)
{
	struct gpu_health *g;

	if ((g = health_parse_gpu(h, idx)) != NULL)
		health_parse_worse(&g->health, g->reason, st, reason,
		    strlen(reason));
}

void
health_nvml_read(struct health *hl)
{
	struct nvml *nv = hl->nv;
	unsigned long long ecc;
	unsigned i, t;
	char r[HEALTH_REASON_MAX];

	memset(&hl->nvh, 0, sizeof(hl->nvh));
	if (nv == NULL)
		return;
	for (i = 0; i < hl->ndev; i++) {
		if (hl->xid_drain[i] != 0) {
			snprintf(r, sizeof(r), "xid=%u", hl->xid_drain[i]);
			gpu_set(&hl->nvh, i, HEALTH_FAILED, r);
		}
		if (nv->nvmlDeviceGetTotalEccErrors != NULL &&
		    nv->nvmlDeviceGetTotalEccErrors(hl->dev[i],
		    NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
		    &ecc) == NVML_SUCCESS && ecc > 0) {
			snprintf(r, sizeof(r), "ecc uncorrected=%llu", ecc);
			gpu_set(&hl->nvh, i, HEALTH_FAILED, r);
		}
		if (hl->cfg->temperature_degraded > 0 &&
		    nv->nvmlDeviceGetTemperature != NULL &&
		    nv->nvmlDeviceGetTemperature(hl->dev[i],
		    NVML_TEMPERATURE_GPU, &t) == NVML_SUCCESS &&
		    t >= hl->cfg->temperature_degraded) {
			snprintf(r, sizeof(r), "temperature=%uC", t);
			gpu_set(&hl->nvh, i, HEALTH_DEGRADED, r);
		}
	}
	health_parse_tidy(&hl->nvh);
}

static void
xid_queue(struct health *hl, unsigned gpu, unsigned xid, enum xid_action a)
{
	if (hl->nxq == HEALTH_XID_QUEUE) {
		log_warnx("health: XID queue full; the oldest (gpu %u xid %u) "
		    "is not reported", hl->xq[0].gpu, hl->xq[0].xid);
		memmove(hl->xq, hl->xq + 1, (hl->nxq - 1) * sizeof(hl->xq[0]));
		hl->nxq--;
	}
	hl->xq[hl->nxq].gpu = gpu;
	hl->xq[hl->nxq].xid = xid;
	hl->xq[hl->nxq].action = a;
	hl->xq[hl->nxq].time_ms = clock_now_ms();
	hl->nxq++;
}

bool
health_nvml_poll(struct health *hl)
{
	struct nvml_event_data d;
	enum xid_action a;
	unsigned i, n, xid;
	bool drained = false;

	if (hl->set == NULL)
		return false;
	for (n = 0; n < HEALTH_XID_BURST; n++) {
		memset(&d, 0, sizeof(d));
		if (hl->nv->nvmlEventSetWait_v2(hl->set, &d, 0) != NVML_SUCCESS)
			break;
		if (!(d.eventType & NVML_EVENT_TYPE_XID_CRITICAL_ERROR))
			continue;
		for (i = 0; i < hl->ndev && hl->dev[i] != d.device; i++)
			;
		xid = d.eventData > 0xffffffffULL ? 0xffffffffu :
		    (unsigned)d.eventData;
		if (i == hl->ndev) {
			log_warnx("health: XID %u on a GPU not in the "
			    "inventory; ignored", xid);
			continue;
		}
		a = health_nvml_xid_action(hl->cfg, xid);
		log_warnx("health: gpu %u: XID %u (%s)", i, xid,
		    xid_action_name(a));
		if (a == XID_IGNORE)
			continue;
		xid_queue(hl, i, xid, a);
		if (a == XID_DRAIN && hl->xid_drain[i] == 0) {
			hl->xid_drain[i] = xid;
			drained = true;
		}
	}
	return drained;
}

static void
xid_cb(evutil_socket_t fd, short what, void *arg)
{
	struct health *hl = arg;

	if (health_nvml_poll(hl)) {
		health_nvml_read(hl);
		health_update(hl);
	}
}

void
health_nvml_setup(struct health *hl)
{
	struct nvml *nv = hl->nv;
	unsigned count = 0, i, registered = 0;
	nvml_return_t rc;

	if (nv->nvmlDeviceGetCount_v2(&count) != NVML_SUCCESS)
		count = 0;
	if (count > hl->ngpus)
		count = hl->ngpus;
	for (i = 0; i < count; i++)
		if (nv->nvmlDeviceGetHandleByIndex_v2(i, &hl->dev[i]) !=
		    NVML_SUCCESS)
			break;
	hl->ndev = i;
	if (nv->nvmlEventSetCreate == NULL || nv->nvmlEventSetFree == NULL ||
	    nv->nvmlDeviceRegisterEvents == NULL ||
	    nv->nvmlEventSetWait_v2 == NULL) {
		log_info("health: this NVML has no events; XIDs are not "
		    "watched");
		return;
	}
	if ((rc = nv->nvmlEventSetCreate(&hl->set)) != NVML_SUCCESS) {
		log_warnx("health: nvmlEventSetCreate: %s; XIDs are not "
		    "watched", nvml_strerror(nv, rc));
		hl->set = NULL;
		return;
	}
	for (i = 0; i < hl->ndev; i++) {
		rc = nv->nvmlDeviceRegisterEvents(hl->dev[i],
		    NVML_EVENT_TYPE_XID_CRITICAL_ERROR, hl->set);
		if (rc == NVML_SUCCESS)
			registered++;
		else
			log_warnx("health: gpu %u: no XID events: %s", i,
			    nvml_strerror(nv, rc));
	}
	log_info("health: watching XIDs on %u of %u GPUs", registered,
	    hl->ndev);
}

int
health_nvml_watch(struct health *hl)
{
	struct timeval tv;

	if (hl->set == NULL)
		return 0;
	health_ms_tv(HEALTH_XID_POLL_MS, &tv);
	if ((hl->xid_ev = event_new(hl->base, -1, EV_PERSIST, xid_cb,
	    hl)) == NULL || event_add(hl->xid_ev, &tv) == -1)
		return -1;
	return 0;
}

size_t
health_nvml_take_xids(struct health *hl, struct xid_event *out, size_t max)
{
	size_t n = hl->nxq < max ? hl->nxq : max;

	memcpy(out, hl->xq, n * sizeof(*out));
	memmove(hl->xq, hl->xq + n, (hl->nxq - n) * sizeof(*out));
	hl->nxq -= n;
	return n;
}
