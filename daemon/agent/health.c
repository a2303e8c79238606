/* The node's health (health.h): the check program on a timer, NVML's
 * XID events, ECC counters and temperatures, merged into one verdict.
 *
 * The verdict is the check program's last result merged with NVML's,
 * the worse state winning per GPU. With drain_on_gpu_failure (the
 * default) a FAILED GPU makes the node FAILED too ("gpu 3 FAILED:
 * xid=79"), so the controller drains it; without it only that GPU is
 * FAILED and the node's healthy GPUs stay in service.
 *
 * XID policy. NVIDIA's XID catalogue (PRIOR-ART.md) sorts the codes by
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
 * (health_take_xids), so that the controller can restart the job and
 * name the XID as the cause.
 *
 * Besides XIDs, where the library has the functions: a non-zero
 * volatile uncorrected ECC count (errors since the driver loaded or the
 * GPU was last reset) makes the GPU FAILED ("ecc uncorrected=N"), and a
 * temperature at or above temperature_degraded makes it DEGRADED; both
 * are read again at every check, so they clear when the counter or the
 * temperature does.
 *
 * The check program runs in a process group of its own with stdin on
 * /dev/null and stdout through a pipe (64 KiB of it kept); its stderr is
 * the agent's. A run past health_timeout is killed, group and all, with
 * SIGKILL and makes the node FAILED ("health check timed out after 5 s").
 * One run at a time: a tick that finds the last run still going leaves
 * it to its timeout. Nothing here blocks the event loop except
 * health_check_now, which the agent calls once before it registers. */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/wait.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/clock.h"
#include "daemon/agent/agent_config.h"
#include "daemon/agent/health.h"
#include "daemon/agent/nvml.h"
#include "lib/log.h"
#include "lib/text.h"

#define HEALTH_OUT_MAX (64 * 1024)	/* stdout kept from one run */
#define HEALTH_XID_POLL_MS 1000		/* NVML events polled this often */
#define HEALTH_REAP_POLL_MS 100		/* exit checks without a pidfd */
#define HEALTH_XID_QUEUE 64		/* events kept for the heartbeat */
#define HEALTH_XID_BURST 64		/* events taken per poll */

static const struct {
	unsigned xid;
	enum xid_action action;
} xid_defaults[] = {
	{ 13, XID_FAIL_JOB }, { 31, XID_FAIL_JOB }, { 43, XID_FAIL_JOB },
	{ 48, XID_DRAIN }, { 63, XID_DRAIN }, { 64, XID_DRAIN },
	{ 74, XID_DRAIN }, { 79, XID_DRAIN }, { 92, XID_DRAIN },
	{ 94, XID_DRAIN }, { 95, XID_DRAIN },
};

struct health {
	struct event_base *base;
	const struct agent_config *cfg;
	struct nvml *nv;
	unsigned ngpus;
	void (*changed)(const struct node_health *, void *);
	void *arg;

	/* The check program, one run at a time. */
	struct event *tick_ev;		/* every health_interval */
	struct event *out_ev;		/* its stdout is readable */
	struct event *exit_ev;		/* its pidfd, or a polling timer */
	struct event *kill_ev;		/* health_timeout */
	pid_t pid;			/* 0: not running */
	int pidfd;
	int outfd;
	bool out_eof;
	bool timed_out;
	char *out;
	size_t outlen;
	struct node_health prog;	/* its last verdict */

	/* NVML. */
	nvml_event_set_t set;		/* NULL: no XID events */
	struct event *xid_ev;
	unsigned ndev;
	nvml_device_t dev[INV_MAX_GPUS];
	unsigned xid_drain[INV_MAX_GPUS]; /* the XID that failed it, 0 */
	struct node_health nvh;		/* NVML's verdict */
	struct xid_event xq[HEALTH_XID_QUEUE];
	size_t nxq;

	struct node_health cur;		/* the two merged */
};

/* ---- parsing ---- */

/* Append to a reason, "; "-separated, cut at its size. */
static void __attribute__((format(printf, 2, 3)))
reason_add(char *reason, const char *fmt, ...)
{
	size_t len = strlen(reason);
	va_list ap;

	if (len > 0 && len + 2 < HEALTH_REASON_MAX) {
		memcpy(reason + len, "; ", 3);
		len += 2;
	}
	if (len + 1 >= HEALTH_REASON_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(reason + len, HEALTH_REASON_MAX - len, fmt, ap);
	va_end(ap);
}

static void
reason_set(char *reason, const char *s, size_t len)
{
	if (len >= HEALTH_REASON_MAX)
		len = HEALTH_REASON_MAX - 1;
	memcpy(reason, s, len);
	reason[len] = '\0';
}

/* The next blank-separated word of [*s, end): its start and length;
 * *s moves past it and the blanks after it. */
static size_t
next_word(const char **s, const char *end, const char **w)
{
	const char *p = *s;
	size_t n;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	*w = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	n = (size_t)(p - *w);
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	*s = p;
	return n;
}

static bool
word_is(const char *w, size_t n, const char *s)
{
	return n == strlen(s) && strncasecmp(w, s, n) == 0;
}

static bool
parse_state(const char *w, size_t n, enum health_state *h)
{
	if (word_is(w, n, "OK"))
		*h = HEALTH_OK;
	else if (word_is(w, n, "DEGRADED"))
		*h = HEALTH_DEGRADED;
	else if (word_is(w, n, "FAILED"))
		*h = HEALTH_FAILED;
	else
		return false;
	return true;
}

/* The entry of GPU idx in h, added (OK) when missing; NULL when full. */
static struct gpu_health *
gpu_entry(struct node_health *h, unsigned idx)
{
	unsigned i;

	for (i = 0; i < h->ngpus; i++)
		if (h->gpus[i].index == idx)
			return &h->gpus[i];
	if (h->ngpus == INV_MAX_GPUS)
		return NULL;
	memset(&h->gpus[h->ngpus], 0, sizeof(h->gpus[0]));
	h->gpus[h->ngpus].index = idx;
	h->gpus[h->ngpus].health = HEALTH_OK;
	return &h->gpus[h->ngpus++];
}

/* The worse state wins; on a tie the first reason stays. */
static void
worse(enum health_state *cur, char *reason, enum health_state h, const char *r,
    size_t rlen)
{
	if (h > *cur || (h == *cur && h != HEALTH_OK && reason[0] == '\0')) {
		*cur = h;
		reason_set(reason, r, rlen);
	}
}

/* Only GPUs that are not OK are listed, by index. */
static void
gpus_tidy(struct node_health *h)
{
	unsigned i, j;
	struct gpu_health t;

	for (i = j = 0; i < h->ngpus; i++)
		if (h->gpus[i].health != HEALTH_OK)
			h->gpus[j++] = h->gpus[i];
	h->ngpus = j;
	for (i = 1; i < h->ngpus; i++) {
		t = h->gpus[i];
		for (j = i; j > 0 && h->gpus[j - 1].index > t.index; j--)
			h->gpus[j] = h->gpus[j - 1];
		h->gpus[j] = t;
	}
}

static bool
all_digits(const char *w, size_t n)
{
	while (n-- > 0)
		if (!isdigit((unsigned char)*w++))
			return false;
	return true;
}

/* One line, trimmed and not empty. false with *why set when it does not
 * parse. */
static bool
parse_line(const char *s, const char *end, unsigned ngpus,
    struct node_health *h, char *why, size_t whylen)
{
	const char *w;
	size_t n;
	enum health_state st;
	struct gpu_health *g;
	unsigned long idx;
	char num[8];

	n = next_word(&s, end, &w);
	if (word_is(w, n, "node")) {
		n = next_word(&s, end, &w);
		if (!parse_state(w, n, &st)) {
			snprintf(why, whylen, "node: '%.*s' is not OK, "
			    "DEGRADED or FAILED", (int)(n > 32 ? 32 : n), w);
			return false;
		}
		worse(&h->health, h->reason, st, s, (size_t)(end - s));
		return true;
	}
	if (!word_is(w, n, "gpu")) {
		snprintf(why, whylen, "unparsable line '%.*s'",
		    (int)(end - w > 64 ? 64 : end - w), w);
		return false;
	}
	n = next_word(&s, end, &w);
	/* Within the word only: the output need not end in a NUL (found
	 * by tests/fuzz: strspn ran past the end of "gpu 3"). */
	if (n == 0 || n >= sizeof(num) || !all_digits(w, n)) {
		snprintf(why, whylen, "gpu: '%.*s' is not a GPU index",
		    (int)(n > 32 ? 32 : n), w);
		return false;
	}
	memcpy(num, w, n);
	num[n] = '\0';
	idx = strtoul(num, NULL, 10);
	if (idx >= ngpus) {
		snprintf(why, whylen, "gpu %lu: no such GPU (this node has "
		    "%u)", idx, ngpus);
		return false;
	}
	n = next_word(&s, end, &w);
	if (!parse_state(w, n, &st)) {
		snprintf(why, whylen, "gpu %lu: '%.*s' is not OK, DEGRADED or "
		    "FAILED", idx, (int)(n > 32 ? 32 : n), w);
		return false;
	}
	if ((g = gpu_entry(h, (unsigned)idx)) != NULL)
		worse(&g->health, g->reason, st, s, (size_t)(end - s));
	return true;
}

int
health_parse(const char *out, size_t len, int wait_status, unsigned ngpus,
    struct node_health *h)
{
	const char *p, *end, *nl, *s, *e;
	char why[HEALTH_REASON_MAX], first[HEALTH_REASON_MAX], lead[64];
	unsigned bad = 0, i;
	bool failed;

	if (h == NULL || (out == NULL && len > 0) || ngpus > INV_MAX_GPUS) {
		errno = EINVAL;
		return -1;
	}
	memset(h, 0, sizeof(*h));
	h->health = HEALTH_OK;
	first[0] = '\0';
	for (p = out, end = out + len; p != NULL && p < end; ) {
		nl = memchr(p, '\n', (size_t)(end - p));
		s = p;
		e = nl != NULL ? nl : end;
		p = nl != NULL ? nl + 1 : NULL;
		while (s < e && isspace((unsigned char)*s))
			s++;
		while (e > s && isspace((unsigned char)e[-1]))
			e--;
		if (s == e || *s == '#')
			continue;
		if (memchr(s, '\0', (size_t)(e - s)) != NULL) {
			snprintf(why, sizeof(why), "a line with a NUL byte");
		} else if (parse_line(s, e, ngpus, h, why, sizeof(why)))
			continue;
		if (bad++ == 0)
			snprintf(first, sizeof(first), "%s", why);
	}
	gpus_tidy(h);
	failed = h->health == HEALTH_FAILED;
	for (i = 0; i < h->ngpus; i++)
		failed = failed || h->gpus[i].health == HEALTH_FAILED;
	lead[0] = '\0';
	if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) != 0)
		snprintf(lead, sizeof(lead), "health check exited with status "
		    "%d", WEXITSTATUS(wait_status));
	else if (WIFSIGNALED(wait_status))
		snprintf(lead, sizeof(lead), "health check killed by signal "
		    "%d", WTERMSIG(wait_status));
	if (lead[0] != '\0' && !failed) {
		/* What the node line said, if anything, stays as the
		 * detail. */
		snprintf(why, sizeof(why), "%s", h->reason);
		h->health = HEALTH_FAILED;
		snprintf(h->reason, sizeof(h->reason), "%s", lead);
		if (why[0] != '\0')
			reason_add(h->reason, "%s", why);
	}
	if (bad > 0) {
		if (bad == 1)
			reason_add(h->reason, "%s", first);
		else
			reason_add(h->reason, "%s (and %u more bad lines)",
			    first, bad - 1);
	}
	/* The check's own words, cut to size: sent as protobuf strings,
	 * which must be text (lib/wirecheck.c), and shown in tables. */
	text_sanitize(h->reason);
	for (i = 0; i < h->ngpus; i++)
		text_sanitize(h->gpus[i].reason);
	return 0;
}

enum xid_action
health_xid_action(const struct agent_config *cfg, unsigned xid)
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

/* ---- the verdict ---- */

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

/* cur = prog merged with nvh; tell the callback when it changed. */
static void
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
		if ((g = gpu_entry(n, src->index)) != NULL)
			worse(&g->health, g->reason, src->health, src->reason,
			    strlen(src->reason));
	}
	gpus_tidy(n);
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

/* ---- NVML ---- */

static void
nvml_gpu_set(struct node_health *h, unsigned idx, enum health_state st,
    const char *reason)
{
	struct gpu_health *g;

	if ((g = gpu_entry(h, idx)) != NULL)
		worse(&g->health, g->reason, st, reason, strlen(reason));
}

/* NVML's verdict: drained XIDs, ECC counts and temperatures. */
static void
nvml_read(struct health *hl)
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
			nvml_gpu_set(&hl->nvh, i, HEALTH_FAILED, r);
		}
		if (nv->nvmlDeviceGetTotalEccErrors != NULL &&
		    nv->nvmlDeviceGetTotalEccErrors(hl->dev[i],
		    NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
		    &ecc) == NVML_SUCCESS && ecc > 0) {
			snprintf(r, sizeof(r), "ecc uncorrected=%llu", ecc);
			nvml_gpu_set(&hl->nvh, i, HEALTH_FAILED, r);
		}
		if (hl->cfg->temperature_degraded > 0 &&
		    nv->nvmlDeviceGetTemperature != NULL &&
		    nv->nvmlDeviceGetTemperature(hl->dev[i],
		    NVML_TEMPERATURE_GPU, &t) == NVML_SUCCESS &&
		    t >= hl->cfg->temperature_degraded) {
			snprintf(r, sizeof(r), "temperature=%uC", t);
			nvml_gpu_set(&hl->nvh, i, HEALTH_DEGRADED, r);
		}
	}
	gpus_tidy(&hl->nvh);
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

/* Take what events NVML has, without waiting. true when a GPU was
 * drained. */
static bool
xid_poll(struct health *hl)
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
		a = health_xid_action(hl->cfg, xid);
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

	if (xid_poll(hl)) {
		nvml_read(hl);
		health_update(hl);
	}
}

/* Handles and an event set for XIDs, where the library can. */
static void
nvml_setup(struct health *hl)
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

/* ---- the check program ---- */

/* Fork and exec the program: its own process group, stdin /dev/null,
 * stdout the returned pipe. 0, or -1 (logged). */
static int
prog_spawn(struct health *hl)
{
	const char *prog = hl->cfg->health_program;
	int p[2], fd, e;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1) {
		e = errno;
		log_warn("health: pipe");
		errno = e;
		return -1;
	}
	if ((pid = fork()) == -1) {
		e = errno;
		log_warn("health: fork");
		close(p[0]);
		close(p[1]);
		errno = e;
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		if ((fd = open("/dev/null", O_RDONLY)) != -1 && fd != 0) {
			dup2(fd, 0);
			close(fd);
		}
		if (p[1] != 1) {
			dup2(p[1], 1);
			close(p[1]);
		} else
			fcntl(1, F_SETFD, 0);
		execl(prog, prog, (char *)NULL);
		/* Said on the pipe, so that the verdict carries it. */
		dprintf(1, "node FAILED cannot run %s: %s\n", prog,
		    strerror(errno));
		_exit(127);
	}
	/* Both sides, so that the group exists before either uses it. */
	setpgid(pid, pid);
	close(p[1]);
	fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
	hl->pid = pid;
	hl->outfd = p[0];
	hl->out_eof = false;
	hl->timed_out = false;
	hl->outlen = 0;
	return 0;
}

/* Read what the pipe has, keeping up to HEALTH_OUT_MAX. false at EOF or
 * on an error other than EAGAIN. */
static bool
prog_read(struct health *hl)
{
	char buf[4096];
	ssize_t n;
	size_t keep;

	for (;;) {
		n = read(hl->outfd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return true;
		if (n <= 0) {
			hl->out_eof = true;
			return false;
		}
		keep = HEALTH_OUT_MAX - hl->outlen;
		if ((size_t)n < keep)
			keep = (size_t)n;
		memcpy(hl->out + hl->outlen, buf, keep);
		hl->outlen += keep;
		/* A program that never stops writing is stopped by its
		 * timeout; here, read in bounded bites. */
		if ((size_t)n < sizeof(buf))
			return true;
	}
}

/* The run is over (status reaped): its verdict, then the merged one. */
static void
prog_finish(struct health *hl, int status)
{
	if (hl->out_ev != NULL) {
		event_free(hl->out_ev);
		hl->out_ev = NULL;
	}
	if (hl->exit_ev != NULL) {
		event_free(hl->exit_ev);
		hl->exit_ev = NULL;
	}
	if (hl->kill_ev != NULL)
		evtimer_del(hl->kill_ev);
	if (hl->pidfd >= 0)
		close(hl->pidfd);
	hl->pidfd = -1;
	/* Whatever is still in the pipe (the program is gone; a child it
	 * left behind could keep writing, so one bite only). */
	if (!hl->out_eof)
		prog_read(hl);
	close(hl->outfd);
	hl->outfd = -1;
	hl->pid = 0;
	if (hl->timed_out) {
		memset(&hl->prog, 0, sizeof(hl->prog));
		hl->prog.health = HEALTH_FAILED;
		snprintf(hl->prog.reason, sizeof(hl->prog.reason),
		    "health check timed out after %" PRIu64 " s",
		    (hl->cfg->health_timeout_ms + 999) / 1000);
	} else
		health_parse(hl->out, hl->outlen, status, hl->ngpus,
		    &hl->prog);
	nvml_read(hl);
	health_update(hl);
}

static void
prog_out_cb(evutil_socket_t fd, short what, void *arg)
{
	struct health *hl = arg;

	if (!prog_read(hl))
		event_del(hl->out_ev);
}

static void
prog_exit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct health *hl = arg;
	int status;
	pid_t w;

	while ((w = waitpid(hl->pid, &status, WNOHANG)) == -1 &&
	    errno == EINTR)
		;
	if (w == 0) {
		/* Still running: the polling timer goes on; a pidfd that
		 * woke us early is watched again. */
		if (hl->pidfd >= 0)
			event_add(hl->exit_ev, NULL);
		return;
	}
	if (w == -1) {
		log_warn("health: waitpid %d", (int)hl->pid);
		status = W_EXITCODE(127, 0);
	}
	prog_finish(hl, status);
}

static void
prog_kill_cb(evutil_socket_t fd, short what, void *arg)
{
	struct health *hl = arg;

	log_warnx("health: %s still running after %" PRIu64 " ms; killed",
	    hl->cfg->health_program, hl->cfg->health_timeout_ms);
	hl->timed_out = true;
	kill(-hl->pid, SIGKILL);
	/* prog_exit_cb reaps it. */
}

static void
ms_tv(uint64_t ms, struct timeval *tv)
{
	tv->tv_sec = (time_t)(ms / 1000);
	tv->tv_usec = (suseconds_t)(ms % 1000) * 1000;
}

/* The check could not even start: that is its verdict. */
static void
prog_unstartable(struct health *hl, int e)
{
	memset(&hl->prog, 0, sizeof(hl->prog));
	hl->prog.health = HEALTH_FAILED;
	snprintf(hl->prog.reason, sizeof(hl->prog.reason),
	    "cannot start the health check: %s", strerror(e));
	nvml_read(hl);
	health_update(hl);
}

static void
prog_start(struct health *hl)
{
	struct timeval tv;

	if (prog_spawn(hl) == -1) {
		prog_unstartable(hl, errno);
		return;
	}
	hl->pidfd = pidfd_open(hl->pid, 0);
	hl->out_ev = event_new(hl->base, hl->outfd, EV_READ | EV_PERSIST,
	    prog_out_cb, hl);
	if (hl->pidfd >= 0)
		hl->exit_ev = event_new(hl->base, hl->pidfd, EV_READ,
		    prog_exit_cb, hl);
	else
		hl->exit_ev = event_new(hl->base, -1, EV_PERSIST,
		    prog_exit_cb, hl);
	if (hl->out_ev == NULL || hl->exit_ev == NULL) {
		log_warnx("health: cannot watch the check");
		hl->timed_out = true;
		kill(-hl->pid, SIGKILL);
		while (waitpid(hl->pid, NULL, 0) == -1 && errno == EINTR)
			;
		prog_finish(hl, 0);
		return;
	}
	event_add(hl->out_ev, NULL);
	ms_tv(HEALTH_REAP_POLL_MS, &tv);
	event_add(hl->exit_ev, hl->pidfd >= 0 ? NULL : &tv);
	ms_tv(hl->cfg->health_timeout_ms, &tv);
	evtimer_add(hl->kill_ev, &tv);
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct health *hl = arg;

	if (hl->cfg->health_program == NULL) {
		nvml_read(hl);
		health_update(hl);
	} else if (hl->pid == 0)
		prog_start(hl);
	/* else: still running; its timeout will end it. */
}

void
health_check_now(struct health *hl)
{
	struct pollfd pfd;
	int64_t deadline, left;
	int status = 0, w;

	xid_poll(hl);
	if (hl->cfg->health_program == NULL || hl->pid != 0) {
		nvml_read(hl);
		health_update(hl);
		return;
	}
	if (prog_spawn(hl) == -1) {
		prog_unstartable(hl, errno);
		return;
	}
	deadline = clock_now_ms() + (int64_t)hl->cfg->health_timeout_ms;
	for (;;) {
		if ((w = waitpid(hl->pid, &status, WNOHANG)) == hl->pid)
			break;
		if (w == -1 && errno != EINTR) {
			status = W_EXITCODE(127, 0);
			break;
		}
		if ((left = deadline - clock_now_ms()) <= 0) {
			hl->timed_out = true;
			kill(-hl->pid, SIGKILL);
			while (waitpid(hl->pid, &status, 0) == -1 &&
			    errno == EINTR)
				;
			break;
		}
		pfd.fd = hl->outfd;
		pfd.events = POLLIN;
		/* Short waits: the exit is noticed by waitpid. */
		if (hl->out_eof)
			poll(NULL, 0, left < 20 ? (int)left : 20);
		else if (poll(&pfd, 1, left < 20 ? (int)left : 20) > 0)
			prog_read(hl);
	}
	prog_finish(hl, status);
}

/* ---- life ---- */

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
	hl->kill_ev = evtimer_new(base, prog_kill_cb, hl);
	if (hl->tick_ev == NULL || hl->kill_ev == NULL)
		goto fail;
	if (nv != NULL)
		nvml_setup(hl);
	if (cfg->health_program != NULL || nv != NULL) {
		ms_tv(cfg->health_interval_ms, &tv);
		if (event_add(hl->tick_ev, &tv) == -1)
			goto fail;
	}
	if (hl->set != NULL) {
		ms_tv(HEALTH_XID_POLL_MS, &tv);
		if ((hl->xid_ev = event_new(base, -1, EV_PERSIST, xid_cb,
		    hl)) == NULL || event_add(hl->xid_ev, &tv) == -1)
			goto fail;
	}
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
	if (hl->pid != 0) {
		kill(-hl->pid, SIGKILL);
		while (waitpid(hl->pid, NULL, 0) == -1 && errno == EINTR)
			;
	}
	if (hl->out_ev != NULL)
		event_free(hl->out_ev);
	if (hl->exit_ev != NULL)
		event_free(hl->exit_ev);
	if (hl->kill_ev != NULL)
		event_free(hl->kill_ev);
	if (hl->tick_ev != NULL)
		event_free(hl->tick_ev);
	if (hl->xid_ev != NULL)
		event_free(hl->xid_ev);
	if (hl->pidfd >= 0)
		close(hl->pidfd);
	if (hl->outfd >= 0)
		close(hl->outfd);
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

size_t
health_take_xids(struct health *hl, struct xid_event *out, size_t max)
{
	size_t n = hl->nxq < max ? hl->nxq : max;

	memcpy(out, hl->xq, n * sizeof(*out));
	memmove(hl->xq, hl->xq + n, (hl->nxq - n) * sizeof(*out));
	hl->nxq -= n;
	return n;
}
