/* Batch jobs and job steps through daemon/agent/agent.c with real
 * processes: a batch job's one task on node rank 0 and none elsewhere,
 * the step credential file, a step's tasks (their environment, spool
 * files, exits reported with the step), a stop of one step or of the
 * whole start, adoption of a step's task by a restarted agent, and
 * step launches refused for what they say. Each test has its own
 * spool; waits are bounded polls. */
#include "config.h"

#include <sys/stat.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/agent/agent.h"
#include "daemon/agent/agent_config.h"

#define JOB	77
#define NODE	"node01"

static char tmpdir[PATH_MAX];
static char spool[PATH_MAX + 16];
static struct event_base *base;
static struct agent_config cfg;

struct exits {
	int n;
	int whys;		/* reports saying why a task never ran */
	struct task_report r[16];
};

static void
exit_cb(const struct task_report *r, void *arg)
{
	struct exits *e = arg;

	if (e->n < 16)
		e->r[e->n] = *r;
	e->n++;
	if (r->why[0] != '\0')
		e->whys++;
}

static void
setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_steps.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	ck_assert_int_eq(chmod(tmpdir, 0777), 0);
	snprintf(spool, sizeof(spool), "%s/spool", tmpdir);
	ck_assert_int_eq(mkdir(spool, 0755), 0);
	memset(&cfg, 0, sizeof(cfg));
	cfg.spool = spool;
	cfg.name = NODE;
	cfg.kill_wait_ms = 500;
	ck_assert_ptr_nonnull(base = event_base_new());
}

static void
teardown(void)
{
	char cmd[PATH_MAX + 16];

	event_base_free(base);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

static const char *
task_user(void)
{
	struct passwd *pw;

	if (geteuid() == 0)
		return "nobody";
	ck_assert_ptr_nonnull(pw = getpwuid(geteuid()));
	return pw->pw_name;
}

static void
brk_cb(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(arg);
}

/* Run the loop until e has seen n exits (bounded). */
static void
run_until(struct exits *e, int n)
{
	struct timeval tv = { 0, 20000 };
	struct event *ev = event_new(base, -1, EV_PERSIST, brk_cb, base);
	int i;

	ck_assert_ptr_nonnull(ev);
	event_add(ev, &tv);
	for (i = 0; i < 750 && e->n < n; i++)
		event_base_dispatch(base);
	event_free(ev);
	ck_assert_int_ge(e->n, n);
}

static void
wait_for_file(const char *path)
{
	int i;

	for (i = 0; i < 750 && access(path, F_OK) == -1; i++)
		usleep(20000);
	ck_assert_msg(access(path, F_OK) == 0, "%s never came", path);
}

/* The whole of a small file, into buf. */
static void
slurp(const char *path, char *buf, size_t len)
{
	FILE *fp;
	size_t n;

	wait_for_file(path);
	ck_assert_ptr_nonnull(fp = fopen(path, "r"));
	n = fread(buf, 1, len - 1, fp);
	buf[n] = '\0';
	fclose(fp);
}

/* Whether env (one "K=V" a line) has exactly line. */
static bool
has_line(const char *env, const char *line)
{
	size_t n = strlen(line);
	const char *p;

	for (p = env; (p = strstr(p, line)) != NULL; p++)
		if ((p == env || p[-1] == '\n') && (p[n] == '\n' ||
		    p[n] == '\0'))
			return true;
	return false;
}

static bool
has_var(const char *env, const char *name)
{
	char key[128];
	const char *p;

	snprintf(key, sizeof(key), "%s=", name);
	for (p = env; (p = strstr(p, key)) != NULL; p++)
		if (p == env || p[-1] == '\n')
			return true;
	return false;
}

static const char *nodes2[] = { NODE, "node02" };
static const unsigned gpus4[] = { 0, 1, 2, 3 };
static const uint8_t cred[] = { 0x01, 0xab, 0xff, 0x10 };

static char *argv_sleep[] = { "/bin/sh", "-c",
	"trap 'exit 0' TERM; i=0; while [ $i -lt 300 ]; do sleep 0.1; "
	"i=$((i+1)); done", NULL };

static void
spec_init(struct job_spec *s, char **argv, size_t argc, bool batch)
{
	memset(s, 0, sizeof(*s));
	s->name = "job";
	s->nodes_min = s->nodes_max = 2;
	s->tasks_per_node = 2;
	s->workdir = tmpdir;
	s->argv = argv;
	s->argc = argc;
	s->batch = batch;
}

static void
launch_init(struct launch *l, const struct job_spec *s, unsigned node_rank)
{
	memset(l, 0, sizeof(*l));
	l->job_id = JOB;
	l->restart = 1;
	l->user = task_user();
	l->spec = s;
	l->node_rank = node_rank;
	l->nodelist = nodes2;
	l->nnodes = 2;
	l->master_addr = "10.0.0.1";
	l->master_port = 29500;
	l->gpus = gpus4;
	l->ngpus = 4;
	l->step_cred = cred;
	l->step_cred_len = sizeof(cred);
}

static const unsigned tpn_3_1[] = { 3, 1 };

/* Step S on node index 0 of (NODE, node02), 3 tasks here and 1 there. */
static void
step_init(struct step_launch *sl, uint32_t id, char **argv, size_t argc)
{
	memset(sl, 0, sizeof(*sl));
	sl->step_id = id;
	sl->argv = (const char *const *)argv;
	sl->argc = argc;
	sl->nodelist = nodes2;
	sl->nnodes = 2;
	sl->node_index = 0;
	sl->tasks_per_node = tpn_3_1;
	sl->ntpn = 2;
	sl->first_rank = 0;
	sl->ntasks = 4;
	sl->gpus = gpus4;
	sl->ngpus = 3;
	sl->gpus_per_task = 1;
	sl->master_addr = "10.0.0.9";
	sl->master_port = 4242;
}

static size_t
count_tasks(struct agent *a, int step, bool running)
{
	struct task_report *r;
	size_t n, i, k = 0;

	r = agent_tasks(a, &n);
	for (i = 0; i < n; i++)
		if ((step < 0 ? !r[i].has_step : r[i].has_step &&
		    r[i].step == (uint32_t)step) && r[i].running == running)
			k++;
	free(r);
	return k;
}

START_TEST(test_batch_rank0)
{
	char out[PATH_MAX + 32], cmd[3 * PATH_MAX + 256], env[8192];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct exits ex = { 0 };
	struct job_spec s;
	struct launch l;
	struct agent *a;
	struct cerr err;

	snprintf(out, sizeof(out), "%s/env.out", tmpdir);
	snprintf(cmd, sizeof(cmd), "env > %s.tmp; mv %s.tmp %s", out, out,
	    out);
	spec_init(&s, argv, 3, true);
	launch_init(&l, &s, 0);
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	/* One task however many per node the job has. */
	ck_assert_uint_eq(count_tasks(a, -1, true) + count_tasks(a, -1,
	    false), 1);
	run_until(&ex, 1);
	ck_assert_int_eq(ex.n, 1);
	ck_assert_uint_eq(ex.r[0].rank, 0);
	ck_assert(!ex.r[0].has_step);
	slurp(out, env, sizeof(env));
	ck_assert(has_line(env, "SLURM_PROCID=0"));
	ck_assert(has_line(env, "SLURM_LOCALID=0"));
	ck_assert(has_line(env, "SLURM_NODEID=0"));
	ck_assert(has_line(env, "SLURM_NTASKS=4"));
	ck_assert(has_line(env, "SLURM_TASKS_PER_NODE=2(x2)"));
	ck_assert(has_line(env, "CUDA_VISIBLE_DEVICES=0,1,2,3"));
	ck_assert(has_line(env, "SLURM_JOB_GPUS=0,1,2,3"));
	ck_assert(has_line(env, "SLURM_GPUS_ON_NODE=4"));
	ck_assert(!has_var(env, "SLURM_STEP_ID"));
	ck_assert(!has_var(env, "SLURM_STEPID"));
	ck_assert(!has_var(env, "SLURM_STEP_NODELIST"));
	ck_assert(!has_var(env, "SLURM_STEP_GPUS"));
	snprintf(cmd, sizeof(cmd), "COHORT_STEP_CRED=%s/jobs/%d.1/step-cred",
	    spool, JOB);
	ck_assert(has_line(env, cmd));
	agent_destroy(a);
}
END_TEST

START_TEST(test_batch_other_rank_and_cred)
{
	char path[PATH_MAX + 64], buf[64];
	struct exits ex = { 0 };
	struct job_spec s;
	struct launch l;
	struct agent *a;
	struct cerr err;
	struct stat st;
	size_t n;

	spec_init(&s, argv_sleep, 3, true);
	launch_init(&l, &s, 1);
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	free(agent_tasks(a, &n));
	ck_assert_uint_eq(n, 0);
	snprintf(path, sizeof(path), "%s/jobs/%d.1/step-cred", spool, JOB);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0400);
	ck_assert_uint_eq(st.st_uid, geteuid() == 0 ?
	    getpwnam("nobody")->pw_uid : geteuid());
	ck_assert_int_eq(chmod(path, 0600), 0);
	slurp(path, buf, sizeof(buf));
	ck_assert_str_eq(buf, "01abff10\n");
	/* A credential too long, or empty, is refused. */
	l.job_id = JOB + 1;
	l.step_cred_len = AGENT_STEP_CRED_MAX + 1;
	ck_assert_int_eq(agent_launch(a, &l, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	l.step_cred_len = 0;
	ck_assert_int_eq(agent_launch(a, &l, &err), -1);
	agent_destroy(a);
}
END_TEST

/* The step's three tasks here each write their environment. */
START_TEST(test_step_env_and_exits)
{
	char cmd[3 * PATH_MAX + 256], env[16384], path[PATH_MAX + 64];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	const char *senv[] = { "FROM_SRUN=1", "SLURM_JOB_ID=1",
	    "SLURM_STEP_GPUS=9", NULL };
	struct exits ex = { 0 };
	struct step_launch sl;
	struct job_spec s;
	struct launch l;
	struct agent *a;
	struct cerr err;
	int i;

	snprintf(cmd, sizeof(cmd), "env > %s/env.$SLURM_PROCID.tmp; "
	    "mv %s/env.$SLURM_PROCID.tmp %s/env.$SLURM_PROCID", tmpdir,
	    tmpdir, tmpdir);
	spec_init(&s, argv_sleep, 3, true);
	launch_init(&l, &s, 1);
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	/* Node rank 1 of the job is index 0 of the step. */
	step_init(&sl, 5, argv, 3);
	sl.env = senv;
	sl.nenv = 3;
	sl.cpus_per_task = 0;
	l.step_cred = NULL;
	l.step_cred_len = 0;
	l.step = &sl;
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	/* Again: the same step, nothing more started. */
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	run_until(&ex, 3);
	ck_assert_int_eq(ex.n, 3);
	for (i = 0; i < 3; i++) {
		ck_assert(ex.r[i].has_step);
		ck_assert_uint_eq(ex.r[i].step, 5);
		ck_assert_int_eq(ex.r[i].wait_status, 0);
	}
	snprintf(path, sizeof(path), "%s/env.2", tmpdir);
	slurp(path, env, sizeof(env));
	ck_assert(has_line(env, "FROM_SRUN=1"));
	ck_assert(has_line(env, "SLURM_JOB_ID=77"));
	ck_assert(has_line(env, "SLURM_STEP_ID=5"));
	ck_assert(has_line(env, "SLURM_STEPID=5"));
	ck_assert(has_line(env, "SLURM_STEP_NODELIST=node[01-02]"));
	ck_assert(has_line(env, "SLURM_STEP_NUM_NODES=2"));
	ck_assert(has_line(env, "SLURM_STEP_NUM_TASKS=4"));
	ck_assert(has_line(env, "SLURM_STEP_TASKS_PER_NODE=3,1"));
	ck_assert(has_line(env, "SLURM_NNODES=2"));
	ck_assert(has_line(env, "SLURM_JOB_NUM_NODES=2"));
	ck_assert(has_line(env, "SLURM_NTASKS=4"));
	ck_assert(has_line(env, "SLURM_NPROCS=4"));
	ck_assert(has_line(env, "SLURM_PROCID=2"));
	ck_assert(has_line(env, "SLURM_LOCALID=2"));
	ck_assert(has_line(env, "SLURM_NODEID=0"));
	ck_assert(has_line(env, "SLURMD_NODENAME=" NODE));
	ck_assert(has_line(env, "CUDA_VISIBLE_DEVICES=2"));
	ck_assert(has_line(env, "SLURM_STEP_GPUS=2"));
	ck_assert(has_line(env, "SLURM_GPUS_ON_NODE=3"));
	ck_assert(has_line(env, "RANK=2"));
	ck_assert(has_line(env, "WORLD_SIZE=4"));
	ck_assert(has_line(env, "LOCAL_RANK=2"));
	ck_assert(has_line(env, "LOCAL_WORLD_SIZE=3"));
	ck_assert(has_line(env, "MASTER_ADDR=10.0.0.9"));
	ck_assert(has_line(env, "MASTER_PORT=4242"));
	snprintf(cmd, sizeof(cmd), "COHORT_STEP_CRED=%s/jobs/%d.1/step-cred",
	    spool, JOB);
	ck_assert(has_line(env, cmd));
	/* Its files are the step's; acknowledged, it is no longer
	 * reported. */
	snprintf(path, sizeof(path), "%s/jobs/%d.1/step-5/rank-2.log", spool,
	    JOB);
	ck_assert_int_eq(access(path, F_OK), 0);
	ck_assert_uint_eq(count_tasks(a, 5, false), 3);
	agent_exit_acked(a, JOB, 1, NULL, 2);
	ck_assert_uint_eq(count_tasks(a, 5, false), 3);
	sl.step_id = 5;
	agent_exit_acked(a, JOB, 1, &sl.step_id, 2);
	ck_assert_uint_eq(count_tasks(a, 5, false), 2);
	agent_destroy(a);
}
END_TEST

static const unsigned tpn_1_1[] = { 1, 1 };

/* srun's input: task 0 of a step launched with stdin_pipe reads what
 * agent_write_stdin gives it, a full pipe takes 0 bytes, a repeated
 * offset is not written twice, and EOF ends its cat. */
START_TEST(test_step_stdin)
{
	char cmd[PATH_MAX + 128], path[PATH_MAX + 64], go[PATH_MAX + 8];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	static char chunk[AGENT_STDIN_CHUNK];
	struct exits ex = { 0 };
	struct step_launch sl;
	struct job_spec s;
	struct launch l;
	struct agent *a;
	struct cerr err;
	struct stat sb;
	uint64_t off, total;
	ssize_t n;
	int i;

	/* It reads nothing until told, so that its pipe fills. */
	snprintf(go, sizeof(go), "%s/go", tmpdir);
	snprintf(cmd, sizeof(cmd), "while [ ! -e %s ]; do sleep 0.02; done; "
	    "exec cat", go);
	spec_init(&s, argv_sleep, 3, true);
	launch_init(&l, &s, 1);
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	step_init(&sl, 6, argv, 3);
	sl.tasks_per_node = tpn_1_1;
	sl.ntasks = 2;
	sl.ngpus = 1;
	sl.stdin_pipe = true;
	l.step_cred = NULL;
	l.step_cred_len = 0;
	l.step = &sl;
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	ck_assert_uint_eq(count_tasks(a, 6, true), 1);
	/* Not a task here, a gap, a task without input. */
	ck_assert_int_eq(agent_write_stdin(a, JOB, 1, 6, 1, 0, "x", 1,
	    false), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(agent_write_stdin(a, JOB, 1, 6, 0, 3, "x", 1,
	    false), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(agent_write_stdin(a, JOB, 1, 6, 0, 0, "hello\n", 6,
	    false), 6);
	/* A retry of what was taken: taken, not written again. */
	ck_assert_int_eq(agent_write_stdin(a, JOB, 1, 6, 0, 0, "hello\n", 6,
	    false), 6);
	ck_assert_int_eq(agent_write_stdin(a, JOB, 1, 6, 0, 3, "lo\nworld\n",
	    9, false), 9);
	/* Fill the pipe: a chunk is taken in part, then 0. */
	memset(chunk, 'x', sizeof(chunk));
	off = 12;
	for (i = 0; i < 64; i++) {
		n = agent_write_stdin(a, JOB, 1, 6, 0, off, chunk,
		    sizeof(chunk), false);
		ck_assert_int_ge(n, 0);
		if (n == 0)
			break;
		off += (uint64_t)n;
	}
	ck_assert_int_eq(n, 0);
	ck_assert_uint_gt(off, 12);
	total = off + 4;
	/* Let it read, and end the input after 4 more bytes. */
	ck_assert_int_eq(close(open(go, O_CREAT | O_WRONLY, 0600)), 0);
	for (i = 0; i < 750 && off < total; i++) {
		n = agent_write_stdin(a, JOB, 1, 6, 0, off, chunk,
		    (size_t)(total - off), true);
		ck_assert_int_ge(n, 0);
		off += (uint64_t)n;
		if (off < total)
			usleep(10000);
	}
	ck_assert_uint_eq(off, total);
	run_until(&ex, 1);
	ck_assert_uint_eq(ex.r[0].step, 6);
	ck_assert_uint_eq(ex.r[0].rank, 0);
	ck_assert_int_eq(ex.r[0].wait_status, 0);
	snprintf(path, sizeof(path), "%s/jobs/%d.1/step-6/rank-0.log", spool,
	    JOB);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_uint_eq((uint64_t)sb.st_size, total);
	slurp(path, cmd, 16);
	ck_assert_str_eq(cmd, "hello\nworld\nxxx");
	/* After its end, input is taken and dropped. */
	ck_assert_int_eq(agent_write_stdin(a, JOB, 1, 6, 0, total, "y", 1,
	    false), 1);
	agent_destroy(a);
}
END_TEST

/* Whether path holds text yet (the supervisor copies the terminal's
 * output there as it comes): a bounded wait, generous for a loaded
 * machine (up to 120 s). */
static bool
log_has(const char *path, const char *text)
{
	char buf[4096];
	int i;

	for (i = 0; i < 12000; i++) {
		slurp(path, buf, sizeof(buf));
		if (strstr(buf, text) != NULL)
			return true;
		usleep(10000);
	}
	return false;
}

/* srun --pty: task 0 of the step runs on a terminal of the window
 * asked, its output copied to its log; a new window reaches it; keys
 * appended go in after what it had; the input's end does not close a
 * terminal; a task without one has no window to set. */
START_TEST(test_step_pty)
{
	char *argv[] = { "/bin/sh", "-c", "if [ -t 0 ] && [ -t 1 ]; then "
	    "echo on-tty; fi; stty size; read a; stty size; echo got-$a", NULL };
	char path[PATH_MAX + 64], buf[4096];
	struct exits ex = { 0 };
	struct step_launch sl;
	struct job_spec s;
	struct launch l;
	struct agent *a;
	struct cerr err;

	spec_init(&s, argv_sleep, 3, true);
	launch_init(&l, &s, 1);
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	/* The job's own task has no terminal. */
	ck_assert_int_eq(agent_step_window(a, JOB, 1, 7, 0, 10, 10), -1);
	ck_assert_int_eq(errno, ENOENT);
	step_init(&sl, 7, argv, 3);
	sl.tasks_per_node = tpn_1_1;
	sl.ntasks = 2;
	sl.ngpus = 1;
	sl.stdin_pipe = sl.pty = true;
	sl.rows = 30;
	sl.cols = 100;
	l.step_cred = NULL;
	l.step_cred_len = 0;
	l.step = &sl;
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	snprintf(path, sizeof(path), "%s/jobs/%d.1/step-7/rank-0.log", spool,
	    JOB);
	ck_assert_msg(log_has(path, "30 100"), "no window line in %s", path);
	ck_assert_int_eq(agent_step_window(a, JOB, 1, 7, 0, 40, 120), 0);
	/* The end of srun's input is not the terminal's: it stays open. */
	ck_assert_int_eq(agent_write_stdin(a, JOB, 1, 7, 0, 0, "", 0, true),
	    0);
	ck_assert_int_eq(agent_append_stdin(a, JOB, 1, 7, 0, "hi\n", 3), 3);
	run_until(&ex, 1);
	ck_assert_uint_eq(ex.r[0].step, 7);
	ck_assert_int_eq(ex.r[0].wait_status, 0);
	slurp(path, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "on-tty") != NULL && strstr(buf,
	    "40 120") != NULL && strstr(buf, "got-hi") != NULL,
	    "the terminal's log: %s", buf);
	/* Its terminal went with it. */
	ck_assert_int_eq(agent_step_window(a, JOB, 1, 7, 0, 40, 120), -1);
	ck_assert_int_eq(errno, ENOTTY);
	agent_destroy(a);
}
END_TEST

START_TEST(test_step_stop_and_adopt)
{
	char buf[64];
	struct exits ex = { 0 };
	struct step_launch s1, s2;
	struct job_spec s;
	struct launch l, l1, l2;
	struct agent *a;
	struct cerr err;
	uint32_t id = 1;
	ssize_t n;

	spec_init(&s, argv_sleep, 3, true);
	launch_init(&l, &s, 0);
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	step_init(&s1, 1, argv_sleep, 3);
	step_init(&s2, 2, argv_sleep, 3);
	s2.gpus_per_task = 0;
	l1 = l;
	l1.step = &s1;
	l2 = l;
	l2.step = &s2;
	ck_assert_msg(agent_launch(a, &l1, &err) == 0, "%s", err.text);
	ck_assert_msg(agent_launch(a, &l2, &err) == 0, "%s", err.text);
	ck_assert_uint_eq(count_tasks(a, 1, true), 3);
	ck_assert_uint_eq(count_tasks(a, 2, true), 3);
	ck_assert_uint_eq(count_tasks(a, -1, true), 1);

	/* A restarted agent finds the steps' tasks. */
	agent_destroy(a);
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	ck_assert_uint_eq(count_tasks(a, 1, true), 3);
	ck_assert_uint_eq(count_tasks(a, 2, true), 3);
	ck_assert_uint_eq(count_tasks(a, -1, true), 1);
	/* Its log is read as the step's. */
	n = agent_read_log(a, JOB, 1, &id, 0, false, 0, buf, sizeof(buf));
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(agent_read_log(a, JOB, 1, &id, 9, false, 0, buf,
	    sizeof(buf)), -1);

	/* SIGNAL_BATCH reaches the script alone, SIGNAL_STEPS the steps. */
	ck_assert_uint_eq(agent_signal(a, JOB, 1, NULL, AGENT_SCOPE_JOB, 0),
	    1);
	ck_assert_uint_eq(agent_signal(a, JOB, 1, NULL, AGENT_SCOPE_STEPS, 0),
	    6);
	ck_assert_uint_eq(agent_signal(a, JOB, 1, &id, AGENT_SCOPE_ALL, 0), 3);

	/* Stopping step 1 leaves step 2 and the script. */
	agent_stop(a, JOB, 1, &id);
	run_until(&ex, 3);
	ck_assert_int_eq(ex.n, 3);
	ck_assert(ex.r[0].has_step && ex.r[0].step == 1);
	ck_assert(ex.r[2].has_step && ex.r[2].step == 1);
	ck_assert_uint_eq(count_tasks(a, 2, true), 3);
	ck_assert_uint_eq(count_tasks(a, -1, true), 1);

	/* A stop without a step stops everything. */
	agent_stop(a, JOB, 1, NULL);
	run_until(&ex, 7);
	ck_assert_uint_eq(count_tasks(a, 2, true), 0);
	ck_assert_uint_eq(count_tasks(a, -1, true), 0);
	agent_destroy(a);
}
END_TEST

START_TEST(test_step_refused)
{
	char dir[PATH_MAX + 64];
	struct exits ex = { 0 };
	struct step_launch sl;
	struct job_spec s;
	struct launch l;
	struct agent *a;
	struct cerr err;
	const char *bad_env[] = { "NOEQUALS" };
	const unsigned other_gpu[] = { 7 };
	const unsigned tpn_bad[] = { 3, 2 };
	int i;

	spec_init(&s, argv_sleep, 3, true);
	launch_init(&l, &s, 1);
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	/* No start of the job here yet. */
	step_init(&sl, 3, argv_sleep, 3);
	l.step = &sl;
	ck_assert_int_eq(agent_launch(a, &l, &err), -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	l.step = NULL;
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	l.step = &sl;
	for (i = 0; i < 11; i++) {
		step_init(&sl, 3, argv_sleep, 3);
		switch (i) {
		case 0: sl.node_index = 2; break;
		case 1: sl.ntpn = 1; break;
		case 2: sl.ntasks = 5; break;
		case 3: sl.first_rank = 1; break;
		case 4: sl.gpus = other_gpu; sl.ngpus = 1;
			sl.gpus_per_task = 0; break;
		case 5: sl.gpus_per_task = 2; break;
		case 6: sl.env = bad_env; sl.nenv = 1; break;
		case 7: sl.argc = 0; break;
		case 8: sl.node_index = 1; sl.first_rank = 3; break;
		case 9: sl.tasks_per_node = tpn_bad; break;
		case 10: sl.workdir = "relative"; break;
		}
		ck_assert_msg(agent_launch(a, &l, &err) == -1, "case %d", i);
		ck_assert_int_eq(err.code, ERR_INVALID);
	}
	snprintf(dir, sizeof(dir), "%s/jobs/%d.1/step-3", spool, JOB);
	ck_assert_int_eq(access(dir, F_OK), -1);
	ck_assert_uint_eq(count_tasks(a, 3, true), 0);
	agent_destroy(a);
}
END_TEST

/* Stopping a step whose launch is under way while another step of
 * the job is also under way (each more tasks than a loop round starts):
 * the stopped one's launch is answered and forgotten, the other goes on.
 * Only the first launch under way of a job was taken off the queue, so
 * a later one was freed while still queued. */
START_TEST(test_step_stop_pending)
{
	static const unsigned tpn_big[] = { AGENT_STARTS_PER_ROUND + 2, 1 };
	struct exits ex = { 0 };
	struct step_launch s1, s2;
	struct job_spec s;
	struct launch l, l1, l2;
	struct agent *a;
	struct cerr err;
	uint32_t id2 = 2;
	int i;

	spec_init(&s, argv_sleep, 3, true);
	launch_init(&l, &s, 0);
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	step_init(&s1, 1, argv_sleep, 3);
	step_init(&s2, 2, argv_sleep, 3);
	s1.tasks_per_node = s2.tasks_per_node = tpn_big;
	s1.ntasks = s2.ntasks = AGENT_STARTS_PER_ROUND + 3;
	s1.gpus_per_task = s2.gpus_per_task = 0;
	l1 = l;
	l1.step = &s1;
	l2 = l;
	l2.step = &s2;
	ck_assert_int_eq(agent_launch(a, &l1, &err), 0);
	ck_assert_int_eq(agent_launch(a, &l2, &err), 0);
	agent_stop(a, JOB, 1, &id2);
	ck_assert_uint_eq(count_tasks(a, 1, true), AGENT_STARTS_PER_ROUND);
	/* Step 1 starts its last ranks in a later round. */
	for (i = 0; i < 100 && count_tasks(a, 1, true) +
	    count_tasks(a, 1, false) < AGENT_STARTS_PER_ROUND + 2; i++)
		ck_assert_int_ne(event_base_loop(base, EVLOOP_ONCE), -1);
	ck_assert_uint_eq(count_tasks(a, 1, true) +
	    count_tasks(a, 1, false), AGENT_STARTS_PER_ROUND + 2);
	agent_stop(a, JOB, 1, NULL);
	run_until(&ex, 2 * AGENT_STARTS_PER_ROUND + 3);
	/* A stop is the controller's: no rank "could not start". */
	ck_assert_int_eq(ex.whys, 0);
	agent_destroy(a);
}
END_TEST

/* A launch of more tasks than a loop round starts is answered at its
 * first round; a rank that cannot start in a later one (here rank 10,
 * whose output path is one byte too long where ranks 0-9 fit) ends
 * with the reason, and the start's other tasks are killed. An answer
 * that waited for the last round took longer than the controller waits
 * on a slow node: it failed the start and launched it again, forever. */
START_TEST(test_launch_late_rank_fails)
{
	char pat[PATH_MAX + 8];
	struct exits ex = { 0 };
	struct job_spec s;
	struct launch l;
	struct agent *a;
	struct cerr err;
	size_t len;
	int i;

	spec_init(&s, argv_sleep, 3, false);
	s.tasks_per_node = 12;
	/* tmpdir/./././.../o-%t: 4,095 bytes for a rank of one digit. */
	len = (size_t)snprintf(pat, sizeof(pat), "%s/", tmpdir);
	if ((PATH_MAX - 1 - len - 3) % 2 != 0)
		pat[len++] = 'o';
	while (len < PATH_MAX - 1 - 3)
		len += (size_t)snprintf(pat + len, sizeof(pat) - len, "./");
	snprintf(pat + len, sizeof(pat) - len, "o-%%t");
	s.output = pat;
	launch_init(&l, &s, 0);
	ck_assert_ptr_nonnull(a = agent_create(base, &cfg, exit_cb, &ex,
	    &err));
	ck_assert_msg(agent_launch(a, &l, &err) == 0, "%s", err.text);
	ck_assert_uint_eq(count_tasks(a, -1, true), AGENT_STARTS_PER_ROUND);
	ck_assert_int_eq(ex.n, 0);
	run_until(&ex, 1);
	ck_assert_int_eq(ex.n, 1);
	ck_assert(!ex.r[0].has_step && !ex.r[0].running);
	ck_assert_uint_eq(ex.r[0].rank, 10);
	ck_assert_msg(strstr(ex.r[0].why, "could not start on this node") !=
	    NULL && strstr(ex.r[0].why, "the file pattern") != NULL, "%s",
	    ex.r[0].why);
	for (i = 0; i < 100 && count_tasks(a, -1, true) > 0; i++)
		ck_assert_int_ne(event_base_loop(base, EVLOOP_ONCE), -1);
	ck_assert_uint_eq(count_tasks(a, -1, true), 0);
	agent_destroy(a);
}
END_TEST

static Suite *
steps_suite(void)
{
	Suite *s = suite_create("steps");
	TCase *tc;

	tc = tcase_create("agent");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_batch_rank0);
	tcase_add_test(tc, test_batch_other_rank_and_cred);
	tcase_add_test(tc, test_step_env_and_exits);
	tcase_add_test(tc, test_step_stdin);
	tcase_add_test(tc, test_step_pty);
	tcase_add_test(tc, test_step_stop_and_adopt);
	tcase_add_test(tc, test_step_refused);
	tcase_add_test(tc, test_launch_late_rank_fails);
	tcase_add_test(tc, test_step_stop_pending);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(steps_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
