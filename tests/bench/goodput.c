/* Goodput in virtual time: a discrete-event simulator that
 * runs the REAL controller domain (jobs, nodes, cluster, gang, recovery,
 * placement and the scheduler core, on an in-memory SQLite store: the
 * objects cohortd runs; tests/domain/domain.h) with simulated agents and
 * a virtual clock, on N nodes x 8 GPUs under a two-level topology, and
 * injects failures calibrated on Meta's Llama 3 pre-training report. It
 * measures ETTR (useful training time / wall time) of one large job and
 * where the rest of the wall time went.
 *
 *	goodput [--nodes N] [--days D] [--seeds S] [--seed0 X]
 *	    [--ckpt-min C] [--ckpt-cost-s K] [--restart-s R] [--repair-h H]
 *	    [--maint-h M] [--hang-timeout-s T] [--node-timeout-s T]
 *	    [--health-s T] [--nodes-per-leaf L] [--configs LIST]
 *	    [--sweep FILE] [--sweep-days D] [--rate-x F] [--verbose]
 *
 * Configurations (--configs, comma-separated; default all):
 *   slurm      Slurm-like: node DOWN after 300 s (SlurmdTimeout), GPU
 *              faults seen by a node health check every 300 s (NHC's
 *              usual HealthCheckInterval; Slurm does not read XIDs), a
 *              hang ends when PyTorch's NCCL watchdog kills it (600 s),
 *              and the whole job requeued: the domain has no "requeue
 *              whole", so the simulator emulates it by cancelling the
 *              restarting job and submitting it again (no kept nodes,
 *              placed afresh, waiting for the old tasks like Slurm's
 *              COMPLETING) once Slurm's requeue_delay has passed
 *              (--requeue-delay-s, default 120 s: slurmctld holds a
 *              requeued batch job back that long, AuthInfo's
 *              cred_expire, unless SchedulerParameters=requeue_delay
 *              says otherwise); a rank's non-zero exit (a black hole)
 *              requeues it too, as RequeueExit does, with no limit;
 *              no spares: the job takes every node.
 *   slurm+1    the same with 1% of the nodes left idle (not in the job):
 *              the headroom cohort-1 has, for a fair comparison.
 *   cohort     Cohort's defaults (node_timeout --node-timeout-s, XIDs
 *              within a heartbeat, the agent's health check every
 *              --health-s, --hang-timeout), restarts keep their healthy
 *              nodes; no spares: the job takes every node.
 *   cohort-1, cohort-2   1% and 2% of the nodes registered as hot spares
 *              (the job takes the others).
 *   elastic    no spares, nodes_min = 97% of the nodes: a restart that
 *              finds no replacement shrinks; the job grows back
 *              (checkpoint, restart) when repaired nodes return.
 *
 * The failure model (one Poisson process per node, every node alike):
 * the rates of Table 5 of "The Llama 3 Herd of Models" (Llama Team, AI @
 * Meta, 2024, arXiv:2407.21783): 16,384 H100 GPUs (2,048 nodes), 54 days
 * of pre-training, 466 job interruptions, 47 planned and 419 unexpected.
 * The counts below are the paper's; its percentage column has 30.1% for
 * faulty GPUs where 148 / 419 is 35.3% (the other rows are count / 419);
 * the simulator uses the counts. Each kind is mapped onto the detection
 * path the real domain has for it (the mapping is the simulator's
 * assumption, not the paper's):
 *   XID     the agent's NVML XID watch (polled every second) fails the
 *           GPU: recovery_health with that GPU FAILED, sent with the next
 *           heartbeat; the node needs repair.
 *   HEALTH  found by the agent's health check (every --health-s): the
 *           same report, later; the node needs repair.
 *   LOST    the node stops answering (network, power, host): missed
 *           heartbeats, DOWN after node_timeout (cluster_tick); repair,
 *           then the agent registers again.
 *   CRASH   the task exits non-zero (cluster_task_exit); no repair.
 *   HANG    the job's progress file stops changing (recovery_progress
 *           stops): --hang-timeout (cluster_tick); no repair.
 *   PLANNED an admin drains the node with --now (recovery_drain: signal,
 *           checkpoint, move), resumes it after --maint-h.
 * Repaired nodes report healthy (recovery_health OK), are resumed by an
 * admin (recovery_resume) or register again (lost nodes).
 *
 * The simulated agents answer launches after 0.5 s (a dead one never: the
 * launch fails after agentcmd's timeout, 3 x node_timeout), report task
 * exits 2 s after a stop, heartbeat their running tasks. The job (one
 * task of 8 GPUs per node) trains; every C minutes of training it blocks
 * K seconds to write a checkpoint that rank 0's agent reports
 * (recovery_checkpoints); after every (re)start it needs R seconds to
 * load the checkpoint before it trains. An elastic job on n of its
 * n_max nodes trains at n / n_max of its speed.
 *
 * Wall time is split into (they add up to it exactly):
 *   useful   training that is kept
 *   redone   training since the last checkpoint, lost at a failure
 *   ckpt     blocked writing checkpoints (K each)
 *   detect   from a failure to the controller stopping the gang
 *   wait     gang stopped until it runs again (stops, placement, launch,
 *            waiting for replacement or repaired nodes)
 *   restart  loading the checkpoint (R after each start)
 *   shrunk   the share an elastic job below its size does not train
 * ETTR = useful / wall. "sched" = detect + wait (+ restart, as the goal
 * counts it; restart is the job's own cost, so both are printed).
 *
 * Time: the domain is called only around events. Live nodes heartbeat
 * (one round of cluster_heartbeat for every live agent) before a tick
 * when the last round is older than a third of node_timeout; ticks
 * (cluster_tick, every second) run only while something time-driven is
 * pending (a failure not yet acted on, a lost node not yet DOWN, a
 * checkpoint-and-move, the first two minutes of a stopped gang; a start
 * back-off ticks at its end, a job waiting for nodes every 10 minutes);
 * otherwise the clock jumps to the next event. Passes run whenever the
 * domain asks for one (outbox pass_wanted). A 54-day run at 2,048 nodes
 * costs 30-45 s of CPU.
 *
 * Output: a table (one line per configuration: mean over seeds, min and
 * max of ETTR, the breakdown in % of wall time, failures hitting the job,
 * GPUs idle as spares), the job's MTBF and Young/Daly's interval
 * sqrt(2 x MTBF x K). --sweep FILE also runs cohort with 0, 0.5, 1 and
 * 2% spares for C in 2..60 minutes (--sweep-days each, seeds as given)
 * and writes "spares_pct ckpt_min ettr_mean ettr_min ettr_max" lines for
 * tests/bench/goodput-plot.sh (gnuplot: apt-get install gnuplot-nox).
 *
 * --rate-x F multiplies every failure rate (the smoke test in make check
 * runs a small cluster for a few days with F = 30, so that it sees
 * failures of every path).
 *
 * Random numbers: a xorshift generator per run, seeded from the seed;
 * a run is reproducible. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/recovery.h"
#include "daemon/controller/domain/straggler.h"
#include "daemon/controller/domain/suspect.h"
#include "daemon/sched/topo.h"
#include "tests/domain/domain.h"

#define SEC 1000LL
#define MIN (60 * SEC)
#define HOUR (60 * MIN)
#define DAY (24 * HOUR)

#define GPUS_PER_NODE 8

/* ---- The failure model ------------------------------------------------ */

enum path {
	P_XID,
	P_HEALTH,
	P_LOST,
	P_CRASH,
	P_HANG,
	P_PLANNED,
};

static const char *const path_names[] = {
	"xid", "health", "lost", "crash", "hang", "planned",
};

/* Table 5 of "The Llama 3 Herd of Models" (arXiv:2407.21783): root causes
 * of the 419 unexpected interruptions of 54 days of Llama 3 405B
 * pre-training on 16,384 H100 GPUs, plus the 47 planned ones (§3.3.4).
 * count: the paper's; pct: the paper's column (note 148 / 419 = 35.3%). */
static const struct kind {
	const char *name;
	unsigned count;
	double pct;
	enum path path;
	bool repair;		/* the node needs repair */
} kinds[] = {
	{ "Faulty GPU", 148, 30.1, P_XID, true },
	{ "GPU HBM3 Memory", 72, 17.2, P_XID, true },
	{ "Software Bug", 54, 12.9, P_CRASH, false },
	{ "Network Switch/Cable", 35, 8.4, P_LOST, true },
	{ "Host Maintenance", 32, 7.6, P_LOST, true },
	{ "GPU SRAM Memory", 19, 4.5, P_XID, true },
	{ "GPU System Processor", 17, 4.1, P_HEALTH, true },
	{ "NIC", 7, 1.7, P_LOST, true },
	{ "NCCL Watchdog Timeouts", 7, 1.7, P_HANG, false },
	{ "Silent Data Corruption", 6, 1.4, P_HEALTH, true },
	{ "GPU Thermal Interface + Sensor", 6, 1.4, P_HEALTH, true },
	{ "SSD", 3, 0.7, P_LOST, true },
	{ "Power Supply", 3, 0.7, P_LOST, true },
	{ "Server Chassis", 2, 0.5, P_LOST, true },
	{ "IO Expansion Board", 2, 0.5, P_LOST, true },
	{ "Dependency", 2, 0.5, P_HANG, false },
	{ "CPU", 2, 0.5, P_LOST, true },
	{ "System Memory", 2, 0.5, P_LOST, true },
	{ "Planned (automated maintenance)", 47, 0, P_PLANNED, false },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))
#define LLAMA_NODES 2048
#define LLAMA_DAYS 54

/* ---- Parameters ------------------------------------------------------- */

struct params {
	unsigned nodes;
	double days;
	unsigned seeds;
	uint64_t seed0;
	double ckpt_min;
	double ckpt_cost_s;
	double restart_s;
	double repair_h;
	double maint_h;
	unsigned hang_timeout_s;
	unsigned node_timeout_s;
	unsigned health_s;
	unsigned nodes_per_leaf;
	double rate_x;		/* failure rates times this (smoke tests) */
	bool verbose;
	/* Beyond crashes: 0 turns each off. */
	double lemon_pct;	/* % of nodes that are lemons */
	double lemon_x;		/* their hardware failure rate, x base */
	double bh_per_day;	/* black holes appearing, per 2,048 nodes */
	double bh_h;		/* until a person finds and fixes one */
	double slow_per_day;	/* fail-slow episodes, per 2,048 nodes */
	double deep_h;		/* a suspect-drained node's thorough repair */
	double step_s;		/* a training step at full speed */
	unsigned straggler_pct;	/* [straggler] factor; 0: its default */
	unsigned requeue_delay_s;	/* Slurm's requeue_delay */
};

struct config {
	const char *name;
	bool slurm;
	double spare_pct;	/* hot spares, % of the nodes */
	double idle_pct;	/* left out of the job, not spares */
	bool elastic;
	bool suspect;		/* suspect nodes kept (suspect.h defaults) */
	bool straggler;		/* ranks report step times; replace */
	bool advice;		/* checkpoint at the controller's advice */
};

static const struct config configs[] = {
	{ "slurm", true, 0, 0, false, false, false, false },
	{ "slurm+1", true, 0, 1, false, false, false, false },
	{ "cohort", false, 0, 0, false, false, false, false },
	{ "cohort-1", false, 1, 0, false, false, false, false },
	{ "cohort-2", false, 2, 0, false, false, false, false },
	{ "elastic", false, 0, 0, true, false, false, false },
	{ "c1+suspect", false, 1, 0, false, true, false, false },
	{ "c1+straggler", false, 1, 0, false, false, true, false },
	{ "c1+advice", false, 1, 0, false, false, false, true },
	{ "c1+all", false, 1, 0, false, true, true, true },
};
#define NCONFIGS (sizeof(configs) / sizeof(configs[0]))

/* Simulated latencies. */
#define LAUNCH_MS 500		/* agent answers a launch */
#define EXIT_MS 2000		/* a stopped task's exit is reported */
#define XID_POLL_MS 1000	/* the agent polls NVML events */
#define TICK_MS 1000
#define HEARTBEAT_MS 2000
#define SLURM_NODE_TIMEOUT_S 300
#define SLURM_HEALTH_S 300
#define NCCL_WATCHDOG_S 600
#define CKPT_DEADLINE_S 300	/* --checkpoint-secs of the job */
#define BH_FAIL_MS 20000	/* a task on a black hole fails this soon */
#define SLOW_MIN_S 30.0		/* fail-slow episodes: log-uniform */
#define SLOW_MAX_S 36000.0
#define SLOW_X_MIN 1.1		/* slowdowns: uniform */
#define SLOW_X_MAX 3.0

/* ---- Events ----------------------------------------------------------- */

enum ev_type {
	EV_FAIL,		/* the next failure somewhere */
	EV_REPORT,		/* a failure's health report reaches the controller */
	EV_CRASH,		/* a crashed task's exit is reported */
	EV_REPAIR,		/* a node is back */
	EV_MAINT_END,
	EV_LAUNCH,		/* an agent answers a launch */
	EV_EXIT,		/* a stopped task's exit is reported */
	EV_LOADED,		/* the job loaded its checkpoint */
	EV_CKPT,		/* the job starts writing a checkpoint */
	EV_CKPT_DONE,
	EV_LEMON,		/* a lemon's extra hardware failure */
	EV_BH,			/* a node becomes a black hole */
	EV_BH_FIX,		/* a person found and fixed it */
	EV_BH_FAIL,		/* a task launched on a black hole fails */
	EV_SLOW,		/* a fail-slow episode starts */
	EV_SLOW_END,
	EV_DEEP,		/* a suspect-drained node's repair is done */
	EV_STEP,		/* the ranks report a step's compute time */
	EV_RESUBMIT,		/* a Slurm requeue's job is eligible again */
	EV_END,
};

struct ev {
	int64_t t;
	uint64_t seq;
	enum ev_type type;
	int node;
	unsigned gpu;
	uint64_t job;
	uint32_t attempt;
	unsigned rank;
	uint64_t gen;
	bool ok;
	outbox_done done;
	void *arg;
};

struct heap {
	struct ev *v;
	size_t n, cap;
	uint64_t seq;
};

static bool
ev_before(const struct ev *a, const struct ev *b)
{
	return a->t != b->t ? a->t < b->t : a->seq < b->seq;
}

static void
heap_push(struct heap *h, struct ev e)
{
	size_t i;

	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 1024;
		if ((h->v = realloc(h->v, h->cap * sizeof(*h->v))) == NULL) {
			perror("goodput");
			exit(1);
		}
	}
	e.seq = h->seq++;
	i = h->n++;
	while (i > 0 && ev_before(&e, &h->v[(i - 1) / 2])) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = e;
}

static struct ev
heap_pop(struct heap *h)
{
	struct ev top = h->v[0], last = h->v[--h->n];
	size_t i = 0, c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && ev_before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!ev_before(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n > 0)
		h->v[i] = last;
	return top;
}

/* ---- The simulation's state ------------------------------------------- */

struct snode {
	char name[16];
	uint64_t conn;
	bool alive;		/* the agent answers and heartbeats */
	bool broken;		/* waiting for repair */
	bool maint;		/* drained for planned maintenance */
	bool spare;
	/* The one task the agent runs (8 GPUs). */
	bool task;
	uint64_t job;
	uint32_t attempt;
	unsigned rank;
	bool exiting;		/* its exit is scheduled */
	/* Beyond crashes. */
	bool lemon;		/* lemon_x times the hardware failures */
	bool bh;		/* a black hole: tasks fail early */
	bool deep;		/* drained suspect: in thorough repair */
	double slow;		/* its ranks' slowdown (1: none) */
	bool slow_known;	/* named a straggler in this episode */
	uint64_t gen;		/* voids its pending repair and fix */
	uint64_t slow_gen;	/* voids its pending slow end */
};

enum phase {
	T_DOWN,			/* no gang running */
	T_LOAD,
	T_TRAIN,
	T_CKPT,
	T_STALL,		/* failed, the controller has not acted yet */
};

enum cat {
	C_USEFUL,
	C_REDONE,
	C_CKPT,
	C_DETECT,
	C_WAIT,
	C_RESTART,
	C_SHRUNK,
	C_SLOW,			/* running slow, no straggler known */
	C_SLOWKNOWN,		/* running slow after one was known */
	NCATS,
};

static const char *const cat_names[] = {
	"useful", "redone", "ckpt", "detect", "wait", "restart", "shrunk",
	"slow", "slowkn",
};

struct result {
	double cat[NCATS];	/* ms */
	double wall;		/* ms */
	unsigned hits;		/* failures that hit the job */
	unsigned hits_by_path[6];
	unsigned faults;	/* failures anywhere */
	unsigned restarts;	/* times the job ran again */
	unsigned job_nodes;
	unsigned spare_gpus;
	double cpu_s;
	unsigned long passes, ticks, hb_rounds;
	double min_nodes;	/* smallest gang (elastic) */
	uint64_t domain_lost_ms;	/* the domain's own lost_work_ms */
	unsigned stuck;		/* the job not RUNNING at the end */
	unsigned lemon_faults, bh_hits, slow_hits, stragglers, drains, deep;
	unsigned long step_rounds;
};

struct sim {
	const struct params *p;
	const struct config *c;
	struct domain d;
	struct topo *topo;
	struct snode *nodes;
	unsigned nnodes;
	struct heap h;
	uint64_t rng, rng_delay;
	int64_t t0, end;
	/* The job. */
	uint64_t job_id;
	unsigned job_nodes, nodes_min;
	enum phase phase;
	uint32_t attempt;	/* the attempt the trainer runs */
	uint64_t gen;		/* bumped when a scheduled trainer event is void */
	double f;		/* speed: gang size / size */
	double work, saved;	/* ms of work at full speed */
	int64_t acc_since;
	bool evac;		/* a checkpoint-and-move is under way */
	int64_t hb_last;
	int64_t down_since;
	unsigned long passes_seen;
	int64_t next_tick;
	struct result r;
	/* Nodes whose agent is dead (few at a time). */
	int *dead;
	size_t ndead;
	double rate_per_ms[NKINDS];	/* per node */
	double rate_total;		/* per node, all kinds */
	/* Beyond crashes: a stream each, so that the base failures stay
	 * those of the runs without them. */
	uint64_t rng_lemon, rng_bh, rng_slow;
	double rate_repair;		/* per node, kinds needing repair */
	int *lemons;
	size_t nlemons;
	double sl;			/* the gang's slowest node's slowdown */
	bool sl_known;			/* ... and it is a known straggler */
	unsigned step_left;		/* step-time rounds still to report */
	bool step_pending;
	uint64_t step;
	unsigned long sg_seen, sus_seen;
};

/* Errors: stderr itself is /dev/null unless --verbose (the domain logs). */
static FILE *errf;

/* Two streams: failures (when, where, what) from one, latencies from
 * the other, so that every configuration of a seed sees the same
 * failures. */
static uint64_t
xorshift(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

static uint64_t
rnd(struct sim *s)
{
	return xorshift(&s->rng);
}

static double
rnd01(struct sim *s)
{
	return (double)(rnd(s) >> 11) / 9007199254740992.0;
}

static double
rnd01_delay(struct sim *s)
{
	return (double)(xorshift(&s->rng_delay) >> 11) / 9007199254740992.0;
}

static int64_t
rnd_exp(struct sim *s, double mean_ms)
{
	return (int64_t)(-log(1.0 - rnd01(s)) * mean_ms) + 1;
}

/* The streams of lemons, black holes and fail-slow episodes. */
static double
rnd01_on(uint64_t *state)
{
	return (double)(xorshift(state) >> 11) / 9007199254740992.0;
}

static int64_t
rnd_exp_on(uint64_t *state, double mean_ms)
{
	return (int64_t)(-log(1.0 - rnd01_on(state)) * mean_ms) + 1;
}

static void
push(struct sim *s, int64_t t, enum ev_type type, int node)
{
	struct ev e;

	memset(&e, 0, sizeof(e));
	e.t = t;
	e.type = type;
	e.node = node;
	heap_push(&s->h, e);
}

static int
node_index(struct sim *s, const char *name)
{
	int i;

	if (name[0] != 'n' || (i = atoi(name + 1)) < 1 ||
	    (unsigned)i > s->nnodes)
		return -1;
	return i - 1;
}

/* ---- Accounting ------------------------------------------------------- */

static void
account(struct sim *s)
{
	double dt = (double)(s->d.now - s->acc_since);

	s->acc_since = s->d.now;
	switch (s->phase) {
	case T_TRAIN:
		/* Synchronous training: every rank at the slowest's pace. */
		s->r.cat[C_USEFUL] += dt * s->f / s->sl;
		s->r.cat[C_SHRUNK] += dt * (1 - s->f);
		s->r.cat[s->sl_known ? C_SLOWKNOWN : C_SLOW] += dt *
		    (s->f - s->f / s->sl);
		s->work += dt * s->f / s->sl;
		break;
	case T_CKPT:
		s->r.cat[C_CKPT] += dt;
		break;
	case T_LOAD:
		s->r.cat[C_RESTART] += dt;
		break;
	case T_STALL:
		s->r.cat[C_DETECT] += dt;
		break;
	case T_DOWN:
		s->r.cat[C_WAIT] += dt;
		break;
	}
}

static bool trace;

static void
set_phase(struct sim *s, enum phase ph)
{
	if (trace)
		fprintf(errf, "%.3f h: phase %d -> %d (job %" PRIu64
		    " attempt %u)\n", (s->d.now - s->t0) / 3.6e6, s->phase,
		    ph, s->job_id, s->attempt);
	account(s);
	/* Leaving the running gang, the work since the checkpoint is
	 * lost. */
	if ((ph == T_STALL || ph == T_DOWN) &&
	    (s->phase == T_TRAIN || s->phase == T_CKPT ||
	    s->phase == T_LOAD)) {
		s->r.cat[C_USEFUL] -= s->work - s->saved;
		s->r.cat[C_REDONE] += s->work - s->saved;
		s->work = s->saved;
	}
	if (ph == T_DOWN && s->phase != T_DOWN)
		s->down_since = s->d.now;
	s->phase = ph;
	s->gen++;
}

/* ---- The outbox: the domain's commands, as the agents see them -------- */

static const struct job *
job_now(struct sim *s)
{
	return domain_job(&s->d, s->job_id);
}

/* A task of the trainer's gang stopped, or the whole job moves: the
 * collective is broken. */
static void
gang_broken(struct sim *s)
{
	if (s->phase != T_DOWN)
		set_phase(s, T_DOWN);
	s->evac = false;
}

static void
start_ckpt(struct sim *s)
{
	struct ev e;

	set_phase(s, T_CKPT);
	memset(&e, 0, sizeof(e));
	e.t = s->d.now + (int64_t)(s->p->ckpt_cost_s * SEC);
	e.type = EV_CKPT_DONE;
	e.gen = s->gen;
	heap_push(&s->h, e);
}

/* Turn what the domain sent since the last call into agent events. */
static void
drain_cmds(struct sim *s)
{
	struct domain *d = &s->d;
	struct domain_cmd *c;
	struct snode *n;
	struct ev e;
	size_t i;
	int k;

	for (i = 0; i < d->ncmds; i++) {
		c = &d->cmds[i];
		k = node_index(s, c->node);
		n = k >= 0 ? &s->nodes[k] : NULL;
		switch (c->kind) {
		case DOMAIN_LAUNCH:
			memset(&e, 0, sizeof(e));
			e.type = EV_LAUNCH;
			e.node = k;
			e.job = c->job_id;
			e.attempt = c->attempt;
			e.rank = c->node_rank;
			e.done = c->done;
			e.arg = c->arg;
			e.ok = n != NULL && n->alive;
			/* A dead agent never answers: agentcmd's timeout. */
			e.t = d->now + (e.ok ? LAUNCH_MS : 3 * SEC *
			    (int64_t)(s->c->slurm ? SLURM_NODE_TIMEOUT_S :
			    s->p->node_timeout_s));
			heap_push(&s->h, e);
			break;
		case DOMAIN_STOP:
			if (c->job_id == s->job_id &&
			    c->attempt == s->attempt)
				gang_broken(s);
			if (n == NULL || !n->alive || !n->task ||
			    n->job != c->job_id || n->attempt != c->attempt ||
			    n->exiting)
				break;
			n->exiting = true;
			memset(&e, 0, sizeof(e));
			e.type = EV_EXIT;
			e.t = d->now + EXIT_MS;
			e.node = k;
			e.job = n->job;
			e.attempt = n->attempt;
			e.rank = n->rank;
			heap_push(&s->h, e);
			break;
		case DOMAIN_STOP_STEP:
		case DOMAIN_SIGNAL_STEP:
		case DOMAIN_PREPARE:
			/* The simulated jobs run no steps and no images. */
			break;
		case DOMAIN_SIGNAL:
			/* Checkpoint now (once per move): a job loading or
			 * already writing one has nothing newer to write. */
			if (c->job_id == s->job_id &&
			    c->attempt == s->attempt && !s->evac) {
				s->evac = true;
				if (s->phase == T_TRAIN)
					start_ckpt(s);
			}
			break;
		case DOMAIN_READ_LOG:
		case DOMAIN_MAIL:
		case DOMAIN_ADVISE:
			/* The job reads job->ckpt_advice_s at each
			 * checkpoint: the file's content. */
			break;
		}
	}
	d->ncmds = 0;
}

static void
commit(struct sim *s)
{
	domain_commit(&s->d);
	drain_cmds(s);
}

/* ---- The job ---------------------------------------------------------- */

static void slow_update(struct sim *, bool);
static void step_kick(struct sim *);

static const struct peer admin = { "admin", ROLE_ADMIN };

static void
job_spec(struct job_spec *spec, void *arg)
{
	struct sim *s = arg;

	spec->nodes_min = s->nodes_min;
	spec->nodes_max = s->job_nodes;
	spec->max_restarts = JOB_MAX_RESTARTS_LIMIT;
	spec->checkpoint_dir = strdup("/ckpt/llama");
	spec->ckpt_secs = CKPT_DEADLINE_S;
	spec->hang_timeout_s = s->c->slurm ? NCCL_WATCHDOG_S :
	    s->p->hang_timeout_s;
	spec->name = strdup("pretrain");
	spec->on_straggler = s->c->straggler ? JOB_STRAGGLER_REPLACE : 0;
}

static void
submit(struct sim *s)
{
	struct cerr err;

	s->job_id = domain_submit(&s->d, "meta", s->job_nodes, GPUS_PER_NODE,
	    job_spec, s, &err);
	if (s->job_id == 0) {
		fprintf(errf, "goodput: submit: %s\n", err.text);
		exit(1);
	}
	drain_cmds(s);
}

/* The domain says RUNNING: the gang loads its checkpoint. */
static void
check_running(struct sim *s)
{
	const struct job *job = job_now(s);
	struct ev e;
	size_t i;
	int k;

	if (job == NULL || job->state != JOB_RUNNING || s->phase != T_DOWN)
		return;
	s->attempt = job->attempt;
	s->f = (double)job->nplace / s->job_nodes;
	if (job->nplace < s->r.min_nodes)
		s->r.min_nodes = job->nplace;
	s->r.restarts++;
	set_phase(s, T_LOAD);
	slow_update(s, true);
	/* A node of the gang broke while it was launching. */
	for (i = 0; i < job->nplace; i++) {
		k = node_index(s, job->place[i].node);
		if (k >= 0 && (s->nodes[k].broken || !s->nodes[k].alive)) {
			set_phase(s, T_STALL);
			return;
		}
	}
	memset(&e, 0, sizeof(e));
	e.t = s->d.now + (int64_t)(s->p->restart_s * SEC);
	e.type = EV_LOADED;
	e.gen = s->gen;
	heap_push(&s->h, e);
}

/* The emulated Slurm requeue: a restarting job is cancelled and
 * submitted again, so it is placed afresh. Slurm holds a requeued batch
 * job back for requeue_delay (SchedulerParameters; by default
 * AuthInfo's cred_expire, 120 s, so that the old launch credential has
 * expired): the new submit comes that much plus one second later
 * (job_mgr.c: begin_time = now + requeue_delay + 1). */
static void
check_requeue(struct sim *s)
{
	const struct job *job = job_now(s);
	enum job_state st;
	struct cerr err;
	struct ev e;

	if (!s->c->slurm || job == NULL || job->state != JOB_RESTARTING)
		return;
	if (cluster_cancel(s->d.cl, &admin, s->job_id, s->d.now, &st,
	    &err) == -1) {
		fprintf(errf, "goodput: cancel: %s\n", err.text);
		exit(1);
	}
	commit(s);
	memset(&e, 0, sizeof(e));
	e.t = s->d.now + ((int64_t)s->p->requeue_delay_s + 1) * SEC;
	e.type = EV_RESUBMIT;
	heap_push(&s->h, e);
}

static void
schedule_ckpt(struct sim *s)
{
	const struct job *job = job_now(s);
	double every = s->p->ckpt_min * MIN, left;
	struct ev e;

	/* The advice as the file the agent keeps current has it. */
	if (s->c->advice && job != NULL && job->ckpt_advice_s > 0)
		every = (double)job->ckpt_advice_s * SEC;
	left = s->saved + every - s->work;
	memset(&e, 0, sizeof(e));
	e.t = s->d.now + (int64_t)ceil((left > 0 ? left : 0) * s->sl / s->f);
	e.type = EV_CKPT;
	e.gen = s->gen;
	heap_push(&s->h, e);
}

static int
rank0_node(struct sim *s)
{
	const struct job *job = job_now(s);
	size_t i;

	for (i = 0; job != NULL && i < job->nplace; i++)
		if (job->place[i].node_rank == 0)
			return node_index(s, job->place[i].node);
	return -1;
}

static void
ckpt_done(struct sim *s)
{
	struct checkpoint_report ck;
	char path[64];
	int k;

	account(s);
	s->saved = s->work;
	s->phase = T_TRAIN;
	s->gen++;
	if ((k = rank0_node(s)) >= 0 && s->nodes[k].alive) {
		snprintf(path, sizeof(path), "/ckpt/llama/step-%" PRIu64,
		    (uint64_t)(s->saved / SEC));
		memset(&ck, 0, sizeof(ck));
		ck.job_id = s->job_id;
		ck.attempt = s->attempt;
		ck.step = (uint64_t)(s->saved / SEC) + 1;
		ck.path = path;
		ck.time_ms = s->d.now;
		/* The job reports what the checkpoint took (CKPT_MS), as
		 * a framework that times its own save would. */
		ck.cost_ms = (uint32_t)(s->p->ckpt_cost_s * 1000);
		cluster_reports_begin(s->d.cl);
		recovery_checkpoints(s->d.cl, s->nodes[k].conn, &ck, 1,
		    s->d.now);
		commit(s);
	}
	if (s->phase == T_TRAIN) {
		schedule_ckpt(s);
		step_kick(s);
	}
}

/* Is node k running a task of the trainer's current gang? */
static bool
in_gang(struct sim *s, int k)
{
	const struct snode *n = &s->nodes[k];

	return n->task && n->job == s->job_id && n->attempt == s->attempt &&
	    (s->phase == T_LOAD || s->phase == T_TRAIN || s->phase == T_CKPT);
}

/* ---- Failures --------------------------------------------------------- */

static void
schedule_fail(struct sim *s)
{
	push(s, s->d.now + rnd_exp(s, 1.0 / (s->rate_total * s->nnodes)),
	    EV_FAIL, 0);
}

static void
health_report(struct sim *s, int k, int gpu, bool failed, const char *why)
{
	struct node_health h;
	struct snode *n = &s->nodes[k];

	if (!n->alive)
		return;
	memset(&h, 0, sizeof(h));
	h.health = HEALTH_OK;
	h.checked_ms = s->d.now;
	if (failed) {
		h.ngpus = 1;
		h.gpus[0].index = (unsigned)gpu;
		h.gpus[0].health = HEALTH_FAILED;
		snprintf(h.gpus[0].reason, sizeof(h.gpus[0].reason), "%s",
		    why);
	}
	cluster_reports_begin(s->d.cl);
	recovery_health(s->d.cl, n->conn, &h, s->d.now);
	commit(s);
}

static void fail_node(struct sim *, int, const struct kind *, unsigned);

static void
inject(struct sim *s)
{
	double x = rnd01(s) * s->rate_total;
	int k = (int)(rnd(s) % s->nnodes);
	const struct kind *kd = &kinds[NKINDS - 1];
	size_t i;

	for (i = 0; i < NKINDS; i++) {
		if (x < s->rate_per_ms[i]) {
			kd = &kinds[i];
			break;
		}
		x -= s->rate_per_ms[i];
	}
	unsigned gpu = (unsigned)(rnd(s) % GPUS_PER_NODE);

	schedule_fail(s);
	fail_node(s, k, kd, gpu);
}

/* Failure kd strikes node k (its GPU gpu). */
static void
fail_node(struct sim *s, int k, const struct kind *kd, unsigned gpu)
{
	struct snode *n = &s->nodes[k];
	struct ev e;
	struct cerr err;
	int64_t delay;

	/* A node in repair or maintenance cannot fail again meanwhile;
	 * software faults need a task. */
	if (n->broken || n->maint || n->deep || !n->alive)
		return;
	if ((kd->path == P_CRASH || kd->path == P_HANG) && !in_gang(s, k))
		return;
	s->r.faults++;
	if (trace)
		fprintf(errf, "%.3f h: %s on %s (%s)%s\n",
		    (s->d.now - s->t0) / 3.6e6, kd->name, n->name,
		    path_names[kd->path], in_gang(s, k) ? ", in the gang" : "");
	if (in_gang(s, k) && kd->path != P_PLANNED) {
		/* The progress file changed up to now (hang-timeout counts
		 * from here). */
		int r0 = rank0_node(s);

		if (s->phase != T_LOAD && r0 >= 0) {
			cluster_reports_begin(s->d.cl);
			recovery_progress(s->d.cl, s->nodes[r0].conn,
			    s->job_id, s->attempt, s->d.now, s->d.now);
		}
		s->r.hits++;
		s->r.hits_by_path[kd->path]++;
		set_phase(s, T_STALL);
	} else if (in_gang(s, k))
		s->r.hits_by_path[P_PLANNED]++;
	if (kd->repair) {
		n->broken = true;
		memset(&e, 0, sizeof(e));
		e.t = s->d.now + (int64_t)(s->p->repair_h * HOUR);
		e.type = EV_REPAIR;
		e.node = k;
		e.gen = n->gen;
		heap_push(&s->h, e);
	}
	memset(&e, 0, sizeof(e));
	e.node = k;
	e.gpu = gpu;
	switch (kd->path) {
	case P_XID:
		/* Slurm does not watch XIDs: its health check finds it. */
		delay = s->c->slurm ? (int64_t)(rnd01_delay(s) *
		    SLURM_HEALTH_S * SEC) : (int64_t)(rnd01_delay(s) *
		    XID_POLL_MS + rnd01_delay(s) * HEARTBEAT_MS);
		e.type = EV_REPORT;
		e.t = s->d.now + delay + 1;
		heap_push(&s->h, e);
		break;
	case P_HEALTH:
		delay = (int64_t)(rnd01_delay(s) * (s->c->slurm ?
		    SLURM_HEALTH_S : s->p->health_s) * SEC);
		e.type = EV_REPORT;
		e.t = s->d.now + delay + 1;
		heap_push(&s->h, e);
		break;
	case P_LOST:
		/* Its last heartbeat came up to one interval ago. */
		cluster_reports_begin(s->d.cl);
		cluster_heartbeat(s->d.cl, n->conn, &(struct task_report){
		    .job_id = n->job, .restart = n->attempt, .rank = n->rank,
		    .running = true }, n->task ? 1 : 0,
		    s->d.now - (int64_t)(rnd01_delay(s) * HEARTBEAT_MS));
		commit(s);
		n->alive = false;
		s->dead[s->ndead++] = k;
		break;
	case P_CRASH:
		e.type = EV_CRASH;
		e.t = s->d.now + EXIT_MS;
		e.job = n->job;
		e.attempt = n->attempt;
		e.rank = n->rank;
		heap_push(&s->h, e);
		break;
	case P_HANG:
		/* Progress stops: nothing to send. */
		break;
	case P_PLANNED:
		n->maint = true;
		if (recovery_drain(s->d.cl, &admin, n->name, "maintenance",
		    true, s->d.now, &err) == -1)
			fprintf(errf, "goodput: drain %s: %s\n", n->name,
			    err.text);
		commit(s);
		push(s, s->d.now + (int64_t)(s->p->maint_h * HOUR),
		    EV_MAINT_END, k);
		break;
	}
}

static void
repair(struct sim *s, int k)
{
	struct snode *n = &s->nodes[k];
	struct cerr err;
	uint64_t conn;

	n->broken = false;
	if (!n->alive) {
		size_t i;

		for (i = 0; i < s->ndead; i++)
			if (s->dead[i] == k)
				s->dead[i] = s->dead[--s->ndead];
		/* Back from the dead: the agent registers, with no tasks. */
		n->alive = true;
		n->task = false;
		n->exiting = false;
		if ((conn = domain_reconnect(&s->d, n->name, NULL, 0,
		    &err)) == 0) {
			fprintf(errf, "goodput: register %s: %s\n", n->name,
			    err.text);
			exit(1);
		}
		n->conn = conn;
		commit(s);
	}
	health_report(s, k, 0, false, "");
	/* Drained as a suspect: the admin keeps it for a thorough repair
	 * (EV_DEEP) instead of putting it back. */
	if (n->deep)
		return;
	if (recovery_resume(s->d.cl, &admin, n->name, s->d.now, &err) == -1)
		fprintf(errf, "goodput: resume %s: %s\n", n->name, err.text);
	commit(s);
}

/* ---- Agents ----------------------------------------------------------- */

static void
launch_answer(struct sim *s, const struct ev *e)
{
	struct snode *n = e->node >= 0 ? &s->nodes[e->node] : NULL;
	struct cerr err;

	if (n != NULL && n->alive) {
		/* The agent starts the task (it may be stale: then the
		 * controller tells it to stop when it sees it). */
		n->task = true;
		n->job = e->job;
		n->attempt = e->attempt;
		n->rank = e->rank;
		n->exiting = false;
		e->done(e->arg, NULL, s->d.now);
		if (n->bh) {
			/* A broken mount: the task fails as it starts. */
			struct ev f = *e;

			f.type = EV_BH_FAIL;
			f.t = s->d.now + BH_FAIL_MS;
			f.done = NULL;
			f.arg = NULL;
			heap_push(&s->h, f);
		}
	} else {
		cerr_set(&err, ERR_UNAVAILABLE, "the node's agent did not "
		    "answer in time");
		e->done(e->arg, &err, s->d.now);
	}
	commit(s);
}

static void
task_exit(struct sim *s, const struct ev *e, int wait_status)
{
	struct snode *n = &s->nodes[e->node];
	struct task_report r;
	struct cerr err;

	if (!n->alive || !n->task || n->job != e->job ||
	    n->attempt != e->attempt)
		return;
	n->task = false;
	n->exiting = false;
	memset(&r, 0, sizeof(r));
	r.job_id = e->job;
	r.restart = e->attempt;
	r.rank = e->rank;
	r.wait_status = wait_status;
	cluster_reports_begin(s->d.cl);
	(void)cluster_task_exit(s->d.cl, n->conn, &r, s->d.now, &err);
	commit(s);
	if (trace) {
		struct cluster_stats st;

		cluster_stats(s->d.cl, &st);
		fprintf(errf, "%.4f h: exit %s job %" PRIu64 " attempt %u "
		    "status %d: %zu stopping\n", (s->d.now - s->t0) / 3.6e6,
		    n->name, e->job, e->attempt, wait_status, st.stopping);
	}
}

static void
heartbeat_all(struct sim *s)
{
	struct task_report r;
	struct snode *n;
	unsigned i;

	s->hb_last = s->d.now;
	s->r.hb_rounds++;
	for (i = 0; i < s->nnodes; i++) {
		n = &s->nodes[i];
		if (!n->alive)
			continue;
		memset(&r, 0, sizeof(r));
		r.job_id = n->job;
		r.restart = n->attempt;
		r.rank = n->rank;
		r.running = true;
		cluster_reports_begin(s->d.cl);
		cluster_heartbeat(s->d.cl, n->conn, &r, n->task ? 1 : 0,
		    s->d.now);
	}
	commit(s);
}

static int64_t
node_timeout_ms(const struct sim *s)
{
	return SEC * (int64_t)(s->c->slurm ? SLURM_NODE_TIMEOUT_S :
	    s->p->node_timeout_s);
}

/* ---- Lemons, black holes, fail-slow ------------------------ */

/* A lemon fails again: one of the kinds that need repair, weighted by
 * the paper's counts. */
static void
schedule_lemon(struct sim *s)
{
	double rate = s->rate_repair * (s->p->lemon_x - 1) *
	    (double)s->nlemons;

	if (rate > 0)
		push(s, s->d.now + rnd_exp_on(&s->rng_lemon, 1.0 / rate),
		    EV_LEMON, 0);
}

static void
lemon_fail(struct sim *s)
{
	int k = s->lemons[xorshift(&s->rng_lemon) % s->nlemons];
	double x = rnd01_on(&s->rng_lemon) * s->rate_repair;
	unsigned gpu = (unsigned)(xorshift(&s->rng_lemon) % GPUS_PER_NODE);
	const struct kind *kd = &kinds[0];
	size_t i;

	for (i = 0; i < NKINDS; i++) {
		if (!kinds[i].repair)
			continue;
		kd = &kinds[i];
		if (x < s->rate_per_ms[i])
			break;
		x -= s->rate_per_ms[i];
	}
	schedule_lemon(s);
	/* Fixed for good (a thorough repair after a suspect drain). */
	if (!s->nodes[k].lemon)
		return;
	s->r.lemon_faults++;
	fail_node(s, k, kd, gpu);
}

static double
per_ms(const struct sim *s, double per_day_2048)
{
	return per_day_2048 * s->nnodes / LLAMA_NODES / DAY;
}

static void
schedule_bh(struct sim *s)
{
	if (s->p->bh_per_day > 0)
		push(s, s->d.now + rnd_exp_on(&s->rng_bh, 1.0 / per_ms(s,
		    s->p->bh_per_day)), EV_BH, 0);
}

/* A node's mount or library breaks: every task launched there from now
 * on fails at once; what runs there already keeps running. A person
 * finds and fixes it after bh_h. */
static void
bh_start(struct sim *s)
{
	int k = (int)(xorshift(&s->rng_bh) % s->nnodes);
	struct snode *n = &s->nodes[k];
	struct ev e;

	schedule_bh(s);
	if (n->bh || n->deep)
		return;
	n->bh = true;
	if (trace)
		fprintf(errf, "%.3f h: %s is a black hole\n",
		    (s->d.now - s->t0) / 3.6e6, n->name);
	memset(&e, 0, sizeof(e));
	e.t = s->d.now + (int64_t)(s->p->bh_h * HOUR);
	e.type = EV_BH_FIX;
	e.node = k;
	e.gen = n->gen;
	heap_push(&s->h, e);
}

static void
bh_fail(struct sim *s, const struct ev *e)
{
	struct snode *n = &s->nodes[e->node];

	if (!n->alive || !n->task || n->job != e->job ||
	    n->attempt != e->attempt || n->exiting)
		return;
	if (e->job == s->job_id && e->attempt == s->attempt &&
	    s->phase != T_DOWN && s->phase != T_STALL) {
		s->r.hits++;
		s->r.bh_hits++;
		set_phase(s, T_STALL);
	}
	task_exit(s, e, 1 << 8);
}

static void
schedule_slow(struct sim *s)
{
	if (s->p->slow_per_day > 0)
		push(s, s->d.now + rnd_exp_on(&s->rng_slow, 1.0 / per_ms(s,
		    s->p->slow_per_day)), EV_SLOW, 0);
}

static bool
placed(struct sim *s, int k)
{
	return s->nodes[k].task && s->nodes[k].job == s->job_id &&
	    s->nodes[k].attempt == s->attempt;
}

/* A fail-slow episode (a throttled GPU, a flapping link): the node's
 * ranks run slowdown times slower for a while; durations log-uniform
 * over [30 s, 10 h], slowdowns uniform over [1.1, 3]. */
static void
slow_start(struct sim *s)
{
	int k = (int)(xorshift(&s->rng_slow) % s->nnodes);
	double u = rnd01_on(&s->rng_slow), x = rnd01_on(&s->rng_slow);
	struct snode *n = &s->nodes[k];
	double dur_s = exp(log(SLOW_MIN_S) + u * (log(SLOW_MAX_S) -
	    log(SLOW_MIN_S)));
	struct ev e;

	schedule_slow(s);
	n->slow = SLOW_X_MIN + x * (SLOW_X_MAX - SLOW_X_MIN);
	n->slow_known = false;
	n->slow_gen++;
	if (trace)
		fprintf(errf, "%.3f h: %s %.2fx slower for %.0f s%s\n",
		    (s->d.now - s->t0) / 3.6e6, n->name, n->slow, dur_s,
		    placed(s, k) ? ", in the gang" : "");
	memset(&e, 0, sizeof(e));
	e.t = s->d.now + (int64_t)(dur_s * SEC);
	e.type = EV_SLOW_END;
	e.node = k;
	e.gen = n->slow_gen;
	heap_push(&s->h, e);
	if (placed(s, k)) {
		s->r.slow_hits++;
		slow_update(s, true);
	}
}

static void
slow_end(struct sim *s, const struct ev *e)
{
	struct snode *n = &s->nodes[e->node];

	if (e->gen != n->slow_gen)
		return;
	n->slow = 1;
	n->slow_known = false;
	if (placed(s, e->node))
		slow_update(s, true);
}

/* The gang runs at its slowest node's pace. changed: the gang or a
 * member's slowdown changed (the ranks report step times again). */
static void
slow_update(struct sim *s, bool changed)
{
	const struct job *job = job_now(s);
	double mx = 1;
	bool known = false;
	size_t i;
	int k;

	for (i = 0; job != NULL && s->phase != T_DOWN && i < job->nplace;
	    i++) {
		if ((k = node_index(s, job->place[i].node)) < 0 ||
		    s->nodes[k].slow <= 1)
			continue;
		if (s->nodes[k].slow > mx) {
			mx = s->nodes[k].slow;
			known = s->nodes[k].slow_known;
		}
	}
	if (mx != s->sl || known != s->sl_known) {
		account(s);
		s->sl = mx;
		s->sl_known = known;
		if (s->phase == T_TRAIN) {
			s->gen++;
			schedule_ckpt(s);
		}
	}
	/* The controller compares ranks per attempt: a node already
	 * named in an earlier attempt, back in the gang, is named again. */
	if (changed && mx > 1 && s->c->straggler) {
		/* Constant step times: what window x windows rounds do
		 * not flag, more of them will not either. */
		s->step_left = 2 * STRAGGLER_DEFAULT_WINDOW *
		    STRAGGLER_DEFAULT_WINDOWS;
		step_kick(s);
	}
}

static void
step_kick(struct sim *s)
{
	if (!s->c->straggler || s->step_left == 0 || s->step_pending ||
	    s->phase != T_TRAIN)
		return;
	s->step_pending = true;
	push(s, s->d.now + (int64_t)(s->p->step_s * SEC * s->sl), EV_STEP,
	    0);
}

/* Every rank of the gang reports the step it finished and its compute
 * time (the agents' StepTimeReport, from $COHORT_STEP_FILE). */
static void
step_round(struct sim *s)
{
	const struct job *job = job_now(s);
	const struct straggler_found *f;
	struct step_time_report rep;
	struct cluster_stats st;
	size_t i, n = 0, nf;
	int *ks, k;

	s->step_pending = false;
	if (s->phase != T_TRAIN || s->step_left == 0 || job == NULL)
		return;
	s->step_left--;
	s->step++;
	s->r.step_rounds++;
	if ((ks = calloc(job->nplace + 1, sizeof(*ks))) == NULL)
		exit(1);
	for (i = 0; i < job->nplace; i++)
		if ((k = node_index(s, job->place[i].node)) >= 0 &&
		    placed(s, k) && s->nodes[k].alive)
			ks[n++] = k;
	for (i = 0; i < n; i++) {
		memset(&rep, 0, sizeof(rep));
		rep.job_id = s->job_id;
		rep.attempt = s->attempt;
		rep.rank = s->nodes[ks[i]].rank;
		rep.step = s->step;
		rep.compute_ms = (uint32_t)(s->p->step_s * SEC *
		    s->nodes[ks[i]].slow);
		cluster_reports_begin(s->d.cl);
		straggler_reports(s->d.cl, s->nodes[ks[i]].conn, &rep, 1,
		    s->d.now);
	}
	free(ks);
	commit(s);
	cluster_stats(s->d.cl, &st);
	if (st.stragglers != s->sg_seen) {
		s->sg_seen = st.stragglers;
		f = straggler_list(s->d.cl, s->job_id, &nf);
		for (i = 0; i < nf; i++) {
			if ((k = node_index(s, f[i].node)) < 0 ||
			    s->nodes[k].slow <= 1 || s->nodes[k].slow_known)
				continue;
			s->nodes[k].slow_known = true;
			s->r.stragglers++;
		}
		slow_update(s, false);
	}
	step_kick(s);
}

/* Nodes the suspect code drained go to a thorough repair (the admin
 * reads "suspect:" and replaces parts), which ends a lemon or a black
 * hole for good; cheap unless a node crossed. */
static void
check_suspect(struct sim *s)
{
	const struct node *nd;
	unsigned long c;
	struct ev e;
	unsigned i;

	if (s->d.sus == NULL || (c = suspect_crossings(s->d.sus)) ==
	    s->sus_seen)
		return;
	s->sus_seen = c;
	for (i = 0; i < s->nnodes; i++) {
		if (s->nodes[i].deep || (nd = nodes_get(s->d.ns,
		    s->nodes[i].name)) == NULL || !nd->drained ||
		    strncmp(nd->drain_reason, SUSPECT_PREFIX,
		    strlen(SUSPECT_PREFIX)) != 0)
			continue;
		s->nodes[i].deep = true;
		s->r.drains++;
		if (trace)
			fprintf(errf, "%.3f h: %s drained: %s\n",
			    (s->d.now - s->t0) / 3.6e6, s->nodes[i].name,
			    nd->drain_reason);
		memset(&e, 0, sizeof(e));
		e.t = s->d.now + (int64_t)(s->p->deep_h * HOUR);
		e.type = EV_DEEP;
		e.node = (int)i;
		e.gen = s->nodes[i].gen;
		heap_push(&s->h, e);
	}
}

static void
deep_done(struct sim *s, const struct ev *e)
{
	struct snode *n = &s->nodes[e->node];

	if (e->gen != n->gen)
		return;
	n->gen++;		/* its ordinary repair, its fix: void */
	n->deep = false;
	n->lemon = false;
	n->bh = false;
	s->r.deep++;
	repair(s, e->node);
}

/* ---- The loop --------------------------------------------------------- */

static void
run_passes(struct sim *s)
{
	int i;

	for (i = 0; i < 8 && s->d.passes_wanted != s->passes_seen; i++) {
		s->passes_seen = s->d.passes_wanted;
		s->r.passes++;
		domain_pass(&s->d);
		drain_cmds(s);
		check_running(s);
		check_requeue(s);
	}
}

static void
tick(struct sim *s)
{
	int k;

	if (s->d.now - s->hb_last >= node_timeout_ms(s) / 3)
		heartbeat_all(s);
	/* The progress file changes with every step. */
	if ((s->phase == T_TRAIN || s->phase == T_CKPT) &&
	    (k = rank0_node(s)) >= 0 && s->nodes[k].alive) {
		cluster_reports_begin(s->d.cl);
		recovery_progress(s->d.cl, s->nodes[k].conn, s->job_id,
		    s->attempt, s->d.now, s->d.now);
	}
	s->r.ticks++;
	domain_tick(&s->d);
	drain_cmds(s);
	check_running(s);
	check_requeue(s);
	check_suspect(s);
}

/* Is anything pending that only time resolves? */
static int64_t
next_tick(struct sim *s)
{
	const struct job *job = job_now(s);
	const struct node *nd;
	size_t i;

	if (s->phase == T_STALL || s->evac)
		return s->d.now + TICK_MS;
	/* A lost node not yet DOWN. (Stopped tasks' exits are events;
	 * those on a lost node are dropped when it goes DOWN.) */
	for (i = 0; i < s->ndead; i++)
		if ((nd = nodes_get(s->d.ns, s->nodes[s->dead[i]].name)) !=
		    NULL && nd->state == NODE_UP)
			return s->d.now + TICK_MS;
	if (job != NULL && jobs_backing_off(job, s->d.now))
		return job->not_before_ms;
	/* Waiting: agents heartbeat (what a heartbeat no longer lists
	 * has stopped), the controller ticks; every second at first, then
	 * every 10 minutes while the job waits for nodes (a repaired node
	 * registering asks for a pass itself; a pass at 2,048 nodes with
	 * the job waiting costs milliseconds). */
	if (s->phase == T_DOWN)
		return s->d.now + (s->d.now - s->down_since < 120 * SEC ?
		    TICK_MS : 600 * SEC);
	return INT64_MAX;
}

static void
handle(struct sim *s, const struct ev *e)
{
	switch (e->type) {
	case EV_FAIL:
		inject(s);
		break;
	case EV_REPORT:
		health_report(s, e->node, (int)e->gpu, true, "xid=79");
		break;
	case EV_CRASH:
		task_exit(s, e, 1 << 8);
		break;
	case EV_REPAIR:
		if (e->gen == s->nodes[e->node].gen)
			repair(s, e->node);
		break;
	case EV_MAINT_END:
		s->nodes[e->node].maint = false;
		if (!s->nodes[e->node].broken && !s->nodes[e->node].deep) {
			struct cerr err;

			if (recovery_resume(s->d.cl, &admin,
			    s->nodes[e->node].name, s->d.now, &err) == -1)
				fprintf(errf, "goodput: resume: %s\n",
				    err.text);
			commit(s);
		}
		break;
	case EV_LAUNCH:
		launch_answer(s, e);
		break;
	case EV_EXIT:
		task_exit(s, e, SIGTERM);
		break;
	case EV_LOADED:
		if (e->gen == s->gen && s->phase == T_LOAD) {
			set_phase(s, T_TRAIN);
			if (s->evac)
				start_ckpt(s);
			else {
				schedule_ckpt(s);
				step_kick(s);
			}
		}
		break;
	case EV_LEMON:
		lemon_fail(s);
		break;
	case EV_BH:
		bh_start(s);
		break;
	case EV_BH_FIX:
		if (e->gen == s->nodes[e->node].gen)
			s->nodes[e->node].bh = false;
		break;
	case EV_BH_FAIL:
		bh_fail(s, e);
		break;
	case EV_SLOW:
		slow_start(s);
		break;
	case EV_SLOW_END:
		slow_end(s, e);
		break;
	case EV_DEEP:
		deep_done(s, e);
		break;
	case EV_STEP:
		step_round(s);
		break;
	case EV_RESUBMIT:
		submit(s);
		break;
	case EV_CKPT:
		if (e->gen == s->gen && s->phase == T_TRAIN)
			start_ckpt(s);
		break;
	case EV_CKPT_DONE:
		if (e->gen == s->gen && s->phase == T_CKPT)
			ckpt_done(s);
		break;
	case EV_END:
		break;
	}
	check_running(s);
	check_requeue(s);
	check_suspect(s);
}

static void
build_topo(struct sim *s)
{
	size_t cap = 64 + (size_t)s->nnodes * 48, len = 0;
	unsigned leaves = (s->nnodes + s->p->nodes_per_leaf - 1) /
	    s->p->nodes_per_leaf, i, first, last;
	char *text = malloc(cap), err[256];

	if (text == NULL)
		exit(1);
	/* Leaves of nodes_per_leaf nodes, spines of 16 leaves, one core. */
	for (i = 0; i < leaves; i++) {
		first = i * s->p->nodes_per_leaf + 1;
		last = first + s->p->nodes_per_leaf - 1;
		if (last > s->nnodes)
			last = s->nnodes;
		len += (size_t)snprintf(text + len, cap - len,
		    "SwitchName=leaf%u Nodes=n[%04u-%04u]\n", i, first, last);
	}
	for (i = 0; i * 16 < leaves; i++)
		len += (size_t)snprintf(text + len, cap - len,
		    "SwitchName=spine%u Switches=leaf[%u-%u]\n", i, i * 16,
		    (i * 16 + 15 < leaves ? i * 16 + 15 : leaves - 1));
	if (leaves > 16)
		len += (size_t)snprintf(text + len, cap - len,
		    "SwitchName=core Switches=spine[0-%u]\n",
		    (leaves - 1) / 16);
	if ((s->topo = topo_parse(text, len, "goodput", err,
	    sizeof(err))) == NULL) {
		fprintf(errf, "goodput: topology: %s\n", err);
		exit(1);
	}
	free(text);
}

static void
sim_run(const struct params *p, const struct config *c, uint64_t seed,
    struct result *out)
{
	struct sim sim, *s = &sim;
	struct cluster_opts o;
	struct suspect_opts so;
	struct cerr err;
	unsigned i, nspare, nidle;
	clock_t cpu = clock();
	double total = 0;
	struct ev e;

	memset(s, 0, sizeof(*s));
	s->p = p;
	s->c = c;
	s->nnodes = p->nodes;
	s->rng = seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL;
	s->rng_delay = seed * 0xD1B54A32D192ED03ULL + 0x8CB92BA72F3D8DD7ULL;
	s->rng_lemon = seed * 0xA0761D6478BD642FULL + 0xE7037ED1A0B428DBULL;
	s->rng_bh = seed * 0x8EBC6AF09C88C6E3ULL + 0x589965CC75374CC3ULL;
	s->rng_slow = seed * 0x1D8E4E27C47D124FULL + 0x94D049BB133111EBULL;
	for (i = 0; i < 8; i++) {
		rnd(s);
		rnd01_delay(s);
		xorshift(&s->rng_lemon);
		xorshift(&s->rng_bh);
		xorshift(&s->rng_slow);
	}
	s->sl = 1;
	build_topo(s);
	memset(&o, 0, sizeof(o));
	o.topo = s->topo;
	o.node_timeout_ms = node_timeout_ms(s);
	o.heartbeat_ms = HEARTBEAT_MS;
	o.stop_timeout_ms = 60 * SEC;
	o.accept_unknown_nodes = true;
	o.straggler.factor_pct = p->straggler_pct;
	suspect_opts_default(&so);
	if (domain_open_suspect(&s->d, &o, c->suspect ? &so : NULL,
	    &err) == -1) {
		fprintf(errf, "goodput: domain_open: %s\n", err.text);
		exit(1);
	}
	s->t0 = s->d.now;
	s->end = s->t0 + (int64_t)(p->days * DAY);
	nspare = (unsigned)(p->nodes * c->spare_pct / 100 + 0.5);
	nidle = (unsigned)(p->nodes * c->idle_pct / 100 + 0.5);
	if (c->spare_pct > 0 && nspare == 0)
		nspare = 1;
	if (c->idle_pct > 0 && nidle == 0)
		nidle = 1;
	if ((s->nodes = calloc(p->nodes, sizeof(*s->nodes))) == NULL ||
	    (s->dead = calloc(p->nodes, sizeof(*s->dead))) == NULL)
		exit(1);
	for (i = 0; i < p->nodes; i++) {
		struct snode *n = &s->nodes[i];

		snprintf(n->name, sizeof(n->name), "n%04u", i + 1);
		/* Spares spread over the leaves. */
		n->spare = nspare > 0 && i % (p->nodes / nspare) ==
		    p->nodes / nspare - 1 && i / (p->nodes / nspare) < nspare;
		n->alive = true;
		n->slow = 1;
		if ((n->conn = domain_add_node(&s->d, n->name, GPUS_PER_NODE,
		    n->spare, &err)) == 0) {
			fprintf(errf, "goodput: add %s: %s\n", n->name,
			    err.text);
			exit(1);
		}
	}
	s->job_nodes = p->nodes - nspare - nidle;
	s->nodes_min = c->elastic ? (unsigned)(s->job_nodes * 0.97) :
	    s->job_nodes;
	s->r.job_nodes = s->job_nodes;
	s->r.spare_gpus = nspare * GPUS_PER_NODE;
	s->r.min_nodes = s->job_nodes;
	/* Per-node rates: the paper's counts over its 2,048 nodes and 54
	 * days. */
	for (i = 0; i < NKINDS; i++) {
		s->rate_per_ms[i] = p->rate_x * kinds[i].count /
		    ((double)LLAMA_NODES * LLAMA_DAYS * DAY);
		total += s->rate_per_ms[i];
	}
	s->rate_total = total;
	for (i = 0; i < NKINDS; i++)
		if (kinds[i].repair)
			s->rate_repair += s->rate_per_ms[i];
	/* Lemons: the same nodes for every configuration of a seed. */
	s->nlemons = (size_t)(p->nodes * p->lemon_pct / 100 + 0.5);
	if ((s->lemons = calloc(p->nodes, sizeof(*s->lemons))) == NULL)
		exit(1);
	for (i = 0; i < p->nodes; i++)
		s->lemons[i] = (int)i;
	for (i = 0; i < s->nlemons; i++) {
		unsigned j = i + (unsigned)(xorshift(&s->rng_lemon) %
		    (p->nodes - i));
		int t = s->lemons[i];

		s->lemons[i] = s->lemons[j];
		s->lemons[j] = t;
		s->nodes[s->lemons[i]].lemon = true;
	}
	s->phase = T_DOWN;
	s->f = 1;
	s->acc_since = s->t0;
	s->hb_last = s->d.now;
	drain_cmds(s);
	submit(s);
	run_passes(s);
	schedule_fail(s);
	if (s->nlemons > 0 && p->lemon_x > 1)
		schedule_lemon(s);
	schedule_bh(s);
	schedule_slow(s);
	push(s, s->end, EV_END, 0);
	s->next_tick = next_tick(s);
	for (;;) {
		int64_t t = s->h.n > 0 ? s->h.v[0].t : INT64_MAX;

		if (s->next_tick <= t && s->next_tick < s->end) {
			s->d.now = s->next_tick;
			tick(s);
			run_passes(s);
		} else {
			if (t >= s->end)
				break;
			e = heap_pop(&s->h);
			s->d.now = e.t;
			handle(s, &e);
			run_passes(s);
		}
		s->next_tick = next_tick(s);
		if (s->next_tick < s->d.now + TICK_MS &&
		    s->next_tick != INT64_MAX)
			s->next_tick = s->d.now + TICK_MS;
	}
	s->d.now = s->end;
	account(s);
	s->r.wall = (double)(s->end - s->t0);
	s->r.stuck = s->phase == T_DOWN;
	if (job_now(s) != NULL)
		s->r.domain_lost_ms = job_now(s)->lost_work_ms;
	s->r.cpu_s = (double)(clock() - cpu) / CLOCKS_PER_SEC;
	*out = s->r;
	domain_close(&s->d);
	topo_destroy(s->topo);
	free(s->nodes);
	free(s->dead);
	free(s->lemons);
	free(s->h.v);
}

/* ---- Reporting -------------------------------------------------------- */

struct summary {
	double ettr, ettr_min, ettr_max;
	double cat[NCATS];	/* % of wall, mean */
	double hits, restarts, cpu_s, min_nodes;
	double bh_hits, slow_hits, stragglers, drains;
	unsigned job_nodes, spare_gpus;
	unsigned long passes, ticks;
};

static void
summarize(const struct params *p, const struct config *c,
    struct summary *sm, double *mtbf_ms)
{
	struct result r;
	unsigned i, k;
	double e, wall = 0, hits = 0;

	memset(sm, 0, sizeof(*sm));
	sm->ettr_min = 2;
	sm->ettr_max = -1;
	sm->min_nodes = 1e9;
	for (i = 0; i < p->seeds; i++) {
		sim_run(p, c, p->seed0 + i, &r);
		e = r.cat[C_USEFUL] / r.wall;
		sm->ettr += e / p->seeds;
		if (e < sm->ettr_min)
			sm->ettr_min = e;
		if (e > sm->ettr_max)
			sm->ettr_max = e;
		for (k = 0; k < NCATS; k++)
			sm->cat[k] += 100 * r.cat[k] / r.wall / p->seeds;
		sm->hits += (double)r.hits / p->seeds;
		sm->restarts += (double)r.restarts / p->seeds;
		sm->bh_hits += (double)r.bh_hits / p->seeds;
		sm->slow_hits += (double)r.slow_hits / p->seeds;
		sm->stragglers += (double)r.stragglers / p->seeds;
		sm->drains += (double)r.drains / p->seeds;
		sm->cpu_s += r.cpu_s;
		sm->passes += r.passes;
		sm->ticks += r.ticks;
		if (r.min_nodes < sm->min_nodes)
			sm->min_nodes = r.min_nodes;
		sm->job_nodes = r.job_nodes;
		sm->spare_gpus = r.spare_gpus;
		wall += r.wall;
		hits += r.hits + r.hits_by_path[P_PLANNED];
		if (p->verbose)
			fprintf(stdout, "# %s seed %u: ETTR %.4f hits %u "
			    "(xid %u health %u lost %u crash %u hang %u "
			    "planned %u) faults %u restarts %u min_nodes %.0f "
			    "domain_lost_work %.1f h cpu %.1f s passes %lu "
			    "ticks %lu hb %lu lemon_faults %u blackhole_hits %u "
			    "slow_hits %u stragglers %u suspect_drains %u "
			    "deep_repairs %u step_rounds %lu%s\n", c->name, i,
			    e, r.hits,
			    r.hits_by_path[P_XID], r.hits_by_path[P_HEALTH],
			    r.hits_by_path[P_LOST], r.hits_by_path[P_CRASH],
			    r.hits_by_path[P_HANG], r.hits_by_path[P_PLANNED],
			    r.faults, r.restarts, r.min_nodes,
			    r.domain_lost_ms / 3.6e6, r.cpu_s, r.passes,
			    r.ticks, r.hb_rounds, r.lemon_faults, r.bh_hits,
			    r.slow_hits, r.stragglers, r.drains, r.deep,
			    r.step_rounds,
			    r.stuck ? " (not running at the end)" : "");
	}
	if (mtbf_ms != NULL)
		*mtbf_ms = hits > 0 ? wall / hits : 0;
}

static void
print_table(const struct params *p, unsigned which)
{
	struct summary sm;
	double mtbf = 0, sched;
	unsigned i, k;

	printf("config       job_nodes spare_gpus  ETTR   (min    max)  ");
	for (k = 0; k < NCATS; k++)
		printf(" %7s", cat_names[k]);
	printf("     sched +restart  hits restarts    bh  slow strag "
	    "drain  cpu_s\n");
	for (i = 0; i < NCONFIGS; i++) {
		if (!(which & (1u << i)))
			continue;
		summarize(p, &configs[i], &sm, i == 3 ? &mtbf : NULL);
		/* Scheduler-caused: detection, waiting, and
		 * running slow after a straggler was known. */
		sched = sm.cat[C_DETECT] + sm.cat[C_WAIT] +
		    sm.cat[C_SLOWKNOWN];
		printf("%-12s %9u %10u %6.4f (%6.4f %6.4f)", configs[i].name,
		    sm.job_nodes, sm.spare_gpus, sm.ettr, sm.ettr_min,
		    sm.ettr_max);
		for (k = 0; k < NCATS; k++)
			printf(" %6.2f%%", sm.cat[k]);
		printf("  %7.2f%% %7.2f%% %5.1f %8.1f %5.1f %5.1f %5.1f %5.1f "
		    "%6.1f\n", sched, sched + sm.cat[C_RESTART], sm.hits,
		    sm.restarts, sm.bh_hits, sm.slow_hits, sm.stragglers,
		    sm.drains, sm.cpu_s);
		fflush(stdout);
	}
	if (mtbf > 0)
		printf("job MTBF (cohort-1, interruptions hitting it): %.2f h; "
		    "Young/Daly sqrt(2 x MTBF x %.0f s) = %.1f min\n",
		    mtbf / HOUR, p->ckpt_cost_s,
		    sqrt(2 * (mtbf / SEC) * p->ckpt_cost_s) / 60);
}

static void
sweep(const struct params *p0, const char *file, double days)
{
	static const double spares[] = { 0, 0.5, 1, 2 };
	static const double cmin[] = { 2, 5, 10, 15, 20, 30, 45, 60 };
	struct params p = *p0;
	struct config c = { "sweep", false, 0, 0, false, false, false,
	    false };
	struct summary sm;
	FILE *f;
	size_t i, j;

	if ((f = fopen(file, "w")) == NULL) {
		fprintf(errf, "goodput: %s: %s\n", file, strerror(errno));
		exit(1);
	}
	p.days = days;
	p.verbose = false;
	fprintf(f, "# goodput sweep: %u nodes, %.0f days, %u seeds, ckpt "
	    "cost %.0f s, restart %.0f s, repair %.1f h\n"
	    "# spares_pct ckpt_min ettr_mean ettr_min ettr_max\n", p.nodes,
	    p.days, p.seeds, p.ckpt_cost_s, p.restart_s, p.repair_h);
	for (i = 0; i < sizeof(spares) / sizeof(spares[0]); i++) {
		c.spare_pct = spares[i];
		for (j = 0; j < sizeof(cmin) / sizeof(cmin[0]); j++) {
			p.ckpt_min = cmin[j];
			summarize(&p, &c, &sm, NULL);
			fprintf(f, "%g %g %.5f %.5f %.5f\n", spares[i],
			    cmin[j], sm.ettr, sm.ettr_min, sm.ettr_max);
			fflush(f);
		}
		fprintf(f, "\n\n");
	}
	fclose(f);
}

static void
usage(void)
{
	fprintf(errf, "usage: goodput [--nodes N] [--days D] [--seeds S] "
	    "[--seed0 X] [--ckpt-min C] [--ckpt-cost-s K] [--restart-s R] "
	    "[--repair-h H] [--maint-h M] [--hang-timeout-s T] "
	    "[--node-timeout-s T] [--health-s T] [--nodes-per-leaf L] "
	    "[--configs slurm,slurm+1,cohort,cohort-1,cohort-2,elastic,"
	    "c1+suspect,c1+straggler,c1+advice,c1+all] "
	    "[--sweep FILE] [--sweep-days D] [--rate-x F] [--verbose] "
	    "[--beyond] [--lemon-pct P] [--lemon-x X] "
	    "[--blackholes-per-day B] [--blackhole-h H] [--slow-per-day S] "
	    "[--deep-repair-h H] [--step-s S] [--requeue-delay-s Q] "
	    "[--straggler-pct P]\n");
	exit(2);
}

static double
num(const char *opt, const char *v, double lo, double hi)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v, &end);
	if (errno != 0 || end == v || *end != '\0' || !(x >= lo && x <= hi)) {
		fprintf(errf, "goodput: --%s: '%s' is not a number in "
		    "[%g, %g]\n", opt, v, lo, hi);
		exit(2);
	}
	return x;
}

static unsigned
parse_configs(const char *list)
{
	char *dup = strdup(list), *w, *save = NULL;
	unsigned which = 0, i;

	if (dup == NULL)
		exit(1);
	for (w = strtok_r(dup, ",", &save); w != NULL;
	    w = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NCONFIGS; i++)
			if (strcmp(w, configs[i].name) == 0)
				break;
		if (i == NCONFIGS) {
			fprintf(errf, "goodput: --configs: no configuration "
			    "'%s'\n", w);
			exit(2);
		}
		which |= 1u << i;
	}
	free(dup);
	if (which == 0)
		usage();
	return which;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "days", required_argument, NULL, 'd' },
		{ "seeds", required_argument, NULL, 's' },
		{ "seed0", required_argument, NULL, 'S' },
		{ "ckpt-min", required_argument, NULL, 'c' },
		{ "ckpt-cost-s", required_argument, NULL, 'k' },
		{ "restart-s", required_argument, NULL, 'r' },
		{ "repair-h", required_argument, NULL, 'R' },
		{ "maint-h", required_argument, NULL, 'm' },
		{ "hang-timeout-s", required_argument, NULL, 'H' },
		{ "node-timeout-s", required_argument, NULL, 'T' },
		{ "health-s", required_argument, NULL, 'h' },
		{ "nodes-per-leaf", required_argument, NULL, 'l' },
		{ "configs", required_argument, NULL, 'C' },
		{ "sweep", required_argument, NULL, 'w' },
		{ "sweep-days", required_argument, NULL, 'D' },
		{ "rate-x", required_argument, NULL, 'x' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "beyond", no_argument, NULL, 'B' },
		{ "lemon-pct", required_argument, NULL, 'L' },
		{ "lemon-x", required_argument, NULL, 'X' },
		{ "blackholes-per-day", required_argument, NULL, 'b' },
		{ "blackhole-h", required_argument, NULL, 'F' },
		{ "slow-per-day", required_argument, NULL, 'o' },
		{ "deep-repair-h", required_argument, NULL, 'e' },
		{ "step-s", required_argument, NULL, 't' },
		{ "requeue-delay-s", required_argument, NULL, 'q' },
		{ "straggler-pct", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	struct params p = {
		.nodes = 2048, .days = 54, .seeds = 3, .seed0 = 1,
		.ckpt_min = 10, .ckpt_cost_s = 10, .restart_s = 120,
		.repair_h = 4, .maint_h = 2, .hang_timeout_s = 300,
		.node_timeout_s = 10, .health_s = 30, .nodes_per_leaf = 32,
		.rate_x = 1,
		.lemon_pct = -1, .lemon_x = 20, .bh_per_day = -1,
		.bh_h = 6, .slow_per_day = -1, .deep_h = 24, .step_s = 5,
		.requeue_delay_s = 120,
	};
	bool beyond = false;
	const char *sweep_file = NULL;
	double sweep_days = 0;
	unsigned which = (1u << NCONFIGS) - 1;
	int ch;

	errf = stderr;
	trace = getenv("GOODPUT_TRACE") != NULL;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'n':
			p.nodes = (unsigned)num("nodes", optarg, 8, 100000);
			break;
		case 'd':
			p.days = num("days", optarg, 0.01, 3650);
			break;
		case 's':
			p.seeds = (unsigned)num("seeds", optarg, 1, 1000);
			break;
		case 'S':
			p.seed0 = (uint64_t)num("seed0", optarg, 0, 1e15);
			break;
		case 'c':
			p.ckpt_min = num("ckpt-min", optarg, 0.1, 10000);
			break;
		case 'k':
			p.ckpt_cost_s = num("ckpt-cost-s", optarg, 0, 3600);
			break;
		case 'r':
			p.restart_s = num("restart-s", optarg, 0, 86400);
			break;
		case 'R':
			p.repair_h = num("repair-h", optarg, 0.01, 10000);
			break;
		case 'm':
			p.maint_h = num("maint-h", optarg, 0.01, 10000);
			break;
		case 'H':
			p.hang_timeout_s = (unsigned)num("hang-timeout-s",
			    optarg, 1, 86400);
			break;
		case 'T':
			p.node_timeout_s = (unsigned)num("node-timeout-s",
			    optarg, 1, 86400);
			break;
		case 'h':
			p.health_s = (unsigned)num("health-s", optarg, 1,
			    86400);
			break;
		case 'l':
			p.nodes_per_leaf = (unsigned)num("nodes-per-leaf",
			    optarg, 1, 100000);
			break;
		case 'C':
			which = parse_configs(optarg);
			break;
		case 'w':
			sweep_file = optarg;
			break;
		case 'D':
			sweep_days = num("sweep-days", optarg, 0.01, 3650);
			break;
		case 'x':
			p.rate_x = num("rate-x", optarg, 0, 10000);
			break;
		case 'v':
			p.verbose = true;
			break;
		case 'B':
			beyond = true;
			break;
		case 'L':
			p.lemon_pct = num("lemon-pct", optarg, 0, 100);
			break;
		case 'X':
			p.lemon_x = num("lemon-x", optarg, 1, 10000);
			break;
		case 'b':
			p.bh_per_day = num("blackholes-per-day", optarg, 0,
			    1e6);
			break;
		case 'F':
			p.bh_h = num("blackhole-h", optarg, 0.01, 10000);
			break;
		case 'q':
			p.requeue_delay_s = (unsigned)num("requeue-delay-s",
			    optarg, 0, 86400);
			break;
		case 'o':
			p.slow_per_day = num("slow-per-day", optarg, 0, 1e6);
			break;
		case 'e':
			p.deep_h = num("deep-repair-h", optarg, 0.01, 10000);
			break;
		case 't':
			p.step_s = num("step-s", optarg, 0.1, 3600);
			break;
		case 'g':
			p.straggler_pct = (unsigned)num("straggler-pct", optarg,
			    101, 1000);
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	/* --beyond: the failures that do not crash, at the rates the
	 * simulator assumes (what was not given). */
	if (p.lemon_pct < 0)
		p.lemon_pct = beyond ? 1 : 0;
	if (p.bh_per_day < 0)
		p.bh_per_day = beyond ? 0.25 : 0;
	if (p.slow_per_day < 0)
		p.slow_per_day = beyond ? 2 : 0;
	if (p.ckpt_cost_s >= CKPT_DEADLINE_S) {
		fprintf(errf, "goodput: --ckpt-cost-s must be below the "
		    "job's checkpoint deadline (%d s)\n", CKPT_DEADLINE_S);
		return 2;
	}
	/* The domain logs every decision; 466 failures at 2,048 nodes are
	 * a lot of lines. */
	if (!p.verbose) {
		int fd = dup(2);

		if (fd == -1 || (errf = fdopen(fd, "w")) == NULL ||
		    freopen("/dev/null", "w", stderr) == NULL)
			return 1;
	}
	printf("goodput: %u nodes x %d GPUs (%u per leaf), %.2f days, %u "
	    "seed(s) from %" PRIu64 "; checkpoint every %.1f min costing "
	    "%.0f s, restart %.0f s, repair %.1f h, maintenance %.1f h; "
	    "cohort: node_timeout %u s, health check %u s, hang-timeout "
	    "%u s; slurm: %d s, %d s, NCCL watchdog %d s; failure rates x "
	    "%g\n", p.nodes,
	    GPUS_PER_NODE, p.nodes_per_leaf, p.days, p.seeds, p.seed0,
	    p.ckpt_min, p.ckpt_cost_s, p.restart_s, p.repair_h, p.maint_h,
	    p.node_timeout_s, p.health_s, p.hang_timeout_s,
	    SLURM_NODE_TIMEOUT_S, SLURM_HEALTH_S, NCCL_WATCHDOG_S, p.rate_x);
	if (p.lemon_pct > 0 || p.bh_per_day > 0 || p.slow_per_day > 0)
		printf("beyond crashes: %g%% lemons at %gx the hardware "
		    "failure rate; %g black holes a day per 2,048 nodes, "
		    "fixed after %g h; %g fail-slow episodes a day per 2,048 "
		    "nodes (%.0f s-%.0f h, %.1fx-%.0fx); suspect drains "
		    "repaired for good in %g h; steps of %g s\n",
		    p.lemon_pct, p.lemon_x, p.bh_per_day, p.bh_h,
		    p.slow_per_day, SLOW_MIN_S, SLOW_MAX_S / 3600, SLOW_X_MIN,
		    SLOW_X_MAX, p.deep_h, p.step_s);
	fflush(stdout);
	print_table(&p, which);
	if (sweep_file != NULL)
		sweep(&p, sweep_file, sweep_days > 0 ? sweep_days : p.days);
	return 0;
}
