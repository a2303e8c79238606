/* The agent's task table. A task ends when its supervisor does (its
 * pidfd becomes readable); the supervisor has then written the wait
 * status to the spool, so the outcome survives an agent restart too. */
#include "config.h"

#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/clock.h"
#include "daemon/agent/account.h"
#include "daemon/agent/agent.h"
#include "daemon/agent/agent_config.h"
#include "daemon/agent/cgroup.h"
#include "daemon/agent/container.h"
#include "daemon/agent/cpubind.h"
#include "daemon/agent/env.h"
#include "daemon/agent/tasks.h"
#include "daemon/agent/tasks_spool.h"
#include "daemon/agent/taskout.h"
#include "daemon/agent/watch.h"
#include "lib/log.h"

/* Tasks whose supervisor could not be watched with a pidfd, and the
 * checkpoint files of the jobs watched here, are checked this often. */
#define AGENT_SWEEP_MS 250
/* A job file refused for the same reason is logged once this often. */
#define AGENT_REFUSAL_LOG_MS 60000

struct atask {
	struct agent *a;
	struct task t;
	struct event *ev;	/* pidfd readable */
	struct event *kill_ev;	/* SIGKILL after the stop grace */
	bool stopped;		/* SIGTERM sent: a stop again is a repeat */
	bool ended;
	bool acked;
	int status;
	char why[256];		/* why it could not start, or "" */
	bool permanent;		/* ... and it never could, as given */
	/* Its step file's content last given to the link (straggler
	 * reports go only when it changes); step_err its refusals. */
	bool step_sent;
	uint64_t step;
	uint32_t step_ms;
	int step_err;
	int64_t step_logged_ms;
	/* srun's input (a step's task 0): the pipe's write end, or -1
	 * (none, or closed at EOF or the task's end); how many bytes it
	 * has taken; whether it ever had one. Lost with this process: a
	 * restarted agent adopts the task without it (the task has read
	 * EOF). */
	int in_fd;
	uint64_t in_off;
	bool in_pipe;
	bool in_pty;		/* in_fd is a pseudo-terminal's master */
	TAILQ_ENTRY(atask) entry;
};

/* A job file whose reads are refused: logged when the reason changes,
 * and at most once a minute while it stays. */
struct refusal {
	int err;		/* 0: the last read was fine */
	int64_t logged_ms;
};

/* What the agent watches of one start of a job: its progress file and,
 * on the node of rank 0, its checkpoint directory, read as the job's
 * user (cred). Kept while any task of the start is in the table. The
 * checkpoint directory and the user's uid and gid are also kept in the
 * start's spool directory ("watch"), for an agent that restarts. */
struct ajob {
	uint64_t job_id;
	uint32_t restart;
	char *ckpt_dir;		/* NULL: not watched here */
	struct watch_cred cred;	/* cred.groups malloc'd */
	struct refusal latest_refused, progress_refused, path_refused;
	struct refusal cost_refused;
	char progress[PATH_MAX];
	bool has_ckpt;
	uint64_t step;
	char ckpt_path[WATCH_PATH_MAX];
	int64_t ckpt_ms;
	uint32_t ckpt_cost_ms;	/* what the job reported it took; 0: none */
	/* LATEST as it was when this start launched: an earlier run's
	 * checkpoint, not one of this start's. */
	bool has_base;
	uint64_t base_step;
	char base_path[WATCH_PATH_MAX];
	TAILQ_ENTRY(ajob) entry;
};

/* A launch whose tasks are still being started, a few per loop round
 * (agent_launch): l points into the copies held here. */
struct apending {
	struct launch l;
	struct job_spec spec;
	char **nodelist;
	size_t nnodes;
	char *user, *master_addr, *resume;
	unsigned *gpus;
	const char *account;	/* borrowed: cfg's, or user */
	struct account acct;	/* account, looked up once for all ranks */
	struct task_user who;	/* acct as tasks_start takes it */
	char **base;		/* the account's environment */
	size_t nbase;
	char progress[4096];
	char advice[PATH_MAX];	/* the advice file; "": none */
	uint32_t advice_s;	/* advice come before any rank started
				 * (agent_advise): written as the first
				 * start; 0: none */
	char stepdir[PATH_MAX];	/* the start's step files; "": none */
	char jobcg[PATH_MAX];
	char credfile[PATH_MAX];	/* the step credential's; "": none */
	unsigned ntasks;	/* the tasks this launch starts here */
	unsigned next;		/* the next local rank to start */
	bool owned;		/* l's strings are the copies above */
	/* A step launch's own copies (owned), l.step pointing at step. */
	struct step_launch step;
	char **sargv, **senv, **snodes;
	size_t nsargv, nsenv, nsnodes;
	unsigned *stpn, *sgpus;
	char *sworkdir, *saddr, *sname;
	struct job_container sctr;
	/* A job in a container image (container.h): no rank starts while
	 * ctr_req, its preparation, is under way; then ctr_res says how it
	 * went (the tasks fail with its reason when it failed). */
	struct agent *agent;
	struct ctr_req *ctr_req;
	struct ctr_result ctr_res;
	TAILQ_ENTRY(apending) entry;
};

/* A job's image prepared ahead of its launch, as the controller asked
 * (agent_prepare_image): answered through the agent's prep_cb. */
struct aprep {
	struct agent *agent;
	uint64_t job_id;
	uint32_t restart;
	uint64_t token;
	struct ctr_req *req;
	TAILQ_ENTRY(aprep) entry;
};

struct agent {
	struct event_base *base;
	const struct agent_config *cfg;
	agent_exit_cb cb;
	void *arg;
	struct event *sweep;
	TAILQ_HEAD(, atask) tasks;
	TAILQ_HEAD(, ajob) jobs;
	void (*ckpt_cb)(void *);	/* a new checkpoint was seen */
	void *ckpt_arg;
	/* CPU binding and cgroups. */
	const struct inventory *inv;	/* the GPUs' NUMA nodes; NULL:
					 * unknown */
	struct cpubind_map cpumap;	/* NUMA node -> CPUs */
	struct cgroup *cg;		/* NULL: no per-job cgroups */
	struct ctr_cache *ctrc;		/* container images */
	TAILQ_HEAD(, aprep) preps;	/* images prepared ahead */
	agent_prepared_cb prep_cb;
	void *prep_arg;
	bool warned_mem;		/* said memory is not limited */
	bool adopting;			/* in tasks_spool_adopt: a start's
					 * other ranks may not be in the
					 * table yet */
	/* Launches still starting tasks, taken in turn one round each. */
	TAILQ_HEAD(, apending) pending;
	struct event *launch_ev;	/* the next round */
};

/* Is t a task of job step *step (step NULL: of the job's own)? */
static bool
task_in_step(const struct task *t, const uint32_t *step)
{
	if (step == NULL)
		return !t->has_step;
	return t->has_step && t->step_id == *step;
}

/* "" or " step S", for messages about a task. */
static const char *
task_step_text(const struct task *t, char *buf, size_t len)
{
	if (!t->has_step)
		return "";
	snprintf(buf, len, " step %" PRIu32, t->step_id);
	return buf;
}

static struct ajob *
ajob_find(struct agent *a, uint64_t job_id, uint32_t restart)
{
	struct ajob *j;

	TAILQ_FOREACH(j, &a->jobs, entry)
		if (j->job_id == job_id && j->restart == restart)
			return j;
	return NULL;
}

static void
ajob_free(struct agent *a, struct ajob *j)
{
	TAILQ_REMOVE(&a->jobs, j, entry);
	free(j->ckpt_dir);
	free(j->cred.groups);
	free(j);
}

/* The start's entry, made when missing (ckpt_dir NULL: not watched),
 * with a copy of cred. NULL only when out of memory. */
static struct ajob *
ajob_get(struct agent *a, uint64_t job_id, uint32_t restart,
    const char *ckpt_dir, const struct watch_cred *cred)
{
	struct ajob *j;

	if ((j = ajob_find(a, job_id, restart)) != NULL)
		return j;
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return NULL;
	j->job_id = job_id;
	j->restart = restart;
	j->cred = *cred;
	j->cred.groups = NULL;
	if (cred->ngroups > 0 && (j->cred.groups = calloc(cred->ngroups,
	    sizeof(gid_t))) == NULL) {
		free(j);
		return NULL;
	}
	if (cred->ngroups > 0)
		memcpy(j->cred.groups, cred->groups,
		    cred->ngroups * sizeof(gid_t));
	if (ckpt_dir != NULL && (j->ckpt_dir = strdup(ckpt_dir)) == NULL) {
		free(j->cred.groups);
		free(j);
		return NULL;
	}
	snprintf(j->progress, sizeof(j->progress), "%s/jobs/%" PRIu64
	    ".%u/progress", a->cfg->spool, job_id, restart);
	TAILQ_INSERT_TAIL(&a->jobs, j, entry);
	return j;
}

static struct apending *apending_find(struct agent *a, uint64_t job_id,
    uint32_t restart);

/* Forget the start once none of its tasks is left in the table, nor to
 * be started. */
static void
ajob_gc(struct agent *a, uint64_t job_id, uint32_t restart)
{
	struct atask *at;
	struct ajob *j;

	if (apending_find(a, job_id, restart) != NULL)
		return;
	TAILQ_FOREACH(at, &a->tasks, entry)
		if (at->t.job_id == job_id && at->t.restart == restart)
			return;
	if ((j = ajob_find(a, job_id, restart)) != NULL)
		ajob_free(a, j);
}

static void
ajob_watch_path(const struct agent *a, uint64_t job_id, uint32_t restart,
    char *path, size_t len, const char *suffix)
{
	snprintf(path, len, "%s/jobs/%" PRIu64 ".%u/watch%s", a->cfg->spool,
	    job_id, restart, suffix);
}

/* Remember, in the spool, the checkpoint directory this node watches
 * for the start ("" when none) and whose files they are:
 * "DIR\nUID GID\n". */
static int
ajob_save_watch(const struct agent *a, uint64_t job_id, uint32_t restart,
    const char *dir, const struct watch_cred *cred, struct cerr *err)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	FILE *fp;
	int fd;

	ajob_watch_path(a, job_id, restart, tmp, sizeof(tmp), ".tmp");
	ajob_watch_path(a, job_id, restart, path, sizeof(path), "");
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1 || (fp = fdopen(fd, "w")) == NULL) {
		if (fd != -1)
			close(fd);
		return cerr_set(err, ERR_INTERNAL, "%s: %s", tmp,
		    strerror(errno));
	}
	if (fprintf(fp, "%s\n%u %u\n", dir != NULL ? dir : "",
	    (unsigned)cred->uid, (unsigned)cred->gid) < 0 ||
	    fclose(fp) == EOF ||
	    rename(tmp, path) == -1) {
		unlink(tmp);
		return cerr_set(err, ERR_INTERNAL, "%s: %s", path,
		    strerror(errno));
	}
	return 0;
}

/* "UID GID" of the start's progress file, for a spool an older agent
 * wrote (its "watch" file names no user): the agent created that file
 * and gave it to the task's account, in a directory the job cannot
 * write. NULL when it does not tell (missing, root's). */
static char *
ajob_progress_ids(const struct agent *a, uint64_t job_id, uint32_t restart,
    char *buf, size_t len)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/jobs/%" PRIu64 ".%u/progress",
	    a->cfg->spool, job_id, restart);
	if (lstat(path, &st) == -1 || !S_ISREG(st.st_mode) || st.st_uid == 0)
		return NULL;
	snprintf(buf, len, "%u %u", (unsigned)st.st_uid, (unsigned)st.st_gid);
	return buf;
}

/* The checkpoint directory the spool says this node watches for the
 * start, or NULL (malloc'd), and whose files they are (*has_cred). */
static char *
ajob_load_watch(const struct agent *a, uint64_t job_id, uint32_t restart,
    struct watch_cred *cred, bool *has_cred)
{
	char path[PATH_MAX], *line = NULL, *ids = NULL, old[64];
	size_t cap = 0, cap2 = 0;
	ssize_t n = -1;
	FILE *fp;

	ajob_watch_path(a, job_id, restart, path, sizeof(path), "");
	if ((fp = fopen(path, "re")) != NULL) {
		n = getline(&line, &cap, fp);
		if (getline(&ids, &cap2, fp) == -1) {
			free(ids);
			ids = NULL;
		}
		fclose(fp);
	}
	*has_cred = account_from_ids(ids != NULL ? ids :
	    ajob_progress_ids(a, job_id, restart, old, sizeof(old)),
	    cred) == 0;
	free(ids);
	if (n <= 1 || line[n - 1] != '\n' || line[0] != '/') {
		free(line);
		return NULL;
	}
	line[n - 1] = '\0';
	return line;
}

static void
atask_free(struct atask *at)
{
	TAILQ_REMOVE(&at->a->tasks, at, entry);
	if (at->ev != NULL)
		event_free(at->ev);
	if (at->kill_ev != NULL)
		event_free(at->kill_ev);
	if (at->t.pidfd >= 0)
		close(at->t.pidfd);
	if (at->in_fd >= 0)
		close(at->in_fd);
	free(at);
}

/* Once no task of the start runs here any more (or, with force, now):
 * kill what its tasks left behind in its cgroup (a daemon started with
 * setsid escapes the process group, not the cgroup) and remove it. */
static void
agent_job_end(struct agent *a, uint64_t job_id, uint32_t restart, bool force)
{
	struct atask *at;
	char dir[PATH_MAX], path[PATH_MAX];

	if (a->cg == NULL || (a->adopting && !force) ||
	    (!force && apending_find(a, job_id, restart) != NULL))
		return;
	TAILQ_FOREACH(at, &a->tasks, entry)
		if (!force && at->t.job_id == job_id &&
		    at->t.restart == restart && !at->ended)
			return;
	snprintf(dir, sizeof(dir), "%s/jobs/%" PRIu64 ".%u", a->cfg->spool,
	    job_id, restart);
	if (cgroup_job_load(a->cg, dir, path) == -1)
		return;
	if (cgroup_job_end(a->cg, path, dir) == -1)
		log_warn("job %" PRIu64 ": cannot remove its cgroup %s", job_id,
		    path);
	else
		log_info("job %" PRIu64 ": ended on this node; its cgroup is "
		    "killed", job_id);
	container_cgroup_v1_end(path);
}

static void
atask_check(struct atask *at)
{
	struct task_report r;
	char st[32];
	int status;

	if (at->ended)
		return;
	if (tasks_result(&at->t, &status, at->why, sizeof(at->why),
	    &at->permanent) == -1 && errno != EIO)
		return;
	at->ended = true;
	at->status = status;
	/* Nobody reads its input any more. */
	if (at->in_fd >= 0) {
		close(at->in_fd);
		at->in_fd = -1;
	}
	if (at->ev != NULL)
		event_del(at->ev);
	if (at->kill_ev != NULL)
		event_del(at->kill_ev);
	log_info("job %" PRIu64 "%s rank %u: task ended (status 0x%x)",
	    at->t.job_id, task_step_text(&at->t, st, sizeof(st)), at->t.rank,
	    (unsigned)status);
	agent_job_end(at->a, at->t.job_id, at->t.restart, false);
	memset(&r, 0, sizeof(r));
	r.job_id = at->t.job_id;
	r.restart = at->t.restart;
	r.rank = at->t.rank;
	r.running = false;
	r.wait_status = status;
	memcpy(r.why, at->why, sizeof(r.why));
	r.permanent = at->permanent;
	r.has_step = at->t.has_step;
	r.step = at->t.step_id;
	at->a->cb(&r, at->a->arg);
}

static void
atask_pidfd_cb(evutil_socket_t fd, short what, void *arg)
{
	atask_check(arg);
}

static void
atask_kill_cb(evutil_socket_t fd, short what, void *arg)
{
	struct atask *at = arg;

	if (!at->ended && tasks_signal(&at->t, SIGKILL) == 0)
		log_info("job %" PRIu64 " rank %u: still running after the "
		    "grace period; killed", at->t.job_id, at->t.rank);
}

static void
agent_sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	struct atask *at, *next;

	for (at = TAILQ_FIRST(&a->tasks); at != NULL; at = next) {
		next = TAILQ_NEXT(at, entry);
		if (at->t.pidfd < 0)
			atask_check(at);
	}
	cgroup_sweep(a->cg);
	agent_watch_checkpoints(a);
}

/* Take t into the table (the table owns t->pidfd from here). */
static struct atask *
agent_watch(struct agent *a, const struct task *t)
{
	struct atask *at;

	if ((at = calloc(1, sizeof(*at))) == NULL)
		return NULL;
	at->a = a;
	at->t = *t;
	at->status = 0;
	at->in_fd = t->stdin_fd;
	at->in_pipe = t->stdin_fd >= 0;
	at->in_pty = at->in_pipe && t->pty;
	at->t.stdin_fd = -1;
	at->kill_ev = evtimer_new(a->base, atask_kill_cb, at);
	if (t->pidfd >= 0)
		at->ev = event_new(a->base, t->pidfd, EV_READ, atask_pidfd_cb,
		    at);
	if (at->kill_ev == NULL || (t->pidfd >= 0 && at->ev == NULL)) {
		if (at->kill_ev != NULL)
			event_free(at->kill_ev);
		free(at);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&a->tasks, at, entry);
	if (at->ev != NULL)
		event_add(at->ev, NULL);
	return at;
}

static int
agent_adopt_cb(struct task *t, void *arg)
{
	struct agent *a = arg;
	struct atask *at;
	char st[32];

	if ((at = agent_watch(a, t)) == NULL) {
		if (t->pidfd >= 0)
			close(t->pidfd);
		return -1;
	}
	log_info("job %" PRIu64 "%s rank %u: adopted from the spool",
	    t->job_id, task_step_text(t, st, sizeof(st)), t->rank);
	if (ajob_find(a, t->job_id, t->restart) == NULL) {
		struct watch_cred cred;
		bool has_cred;
		char *dir = ajob_load_watch(a, t->job_id, t->restart, &cred,
		    &has_cred);

		/* Without the user's identity its files are not read. */
		if (!has_cred) {
			if (dir != NULL)
				log_warnx("job %" PRIu64 ": the spool does not "
				    "say whose files it has; its checkpoints "
				    "are not read", t->job_id);
			free(dir);
			dir = NULL;
			memset(&cred, 0, sizeof(cred));
		}
		if (ajob_get(a, t->job_id, t->restart, dir, &cred) == NULL)
			log_warnx("job %" PRIu64 ": out of memory", t->job_id);
		free(dir);
		free(cred.groups);
	}
	/* It may have ended while no agent watched. */
	if (t->pidfd < 0 || !tasks_alive(t))
		atask_check(at);
	return 0;
}

/* The NUMA map for --cpus-per-task and the cgroups, before adoption
 * (an adopted start may have ended while no agent ran). Neither is
 * fatal: without them tasks run unbound and without a cgroup. */
static void
agent_setup_binding(struct agent *a)
{
	const char *why_mem;
	cpu_set_t allowed;
	char why[512], list[AGENT_CPU_LIST_MAX];
	int i;

	if (a->cfg->has_numa_map)
		a->cpumap = a->cfg->numa_map;
	else {
		if (sched_getaffinity(0, sizeof(allowed), &allowed) == -1) {
			CPU_ZERO(&allowed);
			for (i = 0; i < sysconf(_SC_NPROCESSORS_ONLN) &&
			    i < CPU_SETSIZE; i++)
				CPU_SET(i, &allowed);
		}
		if (cpubind_map_sysfs("/sys/devices/system/node", &allowed,
		    &a->cpumap) == -1) {
			log_warn("/sys/devices/system/node: cannot read the "
			    "NUMA nodes; all CPUs are taken as one");
			memset(&a->cpumap, 0, sizeof(a->cpumap));
			a->cpumap.nnodes = 1;
			a->cpumap.cpus[0] = allowed;
		}
	}
	for (i = 0; i < (int)a->cpumap.nnodes; i++) {
		cpubind_list_format(&a->cpumap.cpus[i], list, sizeof(list));
		log_info("NUMA node %d: CPUs %s%s", a->cpumap.node[i], list,
		    a->cfg->has_numa_map ? " (numa_cpus)" : "");
	}
	a->cg = cgroup_create(a->cfg->cgroup, a->cfg->cgroup_path,
	    a->cfg->name, a->cfg->spool, why, sizeof(why));
	if (a->cg == NULL && a->cfg->cgroup == AGENT_CGROUP_PATH)
		log_warnx("no cgroup per job: [agent] cgroup = %s cannot be "
		    "used: %s", a->cfg->cgroup_path, why);
	else if (a->cg == NULL)
		log_info("no cgroup per job: %s", why);
	else if (cgroup_memory_enforced(a->cg, &why_mem))
		log_info("a cgroup per job under %s (memory limits enforced)",
		    cgroup_base(a->cg));
	else
		log_info("a cgroup per job under %s; --mem-per-node is not "
		    "enforced: %s", cgroup_base(a->cg), why_mem);
	if (a->cg != NULL && cgroup_clone_into_ok(a->cg, &why_mem))
		log_info("tasks are created in their cgroups (clone3)");
	else if (a->cg != NULL)
		log_info("tasks' supervisors join their cgroups through "
		    "cgroup.procs, slower: %s", why_mem);
}

static void agent_launch_round_cb(evutil_socket_t fd, short what,
    void *arg);
static void apending_free(struct agent *a, struct apending *p);
static void apending_unqueue(struct agent *a, struct apending *p);
static void agent_preps_cancel(struct agent *a, uint64_t job_id,
    uint32_t restart, bool answer);

void
agent_set_inventory(struct agent *a, const struct inventory *inv)
{
	a->inv = inv;
}

/* Tasks reach files of their own in the spool by path (the step
 * credential, step and progress files, the checkpoint advice): the
 * spool must be searchable by everyone, as its job directories are
 * (0711: no one lists it). One made under a strict umask (027: 0750)
 * would shut every task out of them; it is opened up, saying so. */
static void
agent_spool_searchable(const char *spool)
{
	struct stat st;

	if (stat(spool, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    (st.st_mode & 0111) == 0111)
		return;
	if (chmod(spool, (st.st_mode & 07777) | 0111) == -1)
		log_warn("%s: cannot make it searchable; tasks will not reach "
		    "their spool files", spool);
	else
		log_info("%s: made searchable (mode %04o), so that tasks "
		    "reach their spool files", spool,
		    (unsigned)((st.st_mode & 07777) | 0111));
}

struct agent *
agent_create(struct event_base *base, const struct agent_config *cfg,
    agent_exit_cb cb, void *arg, struct cerr *err)
{
	struct agent *a;
	struct atask *at;
	struct timeval tv = { AGENT_SWEEP_MS / 1000,
	    (AGENT_SWEEP_MS % 1000) * 1000 };
	int rc;

	if ((a = calloc(1, sizeof(*a))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	a->base = base;
	a->cfg = cfg;
	a->cb = cb;
	a->arg = arg;
	TAILQ_INIT(&a->tasks);
	TAILQ_INIT(&a->jobs);
	TAILQ_INIT(&a->pending);
	TAILQ_INIT(&a->preps);
	a->sweep = event_new(base, -1, EV_PERSIST, agent_sweep_cb, a);
	a->launch_ev = evtimer_new(base, agent_launch_round_cb, a);
	if (a->sweep == NULL || a->launch_ev == NULL ||
	    event_add(a->sweep, &tv) == -1) {
		cerr_set(err, ERR_INTERNAL, "cannot create timers");
		goto fail;
	}
	if ((a->ctrc = ctr_cache_create(base, cfg, err)) == NULL)
		goto fail;
	agent_setup_binding(a);
	agent_spool_searchable(cfg->spool);
	a->adopting = true;
	rc = tasks_spool_adopt(cfg->spool, agent_adopt_cb, a, err);
	a->adopting = false;
	if (rc == -1)
		goto fail;
	/* The starts whose every task ended while no agent watched. */
	TAILQ_FOREACH(at, &a->tasks, entry)
		if (at->ended)
			agent_job_end(a, at->t.job_id, at->t.restart, false);
	return a;
fail:
	agent_destroy(a);
	return NULL;
}

void
agent_destroy(struct agent *a)
{
	if (a == NULL)
		return;
	while (!TAILQ_EMPTY(&a->tasks))
		atask_free(TAILQ_FIRST(&a->tasks));
	while (!TAILQ_EMPTY(&a->pending))
		apending_free(a, TAILQ_FIRST(&a->pending));
	agent_preps_cancel(a, 0, 0, false);
	while (!TAILQ_EMPTY(&a->jobs))
		ajob_free(a, TAILQ_FIRST(&a->jobs));
	if (a->sweep != NULL)
		event_free(a->sweep);
	if (a->launch_ev != NULL)
		event_free(a->launch_ev);
	cgroup_destroy(a->cg);
	ctr_cache_destroy(a->ctrc);
	free(a);
}

static struct apending *
apending_find(struct agent *a, uint64_t job_id, uint32_t restart)
{
	struct apending *p;

	TAILQ_FOREACH(p, &a->pending, entry)
		if (p->l.job_id == job_id && p->l.restart == restart)
			return p;
	return NULL;
}

/* The launch under way of job step *step of the start (step NULL: of
 * the job's own tasks), or NULL. */
static struct apending *
apending_find_step(struct agent *a, uint64_t job_id, uint32_t restart,
    const uint32_t *step)
{
	struct apending *p;

	TAILQ_FOREACH(p, &a->pending, entry) {
		if (p->l.job_id != job_id || p->l.restart != restart)
			continue;
		if (step == NULL ? p->l.step == NULL :
		    p->l.step != NULL && p->l.step->step_id == *step)
			return p;
	}
	return NULL;
}

static bool
agent_has_start(struct agent *a, uint64_t job_id, uint32_t restart)
{
	struct atask *at;

	TAILQ_FOREACH(at, &a->tasks, entry)
		if (at->t.job_id == job_id && at->t.restart == restart)
			return true;
	return apending_find(a, job_id, restart) != NULL;
}

/* HOME, USER, LOGNAME, SHELL and PATH of the account the tasks run as
 * (looked up already: acct). */
static int
agent_base_env(const struct account *acct, char ***env, size_t *n,
    struct cerr *err)
{
	char line[4200];
	const char *path = "/usr/local/bin:/usr/bin:/bin";

	/* Tasks that run as the agent itself keep its PATH. */
	if (geteuid() != 0 && getenv("PATH") != NULL)
		path = getenv("PATH");
	if (acct->name != NULL) {
		snprintf(line, sizeof(line), "HOME=%s", acct->home);
		strv_append(env, n, line);
		snprintf(line, sizeof(line), "USER=%s", acct->name);
		strv_append(env, n, line);
		snprintf(line, sizeof(line), "LOGNAME=%s", acct->name);
		strv_append(env, n, line);
		snprintf(line, sizeof(line), "SHELL=%s",
		    acct->shell[0] ? acct->shell : "/bin/sh");
		strv_append(env, n, line);
	}
	snprintf(line, sizeof(line), "PATH=%s", path);
	if (strv_append(env, n, line) == -1)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	return 0;
}

/* The progress file lives in the start's spool directory and belongs to
 * the task's account, so the job can rewrite it. */
/* A spool directory, made or found, left with exactly its mode. */
static int
agent_spool_mkdir(const char *path)
{
	if (mkdir(path, TASKS_SPOOL_DIR_MODE) == -1 && errno != EEXIST)
		return -1;
	return chmod(path, TASKS_SPOOL_DIR_MODE);
}

static int
agent_progress_file(const struct agent *a, const struct launch *l,
    const struct account *acct, char *path, size_t len, struct cerr *err)
{
	int fd;

	snprintf(path, len, "%s/jobs", a->cfg->spool);
	if (agent_spool_mkdir(path) == -1)
		return cerr_set(err, ERR_INTERNAL, "%s: %s", path,
		    strerror(errno));
	snprintf(path, len, "%s/jobs/%" PRIu64 ".%u", a->cfg->spool,
	    l->job_id, l->restart);
	if (agent_spool_mkdir(path) == -1)
		return cerr_set(err, ERR_INTERNAL, "%s: %s", path,
		    strerror(errno));
	snprintf(path, len, "%s/jobs/%" PRIu64 ".%u/progress", a->cfg->spool,
	    l->job_id, l->restart);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600)) == -1 || fchmod(fd, 0600) == -1) {
		if (fd != -1)
			close(fd);
		return cerr_set(err, ERR_INTERNAL, "%s: %s", path,
		    strerror(errno));
	}
	if (geteuid() == 0 &&
	    fchown(fd, acct->cred.uid, acct->cred.gid) == -1)
		log_warn("%s: chown", path);
	close(fd);
	return 0;
}

/* Write advice_s into path, whole: a new file renamed over the last,
 * uid's and gid's (when the agent is root), 0400. 0, or -1 (logged;
 * nothing left behind). */
static int
agent_advice_write(const char *path, uint64_t job_id, uid_t uid, gid_t gid,
    uint32_t advice_s)
{
	char tmp[PATH_MAX + 8], line[16];
	int fd, n;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	n = snprintf(line, sizeof(line), "%u\n", advice_s);
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1)
		goto fail;
	if ((geteuid() == 0 && fchown(fd, uid, gid) == -1) ||
	    fchmod(fd, 0400) == -1 || write(fd, line, (size_t)n) != n)
		goto fail;
	if (close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) == -1)
		goto fail;
	return 0;
fail:
	log_warn("job %" PRIu64 ": %s", job_id, tmp);
	if (fd != -1)
		close(fd);
	(void)unlink(tmp);
	return -1;
}

/* The checkpoint interval advised (docs/SPEC.md "Goodput"): one line,
 * seconds, in the start's spool directory (made by agent_progress_file),
 * written whole and renamed over the last, so that a job reading it
 * never sees half a number. The job's user's alone (0400), as every
 * file of a start is private (t453); the job only reads it, the agent
 * replaces it (agent_advise). A step launch finds the start's. Advice is
 * no reason to refuse a launch: a file that cannot be written is logged
 * and left out. path "" when there is none. */
static void
agent_advice_file(const struct agent *a, const struct launch *l,
    const struct account *acct, char *path, size_t len)
{
	snprintf(path, len, "%s/jobs/%" PRIu64 ".%u/checkpoint-advice",
	    a->cfg->spool, l->job_id, l->restart);
	if (l->step != NULL) {
		if (access(path, F_OK) == -1)
			path[0] = '\0';
		return;
	}
	if (l->ckpt_advice_s == 0 || agent_advice_write(path, l->job_id,
	    acct->cred.uid, acct->cred.gid, l->ckpt_advice_s) == -1)
		path[0] = '\0';
}

/* Advice for a start whose launch is under way with no rank started
 * yet (its image being unpacked, say): the latest is kept, and written
 * as its first rank starts (agent_advise_apply). -1 with ENOENT when no
 * such launch is under way. */
static int
agent_advise_pending(struct agent *a, uint64_t job_id, uint32_t restart,
    uint32_t advice_s)
{
	struct apending *p = apending_find_step(a, job_id, restart, NULL);

	if (p == NULL || p->next > 0) {
		errno = ENOENT;
		return -1;
	}
	p->advice_s = advice_s;
	log_info("job %" PRIu64 ": checkpoint interval advised: %u s, kept "
	    "until its tasks start", job_id, advice_s);
	return 0;
}

/* The advice kept for p, written before its first rank starts, so that
 * the ranks find it (a launch that had none makes the file now). A file
 * that cannot be written is logged and left out, as at the launch. */
static void
agent_advise_apply(struct agent *a, struct apending *p)
{
	char path[PATH_MAX];

	if (p->advice_s == 0 || p->next > 0 || p->l.step != NULL)
		return;
	snprintf(path, sizeof(path), "%s/jobs/%" PRIu64 ".%u/"
	    "checkpoint-advice", a->cfg->spool, p->l.job_id, p->l.restart);
	if (agent_advice_write(path, p->l.job_id, p->acct.cred.uid,
	    p->acct.cred.gid, p->advice_s) == 0) {
		memcpy(p->advice, path, sizeof(p->advice));
		log_info("job %" PRIu64 ": checkpoint interval advised: %u s",
		    p->l.job_id, p->advice_s);
	}
	p->advice_s = 0;
}

int
agent_advise(struct agent *a, uint64_t job_id, uint32_t restart,
    uint32_t advice_s)
{
	char path[PATH_MAX];
	struct atask *at;
	struct stat st;

	if (advice_s == 0) {
		errno = EINVAL;
		return -1;
	}
	TAILQ_FOREACH(at, &a->tasks, entry)
		if (at->t.job_id == job_id && at->t.restart == restart &&
		    !at->ended)
			break;
	if (at == NULL)
		return agent_advise_pending(a, job_id, restart, advice_s);
	/* The file the launch wrote, and its owner: the job's user. A
	 * link or anything but a regular file there is not the agent's. */
	snprintf(path, sizeof(path), "%s/jobs/%" PRIu64 ".%u/"
	    "checkpoint-advice", a->cfg->spool, job_id, restart);
	if (lstat(path, &st) == -1)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	if (agent_advice_write(path, job_id, st.st_uid, st.st_gid,
	    advice_s) == -1)
		return -1;
	log_info("job %" PRIu64 ": checkpoint interval advised: %u s",
	    job_id, advice_s);
	return 0;
}

/* The start's directory of step files (COHORT_STEP_FILE is DIR/RANK):
 * the task's account owns it, so a rank can write its file and rename
 * it into place (spool/jobs/JOB.RESTART exists: agent_progress_file). */
static int
agent_step_dir(const struct agent *a, const struct launch *l,
    const struct account *acct, char *path, size_t len, struct cerr *err)
{
	snprintf(path, len, "%s/jobs/%" PRIu64 ".%u/steps", a->cfg->spool,
	    l->job_id, l->restart);
	if ((mkdir(path, 0700) == -1 && errno != EEXIST) ||
	    chmod(path, 0700) == -1) {
		cerr_set(err, ERR_INTERNAL, "%s: %s", path, strerror(errno));
		path[0] = '\0';
		return -1;
	}
	if (geteuid() == 0 &&
	    chown(path, acct->cred.uid, acct->cred.gid) == -1)
		log_warn("%s: chown", path);
	return 0;
}

/* Kill what a failed launch had started, and forget it. The supervisors
 * write their statuses right after the kill (tasks_result also reaps
 * them): all are killed first and waited for together, a bounded while
 * in all, not per task. */
static void
agent_undo_launch(struct agent *a, uint64_t job_id, uint32_t restart,
    const uint32_t *step)
{
	struct atask *at, *next;
	int64_t deadline = clock_now_ms() + 1000;
	int status;

	/* A failed step takes only its own tasks (and files) along. */
	TAILQ_FOREACH(at, &a->tasks, entry)
		if (at->t.job_id == job_id && at->t.restart == restart &&
		    (step == NULL || task_in_step(&at->t, step)))
			tasks_signal(&at->t, SIGKILL);
	for (at = TAILQ_FIRST(&a->tasks); at != NULL; at = next) {
		next = TAILQ_NEXT(at, entry);
		if (at->t.job_id != job_id || at->t.restart != restart ||
		    (step != NULL && !task_in_step(&at->t, step)))
			continue;
		while (tasks_result(&at->t, &status, NULL, 0, NULL) == -1 &&
		    errno == ENOENT && clock_now_ms() < deadline)
			usleep(10000);
		atask_free(at);
	}
	if (step != NULL) {
		agent_job_end(a, job_id, restart, false);
		ajob_gc(a, job_id, restart);
		tasks_spool_remove_step(a->cfg->spool, job_id, restart, step);
		return;
	}
	agent_job_end(a, job_id, restart, true);
	ajob_gc(a, job_id, restart);
	tasks_spool_remove(a->cfg->spool, job_id, restart);
}

int
agent_task_cpus_env(const cpu_set_t *cpus, char *line, size_t len)
{
	static const char var[] = "COHORT_TASK_CPUS=";

	if (len < sizeof(var)) {
		errno = ENOSPC;
		return -1;
	}
	memcpy(line, var, sizeof(var));
	if (cpubind_list_format(cpus, line + sizeof(var) - 1,
	    len - (sizeof(var) - 1)) == -1) {
		line[0] = '\0';
		errno = ENOSPC;
		return -1;
	}
	if (line[sizeof(var) - 1] == '\0') {
		line[0] = '\0';
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* The cores of a task of l (local_rank) for --cpus-per-task: on its
 * GPUs' NUMA nodes, not held by another task here. Says in the log what
 * it had to give up. */
static void
agent_choose_cpus_for(struct agent *a, uint64_t job_id, unsigned rank,
    const unsigned *gpus, size_t len, unsigned ncpus, cpu_set_t *out);

static void
agent_choose_cpus(struct agent *a, const struct launch *l,
    unsigned local_rank, unsigned rank, cpu_set_t *out)
{
	const struct job_spec *s = l->spec;
	size_t off, len;

	/* A batch script is the node's one task: near all of its GPUs. */
	if (s->batch) {
		off = 0;
		len = s->cpu_only ? 0 : l->ngpus;
	} else
		env_task_gpus(s->cpu_only ? 0 : l->ngpus, s->tasks_per_node,
		    local_rank, &off, &len);
	agent_choose_cpus_for(a, l->job_id, rank, len > 0 ? l->gpus + off :
	    NULL, len, s->cpus_per_task, out);
}

/* ncpus cores for a task whose GPUs are gpus[0..len). */
static void
agent_choose_cpus_for(struct agent *a, uint64_t job_id, unsigned rank,
    const unsigned *gpus, size_t len, unsigned ncpus, cpu_set_t *out)
{
	int numa[INV_MAX_GPUS] = { 0 };
	size_t i, nnuma = 0;
	struct atask *at;
	cpu_set_t used;
	unsigned flags;
	char list[AGENT_CPU_LIST_MAX], near[256] = "";

	CPU_ZERO(&used);
	TAILQ_FOREACH(at, &a->tasks, entry)
		if (!at->ended && at->t.bound)
			CPU_OR(&used, &used, &at->t.cpus);
	for (i = 0; i < len && a->inv != NULL; i++)
		if (gpus[i] < a->inv->ngpus && nnuma < INV_MAX_GPUS) {
			numa[nnuma] = a->inv->gpus[gpus[i]].numa_node;
			snprintf(near + strlen(near), sizeof(near) - strlen(near),
			    "%s%d", nnuma > 0 ? "," : "", numa[nnuma]);
			nnuma++;
		}
	cpubind_choose(&a->cpumap, numa, nnuma, ncpus, &used, out, &flags);
	cpubind_list_format(out, list, sizeof(list));
	if (flags == 0)
		log_info("job %" PRIu64 " rank %u: bound to CPUs %s (NUMA %s)",
		    job_id, rank, list, nnuma > 0 ? near : "any");
	else
		log_warnx("job %" PRIu64 " rank %u: bound to CPUs %s: %s%s%s "
		    "(its GPUs are on NUMA %s)", job_id, rank, list,
		    flags & CPUBIND_REMOTE ? "too few free cores on its GPUs' "
		    "NUMA nodes, some are on others; " : "",
		    flags & CPUBIND_SHARED ? "shared with other tasks, every "
		    "core being taken; " : "",
		    flags & CPUBIND_SHORT ? "the node has fewer cores than "
		    "--cpus-per-task" : "", nnuma > 0 ? near : "none");
}

/* What the tasks of p's start share in their environment (nics: room
 * for the GPUs' NIC names, filled from l's GPUs). */
static void
agent_task_env(struct agent *a, const struct apending *p,
    struct task_env *te, const char **nics)
{
	const struct launch *l = &p->l;
	const struct job_spec *s = l->spec;
	struct ajob *j;
	size_t i;

	memset(te, 0, sizeof(*te));
	te->job_id = l->job_id;
	te->job_name = s->name;
	te->restart_count = l->restart_count;
	te->nnodes = (unsigned)l->nnodes;
	te->node_rank = l->node_rank;
	te->nodelist = l->nodelist;
	te->master_addr = l->master_addr;
	te->master_port = l->master_port;
	te->tasks_per_node = s->tasks_per_node;
	te->gpus = l->gpus;
	te->ngpus = l->ngpus;
	if (a->inv != NULL && l->ngpus <= INV_MAX_GPUS) {
		for (i = 0; i < l->ngpus; i++)
			nics[i] = l->gpus[i] < a->inv->ngpus ?
			    a->inv->gpus[l->gpus[i]].nic_name : NULL;
		te->gpu_nics = nics;
	}
	te->checkpoint_dir = s->checkpoint_dir;
	te->resume_checkpoint = l->resume_checkpoint;
	te->progress_file = p->progress;
	te->advice_file = p->advice[0] != '\0' ? p->advice : NULL;
	te->user_env = (const char *const *)s->env;
	te->nuser_env = s->nenv;
	te->base_env = (const char *const *)p->base;
	te->nbase_env = p->nbase;
	te->array_id = l->array_id;
	te->array_task = l->array_task;
	te->array_spec = s->array;
	te->cpu_only = s->cpu_only;
	te->workdir = s->workdir;
	te->partition = s->queue;
	te->submit_host = s->submit_host;
	te->cpus_per_task = s->cpus_per_task;
	te->cluster_name = a->cfg->cluster_name;
	te->slurm_commands = a->cfg->slurm_commands;
	te->batch = s->batch;
	te->step_cred_file = p->credfile[0] != '\0' ? p->credfile : NULL;
	te->step_dir = l->step == NULL && p->stepdir[0] != '\0' ?
	    p->stepdir : NULL;
	/* The start's account (agent_launch_prepare made its ajob). */
	if ((j = ajob_find(a, l->job_id, l->restart)) != NULL) {
		te->has_uid = true;
		te->uid = (uint32_t)j->cred.uid;
	}
}

/* Bind the task to cpus (COHORT_TASK_CPUS in its environment). */
static int
agent_bind_env(const cpu_set_t *cpus, char ***envp, size_t *nenv,
    struct cerr *err)
{
	char line[sizeof("COHORT_TASK_CPUS=") + AGENT_CPU_LIST_MAX];

	if (agent_task_cpus_env(cpus, line, sizeof(line)) == -1)
		return cerr_set(err, ERR_INTERNAL, "cannot write "
		    "COHORT_TASK_CPUS: %s", strerror(errno));
	if (strv_append(envp, nenv, line) == -1)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	return 0;
}

/* Start tl (envp taken: freed here) and watch it. */
static int
agent_start_task(struct agent *a, const struct apending *p,
    struct task_launch *tl, char **envp, size_t nenv, struct cerr *err)
{
	struct task t;
	char st[32];
	int rc;

	tl->envp = envp;
	tl->user = p->account;
	tl->who = &p->who;
	rc = tasks_start(a->cfg->spool, tl, &t, err);
	strv_free(envp, nenv);
	if (rc == -1)
		return -1;
	if (agent_watch(a, &t) == NULL) {
		tasks_signal(&t, SIGKILL);
		if (t.pidfd >= 0)
			close(t.pidfd);
		if (t.stdin_fd >= 0)
			close(t.stdin_fd);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	log_info("job %" PRIu64 "%s rank %u: started (pgid %d) as %s",
	    tl->job_id, task_step_text(&t, st, sizeof(st)), tl->rank,
	    (int)t.pgid, p->account);
	return 0;
}

/* The container p's tasks run in: a step's own (srun --container-*),
 * else its job's; NULL: none. */
static const struct job_container *
agent_ctr_of(const struct apending *p)
{
	if (p->l.step != NULL && p->l.step->ctr.image != NULL)
		return &p->l.step->ctr;
	return p->l.spec->ctr.image != NULL ? &p->l.spec->ctr : NULL;
}

/* What a task of p in a container image needs (tasks.h's ctr); false
 * when p's job has no image. */
static bool
agent_ctr_launch(struct agent *a, const struct apending *p,
    const char *cgroup, const unsigned *gpus, size_t ngpus,
    struct ctr_launch *cl, char *startdir)
{
	const struct job_container *c = agent_ctr_of(p);

	if (c == NULL)
		return false;
	memset(cl, 0, sizeof(*cl));
	if (tasks_spool_start_dir(startdir, a->cfg->spool, p->l.job_id,
	    p->l.restart) == -1)
		startdir[0] = '\0';
	cl->image = c->image;
	cl->res = &p->ctr_res;
	cl->runtime = a->cfg->ctr_runtime;
	cl->spool = a->cfg->spool;
	cl->opts = c;
	cl->admin_mounts = a->cfg->ctr_mounts;
	cl->home = p->acct.home;
	cl->startdir = startdir;
	cl->cgroup = cgroup;
	cl->shm = a->cfg->ctr_shm;
	cl->gpus = gpus;
	cl->ngpus = ngpus;
	cl->enabled = a->cfg->ctr_enabled;
	cl->cdi = ctr_cache_cdi(a->ctrc);
	return true;
}

static int
agent_start_rank(struct agent *a, const struct apending *p,
    unsigned local_rank, struct cerr *err)
{
	struct ctr_launch cl;
	char startdir[PATH_MAX];
	const struct launch *l = &p->l;
	const struct job_spec *s = l->spec;
	char cgdir[PATH_MAX];
	const char *nics[INV_MAX_GPUS];
	struct task_env te;
	struct task_launch tl = { 0 };
	struct taskout out;
	cpu_set_t cpus;
	char **envp = NULL;
	size_t nenv = 0;

	agent_task_env(a, p, &te, nics);
	te.local_rank = local_rank;
	tl.rank = l->node_rank * s->tasks_per_node + local_rank;
	if (taskout_files(l, tl.rank, &out, err) == -1)
		return -1;
	if (env_build(&te, &envp, &nenv, err) == -1)
		return -1;
	if (s->cpus_per_task > 0) {
		agent_choose_cpus(a, l, local_rank, tl.rank, &cpus);
		tl.cpus = &cpus;
		if (agent_bind_env(&cpus, &envp, &nenv, err) == -1) {
			strv_free(envp, nenv);
			return -1;
		}
	}
	if (p->jobcg[0] != '\0') {
		if (cgroup_task_create(p->jobcg, tl.rank, cgdir, err) == -1) {
			strv_free(envp, nenv);
			return -1;
		}
		tl.cgroup = cgdir;
		tl.cgroup_join = !cgroup_clone_into_ok(a->cg, NULL);
	}
	tl.job_id = l->job_id;
	tl.restart = l->restart;
	tl.local_rank = local_rank;
	tl.out_file = out.out[0] != '\0' ? out.out : NULL;
	tl.err_file = out.err[0] != '\0' ? out.err : NULL;
	tl.out_trunc = out.out_trunc;
	tl.err_trunc = out.err_trunc;
	tl.has_umask = s->has_umask;
	tl.umask = (mode_t)(s->umask & JOB_UMASK_MAX);
	tl.argv = (const char *const *)s->argv;
	tl.argc = s->argc;
	tl.script = s->script;
	tl.script_len = s->script_len;
	tl.workdir = s->workdir;
	if (agent_ctr_launch(a, p, tl.cgroup, l->gpus, l->ngpus, &cl,
	    startdir))
		tl.ctr = &cl;
	return agent_start_task(a, p, &tl, envp, nenv, err);
}

/* Local task local_rank of p's job step: its output in the step's
 * spool files, never the job's -o/-e. */
static int
agent_start_step_rank(struct agent *a, const struct apending *p,
    unsigned local_rank, struct cerr *err)
{
	const struct launch *l = &p->l;
	const struct step_launch *sl = l->step;
	const struct job_spec *s = l->spec;
	const char *nics[INV_MAX_GPUS], *snics[INV_MAX_GPUS];
	struct ctr_launch cl;
	char startdir[PATH_MAX];
	struct task_launch tl = { 0 };
	struct step_env se = { 0 };
	struct task_env te;
	char cgdir[PATH_MAX];
	cpu_set_t cpus;
	char **envp = NULL;
	size_t nenv = 0, i, off, len;

	agent_task_env(a, p, &te, nics);
	se.step_id = sl->step_id;
	se.env = sl->env;
	se.nenv = sl->nenv;
	se.nodelist = sl->nodelist;
	se.nnodes = sl->nnodes;
	se.node_index = sl->node_index;
	se.tasks_per_node = sl->tasks_per_node;
	se.ntasks = sl->ntasks;
	se.first_rank = sl->first_rank;
	se.local_rank = local_rank;
	se.gpus = sl->gpus;
	se.ngpus = sl->ngpus;
	se.gpus_per_task = sl->gpus_per_task;
	se.cpus_per_task = sl->cpus_per_task;
	se.master_addr = sl->master_addr;
	se.master_port = sl->master_port;
	if (a->inv != NULL && sl->ngpus <= INV_MAX_GPUS) {
		for (i = 0; i < sl->ngpus; i++)
			snics[i] = sl->gpus[i] < a->inv->ngpus ?
			    a->inv->gpus[sl->gpus[i]].nic_name : NULL;
		se.gpu_nics = snics;
	}
	tl.rank = sl->first_rank + local_rank;
	if (env_build_step(&te, &se, &envp, &nenv, err) == -1)
		return -1;
	if (sl->cpus_per_task > 0) {
		off = sl->gpus_per_task > 0 ?
		    (size_t)local_rank * sl->gpus_per_task : 0;
		len = sl->gpus_per_task > 0 ? sl->gpus_per_task : sl->ngpus;
		if (off >= sl->ngpus)
			off = len = 0;
		else if (len > sl->ngpus - off)
			len = sl->ngpus - off;
		agent_choose_cpus_for(a, l->job_id, tl.rank, len > 0 ?
		    sl->gpus + off : NULL, len, sl->cpus_per_task, &cpus);
		tl.cpus = &cpus;
		if (agent_bind_env(&cpus, &envp, &nenv, err) == -1) {
			strv_free(envp, nenv);
			return -1;
		}
	}
	if (p->jobcg[0] != '\0') {
		if (cgroup_step_task_create(p->jobcg, &sl->step_id, tl.rank,
		    cgdir, err) == -1) {
			strv_free(envp, nenv);
			return -1;
		}
		tl.cgroup = cgdir;
		tl.cgroup_join = !cgroup_clone_into_ok(a->cg, NULL);
	}
	tl.job_id = l->job_id;
	tl.restart = l->restart;
	tl.has_step = true;
	tl.step_id = sl->step_id;
	tl.local_rank = local_rank;
	tl.has_umask = s->has_umask;
	tl.umask = (mode_t)(s->umask & JOB_UMASK_MAX);
	tl.argv = sl->argv;
	tl.argc = sl->argc;
	tl.workdir = sl->workdir != NULL ? sl->workdir : s->workdir;
	/* srun forwards its input to task 0 only (Slurm's default). */
	tl.stdin_pipe = sl->stdin_pipe && tl.rank == 0;
	tl.pty = tl.stdin_pipe && sl->pty;
	tl.rows = sl->rows <= UINT16_MAX ? (uint16_t)sl->rows : 0;
	tl.cols = sl->cols <= UINT16_MAX ? (uint16_t)sl->cols : 0;
	if (agent_ctr_launch(a, p, tl.cgroup, sl->gpus, sl->ngpus, &cl,
	    startdir))
		tl.ctr = &cl;
	return agent_start_task(a, p, &tl, envp, nenv, err);
}

static void
apending_free(struct agent *a, struct apending *p)
{
	if (p == NULL)
		return;
	apending_unqueue(a, p);
	ctr_req_cancel(a->ctrc, p->ctr_req);
	if (p->owned) {
		job_spec_clear(&p->spec);
		strv_free(p->nodelist, p->nnodes);
		free(p->user);
		free(p->master_addr);
		free(p->resume);
		free(p->gpus);
		strv_free(p->sargv, p->nsargv);
		strv_free(p->senv, p->nsenv);
		strv_free(p->snodes, p->nsnodes);
		free(p->stpn);
		free(p->sgpus);
		free(p->sworkdir);
		free(p->saddr);
		free(p->sname);
		ctr_clear(&p->sctr);
	}
	strv_free(p->base, p->nbase);
	account_clear(&p->acct);
	free(p);
}

/* Take p off the launches under way when it is there. A start may have
 * several (its own and its steps'): p itself is looked for, not the
 * first of its start, else a later one was freed while still queued. */
static void
apending_unqueue(struct agent *a, struct apending *p)
{
	struct apending *q;

	TAILQ_FOREACH(q, &a->pending, entry)
		if (q == p) {
			TAILQ_REMOVE(&a->pending, p, entry);
			return;
		}
}

static char *
dup_or_null(const char *s, bool *ok)
{
	char *c = NULL;

	if (s != NULL && (c = strdup(s)) == NULL)
		*ok = false;
	return c;
}

static unsigned *
uints_dup(const unsigned *v, size_t n)
{
	unsigned *c;

	if (n == 0)
		return NULL;
	if ((c = calloc(n, sizeof(*c))) != NULL)
		memcpy(c, v, n * sizeof(*c));
	return c;
}

/* The step of p's launch, as apending_own does the rest. */
static int
apending_own_step(struct apending *p)
{
	struct step_launch *sl = &p->step;
	bool ok = true;

	*sl = *p->l.step;
	p->l.step = sl;
	if (strv_copy(&p->sargv, &p->nsargv, (char *const *)sl->argv,
	    sl->argc) == -1 ||
	    strv_copy(&p->senv, &p->nsenv, (char *const *)sl->env,
	    sl->nenv) == -1 ||
	    strv_copy(&p->snodes, &p->nsnodes, (char *const *)sl->nodelist,
	    sl->nnodes) == -1 ||
	    (sl->ntpn > 0 && (p->stpn = uints_dup(sl->tasks_per_node,
	    sl->ntpn)) == NULL) ||
	    (sl->ngpus > 0 && (p->sgpus = uints_dup(sl->gpus,
	    sl->ngpus)) == NULL))
		return -1;
	sl->argv = (const char *const *)p->sargv;
	sl->env = (const char *const *)p->senv;
	sl->nodelist = (const char *const *)p->snodes;
	sl->tasks_per_node = p->stpn;
	sl->gpus = p->sgpus;
	sl->workdir = p->sworkdir = dup_or_null(sl->workdir, &ok);
	sl->master_addr = p->saddr = dup_or_null(sl->master_addr, &ok);
	sl->name = p->sname = dup_or_null(sl->name, &ok);
	if (ctr_copy(&p->sctr, &sl->ctr) == -1)
		return -1;
	sl->ctr = p->sctr;
	return ok ? 0 : -1;
}

/* Make p's launch its own, as the caller's is gone once agent_launch
 * returns: once per launch, linear in its size. */
static int
apending_own(struct agent *a, struct apending *p)
{
	struct launch *l = &p->l;
	bool ok = true;
	size_t i;

	p->owned = true;
	job_spec_init(&p->spec);
	if (job_spec_copy(&p->spec, l->spec) == -1)
		return -1;
	l->spec = &p->spec;
	for (i = 0; i < l->nnodes; i++)
		if (strv_append(&p->nodelist, &p->nnodes,
		    l->nodelist[i] != NULL ? l->nodelist[i] : "") == -1)
			return -1;
	l->nodelist = (const char *const *)p->nodelist;
	if (l->ngpus > 0) {
		if ((p->gpus = calloc(l->ngpus, sizeof(*p->gpus))) == NULL)
			return -1;
		memcpy(p->gpus, l->gpus, l->ngpus * sizeof(*p->gpus));
	}
	l->gpus = p->gpus;
	l->user = p->user = dup_or_null(l->user, &ok);
	l->master_addr = p->master_addr = dup_or_null(l->master_addr, &ok);
	l->resume_checkpoint = p->resume = dup_or_null(l->resume_checkpoint,
	    &ok);
	/* Read only by agent_launch_prepare, which has run. */
	l->step_cred = NULL;
	l->step_cred_len = 0;
	if (!ok || (l->step != NULL && apending_own_step(p) == -1))
		return -1;
	p->account = agent_config_map_user(a->cfg, l->user);
	return 0;
}

/* The job's step credential, as lowercase hex and a newline, in the
 * start's spool directory (0711: the user opens it by its path), the
 * user's alone and read-only: written under another name and renamed,
 * so that it is whole or absent. */
static int
agent_write_cred(const struct agent *a, const struct apending *p,
    char *path, struct cerr *err)
{
	const struct launch *l = &p->l;
	char tmp[PATH_MAX + 8], hex[2 * AGENT_STEP_CRED_MAX + 2];
	size_t i, len = 0;
	ssize_t w;
	int fd;

	for (i = 0; i < l->step_cred_len; i++)
		len += (size_t)snprintf(hex + len, sizeof(hex) - len, "%02x",
		    l->step_cred[i]);
	hex[len++] = '\n';
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0400)) == -1)
		return cerr_set(err, ERR_INTERNAL, "%s: %s", tmp,
		    strerror(errno));
	if ((w = write(fd, hex, len)) != (ssize_t)len ||
	    fchmod(fd, 0400) == -1 ||
	    (geteuid() == 0 && fchown(fd, p->acct.cred.uid,
	    p->acct.cred.gid) == -1) ||
	    close(fd) == -1 || rename(tmp, path) == -1) {
		int e = w >= 0 && w != (ssize_t)len ? EIO : errno;

		close(fd);	/* a second close of a closed fd: EBADF */
		unlink(tmp);
		return cerr_set(err, ERR_INTERNAL, "%s: %s", path,
		    strerror(e));
	}
	return 0;
}

/* The step credential of p's start: written by a launch of the job's
 * own tasks that brings one, and named in every task's environment
 * (COHORT_STEP_CRED) where the start has one. */
static int
agent_launch_cred(const struct agent *a, struct apending *p,
    struct cerr *err)
{
	const struct launch *l = &p->l;
	char path[PATH_MAX];
	struct stat st;

	if (tasks_spool_start_dir(path, a->cfg->spool, l->job_id,
	    l->restart) == -1 || strlen(path) + sizeof("/step-cred") >
	    sizeof(path))
		return cerr_set(err, ERR_INVALID, "spool path too long");
	strcat(path, "/step-cred");
	if (l->step == NULL && l->step_cred_len > 0 &&
	    agent_write_cred(a, p, path, err) == -1)
		return -1;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
		snprintf(p->credfile, sizeof(p->credfile), "%s", path);
	return 0;
}

/* The start's entry for a step launch, when it has none any more (the
 * job's own tasks here ended and were forgotten, or there are none, or
 * the agent restarted): as adoption makes it, from the spool. */
static struct ajob *
agent_step_ajob(struct agent *a, const struct launch *l,
    const struct watch_cred *cred)
{
	struct watch_cred saved;
	struct ajob *j;
	bool has_cred;
	char *dir;

	if ((j = ajob_find(a, l->job_id, l->restart)) != NULL)
		return j;
	dir = ajob_load_watch(a, l->job_id, l->restart, &saved, &has_cred);
	j = ajob_get(a, l->job_id, l->restart, has_cred ? dir : NULL, cred);
	free(dir);
	if (has_cred)
		free(saved.groups);
	return j;
}

/* What every task of the start shares: the account, its environment,
 * the progress file, the watch, the step credential and the job's
 * cgroup. A step launch leaves the start's watch as its launch made
 * it. */
static int
agent_launch_prepare(struct agent *a, struct apending *p, struct cerr *err)
{
	const struct launch *l = &p->l;
	const char *watch = l->watch_checkpoints ? l->spec->checkpoint_dir :
	    NULL;
	const struct watch_cred *cred = &p->acct.cred;
	struct ajob *j;
	char dir[PATH_MAX];

	p->account = agent_config_map_user(a->cfg, l->user);
	if (account_resolve(a->cfg, p->account, &p->acct, err) == -1) {
		log_warnx("job %" PRIu64 ": start refused: %s", l->job_id,
		    err->text);
		return -1;
	}
	/* Every rank's tasks_start takes it from here: no lookup each. */
	p->who.name = p->acct.name != NULL ? p->acct.name : "?";
	p->who.uid = cred->uid;
	p->who.gid = cred->gid;
	p->who.groups = cred->groups;
	p->who.ngroups = cred->ngroups;
	p->who.home = p->acct.home;
	if (l->step != NULL)
		watch = NULL;
	if (agent_base_env(&p->acct, &p->base, &p->nbase, err) == -1 ||
	    agent_progress_file(a, l, &p->acct, p->progress,
	    sizeof(p->progress), err) == -1 ||
	    (l->step == NULL && agent_step_dir(a, l, &p->acct, p->stepdir,
	    sizeof(p->stepdir), err) == -1) ||
	    (l->step == NULL && ajob_save_watch(a, l->job_id, l->restart,
	    watch, cred, err) == -1) ||
	    agent_launch_cred(a, p, err) == -1)
		return -1;
	/* The start's spool directory exists now (agent_progress_file). */
	agent_advice_file(a, l, &p->acct, p->advice, sizeof(p->advice));
	if ((j = l->step != NULL ? agent_step_ajob(a, l, cred) :
	    ajob_get(a, l->job_id, l->restart, watch, cred)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	/* The job's cgroup, with its memory limit; the spool directory
	 * exists now (agent_progress_file). */
	snprintf(dir, sizeof(dir), "%s/jobs/%" PRIu64 ".%u", a->cfg->spool,
	    l->job_id, l->restart);
	if (cgroup_job_create(a->cg, dir, l->job_id, l->restart,
	    l->spec->mem_per_node_mb, p->jobcg, err) == -1) {
		log_warnx("job %" PRIu64 ": start failed: %s", l->job_id,
		    err->text);
		return -1;
	}
	if (a->cg == NULL && l->spec->mem_per_node_mb > 0 &&
	    !a->warned_mem) {
		a->warned_mem = true;
		log_warnx("--mem-per-node is not enforced on this node: no "
		    "cgroup v2");
	}
	/* An earlier run's LATEST is not this start's checkpoint. */
	if (watch != NULL && watch_read_latest(watch, &j->cred,
	    &j->base_step, j->base_path, sizeof(j->base_path), NULL) == 0)
		j->has_base = true;
	return 0;
}

/* Start the next AGENT_STARTS_PER_ROUND ranks of p. -1 with err when
 * one fails: then none of the start is left running. */
static int
agent_launch_some(struct agent *a, struct apending *p, struct cerr *err)
{
	const struct launch *l = &p->l;
	unsigned n;

	agent_advise_apply(a, p);
	for (n = 0; n < AGENT_STARTS_PER_ROUND && p->next < p->ntasks;
	    n++, p->next++) {
		if ((l->step != NULL ? agent_start_step_rank(a, p, p->next,
		    err) : agent_start_rank(a, p, p->next, err)) == -1) {
			log_warnx("job %" PRIu64 "%s: start failed: %s",
			    l->job_id, l->step != NULL ? " step" : "",
			    err->text);
			agent_undo_launch(a, l->job_id, l->restart,
			    l->step != NULL ? &l->step->step_id : NULL);
			return -1;
		}
	}
	return 0;
}

/* A launch (answered at its first round) failed in a later one, its
 * started tasks killed: the rank that could not start says why, as
 * a task's end, so that the controller ends the attempt as for any task
 * that failed rather than wait for tasks that never come. */
static void
agent_report_unstarted(struct agent *a, const struct apending *p,
    const struct cerr *err)
{
	const struct launch *l = &p->l;
	struct task_report r;

	memset(&r, 0, sizeof(r));
	r.job_id = l->job_id;
	r.restart = l->restart;
	if (l->step != NULL) {
		r.has_step = true;
		r.step = l->step->step_id;
		r.rank = l->step->first_rank + p->next;
	} else
		r.rank = l->node_rank * l->spec->tasks_per_node + p->next;
	r.wait_status = 127 << 8;
	snprintf(r.why, sizeof(r.why), "could not start on this node: %.200s",
	    err->text);
	a->cb(&r, a->arg);
}

/* Forget a launch under way; a start whose started tasks all ended
 * meanwhile ends here (agent_job_end waited for this). err: why a later
 * round failed, reported as the unstarted rank's end; NULL when it
 * ended well or was stopped (the controller asked: nothing to report). */
static void
apending_done(struct agent *a, struct apending *p, const struct cerr *err)
{
	uint64_t job_id = p->l.job_id;
	uint32_t restart = p->l.restart;

	if (err != NULL)
		agent_report_unstarted(a, p, err);
	apending_free(a, p);
	agent_job_end(a, job_id, restart, false);
	ajob_gc(a, job_id, restart);
}

static void
agent_launch_arm(struct agent *a)
{
	struct timeval now = { 0, 0 };

	/* A timer, not event_active: a timer due now runs in the loop's
	 * next round, after the sockets and timers (heartbeats) that are
	 * ready, where an active event would run again in this one. */
	evtimer_add(a->launch_ev, &now);
}

/* One round: the first launch under way starts its next few ranks and
 * goes to the back, so that launches share the rounds. */
static void
agent_launch_round_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	struct apending *p;
	struct cerr err;

	/* Launches waiting for their image sit out the rounds. */
	TAILQ_FOREACH(p, &a->pending, entry)
		if (p->ctr_req == NULL)
			break;
	if (p == NULL)
		return;
	TAILQ_REMOVE(&a->pending, p, entry);
	cerr_clear(&err);
	if (agent_launch_some(a, p, &err) == -1)
		apending_done(a, p, &err);
	else if (p->next >= p->ntasks) {
		log_info("job %" PRIu64 ": all %u tasks started", p->l.job_id,
		    p->next);
		apending_done(a, p, NULL);
	} else
		TAILQ_INSERT_TAIL(&a->pending, p, entry);
	TAILQ_FOREACH(p, &a->pending, entry)
		if (p->ctr_req == NULL) {
			agent_launch_arm(a);
			break;
		}
}

/* A launch's image is ready on this node, or cannot be: its ranks start
 * in the next rounds (failing at once, with the reason, if it cannot). */
static void
agent_ctr_ready(void *arg, const struct ctr_result *r)
{
	struct apending *p = arg;

	p->ctr_req = NULL;
	p->ctr_res = *r;
	if (r->err == 0)
		log_info("job %" PRIu64 ": image %s ready (%s) in %" PRId64
		    " ms", p->l.job_id, agent_ctr_of(p)->image, r->cached ?
		    "cached" : "unpacked", r->ms);
	else
		log_warnx("job %" PRIu64 ": %s", p->l.job_id, r->why);
	agent_launch_arm(p->agent);
}

/* ---- Images prepared ahead of a launch --------------------------------- */

void
agent_set_prepared_cb(struct agent *a, agent_prepared_cb cb, void *arg)
{
	a->prep_cb = cb;
	a->prep_arg = arg;
}

static void
agent_prep_answer(struct aprep *ap, const struct agent_prepared *r)
{
	struct agent *a = ap->agent;

	TAILQ_REMOVE(&a->preps, ap, entry);
	if (a->prep_cb != NULL)
		a->prep_cb(a->prep_arg, ap->token, r);
	free(ap);
}

static void
agent_image_prepared(void *arg, const struct ctr_result *res)
{
	struct aprep *ap = arg;
	struct agent_prepared r;

	ap->req = NULL;
	memset(&r, 0, sizeof(r));
	r.job_id = ap->job_id;
	r.restart = ap->restart;
	r.err = res->err;
	r.permanent = res->permanent;
	r.why = res->why;
	r.cached = res->cached;
	r.ms = res->ms;
	r.digest = res->digest;
	if (res->err == 0)
		log_info("job %" PRIu64 ": image ready (%s) in %" PRId64
		    " ms, ahead of the launch", ap->job_id, res->cached ?
		    "cached" : "unpacked", res->ms);
	else
		log_warnx("job %" PRIu64 ": %s", ap->job_id, res->why);
	agent_prep_answer(ap, &r);
}

/* Forget the preparations of (job_id, restart), or every one (job_id
 * 0); with answer, each is answered as stopped. */
static void
agent_preps_cancel(struct agent *a, uint64_t job_id, uint32_t restart,
    bool answer)
{
	struct agent_prepared r;
	struct aprep *ap, *next;

	for (ap = TAILQ_FIRST(&a->preps); ap != NULL; ap = next) {
		next = TAILQ_NEXT(ap, entry);
		if (job_id != 0 && (ap->job_id != job_id ||
		    ap->restart != restart))
			continue;
		ctr_req_cancel(a->ctrc, ap->req);
		if (!answer) {
			TAILQ_REMOVE(&a->preps, ap, entry);
			free(ap);
			continue;
		}
		memset(&r, 0, sizeof(r));
		r.job_id = ap->job_id;
		r.restart = ap->restart;
		r.err = ECANCELED;
		r.why = "stopped while its image was prepared";
		r.digest = "";
		agent_prep_answer(ap, &r);
	}
}

int
agent_prepare_image(struct agent *a, const struct launch *l, uint64_t token,
    struct cerr *err)
{
	struct account acct;
	struct aprep *ap;

	if (l->step != NULL || l->spec == NULL || l->spec->ctr.image == NULL)
		return cerr_set(err, ERR_INVALID, "job %" PRIu64 ": an image "
		    "to prepare is a job's own", l->job_id);
	if (ctr_validate(&l->spec->ctr, err) == -1)
		return -1;
	memset(&acct, 0, sizeof(acct));
	if (account_resolve(a->cfg, agent_config_map_user(a->cfg, l->user),
	    &acct, err) == -1) {
		account_clear(&acct);
		log_warnx("job %" PRIu64 ": image preparation refused: %s",
		    l->job_id, err->text);
		return -1;
	}
	if ((ap = calloc(1, sizeof(*ap))) == NULL) {
		account_clear(&acct);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	ap->agent = a;
	ap->job_id = l->job_id;
	ap->restart = l->restart;
	ap->token = token;
	ap->req = ctr_prepare(a->ctrc, l->spec->ctr.image, acct.cred.uid,
	    acct.cred.gid, acct.cred.groups, acct.cred.ngroups,
	    agent_image_prepared, ap);
	account_clear(&acct);
	if (ap->req == NULL) {
		free(ap);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	TAILQ_INSERT_TAIL(&a->preps, ap, entry);
	log_info("job %" PRIu64 ": preparing image %s ahead of the launch",
	    l->job_id, l->spec->ctr.image);
	return 0;
}

/* Strings from the network: each present, none too long, all of them
 * together at most max bytes. */
static int
agent_strv_check(const char *const *v, size_t n, size_t limit, size_t max,
    const char *what, uint32_t step, bool kv, struct cerr *err)
{
	size_t i, bytes = 0, len;

	if (n > limit)
		return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": %zu %s, "
		    "more than %zu", step, n, what, limit);
	for (i = 0; i < n; i++) {
		if (v == NULL || v[i] == NULL)
			return cerr_set(err, ERR_INVALID, "step %" PRIu32
			    ": %s %zu missing", step, what, i);
		len = strlen(v[i]);
		if ((bytes += len + 1) > max)
			return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": "
			    "%s larger than %zu bytes", step, what, max);
		if (kv && (v[i][0] == '=' || strchr(v[i], '=') == NULL))
			return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": "
			    "environment entry %zu is not NAME=VALUE", step,
			    i);
	}
	return 0;
}

/* Everything a step launch says, checked against itself and against
 * the job's launch here (its GPUs, this node's name): a launch that
 * fails starts nothing. */
static int
agent_step_check(const struct agent *a, const struct launch *l,
    struct cerr *err)
{
	const struct step_launch *sl = l->step;
	uint64_t sum = 0, before = 0;
	size_t i, k, n;

	if (sl->argc == 0)
		return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": no "
		    "command", sl->step_id);
	if (ctr_validate(&sl->ctr, err) == -1)
		return -1;
	if (agent_strv_check(sl->argv, sl->argc, JOB_ARGC_LIMIT,
	    JOB_ARGV_BYTES_LIMIT, "arguments", sl->step_id, false,
	    err) == -1 ||
	    agent_strv_check(sl->env, sl->nenv, JOB_ENV_LIMIT,
	    JOB_ENV_BYTES_LIMIT, "environment entries", sl->step_id, true,
	    err) == -1 ||
	    agent_strv_check(sl->nodelist, sl->nnodes, JOB_NODES_LIMIT,
	    (size_t)JOB_NODES_LIMIT * (PEER_NAME_MAX + 1), "nodes",
	    sl->step_id, false, err) == -1)
		return -1;
	if (sl->nnodes == 0 || sl->ntpn != sl->nnodes ||
	    sl->node_index >= sl->nnodes)
		return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": node "
		    "index %u, %zu nodes and %zu task counts do not agree",
		    sl->step_id, sl->node_index, sl->nnodes, sl->ntpn);
	for (i = 0; i < sl->nnodes; i++) {
		if (sl->nodelist[i][0] == '\0' ||
		    strlen(sl->nodelist[i]) > PEER_NAME_MAX)
			return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": "
			    "node %zu has no valid name", sl->step_id, i);
		if (sl->tasks_per_node[i] == 0 ||
		    sl->tasks_per_node[i] > JOB_TASKS_PER_NODE_LIMIT)
			return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": "
			    "%u tasks on node %zu (1 to %u)", sl->step_id,
			    sl->tasks_per_node[i], i,
			    JOB_TASKS_PER_NODE_LIMIT);
		if (i < sl->node_index)
			before += sl->tasks_per_node[i];
		sum += sl->tasks_per_node[i];
	}
	if (sum != sl->ntasks || before != sl->first_rank)
		return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": %u tasks "
		    "from rank %u, but the nodes' counts make %" PRIu64
		    " from rank %" PRIu64, sl->step_id, sl->ntasks,
		    sl->first_rank, sum, before);
	if (a->cfg->name != NULL &&
	    strcmp(sl->nodelist[sl->node_index], a->cfg->name) != 0)
		return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": node "
		    "index %u is %s, not this node (%s)", sl->step_id,
		    sl->node_index, sl->nodelist[sl->node_index],
		    a->cfg->name);
	n = sl->tasks_per_node[sl->node_index];
	if (sl->ngpus > PLACE_MAX_GPUS || (sl->ngpus > 0 && sl->gpus == NULL))
		return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": too many "
		    "GPUs", sl->step_id);
	for (i = 0; i < sl->ngpus; i++) {
		for (k = 0; k < l->ngpus; k++)
			if (l->gpus[k] == sl->gpus[i])
				break;
		if (k == l->ngpus || l->spec->cpu_only)
			return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": "
			    "GPU %u is not the job's on this node",
			    sl->step_id, sl->gpus[i]);
		for (k = 0; k < i; k++)
			if (sl->gpus[k] == sl->gpus[i])
				return cerr_set(err, ERR_INVALID, "step %"
				    PRIu32 ": GPU %u given twice",
				    sl->step_id, sl->gpus[i]);
	}
	if ((uint64_t)sl->gpus_per_task * n > sl->ngpus)
		return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": %zu tasks "
		    "of %u GPUs each, but %zu GPUs", sl->step_id, n,
		    sl->gpus_per_task, sl->ngpus);
	if (sl->cpus_per_task > JOB_CPUS_PER_NODE_MAX)
		return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": %u CPUs "
		    "per task, more than %u", sl->step_id, sl->cpus_per_task,
		    JOB_CPUS_PER_NODE_MAX);
	if (sl->workdir != NULL && (sl->workdir[0] != '/' ||
	    strlen(sl->workdir) >= JOB_PATH_MAX))
		return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": the "
		    "working directory must be an absolute path shorter than "
		    "%d bytes", sl->step_id, JOB_PATH_MAX);
	if (sl->master_addr == NULL || sl->master_addr[0] == '\0' ||
	    strlen(sl->master_addr) > 255 || sl->master_port > 65535)
		return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": no valid "
		    "rendezvous address", sl->step_id);
	if (sl->name != NULL && strlen(sl->name) > JOB_NAME_MAX)
		return cerr_set(err, ERR_INVALID, "step %" PRIu32 ": name "
		    "longer than %d bytes", sl->step_id, JOB_NAME_MAX);
	return 0;
}

/* How many steps of the start have tasks running or starting here,
 * counting at most AGENT_STEPS_MAX of them. */
static size_t
agent_steps_running(struct agent *a, uint64_t job_id, uint32_t restart)
{
	uint32_t seen[AGENT_STEPS_MAX];
	struct apending *p;
	struct atask *at;
	size_t n = 0, i;
	uint32_t id;

	TAILQ_FOREACH(p, &a->pending, entry)
		if (p->l.job_id == job_id && p->l.restart == restart &&
		    p->l.step != NULL && n < AGENT_STEPS_MAX)
			seen[n++] = p->l.step->step_id;
	TAILQ_FOREACH(at, &a->tasks, entry) {
		if (n >= AGENT_STEPS_MAX)
			break;
		if (at->t.job_id != job_id || at->t.restart != restart ||
		    !at->t.has_step || at->ended)
			continue;
		id = at->t.step_id;
		for (i = 0; i < n && seen[i] != id; i++)
			;
		if (i == n)
			seen[n++] = id;
	}
	return n;
}

/* Whether the step is known here already (idempotence): starting, or
 * its spool directory made by an earlier launch (also of an agent
 * before a restart, or one whose tasks were all forgotten). */
static bool
agent_has_step(struct agent *a, const struct launch *l)
{
	char dir[PATH_MAX];
	struct stat st;

	if (apending_find_step(a, l->job_id, l->restart,
	    &l->step->step_id) != NULL)
		return true;
	return tasks_spool_step_dir(dir, a->cfg->spool, l->job_id, l->restart,
	    l->step->step_id) == 0 && lstat(dir, &st) == 0;
}

/* May l start here (beyond what agent_launch_prepare finds)? 1: it
 * is known already (nothing to do); 0: yes; -1 with err. */
static int
agent_launch_admit(struct agent *a, const struct launch *l,
    struct cerr *err)
{
	char dir[PATH_MAX];
	struct stat st;

	if (l->step_cred != NULL && (l->step_cred_len == 0 ||
	    l->step_cred_len > AGENT_STEP_CRED_MAX))
		return cerr_set(err, ERR_INVALID, "job %" PRIu64 ": a step "
		    "credential of %zu bytes (1 to %d)", l->job_id,
		    l->step_cred_len, AGENT_STEP_CRED_MAX);
	if (l->step == NULL)
		return agent_has_start(a, l->job_id, l->restart) ? 1 : 0;
	if (agent_step_check(a, l, err) == -1)
		return -1;
	if (agent_has_step(a, l))
		return 1;
	/* The job's launch made the start's directory on every node. */
	if (tasks_spool_start_dir(dir, a->cfg->spool, l->job_id,
	    l->restart) == -1 || lstat(dir, &st) == -1 || !S_ISDIR(st.st_mode))
		return cerr_set(err, ERR_NOT_FOUND, "job %" PRIu64 " step %"
		    PRIu32 ": start %" PRIu32 " of the job was not launched "
		    "on this node", l->job_id, l->step->step_id, l->restart);
	if (agent_steps_running(a, l->job_id, l->restart) >= AGENT_STEPS_MAX)
		return cerr_set(err, ERR_LIMIT, "job %" PRIu64 " step %"
		    PRIu32 ": %d steps of the job run on this node already",
		    l->job_id, l->step->step_id, AGENT_STEPS_MAX);
	return 0;
}

/* The tasks l starts here: a step's count for this node; one, the
 * script, on a batch job's first node and none on its others; else the
 * job's tasks per node. */
static unsigned
agent_launch_ntasks(const struct launch *l)
{
	if (l->step != NULL)
		return l->step->tasks_per_node[l->step->node_index];
	if (l->spec->batch)
		return l->node_rank == 0 ? 1 : 0;
	return l->spec->tasks_per_node;
}

/* The tasks of a launch are started a few per loop round rather than all
 * at once: each start forks and writes files, and their number is the
 * job's (up to JOB_TASKS_PER_NODE_LIMIT), so starting them in one
 * callback held the loop, and with it the heartbeats and every other
 * job's reports, for as long as the user chose. Rounds keep one event
 * loop and no threads. The launch is answered at its first round: an
 * answer that waited for the last one took longer than the controller
 * waits on a slow node, and the start was failed and launched again,
 * over and over. A step's tasks take the same path. */
int
agent_launch(struct agent *a, const struct launch *l, struct cerr *err)
{
	const uint32_t *step = l->step != NULL ? &l->step->step_id : NULL;
	struct apending *p;
	int rc;

	if ((rc = agent_launch_admit(a, l, err)) != 0) {
		if (rc == -1)
			log_warnx("job %" PRIu64 ": launch refused: %s",
			    l->job_id, err->text);
		return rc == 1 ? 0 : -1;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	p->l = *l;
	p->agent = a;
	p->ntasks = agent_launch_ntasks(l);
	if (agent_launch_prepare(a, p, err) == -1) {
		apending_free(a, p);
		return -1;
	}
	/* The account, spool and cgroup are ready: a stage of a launch
	 * path's timeline (tests/bench/timeline.sh). */
	log_debug("job %" PRIu64 "%s: prepared %u task(s) on node rank %u",
	    l->job_id, step != NULL ? " step" : "", p->ntasks, l->node_rank);
	/* A job in an image starts no rank before the image is ready. */
	if (agent_ctr_of(p) == NULL && agent_launch_some(a, p, err) == -1) {
		apending_free(a, p);
		return -1;
	}
	if (p->next >= p->ntasks) {
		bool none = p->ntasks == 0;

		apending_free(a, p);
		/* A batch job's other node: nothing to keep (its steps
		 * make the start's entry and cgroup again) but the spool. */
		if (none) {
			log_info("job %" PRIu64 ": batch job, no task of its "
			    "own on node rank %u", l->job_id, l->node_rank);
			agent_job_end(a, l->job_id, l->restart, false);
			ajob_gc(a, l->job_id, l->restart);
		}
		return 0;
	}
	if (apending_own(a, p) == -1) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		log_warnx("job %" PRIu64 ": start failed: %s", l->job_id,
		    err->text);
		agent_undo_launch(a, l->job_id, l->restart, step);
		apending_free(a, p);
		return -1;
	}
	if (agent_ctr_of(p) != NULL && (p->ctr_req = ctr_prepare(a->ctrc,
	    agent_ctr_of(p)->image, p->who.uid, p->who.gid, p->who.groups,
	    p->who.ngroups, agent_ctr_ready, p)) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		agent_undo_launch(a, l->job_id, l->restart, step);
		apending_free(a, p);
		return -1;
	}
	log_info("job %" PRIu64 ": starting %u tasks, %d per loop round%s",
	    l->job_id, p->ntasks, AGENT_STARTS_PER_ROUND, p->ctr_req != NULL ?
	    ", once its image is ready" : "");
	TAILQ_INSERT_TAIL(&a->pending, p, entry);
	if (p->ctr_req == NULL)
		agent_launch_arm(a);
	/* Accepted now, its first round started: the rest of a large
	 * launch (or unpacking a large image) may take longer than the
	 * controller waits for an answer on a slow or loaded node, and
	 * what comes of it reaches the controller as the tasks' start, or
	 * as a rank's end with the reason it could not start. */
	return 0;
}

void
agent_stop(struct agent *a, uint64_t job_id, uint32_t restart,
    const uint32_t *step)
{
	struct apending *p;
	struct atask *at;
	struct timeval tv;
	char st[32];

	tv.tv_sec = a->cfg->kill_wait_ms / 1000;
	tv.tv_usec = (a->cfg->kill_wait_ms % 1000) * 1000;
	if (step == NULL)
		agent_preps_cancel(a, job_id, restart, true);
	/* The ranks not started yet never will be: the step's, or every
	 * launch of the start (at most one each, so as many rounds as the
	 * start has steps starting). */
	while ((p = step != NULL ? apending_find_step(a, job_id, restart,
	    step) : apending_find(a, job_id, restart)) != NULL) {
		log_info("job %" PRIu64 "%s: stopped before all of its %u "
		    "tasks here started", job_id, p->l.step != NULL ?
		    " step" : "", p->ntasks);
		apending_done(a, p, NULL);
	}
	TAILQ_FOREACH(at, &a->tasks, entry) {
		if (at->t.job_id != job_id || at->t.restart != restart ||
		    at->ended || (step != NULL && !task_in_step(&at->t, step)))
			continue;
		/* Told already: the controller repeats a stop with every
		 * heartbeat that still lists the task, also after its
		 * SIGKILL until it is reaped. Signalling again would
		 * interrupt its checkpoint on SIGTERM, and re-arming the
		 * timer would put its SIGKILL off for ever. */
		if (at->stopped)
			continue;
		if (tasks_signal(&at->t, SIGTERM) == 0) {
			log_info("job %" PRIu64 "%s rank %u: SIGTERM",
			    job_id, task_step_text(&at->t, st, sizeof(st)),
			    at->t.rank);
			at->stopped = true;
			evtimer_add(at->kill_ev, &tv);
		}
	}
}

void
agent_exit_acked(struct agent *a, uint64_t job_id, uint32_t restart,
    const uint32_t *step, unsigned rank)
{
	struct atask *at;

	TAILQ_FOREACH(at, &a->tasks, entry) {
		if (at->t.job_id == job_id && at->t.restart == restart &&
		    at->t.rank == rank && task_in_step(&at->t, step) &&
		    at->ended) {
			/* Logs stay in the spool for `cohort logs`. */
			if (tasks_spool_forget(&at->t) == -1)
				log_warn("job %" PRIu64 " rank %u: cannot "
				    "forget it in the spool", job_id, rank);
			atask_free(at);
			ajob_gc(a, job_id, restart);
			return;
		}
	}
}

struct task_report *
agent_tasks(struct agent *a, size_t *n)
{
	struct task_report *r;
	struct atask *at;
	size_t i = 0;

	*n = 0;
	TAILQ_FOREACH(at, &a->tasks, entry)
		i++;
	if (i == 0 || (r = calloc(i, sizeof(*r))) == NULL)
		return NULL;
	TAILQ_FOREACH(at, &a->tasks, entry) {
		r[*n].job_id = at->t.job_id;
		r[*n].restart = at->t.restart;
		r[*n].rank = at->t.rank;
		r[*n].running = !at->ended;
		r[*n].wait_status = at->status;
		memcpy(r[*n].why, at->why, sizeof(r[*n].why));
		r[*n].permanent = at->permanent;
		r[*n].has_step = at->t.has_step;
		r[*n].step = at->t.step_id;
		(*n)++;
	}
	return r;
}

static bool
ajob_running(struct agent *a, const struct ajob *j)
{
	struct atask *at;

	TAILQ_FOREACH(at, &a->tasks, entry)
		if (at->t.job_id == j->job_id &&
		    at->t.restart == j->restart && !at->ended)
			return true;
	return false;
}

/* A read of one of the job's files was refused (e = 0: it worked):
 * say so, once per reason and then at most once a minute. A file that
 * does not exist yet, or LATEST caught half written, is no refusal. */
static void
ajob_refused(const struct ajob *j, struct refusal *r, const char *file,
    int e)
{
	int64_t now;

	if (e == 0 || e == ENOENT || e == EBADMSG) {
		r->err = 0;
		return;
	}
	now = clock_now_ms();
	if (r->err == e && now - r->logged_ms < AGENT_REFUSAL_LOG_MS)
		return;
	r->err = e;
	r->logged_ms = now;
	log_warnx("job %" PRIu64 ": refusing to read %s: %s (as uid %u)",
	    j->job_id, file, watch_strerror(e), (unsigned)j->cred.uid);
}

/* LATEST names path, which the job's user cannot reach (e): say so
 * like ajob_refused, for a missing one too. */
static void
ajob_path_refused(struct ajob *j, uint64_t step, const char *path, int e)
{
	int64_t now = clock_now_ms();

	if (j->path_refused.err == e &&
	    now - j->path_refused.logged_ms < AGENT_REFUSAL_LOG_MS)
		return;
	j->path_refused.err = e;
	j->path_refused.logged_ms = now;
	log_warnx("job %" PRIu64 ": LATEST names step %" PRIu64 " at %s, "
	    "which %s (as uid %u): not taken as a checkpoint", j->job_id,
	    step, path, e == ENOENT ? "does not exist" : watch_strerror(e),
	    (unsigned)j->cred.uid);
}

/* The cost the job reports for its checkpoint at step: CKPT_MS beside
 * LATEST, one line "STEP MS" as a step file has (written, and renamed
 * into place, before LATEST). Read as LATEST is, as the job's user and
 * bounded; a file of another step, or none, reports nothing (0). */
static uint32_t
ajob_read_cost(struct ajob *j, uint64_t step)
{
	char buf[WATCH_STEP_MAX], file[PATH_MAX];
	uint64_t s;
	uint32_t ms;
	size_t len;
	int e = 0;

	if (watch_read_file(j->ckpt_dir, "CKPT_MS", &j->cred, buf,
	    sizeof(buf), &len, NULL) == -1)
		e = errno;
	else if (watch_parse_step(buf, len, &s, &ms) == -1)
		e = EBADMSG;
	snprintf(file, sizeof(file), "%s/CKPT_MS", j->ckpt_dir);
	ajob_refused(j, &j->cost_refused, file, e);
	if (e != 0 || s != step)
		return 0;
	return ms;
}

/* A job may rename CKPT_MS after LATEST: while the current checkpoint's
 * cost is unknown, each look at LATEST looks for it again, until it is
 * seen or the next LATEST comes. True when it came now (to be reported
 * like a new checkpoint). */
static bool
ajob_late_cost(struct ajob *j)
{
	if (j->ckpt_cost_ms > 0 ||
	    (j->ckpt_cost_ms = ajob_read_cost(j, j->step)) == 0)
		return false;
	log_info("job %" PRIu64 ": checkpoint at step %" PRIu64 ": cost "
	    "reported after it", j->job_id, j->step);
	return true;
}

/* Read the start's LATEST; note a checkpoint not seen before, or the
 * cost of the current one reported late. Returns true when there is
 * news to report. */
static bool
ajob_read_latest(struct ajob *j)
{
	char path[WATCH_PATH_MAX], latest[PATH_MAX];
	uint64_t step;
	int64_t mtime;

	if (watch_read_latest(j->ckpt_dir, &j->cred, &step, path,
	    sizeof(path), &mtime) == -1) {
		snprintf(latest, sizeof(latest), "%s/LATEST", j->ckpt_dir);
		ajob_refused(j, &j->latest_refused, latest, errno);
		return false;
	}
	j->latest_refused.err = 0;
	if (j->has_ckpt && j->step == step && strcmp(j->ckpt_path, path) == 0)
		return ajob_late_cost(j);
	if (!j->has_ckpt && j->has_base && j->base_step == step &&
	    strcmp(j->base_path, path) == 0)
		return false;
	/* Naming a checkpoint that is not there (its write failed, a full
	 * disk) is no checkpoint: every start handed it would fail at
	 * once, using up the job's restarts. The last good one stays, and
	 * the next read looks again. */
	if (watch_path_reachable(path, &j->cred) == -1) {
		ajob_path_refused(j, step, path, errno);
		return false;
	}
	j->path_refused.err = 0;
	j->has_ckpt = true;
	j->step = step;
	memcpy(j->ckpt_path, path, sizeof(path));
	/* When the job wrote it (the rename), not when we looked. */
	j->ckpt_ms = mtime > 0 ? mtime : clock_now_ms();
	j->ckpt_cost_ms = ajob_read_cost(j, step);
	log_info("job %" PRIu64 ": checkpoint at step %" PRIu64 ": %s%s",
	    j->job_id, step, path, j->ckpt_cost_ms > 0 ? " (cost reported)" :
	    "");
	return true;
}

/* LATEST is read often, so that a checkpoint written just before a
 * failure reaches the controller before the restart it decides. */
void
agent_watch_checkpoints(struct agent *a)
{
	struct ajob *j;
	bool fresh = false;

	TAILQ_FOREACH(j, &a->jobs, entry)
		if (j->ckpt_dir != NULL && ajob_read_latest(j))
			fresh = true;
	if (fresh && a->ckpt_cb != NULL)
		a->ckpt_cb(a->ckpt_arg);
}

void
agent_set_checkpoint_cb(struct agent *a, void (*cb)(void *), void *arg)
{
	a->ckpt_cb = cb;
	a->ckpt_arg = arg;
}

struct ckpt_report *
agent_checkpoints(struct agent *a, size_t *n)
{
	struct ckpt_report *r;
	struct ajob *j;
	size_t i = 0;

	*n = 0;
	TAILQ_FOREACH(j, &a->jobs, entry) {
		if (j->ckpt_dir == NULL)
			continue;
		ajob_read_latest(j);
		if (j->has_ckpt)
			i++;
	}
	if (i == 0 || (r = calloc(i, sizeof(*r))) == NULL)
		return NULL;
	TAILQ_FOREACH(j, &a->jobs, entry) {
		if (j->ckpt_dir == NULL || !j->has_ckpt)
			continue;
		r[*n].job_id = j->job_id;
		r[*n].restart = j->restart;
		r[*n].step = j->step;
		r[*n].path = j->ckpt_path;
		r[*n].time_ms = j->ckpt_ms;
		r[*n].cost_ms = j->ckpt_cost_ms;
		(*n)++;
	}
	return r;
}

struct progress_report *
agent_progress(struct agent *a, size_t *n)
{
	struct progress_report *r;
	struct ajob *j;
	size_t i = 0;

	*n = 0;
	TAILQ_FOREACH(j, &a->jobs, entry)
		i++;
	if (i == 0 || (r = calloc(i, sizeof(*r))) == NULL)
		return NULL;
	TAILQ_FOREACH(j, &a->jobs, entry) {
		if (!ajob_running(a, j))
			continue;
		r[*n].job_id = j->job_id;
		r[*n].restart = j->restart;
		if (watch_progress_changed(j->progress, j->cred.uid,
		    &r[*n].changed_ms) == -1)
			ajob_refused(j, &j->progress_refused, j->progress,
			    errno);
		else
			j->progress_refused.err = 0;
		(*n)++;
	}
	if (*n == 0) {
		free(r);
		return NULL;
	}
	return r;
}

/* Read one task's step file as its job's user; true when it holds a
 * step time not given before. A refusal (not a missing file, nor a
 * half-written one) is logged when its reason changes, then at most
 * once a minute. */
static bool
atask_read_step(struct agent *a, struct atask *at, const struct ajob *j)
{
	char dir[PATH_MAX], name[16], buf[WATCH_STEP_MAX];
	uint64_t step;
	uint32_t ms;
	size_t len;
	int64_t now;
	int e = 0;

	snprintf(dir, sizeof(dir), "%s/jobs/%" PRIu64 ".%u/steps",
	    a->cfg->spool, at->t.job_id, at->t.restart);
	snprintf(name, sizeof(name), "%u", at->t.rank);
	if (watch_read_file(dir, name, &j->cred, buf, sizeof(buf), &len,
	    NULL) == -1)
		e = errno;
	else if (watch_parse_step(buf, len, &step, &ms) == -1)
		e = EBADMSG;
	if (e != 0) {
		now = clock_now_ms();
		if (e != ENOENT && e != EBADMSG && (at->step_err != e ||
		    now - at->step_logged_ms >= AGENT_REFUSAL_LOG_MS)) {
			at->step_logged_ms = now;
			log_warnx("job %" PRIu64 " rank %u: refusing to read "
			    "%s/%s: %s (as uid %u)", at->t.job_id, at->t.rank,
			    dir, name, watch_strerror(e),
			    (unsigned)j->cred.uid);
		}
		at->step_err = e;
		return false;
	}
	at->step_err = 0;
	if (at->step_sent && at->step == step && at->step_ms == ms)
		return false;
	at->step_sent = true;
	at->step = step;
	at->step_ms = ms;
	return true;
}

struct step_time *
agent_step_times(struct agent *a, size_t *n)
{
	struct step_time *r = NULL;
	const struct ajob *j;
	struct atask *at;
	size_t cap = 0;

	*n = 0;
	TAILQ_FOREACH(at, &a->tasks, entry) {
		if (at->ended || at->t.has_step || *n == AGENT_STEP_TIMES_MAX ||
		    (j = ajob_find(a, at->t.job_id, at->t.restart)) == NULL ||
		    !atask_read_step(a, at, j))
			continue;
		if (*n == cap) {
			struct step_time *nr;

			cap = cap == 0 ? 16 : cap * 2;
			if ((nr = reallocarray(r, cap, sizeof(*r))) == NULL) {
				/* Given again at the next heartbeat. */
				at->step_sent = false;
				break;
			}
			r = nr;
		}
		r[*n].job_id = at->t.job_id;
		r[*n].restart = at->t.restart;
		r[*n].rank = at->t.rank;
		r[*n].step = at->step;
		r[*n].compute_ms = at->step_ms;
		(*n)++;
	}
	if (*n == 0) {
		free(r);
		return NULL;
	}
	return r;
}

unsigned
agent_signal(struct agent *a, uint64_t job_id, uint32_t restart,
    const uint32_t *step, enum agent_scope scope, int sig)
{
	struct atask *at;
	unsigned n = 0;
	char st[32];

	TAILQ_FOREACH(at, &a->tasks, entry) {
		if (at->t.job_id != job_id || at->t.restart != restart ||
		    at->ended)
			continue;
		if (step != NULL ? !task_in_step(&at->t, step) :
		    (scope == AGENT_SCOPE_JOB && at->t.has_step) ||
		    (scope == AGENT_SCOPE_STEPS && !at->t.has_step))
			continue;
		if (tasks_signal(&at->t, sig) == 0) {
			log_info("job %" PRIu64 "%s rank %u: signal %d",
			    job_id, task_step_text(&at->t, st, sizeof(st)),
			    at->t.rank, sig);
			n++;
		}
	}
	return n;
}

ssize_t
agent_read_log(struct agent *a, uint64_t job_id, uint32_t restart,
    const uint32_t *step, unsigned rank, bool is_stderr, uint64_t offset,
    void *buf, size_t max)
{
	char path[4096];
	ssize_t n;
	int fd;

	if (tasks_spool_step_log_path(a->cfg->spool, job_id, restart, step,
	    rank, is_stderr, path, sizeof(path)) == -1)
		return -1;
	/* The start's directory is the agent's, but never follow a link
	 * or block on what may be found there. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY)) == -1)
		return -1;
	n = pread(fd, buf, max, (off_t)offset);
	close(fd);
	return n;
}

/* Task rank of the step, which must have had an input; NULL with errno
 * ENOENT or ENOTCONN. */
static struct atask *
agent_input_task(struct agent *a, uint64_t job_id, uint32_t restart,
    uint32_t step, unsigned rank)
{
	struct atask *at;

	TAILQ_FOREACH(at, &a->tasks, entry)
		if (at->t.job_id == job_id && at->t.restart == restart &&
		    at->t.has_step && at->t.step_id == step &&
		    at->t.rank == rank)
			break;
	if (at == NULL) {
		errno = ENOENT;
		return NULL;
	}
	if (!at->in_pipe) {
		errno = ENOTCONN;
		return NULL;
	}
	return at;
}

/* Write what the task's input takes now of data: the count (0: full),
 * or -1 with errno EIO. A task that closed its input takes it all. */
static ssize_t
agent_input_write(struct atask *at, const void *data, size_t len)
{
	ssize_t n;
	char st[32];

	if (len == 0)
		return 0;
	n = write(at->in_fd, data, len);
	if (n >= 0)
		return n;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return 0;
	/* The task closed its stdin (a pipe's EPIPE; a terminal nobody
	 * holds any more: EIO): drop the rest. */
	if (errno == EPIPE || (at->in_pty && errno == EIO)) {
		close(at->in_fd);
		at->in_fd = -1;
		return (ssize_t)len;
	}
	log_warn("job %" PRIu64 "%s rank %u: stdin", at->t.job_id,
	    task_step_text(&at->t, st, sizeof(st)), at->t.rank);
	errno = EIO;
	return -1;
}

ssize_t
agent_append_stdin(struct agent *a, uint64_t job_id, uint32_t restart,
    uint32_t step, unsigned rank, const void *data, size_t len)
{
	struct atask *at;

	if (len > AGENT_STDIN_CHUNK) {
		errno = EINVAL;
		return -1;
	}
	if ((at = agent_input_task(a, job_id, restart, step, rank)) == NULL)
		return -1;
	if (at->in_fd < 0)
		return (ssize_t)len;
	return agent_input_write(at, data, len);
}

int
agent_step_window(struct agent *a, uint64_t job_id, uint32_t restart,
    uint32_t step, unsigned rank, unsigned rows, unsigned cols)
{
	struct winsize ws;
	struct atask *at;

	if ((at = agent_input_task(a, job_id, restart, step, rank)) == NULL)
		return -1;
	if (!at->in_pty || at->in_fd < 0) {
		errno = ENOTTY;
		return -1;
	}
	memset(&ws, 0, sizeof(ws));
	ws.ws_row = (unsigned short)rows;
	ws.ws_col = (unsigned short)cols;
	return ioctl(at->in_fd, TIOCSWINSZ, &ws);
}

ssize_t
agent_write_stdin(struct agent *a, uint64_t job_id, uint32_t restart,
    uint32_t step, unsigned rank, uint64_t offset, const void *data,
    size_t len, bool eof)
{
	struct atask *at;
	size_t skip, left;
	ssize_t n;
	char st[32];

	if (len > AGENT_STDIN_CHUNK) {
		errno = EINVAL;
		return -1;
	}
	if ((at = agent_input_task(a, job_id, restart, step, rank)) == NULL)
		return -1;
	if (offset > at->in_off) {
		errno = EINVAL;
		return -1;
	}
	/* What the pipe took before (a retried chunk) is not written
	 * again. */
	skip = at->in_off - offset < len ? (size_t)(at->in_off - offset) :
	    len;
	left = len - skip;
	/* Closed at EOF or at the task's end: taken and dropped, as no one
	 * will read it. */
	if (at->in_fd < 0) {
		at->in_off = offset + len;
		return (ssize_t)len;
	}
	if ((n = agent_input_write(at, (const char *)data + skip, left)) ==
	    -1)
		return -1;
	if (at->in_fd < 0) {
		at->in_off = offset + len;
		return (ssize_t)len;
	}
	at->in_off += (uint64_t)n;
	/* A terminal's input has no end of its own: its ^D is a byte. */
	if (eof && skip + (size_t)n == len && !at->in_pty) {
		close(at->in_fd);
		at->in_fd = -1;
		log_info("job %" PRIu64 "%s rank %u: end of input after %"
		    PRIu64 " bytes", job_id, task_step_text(&at->t, st,
		    sizeof(st)), rank, at->in_off);
	}
	return (ssize_t)(skip + (size_t)n);
}
