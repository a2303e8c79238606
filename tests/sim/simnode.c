/* A simulated node: its link's operations are a list of timers. */
#include "config.h"

#include <sys/queue.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "daemon/agent/inventory.h"
#include "daemon/agent/link.h"
#include "lib/clock.h"
#include "tests/sim/sim.h"
#include "tests/sim/simnode.h"

/* A node whose controller does not read: drop the connection. */
#define SIMNODE_MAX_QUEUED (4u * 1024 * 1024)

struct simtask {
	TAILQ_ENTRY(simtask) entry;
	struct simnode *node;
	struct event *ev;	/* the run timer; NULL once ended */
	uint64_t job_id;
	uint32_t restart;
	unsigned rank;
	int wait_status;	/* how it will end, then how it ended */
	bool running;
	bool stopped;		/* by Stop: ends as killed by SIGTERM */
};

TAILQ_HEAD(simtasks, simtask);

struct simnode {
	struct sim *sim;
	struct link *link;
	EVP_PKEY *key;
	X509 *cert;
	struct simtasks tasks;
	unsigned ntasks;
	bool counted;		/* in sim->connecting */
	bool ready;		/* in sim->ready */
	bool crashed;
	char name[SIMNODE_NAME_MAX + 1];
};

static void
simnode_task_free(struct simtask *t)
{
	struct simnode *nd = t->node;

	if (t->ev != NULL)
		event_free(t->ev);
	TAILQ_REMOVE(&nd->tasks, t, entry);
	nd->ntasks--;
	free(t);
}

static void
simnode_task_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct simtask *t = arg;
	struct simnode *nd = t->node;
	struct sim *s = nd->sim;
	struct task_report r = { 0 };

	event_free(t->ev);
	t->ev = NULL;
	t->running = false;
	if (t->stopped)
		t->wait_status = SIGTERM;	/* killed by SIGTERM */
	else if (s->o.fail_rate > 0 && (double)rand_r(&s->seed) /
	    ((double)RAND_MAX + 1) < s->o.fail_rate)
		t->wait_status = 1 << 8;	/* exit 1 */
	s->exits++;
	r.job_id = t->job_id;
	r.restart = t->restart;
	r.rank = t->rank;
	r.wait_status = t->wait_status;
	link_task_exited(&r, nd->link);
}

/* ---- the link's operations ---------------------------------------------- */

static const struct inventory *
simnode_op_inventory(void *arg, struct cerr *err)
{
	struct simnode *nd = arg;

	/* The same every time: UUIDs derive from the name. */
	if (inventory_simulated(&nd->sim->o.gpus, nd->name, &nd->sim->inv,
	    err) == -1)
		return NULL;
	return &nd->sim->inv;
}

static const struct node_health *
simnode_op_health(void *arg)
{
	struct simnode *nd = arg;

	return &nd->sim->health;
}

static struct task_report *
simnode_op_tasks(void *arg, size_t *n)
{
	struct simnode *nd = arg;
	struct task_report *r;
	struct simtask *t;
	size_t i = 0;

	*n = 0;
	if (nd->ntasks == 0 || (r = calloc(nd->ntasks, sizeof(*r))) == NULL)
		return NULL;
	TAILQ_FOREACH(t, &nd->tasks, entry) {
		r[i].job_id = t->job_id;
		r[i].restart = t->restart;
		r[i].rank = t->rank;
		r[i].running = t->running;
		r[i].wait_status = t->wait_status;
		i++;
	}
	*n = i;
	return r;
}

/* How long this job's tasks run, and how they end: SIM_SECONDS and
 * SIM_EXIT in the job's environment (`cohort submit --env`; the CLI
 * keeps COHORT_* for itself, but a COHORT_ prefix is accepted too), else
 * the defaults. */
static void
simnode_launch_params(struct sim *s, const struct job_spec *spec,
    uint64_t *ms, int *status)
{
	size_t i;
	char *end;
	double d;
	long v;

	*ms = s->o.task_ms;
	*status = 0;
	for (i = 0; i < spec->nenv; i++) {
		const char *e = spec->env[i];

		if (strncmp(e, "COHORT_", 7) == 0)
			e += 7;
		if (strncmp(e, "SIM_SECONDS=", 12) == 0) {
			errno = 0;
			d = strtod(e + 12, &end);
			if (errno == 0 && end != e + 12 && *end == '\0' &&
			    d >= 0 && d <= 366.0 * 86400)
				*ms = (uint64_t)llround(d * 1000);
		} else if (strncmp(e, "SIM_EXIT=", 9) == 0) {
			v = strtol(e + 9, &end, 10);
			if (end != e + 9 && *end == '\0' && v >= 0 &&
			    v <= 255)
				*status = (int)(v << 8);
		}
	}
}

static bool
simnode_has_start(struct simnode *nd, uint64_t job_id, uint32_t restart)
{
	struct simtask *t;

	TAILQ_FOREACH(t, &nd->tasks, entry)
		if (t->job_id == job_id && t->restart == restart)
			return true;
	return false;
}

static int
simnode_op_launch(void *arg, const struct launch *l, struct cerr *err)
{
	struct simnode *nd = arg;
	struct sim *s = nd->sim;
	unsigned tpn = l->spec->tasks_per_node > 0 ?
	    l->spec->tasks_per_node : 1, r;
	struct timeval tv;
	struct simtask *t;
	uint64_t ms;
	int status;

	/* Idempotent on (job, restart), as the real agent. */
	if (simnode_has_start(nd, l->job_id, l->restart))
		return 0;
	if (tpn > SIMNODE_MAX_TASKS - nd->ntasks)
		return cerr_set(err, ERR_UNAVAILABLE, "simulated node: too "
		    "many tasks");
	simnode_launch_params(s, l->spec, &ms, &status);
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
	for (r = 0; r < tpn; r++) {
		if ((t = calloc(1, sizeof(*t))) == NULL ||
		    (t->ev = evtimer_new(s->base, simnode_task_done_cb,
		    t)) == NULL) {
			free(t);
			/* Nothing of this start is left running. */
			while (r-- > 0)
				simnode_task_free(TAILQ_LAST(&nd->tasks,
				    simtasks));
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		}
		t->node = nd;
		t->job_id = l->job_id;
		t->restart = l->restart;
		t->rank = l->node_rank * tpn + r;
		t->running = true;
		t->wait_status = status;
		TAILQ_INSERT_TAIL(&nd->tasks, t, entry);
		nd->ntasks++;
		evtimer_add(t->ev, &tv);
	}
	s->launches++;
	return 0;
}

/* The ranks end at once, but after the reply, as a real task's exit
 * comes after the agent's StopReply. */
static void
simnode_op_stop(void *arg, uint64_t job_id, uint32_t restart,
    const uint32_t *step)
{
	struct simnode *nd = arg;
	struct timeval now = { 0, 0 };
	struct simtask *t;

	nd->sim->stops++;
	/* Simulated nodes run no job steps. */
	if (step != NULL)
		return;
	TAILQ_FOREACH(t, &nd->tasks, entry) {
		if (t->job_id != job_id || t->restart != restart ||
		    !t->running)
			continue;
		t->stopped = true;
		evtimer_add(t->ev, &now);
	}
}

static unsigned
simnode_op_signal(void *arg, uint64_t job_id, uint32_t restart,
    const uint32_t *step, enum agent_scope scope, int sig)
{
	struct simnode *nd = arg;
	struct simtask *t;
	unsigned n = 0;

	if (step != NULL || scope == AGENT_SCOPE_STEPS)
		return 0;

	TAILQ_FOREACH(t, &nd->tasks, entry)
		n += t->job_id == job_id && t->restart == restart &&
		    t->running;
	return n;
}

static ssize_t
simnode_op_read_log(void *arg, uint64_t job_id, uint32_t restart,
    const uint32_t *step, unsigned rank, bool is_stderr, uint64_t offset,
    void *buf, size_t max)
{
	return 0;		/* simulated tasks write nothing */
}

static void
simnode_op_exit_acked(void *arg, uint64_t job_id, uint32_t restart,
    const uint32_t *step, unsigned rank)
{
	struct simnode *nd = arg;
	struct simtask *t;

	if (step != NULL)
		return;

	TAILQ_FOREACH(t, &nd->tasks, entry) {
		if (t->job_id == job_id && t->restart == restart &&
		    t->rank == rank && !t->running) {
			simnode_task_free(t);
			nd->sim->acks++;
			return;
		}
	}
}

/* Handshakes in flight are bounded: the controller's accept backlog and
 * both CPUs are finite. */
static bool
simnode_op_may_connect(void *arg)
{
	struct simnode *nd = arg;

	return nd->sim->connecting < nd->sim->o.max_connecting;
}

static void
simnode_uncount(struct simnode *nd)
{
	if (nd->counted) {
		nd->counted = false;
		nd->sim->connecting--;
	}
	if (nd->ready) {
		nd->ready = false;
		nd->sim->ready--;
	}
}

static void
simnode_op_event(void *arg, enum link_event ev)
{
	struct simnode *nd = arg;
	struct sim *s = nd->sim;

	switch (ev) {
	case LINK_EV_CONNECTING:
		s->connects++;
		s->connecting++;
		nd->counted = true;
		return;
	case LINK_EV_READY:
		simnode_uncount(nd);
		nd->ready = true;
		s->ready++;
		sim_node_ready(s);
		return;
	case LINK_EV_DOWN:
		simnode_uncount(nd);
		s->resets++;
		return;
	}
}

static void
simnode_op_log(void *arg, enum link_log level, const char *text)
{
	struct simnode *nd = arg;

	/* Routine lines of thousands of nodes only when asked for. */
	if (level == LINK_LOG_INFO && !nd->sim->o.verbose)
		return;
	sim_log(nd->sim, "%s: %s", nd->name, text);
}

static const struct link_ops simnode_link_ops = {
	.inventory = simnode_op_inventory,
	.health = simnode_op_health,
	.tasks = simnode_op_tasks,
	.launch = simnode_op_launch,
	.stop = simnode_op_stop,
	.signal = simnode_op_signal,
	.read_log = simnode_op_read_log,
	.exit_acked = simnode_op_exit_acked,
	.may_connect = simnode_op_may_connect,
	.event = simnode_op_event,
	.log = simnode_op_log,
};

/* ---- the node ----------------------------------------------------------- */

struct simnode *
simnode_create(struct sim *s, const char *name, EVP_PKEY *key, X509 *cert,
    struct cerr *err)
{
	struct link_params lp = {
		.host = s->o.host,
		.port = s->o.port,
		.addr = (const struct sockaddr *)&s->addr,
		.addrlen = s->addrlen,
		.address = s->o.address,
		.software = SIM_PROG " " PACKAGE_VERSION,
		/* Without --heartbeat, the controller's (2 s if it names
		 * none). */
		.heartbeat_ms = s->o.heartbeat_ms != 0 ? s->o.heartbeat_ms :
		    2000,
		.heartbeat_fixed = s->o.heartbeat_ms != 0,
		.cert = cert,
		.key = key,
		.max_queued = SIMNODE_MAX_QUEUED,
	};
	struct simnode *nd;

	if ((nd = calloc(1, sizeof(*nd))) == NULL) {
		X509_free(cert);
		EVP_PKEY_free(key);
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	nd->sim = s;
	nd->key = key;
	nd->cert = cert;
	TAILQ_INIT(&nd->tasks);
	snprintf(nd->name, sizeof(nd->name), "%s", name);
	lp.name = nd->name;
	if ((nd->link = link_create(s->base, &lp, s->ctx, &simnode_link_ops,
	    nd, err)) == NULL) {
		simnode_destroy(nd);
		return NULL;
	}
	return nd;
}

static void
simnode_drop_tasks(struct simnode *nd)
{
	struct simtask *t;

	while ((t = TAILQ_FIRST(&nd->tasks)) != NULL)
		simnode_task_free(t);
}

void
simnode_destroy(struct simnode *nd)
{
	if (nd == NULL)
		return;
	link_destroy(nd->link);
	simnode_drop_tasks(nd);
	X509_free(nd->cert);
	EVP_PKEY_free(nd->key);
	free(nd);
}

void
simnode_start(struct simnode *nd, uint64_t delay_ms)
{
	link_start(nd->link, delay_ms);
}

void
simnode_crash(struct simnode *nd)
{
	struct sim *s = nd->sim;
	struct simtask *t;
	char jobs[256];
	size_t len = 0;
	uint64_t last = 0;

	jobs[0] = '\0';
	TAILQ_FOREACH(t, &nd->tasks, entry) {
		if (!t->running || t->job_id == last)
			continue;
		last = t->job_id;
		if (len < sizeof(jobs) - 24)
			len += (size_t)snprintf(jobs + len, sizeof(jobs) - len,
			    "%s%" PRIu64, len > 0 ? "," : "", t->job_id);
	}
	link_stop(nd->link);
	simnode_uncount(nd);
	simnode_drop_tasks(nd);
	nd->crashed = true;
	s->crashed++;
	printf("crash %s time_ms %" PRId64 " jobs %s\n", nd->name,
	    clock_now_ms(), len > 0 ? jobs : "-");
	fflush(stdout);
}

bool
simnode_revive(struct simnode *nd)
{
	struct sim *s = nd->sim;

	if (!nd->crashed)
		return false;
	nd->crashed = false;
	s->crashed--;
	printf("revive %s time_ms %" PRId64 "\n", nd->name, clock_now_ms());
	/* Spread, as agents restarted by hand would be. */
	link_start(nd->link, (uint64_t)rand_r(&s->seed) % 500 + 1);
	return true;
}

bool
simnode_ready(const struct simnode *nd)
{
	return nd->ready;
}

unsigned
simnode_running(const struct simnode *nd)
{
	const struct simtask *t;
	unsigned n = 0;

	TAILQ_FOREACH(t, &nd->tasks, entry)
		n += t->running;
	return n;
}
